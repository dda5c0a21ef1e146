// Round trip of every attnc op: parse, print, parse again.
// RUN: attnc-opt %s | attnc-opt | FileCheck %s

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<?x4096xbf16>, %b: tensor<4096xbf16>, %s: tensor<bf16>)
    -> tensor<?x4096xbf16> {
  // CHECK: attnc.add %{{.*}}, %{{.*}} : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
  %0 = attnc.add %a, %b : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
  // CHECK: attnc.sub
  %1 = attnc.sub %0, %s : tensor<?x4096xbf16>, tensor<bf16> -> tensor<?x4096xbf16>
  // CHECK: attnc.mul
  %2 = attnc.mul %1, %1 : tensor<?x4096xbf16>, tensor<?x4096xbf16> -> tensor<?x4096xbf16>
  // CHECK: attnc.div
  %3 = attnc.div %2, %b : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
  // CHECK: attnc.max
  %4 = attnc.max %3, %s : tensor<?x4096xbf16>, tensor<bf16> -> tensor<?x4096xbf16>
  // CHECK: attnc.exp %{{.*}} : tensor<?x4096xbf16>
  %5 = attnc.exp %4 : tensor<?x4096xbf16>
  // CHECK: attnc.log
  %6 = attnc.log %5 : tensor<?x4096xbf16>
  // CHECK: attnc.neg
  %7 = attnc.neg %6 : tensor<?x4096xbf16>
  // CHECK: attnc.tanh
  %8 = attnc.tanh %7 : tensor<?x4096xbf16>
  // CHECK: attnc.rsqrt
  %9 = attnc.rsqrt %8 : tensor<?x4096xbf16>
  return %9 : tensor<?x4096xbf16>
}

// CHECK-LABEL: func.func @broadcast_ones
func.func @broadcast_ones(%a: tensor<8x1x16xf32>, %b: tensor<4x1xf32>) -> tensor<8x4x16xf32> {
  // CHECK: attnc.add {{.*}} -> tensor<8x4x16xf32>
  %0 = attnc.add %a, %b : tensor<8x1x16xf32>, tensor<4x1xf32> -> tensor<8x4x16xf32>
  return %0 : tensor<8x4x16xf32>
}

