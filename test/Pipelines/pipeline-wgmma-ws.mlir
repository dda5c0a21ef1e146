// The warp-specialised wgmma strategy (sm_90a's default above d = 64) down
// to PTX and through ptxas: a producer warpgroup gives registers to the two
// computing warpgroups (setmaxnreg) and one of its threads loads K/V by TMA
// (4-D tensor maps passed as grid-constant parameters) into a ring of
// shared-memory slots, each guarded by a full mbarrier (expect_tx of the
// boxes' bytes) and an empty one; the consumers load Q by TMA the same way,
// wait on a slot's full barrier, read it (wgmma) and release it on its
// empty one. ptxas must not serialize the
// warpgroup MMAs (its note C7513), neither here nor in the overlapped forms
// (overlap_pv, the default at d = 128), where a loop-carried A operand
// copied after the step's first MMA once made it do so. With 3 stages the ring's slot
// and phase (a counter mod and div 3) are 32-bit arithmetic: in 64 bits
// they cost 5-6% (H200, d = 128).
// REQUIRES: ptxas
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="binary=isa overlap-pv=off strategy=wgmma_ws" | FileCheck %s
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-gpu=false" | FileCheck %s --check-prefix=CONFIG
// RUN: attnc-opt %attnc_src_root/examples/naive_attention.mlir --attnc-pipeline="to-nvvm=false" | FileCheck %s --check-prefix=CONTRACT
// RUN: rm -rf %t && attnc-compile %attnc_src_root/examples/naive_attention.mlir --strategy=wgmma_ws -o %t/ws
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/ws/naive_attention.ptx -o %t/ws.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=FALLBACK < %t/ws/naive_attention_fallback.ptx
// RUN: FileCheck %s --check-prefix=ROWTEST --implicit-check-not=setp.gt.s64 --implicit-check-not=setp.lt.s64 --implicit-check-not=setp.ge.s64 --implicit-check-not=setp.le.s64 < %t/ws/naive_attention.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/ws/manifest.json
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/ws/naive_attention_fallback.ptx -o %t/fallback.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: attnc-compile %attnc_src_root/test/Inputs/full_attention_d128.mlir -o %t/full
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/full/attention_v0.ptx -o %t/v0.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=DRAW < %t/full/attention.ptx
// RUN: FileCheck %s --check-prefix=PEEL < %t/full/attention.ptx
// RUN: FileCheck %s --check-prefix=PGRID < %t/full/manifest.json
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir --fallback=false -o %t/nofallback
// RUN: FileCheck %s --check-prefix=NOFALLBACK < %t/nofallback/manifest.json
// RUN: FileCheck %s --check-prefix=PINGPONG < %t/ws/naive_attention.ptx
// RUN: FileCheck %s --check-prefix=SPLIT < %t/ws/naive_attention.ptx
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir --strategy=wgmma_ws --stages=3 -o %t/ring3
// RUN: FileCheck %s --check-prefix=PINGPONG < %t/ring3/naive_attention.ptx
// RUN: FileCheck %s --check-prefix=RING3 < %t/ring3/naive_attention.ptx
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/ring3/naive_attention.ptx -o %t/ring3.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir -o %t/persistent
// RUN: FileCheck %s --check-prefix=PERSISTENT < %t/persistent/naive_attention.ptx
// RUN: FileCheck %s --check-prefix=DRAW < %t/persistent/naive_attention.ptx
// RUN: FileCheck %s --check-prefix=PGRID < %t/persistent/manifest.json
// RUN: FileCheck %s --check-prefix=QBUF < %t/persistent/manifest.json
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/persistent/naive_attention.ptx -o %t/persistent.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// One computing warpgroup (64-row query tiles): its 256 threads each have
// the most a thread can hold, so nothing is moved by setmaxnreg (which
// ptxas refuses when it asks for more than it has, or less, on increase).
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir --strategy=wgmma_ws --block-q=64 -o %t/q64
// RUN: FileCheck %s --check-prefix=ONEGROUP --implicit-check-not=setmaxnreg < %t/q64/naive_attention.ptx
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/q64/naive_attention.ptx -o %t/q64.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: attnc-compile %attnc_src_root/examples/naive_attention.mlir --strategy=wgmma --stages=3 --overlap-pv=on -o %t/overlap
// RUN: %cuda_root/bin/ptxas -v -arch=sm_90a %t/overlap/naive_attention.ptx -o %t/overlap.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// The masked step tests each score's constant column offset against its
// row's bounds in 32 bits (an opaque i32: LLVM had moved every comparison
// back to 64 bits, two SASS instructions each); no 64-bit ordering
// comparison is left in the kernel.
// ROWTEST: .visible .entry naive_attention(
// ROWTEST: setp.gt.s32
// ROWTEST: ret;

