"""The cost model through the runtime (attnc.cost, attnc_plan_estimate):
device files, built-in devices, and the model's arithmetic on a schedule
small enough to price by hand (docs/cost-model.md)."""

import json
import unittest

from _support import FakeDType, FakeTensor

import attnc
from attnc.cost import Device

BF16 = FakeDType("bfloat16")
F32 = FakeDType("float32")

# Round ceilings on one SM: 1 TFLOP/s, 1 G softmax elements/s, 1 TB/s of
# shared memory, HBM and reductions, 1 us latency, 2 us a launch and 0.5 us
# a kernel's cold start and drain.
UNIT_DEVICE = {
    "attnc_device_version": 1, "name": "unit", "source": "a test",
    "sm_count": 1, "l2_bytes": 1e6, "max_threads_per_sm": 2048,
    "registers_per_sm": 65536, "shared_memory_per_sm": 233472,
    "max_ctas_per_sm": 32, "mma_sync_tflops": 1, "wgmma_tflops": 0,
    "wgmma_n128_tflops": 0, "wgmma_n64_tflops": 0,
    "softmax_gelems": 1, "shared_tbps": 1, "dram_tbps": 1,
    "reduce_tbps": 1, "dram_latency_us": 1, "launch_us": 2,
    "cta_launch_gps": 1, "kernel_latency_us": 0.5,
}


def manifest(mask, strategy="mma_sync", key_warps=None, query_buffers=None,
             shared_p=None, mma_row_sums=None):
    shape = {"q": ["B", "H", "Sq", 64], "k": ["B", "H", "Skv", 64],
             "v": ["B", "H", "Skv", 64], "o": ["B", "H", "Sq", 64]}
    params = [{"name": n, "kind": "tensor", "dtype": "bf16", "shape": s,
               "role": "output" if n == "o" else "input"}
              for n, s in shape.items()]
    params.append({"name": "lse", "kind": "tensor", "dtype": "f32",
                   "shape": ["B", "H", "Sq"], "role": "output"})
    return json.dumps({
        "attnc_manifest_version": 2, "module": "m", "kernels": [{
            "name": "attn", "kind": "attention", "cubin": "attn.cubin",
            "block": [128, 1, 1], "registers": 255,
            "grid": [[{"sym": "Sq", "ceil_div": 64}], ["H"], ["B"]],
            "params": params,
            "attrs": {"strategy": strategy, "block_q": 64,
                      "block_kv": 64, "head_dim": 64, "mask": mask,
                      **({"key_warps": key_warps} if key_warps
                         else {}),
                      **({"query_buffers": query_buffers} if query_buffers
                         else {}),
                      **({"shared_p": shared_p} if shared_p else {}),
                      **({"mma_row_sums": mma_row_sums} if mma_row_sums
                         else {})}}]})


def plan(mask, sq, skv, strategy="mma_sync", key_warps=None,
         query_buffers=None, shared_p=None, mma_row_sums=None):
    k = attnc.Module.from_json(
        manifest(mask, strategy, key_warps, query_buffers, shared_p,
                 mma_row_sums))["attn"]
    return k.plan(q=FakeTensor(0x100000, (1, 1, sq, 64), BF16),
                  k=FakeTensor(0x200000, (1, 1, skv, 64), BF16),
                  v=FakeTensor(0x300000, (1, 1, skv, 64), BF16),
                  o=FakeTensor(0x400000, (1, 1, sq, 64), BF16),
                  lse=FakeTensor(0x500000, (1, 1, sq), F32))