// CHECK-LABEL: func.func @masks_and_casts
func.func @masks_and_casts(%s: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xbf16> {
  // CHECK: attnc.iota %{{.*}} {dimension = 2 : i64}
  %r = attnc.iota %s {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %c = attnc.iota %s {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  // Index arithmetic: the row index shifted by a 0-d offset.
  %off = arith.constant dense<3> : tensor<i64>
  // CHECK: attnc.add %{{.*}}, %{{.*}} : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %rs = attnc.add %r, %off : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  // CHECK: attnc.sub %{{.*}}, %{{.*}} : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %cs = attnc.sub %c, %off : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  // CHECK: attnc.cmp le, %{{.*}}, %{{.*}} : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %causal = attnc.cmp le, %cs, %rs : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  // Integer arithmetic and mask logic: a window |i - j| * 2 < 9 and chunks
  // i / 4 == j / 4 (floor division), combined.
  // CHECK: attnc.sub %{{.*}}, %{{.*}} : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi64>
  %diff = attnc.sub %r, %c : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi64>
  // CHECK: attnc.abs %{{.*}} : tensor<?x?x?x?xi64>
  %dist = attnc.abs %diff : tensor<?x?x?x?xi64>
  %two = arith.constant dense<2> : tensor<i64>
  // CHECK: attnc.mul
  %d2 = attnc.mul %dist, %two : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %nine = arith.constant dense<9> : tensor<i64>
  // CHECK: attnc.min
  %dm = attnc.min %d2, %nine : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  // CHECK: attnc.max
  %dx = attnc.max %dm, %two : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %near = attnc.cmp lt, %dx, %nine : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi1>
  %four = arith.constant dense<4> : tensor<i64>
  // CHECK: attnc.div %{{.*}}, %{{.*}} : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %rc = attnc.div %r, %four : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %cc = attnc.div %c, %four : tensor<?x?x?x?xi64>, tensor<i64> -> tensor<?x?x?x?xi64>
  %chunk = attnc.cmp eq, %rc, %cc : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  // CHECK: attnc.and %{{.*}}, %{{.*}} : tensor<?x?x?x?xi1>, tensor<?x?x?x?xi1> -> tensor<?x?x?x?xi1>
  %both = attnc.and %causal, %near : tensor<?x?x?x?xi1>, tensor<?x?x?x?xi1> -> tensor<?x?x?x?xi1>
  // CHECK: attnc.or
  %either = attnc.or %both, %chunk : tensor<?x?x?x?xi1>, tensor<?x?x?x?xi1> -> tensor<?x?x?x?xi1>
  // CHECK: attnc.not %{{.*}} : tensor<?x?x?x?xi1>
  %drop = attnc.not %either : tensor<?x?x?x?xi1>
  %m = attnc.not %drop : tensor<?x?x?x?xi1>
  %z = arith.constant dense<0.0> : tensor<f32>
  // CHECK: attnc.select
  %x = attnc.select %m, %s, %z : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  // CHECK: attnc.cast %{{.*}} : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %y = attnc.cast %x : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  return %y : tensor<?x?x?x?xbf16>
}

// CHECK-LABEL: func.func @rows
func.func @rows(%x: tensor<?x?x4096xbf16>, %g: tensor<4096xbf16>, %b: tensor<4096xbf16>,
                %seed: i64, %off: i64) -> (tensor<?x?x1xbf16>, tensor<?x?x1xbf16>, tensor<?x?x4096xbf16>) {
  // CHECK: attnc.reduce_max %{{.*}} : tensor<?x?x4096xbf16> -> tensor<?x?x1xbf16>
  %m = attnc.reduce_max %x : tensor<?x?x4096xbf16> -> tensor<?x?x1xbf16>
  // CHECK: attnc.reduce_sum
  %s = attnc.reduce_sum %x : tensor<?x?x4096xbf16> -> tensor<?x?x1xbf16>
  // CHECK: attnc.softmax
  %p = attnc.softmax %x : tensor<?x?x4096xbf16>
  // CHECK: attnc.dropout %{{.*}}, %{{.*}}, %{{.*}} {probability = 2.500000e-01 : f64} : tensor<?x?x4096xbf16>
  %d = attnc.dropout %p, %seed, %off {probability = 0.25 : f64} : tensor<?x?x4096xbf16>
  // CHECK: attnc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64}
  %l = attnc.layer_norm %d, %g, %b {epsilon = 1.0e-5 : f64}
      : tensor<?x?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16> -> tensor<?x?x4096xbf16>
  // CHECK: attnc.rms_norm %{{.*}}, %{{.*}} {epsilon = 9.9999999999999995E-7 : f64}
  %r = attnc.rms_norm %l, %g {epsilon = 1.0e-6 : f64}
      : tensor<?x?x4096xbf16>, tensor<4096xbf16> -> tensor<?x?x4096xbf16>
  return %m, %s, %r : tensor<?x?x1xbf16>, tensor<?x?x1xbf16>, tensor<?x?x4096xbf16>
}

// CHECK-LABEL: func.func @matmul_and_heads
func.func @matmul_and_heads(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>)
    -> tensor<?x8x?x?xf32> {
  // CHECK: attnc.repeat_interleave %{{.*}} {dimension = 1 : i64, repeats = 4 : i64} : tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  %k8 = attnc.repeat_interleave %k {dimension = 1 : i64, repeats = 4 : i64}
      : tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  // CHECK: attnc.matmul %{{.*}}, %{{.*}} {transpose_b}
  %s = attnc.matmul %q, %k8 {transpose_b}
      : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x8x?x?xf32>
  // CHECK: attnc.matmul %{{.*}}, %{{.*}} {transpose_a}
  %t = attnc.matmul %s, %s {transpose_a}
      : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf32>
  return %t : tensor<?x8x?x?xf32>
}

// Top-left causal: key j visible to query i iff j <= i.
// CHECK-LABEL: func.func @fused
// CHECK: attnc.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f64}
// CHECK-SAME: : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16> mask {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT:   %[[KEEP:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK-NEXT:   attnc.yield %[[KEEP]] : i1
// CHECK-NEXT: }
func.func @fused(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>)
    -> tensor<?x8x?x64xf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x8x?x64xf16>
}

// No region, no runtime scale: every key visible, the scale alone.
// CHECK-LABEL: func.func @unmasked
// CHECK: attnc.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.000000e+00 : f64} : tensor<1x2x16x64xbf16>, tensor<1x2x32x64xbf16>, tensor<1x2x32x32xbf16> -> tensor<1x2x16x32xbf16>{{$}}
// CHECK-NEXT: return
func.func @unmasked(%q: tensor<1x2x16x64xbf16>, %k: tensor<1x2x32x64xbf16>, %v: tensor<1x2x32x32xbf16>)
    -> tensor<1x2x16x32xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 1.0 : f64}
      : tensor<1x2x16x64xbf16>, tensor<1x2x32x64xbf16>, tensor<1x2x32x32xbf16> -> tensor<1x2x16x32xbf16>
  return %o : tensor<1x2x16x32xbf16>
}