// The kernel reads by TMA, so it gets a fallback of the same tiles for
// tensors TMA cannot address: mma.sync with element-wide global accesses.
// Under a causal mask the default is its persistent form (below).
// CONFIG: #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, overlap_pv, l2_group_mib = 32, fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned>>

// The fallback is a second kernel of the module, named in the first's
// contract and manifest entry; it takes the same tensors with element
// alignment only (the logsumexp's f32: 4), and no tensor maps.
// CONTRACT-LABEL: gpu.module @naive_attention_module
// CONTRACT-SAME: tensor<"q", bf16, [B, H, Sq, 128], input, align = 16, row_align = 16>
// The launch contract names the maps: one box of a tile's rows by 64
// columns, 128-byte swizzle, zeros past the sequence.
// CONTRACT-SAME: tensormap<"q.map", tensor = "q", box = [1, 1, 128, 64], swizzle = 128, oob_fill = zero>
// CONTRACT-SAME: tensormap<"k.map", tensor = "k", box = [1, 1, 128, 64], swizzle = 128, oob_fill = zero>
// O leaves through a map of a warpgroup's 64 rows.
// CONTRACT-SAME: tensormap<"o.map", tensor = "o", box = [1, 1, 64, 64], swizzle = 128, oob_fill = zero>
// The persistent form draws its tiles from a counter the runtime zeroes
// before each launch; the fallback takes it too (the same arguments).
// CONTRACT-SAME: workspace<"tile_counter", bytes = [4], zero_init>
// Causal, one kernel at every size (the unmasked forward's size variant
// without overlap_pv, up to 1024 keys, lost under a causal mask).
// CONTRACT-SAME: fallback = @naive_attention_fallback>
// CONTRACT-LABEL: gpu.module @naive_attention_fallback_module
// CONTRACT-SAME: kernel = @naive_attention_fallback
// CONTRACT-SAME: tensor<"q", bf16, [B, H, Sq, 128], input, align = 2, row_align = 2>
// CONTRACT-SAME: tensor<"lse", f32, [B, H, Sq], output, align = 4>
// CONTRACT-NOT: tensormap<
// CONTRACT-SAME: workspace<"tile_counter", bytes = [4], zero_init>
// CONTRACT-SAME: strategy = "mma_sync_unaligned"
// CONTRACT-NOT: gpu.module @naive_attention_v0_module
// MANIFEST: "fallback": "naive_attention_fallback",
// MANIFEST: "name": "naive_attention",
// MANIFEST: "name": "naive_attention_fallback",
// MANIFEST-NOT: "fallback"
// MANIFEST-NOT: naive_attention_v0
// NOFALLBACK-NOT: fallback
// Element loads of Q/K/V and element stores of O; no cp.async, no TMA.
// FALLBACK-NOT: cp.async
// FALLBACK: ld.global.b16
// FALLBACK: st.shared.b16
// FALLBACK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// FALLBACK: st.global.b16

// With 3 stages the two consumer warpgroups take turns issuing their MMAs
// (named barriers 2 + w): the last hands the first its first turn, then each
// step waits for its turn, issues S and the pending P V, hands the turn on.
// PINGPONG: setmaxnreg.inc.sync.aligned.u32
// PINGPONG: bar.arrive
// PINGPONG: mbarrier.try_wait.parity
// PINGPONG: bar.sync {{[[:space:]]*}}{{%r[0-9]+}}, 256;
// PINGPONG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 0,  0;
// PINGPONG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// PINGPONG: wgmma.commit_group.sync.aligned
// PINGPONG: bar.arrive {{%r[0-9]+}}, {{%r[0-9]+}};
// PINGPONG: wgmma.wait_group.sync.aligned {{[[:space:]]*}}1;
// RING3-NOT: mul.hi.u64
// RING3: mul.hi.u32 {{.*}}, -1431655765;
// RING3-NOT: mul.hi.u64

