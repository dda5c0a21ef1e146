// RUN: attnc-opt %s -split-input-file --attnc-pack-gqa --attnc-online-softmax="block-q=16 block-kv=64 strategy=mma_sync" --attnc-split-kv -mlir-print-local-scope | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=16 block-kv=64 strategy=mma_sync" --attnc-split-kv="max-splits=8 ctas-per-sm=4" | FileCheck %s --check-prefix=OPTS
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=16 block-kv=64 strategy=mma_sync" --attnc-split-kv --attnc-verify-no-global-scores | FileCheck %s --check-prefix=NOSS
// RUN: not attnc-opt %s -split-input-file --attnc-split-kv="max-splits=200" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=16 block-kv=64 strategy=mma_sync" --attnc-split-kv="unsplit=false" | FileCheck %s --check-prefix=NOTWIN
// Nested on each function the pass cannot add one to the module: no twin.
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=16 block-kv=64 strategy=mma_sync" | attnc-opt -split-input-file --pass-pipeline="builtin.module(func.func(attnc-split-kv))" | FileCheck %s --check-prefix=NOTWIN

// BAD: error: --attnc-split-kv needs 1 <= max-splits <= 128, ctas-per-sm >= 0 and combine-rows >= 1; got max-splits=200, ctas-per-sm=0, combine-rows=16
// OPTS: attnc.kv_split_count %{{.+}}, %{{.+}} {ctas_per_sm = 4 : i64, max_splits = 8 : i64}
// The partials grow as the rows they hold: the no-S x S check passes.
// NOSS-LABEL: func.func @decode

