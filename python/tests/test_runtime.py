"""CPU tests of the Python runtime API over libattnc_runtime.so: manifest
loading and kernel metadata, validation refusals with the C library's
messages, launch plans and scalars, DLPack tensors, and the GPU entry
points' error paths. The version-2 kinds (tensormaps, workspaces, variants,
size rules, fallbacks) are test_runtime_kinds.py's; launches through the
fake driver test_fake_driver.py's."""

import os
import struct
import unittest
from unittest import mock

from _support import INPUTS, FakeDType, FakeTensor

import attnc
from _dlpack import DLPackTensor

BF16 = FakeDType("bfloat16")
F32 = FakeDType("float32")


def attention_args(**changes):
    """q, k, v, o, lse for B=2, H=8, Hkv=2, Sq=100, Skv=300."""
    args = {
        "q": FakeTensor(0x100000, (2, 8, 100, 128), BF16),
        "k": FakeTensor(0x1000000, (2, 2, 300, 128), BF16),
        "v": FakeTensor(0x2000000, (2, 2, 300, 128), BF16),
        "o": FakeTensor(0x3000000, (2, 8, 100, 128), BF16),
        "lse": FakeTensor(0x4000000, (2, 8, 100), F32),
    }
    args.update(changes)
    return args


class ModuleTest(unittest.TestCase):
    def test_load_and_metadata(self):
        m = attnc.load(INPUTS / "attention")
        self.assertEqual(m.name, "gqa_attention")
        self.assertEqual(m.chip, "sm_90a")
        self.assertEqual(m.kernels, ["attention_fwd"])
        k = m["attention_fwd"]
        self.assertIs(k, m.kernel("attention_fwd"))
        self.assertEqual(k.kind, "attention")
        self.assertEqual(k.block, (128, 1, 1))
        self.assertEqual(k.shared_memory_bytes, 49152)
        self.assertIsNone(k.attr("gqa"))  # a constraint since version 2
        self.assertEqual(k.attr("causal"), "true")
        self.assertIsNone(k.attr("missing"))
        self.assertEqual(k.grid, (({"sym": "Sq", "ceil_div": 64},), ("H",),
                                  ("B",)))
        self.assertEqual(k.constraints,
                         [attnc.Constraint("divisible", "H", "Hkv", 0)])
        self.assertFalse(k.needs_num_sms)
        self.assertEqual((k.workspaces, k.tensormaps), ([], []))
        self.assertEqual([p.name for p in k.inputs], ["q", "k", "v"])
        self.assertEqual([p.name for p in k.outputs], ["o", "lse"])
        q = k.params[0]
        self.assertEqual((q.kind, q.dtype, q.role, q.shape, q.align),
                         ("tensor", "bf16", "input", ("B", "H", "Sq", 128),
                          16))
        stride = k.params[14]
        self.assertEqual((stride.kind, stride.dtype, stride.tensor,
                          stride.dim), ("stride", "i32", "lse", 1))

    def test_ragged_grid_adds_the_sequences(self):
        # A ragged batch's query tiles: ceil(T / 128) + B (one partial
        # tile at most per sequence).
        k = attnc.load(INPUTS / "ragged")["ragged_fwd"]
        self.assertEqual(k.grid, (({"sym": "T", "ceil_div": 128,
                                    "plus": "B"},), ("H",), (1,)))
        i32 = FakeDType("int32")
        plan = k.plan(q=FakeTensor(0x1000000, (20000, 16, 64), BF16),
                      q_starts=FakeTensor(0x100000, (32,), i32),
                      q_ends=FakeTensor(0x200000, (32,), i32),
                      o=FakeTensor(0x8000000, (20000, 16, 64), BF16))
        self.assertEqual(plan.grid, (189, 16, 1))

    def test_ragged_versions_by_mean_length(self):
        # A ragged batch's short-sequence version runs while T <= 1024 B
        # (the manifest's at_most); its grid counts 64-row tiles.
        m = attnc.load(INPUTS / "ragged")
        k, short = m["ragged_versions"], m["ragged_versions_v0"]
        self.assertEqual(k.variants, [
            (short, (attnc.Constraint("at_most", "T", "B", 1024),))])
        i32 = FakeDType("int32")

        def plan(T, B):
            return k.plan(q=FakeTensor(0x1000000, (T, 16, 64), BF16),
                          q_starts=FakeTensor(0x100000, (B,), i32),
                          q_ends=FakeTensor(0x200000, (B,), i32),
                          o=FakeTensor(0x8000000, (T, 16, 64), BF16))
        p = plan(4096, 4)
        self.assertIs(p.kernel, short)
        self.assertEqual(p.grid, (68, 16, 1))  # ceil(4096 / 64) + 4
        p = plan(4097, 4)
        self.assertIs(p.kernel, k)
        self.assertEqual(p.grid, (37, 16, 1))  # ceil(4097 / 128) + 4

    def test_unknown_kernel(self):
        m = attnc.load(INPUTS / "fusion")
        with self.assertRaises(attnc.AttncError) as e:
            m["attention"]
        self.assertEqual(e.exception.status, "ATTNC_ERROR_NOT_FOUND")
        self.assertEqual(str(e.exception),
                         "module 'bias_dropout' has no kernel 'attention' "
                         "(it has: bias_dropout_fwd, copy)")

    def test_missing_directory(self):
        with self.assertRaises(attnc.AttncError) as e:
            attnc.load(INPUTS / "nope")
        self.assertEqual(e.exception.status, "ATTNC_ERROR_IO")
        self.assertIn("nope/manifest.json", str(e.exception))

    def test_malformed_manifest(self):
        with self.assertRaises(attnc.AttncError) as e:
            attnc.load(INPUTS / "malformed" / "version1")
        self.assertEqual(e.exception.status, "ATTNC_ERROR_MANIFEST")
        self.assertTrue(str(e.exception).endswith(
            "manifest.json: attnc_manifest_version: unsupported manifest "
            "version 1 (this runtime reads version 2); recompile the module "
            "with this attnc's attnc-compile"), str(e.exception))

    def test_from_json(self):
        text = (INPUTS / "fusion" / "manifest.json").read_text()
        m = attnc.Module.from_json(text)
        self.assertEqual(m.kernels, ["bias_dropout_fwd", "copy"])
        with self.assertRaises(attnc.AttncError) as e:
            attnc.Module.from_json('{"attnc_manifest_version": 2}')
        self.assertEqual(str(e.exception),
                         "manifest: <root>: missing required key 'module'")


