// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-derive-backward | FileCheck %s
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-derive-backward --attnc-fuse-elementwise | FileCheck %s --check-prefix=FUSED

// The backward of bottom-right causal GQA attention with a run-time scale:
// the arguments f gives its attention (Q, K, V and the scale; not %unused)
// come after (q, k, v, o, lse, dO), the sequence lengths the mask uses are
// recomputed from the backward's own Q and K, and the mask is the forward's.
// CHECK-LABEL: func.func @attn(
// CHECK-LABEL: func.func @attn_backward(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<?x8x?x128xbf16> {attnc.name = "q"}, %[[K:[^:]*]]: tensor<?x2x?x128xbf16> {attnc.name = "k"}, %[[V:[^:]*]]: tensor<?x2x?x128xbf16> {attnc.name = "v"},
// CHECK-SAME: %[[O:[^:]*]]: tensor<?x8x?x128xbf16> {attnc.name = "o"}, %[[LSE:[^:]*]]: tensor<?x8x?xf32> {attnc.name = "lse"}, %[[DO:[^:]*]]: tensor<?x8x?x128xbf16> {attnc.name = "do"}, %[[S:[^:]*]]: f32)
// CHECK-SAME: -> (tensor<?x8x?x128xbf16> {attnc.name = "dq"}, tensor<?x2x?x128xbf16> {attnc.name = "dk"}, tensor<?x2x?x128xbf16> {attnc.name = "dv"})
// CHECK-DAG: %[[SKV:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<?x2x?x128xbf16>
// CHECK-DAG: %[[SQ:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x8x?x128xbf16>
// CHECK: %[[OFF:.*]] = arith.subi %[[SKV]], %[[SQ]] : index
// CHECK: %[[DO32:.*]] = attnc.cast %[[DO]] : tensor<?x8x?x128xbf16> to tensor<?x8x?x128xf32>
// CHECK: %[[O32:.*]] = attnc.cast %[[O]] : tensor<?x8x?x128xbf16> to tensor<?x8x?x128xf32>
// CHECK: %[[P:.*]] = attnc.mul %[[DO32]], %[[O32]]
// CHECK: %[[D:.*]] = attnc.reduce_sum %[[P]] : tensor<?x8x?x128xf32> -> tensor<?x8x?x1xf32>
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = attnc.attention_grad %[[Q]], %[[K]], %[[V]], %[[DO]], %[[LSE]], %[[D]] runtime_scale(%[[S]]) {scale = 0.088388347648318447 : f64}
// CHECK-SAME: -> tensor<?x8x?x128xf32>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16> mask {
// CHECK: arith.addi %{{.*}}, %[[OFF]] : index
// CHECK: %[[DQB:.*]] = attnc.cast %[[DQ]] : tensor<?x8x?x128xf32> to tensor<?x8x?x128xbf16>
// CHECK: return %[[DQB]], %[[DK]], %[[DV]]

// Fused: delta and dQ's conversion are row kernels around the gradient.
// FUSED-LABEL: func.func @attn_backward(
// FUSED: attnc.fusion({{.*}}) : (tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>) -> tensor<?x8x?x1xf32>
// FUSED: attnc.attention_grad
// FUSED: attnc.fusion({{.*}}) : (tensor<?x8x?x128xf32>) -> tensor<?x8x?x128xbf16>
func.func @attn(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>, %s: f32, %unused: i64) -> tensor<?x8x?x128xbf16> {
  %c2 = arith.constant 2 : index
  %sq = tensor.dim %q, %c2 : tensor<?x8x?x128xbf16>
  %skv = tensor.dim %k, %c2 : tensor<?x2x?x128xbf16>
  %off = arith.subi %skv, %sq : index
  %o = attnc.attention %q, %k, %v runtime_scale(%s) {scale = 0.08838834764831845 : f64}
      : tensor<?x8x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %ii = arith.addi %i, %off : index
        %keep = arith.cmpi sle, %j, %ii : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x8x?x128xbf16>
}

// -----

// Without a mask or a run-time scale: six arguments, no mask region.
// CHECK-LABEL: func.func @plain_backward(
// CHECK-SAME: {{.*}}: tensor<2x4x256x64xf16> {{.*}}, {{.*}}: tensor<2x4x256x64xf16> {{.*}}, {{.*}}: tensor<2x4x256x64xf16> {{.*}}, {{.*}}: tensor<2x4x256x64xf16> {{.*}}, {{.*}}: tensor<2x4x256xf32> {{.*}}, {{.*}}: tensor<2x4x256x64xf16> {attnc.name = "do"})
// CHECK: attnc.attention_grad
// CHECK-NOT: mask
// CHECK: return
func.func @plain(%q: tensor<2x4x256x64xf16>, %k: tensor<2x4x256x64xf16>, %v: tensor<2x4x256x64xf16>) -> tensor<2x4x256x64xf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16> -> tensor<2x4x256x64xf16>
  return %o : tensor<2x4x256x64xf16>
}