// The default at d = 128 overlaps P V with 2 stages: K and V of a slot have
// a full and an empty barrier each (after the 163840 bytes of tiles: K's
// full, K's empty, V's full, V's empty, two slots each, then the query
// tile's). The producer fills K (32768 bytes) on K's barrier, waits for V's empty one,
// then fills V on V's. A step waits for its K and the previous step's V,
// releases K once S is done (wait_group 1) and the previous V once P V is.
// SPLIT-DAG: mbarrier.init.shared.b64 {{[^;]*}}+163840], {{[^;]*}};
// SPLIT-DAG: mbarrier.init.shared.b64 {{[^;]*}}+163856], {{[^;]*}};
// SPLIT-DAG: mbarrier.init.shared.b64 {{[^;]*}}+163872], {{[^;]*}};
// SPLIT-DAG: mbarrier.init.shared.b64 {{[^;]*}}+163888], {{[^;]*}};
// SPLIT-DAG: mbarrier.init.shared.b64 {{[^;]*}}+163896], {{[^;]*}};
// SPLIT-DAG: mbarrier.init.shared.b64 {{[^;]*}}+163904], {{[^;]*}};
// SPLIT: fence.mbarrier_init
// SPLIT: setmaxnreg.dec.sync.aligned.u32
// SPLIT: mbarrier.try_wait.parity
// SPLIT: mbarrier.arrive.expect_tx.shared.b64
// SPLIT: cp.async.bulk.tensor.4d.shared::cta.global
// SPLIT: cp.async.bulk.tensor.4d.shared::cta.global
// SPLIT: mbarrier.try_wait.parity
// SPLIT: mbarrier.arrive.expect_tx.shared.b64
// SPLIT: cp.async.bulk.tensor.4d.shared::cta.global
// SPLIT: cp.async.bulk.tensor.4d.shared::cta.global
// SPLIT: setmaxnreg.inc.sync.aligned.u32
// SPLIT: mbarrier.try_wait.parity
// SPLIT: mbarrier.try_wait.parity
// SPLIT: bar.sync
// SPLIT: wgmma.wait_group.sync.aligned {{[[:space:]]*}}1;
// SPLIT: mbarrier.arrive.shared.b64
// SPLIT: wgmma.wait_group.sync.aligned {{[[:space:]]*}}0;
// SPLIT: mbarrier.arrive.shared.b64

// With P V overlapped, a step issues its S with the previous step's P V;
// a tile's first step has none and is peeled: on its turn a warpgroup
// issues S alone (no P V of zero probabilities), waits for it, and the
// loop's steps issue S with the pending P V.
// PEEL: setmaxnreg.inc.sync.aligned.u32
// PEEL: bar.sync {{[[:space:]]*}}{{%r[0-9]+}}, 256;
// PEEL-NOT: p, 1, 1, 1;
// PEEL: wgmma.commit_group.sync.aligned
// PEEL-NOT: p, 1, 1, 1;
// PEEL: wgmma.wait_group.sync.aligned {{[[:space:]]*}}0;
// PEEL: bar.sync {{[[:space:]]*}}{{%r[0-9]+}}, 256;
// PEEL: p, 1,  1, 0,  0;
// PEEL: wgmma.commit_group.sync.aligned
// PEEL-NOT: bar.sync
// acc takes the previous step's rescale between S's issue and P V's (it is
// no MMA's operand then), not after the wait for P V (FlashAttention-3's
// order), behind a fence for the P V that reads it. A warp whose rows all
// kept their max (factors exactly 1: the lazy rescale) branches past it.
// PEEL: setp.neu.f32 {{.*}}, 0f3F800000;
// PEEL: vote.sync.any.pred
// PEEL-NEXT: not.pred
// PEEL-NEXT: @{{%p[0-9]+}} bra
// PEEL-NEXT: mul.rn.f32
// PEEL-NOT: bar.sync
// PEEL: wgmma.fence.sync.aligned
// PEEL-NOT: mul.rn.f32
// PEEL: p, 1, 1, 1;
// PEEL: wgmma.commit_group.sync.aligned
// PEEL: wgmma.wait_group.sync.aligned {{[[:space:]]*}}1;
// In the PTX the step's probabilities are rounded into the registers P V
// reads only once the previous P V was waited for (rounded as they came,
// LLVM carried copies of the pairs through the loop: 34 more SASS
// instructions per step and ptxas spills).
// PEEL: ex2.approx
// PEEL-NOT: cvt.rn.bf16x2.f32
// PEEL: wgmma.wait_group.sync.aligned {{[[:space:]]*}}0;
// PEEL: cvt.rn.bf16x2.f32