class DeviceTest(unittest.TestCase):
    def test_builtin_is_the_datasheet(self):
        d = Device.builtin("h200").json()
        self.assertEqual(d["sm_count"], 132)
        self.assertEqual(d["wgmma_tflops"], 989)
        self.assertEqual(d["dram_tbps"], 4.8)
        self.assertIn("datasheet", d["source"])

    def test_unknown_builtin(self):
        with self.assertRaises(attnc.AttncError) as e:
            Device.builtin("b200")
        self.assertEqual(str(e.exception),
                         "no built-in device 'b200' (h100, h200, a100)")

    def test_round_trip(self):
        d = Device.parse(json.dumps(UNIT_DEVICE)).json()
        self.assertEqual({k: d[k] for k in UNIT_DEVICE}, UNIT_DEVICE)

    def test_bad_files(self):
        for change, message in (
                ({"attnc_device_version": 2}, "attnc_device_version: "
                 "expected 1"),
                ({"dram_tbps": 0}, "dram_tbps: must be a positive number"),
                ({"launch_us": "5"}, "launch_us: missing or not a number"),
                ({"sm_count": 1.5}, "sm_count: must be a whole number below "
                 "2^31"),
                ({"sm_count": 1e300}, "sm_count: must be a whole number "
                 "below 2^31")):
            with self.subTest(change=change):
                with self.assertRaises(attnc.AttncError) as e:
                    Device.parse(json.dumps({**UNIT_DEVICE, **change}))
                self.assertEqual(str(e.exception), "device file: " + message)
        bad = dict(UNIT_DEVICE)
        del bad["softmax_gelems"]
        with self.assertRaises(attnc.AttncError) as e:
            Device.parse(json.dumps(bad))
        self.assertEqual(str(e.exception), "device file: softmax_gelems: "
                         "missing or not a number")


