// The cost model's arithmetic (docs/cost-model.md) on a fixed device file
// of round ceilings (one SM; 1 TFLOP/s of mma.sync, 1 G softmax elements/s,
// 1 TB/s of shared memory and HBM, 1 us latency, 2 us a launch and 0.5 us a
// kernel's cold start and drain), for the
// flash form of examples/naive_attention.mlir tiled 64 x 64 with mma.sync
// (4 warps) at B = H = 1, S = 256, causal:
//   a step: 2*64*64*(128+128) FLOP = 2.097152 us of tensor cores, 64*64
//   softmax elements = 4.096 us, 4 warps reading K and V (4*64*256*2 B) =
//   0.131072 us of shared memory;
//   query tile t sees t + 1 K/V tiles: 10 steps = 63.24224 us;
//   a CTA (the register file is the kernel's: 1 CTA per SM) waits 1 us and
//   loads Q, K, V's first tiles and writes O (65536 B): 4 x 1.065536 us;
//   + a 2.5 us launch = 70.00 us; exp is the largest term.
//
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false target=h200 block-q=64 block-kv=64 strategy=mma_sync" | attnc-opt --attnc-report-intensity="device-file=%S/Inputs/unit-device.json seq-len=256" -o /dev/null | FileCheck %s --check-prefix=UNIT
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false target=h200 block-q=64 block-kv=64 strategy=mma_sync" | attnc-opt --attnc-report-intensity="device-file=%S/Inputs/unit-device.json seq-len=256 format=json" -o /dev/null | FileCheck %s --check-prefix=JSON
// The same tiles with wgmma (overlapped, 3 stages; the unit device has no
// wgmma rate, and a rate of 0 prices nothing) and mma_row_sums: each step
// adds P against 8 columns of ones on mma.sync, 2*64*64*8 FLOP = 0.065536
// us, 10 steps = 0.66 us of tensor cores beside the same exponentials.
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false target=h200 block-q=64 block-kv=64 strategy=wgmma overlap-pv=on stages=3 mma-row-sums=true" | attnc-opt --attnc-report-intensity="device-file=%S/Inputs/unit-device.json seq-len=256" -o /dev/null | FileCheck %s --check-prefix=SUMS
// SUMS: busiest SM 45.88 us = tensor 0.66 + exp 40.96 + shared 0.00 + fill 4.26
// Without a schedule (the unfused graph) a kernel is memory-bound: its
// bytes at the copy bandwidth, a CTA per 16 KiB waiting once.
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-report-intensity="device-file=%S/Inputs/unit-device.json seq-len=256" -o /dev/null | FileCheck %s --check-prefix=UNFUSED
// The built-in devices say they are datasheet numbers.
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false target=h200" | attnc-opt --attnc-report-intensity="device=h200 batch=4 heads=16" -o /dev/null | FileCheck %s --check-prefix=H200
// A custom peak prices every tensor-core family and width: 274.9 GFLOP of
// causal attention at 100 TFLOP/s spread over 132 SMs (2749 us), with the
// causal tiles' imbalance (the persistent grid's: the longest tiles first,
// each on the SM that frees first).
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false target=h200" | attnc-opt --attnc-report-intensity="device=custom peak-tflops=100 bandwidth-tbps=1 batch=4 heads=16" -o /dev/null | FileCheck %s --check-prefix=CUSTOM
// RUN: not attnc-opt %s --attnc-report-intensity="device-file=%S/Inputs/bad-device.json" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attnc-opt %s --attnc-report-intensity="device-file=%S/Inputs/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING

// UNIT: attnc intensity report: device unit, peak 1.0 TFLOP/s, bandwidth 1.00 TB/s, ridge 1.0 FLOP/B, launch 2.0 us
// UNIT: cost model: unit, a test device: round ceilings on one SM
// UNIT: model #0: 70.00 us, latency-bound (exp); busiest SM 67.50 us = tensor 20.97 + exp 40.96 + shared 1.31 + fill 4.26; dram 0.26, reduce 0.00, CTA starts 0.00, launch 2.50 us; 1 CTA/SM, 4.00 waves

// JSON: "model": {
// JSON-NEXT: "name": "unit",
// JSON: "model": {
// JSON-NEXT: "time_us": 70.00438{{[0-9]*}},
// JSON-NEXT: "regime": "latency",
// JSON-NEXT: "limiter": "exp",
// JSON-NEXT: "sm_us": 67.50438{{[0-9]*}},
// JSON-NEXT: "tensor_us": 20.9715{{[0-9]*}},
// JSON-NEXT: "exp_us": 40.9600{{[0-9]*}},

// The first kernel of the unfused graph, Q K^T: Q and K in (2 x 65536 B),
// 256 KiB of f32 scores out: 393216 B = 0.39 us at 1 TB/s; 24 CTAs of 16
// KiB, 16 at once (128 threads), each 16 waiting 1 us together: 2 us;
// the 2.5 us launch dominates.
// UNFUSED-LABEL: func @naive_attention
// UNFUSED: model #0: 4.50 us, latency-bound (launch); busiest SM 2.00 us = tensor 0.00 + exp 0.00 + shared 0.00 + fill 2.00; dram 0.39, reduce 0.00, CTA starts 0.02, launch 2.50 us; 16 CTA/SM, 1.50 waves

// H200: cost model: h200, datasheet (built in; run python3 -m attnc.calibrate for measured ceilings)
// H200: model #0: {{[0-9.]+}} us, {{[a-z]+}}-bound (tensor); busiest SM {{.*}}; 1 CTA/SM, 15.52 waves

// CUSTOM: model #0: {{[0-9.]+}} us, compute-bound (tensor); busiest SM {{[0-9.]+}} us = tensor 2845.75 +

// BAD: error: device file '{{.*}}bad-device.json': sm_count: missing or not a number
// MISSING: error: cannot read device file '{{.*}}missing.json':

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