// Neither the consumers in 232 registers nor the producer in 40 spill
// (24 for the producer spilled its persistent walk of the causal grid).
// PTXAS-NOT: C7513
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Used {{[0-9]+}} registers

// CHECK: gpu.binary @naive_attention_module
// The maps of q, k and v: 128-byte by-value parameters in the parameter
// space, whose generic addresses the TMA instructions take.
// CHECK-SAME: .param .align 64 .b8 naive_attention_param_22[128]
// CHECK-SAME: .param .align 64 .b8 naive_attention_param_24[128]
// CHECK-SAME: .maxntid 384, 1, 1
// CHECK-SAME: cvta.param.u64
// One thread sets up the barriers (a full and an empty one per slot, then
// the query tile's, after the tiles: 163840 bytes at d = 128), then the
// CTA barrier publishes them.
// CHECK-SAME: mbarrier.init.shared.b64 {{[^;]*}}+163840], {{[^;]*}};
// CHECK-SAME: mbarrier.init.shared.b64 {{[^;]*}}+163864], {{[^;]*}};
// CHECK-SAME: mbarrier.init.shared.b64 {{[^;]*}}+163872], {{[^;]*}};
// CHECK-SAME: fence.mbarrier_init.release.cluster
// CHECK-SAME: {{bar.sync[^;,]*0;}}
// Producer: fewer registers; its issuing thread waits for a free slot,
// arrives expecting the bytes, and issues K's and V's two 64-column boxes.
// CHECK-SAME: {{setmaxnreg.dec.sync.aligned.u32[^;]*40;}}
// CHECK-SAME: mbarrier.try_wait.parity
// CHECK-SAME: mbarrier.arrive.expect_tx.shared.b64
// CHECK-SAME: cp.async.bulk.tensor.4d.shared::cta.global.tile.mbarrier::complete_tx::bytes
// CHECK-SAME: cp.async.bulk.tensor.4d.shared::cta.global.tile.mbarrier::complete_tx::bytes
// CHECK-SAME: cp.async.bulk.tensor.4d.shared::cta.global.tile.mbarrier::complete_tx::bytes
// CHECK-SAME: cp.async.bulk.tensor.4d.shared::cta.global.tile.mbarrier::complete_tx::bytes
// Consumers: more registers, Q by TMA on its own barrier, then per step
// wait for the slot, MMAs, release.
// CHECK-SAME: {{setmaxnreg.inc.sync.aligned.u32[^;]*232;}}
// CHECK-SAME: mbarrier.arrive.expect_tx.shared.b64 {{[^;]*}}+163872], {{[^;]*}};
// CHECK-SAME: cp.async.bulk.tensor.4d
// CHECK-SAME: mbarrier.try_wait.parity
// CHECK-SAME: mbarrier.try_wait.parity
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-SAME: mbarrier.arrive.shared.b64
// The epilogue: each warpgroup writes its rows of O into the query tile's
// shared memory, fences them into the async proxy, meets at its own named
// barrier (8 + w, 128 threads), and one thread per warpgroup stores the
// rows by TMA (two 64-column boxes at d = 128) and waits until they are
// read.
// CHECK-SAME: fence.proxy.async.shared::cta
// CHECK-SAME: bar.sync {{[^;]*}}, 128;
// CHECK-SAME: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group
// CHECK-SAME: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group
// CHECK-SAME: cp.async.bulk.commit_group
// CHECK-SAME: {{cp.async.bulk.wait_group.read[^;]*0;}}
// No generic-proxy writes of tiles are left to fence.
// CHECK-NOT: cp.async.cg.shared.global