// Everything at once: a run-time scale, a kernel config, a score modifier
// (tanh soft-capping at 30) and a bottom-right causal mask over sequence
// lengths defined above the op.
// CHECK-LABEL: func.func @all_parts
// CHECK-SAME: %[[S:[^:]+]]: f32
// CHECK: %[[SQ:.+]] = tensor.dim
// CHECK: %[[SKV:.+]] = tensor.dim
// CHECK: attnc.attention %{{.*}}, %{{.*}}, %{{.*}} runtime_scale(%[[S]]) {config = #attnc.flash_config<block_q = 128, block_kv = 32, warps = 4, stages = 2, strategy = mma_sync, fallback = <block_q = 128, block_kv = 32, warps = 4, stages = 2, strategy = mma_sync_unaligned>>, scale = 1.250000e-01 : f64}
// CHECK-SAME: -> tensor<?x?x?x64xbf16> score {
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index):
// CHECK:   math.tanh
// CHECK:   attnc.yield %{{.+}} : f32
// CHECK-NEXT: } mask {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT:   %[[L:.+]] = arith.addi %[[J]], %[[SQ]] : index
// CHECK-NEXT:   %[[R:.+]] = arith.addi %[[I]], %[[SKV]] : index
// CHECK-NEXT:   %[[KEEP:.+]] = arith.cmpi ule, %[[L]], %[[R]] : index
// CHECK-NEXT:   attnc.yield %[[KEEP]] : i1
// CHECK-NEXT: }
func.func @all_parts(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %s: f32)
    -> tensor<?x?x?x64xbf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x64xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x?x?x64xbf16>
  %o = attnc.attention %q, %k, %v runtime_scale(%s)
      {config = #attnc.flash_config<block_q = 128, block_kv = 32, warps = 4, stages = 2, strategy = mma_sync, fallback = #attnc.flash_config<block_q = 128, block_kv = 32, warps = 4, stages = 2, strategy = mma_sync_unaligned>>, scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      score {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 30.0 : f32
        %d = arith.divf %x, %cap : f32
        %t = math.tanh %d : f32
        %y = arith.mulf %t, %cap : f32
        attnc.yield %y : f32
      }
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %l = arith.addi %j, %sq : index
        %r = arith.addi %i, %skv : index
        %keep = arith.cmpi ule, %l, %r : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}

// A score modifier alone (an ALiBi-style bias by distance, per head).
// CHECK-LABEL: func.func @score_only
// CHECK: attnc.attention {{.*}} -> tensor<?x4x?x128xbf16> score {
// CHECK-NOT: mask
// CHECK: return
func.func @score_only(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x4x?x128xbf16>, %v: tensor<?x4x?x128xbf16>)
    -> tensor<?x4x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.088388347648318447 : f64}
      : tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x?x128xbf16>
      score {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %i, %j : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %hi = arith.index_cast %h : index to i64
        %hf = arith.sitofp %hi : i64 to f32
        %slope = arith.mulf %df, %hf : f32
        %y = arith.subf %x, %slope : f32
        attnc.yield %y : f32
      }
  return %o : tensor<?x4x?x128xbf16>
}