class ValidationTest(unittest.TestCase):
    def setUp(self):
        self.kernel = attnc.load(INPUTS / "attention")["attention_fwd"]

    def plan(self, **changes):
        return self.kernel.plan(**attention_args(**changes))

    def refused(self, message, **changes):
        with self.assertRaises(attnc.AttncError) as e:
            self.plan(**changes)
        self.assertEqual(e.exception.status, "ATTNC_ERROR_VALIDATION")
        self.assertEqual(str(e.exception), "attention_fwd: " + message)

    def test_valid_plan(self):
        plan = self.plan()
        self.assertEqual(plan.grid, (2, 8, 2))
        self.assertFalse(plan.empty)
        self.assertEqual(plan.symbol("Hkv"), 2)
        self.assertEqual(struct.unpack("<Q", plan.param_bytes(0))[0],
                         0x100000)
        self.assertEqual(struct.unpack("<q", plan.param_bytes(8))[0], 100)
        self.assertEqual(struct.unpack("<i", plan.param_bytes(14))[0], 100)

    def test_symbol_conflict(self):
        self.refused("k.shape[0] = 3 but B = 2 from q.shape[0]",
                     k=FakeTensor(0x1000000, (3, 2, 300, 128), BF16))

    def test_rank(self):
        self.refused("lse has rank 2 but the kernel expects rank 3 "
                     "[B, H, Sq]", lse=FakeTensor(0x4000000, (16, 100), F32))

    def test_dtype(self):
        self.refused("q has dtype f16 but the kernel expects bf16",
                     q=FakeTensor(0x100000, (2, 8, 100, 128), "float16"))
        with self.assertRaises(attnc.AttncError) as e:
            self.plan(q=FakeTensor(0x100000, (2, 8, 100, 128),
                                   FakeDType("uint8")))
        self.assertEqual(str(e.exception),
                         "attention_fwd: q has dtype torch.uint8, which attnc "
                         "does not support (the kernel expects bf16)")

    def test_static_dim(self):
        self.refused("o.shape[3] = 64 but the kernel was compiled for 128",
                     o=FakeTensor(0x3000000, (2, 8, 100, 64), BF16))

    def test_innermost_stride(self):
        self.refused("q.stride[3] = 2 but the innermost dimension must be "
                     "contiguous (stride 1)",
                     q=FakeTensor(0x100000, (2, 8, 100, 128), BF16,
                                  (204800, 25600, 256, 2)))

    def test_alignment(self):
        self.refused("v: data pointer 0x2000008 is not aligned to 16 bytes",
                     v=FakeTensor(0x2000008, (2, 2, 300, 128), BF16))

    def test_null_pointer(self):
        self.refused("k: data pointer is NULL but the tensor is not empty",
                     k=FakeTensor(0, (2, 2, 300, 128), BF16))

    def test_output_aliases_input(self):
        self.refused("output o and input q share the data pointer 0x100000: "
                     "an output must not alias another argument",
                     o=FakeTensor(0x100000, (2, 8, 100, 128), BF16))

    def test_divisible_constraint(self):
        self.refused("H (= 8) must be a multiple of Hkv (= 3)",
                     k=FakeTensor(0x1000000, (2, 3, 300, 128), BF16),
                     v=FakeTensor(0x2000000, (2, 3, 300, 128), BF16))

    def test_negative_size(self):
        self.refused("q.shape[2] = -1 is negative",
                     q=FakeTensor(0x100000, (2, 8, -1, 128), BF16,
                                  (1, 1, 1, 1)))


