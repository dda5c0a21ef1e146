// Packed GQA forms whose head counts are known only at run time
// (--attnc-pack-gqa group-size=G): the kernels address a group's query
// heads with G in their code, run a CTA per K/V head (grid [Hkv]) and state
// H = G * Hkv in their contract (ratio(H, Hkv, G)) for the runtime to
// check; the combine kernel writes O per query head (grid [H]). A packing
// whose group size is itself dynamic is refused: the kernel needs G.
// RUN: attnc-opt %s -split-input-file --attnc-pack-gqa=group-size=4 --attnc-online-softmax="strategy=mma_sync block-q=16 block-kv=64" --attnc-split-kv --attnc-convert-to-gpu 2>&1 | FileCheck %s
// RUN: not attnc-opt %s -split-input-file --attnc-online-softmax="strategy=mma_sync block-q=16 block-kv=64" --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=DYN

// CHECK: gpu.module @decode_0_module
// CHECK-SAME: kind = "attention_partial"
// CHECK-SAME: tensor<"q", bf16, [B, H, Sq, 128], input
// CHECK-SAME: tensor<"k", bf16, [B, Hkv, Skv, 128], input
// CHECK-SAME: tensor<"o_partial", f32, [splits, B, H, Sq, 128], output
// CHECK-SAME: grid = {{\[}}[ceil_div(Sq, 4), splits], [Hkv], [B]]
// CHECK-SAME: constraints = [ratio(H, Hkv, 4), min(splits, 1), max(splits, 128)]
// CHECK-SAME: packed_heads = 4 : i64
// CHECK: gpu.module @decode_1_module
// CHECK-SAME: kind = "attention_combine"
// CHECK-SAME: tensor<"o", bf16, [B, H, Sq, 128], output
// CHECK-SAME: grid = {{\[}}[ceil_div(Sq, 16)], [H], [B]]
// DYN-NOT: error
func.func @decode(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                  %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.088388347648318447 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// A graph that packs Q itself, in groups of a run-time size %g.
// DYN: error: 'tensor.expand_shape' op packs the Q of a flash form in GQA groups of a size known only at run time; the kernel needs the group size G when compiled (--attnc-pack-gqa group-size)
func.func @dynamic_group(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                         %v: tensor<?x?x?x128xbf16>, %g: index) -> tensor<?x?x?x128xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x?x128xbf16>
  %hkv = tensor.dim %k, %c1 : tensor<?x?x?x128xbf16>
  %sq = tensor.dim %q, %c2 : tensor<?x?x?x128xbf16>
  %x = tensor.expand_shape %q [[0], [1, 2], [3], [4]] output_shape [%b, %hkv, %g, %sq, 128]
      : tensor<?x?x?x128xbf16> into tensor<?x?x?x?x128xbf16>
  %p = tensor.collapse_shape %x [[0], [1], [2, 3], [4]]
      : tensor<?x?x?x?x128xbf16> into tensor<?x?x?x128xbf16>
  %a = attnc.attention %p, %k, %v {scale = 0.088388347648318447 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  %u = tensor.expand_shape %a [[0], [1], [2, 3], [4]] output_shape [%b, %hkv, %g, %sq, 128]
      : tensor<?x?x?x128xbf16> into tensor<?x?x?x?x128xbf16>
  %o = tensor.collapse_shape %u [[0], [1, 2], [3], [4]]
      : tensor<?x?x?x?x128xbf16> into tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
