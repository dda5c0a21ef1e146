// What a ragged batch needs, refused with the reason: Q and K/V ragged
// together, the result packed with Q's sequences, the cp.async loads of
// mma_sync or wgmma (not tensor maps), and no L2 groups.
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

func.func @wgmma_ws(%q: tensor<?x8x64xbf16>, %s: tensor<?xi32>, %e: tensor<?xi32>) -> tensor<?x8x64xbf16> {
  %qv = attnc.ragged_view %q, %s, %e : tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x?x64xbf16>
  // expected-error @+1 {{reads a ragged batch; the cp.async loads of mma_sync and wgmma address each sequence's packed rows and the tensor maps of wgmma_ws do not}}
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = wgmma_ws>}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
  %o = attnc.ragged_pack %ov, %s, %e : tensor<?x8x?x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

func.func @l2_groups(%q: tensor<?x8x64xbf16>, %s: tensor<?xi32>, %e: tensor<?xi32>) -> tensor<?x8x64xbf16> {
  %qv = attnc.ragged_view %q, %s, %e : tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x?x64xbf16>
  // expected-error @+1 {{reads a ragged batch with l2_group_mib = 8 in its flash config; heads are grouped by the bytes of their K/V rows, which a ragged batch's lengths do not give}}
  %ov = attnc.attention %qv, %qv, %qv {scale = 0.125 : f64, config = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = wgmma, l2_group_mib = 8>}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
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