class CallTest(unittest.TestCase):
    def setUp(self):
        self.attention = attnc.load(INPUTS / "attention")["attention_fwd"]
        self.fusion = attnc.load(INPUTS / "fusion")["bias_dropout_fwd"]
        patcher = mock.patch.dict(os.environ,
                                  {"ATTNC_LIBCUDA": "/nonexistent/libcuda.so"})
        patcher.start()
        self.addCleanup(patcher.stop)

    def fusion_args(self):
        return (FakeTensor(0x100000, (4, 33, 1024), "f16"),
                FakeTensor(0x900000, (1024,), "f16"))

    def test_argument_binding(self):
        a = attention_args()
        with self.assertRaises(TypeError) as e:
            self.attention(a["q"], a["k"], a["v"], a["o"])
        self.assertIn("takes 3 input tensors positionally (q, k, v), got 4",
                      str(e.exception))
        with self.assertRaises(TypeError) as e:
            self.attention(a["q"], a["k"], a["v"], out=a["o"])
        self.assertIn("unexpected argument 'out'", str(e.exception))
        with self.assertRaises(TypeError) as e:
            self.attention(a["q"], a["k"])
        self.assertIn("missing tensor 'v'", str(e.exception))
        x, bias = self.fusion_args()
        with self.assertRaises(TypeError) as e:
            self.fusion(x, bias, seed=1, offset=0)
        self.assertIn("missing scalar 'p'", str(e.exception))

    def test_outputs_need_torch(self):
        a = attention_args()
        with self.assertRaises(attnc.AttncError) as e:
            self.attention(a["q"], a["k"], a["v"])
        self.assertEqual(str(e.exception),
                         "attention_fwd: cannot allocate output o without "
                         "torch tensor inputs; pass it explicitly")

    def test_scalars(self):
        x, bias = self.fusion_args()
        y = FakeTensor(0xa00000, (4, 33, 1024), "f16")
        plan = self.fusion.plan(x, bias, y=y, seed=2**40, offset=True, p=0.25)
        self.assertEqual(plan.grid, (9, 4, 1))
        self.assertEqual(struct.unpack("<q", plan.param_bytes(5))[0], 2**40)
        self.assertEqual(struct.unpack("<i", plan.param_bytes(6))[0], 1)
        self.assertEqual(struct.unpack("<f", plan.param_bytes(7))[0], 0.25)
        with self.assertRaises(attnc.AttncError) as e:
            self.fusion.plan(x, bias, y=y, seed=2**70, offset=0, p=0.1)
        self.assertEqual(str(e.exception),
                         "scalar seed = 1180591620717411303424 does not fit "
                         "in 64 bits")
        with self.assertRaises(attnc.AttncError) as e:
            self.fusion.plan(x, bias, y=y, seed=0.5, offset=0, p=0.1)
        self.assertEqual(str(e.exception),
                         "bias_dropout_fwd: scalar seed is i64 but the "
                         "non-integer value 0.5 was given")

    def test_launch_without_driver(self):
        x, bias = self.fusion_args()
        y = FakeTensor(0xa00000, (4, 33, 1024), "f16")
        with self.assertRaises(attnc.AttncError) as e:
            self.fusion(x, bias, y=y, seed=1, offset=0, p=0.1)
        self.assertEqual(e.exception.status, "ATTNC_ERROR_NO_DRIVER")
        self.assertIn("cannot load the CUDA driver", str(e.exception))

    def test_empty_grid_launches_nothing(self):
        # Sq = 0: success without any driver; the outputs come back.
        a = attention_args(
            q=FakeTensor(0, (2, 8, 0, 128), BF16),
            o=FakeTensor(0, (2, 8, 0, 128), BF16),
            lse=FakeTensor(0, (2, 8, 0), F32))
        o, lse = self.attention(a["q"], a["k"], a["v"], o=a["o"],
                                lse=a["lse"])
        self.assertIs(o, a["o"])
        self.assertIs(lse, a["lse"])

    def test_graph_needs_a_created_stream(self):
        with self.assertRaises(attnc.AttncError) as e:
            with attnc.Graph(stream=0):
                pass
        self.assertEqual(e.exception.status, "ATTNC_ERROR_INVALID_ARGUMENT")
        self.assertIn("legacy default stream (NULL) cannot be captured",
                      str(e.exception))

    def test_stream_argument_type(self):
        x, bias = self.fusion_args()
        y = FakeTensor(0xa00000, (4, 33, 1024), "f16")
        with self.assertRaises(TypeError):
            self.fusion(x, bias, y=y, seed=1, offset=0, p=0.1, stream="s")


