// RUN: attnc-opt %s -split-input-file --attnc-online-softmax --canonicalize --cse | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=size-variants=false --canonicalize --cse | FileCheck %s --check-prefix=ONE
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=block-q=64 --canonicalize --cse | FileCheck %s --check-prefix=ONE
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=strategy=mma_sync --canonicalize --cse | FileCheck %s --check-prefix=ONE

// A ragged batch at d = 128 (wgmma, cp.async loads per sequence): 64 x 64
// tiles while the mean length is at most 1024 rows, T <= 1024 * B with T
// the packed rows and B the length of the view's starts; the 128 x 128
// kernel otherwise. Each region holds its flash form, which writes the
// packed rows (the ragged_pack went in with it), and yields them.
// CHECK-LABEL: func.func @ragged
// CHECK-SAME: (%[[Q:.*]]: tensor<?x16x128xbf16>, %[[STARTS:.*]]: tensor<?xi32>, %{{.*}}: tensor<?xi32>)
// CHECK-NOT: attnc.ragged_view
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[Q]], %c0
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[STARTS]], %c0
// CHECK: %[[LIMIT:.*]] = arith.muli %[[B]], %c1024 : index
// CHECK: %[[SHORT:.*]] = arith.cmpi sle, %[[T]], %[[LIMIT]] : index
// CHECK: %[[R:.*]] = scf.if %[[SHORT]] -> (tensor<?x16x128xbf16>)
// CHECK:   %[[A:.*]] = scf.forall
// CHECK:   } {attnc.flash_config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = wgmma>
// CHECK:   scf.yield %[[A]]
// CHECK: } else {
// CHECK:   %[[D:.*]] = scf.forall
// CHECK:   } {attnc.flash_config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma>
// CHECK:   scf.yield %[[D]]
// CHECK-NOT: attnc.ragged_pack
// CHECK: return %[[R]]
// Without size variants, with tiles given, or on mma_sync: one form.
// ONE-LABEL: func.func @ragged
// ONE-NOT: scf.if
// ONE: return
func.func @ragged(%q: tensor<?x16x128xbf16>, %starts: tensor<?xi32>, %ends: tensor<?xi32>)
    -> tensor<?x16x128xbf16> {
  %qv = attnc.ragged_view %q, %starts, %ends
      : tensor<?x16x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x?x128xbf16>
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.08838834764831843 : f64}
      : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  %o = attnc.ragged_pack %ov, %starts, %ends
      : tensor<?x16x?x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// Unmasked, the 64 x 64 tiles pay only up to a mean of 384 rows (a causal
// tile's masked half is most of what short tiles save).
// CHECK-LABEL: func.func @ragged_unmasked
// CHECK: %[[LIMIT:.*]] = arith.muli %{{.*}}, %c384 : index
// CHECK: scf.if
// CHECK:   block_q = 64, block_kv = 64
// CHECK: } else {
// CHECK:   block_q = 128, block_kv = 128
// ONE-LABEL: func.func @ragged_unmasked
// ONE-NOT: scf.if
// ONE: return
func.func @ragged_unmasked(%q: tensor<?x16x128xbf16>, %starts: tensor<?xi32>, %ends: tensor<?xi32>)
    -> tensor<?x16x128xbf16> {
  %qv = attnc.ragged_view %q, %starts, %ends
      : tensor<?x16x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x?x128xbf16>
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.08838834764831843 : f64}
      : tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16>, tensor<?x16x?x128xbf16> -> tensor<?x16x?x128xbf16>
  %o = attnc.ragged_pack %ov, %starts, %ends
      : tensor<?x16x?x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// A static batch picks its version at compile time: 4 sequences in 2000
// rows (mean 500) take the 64 x 64 tiles under a causal mask.
// CHECK-LABEL: func.func @ragged_static
// CHECK-NOT: scf.if
// CHECK: block_q = 64, block_kv = 64
func.func @ragged_static(%q: tensor<2000x16x128xbf16>, %starts: tensor<4xi32>, %ends: tensor<4xi32>)
    -> tensor<2000x16x128xbf16> {
  %qv = attnc.ragged_view %q, %starts, %ends
      : tensor<2000x16x128xbf16>, tensor<4xi32>, tensor<4xi32> -> tensor<4x16x2000x128xbf16>
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.08838834764831843 : f64}
      : tensor<4x16x2000x128xbf16>, tensor<4x16x2000x128xbf16>, tensor<4x16x2000x128xbf16> -> tensor<4x16x2000x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  %o = attnc.ragged_pack %ov, %starts, %ends
      : tensor<4x16x2000x128xbf16>, tensor<4xi32>, tensor<4xi32> -> tensor<2000x16x128xbf16>
  return %o : tensor<2000x16x128xbf16>
}

// -----

// At d = 64 a causal batch takes the same 64 x 64 version (its default is
// 128 x 64); unmasked, it keeps one (no measurement says otherwise).
// CHECK-LABEL: func.func @ragged_d64
// CHECK: %[[LIMIT:.*]] = arith.muli %{{.*}}, %c1024 : index
// CHECK: scf.if
// CHECK:   block_q = 64, block_kv = 64
// CHECK: } else {
// CHECK:   block_q = 128, block_kv = 64
// CHECK-LABEL: func.func @ragged_d64_unmasked
// CHECK-NOT: scf.if
// CHECK: block_q = 128, block_kv = 64
// CHECK: return
func.func @ragged_d64(%q: tensor<?x16x64xbf16>, %starts: tensor<?xi32>, %ends: tensor<?xi32>)
    -> tensor<?x16x64xbf16> {
  %qv = attnc.ragged_view %q, %starts, %ends
      : tensor<?x16x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x?x64xbf16>
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.125 : f64}
      : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  %o = attnc.ragged_pack %ov, %starts, %ends
      : tensor<?x16x?x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x64xbf16>
  return %o : tensor<?x16x64xbf16>
}
func.func @ragged_d64_unmasked(%q: tensor<?x16x64xbf16>, %starts: tensor<?xi32>, %ends: tensor<?xi32>)
    -> tensor<?x16x64xbf16> {
  %qv = attnc.ragged_view %q, %starts, %ends
      : tensor<?x16x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x?x64xbf16>
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.125 : f64}
      : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>
  %o = attnc.ragged_pack %ov, %starts, %ends
      : tensor<?x16x?x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x64xbf16>
  return %o : tensor<?x16x64xbf16>
}
