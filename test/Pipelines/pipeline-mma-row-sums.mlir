// The softmax's row sums on the tensor cores (flash_config's mma_row_sums,
// off unless asked for): each k16 slice of a step's packed P, the register
// A operand of its overlapped P V and an mma.sync m16n8k16 A fragment per
// warp, is multiplied by a 16 x 8 tile of bf16 ones (0x3F803F80 =
// 1065369472 per register pair), every column of the f32 product being its
// rows' sum. A step's 64 f32 adds a thread become 8 mma.sync a warp, chained
// through their accumulators (C of the first is each row slot's running sum
// twice: (row g, row g, row g + 8, row g + 8)); the sums are whole rows, so
// the epilogue reduces no sum over the quad.
// REQUIRES: ptxas
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false mma-row-sums=true" | FileCheck %s --check-prefix=CONFIG
// RUN: rm -rf %t && attnc-compile %attnc_src_root/examples/naive_attention.mlir --mma-row-sums -o %t/p
// RUN: FileCheck %s --check-prefix=PTX < %t/p/naive_attention.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/p/manifest.json
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir --mma-row-sums --strategy=wgmma_ws -o %t/ws
// RUN: FileCheck %s --check-prefix=PTX < %t/ws/naive_attention.ptx
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/ws/naive_attention.ptx -o %t/ws.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// The default kernel adds each probability to its row's sum in the step.
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir -o %t/default
// RUN: FileCheck %s --check-prefix=DEFAULT < %t/default/naive_attention.ptx
// The keyword's rules, checked on the configuration the options give.
// RUN: not attnc-compile %attnc_src_root/examples/naive_attention.mlir --mma-row-sums --shared-p -o %t/x 2>&1 | FileCheck %s --check-prefix=SHARED-P
// RUN: not attnc-compile %attnc_src_root/examples/naive_attention.mlir --mma-row-sums --strategy=mma_sync -o %t/x 2>&1 | FileCheck %s --check-prefix=MMA-SYNC
// Without the overlap (d = 64's default), the step sums its P the same way
// before its P V.
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir --mma-row-sums --overlap-pv=off -o %t/serial
// RUN: FileCheck %s --check-prefix=SERIAL < %t/serial/naive_attention.ptx

// CONFIG: strategy = wgmma_ws_persistent, overlap_pv, mma_row_sums, l2_group_mib = 32, fallback = <{{.*}}strategy = mma_sync_unaligned>

// A loop step: S waited for with the previous P V in flight, the
// exponentials, the P V's wait, P rounded and packed, and its eight row-sum
// MMAs, with no f32 add in between.
// PTX: .visible .entry naive_attention(
// PTX: wgmma.wait_group.sync.aligned 1;
// PTX-NOT: add{{(.rn)?}}.f32
// PTX: ex2.approx
// PTX-NOT: add{{(.rn)?}}.f32
// PTX: wgmma.wait_group.sync.aligned 0;
// PTX-NOT: add{{(.rn)?}}.f32
// PTX: mov.b32 [[ONES:%r[0-9]+]], 1065369472;
// PTX-NEXT: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-NEXT: {[[D0:%r[0-9]+]], [[D1:%r[0-9]+]], [[D2:%r[0-9]+]], [[D3:%r[0-9]+]]},
// PTX-NEXT: {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}},
// PTX-NEXT: {[[ONES]], [[ONES]]},
// PTX-NEXT: {[[G:%r[0-9]+]], [[G]], [[G8:%r[0-9]+]], [[G8]]};
// PTX-NEXT: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-NEXT: {%r{{[0-9, %r]+}}},
// PTX-NEXT: {%r{{[0-9, %r]+}}},
// PTX-NEXT: {[[ONES]], [[ONES]]},
// PTX-NEXT: {[[D0]], [[D1]], [[D2]], [[D3]]};
// PTX-COUNT-6: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// MANIFEST: "mma_row_sums": 1,
// MANIFEST-NEXT: "overlap_pv": 1,

// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// DEFAULT: wgmma.wait_group.sync.aligned 1;
// DEFAULT: ex2.approx
// DEFAULT: add.rn.f32
// DEFAULT-NOT: mma.sync

// SHARED-P: --attnc-online-softmax option mma-row-sums: mma_row_sums needs P in registers (the mma.sync operands), not shared_p
// MMA-SYNC: --attnc-online-softmax option mma-row-sums: mma_row_sums needs a wgmma strategy (the sums are taken from the packed probabilities a warpgroup P V reads from registers), got mma_sync

// SERIAL: .visible .entry naive_attention(
// SERIAL: ex2.approx
// SERIAL-NOT: add{{(.rn)?}}.f32
// SERIAL-COUNT-8: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SERIAL-NOT: add{{(.rn)?}}.f32
// SERIAL: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SERIAL: wgmma.wait_group.sync.aligned 0;