// The persistent form, the default under a causal mask: one CTA per SM;
// its first tile is its index, the next ones the producer's issuing thread
// draws from the counter (#CTAs + an atomic add) once it issued a tile's
// loads, and hands to the consumers through a two-slot ring in shared
// memory (a full barrier it arrives on after the store, an empty one every
// consumer arrives on after the load). It holds two query tiles: the
// producer loads tile i's into buffer i mod 2 (the first at the base, the
// second after O's staging buffer) as soon as it has drawn the tile and
// every consumer released tile i - 2's (each buffer a full barrier of one
// arrival and an empty one of every consumer thread), so no tile waits
// for its query. O is staged for its TMA store in a buffer of its own
// after the ring (32 KB at d = 128); with the second query buffer the
// barriers start at 229376 (the ring's eight: K and V apart, overlapped;
// the query buffers' full ones, then their empty ones; then the tile
// ring's four).
// The manifest tells the cost model that the query is loaded ahead.
// QBUF: "attrs": {
// QBUF: "query_buffers": 2,
// QBUF: "strategy": "wgmma_ws_persistent"
// PGRID: "grid": [
// PGRID-NEXT: [
// PGRID-NEXT: {
// PGRID-NEXT: "device": "num_sms"
// PGRID: "kind": "workspace",
// PGRID-NEXT: "name": "tile_counter",
// PGRID-NEXT: "zero_init": true
// PERSISTENT: mbarrier.init.shared.b64 {{[^;]*}}+229440], [[ONE:%r[0-9]+]];
// PERSISTENT-NEXT: mbarrier.init.shared.b64 {{[^;]*}}+229456], [[ALL:%r[0-9]+]];
// PERSISTENT-NEXT: mbarrier.init.shared.b64 {{[^;]*}}+229448], [[ONE]];
// PERSISTENT-NEXT: mbarrier.init.shared.b64 {{[^;]*}}+229464], [[ALL]];
// PERSISTENT-NEXT: mbarrier.init.shared.b64 {{[^;]*}}+229472], [[ONE]];
// PERSISTENT-NEXT: mbarrier.init.shared.b64 {{[^;]*}}+229488], [[ALL]];
// PERSISTENT-NEXT: mbarrier.init.shared.b64 {{[^;]*}}+229480], [[ONE]];
// PERSISTENT-NEXT: mbarrier.init.shared.b64 {{[^;]*}}+229496], [[ALL]];
// PERSISTENT: mov.u32 {{%r[0-9]+}}, %ctaid.x;
// PERSISTENT: setmaxnreg.dec.sync.aligned.u32 {{[[:space:]]*}}40;
// The first tile's query, into buffer 0 on its full barrier.
// PERSISTENT: mbarrier.arrive.expect_tx.shared.b64 {{[^;]*}}+229440]
// PERSISTENT: cp.async.bulk.tensor.4d.shared::cta.global{{[^[]*}}[[[SMEM:%rd[0-9]+]]], {{.*}}, [[[SMEM]]+229440];
// After a tile's K/V loads: the draw, its publication, and the drawn
// tile's query once its buffer is free (at 0 or 196608: an and of the
// buffer's parity mask).
// PERSISTENT: atom.global.add.u32
// PERSISTENT: st.shared.b32
// PERSISTENT-NOT: mbarrier.try_wait
// PERSISTENT: mbarrier.arrive.shared.b64
// PERSISTENT: mbarrier.try_wait.parity.shared.b64
// PERSISTENT: mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [[[QFULL:%rd[0-9]+\+229440]]]
// PERSISTENT: and.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 196608;
// PERSISTENT: cp.async.bulk.tensor.4d.shared::cta.global{{.*}}, [[[QFULL]]];
// PERSISTENT: setmaxnreg.inc.sync.aligned.u32 {{[[:space:]]*}}232;
// PERSISTENT: wgmma.mma_async
// The consumers never meet to hand the query over (named barrier 1); each
// releases the tile's buffer on its empty barrier, then takes the next
// tile.
// PERSISTENT-NOT: bar.sync {{[[:space:]]*}}1, 256;
// PERSISTENT: mbarrier.arrive.shared.b64
// PERSISTENT-NOT: bar.sync {{[[:space:]]*}}1, 256;
// PERSISTENT: mbarrier.try_wait.parity.shared.b64
// PERSISTENT: ld.shared.b32
// PERSISTENT-NOT: mbarrier.try_wait
// PERSISTENT: mbarrier.arrive.shared.b64
// PERSISTENT-NOT: cp.async.bulk.tensor.4d.shared::cta.global
// PERSISTENT: bar.sync {{[[:space:]]*}}{{%r[0-9]+}}, 128;
// PERSISTENT: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group
// The producer's draw: the atomic add, the wait for the slot's empty
// barrier, the store and the arrival on its full one (the causal kernel's
// and the unmasked one's: every persistent forward draws its tiles).
// DRAW: atom.global.add.u32
// DRAW: mbarrier.try_wait.parity.shared.b64
// DRAW: st.shared.b32
// DRAW-NOT: mbarrier.try_wait
// DRAW: mbarrier.arrive.shared.b64

// ONEGROUP: .maxntid 256, 1, 1
// ONEGROUP: wgmma.mma_async