class EstimateTest(unittest.TestCase):
    """One SM; 4 warps of 255 registers: 2 CTAs fit. A step of 64 x 64
    scores at d = 64: 2*64*64*128 FLOP = 1.048576 us of tensor cores,
    4096 softmax elements = 4.096 us, 4 warps reading K and V
    (4*64*128*2 bytes) = 0.065536 us of shared memory. A fill: 1 us of
    latency plus Q, the first K/V tile and O (32768 bytes), paid once per
    2 CTAs (those the SM holds at once wait together)."""
    STEP = 1.048576 + 4.096 + 0.065536
    FILL = 1 + 32768e-6

    def setUp(self):
        self.device = Device.parse(json.dumps(UNIT_DEVICE))

    def test_full(self):
        # One query tile, two K/V tiles.
        e = plan("none", 64, 128).estimate(self.device)
        self.assertEqual(e.ctas_per_sm, 2)
        self.assertEqual(e.steps, 2)
        self.assertAlmostEqual(e.sm_us, 2 * self.STEP + self.FILL, places=9)
        self.assertAlmostEqual(e.tensor_us, 2 * 1.048576, places=9)
        self.assertAlmostEqual(e.dram_us, (3 * 8192 + 16384 + 256) * 1e-6 +
                               8192e-6, places=9)
        self.assertAlmostEqual(e.time_us, 2 * self.STEP + self.FILL + 2.5,
                               places=9)
        self.assertEqual((e.limiter, e.regime), ("exp", "latency"))

    def test_causal_skips_tiles(self):
        # Query tile t sees t + 1 K/V tiles: 1 + 2 + 3 + 4; four CTAs, two
        # at a time: two fills.
        e = plan("causal", 256, 256).estimate(self.device)
        self.assertEqual(e.steps, 10)
        self.assertAlmostEqual(e.time_us,
                               10 * self.STEP + 2 * self.FILL + 2.5, places=9)
        full = plan("none", 256, 256).estimate(self.device)
        self.assertEqual(full.steps, 16)

    def test_persistent_tiles_wait_for_their_query(self):
        # One CTA walks four query tiles of one K/V step each. wgmma's
        # rates are 0 on this device (no tensor term) and it reads nothing
        # by ldmatrix. The first tile pays the fill; each later one an HBM
        # latency and its Q (8192 bytes): its O's stores are posted while
        # the next Q loads.
        e = plan("none", 256, 64, "wgmma_ws_persistent").estimate(
            self.device)
        self.assertEqual((e.steps, e.waves), (4, 4))
        self.assertAlmostEqual(e.fill_us, self.FILL + 3 * (1 + 8192e-6),
                               places=9)
        self.assertAlmostEqual(e.sm_us, 4 * 4.096 + e.fill_us, places=9)

    def test_prefetched_queries_are_not_waited_for(self):
        # With two query buffers the producer loads each later tile's Q
        # during the previous tile: the CTA pays its first fill only.
        e = plan("none", 256, 64, "wgmma_ws_persistent",
                 query_buffers=2).estimate(self.device)
        self.assertEqual((e.steps, e.waves), (4, 4))
        self.assertAlmostEqual(e.fill_us, self.FILL, places=9)
        self.assertAlmostEqual(e.sm_us, 4 * 4.096 + self.FILL, places=9)

    def test_shared_p_stores_its_probabilities(self):
        # With P through shared memory each step also stores its 64 x 64
        # bf16 probabilities (8192 bytes at 1 TB/s), on top of the
        # prefetched-query kernel above.
        e = plan("none", 256, 64, "wgmma_ws_persistent", query_buffers=2,
                 shared_p="1").estimate(self.device)
        self.assertAlmostEqual(e.shared_us, 4 * 8192e-6, places=9)
        self.assertAlmostEqual(e.sm_us, 4 * (4.096 + 8192e-6) + self.FILL,
                               places=9)

    def test_mma_row_sums_add_their_products(self):
        # With the row sums on the tensor cores each step also multiplies
        # its 64 x 64 P by 8 columns of ones on mma.sync (2 * 64 * 64 * 8
        # FLOP at 1 TFLOP/s; the unit device prices no wgmma), on top of
        # the prefetched-query kernel above.
        e = plan("none", 256, 64, "wgmma_ws_persistent", query_buffers=2,
                 mma_row_sums="1").estimate(self.device)
        self.assertAlmostEqual(e.tensor_us, 4 * 65536e-6, places=9)
        self.assertAlmostEqual(e.sm_us, 4 * (4.096 + 65536e-6) + self.FILL,
                               places=9)

    def test_regime_is_the_mean_sms(self):
        # Three SMs, nothing but tensor cores: a causal 128 x 128 launches
        # tiles of 2 and 1 steps, one SM stays idle. The busiest SM is all
        # tensor time, but ncu's figure is the mean over the SMs: 3 of 6
        # step-times, below 60%.
        fast = dict(UNIT_DEVICE, sm_count=3, softmax_gelems=1e9,
                    shared_tbps=1e9, dram_tbps=1e9, reduce_tbps=1e9,
                    dram_latency_us=1e-9, launch_us=1e-9,
                    kernel_latency_us=1e-9,
                    cta_launch_gps=1e9)
        e = plan("causal", 128, 128).estimate(Device.parse(json.dumps(fast)))
        step = 2 * 64 * 64 * 128 / (1e12 / 3) * 1e6
        self.assertAlmostEqual(e.tensor_us, 2 * step, places=6)
        self.assertGreater(e.tensor_us / e.time_us, 0.99)
        self.assertEqual((e.limiter, e.regime), ("tensor", "latency"))

    def test_key_parts_read_their_share_of_the_tiles(self):
        # Four warps in two key parts: two tiles' worth of K and V read by
        # ldmatrix per step, half of four warps' (the rest of the step and
        # the fill unchanged).
        e = plan("none", 64, 128, key_warps=2).estimate(self.device)
        step = self.STEP - 0.065536 / 2
        self.assertAlmostEqual(e.sm_us, 2 * step + self.FILL, places=9)

    def test_device_name_or_file(self):
        e = plan("none", 64, 128).estimate("h200")
        self.assertGreater(e.time_us, 5.0)  # the datasheet's 5 us launch


if __name__ == "__main__":
    unittest.main()