// Non-causal decode: splits = kv_split_count(B * H * query tiles, K/V
// tiles), per = ceildiv(tiles, splits); the partial form runs the query
// tile qt = t / splits of split s = t mod splits over K/V tiles clamped to
// [s * per, (s + 1) * per) and writes f32 partials at [s, b, h, q0]; the
// combine form merges the splits of each 16-row tile and writes O.
// CHECK-LABEL: func.func @decode
// CHECK-DAG: %[[B:.+]] = tensor.dim %{{.+}}, %c0
// CHECK-DAG: %[[H:.+]] = tensor.dim %{{.+}}, %c1
// CHECK-DAG: %[[NQ:.+]] = affine.apply affine_map<()[s0] -> (s0 ceildiv 16)>
// CHECK-DAG: %[[TILES:.+]] = affine.apply affine_map<()[s0] -> (s0 ceildiv 64)>
// CHECK: %[[BH:.+]] = arith.muli %[[B]], %[[H]] : index
// CHECK: %[[CTAS:.+]] = arith.muli %[[BH]], %[[NQ]] : index
// Two blocks per SM in the rule: three of 74 KiB fit, but two keep the
// target's 64 KiB of K/V loads in flight (one 32 KiB K/V pair each).
// CHECK: %[[SPLITS:.+]] = attnc.kv_split_count %[[CTAS]], %[[TILES2:.+]] {ctas_per_sm = 2 : i64, max_splits = 128 : i64}
// CHECK: %[[PER:.+]] = arith.ceildivui %[[TILES2]], %[[SPLITS]] : index
// CHECK: %[[OP0:.+]] = tensor.empty(%[[SPLITS]], %{{.+}}, %{{.+}}, %{{.+}}) : tensor<?x?x?x?x128xf32>
// CHECK: %[[LP0:.+]] = tensor.empty(%[[SPLITS]], %{{.+}}, %{{.+}}, %{{.+}}) : tensor<?x?x?x?xf32>
// CHECK: %[[X:.+]] = arith.muli %[[NQ]], %[[SPLITS]] : index
// CHECK: %[[PART:.+]]:2 = scf.forall (%[[BI:.+]], %[[HI:.+]], %[[T:.+]]) in (%{{.+}}, %{{.+}}, %[[X]]) shared_outs(%[[PO:.+]] = %[[OP0]], %[[PL:.+]] = %[[LP0]])
// CHECK: %[[QT:.+]] = arith.divui %[[T]], %[[SPLITS]] : index
// CHECK: %[[S:.+]] = arith.remui %[[T]], %[[SPLITS]] : index
// CHECK: %[[LO:.+]] = arith.muli %[[S]], %[[PER]] : index
// CHECK: %[[HIGH:.+]] = arith.addi %[[LO]], %[[PER]] : index
// CHECK: %[[Q0:.+]] = affine.apply affine_map<(d0) -> (d0 * 16)>(%[[QT]])
// CHECK: %[[L1:.+]] = arith.maxui %{{.+}}, %[[LO]] : index
// CHECK: %[[LB:.+]] = arith.minui %[[L1]], %[[HIGH]] : index
// CHECK: %[[U1:.+]] = arith.maxui %{{.+}}, %[[LO]] : index
// CHECK: %[[UB:.+]] = arith.minui %[[U1]], %[[HIGH]] : index
// CHECK: scf.for %{{.+}} = %[[LB]] to %[[UB]] step
// CHECK: attnc.online_attention
// CHECK: %[[OS:.+]], %[[LS:.+]] = attnc.online_attention_finalize {{.+}} -> tensor<?x128xf32>, tensor<?xf32>
// CHECK: tensor.parallel_insert_slice %[[OS]] into %[[PO]][%[[S]], %[[BI]], %[[HI]], %[[Q0]], 0] [1, 1, 1, %{{.+}}, 128] [1, 1, 1, 1, 1]
// CHECK: tensor.parallel_insert_slice %[[LS]] into %[[PL]][%[[S]], %[[BI]], %[[HI]], %[[Q0]]] [1, 1, 1, %{{.+}}] [1, 1, 1, 1]
// CHECK: attnc.flash_config = #attnc.flash_config<block_q = 16, block_kv = 64, warps = 1, stages = 2, strategy = mma_sync>
// CHECK-SAME: attnc.unsplit = @decode_unsplit
// CHECK: %[[COMB:[0-9]+]]:2 = scf.forall (%[[CB:.+]], %[[CH:.+]], %[[CT:.+]]) in
// CHECK: %[[R0:.+]] = affine.apply affine_map<(d0) -> (d0 * 16)>(%[[CT]])
// CHECK: scf.for %[[SI:.+]] = %{{.+}} to %[[SPLITS]] step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}, %[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}})
// CHECK: %[[LSE_S:.+]] = tensor.extract_slice %[[PART]]#1[%[[SI]], %[[CB]], %[[CH]], %[[R0]]]
// CHECK: %[[O_S:.+]] = tensor.extract_slice %[[PART]]#0[%[[SI]], %[[CB]], %[[CH]], %[[R0]], 0]
// CHECK: attnc.online_attention_merge %[[ACC]], %[[M]], %[[L]], %[[O_S]], %[[LSE_S]]
// CHECK: attnc.online_attention_finalize {{.+}} -> tensor<?x128xbf16>, tensor<?xf32>
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: attnc.flash_config
// CHECK: return %[[COMB]]#0
// The unsplit twin, placed after the function: the form as it was before
// the rewrite (one forall over (b, h, query tile), no split count, no
// partials), run by a host when the split rule gives one split.
// CHECK-LABEL: func.func @decode_unsplit(
// CHECK-NOT: attnc.kv_split_count
// CHECK-NOT: ?x?x?x?x128xf32
// CHECK: %[[ONE:.+]]:2 = scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}}, %{{.+}}, %{{.+}}) shared_outs
// CHECK: attnc.online_attention_finalize {{.+}} -> tensor<?x128xbf16>, tensor<?xf32>
// CHECK: attnc.flash_config
// CHECK-NOT: attnc.unsplit
// CHECK: return %[[ONE]]#0
// NOTWIN-LABEL: func.func @decode(
// NOTWIN: attnc.kv_split_count
// NOTWIN-NOT: attnc.unsplit
// NOTWIN-NOT: func.func @decode_unsplit
// NOTWIN-LABEL: func.func @chunk(
func.func @decode(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Bottom-right causal (a chunk of new tokens against a cache): the
// unmasked and the masked loop share their boundary, so its clamp is one
// value and the loops stay chained.
// CHECK-LABEL: func.func @chunk
// CHECK: scf.forall
// CHECK: %[[LO:.+]] = arith.muli
// CHECK: %[[HIGH:.+]] = arith.addi %[[LO]]
// CHECK: %[[A:.+]] = arith.minui %{{.+}}, %[[HIGH]] : index
// CHECK: %[[MID:.+]] = arith.minui %{{.+}}, %[[HIGH]] : index
// CHECK: %[[FULL:.+]]:3 = scf.for %{{.+}} = %[[A]] to %[[MID]] step
// CHECK-NOT: mask
// CHECK: scf.yield
// CHECK: %[[END:.+]] = arith.minui %{{.+}}, %[[HIGH]] : index
// CHECK: scf.for %{{.+}} = %[[MID]] to %[[END]] step %{{.+}} iter_args(%{{.+}} = %[[FULL]]#0
// CHECK: attnc.online_attention {{.+}} mask {
func.func @chunk(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x128xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x?x?x128xbf16>
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %jj = arith.addi %j, %sq : index
        %ii = arith.addi %i, %skv : index
        %keep = arith.cmpi ule, %jj, %ii : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// A packed GQA form (--attnc-pack-gqa): the combine runs on unpacked views
// of the partials, [splits, B, 32, Sq(, 128)], and writes O [B, 32, Sq, 128]
// itself in place of the packed O's unpacking.
// CHECK-LABEL: func.func @packed
// CHECK: %[[PART:.+]]:2 = scf.forall {{.+}} -> (tensor<?x?x8x?x128xf32>, tensor<?x?x8x?xf32>)
// CHECK: %[[X0:.+]] = tensor.expand_shape %[[PART]]#0 {{\[}}[0], [1], [2], [3, 4], [5]]
// CHECK: %[[O32:.+]] = tensor.collapse_shape %[[X0]] {{.+}} into tensor<?x?x32x?x128xf32>
// CHECK: %[[X1:.+]] = tensor.expand_shape %[[PART]]#1 {{\[}}[0], [1], [2], [3, 4]]
// CHECK: %[[L32:.+]] = tensor.collapse_shape %[[X1]] {{.+}} into tensor<?x?x32x?xf32>
// CHECK: %[[C:.+]] = scf.forall {{.+}} -> (tensor<?x32x?x128xbf16>)
// CHECK: tensor.extract_slice %[[L32]]
// CHECK: tensor.extract_slice %[[O32]]
// CHECK: attnc.online_attention_merge
// CHECK: return %[[C]]
func.func @packed(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

// -----

// No twin where one kernel cannot stand for the function: two attention
// forms (four kernels once split), and a name whose twin's is taken.
// CHECK-LABEL: func.func @two
// CHECK-NOT: attnc.unsplit
// CHECK-NOT: func.func @two_unsplit
// CHECK-LABEL: func.func @taken(
// CHECK-NOT: attnc.unsplit
// CHECK-LABEL: func.func private @taken_unsplit
func.func @two(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  %a = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  %b = attnc.attention %q, %v, %k {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %a, %b : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}
func.func @taken(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
func.func private @taken_unsplit(tensor<?x?x?x128xbf16>)
