// What a ragged batch needs, refused with the reason: Q and K/V ragged
// together, the result packed with Q's sequences, and the mma_sync loads.
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-online-softmax --attnc-convert-to-gpu

func.func @dense_kv(%q: tensor<?x8x64xbf16>, %k: tensor<?x8x?x64xbf16>, %s: tensor<?xi32>, %e: tensor<?xi32>) -> tensor<?x8x64xbf16> {
  %qv = attnc.ragged_view %q, %s, %e : tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x?x64xbf16>
  // expected-error @+1 {{attends over a ragged batch; --attnc-online-softmax tiles one whose Q, K and V are attnc.ragged_view and whose result is read only by an attnc.ragged_pack of Q's sequences}}
  %ov = attnc.attention %qv, %k, %k {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
  %o = attnc.ragged_pack %ov, %s, %e : tensor<?x8x?x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

func.func @other_pack(%q: tensor<?x8x64xbf16>, %s: tensor<?xi32>, %e: tensor<?xi32>, %e2: tensor<?xi32>) -> tensor<?x8x64xbf16> {
  %qv = attnc.ragged_view %q, %s, %e : tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x?x64xbf16>
  // expected-error @+1 {{attends over a ragged batch}}
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
  %o = attnc.ragged_pack %ov, %s, %e2 : tensor<?x8x?x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

func.func @wgmma(%q: tensor<?x8x64xbf16>, %s: tensor<?xi32>, %e: tensor<?xi32>) -> tensor<?x8x64xbf16> {
  %qv = attnc.ragged_view %q, %s, %e : tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x?x64xbf16>
  // expected-error @+1 {{reads a ragged batch; the mma_sync strategies' loads address each sequence's packed rows and those of wgmma do not}}
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = wgmma>}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
  %o = attnc.ragged_pack %ov, %s, %e : tensor<?x8x?x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

func.func @dropout(%q: tensor<?x8x64xbf16>, %s: tensor<?xi32>, %e: tensor<?xi32>, %seed: i64) -> tensor<?x8x64xbf16> {
  %qv = attnc.ragged_view %q, %s, %e : tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x?x64xbf16>
  // expected-error @+1 {{drops probabilities in a ragged batch; --attnc-online-softmax numbers dropout's counters by the rows of a padded batch only}}
  %ov = attnc.attention %qv, %qv, %qv dropout(%seed, %seed) {dropout_probability = 0.1 : f64, scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
  %o = attnc.ragged_pack %ov, %s, %e : tensor<?x8x?x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}
