// --attnc-online-softmax's one-masked-loop (on by default): an interval
// mask bounded on both sides visits the masked tiles of both sides of its
// unmasked ones in one K/V loop, then the unmasked tiles (whole ones: static 64-row slices) in a
// second. Both loops count visits n and slice tile t(n), the same select of
// three index values; the second loop starts where the first ends.
// Without a lower bound on the keys (prefix-LM) there is no left side; a
// causal mask's unmasked tiles are made whole the same way.
// With one-masked-loop=false (OFF) the masked tiles of each side have a
// loop of their own, in key order, and tiles are not made whole.
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=128 block-kv=64 strategy=mma_sync" -mlir-print-local-scope | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=128 block-kv=64 strategy=mma_sync one-masked-loop=true" -mlir-print-local-scope | FileCheck %s
// RUN: attnc-opt %s -split-input-file --attnc-online-softmax="block-q=128 block-kv=64 strategy=mma_sync one-masked-loop=false" -mlir-print-local-scope | FileCheck %s --check-prefix=OFF

// A window of 1024 keys (keys [i - 1023, i]). FIRST, FULL, FULLEND and END
// are the bounds of attnc-online-softmax-masks.mlir; WHOLE stops the
// unmasked tiles at the last whole one (Skv floordiv 64); L = FULL - FIRST
// tiles are masked on the left, M = L + END - WHOLE in all, and END - FIRST
// are visited.
// CHECK-LABEL: func.func @window
// CHECK:     %[[FIRST:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 ceildiv 64)>
// CHECK:     %[[END:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 ceildiv 64)>
// CHECK:     %[[FULL:.*]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%{{.*}}, %[[END]])
// CHECK:     %[[FULLEND:.*]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%{{.*}}, %[[END]])
// CHECK:     %[[W0:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 floordiv 64)>(%[[FULLEND]])
// CHECK:     %[[WHOLE:.*]] = affine.max affine_map<(d0, d1) -> (d0, d1)>(%[[FULL]], %[[W0]])
// CHECK:     %[[L:.*]] = affine.apply affine_map<(d0, d1) -> (d0 - d1)>(%[[FULL]], %[[FIRST]])
// CHECK:     %[[M:.*]] = affine.apply affine_map<(d0, d1, d2, d3) -> (d0 - d1 + d2 - d3)>(%[[END]], %[[WHOLE]], %[[FULL]], %[[FIRST]])
// CHECK:     %[[T:.*]] = affine.apply affine_map<(d0, d1, d2, d3) -> (d2 - d3)>(%[[WHOLE]], %[[FULL]], %[[END]], %[[FIRST]])
// CHECK:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:     scf.for %[[N:.*]] = %[[C0]] to %[[M]]
// CHECK:       %[[ONR:.*]] = arith.cmpi ult, %[[N]], %[[M]]
// CHECK:       %[[PL:.*]] = arith.subi %[[N]], %[[L]]
// CHECK:       %[[RT:.*]] = arith.addi %[[WHOLE]], %[[PL]]
// CHECK:       %[[PM:.*]] = arith.subi %[[N]], %[[M]]
// CHECK:       %[[FT:.*]] = arith.addi %[[FULL]], %[[PM]]
// CHECK:       %[[NL:.*]] = arith.select %[[ONR]], %[[RT]], %[[FT]]
// CHECK:       %[[ONL:.*]] = arith.cmpi ult, %[[N]], %[[L]]
// CHECK:       %[[LT:.*]] = arith.addi %[[FIRST]], %[[N]]
// CHECK:       %[[TILE:.*]] = arith.select %[[ONL]], %[[LT]], %[[NL]]
// CHECK:       %[[K0:.*]] = affine.apply affine_map<(d0) -> (d0 * 64)>(%[[TILE]])
// CHECK:       %[[ROWS:.*]] = affine.min affine_map<(d0)[s0] -> (64, d0 * -64 + s0)>(%[[TILE]])
// CHECK:       tensor.extract_slice %arg1[%{{.*}}, %{{.*}}, %[[K0]], 0] [1, 1, %[[ROWS]], 64]
// CHECK:       attnc.online_attention {{.*}} at [%{{.*}}, %{{.*}}, %{{.*}}, %[[K0]]] {{.*}} mask {
// CHECK:     scf.for %[[N2:.*]] = %[[M]] to %[[T]]
// CHECK:       arith.select
// CHECK:       %[[TILE2:.*]] = arith.select
// CHECK:       %[[K2:.*]] = affine.apply affine_map<(d0) -> (d0 * 64)>(%[[TILE2]])
// CHECK:       tensor.extract_slice %arg1[%{{.*}}, %{{.*}}, %[[K2]], 0] [1, 1, 64, 64] {{.*}} to tensor<64x64xbf16>
// CHECK-NOT:   mask {
// CHECK:       attnc.online_attention
// CHECK:     attnc.online_attention_finalize
// OFF-LABEL: func.func @window
// OFF:       %[[FIRST:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 ceildiv 64)>
// OFF:       %[[END:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 ceildiv 64)>
// OFF:       %[[FULL:.*]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%{{.*}}, %[[END]])
// OFF:       %[[FULLEND:.*]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%{{.*}}, %[[END]])
// OFF-NOT:   arith.select
// OFF:       scf.for %{{.*}} = %[[FIRST]] to %[[FULL]]
// OFF:         attnc.online_attention {{.*}} mask {
// OFF:       scf.for %{{.*}} = %[[FULL]] to %[[FULLEND]]
// OFF-NOT:     mask {
// OFF:         attnc.online_attention {{.*}} : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>,
// OFF:       scf.for %{{.*}} = %[[FULLEND]] to %[[END]]
// OFF:         attnc.online_attention {{.*}} mask {
// OFF:       attnc.online_attention_finalize
func.func @window(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 1024 : index
    %d = arith.subi %i, %j : index
    %near = arith.cmpi slt, %d, %w : index
    %causal = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %causal, %near : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// Document ids with a causal conjunct: the bounds come from
// attnc.id_tile_bounds, then the same two loops.
// CHECK-LABEL: func.func @documents_causal
// CHECK:     attnc.id_tile_bounds
// CHECK:     scf.for %[[N:.*]] = %{{.*}} to %[[M:.*]] step
// CHECK:       %[[TILE:.*]] = arith.select
// CHECK:       attnc.online_attention {{.*}} mask {
// CHECK:     scf.for %{{.*}} = %[[M]] to
// CHECK:       tensor<64x64xbf16>
// CHECK-NOT:   mask {
// CHECK:       attnc.online_attention
// CHECK:     attnc.online_attention_finalize
func.func @documents_causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %dq: tensor<?x?xi64>, %dk: tensor<?x?xi64>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %dq[%b, %i] : tensor<?x?xi64>
        %y = tensor.extract %dk[%b, %j] : tensor<?x?xi64>
        %same = arith.cmpi eq, %x, %y : i64
        %c = arith.cmpi sle, %j, %i : index
        %keep = arith.andi %same, %c : i1
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Prefix-LM (keys < 1000 or causal): no lower bound on the keys, no tile
// masked on the left. As under a causal mask the tiles keep their order
// (no select): the unmasked ones from tile 0 up to the last whole one
// before the first row's last visible key (FULLEND' = max(0, min(FULLEND,
// Skv floordiv 64))), whole, then the masked ones.
// CHECK-LABEL: func.func @prefix
// CHECK:     %[[END:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 ceildiv 64)>
// CHECK:     %[[FULLEND:.*]] = affine.min affine_map<(d0, d1) -> (d0, d1)>(%{{.*}}, %[[END]])
// CHECK:     %[[W0:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 floordiv 64)>(%[[FULLEND]])
// CHECK:     %[[W:.*]] = affine.max affine_map<(d0) -> (0, d0)>(%[[W0]])
// CHECK-NOT: arith.select
// CHECK:     scf.for %{{.*}} = %c0{{.*}} to %[[W]] step
// CHECK:       tensor<64x64xbf16>
// CHECK-NOT:   mask {
// CHECK:       attnc.online_attention
// CHECK:     scf.for %{{.*}} = %[[W]] to %[[END]] step
// CHECK-NOT:   arith.select
// CHECK:       attnc.online_attention {{.*}} mask {
// CHECK:     attnc.online_attention_finalize
func.func @prefix(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %n = arith.constant 1000 : index
    %p = arith.cmpi slt, %j, %n : index
    %c = arith.cmpi sle, %j, %i : index
    %keep = arith.ori %c, %p : i1
    attnc.yield %keep : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// A causal mask: the unmasked tiles [0, unmasked) stop at the last whole
// tile (Skv floordiv 64) and have static 64-row slices; the short tail
// tile, when visited, is masked with the diagonal's tiles.
// CHECK-LABEL: func.func @causal
// CHECK:     %[[V:.*]] = affine.min affine_map<(d0, d1)[s0] -> (s0 ceildiv 64, (d0 + d1 * 128) ceildiv 64)>
// CHECK:     %[[U:.*]] = affine.min affine_map<(d0)[s0] -> (s0 ceildiv 64, d0 * 2)>
// CHECK:     %[[W:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 floordiv 64)>(%[[U]])
// CHECK:     scf.for %{{.*}} = %c0{{.*}} to %[[W]]
// CHECK-NOT:   mask {
// CHECK:       attnc.online_attention {{.*}} : tensor<?x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>,
// CHECK:     scf.for %{{.*}} = %[[W]] to %[[V]]
// CHECK:       attnc.online_attention {{.*}} : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>,
// OFF-LABEL: func.func @causal
// OFF:       scf.for
// OFF-NOT:   tensor<64x64xbf16>
// OFF:       attnc.online_attention_finalize
func.func @causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi sle, %j, %i : index
    attnc.yield %c : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// A causal mask with a score modifier that reads the key position (ALiBi's
// slope * (j - i), which grows toward the diagonal): the masked tiles
// [W, V) are visited first, then the unmasked [0, W) in key order. Both
// loops count visits n (M = V - W masked ones, then up to M + W) and slice
// tile t(n) = n < M ? W + n : n - M. Without the modifier's key read
// (@causal above) the tiles keep their order.
// CHECK-LABEL: func.func @alibi_causal
// CHECK:     %[[V:.*]] = affine.min affine_map<(d0, d1)[s0] -> (s0 ceildiv 64, (d0 + d1 * 128) ceildiv 64)>
// CHECK:     %[[U:.*]] = affine.min affine_map<(d0)[s0] -> (s0 ceildiv 64, d0 * 2)>
// CHECK:     %[[W:.*]] = affine.min affine_map<(d0)[s0] -> (d0, s0 floordiv 64)>(%[[U]])
// CHECK:     %[[M:.*]] = affine.apply affine_map<(d0, d1) -> (d0 - d1)>(%[[V]], %[[W]])
// CHECK:     scf.for %[[N:.*]] = %c0{{.*}} to %[[M]]
// CHECK:       %[[ISM:.*]] = arith.cmpi ult, %[[N]], %[[M]]
// CHECK:       %[[MT:.*]] = arith.addi %[[W]], %[[N]]
// CHECK:       %[[FT:.*]] = arith.subi %[[N]], %[[M]]
// CHECK:       %[[TILE:.*]] = arith.select %[[ISM]], %[[MT]], %[[FT]]
// CHECK:       %[[K0:.*]] = affine.apply affine_map<(d0) -> (d0 * 64)>(%[[TILE]])
// CHECK:       attnc.online_attention {{.*}} at [%{{.*}}, %{{.*}}, %{{.*}}, %[[K0]]] {{.*}} : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>,
// CHECK:       mask {
// CHECK:     scf.for %{{.*}} = %[[M]] to %{{.*}}
// CHECK-NOT:   mask {
// CHECK:       attnc.online_attention {{.*}} : tensor<?x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>,
// CHECK:     attnc.online_attention_finalize
func.func @alibi_causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = arith.constant 0.5 : f32
    %d = arith.subi %j, %i : index
    %d64 = arith.index_cast %d : index to i64
    %df = arith.sitofp %d64 : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %s, %bias : f32
    attnc.yield %r : f32
  } mask {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.cmpi sle, %j, %i : index
    attnc.yield %c : i1
  }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// The backward of a window of 100 keys: the K/V tile's query tiles are
// masked on both sides of those that see all of it. One loop visits both
// sides (tile first + n, then fullEnd + n - L), a second the unmasked
// tiles, which keep their own tile index (each query loop of the backward
// kernel starts its own load pipeline).
// CHECK-LABEL: func.func @window_backward
// CHECK:     scf.for %{{.*}} = %c0
// CHECK:     scf.for %[[N:.*]] = %c0{{.*}} to %{{.*}} step
// CHECK:       %[[ONL:.*]] = arith.cmpi ult, %[[N]], %[[L:[^ ]*]]
// CHECK:       %[[LT:.*]] = arith.addi %{{.*}}, %[[N]]
// CHECK:       %[[PL:.*]] = arith.subi %[[N]], %[[L]]
// CHECK:       %[[RT:.*]] = arith.addi %{{.*}}, %[[PL]]
// CHECK:       %[[T:.*]] = arith.select %[[ONL]], %[[LT]], %[[RT]]
// CHECK:       affine.apply affine_map<(d0) -> (d0 * 128)>(%[[T]])
// CHECK:       attnc.online_attention_grad {{.*}} mask {
// CHECK:     scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NOT:   arith.select
// CHECK:       affine.apply affine_map<(d0) -> (d0 * 128)>(%[[I]])
// CHECK-NOT:   mask {
// CHECK:       attnc.online_attention_grad
// CHECK-NOT: scf.for %
// OFF-LABEL: func.func @window_backward
// OFF-COUNT-4: scf.for %
func.func @window_backward(%q: tensor<?x?x?x64xbf16>, %do: tensor<?x?x?x64xbf16>, %lse: tensor<?x?x?xf32>, %dl: tensor<?x?x?x1xf32>)
    -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
        tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x1xf32>
        -> tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 100 : index
        %le = arith.cmpi sle, %j, %i : index
        %jj = arith.addi %j, %c : index
        %near = arith.cmpi sgt, %jj, %i : index
        %keep = arith.andi %le, %near : i1
        attnc.yield %keep : i1
      }
  return %dq, %dk, %dv : tensor<?x?x?x64xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}
