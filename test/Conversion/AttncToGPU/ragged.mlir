// A ragged (varlen) batch: attnc.ragged_view Q, K, V and attnc.ragged_pack
// of the result fold into a flash form over the packed rows. Each tile
// starts at its sequence's first row (starts[b]) plus its position; the
// tiles of a sequence stop at its rows; O [T, H, dv] and the logsumexp
// [T, H] are written packed. The kernel reads starts and ends once per
// block. On sm_90a the loads are wgmma's cp.async ones (rows past a
// sequence zero-filled, as mma_sync's; tensor maps would read past it), on
// a chip without warpgroup MMAs mma_sync's.
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=64 block-kv=64" -mlir-print-local-scope | FileCheck %s --check-prefix=FORM
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: attnc-opt %s -split-input-file --attnc-pipeline | FileCheck %s --check-prefix=NVVM
// RUN: attnc-opt %s -split-input-file --attnc-pipeline="to-nvvm=false" | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-pipeline="split-kv=8 to-nvvm=false" | FileCheck %s --check-prefix=SPLIT

// FORM-LABEL: func.func @varlen
// FORM-NOT: attnc.ragged
// FORM: scf.forall (%[[B:[a-z0-9_]+]], %[[H:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in ({{.+}}) shared_outs({{.+}}) -> (tensor<?x16x128xbf16>, tensor<?x16xf32>)
// FORM: %[[S:.+]] = tensor.extract %{{.+}}[%[[B]]] : tensor<?xi32>
// FORM: %[[S0:.+]] = arith.index_castui %[[S]] : i32 to index
// FORM: %[[E:.+]] = tensor.extract %{{.+}}[%[[B]]] : tensor<?xi32>
// FORM: %[[ROW:.+]] = arith.addi %[[S0]], %{{.+}} : index
// FORM: tensor.extract_slice %{{.+}}[%[[ROW]], %[[H]], 0] [%[[ROWS:[a-z0-9_]+]], 1, 128] [1, 1, 1] : tensor<?x16x128xbf16> to tensor<?x128xbf16>
// FORM: scf.for
// FORM: %[[KROW:.+]] = arith.addi %[[S0]], %{{.+}} : index
// FORM: tensor.extract_slice %{{.+}}[%[[KROW]], %[[H]], 0]
// FORM: attnc.online_attention
// FORM: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[OUT:[a-z0-9_]+]], %[[H]], 0] [%[[ROWS]], 1, 128] [1, 1, 1] : tensor<?x128xbf16> into tensor<?x16x128xbf16>
// FORM: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[OUT]], %[[H]]] [%[[ROWS]], 1] [1, 1] : tensor<?xf32> into tensor<?x16xf32>
// The kernel's tensors are the packed ones; the grid counts the
// sequences' query tiles one after another, at most ceil(T / 128) + B of
// them (each sequence ends in at most one partial tile), on the query-tile
// axis, with no batch axis; no L2 groups (they count rows a ragged batch
// does not give).
// CHECK-LABEL: gpu.module @varlen_module
// CHECK-SAME: tensor<"q", bf16, [T, 16, 128], input
// CHECK-SAME: tensor<"k", bf16, [Tk, 16, 128], input
// CHECK-SAME: tensor<"q_starts", i32, [B], input, align = 4>, tensor<"q_ends", i32, [B], input, align = 4>
// CHECK-SAME: tensor<"o", bf16, [T, 16, 128], output
// CHECK-SAME: tensor<"lse", f32, [T, 16], output
// CHECK-SAME: grid = {{\[\[16\], \[ceil_div\(T, 128\) \+ B\], \[1\]\]}}
// CHECK-NOT: l2_group_mib
// CHECK-SAME: strategy = "wgmma"
// SM80-LABEL: func.func @varlen
// SM80: strategy = mma_sync
// Lowered to nvvm, cp.async row loads and warpgroup MMAs, no tensor map.
// Before them each warp finds the block's sequence: rounds of 128
// sequences' tile counts (4 a lane) scanned across the lanes, the lanes
// whose tiles start at or before the block's counted.
// NVVM-LABEL: gpu.module @varlen_module
// NVVM: nvvm.read.ptx.sreg.laneid
// More than one round: the warps count a group of rounds, one each (its
// total by redux.sync into a shared word, then the block's barrier).
// NVVM: nvvm.redux.sync  add
// NVVM: llvm.store {{.*}} !llvm.ptr<3>
// NVVM: nvvm.barrier0
// NVVM: llvm.load {{.*}} !llvm.ptr<3> -> i32
// NVVM-COUNT-5: nvvm.shfl.sync  up
// NVVM: nvvm.shfl.sync  idx
// NVVM: nvvm.redux.sync  add
// NVVM-NOT: cp.async.bulk.tensor
// NVVM: nvvm.cp.async.shared.global
// NVVM-NOT: cp.async.bulk.tensor
// NVVM: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// NVVM-NOT: cp.async.bulk.tensor
// NVVM-LABEL: gpu.module @cross_module
// A ragged batch is not split (its query tiles fill the device).
// SPLIT-LABEL: gpu.module @varlen_module
// SPLIT-SAME: kind = "attention"
func.func @varlen(%q: tensor<?x16x128xbf16>, %k: tensor<?x16x128xbf16>, %v: tensor<?x16x128xbf16>, %starts: tensor<?xi32>, %ends: tensor<?xi32>) -> tensor<?x16x128xbf16> {
  %qv = attnc.ragged_view %q, %starts, %ends : tensor<?x16x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x?x128xbf16>
  %kv = attnc.ragged_view %k, %starts, %ends : tensor<?x16x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x?x128xbf16>
  %vv = attnc.ragged_view %v, %starts, %ends : tensor<?x16x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x?x128xbf16>
  %ov = attnc.attention %qv, %kv, %vv {scale = 0.08838834764831845 : f64}
      : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  %o = attnc.ragged_pack %ov, %starts, %ends : tensor<?x16x?x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// Cross attention of one packed batch over another (other sequences for
// K/V, GQA): K/V's starts and ends are parameters of their own.
// CHECK-LABEL: gpu.module @cross_module
// CHECK-SAME: tensor<"q", bf16, [T, 32, 64], input
// CHECK-SAME: tensor<"k", bf16, [Tk, 8, 64], input
// CHECK-SAME: tensor<"q_starts", i32, [B], input, align = 4>, tensor<"q_ends", i32, [B], input, align = 4>, tensor<"kv_starts", i32, [B], input, align = 4>, tensor<"kv_ends", i32, [B], input, align = 4>
// CHECK-SAME: grid = {{\[\[ceil_div\(T, 128\) \+ B\], \[32\], \[1\]\]}}
// CHECK-SAME: strategy = "wgmma"
// SM80-LABEL: func.func @cross
// SM80: strategy = mma_sync
func.func @cross(%q: tensor<?x32x64xbf16>, %k: tensor<?x8x64xbf16>, %v: tensor<?x8x64xbf16>, %qs: tensor<?xi32>, %qe: tensor<?xi32>, %ks: tensor<?xi32>, %ke: tensor<?xi32>) -> tensor<?x32x64xbf16> {
  %qv = attnc.ragged_view %q, %qs, %qe : tensor<?x32x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x?x64xbf16>
  %kv = attnc.ragged_view %k, %ks, %ke : tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x?x64xbf16>
  %vv = attnc.ragged_view %v, %ks, %ke : tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x?x64xbf16>
  %ov = attnc.attention %qv, %kv, %vv {scale = 0.125 : f64}
      : tensor<?x32x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x32x?x64xbf16>
  %o = attnc.ragged_pack %ov, %qs, %qe : tensor<?x32x?x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x64xbf16>
  return %o : tensor<?x32x64xbf16>
}

// -----

// A static batch with dynamic rows: no factor adds a constant to ceil(T /
// 128), so the grid stays the forall's, every sequence given ceil(T / 128)
// tiles (blocks past a sequence's rows leave at once).
// CHECK-LABEL: gpu.module @static_batch_module
// CHECK-SAME: grid = {{\[\[ceil_div\(T, 128\)\], \[8\], \[4\]\]}}
func.func @static_batch(%q: tensor<?x8x64xbf16>, %s: tensor<4xi32>, %e: tensor<4xi32>) -> tensor<?x8x64xbf16> {
  %qv = attnc.ragged_view %q, %s, %e : tensor<?x8x64xbf16>, tensor<4xi32>, tensor<4xi32> -> tensor<4x8x?x64xbf16>
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.125 : f64}
      : tensor<4x8x?x64xbf16>, tensor<4x8x?x64xbf16>, tensor<4x8x?x64xbf16> -> tensor<4x8x?x64xbf16>
  %o = attnc.ragged_pack %ov, %s, %e : tensor<4x8x?x64xbf16>, tensor<4xi32>, tensor<4xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}
