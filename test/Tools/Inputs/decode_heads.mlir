// Decoding with head counts known only at run time (attnc-compile.test
// packs it with --gqa-group).
func.func @decode(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                  %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.088388347648318447 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