// One step of the flash form at (batch, head, q_start, kv_start), with the
// mask the causal split gives the diagonal tiles.
// CHECK-LABEL: func.func @online
func.func @online(%q: tensor<?x128xbf16>, %k: tensor<?x128xbf16>, %v: tensor<?x128xbf16>,
                  %acc: tensor<?x128xf32>, %m: tensor<?xf32>, %l: tensor<?xf32>,
                  %b: index, %h: index, %qs: index, %ks: index, %s: f32) -> (tensor<?x128xbf16>, tensor<?xf32>) {
  // CHECK: %[[ACC:.+]], %[[MAX:.+]], %[[SUM:.+]] = attnc.online_attention %{{.*}} at [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] runtime_scale(%{{.*}}) {scale = 5.000000e-01 : f64}
  // CHECK-SAME: : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32> mask {
  // CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
  // CHECK-NEXT:   %[[KEEP:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
  // CHECK-NEXT:   attnc.yield %[[KEEP]] : i1
  %a, %mm, %ll = attnc.online_attention %q, %k, %v, %acc, %m, %l at [%b, %h, %qs, %ks] runtime_scale(%s) {scale = 0.5 : f64}
      : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
      mask {
      ^bb0(%bi: index, %hi: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  // CHECK: attnc.online_attention_finalize %[[ACC]], %[[MAX]], %[[SUM]]
  %o, %lse = attnc.online_attention_finalize %a, %mm, %ll
      : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x128xbf16>, tensor<?xf32>
  return %o, %lse : tensor<?x128xbf16>, tensor<?xf32>
}

// Attention with dropout of its probabilities, and a step of its flash
// form: the Philox counters of the tile's rows start at row %r, %w per row.
// CHECK-LABEL: func.func @dropout
// CHECK: attnc.attention %{{.+}}, %{{.+}}, %{{.+}} dropout(%[[SEED:.+]], %[[OFF:.+]]) {dropout_probability = 1.000000e-01 : f64, scale = 1.000000e+00 : f64}
// CHECK: attnc.online_attention {{.*}} at [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] dropout(%[[SEED]], %[[OFF]]) rows(%{{.+}}, %{{.+}}) {dropout_probability = 1.000000e-01 : f64, scale = 1.000000e+00 : f64}
func.func @dropout(%q4: tensor<?x4x?x64xbf16>, %q: tensor<?x64xbf16>, %acc: tensor<?x64xf32>, %m: tensor<?xf32>,
                   %i: index, %r: index, %w: index, %seed: i64, %offset: i64)
    -> (tensor<?x4x?x64xbf16>, tensor<?x64xf32>) {
  %o = attnc.attention %q4, %q4, %q4 dropout(%seed, %offset) {dropout_probability = 0.1 : f64, scale = 1.0 : f64}
      : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
  %a:3 = attnc.online_attention %q, %q, %q, %acc, %m, %m at [%i, %i, %i, %i] dropout(%seed, %offset) rows(%r, %w) {dropout_probability = 0.1 : f64, scale = 1.0 : f64}
      : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>
  return %o, %a#0 : tensor<?x4x?x64xbf16>, tensor<?x64xf32>
}

// An unmasked step (a tile the causal split proved visible) with a score
// modifier and no run-time scale.
// CHECK-LABEL: func.func @online_unmasked
// CHECK: attnc.online_attention {{.*}} at [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {scale = 1.000000e+00 : f64}
// CHECK-SAME: tensor<64xf32> score {
// CHECK-NOT: mask
func.func @online_unmasked(%q: tensor<64x64xf16>, %k: tensor<32x64xf16>, %v: tensor<32x64xf16>,
                           %acc: tensor<64x64xf32>, %m: tensor<64xf32>, %l: tensor<64xf32>, %i: index)
    -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %a:3 = attnc.online_attention %q, %k, %v, %acc, %m, %l at [%i, %i, %i, %i] {scale = 1.0 : f64}
      : tensor<64x64xf16>, tensor<32x64xf16>, tensor<32x64xf16>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
      score {
      ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %kj: index):
        %c = arith.constant 2.0 : f32
        %y = arith.mulf %x, %c : f32
        attnc.yield %y : f32
      }
  return %a#0, %a#1, %a#2 : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @fusion
func.func @fusion(%x: tensor<?x4096xbf16>, %b: tensor<4096xbf16>, %seed: i64) -> tensor<?x4096xbf16> {
  // CHECK: attnc.fusion(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x4096xbf16>, tensor<4096xbf16>, i64) -> tensor<?x4096xbf16> {
  %y = attnc.fusion (%x, %b, %seed) : (tensor<?x4096xbf16>, tensor<4096xbf16>, i64) -> tensor<?x4096xbf16> {
  ^bb0(%a0: tensor<?x4096xbf16>, %a1: tensor<4096xbf16>, %a2: i64):
    %s = attnc.add %a0, %a1 : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
    %d = attnc.dropout %s, %a2, %a2 {probability = 0.1 : f64} : tensor<?x4096xbf16>
    // CHECK: attnc.yield %{{.*}} : tensor<?x4096xbf16>
    attnc.yield %d : tensor<?x4096xbf16>
  }
  return %y : tensor<?x4096xbf16>
}

// CHECK-LABEL: func.func @attention_grad
func.func @attention_grad(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
    %v: tensor<?x2x?x64xbf16>, %do: tensor<?x8x?x64xbf16>,
    %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>, %s: f32)
    -> (tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) {
  // CHECK: attnc.attention_grad %{{.*}} runtime_scale(%{{.*}}) {scale = 1.250000e-01 : f64}
  // CHECK-SAME: -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> mask {
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl runtime_scale(%s)
      {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>,
        tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32>
        -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %dq, %dk, %dv : tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
}

// CHECK-LABEL: func.func @online_attention_grad
func.func @online_attention_grad(%q: tensor<?x64xbf16>, %k: tensor<?x64xbf16>,
    %v: tensor<?x64xbf16>, %do: tensor<?x64xbf16>, %lse: tensor<?xf32>,
    %dl: tensor<?xf32>, %dk: tensor<?x64xf32>, %dv: tensor<?x64xf32>,
    %acc: tensor<?x?x64xf32>, %i: index)
    -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x?x64xf32>) {
  // CHECK: attnc.online_attention_grad {{.*}} at [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {scale = 1.250000e-01 : f64}
  %dk2, %dv2, %dqt = attnc.online_attention_grad %q, %k, %v, %do, %lse, %dl,
      %dk, %dv at [%i, %i, %i, %i] {scale = 0.125 : f64}
      : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>,
        tensor<?x64xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>,
        tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: attnc.accumulate %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<?x64xf32> into tensor<?x?x64xf32>
  %acc2 = attnc.accumulate %dqt into %acc[%i, %i, %i]
      : tensor<?x64xf32> into tensor<?x?x64xf32>
  return %dk2, %dv2, %acc2 : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x?x64xf32>
}

// CHECK-LABEL: func.func @parallel_accumulate
func.func @parallel_accumulate(%t: tensor<?x?x64xf32>, %init: tensor<?x?x?x64xf32>,
    %n: index) -> tensor<?x?x?x64xf32> {
  %c0 = arith.constant 0 : index
  %r = scf.forall (%b) in (%n) shared_outs(%o = %init) -> tensor<?x?x?x64xf32> {
    scf.forall.in_parallel {
      // CHECK: attnc.parallel_accumulate %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<?x?x64xf32> into tensor<?x?x?x64xf32>
      attnc.parallel_accumulate %t into %o[%b, %c0, %c0, %c0]
          : tensor<?x?x64xf32> into tensor<?x?x?x64xf32>
    }
  }
  return %r : tensor<?x?x?x64xf32>
}

// Split-KV: the split count the host evaluates, and the merge of one split's
// partial into the running state of a row tile.
// CHECK-LABEL: func.func @split_kv_ops
// CHECK: %[[S:.+]] = attnc.kv_split_count %{{.+}}, %{{.+}} {ctas_per_sm = 2 : i64, max_splits = 64 : i64}
// CHECK: attnc.online_attention_merge %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x128xf32>, tensor<?xf32>
func.func @split_kv_ops(%ctas: index, %tiles: index, %acc: tensor<?x128xf32>, %m: tensor<?xf32>,
                        %l: tensor<?xf32>, %o: tensor<?x128xf32>, %lse: tensor<?xf32>)
    -> (index, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>) {
  %s = attnc.kv_split_count %ctas, %tiles {max_splits = 64, ctas_per_sm = 2}
  %a, %mm, %ll = attnc.online_attention_merge %acc, %m, %l, %o, %lse
      : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x128xf32>, tensor<?xf32>
  return %s, %a, %mm, %ll : index, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
}

// The K/V tiles a query tile of a document mask visits, from the ids.
// CHECK-LABEL: func.func @id_tile_bounds
// CHECK: attnc.id_tile_bounds %{{.+}}[%{{.+}}] at 1 rows %{{.+}} + %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] at 2 keys %{{.+}} tiles %{{.+}} to %{{.+}} block_kv 128 : tensor<?x?xi64>, tensor<?x?x?xi64>
func.func @id_tile_bounds(%dq: tensor<?x?xi64>, %dk: tensor<?x?x?xi64>, %b: index, %h: index,
                          %q0: index, %m: index, %n: index, %t0: index, %t1: index)
    -> (index, index, index, index) {
  %f, %u, %ue, %e = attnc.id_tile_bounds %dq[%b] at 1 rows %q0 + %m, %dk[%b, %h] at 2 keys %n
      tiles %t0 to %t1 block_kv 128 : tensor<?x?xi64>, tensor<?x?x?xi64>
  return %f, %u, %ue, %e : index, index, index, index
}

// Per-sequence K/V lengths of a cache, with a run-time scale: both optional
// operands round-trip.
// CHECK-LABEL: func.func @attention_kv_lengths
// CHECK: attnc.attention %{{.+}}, %{{.+}}, %{{.+}} runtime_scale(%{{.+}}) kv_lengths(%{{.+}} : tensor<?xi32>) {scale = 1.000000e+00 : f64}
func.func @attention_kv_lengths(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x?x128xbf16>, %used: tensor<?xi32>, %s: f32) -> tensor<?x32x1x128xbf16> {
  %o = attnc.attention %q, %k, %k runtime_scale(%s) kv_lengths(%used : tensor<?xi32>) {scale = 1.0 : f64}
      : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x1x128xbf16>
  return %o : tensor<?x32x1x128xbf16>
}

// A paged K/V cache (vLLM's layout) viewed as [B, Hkv, max_blocks * 64, d]:
// static and dynamic max_blocks.
// CHECK-LABEL: func.func @paged_kv
// CHECK: attnc.paged_kv %{{.+}}, %{{.+}} {page_size = 64 : i64} : tensor<?x64x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
// CHECK: attnc.paged_kv %{{.+}}, %{{.+}} {page_size = 16 : i64} : tensor<100x16x8x128xbf16>, tensor<2x5xi32> -> tensor<2x8x80x128xbf16>
func.func @paged_kv(%pool: tensor<?x64x8x128xbf16>, %t: tensor<?x?xi32>, %small: tensor<100x16x8x128xbf16>, %t2: tensor<2x5xi32>)
    -> (tensor<?x8x?x128xbf16>, tensor<2x8x80x128xbf16>) {
  %k = attnc.paged_kv %pool, %t {page_size = 64} : tensor<?x64x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  %k2 = attnc.paged_kv %small, %t2 {page_size = 16} : tensor<100x16x8x128xbf16>, tensor<2x5xi32> -> tensor<2x8x80x128xbf16>
  return %k, %k2 : tensor<?x8x?x128xbf16>, tensor<2x8x80x128xbf16>
}

// A packed (varlen) batch viewed as [B, H, T, d] and its attention packed
// back: cu_seqlens[:-1] and cu_seqlens[1:] are the starts and ends.
// CHECK-LABEL: func.func @ragged
// CHECK: %[[Q:.+]] = attnc.ragged_view %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x32x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x?x128xbf16>
// CHECK: attnc.ragged_pack %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x32x?x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
func.func @ragged(%q: tensor<?x32x128xbf16>, %starts: tensor<?xi32>, %ends: tensor<?xi32>) -> tensor<?x32x128xbf16> {
  %qv = attnc.ragged_view %q, %starts, %ends : tensor<?x32x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x?x128xbf16>
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x32x?x128xbf16>, tensor<?x32x?x128xbf16> -> tensor<?x32x?x128xbf16>
  %o = attnc.ragged_pack %ov, %starts, %ends : tensor<?x32x?x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o : tensor<?x32x128xbf16>
}

// A config whose warps split each K/V tile's keys (key_warps, printed only
// when not 1) round-trips, before a fallback too; key_warps = 1 is elided.
// CHECK-LABEL: func.func @key_warps
// CHECK: {config = #attnc.flash_config<block_q = 16, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync, key_warps = 4>, scale = 1.250000e-01 : f64}
// CHECK: {config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync, key_warps = 2, fallback = <block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync_unaligned>>, scale = 1.250000e-01 : f64}
// CHECK: {config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, scale = 1.250000e-01 : f64}
func.func @key_warps(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>)
    -> (tensor<1x8x1x64xbf16>, tensor<1x8x1x64xbf16>, tensor<1x8x1x64xbf16>) {
  %a = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 16, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync, key_warps = 4>, scale = 0.125 : f64}
      : tensor<1x8x1x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x1x64xbf16>
  %b = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync, key_warps = 2, fallback = <block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync_unaligned>>, scale = 0.125 : f64}
      : tensor<1x8x1x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x1x64xbf16>
  %c = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync, key_warps = 1>, scale = 0.125 : f64}
      : tensor<1x8x1x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x1x64xbf16>
  return %a, %b, %c : tensor<1x8x1x64xbf16>, tensor<1x8x1x64xbf16>, tensor<1x8x1x64xbf16>
}

