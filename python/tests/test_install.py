"""The installed attnc (the wheel in a fresh virtual environment,
scripts/wheel-check.sh): these run only with ATTNC_TEST_INSTALLED=1 and
check that the package under test is the installed copy, that it carries
its runtime library and the prebuilt kernel library the docs promise, and
that ``python3 -m attnc`` lists them."""

import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

from _support import INSTALLED, REPO

import attnc
import attnc.variants

# The variant matrix docs/pytorch.md documents: head dims, dtypes, masks;
# each attention variant a forward, its fallback and three backward
# kernels (and a size variant: the backward's at d = 64, the forward's at
# d = 128), each decoding
# variant split-KV partials and their combine.
DIMS = [(d, t) for d in (64, 128) for t in ("bf16", "f16")]
# (head dim, dtype, mask, heads, GQA group of a packed decoding variant)
GROUPS = (2, 4, 8, 16, 32)
MATRIX = {(d, t, m, "any", None) for d, t in DIMS
          for m in ("none", "causal")} | \
    {(d, t, "causal_bottom_right", "any", None) for d, t in DIMS} | \
    {(d, t, "custom", "any", g) for d, t in DIMS for g in GROUPS}
ATTENTION = {"attn": ("forward", "wgmma_ws"),
             "attn_fallback": ("forward fallback", "mma_sync"),
             "attn_backward_0": ("backward", "fusion"),
             "attn_backward_1": ("backward", "wgmma"),
             "attn_backward_2": ("backward", "fusion")}
DECODE = {"decode_0": ("decode partials", "mma_sync"),
          "decode_1": ("decode combine", "fusion"),
          "decode_unsplit": ("decode one split", "mma_sync")}


@unittest.skipUnless(INSTALLED, "tests the installed wheel "
                                "(ATTNC_TEST_INSTALLED=1)")
class InstalledTest(unittest.TestCase):
    def test_imported_from_the_installation(self):
        package = Path(attnc.__file__).resolve().parent
        self.assertFalse(package.is_relative_to(REPO / "python"),
                         f"attnc imported from the source tree: {package}")
        self.assertIn("site-packages", package.parts)
        self.assertIsNone(attnc._capi.source_tree())

    def test_runtime_is_the_packaged_library(self):
        self.assertNotIn("ATTNC_RUNTIME_LIB", os.environ)
        lib = Path(attnc._capi.lib()._name).resolve()
        self.assertEqual(lib, Path(attnc.__file__).resolve().parent /
                         "libattnc_runtime.so")

    def test_prebuilt_kernel_library(self):
        library = attnc.variants.prebuilt_dir()
        self.assertIsNotNone(library)
        variants = attnc.variants.listing()
        got = {(v["head_dim"], v["dtype"], v["mask"], v["heads"],
                v["gqa_group"]) for v in variants}
        self.assertEqual(got, MATRIX)
        self.assertEqual(len(variants), len(MATRIX))
        self.assertEqual(attnc.variants.DECODE_GROUPS, GROUPS)
        for v in variants:
            self.assertEqual(v["chip"], "sm_90a")
            # A group size is stated exactly by the packed variants.
            self.assertEqual(v["gqa_packed"], v["gqa_group"] is not None,
                             v["name"])
            want = DECODE if v["name"].startswith("decode_") else ATTENTION
            # Size variants: at d = 64 the backward's 128 x 128 tiles from
            # Sq = 2048 (4096 causal), at d = 128 the unmasked forward
            # without overlap_pv up to 1024 keys.
            if v["head_dim"] == 64 and want is ATTENTION:
                rows = "2048" if v["mask"] == "none" else "4096"
                want = dict(want, attn_backward_1_v0=("backward when Sq >= "
                                                      + rows, "wgmma"))
            elif want is ATTENTION and v["mask"] == "none":
                want = dict(want, attn_v0=("forward when Skv <= 1024",
                                           "wgmma_ws"))
            self.assertEqual(set(v["kernels"]), set(want), v["name"])
            for name, (role, strategy) in want.items():
                k = v["kernels"][name]
                self.assertEqual(k["role"], role, (v["name"], name))
                self.assertTrue(k["strategy"].startswith(strategy),
                                (v["name"], name, k["strategy"]))
            # Every module loads (manifest parsed and checked by the C
            # runtime; cubins present) without a GPU.
            m = attnc.load(library / v["name"])
            self.assertEqual(sorted(m.kernels), sorted(want))
            manifest = json.loads((library / v["name"] /
                                   "manifest.json").read_text())
            for entry in manifest["kernels"]:
                self.assertTrue((library / v["name"] /
                                 entry["cubin"]).is_file(), entry["name"])

    def test_module_lists_the_installation(self):
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "ATTNC_RUNTIME_LIB")}
        out = subprocess.run([sys.executable, "-m", "attnc"], env=env,
                             capture_output=True, text=True, cwd="/")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn(f"attnc {attnc.__version__} at", out.stdout)
        self.assertIn("runtime: ", out.stdout)
        self.assertIn("(loaded)", out.stdout)
        self.assertIn(f"prebuilt kernels: {len(MATRIX)} variants", out.stdout)
        self.assertIn("attn_d128_bf16_causal: d=128 bf16 heads=any "
                      "mask=causal sm_90a", out.stdout)
        self.assertIn("decode_d64_f16: d=64 f16 heads=any "
                      "mask=causal_bottom_right sm_90a: decode_0 (decode "
                      "partials, mma_sync)", out.stdout)
        self.assertIn("decode_d128_bf16_g4: d=128 bf16 heads=any (GQA "
                      "packed: H = 4 * Hkv) mask=custom", out.stdout)


if __name__ == "__main__":
    unittest.main()
