// Tiles whose shared memory exceeds what the chip gives one block are refused
// at compile time, not at launch: 128 query rows and 256 K/V rows of d = 128
// in two stages (with padded rows) need 306 KiB; sm_90a gives 227 KiB.
// RUN: attnc-opt %s -verify-diagnostics --attnc-online-softmax="block-q=128 block-kv=256 strategy=mma_sync" --attnc-convert-to-gpu

func.func @big_tiles(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{'scf.forall' op needs 313344 bytes of dynamic shared memory per block; sm_90a gives a block at most 232447 (choose smaller tiles)}}
  %o = attnc.attention %q, %k, %v {scale = 0.088 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
