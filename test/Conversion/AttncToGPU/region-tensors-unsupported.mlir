// Reads of tensors in mask and score regions the kernel cannot make once
// per block, refused with the rule.
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-online-softmax="block-q=64 block-kv=64 strategy=mma_sync" --attnc-convert-to-gpu

// A tensor per (query, key) pair is a score-sized tensor.
func.func @per_pair(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %t: tensor<?x?xf32>) -> tensor<?x8x?x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        // expected-error @+1 {{reads a tensor per (query, key) pair; the kernel reads tensors per query or per key position, never a score-sized one}}
        %x = tensor.extract %t[%i, %j] : tensor<?x?xf32>
        %r = arith.addf %s, %x : f32
        attnc.yield %r : f32
      }
  return %o : tensor<?x8x?x64xbf16>
}

// -----

func.func @f64_slopes(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %t: tensor<8xf64>) -> tensor<?x8x?x64xbf16> {
  // expected-error @+1 {{reads an element of type 'f64' per block; the kernel reads i32, i64 and f32 tensors}}
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %t[%h] : tensor<8xf64>
        %y = arith.truncf %x : f64 to f32
        %r = arith.addf %s, %y : f32
        attnc.yield %r : f32
      }
  return %o : tensor<?x8x?x64xbf16>
}

// -----

func.func @name_taken(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %t: tensor<8xf32> {attnc.name = "lse"}) -> tensor<?x8x?x64xbf16> {
  // expected-error @+1 {{reads function argument 'lse', whose name is another parameter's of the kernel}}
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %t[%h] : tensor<8xf32>
        %r = arith.addf %s, %x : f32
        attnc.yield %r : f32
      }
  return %o : tensor<?x8x?x64xbf16>
}

// -----

// Static extents that disagree: the block's head runs over 8 heads.
func.func @too_few_heads(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %t: tensor<4xf32>) -> tensor<?x8x?x64xbf16> {
  // expected-error @+1 {{reads dimension 0 (4 elements) at the query head, which runs over 8}}
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %t[%h] : tensor<4xf32>
        %r = arith.addf %s, %x : f32
        attnc.yield %r : f32
      }
  return %o : tensor<?x8x?x64xbf16>
}

// -----

// The kernel's parameters are the function's arguments.
func.func @computed(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %t: tensor<8xf32>) -> tensor<?x8x?x64xbf16> {
  %e = math.exp %t : tensor<8xf32>
  // expected-error @+1 {{reads a tensor that is not an argument of the function; the kernel reads the tensors mask and score regions use as its parameters}}
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %e[%h] : tensor<8xf32>
        %r = arith.addf %s, %x : f32
        attnc.yield %r : f32
      }
  return %o : tensor<?x8x?x64xbf16>
}

// -----

// One tensor read at the batch and at the head.
func.func @two_coordinates(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %t: tensor<?xf32>) -> tensor<?x8x?x64xbf16> {
  // expected-error @+1 {{reads a tensor at other coordinates than another read of it}}
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %t[%b] : tensor<?xf32>
        %y = tensor.extract %t[%h] : tensor<?xf32>
        %xy = arith.addf %x, %y : f32
        %r = arith.addf %s, %xy : f32
        attnc.yield %r : f32
      }
  return %o : tensor<?x8x?x64xbf16>
}

// -----

// One ids tensor at both positions needs as many queries as keys.
func.func @documents_self_lengths(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x256x64xbf16>, %v: tensor<1x8x256x64xbf16>, %ids: tensor<1x?xi32>) -> tensor<1x8x128x64xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<1x8x128x64xbf16>, tensor<1x8x256x64xbf16>, tensor<1x8x256x64xbf16> -> tensor<1x8x128x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %x = tensor.extract %ids[%b, %i] : tensor<1x?xi32>
        // expected-error @+1 {{reads one tensor at the query and at the key position, which needs as many queries as keys; Sq = 128, Skv = 256}}
        %y = tensor.extract %ids[%b, %j] : tensor<1x?xi32>
        %same = arith.cmpi eq, %x, %y : i32
        attnc.yield %same : i1
      }
  return %o : tensor<1x8x128x64xbf16>
}