// -----

// A softcap's derivative, derived: d(c tanh(x / c))/dx = (1 - tanh^2) (1/c) c,
// the forward's region cloned next to it.
// CHECK-LABEL: func.func @softcap_backward(
// CHECK: attnc.attention_grad
// CHECK-SAME: score {
// CHECK: math.tanh
// CHECK: } score_grad {
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK: %[[C:.*]] = arith.constant 3.000000e+01 : f32
// CHECK: %[[Y:.*]] = arith.divf %[[X]], %[[C]] : f32
// CHECK: %[[DY:.*]] = arith.divf %{{.*}}, %[[C]] : f32
// CHECK: %[[T:.*]] = math.tanh %[[Y]] : f32
// CHECK: %[[TT:.*]] = arith.mulf %[[T]], %[[T]] : f32
// CHECK: %[[ONE_MINUS:.*]] = arith.subf %{{.*}}, %[[TT]] : f32
// CHECK: %[[DT:.*]] = arith.mulf %[[ONE_MINUS]], %[[DY]] : f32
// CHECK: %[[DS:.*]] = arith.mulf %[[DT]], %[[C]] : f32
// CHECK: attnc.yield %[[DS]] : f32
func.func @softcap(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      score {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 30.0 : f32
        %y = arith.divf %x, %c : f32
        %t = math.tanh %y : f32
        %s = arith.mulf %t, %c : f32
        attnc.yield %s : f32
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

func.func @floor_modifier(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      score {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        // expected-error @+1 {{'math.floor' op in a score region has no derivative rule in --attnc-derive-backward}}
        %f = math.floor %x : f32
        attnc.yield %f : f32
      }
  return %o : tensor<?x?x?x64xbf16>
}

// -----

func.func @computed_query(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %q2 = attnc.add %q, %q : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  // expected-error @+1 {{operand 'query' is computed inside the function; --attnc-derive-backward differentiates attention of the function's arguments}}
  %o = attnc.attention %q2, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

func.func @loaded_scale(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %t: tensor<f32>) -> tensor<?x?x?x64xbf16> {
  %s = tensor.extract %t[] : tensor<f32>
  // expected-error @+1 {{uses a value computed by 'tensor.extract' in the function; the backward recomputes only index and scalar arithmetic of the function's arguments}}
  %o = attnc.attention %q, %k, %v runtime_scale(%s) {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

func.func @dropout(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %seed: i64) -> tensor<?x?x?x64xbf16> {
  // expected-error @+1 {{drops probabilities; --attnc-derive-backward does not derive the gradient through dropout yet}}
  %o = attnc.attention %q, %k, %v dropout(%seed, %seed) {dropout_probability = 0.1 : f64, scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// expected-error @+1 {{has 2 attention ops; --attnc-derive-backward derives the backward of a function with one}}
func.func @two(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  %o2 = attnc.attention %o, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o2 : tensor<?x?x?x64xbf16>
}

// -----

// expected-error @+1 {{does not return its attention's result as its one result; --attnc-derive-backward derives the backward of such functions only}}
func.func @extra_result(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o, %o : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}

// -----

// expected-error @+1 {{has a backward named 'taken_backward', which another symbol of the module has}}
func.func @taken(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
func.func private @taken_backward()

// -----

func.func @cache_lengths(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %used: tensor<?xi32>) -> tensor<?x?x?x64xbf16> {
  // expected-error @+1 {{has kv_lengths; --attnc-derive-backward derives the backward of attention over whole K/V sequences only}}
  %o = attnc.attention %q, %k, %v kv_lengths(%used : tensor<?xi32>) {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A score region reading a tensor (ALiBi's slope per head): the backward
// takes the tensor too, under the forward's parameter name (its position
// there), and its regions read it; the slope's read is no tangent, the
// score's derivative is 1.
// CHECK-LABEL: func.func @alibi_slopes_backward(
// CHECK-SAME: %[[SL:[^:]+]]: tensor<?xf32> {attnc.name = "arg3"}
// CHECK: attnc.attention_grad
// CHECK: score {
// CHECK: tensor.extract %[[SL]]
// CHECK: score_grad {
// CHECK: tensor.extract %[[SL]]
func.func @alibi_slopes(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %slopes: tensor<?xf32>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %m = tensor.extract %slopes[%h] : tensor<?xf32>
        %r = arith.subf %s, %m : f32
        attnc.yield %r : f32
      }
  return %o : tensor<?x?x?x64xbf16>
}
