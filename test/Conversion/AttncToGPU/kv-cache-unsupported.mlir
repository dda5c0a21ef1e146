// What a K/V cache needs from the back-end, refused with the reason: TMA
// loads neither stop at a sequence's length nor look pages up, and K and V
// are paged together or not at all.
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-online-softmax="strategy=wgmma fallback=false" --attnc-convert-to-gpu

func.func @lengths_wgmma(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %used: tensor<?xi32>) -> tensor<?x32x?x128xbf16> {
  // expected-error @+1 {{reads per-sequence K/V lengths; the loads of the mma_sync strategies stop at each sequence's length and those of wgmma do not}}
  %o = attnc.attention %q, %k, %v kv_lengths(%used : tensor<?xi32>) {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

// -----

func.func @paged_wgmma(%q: tensor<?x32x?x128xbf16>, %kp: tensor<?x64x8x128xbf16>, %vp: tensor<?x64x8x128xbf16>, %table: tensor<?x?xi32>) -> tensor<?x32x?x128xbf16> {
  %k = attnc.paged_kv %kp, %table {page_size = 64} : tensor<?x64x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  %v = attnc.paged_kv %vp, %table {page_size = 64} : tensor<?x64x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  // expected-error @+1 {{reads a paged K/V cache; the mma_sync strategies' loads look up each row's page and those of wgmma do not}}
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}

// -----

func.func @paged_k_only(%q: tensor<?x32x?x128xbf16>, %kp: tensor<?x64x8x128xbf16>, %v: tensor<?x8x?x128xbf16>, %table: tensor<?x?xi32>) -> tensor<?x32x?x128xbf16> {
  // expected-error @+1 {{is one of the K/V tensors of a flash form; the kernel reads a paged cache when K and V are both paged, through one block table with one page size}}
  %k = attnc.paged_kv %kp, %table {page_size = 64} : tensor<?x64x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}
