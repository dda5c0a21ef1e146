"""CPU tests of the Python runtime API over the manifest's version-2
kinds: tensormaps and workspaces (a persistent decode kernel), size
variants, split-KV size rules and fallback kernels, with the C library's
refusals."""

import os
import struct
import sys
import unittest
from unittest import mock

from _support import INPUTS, FakeDType, FakeTensor

import attnc
from _dlpack import DLPackTensor

BF16 = FakeDType("bfloat16")
F32 = FakeDType("float32")
I8 = FakeDType("int8")


def decode_args(**changes):
    """decode_fwd (Inputs/persistent) with B=2, H=8, Hkv=2, Sq=1, Skv=1000
    on 132 SMs: tensors, workspaces and the scale, by name."""
    args = {
        "q": FakeTensor(0x100000, (2, 8, 1, 128), BF16),
        "k": FakeTensor(0x100000000000, (2, 2, 1000, 128), BF16),
        "v": FakeTensor(0x200000000000, (2, 2, 1000, 128), BF16),
        "o": FakeTensor(0x300000, (2, 8, 1, 128), BF16),
        "partial": (0x400000, 132 * 8 * 512),
        "counters": FakeTensor(0x600000, (32,), I8),
        "scale": 0.125,
    }
    args.update(changes)
    return args