// l2_group_mib (after overlap_pv, before fallback; printed when not 0)
// round-trips.
// CHECK-LABEL: func.func @l2_group
// CHECK: {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, overlap_pv, l2_group_mib = 16, fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned>>, scale = 1.250000e-01 : f64}
// CHECK: {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws>, scale = 1.250000e-01 : f64}
// CHECK: {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, overlap_pv, l2_group_mib = 32>, scale = 1.250000e-01 : f64}
func.func @l2_group(%q: tensor<1x8x128x128xbf16>, %k: tensor<1x8x512x128xbf16>, %v: tensor<1x8x512x128xbf16>)
    -> (tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>) {
  %a = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, overlap_pv, l2_group_mib = 16, fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned>>, scale = 0.125 : f64}
      : tensor<1x8x128x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16> -> tensor<1x8x128x128xbf16>
  %b = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, l2_group_mib = 0>, scale = 0.125 : f64}
      : tensor<1x8x128x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16> -> tensor<1x8x128x128xbf16>
  %c = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, overlap_pv, l2_group_mib = 32>, scale = 0.125 : f64}
      : tensor<1x8x128x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16> -> tensor<1x8x128x128xbf16>
  return %a, %b, %c : tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>
}

// overlap_pv (a bare keyword after interleave_kv, before fallback)
// round-trips.
// CHECK-LABEL: func.func @overlap_pv
// CHECK: {config = #attnc.flash_config<block_q = 128, block_kv = 176, warps = 8, stages = 2, strategy = wgmma_ws, overlap_pv, fallback = <block_q = 128, block_kv = 176, warps = 8, stages = 2, strategy = mma_sync_unaligned>>, scale = 1.250000e-01 : f64}
// CHECK: {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 3, strategy = wgmma, overlap_pv>, scale = 1.250000e-01 : f64}
func.func @overlap_pv(%q: tensor<1x8x128x128xbf16>, %k: tensor<1x8x512x128xbf16>, %v: tensor<1x8x512x128xbf16>)
    -> (tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>) {
  %a = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 128, block_kv = 176, warps = 8, stages = 2, strategy = wgmma_ws, overlap_pv, fallback = <block_q = 128, block_kv = 176, warps = 8, stages = 2, strategy = mma_sync_unaligned>>, scale = 0.125 : f64}
      : tensor<1x8x128x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16> -> tensor<1x8x128x128xbf16>
  %b = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 3, strategy = wgmma, overlap_pv>, scale = 0.125 : f64}
      : tensor<1x8x128x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16> -> tensor<1x8x128x128xbf16>
  return %a, %b : tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>
}

