func.func @paged_wgmma(%q: tensor<?x32x?x128xbf16>, %kp: tensor<?x64x8x128xbf16>, %vp: tensor<?x64x8x128xbf16>, %table: tensor<?x?xi32>) -> tensor<?x32x?x128xbf16> {
  %k = attnc.paged_kv %kp, %table {page_size = 64} : tensor<?x64x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  %v = attnc.paged_kv %vp, %table {page_size = 64} : tensor<?x64x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}