class Version2KindsTest(unittest.TestCase):
    """Tensormaps, workspaces, num_sms and constraints from Python."""

    def setUp(self):
        m = attnc.load(INPUTS / "persistent")
        self.decode, self.row_sum = m["decode_fwd"], m["row_sum"]
        self.tile_copy = m["tile_copy"]
        patcher = mock.patch.dict(os.environ,
                                  {"ATTNC_LIBCUDA": "/nonexistent/libcuda.so"})
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_metadata(self):
        k = self.decode
        self.assertEqual(k.kind, "decode")
        self.assertEqual(k.grid, (({"device": "num_sms"},), (1,), (1,)))
        self.assertTrue(k.needs_num_sms)
        self.assertFalse(self.tile_copy.needs_num_sms)
        k_map, v_map = k.tensormaps
        self.assertEqual((k_map.name, k_map.kind, k_map.tensor, k_map.dtype,
                          k_map.box, k_map.swizzle, k_map.oob_fill),
                         ("k_map", "tensormap", "k", "bf16", (1, 1, 64, 64),
                          128, "zero"))
        self.assertEqual(v_map.oob_fill, "nan")
        partial, counters = k.workspaces
        self.assertEqual((partial.kind, partial.dtype, partial.align,
                          partial.bytes, partial.zero_init),
                         ("workspace", "i8", 16,
                          ({"device": "num_sms"}, "H", 128, 4), False))
        self.assertEqual(counters.bytes,
                         ("B", {"sym": "H", "ceil_div": 2}, 4))
        self.assertTrue(counters.zero_init)
        self.assertEqual([p.name for p in k.scalars], ["scale"])
        self.assertEqual(k.constraints,
                         [attnc.Constraint("divisible", "H", "Hkv", 0),
                          attnc.Constraint("min", "Skv", None, 1)])

    def test_tensormaps_are_not_arguments(self):
        a = decode_args()
        with self.assertRaises(TypeError) as e:
            self.decode.plan(**a, k_map=object(), num_sms=132)
        self.assertIn("got 'k_map', a tensormap the runtime builds from 'k': "
                      "do not pass it", str(e.exception))
        # A valid call: planning it needs the driver only to encode the maps.
        with self.assertRaises(attnc.AttncError) as e:
            self.decode.plan(**a, num_sms=132)
        self.assertEqual(e.exception.status, "ATTNC_ERROR_NO_DRIVER")
        self.assertIn("decode_fwd: tensormap k_map of k is encoded by the "
                      "CUDA driver when the plan is made", str(e.exception))

    def test_workspace_arguments(self):
        x = FakeTensor(0x1000000, (1000, 300), F32)
        y = FakeTensor(0x2000000, (1000,), F32)
        need = 132 * 300 * 4
        for ws in [(0x3000000, need),
                   FakeTensor(0x3000000, (need,), I8),
                   FakeTensor(0x3000000, (132, 300), F32),
                   DLPackTensor(0x3000000, (need // 2,), 2, 16)]:
            with self.subTest(ws=ws):
                plan = self.row_sum.plan(x, y=y, partial=ws, num_sms=132)
                self.assertEqual(plan.grid, (132, 1, 1))
                self.assertEqual(plan.workspace_bytes("partial"), need)
                self.assertEqual(struct.unpack("<Q", plan.param_bytes(2))[0],
                                 0x3000000)
        with self.assertRaises(attnc.AttncError) as e:
            self.row_sum.plan(x, y=y, partial=(0x3000000, need - 1),
                              num_sms=132)
        self.assertEqual(str(e.exception),
                         "row_sum: workspace partial is 158399 bytes but the "
                         "kernel needs 158400 (num_sms*C*4)")
        with self.assertRaises(attnc.AttncError) as e:
            self.row_sum.plan(x, y=y, partial=FakeTensor(
                0x3000000, (300, 132), F32, (1, 300)), num_sms=132)
        self.assertIn("workspace partial must be contiguous", str(e.exception))
        with self.assertRaises(TypeError) as e:
            self.row_sum.plan(x, y=y, num_sms=132)
        self.assertIn("missing workspace 'partial'", str(e.exception))
        with self.assertRaises(attnc.AttncError) as e:
            self.row_sum(x, y=y, num_sms=132)
        self.assertEqual(str(e.exception),
                         "row_sum: cannot allocate workspace partial without "
                         "torch tensor inputs; pass it explicitly")

    def test_missing_workspace_made_beside_cuda_inputs(self):
        """A workspace the caller left out is made with torch on the device
        of the CUDA inputs, sized with that device's SM count; a host input
        (which the plan refuses afterwards) asks torch.cuda nothing."""
        queried, made = [], []

        class Tensor:  # what _allocate reads of a torch tensor
            def __init__(self, shape, device):
                self.shape, self.device = shape, device
                self.is_cuda = device.startswith("cuda")
        Tensor.__module__ = "torch"

        def get_device_properties(device):
            if not str(device).startswith("cuda"):
                raise ValueError(f"Expected a cuda device, but got: {device}")
            queried.append(device)
            return mock.Mock(multi_processor_count=132)

        def empty(size, dtype, device):
            made.append((size, device))
            return Tensor((size,), device)
        fake = mock.Mock(uint8="uint8", empty=empty)
        fake.cuda.get_device_properties = get_device_properties
        y = FakeTensor(0x2000000, (1000,), F32)
        with mock.patch.dict(sys.modules, {"torch": fake}):
            ws = self.row_sum._allocate(
                {"x": Tensor((1000, 300), "cuda:1"), "y": y}, None)
            self.assertEqual((queried, made), (["cuda:1"],
                                               [(132 * 300 * 4, "cuda:1")]))
            self.assertEqual(len(ws), 1)
            queried.clear()
            made.clear()
            self.row_sum._allocate({"x": Tensor((1000, 300), "cpu"), "y": y},
                                   None)
            self.assertEqual((queried, made), ([], [(300 * 4, "cpu")]))

    def test_num_sms_needs_a_device_or_the_option(self):
        x = FakeTensor(0x1000000, (1000, 300), F32)
        y = FakeTensor(0x2000000, (1000,), F32)
        with self.assertRaises(attnc.AttncError) as e:
            self.row_sum.plan(x, y=y, partial=(0x3000000, 1 << 30))
        self.assertEqual(e.exception.status, "ATTNC_ERROR_NO_DRIVER")
        self.assertIn("grid.x needs the device's SM count", str(e.exception))

    def test_constraints_and_scalars_by_name(self):
        with self.assertRaises(attnc.AttncError) as e:
            self.decode.plan(**decode_args(
                k=FakeTensor(0x100000000000, (2, 2, 0, 128), BF16),
                v=FakeTensor(0x200000000000, (2, 2, 0, 128), BF16)),
                num_sms=132)
        self.assertEqual(str(e.exception),
                         "decode_fwd: Skv (= 0) must be at least 1")
        a = decode_args()
        del a["scale"]
        with self.assertRaises(TypeError) as e:
            self.decode.plan(**a, num_sms=132)
        self.assertIn("missing scalar 'scale'", str(e.exception))
        x = FakeTensor(0x100000, (64, 96), F32)
        with self.assertRaises(attnc.AttncError) as e:
            self.tile_copy.plan(x, y=FakeTensor(0x200000, (64, 95), F32))
        self.assertEqual(str(e.exception),
                         "tile_copy: N (= 96) must equal N2 (= 95)")

    def test_tma_refusals(self):
        a = decode_args(k=FakeTensor(0x100000000000, (2, 2, 1000, 128), BF16,
                                     (2 * 1000 * 132, 1000 * 132, 132, 1)))
        with self.assertRaises(attnc.AttncError) as e:
            self.decode.plan(**a, num_sms=132)
        self.assertEqual(str(e.exception),
                         "decode_fwd: tensormap k_map: k.stride[2] = 132 "
                         "elements (264 bytes) is not a multiple of 16 bytes, "
                         "as TMA requires")


def fallback_args(**changes):
    """attn (Inputs/fallback) with B=2, H=8, Hkv=2, Sq=300, Skv=500, d=64."""
    args = {
        "q": FakeTensor(0x100000, (2, 8, 300, 64), BF16),
        "k": FakeTensor(0x1000000, (2, 2, 500, 64), BF16),
        "v": FakeTensor(0x2000000, (2, 2, 500, 64), BF16),
        "o": FakeTensor(0x3000000, (2, 8, 300, 64), BF16),
        "lse": FakeTensor(0x4000000, (2, 8, 300), F32),
        "scale": 0.125,
    }
    args.update(changes)
    return args


# q with rows of 68 bf16 (136 bytes): TMA and row_align 16 refuse them.
PADDED_Q = FakeTensor(0x100000, (2, 8, 300, 64), BF16,
                      (8 * 300 * 68, 300 * 68, 68, 1))


class VariantTest(unittest.TestCase):
    """A kernel's plans run its size variant where the sizes meet the
    variant's conditions and the variant accepts the call (Inputs/variants:
    `rows`, and `rows_long` from S = 4096 on, 16-byte rows only)."""

    def setUp(self):
        self.module = attnc.load(INPUTS / "variants")
        self.rows = self.module["rows"]

    def xy(self, S, row=64):
        shape, strides = (2, 4, S, 64), (4 * S * row, S * row, row, 1)
        return {"x": FakeTensor(0x100000, shape, BF16, strides),
                "y": FakeTensor(0x10000000, shape, BF16)}

    def test_metadata(self):
        long = self.module["rows_long"]
        self.assertEqual(self.rows.variants, [
            (long, (attnc.Constraint("min", "S", None, 4096),))])
        self.assertEqual(long.variants, [])
        # What a program calls: the kernel, not its variant.
        self.assertEqual([k.name for k in self.module.entries], ["rows"])

    def test_plan_picks_by_size(self):
        plan = self.rows.plan(**self.xy(4095))
        self.assertIs(plan.kernel, self.rows)
        self.assertEqual(plan.grid, (64, 4, 2))  # ceil(4095 / 64)
        plan = self.rows.plan(**self.xy(4096))
        self.assertIs(plan.kernel, self.module["rows_long"])
        self.assertEqual(plan.grid, (32, 4, 2))  # its 128-row blocks
        # Rows of 66 bf16 (132 bytes): rows_long refuses them, rows runs.
        plan = self.rows.plan(**self.xy(4096, row=66))
        self.assertIs(plan.kernel, self.rows)


def split_qkv(B, H, Hkv, Sq, Skv):
    """q, k, v of a split-KV decode call."""
    return (FakeTensor(0x100000, (B, H, Sq, 128), BF16),
            FakeTensor(0x10000000, (B, Hkv, Skv, 128), BF16),
            FakeTensor(0x20000000, (B, Hkv, Skv, 128), BF16))


class SizeRuleTest(unittest.TestCase):
    """The split count of a split-KV kernel, from its manifest's rule."""

    def setUp(self):
        m = attnc.load(INPUTS / "split")
        self.partial, self.combine = m["attn_partial"], m["attn_combine"]
        patcher = mock.patch.dict(os.environ,
                                  {"ATTNC_LIBCUDA": "/nonexistent/libcuda.so"})
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_metadata(self):
        self.assertEqual(self.partial.size_rules, [
            {"kind": "kv_splits", "symbol": "splits",
             "kv_tiles": ({"sym": "Skv", "ceil_div": 64},), "max": 128,
             "ctas_per_sm": 2}])
        self.assertEqual(self.combine.size_rules, [])
        # The combine waits for the partials (griddepcontrol.wait) and is
        # launched programmatically; the partial kernel is not.
        self.assertTrue(self.combine.programmatic_launch)
        self.assertFalse(self.partial.programmatic_launch)
        # The unsplit twin, run instead of the two when the rule gives 1.
        self.assertEqual(self.partial.unsplit.name, "attn_unsplit")
        self.assertEqual([p.name for p in self.partial.unsplit.outputs],
                         ["o", "lse"])
        self.assertIsNone(self.combine.unsplit)
        self.assertIsNone(self.partial.unsplit.unsplit)

    def test_values(self):
        # docs/abi.md's rule on 132 SMs, 2 blocks each (SizeRuleTest.cpp
        # works them out).
        rule = self.partial.size_rule
        self.assertEqual(rule("splits", *split_qkv(1, 32, 8, 1, 8192),
                              num_sms=132), 8)
        self.assertEqual(rule("splits", *split_qkv(4, 32, 8, 1, 8192),
                              num_sms=132), 2)
        self.assertEqual(rule("splits", *split_qkv(128, 32, 8, 1, 8192),
                              num_sms=132), 1)
        self.assertEqual(rule("splits", *split_qkv(1, 32, 8, 1, 64),
                              num_sms=132), 1)
        # Outputs may come along, whatever their split extent.
        q, k, v = split_qkv(1, 32, 8, 1, 8192)
        o = FakeTensor(0x30000000, (3, 1, 32, 1, 128), F32)
        self.assertEqual(rule("splits", q, k, v, o, num_sms=132), 8)
        # The value plans: partials of that many splits are accepted.
        o = FakeTensor(0x30000000, (8, 1, 32, 1, 128), F32)
        lse = FakeTensor(0x40000000, (8, 1, 32, 1), F32)
        plan = self.partial.plan(q, k, v, o_partial=o, lse_partial=lse)
        self.assertEqual(plan.symbol("splits"), 8)
        self.assertEqual(plan.grid, (8, 32, 1))

    def test_errors(self):
        q, k, v = split_qkv(1, 32, 8, 1, 8192)
        with self.assertRaises(attnc.AttncError) as e:
            self.partial.size_rule("splits", q, num_sms=132)
        self.assertEqual(e.exception.status, "ATTNC_ERROR_VALIDATION")
        self.assertEqual(str(e.exception),
                         "attn_partial: size rule of splits needs Skv, which "
                         "no tensor given binds (pass k or v)")
        with self.assertRaises(attnc.AttncError) as e:
            self.partial.size_rule("Sq", q, k, v, num_sms=132)
        self.assertEqual(e.exception.status, "ATTNC_ERROR_NOT_FOUND")
        with self.assertRaises(attnc.AttncError) as e:
            self.combine.size_rule("splits", num_sms=132)
        self.assertEqual(str(e.exception), "attn_combine: no size rule for "
                         "'splits' (the kernel has none)")
        with self.assertRaises(TypeError):
            self.partial.size_rule("splits", q, k, v, q, q, q, num_sms=132)
        # Without torch or num_sms the driver is asked, and there is none.
        with self.assertRaises(attnc.AttncError) as e:
            self.partial.size_rule("splits", q, k, v)
        self.assertEqual(e.exception.status, "ATTNC_ERROR_NO_DRIVER")


class FallbackTest(unittest.TestCase):
    """A kernel whose tensormaps refuse a call hands it to its fallback."""

    def setUp(self):
        self.module = attnc.load(INPUTS / "fallback")
        self.attn = self.module["attn"]
        patcher = mock.patch.dict(os.environ,
                                  {"ATTNC_LIBCUDA": "/nonexistent/libcuda.so"})
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_metadata(self):
        fallback = self.module["attn_fallback"]
        self.assertIs(self.attn.fallback, fallback)
        self.assertIsNone(fallback.fallback)
        # What a program calls: the kernel, not its fallback.
        self.assertEqual([k.name for k in self.module.entries], ["attn"])
        self.assertEqual([p.name for p in self.attn.tensormaps],
                         ["q_map", "k_map", "v_map"])
        self.assertEqual(fallback.tensormaps, [])

    def test_plan_picks_the_fallback(self):
        plan = self.attn.plan(**fallback_args(q=PADDED_Q))
        self.assertIs(plan.kernel, self.attn.fallback)
        self.assertEqual(plan.grid, (5, 8, 2))  # ceil(300 / 64): its grid
        index = [p.name for p in plan.kernel.params].index("q.stride2")
        self.assertEqual(struct.unpack("<q", plan.param_bytes(index))[0], 68)
        # A base pointer only 2-byte aligned too.
        plan = self.attn.plan(**fallback_args(
            q=FakeTensor(0x100002, (2, 8, 300, 64), BF16)))
        self.assertIs(plan.kernel, self.attn.fallback)

    def test_aligned_tensors_stay_with_the_kernel(self):
        # Accepted by attn, whose maps only a driver encodes: that error is
        # not a refusal and does not fall back.
        with self.assertRaises(attnc.AttncError) as e:
            self.attn.plan(**fallback_args())
        self.assertEqual(e.exception.status, "ATTNC_ERROR_NO_DRIVER")
        self.assertTrue(str(e.exception).startswith(
            "attn: tensormap q_map of q is encoded by the CUDA driver"))
        self.assertNotIn("fallback", str(e.exception))

    def test_both_refuse(self):
        with self.assertRaises(attnc.AttncError) as e:
            self.attn.plan(**fallback_args(
                q=FakeTensor(0x100000, (2, 8, 300, 64), "float16")))
        self.assertEqual(e.exception.status, "ATTNC_ERROR_VALIDATION")
        self.assertEqual(str(e.exception),
                         "attn: q has dtype f16 but the kernel expects bf16; "
                         "its fallback kernel attn_fallback refuses them "
                         "too: attn_fallback: q has dtype f16 but the kernel "
                         "expects bf16")

    def test_call_launches_the_plans_kernel(self):
        launched = []

        def launch(plan, stream=None):
            launched.append(plan.kernel.name)
            return None

        a = fallback_args(q=PADDED_Q)
        with mock.patch.object(attnc.runtime.Plan, "launch", autospec=True,
                               side_effect=launch):
            o, lse = self.attn(a["q"], a["k"], a["v"], o=a["o"],
                               lse=a["lse"], scale=0.125)
        self.assertEqual(launched, ["attn_fallback"])
        self.assertIs(o, a["o"])


if __name__ == "__main__":
    unittest.main()
