// Shapes the wgmma strategy (sm_90a's default) cannot build: a head dim it
// cannot swizzle into 128-byte boxes, an element type without a bf16/f16
// warpgroup MMA.
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-online-softmax --attnc-convert-to-gpu

func.func @head_dim_96(%q: tensor<?x?x?x96xbf16>) -> tensor<?x?x?x96xbf16> {
  // expected-error @+1 {{wgmma strategy: head dim must be 64 or 128, got 96}}
  %o = attnc.attention %q, %q, %q {scale = 0.1 : f64} : tensor<?x?x?x96xbf16>, tensor<?x?x?x96xbf16>, tensor<?x?x?x96xbf16> -> tensor<?x?x?x96xbf16>
  return %o : tensor<?x?x?x96xbf16>
}

// -----

func.func @f32_attention(%q: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  // expected-error @+1 {{wgmma strategy: element type must be bf16 or f16}}
  %o = attnc.attention %q, %q, %q {scale = 0.1 : f64} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}