// shared_p (a bare keyword after overlap_pv, before l2_group_mib)
// round-trips.
// CHECK-LABEL: func.func @shared_p
// CHECK: {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, overlap_pv, shared_p, l2_group_mib = 32>, scale = 1.250000e-01 : f64}
func.func @shared_p(%q: tensor<1x8x128x128xbf16>, %k: tensor<1x8x512x128xbf16>, %v: tensor<1x8x512x128xbf16>)
    -> tensor<1x8x128x128xbf16> {
  %a = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws_persistent, overlap_pv, shared_p, l2_group_mib = 32>, scale = 0.125 : f64}
      : tensor<1x8x128x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16> -> tensor<1x8x128x128xbf16>
  return %a : tensor<1x8x128x128xbf16>
}

// mma_row_sums (a bare keyword after overlap_pv and shared_p, before
// l2_group_mib) round-trips.
// CHECK-LABEL: func.func @mma_row_sums
// CHECK: {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 3, strategy = wgmma, overlap_pv, mma_row_sums, l2_group_mib = 32>, scale = 1.250000e-01 : f64}
func.func @mma_row_sums(%q: tensor<1x8x128x128xbf16>, %k: tensor<1x8x512x128xbf16>, %v: tensor<1x8x512x128xbf16>)
    -> tensor<1x8x128x128xbf16> {
  %a = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 3, strategy = wgmma, overlap_pv, mma_row_sums, l2_group_mib = 32>, scale = 0.125 : f64}
      : tensor<1x8x128x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16> -> tensor<1x8x128x128xbf16>
  return %a : tensor<1x8x128x128xbf16>
}

