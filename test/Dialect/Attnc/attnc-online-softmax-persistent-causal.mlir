// Under a causal mask sm_90a's default is the persistent grid whose CTAs
// draw their longest-first tiles from a counter (wgmma_ws_persistent, L2
// head groups of 32 MiB at every head dimension), when no strategy was
// asked for, the tiles are not bounded by ids (document masks) and there
// is no dropout; those keep one tile per
// block (wgmma_ws). A region's per-head slope is read per work tile. A
// strategy option is taken as given.
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax=strategy=wgmma_ws | FileCheck %s --check-prefix=ASKED

// CHECK-LABEL: func.func @causal
// CHECK: strategy = wgmma_ws_persistent, overlap_pv, l2_group_mib = 32, fallback
// ASKED-LABEL: func.func @causal
// ASKED: strategy = wgmma_ws, overlap_pv, l2_group_mib = 32, fallback
func.func @causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// d = 64: the same grid, with groups too (one block per tile has none).
// CHECK-LABEL: func.func @causal_d64
// CHECK: strategy = wgmma_ws_persistent, l2_group_mib = 32, fallback
// ASKED-LABEL: func.func @causal_d64
// ASKED-NOT: l2_group_mib
// ASKED: strategy = wgmma_ws, fallback
func.func @causal_d64(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A score modifier that reads no tensor (a softcap) keeps the default.
// CHECK-LABEL: func.func @causal_softcap
// CHECK: strategy = wgmma_ws_persistent
func.func @causal_softcap(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %r = arith.mulf %t, %cap : f32
        attnc.yield %r : f32
      }
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// A per-head slope read from a tensor (once per work tile): persistent.
// CHECK-LABEL: func.func @causal_slopes
// CHECK: strategy = wgmma_ws_persistent,
func.func @causal_slopes(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %slopes: tensor<?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %m = tensor.extract %slopes[%h] : tensor<?xf32>
        %r = arith.subf %s, %m : f32
        attnc.yield %r : f32
      }
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Dropout: one tile per block.
// CHECK-LABEL: func.func @causal_dropout
// CHECK: strategy = wgmma_ws,
func.func @causal_dropout(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %seed: i64, %offset: i64) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v dropout(%seed, %offset) {dropout_probability = 0.1 : f64, scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Documents under a window of 1024 keys: a constant-span window alone takes
// the persistent grid, but tile bounds from ids keep one tile per block
// where no bound grows with the query (the target's persistent choice for
// windows is not theirs).
// CHECK-LABEL: func.func @window_documents
// CHECK: attnc.id_tile_bounds
// CHECK: strategy = wgmma_ws,
func.func @window_documents(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %dq: tensor<?x?xi32>, %dk: tensor<?x?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %w = arith.constant 1024 : index
        %d = arith.subi %i, %j : index
        %near = arith.cmpi slt, %d, %w : index
        %causal = arith.cmpi sle, %j, %i : index
        %x = tensor.extract %dq[%b, %i] : tensor<?x?xi32>
        %y = tensor.extract %dk[%b, %j] : tensor<?x?xi32>
        %same = arith.cmpi eq, %x, %y : i32
        %band = arith.andi %causal, %near : i1
        %keep = arith.andi %band, %same : i1
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Documents under a causal mask: the diagonal bounds each query tile's keys
// from above by a bound that grows with the query, so the grid runs
// longest first and takes the persistent grid, as causal does (the
// producer's spare warps compute each drawn tile's id bounds); one tile
// per block when wgmma_ws is asked for.
// CHECK-LABEL: func.func @documents_causal
// CHECK: attnc.id_tile_bounds
// CHECK: strategy = wgmma_ws_persistent
// CHECK-SAME: mapping = [#gpu.block<z>, #gpu.block<x>, #gpu.block<y>]
// ASKED-LABEL: func.func @documents_causal
// ASKED: strategy = wgmma_ws,
func.func @documents_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %dq: tensor<?x?xi64>, %dk: tensor<?x?xi64>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %causal = arith.cmpi sle, %j, %i : index
        %x = tensor.extract %dq[%b, %i] : tensor<?x?xi64>
        %y = tensor.extract %dk[%b, %j] : tensor<?x?xi64>
        %same = arith.cmpi eq, %x, %y : i64
        %keep = arith.andi %causal, %same : i1
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x128xbf16>
}