class DLPackTest(unittest.TestCase):
    def test_dlpack_tensors(self):
        k = attnc.load(INPUTS / "fusion")["bias_dropout_fwd"]
        x = DLPackTensor(0x100000, (4, 33, 1024), 2, 16)
        bias = DLPackTensor(0x900000, (1024,), 2, 16)
        y = DLPackTensor(0xa00000, (4, 33, 1024), 2, 16)
        plan = k.plan(x, bias, y=y, seed=1, offset=0, p=0.1)
        self.assertEqual(plan.grid, (9, 4, 1))
        self.assertEqual(struct.unpack("<q", plan.param_bytes(8))[0], 1024)
        with self.assertRaises(attnc.AttncError) as e:
            k.plan(DLPackTensor(0x100000, (4, 33, 1024), 2, 16, 1), bias,
                   y=y, seed=1, offset=0, p=0.1)
        self.assertEqual(str(e.exception),
                         "x is not in CUDA memory (DLPack device type 1)")
        with self.assertRaises(attnc.AttncError) as e:
            k.plan(DLPackTensor(0x100000, (4, 33, 1024), 2, 32), bias,
                   y=y, seed=1, offset=0, p=0.1)
        self.assertIn("x has dtype f32 but the kernel expects f16",
                      str(e.exception))


if __name__ == "__main__":
    unittest.main()