// interleave_kv (a bare keyword after key_warps, before fallback) round-trips.
// CHECK-LABEL: func.func @interleave_kv
// CHECK: {config = #attnc.flash_config<block_q = 16, block_kv = 128, warps = 4, stages = 3, strategy = mma_sync, key_warps = 4, interleave_kv>, scale = 1.250000e-01 : f64}
// CHECK: {config = #attnc.flash_config<block_q = 32, block_kv = 64, warps = 2, stages = 4, strategy = mma_sync_unaligned, interleave_kv>, scale = 1.250000e-01 : f64}
func.func @interleave_kv(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>)
    -> (tensor<1x8x1x64xbf16>, tensor<1x8x1x64xbf16>) {
  %a = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 16, block_kv = 128, warps = 4, stages = 3, strategy = mma_sync, key_warps = 4, interleave_kv>, scale = 0.125 : f64}
      : tensor<1x8x1x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x1x64xbf16>
  %b = attnc.attention %q, %k, %v
      {config = #attnc.flash_config<block_q = 32, block_kv = 64, warps = 2, stages = 4, strategy = mma_sync_unaligned, interleave_kv>, scale = 0.125 : f64}
      : tensor<1x8x1x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x1x64xbf16>
  return %a, %b : tensor<1x8x1x64xbf16>, tensor<1x8x1x64xbf16>
}
