"""CPU tests of the Python runtime API over libattnc_runtime.so: manifest
loading, kernel metadata (tensormaps, workspaces, constraints, grid rules,
size rules),
validation refusals with the C library's messages, launch plans, scalars,
workspaces, DLPack, and the GPU entry points' error paths."""

import ctypes
import os
import struct
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

from _support import (INPUTS, REPO, FakeDType, FakeTensor,
                      child_pythonpath)

import attnc

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


def fake_driver() -> Path | None:
    """The test build's libcuda stand-in (test/Runtime/FakeCuda.cpp)."""
    if os.environ.get("ATTNC_FAKE_CUDA"):
        return Path(os.environ["ATTNC_FAKE_CUDA"])
    runtime = Path(os.environ.get("ATTNC_RUNTIME_LIB",
                                  REPO / "build" / "lib" /
                                  "libattnc_runtime.so"))
    fake = runtime.parent / "libattnc-fake-cuda.so"
    return fake if fake.is_file() else None


# Runs in a child process: a loaded driver stays loaded for the process.
_FAKE_DRIVER_CHILD = """
import atexit, shutil, struct, sys, tempfile
from pathlib import Path
from _support import INPUTS, FakeDType, FakeTensor
import attnc
BF16, I8 = FakeDType("bfloat16"), FakeDType("int8")
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp)
(Path(tmp) / "decode_fwd.cubin").write_text("not a real cubin")
text = (INPUTS / "persistent" / "manifest.json").read_text()
d = attnc.Module.from_json(text, tmp)["decode_fwd"]
args = dict(q=FakeTensor(0x100000, (2, 8, 1, 128), BF16),
            k=FakeTensor(0x100000000000, (2, 2, 1000, 128), BF16),
            v=FakeTensor(0x200000000000, (2, 2, 1000, 128), BF16),
            o=FakeTensor(0x300000, (2, 8, 1, 128), BF16),
            partial=(0x400000, 1 << 20),
            counters=FakeTensor(0x600000, (32,), I8), scale=0.125)
plan = d.plan(**args)  # num_sms from the (fake) device: 132
print("grid", plan.grid)
print("partial", plan.workspace_bytes("partial"))
for i in (4, 5):
    words = struct.unpack("<16Q", plan.param_bytes(i))
    print("map", i, hex(words[0]), words[1], hex(words[15]))
plan.launch(stream=0x5151)
print("launched")
"""


_FALLBACK_CHILD = """
import atexit, shutil, sys, tempfile
from pathlib import Path
from _support import INPUTS, FakeDType, FakeTensor
import attnc
BF16, F32 = FakeDType("bfloat16"), FakeDType("float32")
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp)
for name in ("attn", "attn_fallback"):
    (Path(tmp) / (name + ".cubin")).write_text("not a real cubin")
text = (INPUTS / "fallback" / "manifest.json").read_text()
attn = attnc.Module.from_json(text, tmp)["attn"]
args = dict(k=FakeTensor(0x1000000, (2, 2, 500, 64), BF16),
            v=FakeTensor(0x2000000, (2, 2, 500, 64), BF16),
            o=FakeTensor(0x3000000, (2, 8, 300, 64), BF16),
            lse=FakeTensor(0x4000000, (2, 8, 300), F32), scale=0.125)
for q in (FakeTensor(0x100000, (2, 8, 300, 64), BF16),
          FakeTensor(0x100000, (2, 8, 300, 64), BF16,
                     (8 * 300 * 68, 300 * 68, 68, 1))):
    plan = attn.plan(q, **args)
    print(plan.kernel.name, plan.grid, len(plan.kernel.tensormaps))
    plan.launch(stream=0x5151)
print("launched")
"""

@unittest.skipUnless(fake_driver(), "needs the test build's "
                                    "libattnc-fake-cuda.so")
class FakeDriverTest(unittest.TestCase):
    def run_child(self, code):
        """The lines CODE prints in a child process whose libcuda is the
        fake driver."""
        env = dict(os.environ, ATTNC_LIBCUDA=str(fake_driver()),
                   PYTHONPATH=child_pythonpath())
        child = subprocess.run([sys.executable, "-c", code], env=env,
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(child.returncode, 0, child.stderr)
        return child.stdout.splitlines()

    def test_tensormaps_encoded_and_launched(self):
        self.assertEqual(self.run_child(_FAKE_DRIVER_CHILD), [
            "grid (132, 1, 1)",
            f"partial {132 * 8 * 128 * 4}",
            "map 4 0x100000000000 4 0xa77c",
            "map 5 0x200000000000 4 0xa77c",
            "launched",
        ])

    def test_fallback_planned_and_launched(self):
        self.assertEqual(self.run_child(_FALLBACK_CHILD), [
            "attn (3, 8, 2) 3",
            "attn_fallback (5, 8, 2) 0",
            "launched",
        ])


# A DLPack tensor built by hand: DLManagedTensor = DLTensor + ctx + deleter.
class _DLManaged(ctypes.Structure):
    from attnc._tensors import DLTensor
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackTensor:
    def __init__(self, data, shape, code, bits, device_type=2):
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.managed = _DLManaged()
        t = self.managed.dl_tensor
        t.data = data
        t.device.device_type = device_type
        t.ndim = len(shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.shape = self.shape
        t.strides = None  # compact
        t.byte_offset = 0

    def __dlpack__(self):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)


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
