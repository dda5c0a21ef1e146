// One case per verifier diagnostic of the attnc dialect.
// RUN: attnc-opt %s -split-input-file -verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<4x8xf32>, %b: tensor<5x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{operand 'rhs' of shape [5x8] does not broadcast with 'lhs' [4x8]: static extents must be equal or 1}}
  %0 = attnc.add %a, %b : tensor<4x8xf32>, tensor<5x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @broadcast_result(%a: tensor<4x1xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{result shape [4x1] is not the broadcast of the operands' shapes, [4x8]}}
  %0 = attnc.mul %a, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @binary_element_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{operands 'lhs' ('f32') and 'rhs' ('bf16') must have the same element type}}
  %0 = attnc.sub %a, %b : tensor<4xf32>, tensor<4xbf16> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @binary_result_type(%a: tensor<4xf32>) -> tensor<4xbf16> {
  // expected-error @+1 {{result element type 'bf16' must equal the operands' element type 'f32'}}
  %0 = attnc.max %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

func.func @integer_division_by_zero(%a: tensor<4xi64>) -> tensor<4xi64> {
  %z = arith.constant dense<[1, 0, 2, 3]> : tensor<4xi64>
  // expected-error @+1 {{operand 'rhs' is a constant with a zero element: integer division by zero}}
  %0 = attnc.div %a, %z : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @and_of_floats(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = attnc.and %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @abs_of_mask(%a: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{operand #0 must be ranked tensor of bfloat16 type or 16-bit float or 32-bit float or 64-bit float or 64-bit signless integer values}}
  %0 = attnc.abs %a : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) -> tensor<8xbf16> {
  // expected-error @+1 {{operand 'input' and the result must have the same shape; cast changes only the element type}}
  %0 = attnc.cast %a : tensor<4xf32> to tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

func.func @iota_dimension(%a: tensor<4x4xf32>) -> tensor<4x4xi64> {
  // expected-error @+1 {{attribute 'dimension' (2) must be less than the rank of 'like' (2)}}
  %0 = attnc.iota %a {dimension = 2 : i64} : tensor<4x4xf32> -> tensor<4x4xi64>
  return %0 : tensor<4x4xi64>
}

// -----

func.func @iota_shape(%a: tensor<4x4xf32>) -> tensor<4x8xi64> {
  // expected-error @+1 {{result must have the shape of operand 'like'}}
  %0 = attnc.iota %a {dimension = 1 : i64} : tensor<4x4xf32> -> tensor<4x8xi64>
  return %0 : tensor<4x8xi64>
}

// -----

func.func @cmp_element_types(%a: tensor<4xi64>, %b: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{operands 'lhs' ('i64') and 'rhs' ('f32') must have the same element type}}
  %0 = attnc.cmp lt, %a, %b : tensor<4xi64>, tensor<4xf32> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @select_element_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<f16>) -> tensor<4xf32> {
  // expected-error @+1 {{operands 'true_value' ('f32') and 'false_value' ('f16') and the result must have the same element type}}
  %0 = attnc.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f16> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_broadcast(%c: tensor<3xi1>, %a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand 'true_value' of shape [4] does not broadcast with 'condition' [3]: static extents must be equal or 1}}
  %0 = attnc.select %c, %a, %b : tensor<3xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dropout_probability(%x: tensor<4xbf16>, %s: i64) -> tensor<4xbf16> {
  // expected-error @+1 {{attribute 'probability' must be in [0, 1), got 1}}
  %0 = attnc.dropout %x, %s, %s {probability = 1.0 : f64} : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

func.func @reduce_rank0(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{operand 'input' must have rank >= 1: the last dimension is reduced}}
  %0 = attnc.reduce_max %x : tensor<f32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @reduce_shape(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result shape [4] must be the input's with the last dimension kept as 1, [4x1]}}
  %0 = attnc.reduce_sum %x : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_element_type(%x: tensor<4x8xbf16>) -> tensor<4x1xf32> {
  // expected-error @+1 {{result element type must equal the input's}}
  %0 = attnc.reduce_sum %x : tensor<4x8xbf16> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @norm_rank0(%x: tensor<bf16>, %g: tensor<4xbf16>) -> tensor<bf16> {
  // expected-error @+1 {{operand 'input' must have rank >= 1}}
  %0 = attnc.rms_norm %x, %g {epsilon = 1.0e-6 : f64} : tensor<bf16>, tensor<4xbf16> -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

func.func @norm_epsilon(%x: tensor<2x4xbf16>, %g: tensor<4xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{attribute 'epsilon' must be positive and finite, got 0}}
  %0 = attnc.rms_norm %x, %g {epsilon = 0.0 : f64} : tensor<2x4xbf16>, tensor<4xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @norm_epsilon_inf(%x: tensor<2x4xbf16>, %g: tensor<4xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{attribute 'epsilon' must be positive and finite, got INF}}
  %0 = attnc.rms_norm %x, %g {epsilon = 0x7FF0000000000000 : f64} : tensor<2x4xbf16>, tensor<4xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @norm_epsilon_nan(%x: tensor<2x4xbf16>, %g: tensor<4xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{attribute 'epsilon' must be positive and finite, got nan}}
  %0 = attnc.rms_norm %x, %g {epsilon = 0x7FF8000000000000 : f64} : tensor<2x4xbf16>, tensor<4xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @norm_param_rank(%x: tensor<2x4xbf16>, %g: tensor<1x4xbf16>, %b: tensor<4xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{operand 'gamma' must have rank 1, got rank 2}}
  %0 = attnc.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f64} : tensor<2x4xbf16>, tensor<1x4xbf16>, tensor<4xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @norm_param_extent(%x: tensor<2x4xbf16>, %g: tensor<4xbf16>, %b: tensor<8xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{operand 'beta' has extent 8 but the normalized (last) dimension of 'input' has 4}}
  %0 = attnc.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f64} : tensor<2x4xbf16>, tensor<4xbf16>, tensor<8xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @norm_param_type(%x: tensor<2x4xbf16>, %g: tensor<4xf32>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{operand 'gamma' must have the element type of 'input'}}
  %0 = attnc.rms_norm %x, %g {epsilon = 1.0e-6 : f64} : tensor<2x4xbf16>, tensor<4xf32> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @norm_result(%x: tensor<2x4xbf16>, %g: tensor<4xbf16>) -> tensor<2x4xf32> {
  // expected-error @+1 {{result must have the type of operand 'input'}}
  %0 = attnc.rms_norm %x, %g {epsilon = 1.0e-6 : f64} : tensor<2x4xbf16>, tensor<4xbf16> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_rank(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{operand 'lhs' must have rank >= 2, got 1}}
  %0 = attnc.matmul %a, %a : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

func.func @matmul_ranks(%a: tensor<4x4xbf16>, %b: tensor<2x4x4xbf16>) -> tensor<4x4xbf16> {
  // expected-error @+1 {{operands 'lhs', 'rhs' and the result must have equal ranks, got 2, 3 and 2}}
  %0 = attnc.matmul %a, %b : tensor<4x4xbf16>, tensor<2x4x4xbf16> -> tensor<4x4xbf16>
  return %0 : tensor<4x4xbf16>
}

// -----

func.func @matmul_operand_types(%a: tensor<4x4xbf16>, %b: tensor<4x4xf16>) -> tensor<4x4xf32> {
  // expected-error @+1 {{operands 'lhs' and 'rhs' must have the same element type}}
  %0 = attnc.matmul %a, %b : tensor<4x4xbf16>, tensor<4x4xf16> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @matmul_result_type(%a: tensor<4x4xbf16>) -> tensor<4x4xf16> {
  // expected-error @+1 {{result element type must be the operands' or f32}}
  %0 = attnc.matmul %a, %a : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<4x4xf16>
  return %0 : tensor<4x4xf16>
}

// -----

func.func @matmul_batch(%a: tensor<2x4x4xbf16>, %b: tensor<3x4x4xbf16>) -> tensor<2x4x4xbf16> {
  // expected-error @+1 {{batch dimension 0 differs: lhs 2, rhs 3, result 2}}
  %0 = attnc.matmul %a, %b : tensor<2x4x4xbf16>, tensor<3x4x4xbf16> -> tensor<2x4x4xbf16>
  return %0 : tensor<2x4x4xbf16>
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xbf16>, %b: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{contraction dimension of 'lhs' (8) differs from that of 'rhs' (4)}}
  %0 = attnc.matmul %a, %b : tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @matmul_result(%a: tensor<4x8xbf16>, %b: tensor<16x8xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{result must be [..., 4, 16] (rows of 'lhs', columns of 'rhs')}}
  %0 = attnc.matmul %a, %b {transpose_b} : tensor<4x8xbf16>, tensor<16x8xbf16> -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @repeat_dimension(%k: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{attribute 'dimension' (2) must be less than the rank of 'input' (2)}}
  %0 = attnc.repeat_interleave %k {dimension = 2 : i64, repeats = 2 : i64} : tensor<2x4xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @repeat_rank(%k: tensor<2x4xbf16>) -> tensor<2x4x1xbf16> {
  // expected-error @+1 {{result must have the rank and element type of 'input'}}
  %0 = attnc.repeat_interleave %k {dimension = 0 : i64, repeats = 2 : i64} : tensor<2x4xbf16> -> tensor<2x4x1xbf16>
  return %0 : tensor<2x4x1xbf16>
}

// -----

func.func @repeat_extent(%k: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  // expected-error @+1 {{result dimension 0 must be 4, got 2}}
  %0 = attnc.repeat_interleave %k {dimension = 0 : i64, repeats = 2 : i64} : tensor<2x4xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----

func.func @attention_rank(%q: tensor<?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{operand 'query' must have rank 4 [batch, heads, seq, head_dim], got rank 3}}
  %0 = attnc.attention %q, %k, %k {scale = 1.0 : f64} : tensor<?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %0 : tensor<?x?x?x128xbf16>
}

// -----

func.func @attention_kv_lengths_batch(%q: tensor<2x4x1x128xbf16>, %k: tensor<2x4x?x128xbf16>, %l: tensor<3xi32>) -> tensor<2x4x1x128xbf16> {
  // expected-error @+1 {{operand 'kv_lengths' must be [batch], one K/V length per sequence of 'query'}}
  %0 = attnc.attention %q, %k, %k kv_lengths(%l : tensor<3xi32>) {scale = 1.0 : f64} : tensor<2x4x1x128xbf16>, tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16> -> tensor<2x4x1x128xbf16>
  return %0 : tensor<2x4x1x128xbf16>
}

// -----

func.func @attention_kv_lengths_rank(%q: tensor<?x4x1x128xbf16>, %k: tensor<?x4x?x128xbf16>, %l: tensor<?x?xi32>) -> tensor<?x4x1x128xbf16> {
  // expected-error @+1 {{operand 'kv_lengths' must be [batch], one K/V length per sequence of 'query'}}
  %0 = attnc.attention %q, %k, %k kv_lengths(%l : tensor<?x?xi32>) {scale = 1.0 : f64} : tensor<?x4x1x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x1x128xbf16>
  return %0 : tensor<?x4x1x128xbf16>
}

// -----

func.func @attention_kv_lengths_type(%q: tensor<?x4x1x128xbf16>, %k: tensor<?x4x?x128xbf16>, %l: tensor<?xi64>) -> tensor<?x4x1x128xbf16> {
  // expected-error @+1 {{'attnc.attention' op operand #3 must be ranked tensor of 32-bit signless integer values, but got 'tensor<?xi64>'}}
  %0 = attnc.attention %q, %k, %k kv_lengths(%l : tensor<?xi64>) {scale = 1.0 : f64} : tensor<?x4x1x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x1x128xbf16>
  return %0 : tensor<?x4x1x128xbf16>
}

// -----

func.func @attention_dropout_no_probability(%q: tensor<?x4x?x128xbf16>, %seed: i64, %offset: i64) -> tensor<?x4x?x128xbf16> {
  // expected-error @+1 {{has dropout operands but no 'dropout_probability'}}
  %0 = attnc.attention %q, %q, %q dropout(%seed, %offset) {scale = 1.0 : f64} : tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x?x128xbf16>
  return %0 : tensor<?x4x?x128xbf16>
}

// -----

func.func @attention_dropout_no_operands(%q: tensor<?x4x?x128xbf16>) -> tensor<?x4x?x128xbf16> {
  // expected-error @+1 {{has 'dropout_probability' but no dropout operands}}
  %0 = attnc.attention %q, %q, %q {dropout_probability = 0.1 : f64, scale = 1.0 : f64} : tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x?x128xbf16>
  return %0 : tensor<?x4x?x128xbf16>
}

// -----

// p = 0 is no dropout (the fusion leaves the op out); p = 1 drops all.
func.func @attention_dropout_probability(%q: tensor<?x4x?x128xbf16>, %seed: i64, %offset: i64) -> tensor<?x4x?x128xbf16> {
  // expected-error @+1 {{attribute 'dropout_probability' must be in (0, 1), got 1}}
  %0 = attnc.attention %q, %q, %q dropout(%seed, %offset) {dropout_probability = 1.0 : f64, scale = 1.0 : f64} : tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16> -> tensor<?x4x?x128xbf16>
  return %0 : tensor<?x4x?x128xbf16>
}

// -----

// The custom form takes dropout's operands together; the generic one can
// leave the offset out.
func.func @attention_dropout_offset(%q: tensor<?x4x?x128xbf16>, %seed: i64) -> tensor<?x4x?x128xbf16> {
  // expected-error @+1 {{has dropout operands without 'offset'; dropout takes all of them (seed, offset)}}
  %0 = "attnc.attention"(%q, %q, %q, %seed) <{dropout_probability = 0.1 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0>, scale = 1.0 : f64}> ({
  }, {
  }) : (tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, i64) -> tensor<?x4x?x128xbf16>
  return %0 : tensor<?x4x?x128xbf16>
}

// -----

func.func @online_dropout_rows(%q: tensor<?x128xbf16>, %acc: tensor<?x128xf32>, %m: tensor<?xf32>, %i: index, %seed: i64) -> tensor<?x128xf32> {
  // expected-error @+1 {{has dropout operands without 'row_words'; dropout takes all of them (seed, offset, row, row_words)}}
  %a:3 = "attnc.online_attention"(%q, %q, %q, %acc, %m, %m, %i, %i, %i, %i, %seed, %seed, %i) <{dropout_probability = 0.1 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0>, scale = 1.0 : f64}> ({
  }, {
  }) : (tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>, index, index, index, index, i64, i64, index) -> (tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>)
  return %a#0 : tensor<?x128xf32>
}

// -----

func.func @attention_result_rank(%q: tensor<?x?x?x128xbf16>) -> tensor<?x?x128xbf16> {
  // expected-error @+1 {{result must have rank 4 [batch, heads, seq, head_dim]}}
  %0 = attnc.attention %q, %q, %q {scale = 1.0 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x128xbf16>
  return %0 : tensor<?x?x128xbf16>
}

// -----

func.func @attention_types(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{operands 'query', 'key', 'value' and the result must have the same element type}}
  %0 = attnc.attention %q, %k, %k {scale = 1.0 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xbf16>
  return %0 : tensor<?x?x?x128xbf16>
}

// -----

func.func @attention_dynamic_head_dim(%q: tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16> {
  // expected-error @+1 {{head dimensions of 'query' and 'value' must be static}}
  %0 = attnc.attention %q, %q, %q {scale = 1.0 : f64} : tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16> -> tensor<?x?x?x?xbf16>
  return %0 : tensor<?x?x?x?xbf16>
}

// -----

func.func @attention_key_head_dim(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{head dimension of 'key' (64) must equal that of 'query' (128)}}
  %0 = attnc.attention %q, %k, %q {scale = 1.0 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %0 : tensor<?x?x?x128xbf16>
}

// -----

func.func @attention_batch(%q: tensor<2x?x?x128xbf16>, %k: tensor<3x?x?x128xbf16>) -> tensor<2x?x?x128xbf16> {
  // expected-error @+1 {{batch dimension of 'key' and 'value' must equal that of 'query'}}
  %0 = attnc.attention %q, %k, %k {scale = 1.0 : f64} : tensor<2x?x?x128xbf16>, tensor<3x?x?x128xbf16>, tensor<3x?x?x128xbf16> -> tensor<2x?x?x128xbf16>
  return %0 : tensor<2x?x?x128xbf16>
}

// -----

func.func @attention_kv(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x16x128xbf16>, %v: tensor<?x?x32x128xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{'key' and 'value' must have the same heads and sequence length}}
  %0 = attnc.attention %q, %k, %v {scale = 1.0 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x16x128xbf16>, tensor<?x?x32x128xbf16> -> tensor<?x?x?x128xbf16>
  return %0 : tensor<?x?x?x128xbf16>
}

// -----

func.func @attention_gqa(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x3x?x128xbf16>) -> tensor<?x8x?x128xbf16> {
  // expected-error @+1 {{query heads (8) must be a multiple of key/value heads (3)}}
  %0 = attnc.attention %q, %k, %k {scale = 1.0 : f64} : tensor<?x8x?x128xbf16>, tensor<?x3x?x128xbf16>, tensor<?x3x?x128xbf16> -> tensor<?x8x?x128xbf16>
  return %0 : tensor<?x8x?x128xbf16>
}

// -----

func.func @attention_result(%q: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{result must be [batch, query heads, query seq, value head_dim]}}
  %0 = attnc.attention %q, %q, %v {scale = 1.0 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x128xbf16>
  return %0 : tensor<?x?x?x128xbf16>
}

// -----

func.func @attention_scale(%q: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{attribute 'scale' must be positive and finite, got 0}}
  %0 = attnc.attention %q, %q, %q {scale = 0.0 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %0 : tensor<?x?x?x128xbf16>
}

// -----

func.func @attention_scale_inf(%q: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{attribute 'scale' must be positive and finite, got INF}}
  %0 = attnc.attention %q, %q, %q {scale = 0x7FF0000000000000 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %0 : tensor<?x?x?x128xbf16>
}

// -----

func.func @online_attention_scale_nan(%q: tensor<64x64xbf16>, %acc: tensor<64x64xf32>, %m: tensor<64xf32>, %i: index) -> tensor<64x64xf32> {
  // expected-error @+1 {{attribute 'scale' must be positive and finite, got nan}}
  %a, %mm, %l = attnc.online_attention %q, %q, %q, %acc, %m, %m at [%i, %i, %i, %i] {scale = 0x7FF8000000000000 : f64} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
  return %a : tensor<64x64xf32>
}

// -----

func.func @online_tile_rank(%q: tensor<1x?x128xbf16>, %k: tensor<?x128xbf16>, %acc: tensor<?x128xf32>, %m: tensor<?xf32>, %i: index) {
  // expected-error @+1 {{operands 'query', 'key', 'value' and 'acc' must be rank-2 tiles}}
  %a:3 = attnc.online_attention %q, %k, %k, %acc, %m, %m at [%i, %i, %i, %i] {scale = 1.0 : f64}
      : tensor<1x?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_stat_rank(%q: tensor<?x128xbf16>, %acc: tensor<?x128xf32>, %m: tensor<?x1xf32>, %i: index) {
  // expected-error @+1 {{operands 'max' and 'sum' must be rank-1 row vectors}}
  %a:3 = attnc.online_attention %q, %q, %q, %acc, %m, %m at [%i, %i, %i, %i] {scale = 1.0 : f64}
      : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xf32>, tensor<?x1xf32>, tensor<?x1xf32>
  return
}

// -----

func.func @online_head_dim(%q: tensor<?x128xbf16>, %k: tensor<?x64xbf16>, %acc: tensor<?x128xf32>, %m: tensor<?xf32>, %i: index) {
  // expected-error @+1 {{head dimension of 'query' and 'key' must be equal and static}}
  %a:3 = attnc.online_attention %q, %k, %q, %acc, %m, %m at [%i, %i, %i, %i] {scale = 1.0 : f64}
      : tensor<?x128xbf16>, tensor<?x64xbf16>, tensor<?x128xbf16>, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_kv_rows(%q: tensor<?x128xbf16>, %k: tensor<64x128xbf16>, %v: tensor<32x128xbf16>, %acc: tensor<?x128xf32>, %m: tensor<?xf32>, %i: index) {
  // expected-error @+1 {{'key' and 'value' tiles must have the same rows}}
  %a:3 = attnc.online_attention %q, %k, %v, %acc, %m, %m at [%i, %i, %i, %i] {scale = 1.0 : f64}
      : tensor<?x128xbf16>, tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_acc_shape(%q: tensor<?x128xbf16>, %acc: tensor<?x64xf32>, %m: tensor<?xf32>, %i: index) {
  // expected-error @+1 {{'acc' must be [query rows, value head_dim] and 'max', 'sum' [query rows]}}
  %a:3 = attnc.online_attention %q, %q, %q, %acc, %m, %m at [%i, %i, %i, %i] {scale = 1.0 : f64}
      : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_f32(%q: tensor<?x128xbf16>, %acc: tensor<?x128xbf16>, %m: tensor<?xf32>, %i: index) {
  // expected-error @+1 {{'acc', 'max' and 'sum' must be f32: the recurrence runs in f32}}
  %a:3 = attnc.online_attention %q, %q, %q, %acc, %m, %m at [%i, %i, %i, %i] {scale = 1.0 : f64}
      : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_types(%q: tensor<?x128xbf16>, %k: tensor<?x128xf16>, %acc: tensor<?x128xf32>, %m: tensor<?xf32>, %i: index) {
  // expected-error @+1 {{'query', 'key' and 'value' must have the same element type}}
  %a:3 = attnc.online_attention %q, %k, %k, %acc, %m, %m at [%i, %i, %i, %i] {scale = 1.0 : f64}
      : tensor<?x128xbf16>, tensor<?x128xf16>, tensor<?x128xf16>, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @finalize_rank(%acc: tensor<?xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{'acc' must be rank 2, 'max' and 'sum' rank 1}}
  %o, %l = attnc.online_attention_finalize %acc, %m, %m : tensor<?xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?xbf16>, tensor<?xf32>
  return
}

// -----

func.func @finalize_shape(%acc: tensor<?x128xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{result must have the shape of 'acc'}}
  %o, %l = attnc.online_attention_finalize %acc, %m, %m : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x64xbf16>, tensor<?xf32>
  return
}

// -----

func.func @finalize_lse(%acc: tensor<?x128xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{'sum' and the logsumexp result must have the type of 'max'}}
  %o, %l = attnc.online_attention_finalize %acc, %m, %m : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x128xbf16>, tensor<?xf16>
  return
}

// -----

func.func @finalize_rows(%acc: tensor<16x128xf32>, %m: tensor<8xf32>) {
  // expected-error @+1 {{'max' must have one entry per row of 'acc'}}
  %o, %l = attnc.online_attention_finalize %acc, %m, %m : tensor<16x128xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<16x128xbf16>, tensor<8xf32>
  return
}

// -----

func.func @merge_rank(%acc: tensor<?xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{'acc' must be rank 2, 'max' and 'sum' rank 1}}
  %a, %b, %c = attnc.online_attention_merge %acc, %m, %m, %acc, %m : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @merge_types(%acc: tensor<?x128xf32>, %m: tensor<?xf32>, %o: tensor<?x128xbf16>) {
  // expected-error @+1 {{'acc', 'partial' and the row vectors 'max', 'sum' and 'partial_lse' must be f32, the row vectors of one type}}
  %a, %b, %c = attnc.online_attention_merge %acc, %m, %m, %o, %m : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x128xbf16>, tensor<?xf32>
  return
}

// -----

func.func @merge_partial_shape(%acc: tensor<?x128xf32>, %m: tensor<?xf32>, %o: tensor<?x64xf32>) {
  // expected-error @+1 {{'partial' must have the shape of 'acc' (the same rows and value columns)}}
  %a, %b, %c = attnc.online_attention_merge %acc, %m, %m, %o, %m : tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>, tensor<?xf32>
  return
}

// -----

func.func @merge_rows(%acc: tensor<16x128xf32>, %m: tensor<8xf32>) {
  // expected-error @+1 {{'max' must have one entry per row of 'acc'}}
  %a, %b, %c = attnc.online_attention_merge %acc, %m, %m, %acc, %m : tensor<16x128xf32>, tensor<8xf32>, tensor<8xf32>, tensor<16x128xf32>, tensor<8xf32>
  return
}

// -----

func.func @kv_split_count_max(%n: index) -> index {
  // expected-error @+1 {{attribute 'max_splits' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 128}}
  %s = attnc.kv_split_count %n, %n {max_splits = 256, ctas_per_sm = 1}
  return %s : index
}

// -----

func.func @id_tile_bounds_types(%dq: tensor<?x?xi64>, %dk: tensor<?x?xi32>, %i: index) -> index {
  // expected-error @+1 {{operands 'query_ids' and 'key_ids' must hold ids of one type, got 'i64' and 'i32'}}
  %f, %u, %ue, %e = attnc.id_tile_bounds %dq[%i] at 1 rows %i + %i, %dk[%i] at 1 keys %i tiles %i to %i block_kv 64 : tensor<?x?xi64>, tensor<?x?xi32>
  return %f : index
}

// -----

func.func @id_tile_bounds_dim(%dq: tensor<?x?xi64>, %i: index) -> index {
  // expected-error @+1 {{'key_dim' (2) must name a dimension of 'key_ids' (rank 2)}}
  %f, %u, %ue, %e = attnc.id_tile_bounds %dq[%i] at 1 rows %i + %i, %dq[%i] at 2 keys %i tiles %i to %i block_kv 64 : tensor<?x?xi64>, tensor<?x?xi64>
  return %f : index
}

// -----

func.func @id_tile_bounds_indices(%dq: tensor<?x?xi64>, %i: index) -> index {
  // expected-error @+1 {{'query_indices' must index every dimension of 'query_ids' but 'query_dim': expected 1, got 2}}
  %f, %u, %ue, %e = attnc.id_tile_bounds %dq[%i, %i] at 1 rows %i + %i, %dq[%i] at 1 keys %i tiles %i to %i block_kv 64 : tensor<?x?xi64>, tensor<?x?xi64>
  return %f : index
}

// -----

func.func @id_tile_bounds_block(%dq: tensor<?x?xi64>, %i: index) -> index {
  // expected-error @+1 {{attribute 'block_kv' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %f, %u, %ue, %e = attnc.id_tile_bounds %dq[%i] at 1 rows %i + %i, %dq[%i] at 1 keys %i tiles %i to %i block_kv 0 : tensor<?x?xi64>, tensor<?x?xi64>
  return %f : index
}

// -----

func.func @fusion_arg_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body must have one argument per input (1), got 2}}
  %0 = attnc.fusion (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    attnc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_arg_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body argument 0 has type 'tensor<8xf32>' but input 0 has type 'tensor<4xf32>'}}
  %0 = attnc.fusion (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<8xf32>):
    %c = arith.constant dense<1.0> : tensor<4xf32>
    attnc.yield %c : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attnc.yield operand types must equal the fusion's result types}}
  %0 = attnc.fusion (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = arith.constant dense<1.0> : tensor<8xf32>
    attnc.yield %c : tensor<8xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_body_op(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = attnc.fusion (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    // expected-error @+1 {{'attnc.matmul' op is not an elementwise, broadcast or row op and cannot be inside attnc.fusion}}
    %m = attnc.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    attnc.yield %m : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{block_q and block_kv must be positive, got 0 and 64}}
func.func @flash_config_block() attributes {c = #attnc.flash_config<block_q = 0, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync>} { return }

// -----

// expected-error @+1 {{warps (3) must be positive and divide block_q (256)}}
func.func @flash_config_warps() attributes {c = #attnc.flash_config<block_q = 256, block_kv = 64, warps = 3, stages = 2, strategy = mma_sync>} { return }

// -----

// expected-error @+1 {{key_warps (3) must be positive and divide warps (4) and block_kv (64)}}
func.func @flash_config_key_warps() attributes {c = #attnc.flash_config<block_q = 16, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync, key_warps = 3>} { return }

// -----

// expected-error @+1 {{warps / key_warps (2) must divide block_q (17)}}
func.func @flash_config_key_warps_rows() attributes {c = #attnc.flash_config<block_q = 17, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync, key_warps = 2>} { return }

// -----

// expected-error @+1 {{expected 'key_warps', 'interleave_kv', 'overlap_pv', 'shared_p', 'mma_row_sums', 'l2_group_mib' or 'fallback' (each at most once, in that order), got 'key_warps'}}
func.func @flash_config_tail_order() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned>, key_warps = 2>} { return }

// -----

// expected-error @+1 {{expected 'key_warps', 'interleave_kv', 'overlap_pv', 'shared_p', 'mma_row_sums', 'l2_group_mib' or 'fallback' (each at most once, in that order), got 'interleave_kv'}}
func.func @flash_config_interleave_twice() attributes {c = #attnc.flash_config<block_q = 16, block_kv = 128, warps = 4, stages = 3, strategy = mma_sync, interleave_kv, interleave_kv>} { return }

// -----

// expected-error @+1 {{overlap_pv needs a wgmma strategy (asynchronous warpgroup MMAs), got mma_sync}}
func.func @flash_config_overlap_mma_sync() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync, overlap_pv>} { return }

// -----

// expected-error @+1 {{overlap_pv with strategy wgmma needs stages >= 3 (a step's V stays in use during the next step), got 2}}
func.func @flash_config_overlap_wgmma_stages() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma, overlap_pv>} { return }

// -----

// expected-error @+1 {{expected 'key_warps', 'interleave_kv', 'overlap_pv', 'shared_p', 'mma_row_sums', 'l2_group_mib' or 'fallback' (each at most once, in that order), got 'interleave_kv'}}
func.func @flash_config_overlap_order() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, overlap_pv, interleave_kv>} { return }

// -----

// expected-error @+1 {{shared_p needs overlap_pv (P goes through shared memory so that a step's softmax runs before the previous step's P V is waited for)}}
func.func @flash_config_shared_p_no_overlap() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, shared_p>} { return }

// -----

// expected-error @+1 {{shared_p needs strategy wgmma_ws or wgmma_ws_persistent, got wgmma}}
func.func @flash_config_shared_p_wgmma() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 3, strategy = wgmma, overlap_pv, shared_p>} { return }

// -----

// expected-error @+1 {{expected 'key_warps', 'interleave_kv', 'overlap_pv', 'shared_p', 'mma_row_sums', 'l2_group_mib' or 'fallback' (each at most once, in that order), got 'overlap_pv'}}
func.func @flash_config_shared_p_order() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, shared_p, overlap_pv>} { return }

// -----

// expected-error @+1 {{mma_row_sums needs a wgmma strategy (the sums are taken from the packed probabilities a warpgroup P V reads from registers), got mma_sync}}
func.func @flash_config_mma_row_sums_mma_sync() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync, mma_row_sums>} { return }

// -----

// expected-error @+1 {{mma_row_sums needs P in registers (the mma.sync operands), not shared_p}}
func.func @flash_config_mma_row_sums_shared_p() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, overlap_pv, shared_p, mma_row_sums>} { return }

// -----

// expected-error @+1 {{expected 'key_warps', 'interleave_kv', 'overlap_pv', 'shared_p', 'mma_row_sums', 'l2_group_mib' or 'fallback' (each at most once, in that order), got 'overlap_pv'}}
func.func @flash_config_mma_row_sums_order() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, mma_row_sums, overlap_pv>} { return }

// -----

// expected-error @+1 {{l2_group_mib must be in [0, 1048576] (MiB; 0: no groups), got -4}}
func.func @flash_config_l2_group_negative() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, l2_group_mib = -4>} { return }

// -----

// expected-error @+1 {{l2_group_mib orders a forward grid's heads; wgmma_persistent is a backward strategy}}
func.func @flash_config_l2_group_backward_persistent() attributes {c = #attnc.flash_config<block_q = 64, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_persistent, l2_group_mib = 16>} { return }

// -----

// expected-error @+1 {{a fallback lowers its config's grid and has no l2_group_mib of its own}}
func.func @flash_config_l2_group_fallback() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned, l2_group_mib = 16>>} { return }

// -----

// expected-error @+1 {{expected 'key_warps', 'interleave_kv', 'overlap_pv', 'shared_p', 'mma_row_sums', 'l2_group_mib' or 'fallback' (each at most once, in that order), got 'overlap_pv'}}
func.func @flash_config_l2_group_order() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, l2_group_mib = 16, overlap_pv>} { return }

// -----

// expected-error @+1 {{interleave_kv needs an mma_sync strategy (its cp.async pipeline), got wgmma}}
func.func @flash_config_interleave_wgmma() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 3, strategy = wgmma, interleave_kv>} { return }

// -----

// expected-error @+1 {{interleave_kv needs stages >= 2 (a ring of single K/V tile buffers, one computed while the others load), got 1}}
func.func @flash_config_interleave_stages() attributes {c = #attnc.flash_config<block_q = 16, block_kv = 128, warps = 4, stages = 1, strategy = mma_sync, key_warps = 4, interleave_kv>} { return }

// -----

// expected-error @+1 {{stages must be at least 1, got 0}}
func.func @flash_config_stages() attributes {c = #attnc.flash_config<block_q = 256, block_kv = 64, warps = 8, stages = 0, strategy = mma_sync>} { return }

// -----

// expected-error @+1 {{fallback tiles (block_q = 128, block_kv = 64) must be the config's (128, 128): both kernels lower the same loops}}
func.func @flash_config_fallback_tiles() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, fallback = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync_unaligned>>} { return }

// -----

// expected-error @+1 {{a fallback has no fallback of its own}}
func.func @flash_config_fallback_chain() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, fallback = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync, fallback = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync_unaligned>>>} { return }

// -----

// expected-error @+1 {{fallback strategy wgmma_ws is the config's own}}
func.func @flash_config_fallback_same() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, fallback = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws>>} { return }

// -----

// expected-error @+1 {{'attnc.flash_config' must be a #attnc.flash_config, got 4 : i64}}
func.func @flash_config_kind() attributes {attnc.flash_config = 4} { return }

// -----

// expected-error @+1 {{'attnc.flash_config' belongs on the scf.forall of a flash form}}
func.func @flash_config_owner() attributes {attnc.flash_config = #attnc.flash_config<block_q = 256, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync>} { return }

// -----

// expected-error @+1 {{'attnc.unsplit' must be a flat symbol reference to a function, got "f"}}
func.func @unsplit_kind() attributes {attnc.unsplit = "f"} { return }

// -----

// expected-error @+1 {{'attnc.unsplit' belongs on the scf.forall of a flash form}}
func.func @unsplit_owner() attributes {attnc.unsplit = @f} { return }

// -----

//===----------------------------------------------------------------------===//
// Mask and score regions of attnc.attention and attnc.online_attention
//===----------------------------------------------------------------------===//

func.func @mask_region_args(%q: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  // expected-error @+1 {{'attnc.attention' op region 'mask' must take (index, index, index, index)}}
  %0 = attnc.attention %q, %q, %q {scale = 1.0 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%i: index, %j: index):
        %keep = arith.cmpi ule, %j, %i : index
        attnc.yield %keep : i1
      }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

func.func @mask_region_yield(%q: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  // expected-error @+1 {{'attnc.attention' op region 'mask' must end in attnc.yield of one 'i1'}}
  %0 = attnc.attention %q, %q, %q {scale = 1.0 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %zero = arith.constant 0.0 : f32
        attnc.yield %zero : f32
      }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

func.func @score_region_args(%q: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  // expected-error @+1 {{'attnc.attention' op region 'score' must take (f32, index, index, index, index)}}
  %0 = attnc.attention %q, %q, %q {scale = 1.0 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      score {
      ^bb0(%s: bf16, %b: index, %h: index, %i: index, %j: index):
        %x = arith.extf %s : bf16 to f32
        attnc.yield %x : f32
      }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

func.func @score_region_yield(%q: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  // expected-error @+1 {{'attnc.attention' op region 'score' must end in attnc.yield of one 'f32'}}
  %0 = attnc.attention %q, %q, %q {scale = 1.0 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        attnc.yield %s, %s : f32, f32
      }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

func.func @mask_region_effects(%q: tensor<?x?x?x64xbf16>, %allowed: memref<?xi1>) -> tensor<?x?x?x64xbf16> {
  %0 = attnc.attention %q, %q, %q {scale = 1.0 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        // expected-error @+1 {{'memref.load' op has side effects and cannot be in the mask region of an attention op}}
        %keep = memref.load %allowed[%j] : memref<?xi1>
        attnc.yield %keep : i1
      }
  return %0 : tensor<?x?x?x64xbf16>
}

// -----

// The flash step checks its regions by the same rules.
func.func @online_score_region_effects(%q: tensor<?x128xbf16>, %acc: tensor<?x128xf32>, %m: tensor<?xf32>,
                                       %i: index, %bias: memref<?xf32>) {
  %a:3 = attnc.online_attention %q, %q, %q, %acc, %m, %m at [%i, %i, %i, %i] {scale = 1.0 : f64}
      : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kj: index):
        // expected-error @+1 {{'memref.load' op has side effects and cannot be in the score region of an attention op}}
        %x = memref.load %bias[%kj] : memref<?xf32>
        %y = arith.addf %s, %x : f32
        attnc.yield %y : f32
      }
  return
}

// -----

func.func @online_mask_region_args(%q: tensor<?x128xbf16>, %acc: tensor<?x128xf32>, %m: tensor<?xf32>, %i: index) {
  // expected-error @+1 {{'attnc.online_attention' op region 'mask' must take (index, index, index, index)}}
  %a:3 = attnc.online_attention %q, %q, %q, %acc, %m, %m at [%i, %i, %i, %i] {scale = 1.0 : f64}
      : tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xbf16>, tensor<?x128xf32>, tensor<?xf32>, tensor<?xf32>
      mask {
      ^bb0(%b: index, %h: index, %qi: i64, %kj: i64):
        %keep = arith.cmpi ule, %kj, %qi : i64
        attnc.yield %keep : i1
      }
  return
}


// -----

// Launch contracts, their parts, and attnc.name (docs/launch-contract.md).
// expected-error @+1 {{a constant factor must be positive, got 0}}
func.func @factor_constant() attributes {c = #attnc.factor<0>} { return }

// -----

// expected-error @+1 {{a symbol factor needs a symbol name}}
func.func @factor_symbol() attributes {c = #attnc.factor<"">} { return }

// -----

// expected-error @+1 {{ceil_div divisor must be positive, got 0}}
func.func @factor_ceil_div() attributes {c = #attnc.factor<ceil_div(S, 0)>} { return }

// -----

// expected-error @+1 {{only a ceil_div factor adds a symbol ('+ B')}}
func.func @factor_plus_symbol() attributes {c = #attnc.factor<H + B>} { return }

// -----

// expected-error @+1 {{a ceil_div factor adds a symbol other than its dividend, got 'T' for both}}
func.func @factor_plus_itself() attributes {c = #attnc.factor<ceil_div(T, 128) + T>} { return }

// -----

// expected-error @+1 {{unknown device property 'num_gpcs' (known: num_sms)}}
func.func @factor_device() attributes {c = #attnc.factor<device(num_gpcs)>} { return }

// -----

// expected-error @+1 {{constraint symbols must not be empty}}
func.func @constraint_symbol() attributes {c = #attnc.constraint<divisible(H, "")>} { return }

// -----

// expected-error @+1 {{unknown constraint kind 'less' (known: divisible, equal, min, max, ratio, at_most)}}
func.func @constraint_kind() attributes {c = #attnc.constraint<less(H, 1)>} { return }

// -----

// expected-error @+1 {{ratio constraint of 'H' and 'Hkv' has factor 0; it must be at least 1}}
func.func @constraint_ratio() attributes {c = #attnc.constraint<ratio(H, Hkv, 0)>} { return }

// -----

// expected-error @+1 {{at_most constraint of 'T' and 'B' has factor 0; it must be at least 1}}
func.func @constraint_at_most() attributes {c = #attnc.constraint<at_most(T, B, 0)>} { return }

// -----

// expected-error @+1 {{size rule symbol must not be empty}}
func.func @size_rule_symbol() attributes {r = #attnc.size_rule<kv_splits("", kv_tiles = [1], max = 1, per_sm = 1)>} { return }

// -----

// expected-error @+1 {{size rule of 'splits' has max = 129; it must be between 1 and 128}}
func.func @size_rule_max() attributes {r = #attnc.size_rule<kv_splits(splits, kv_tiles = [1], max = 129, per_sm = 1)>} { return }

// -----

// expected-error @+1 {{size rule of 'splits' has per_sm = 0; it must be at least 1}}
func.func @size_rule_per_sm() attributes {r = #attnc.size_rule<kv_splits(splits, kv_tiles = [1], max = 1, per_sm = 0)>} { return }

// -----

// expected-error @+1 {{size rule of 'splits' has no kv_tiles factor}}
func.func @size_rule_tiles() attributes {r = #attnc.size_rule<kv_splits(splits, kv_tiles = [], max = 1, per_sm = 1)>} { return }

// -----

// expected-error @+1 {{size rule of 'splits' counts its K/V tiles with its own symbol}}
func.func @size_rule_own_symbol() attributes {r = #attnc.size_rule<kv_splits(splits, kv_tiles = [ceil_div(splits, 2)], max = 1, per_sm = 1)>} { return }

// -----

// expected-error @+1 {{unknown size rule kind 'kv_split' (known: kv_splits)}}
func.func @size_rule_kind() attributes {r = #attnc.size_rule<kv_split(splits, kv_tiles = [1], max = 1, per_sm = 1)>} { return }

// -----

// expected-error @+1 {{kernel parameter name must not be empty}}
func.func @param_name() attributes {c = #attnc.size_param<"", i64>} { return }

// -----

// expected-error @+1 {{size parameter 'B' has type f32; sizes and strides are i64 or i32}}
func.func @size_type() attributes {c = #attnc.size_param<"B", f32>} { return }

// -----

// expected-error @+1 {{tensor parameter 'q' has element type i16; contracts carry bf16, f16, f32, f64, i1, i8, i32 and i64}}
func.func @tensor_dtype() attributes {c = #attnc.tensor_param<"q", i16, [N], input, align = 16>} { return }

// -----

// expected-error @+1 {{tensor parameter 'q' has shape entry -1 : i64; entries are non-negative extents and symbol names}}
func.func @tensor_shape() attributes {c = #attnc.tensor_param<"q", f32, [-1], input, align = 16>} { return }

// -----

// expected-error @+1 {{tensor parameter 'q' has align 3; it must be a power of two}}
func.func @tensor_align() attributes {c = #attnc.tensor_param<"q", f32, [N], input, align = 3>} { return }

// -----

// expected-error @+1 {{tensor parameter 'q' has row_align 12; it must be 0 (none) or a power of two}}
func.func @tensor_row_align() attributes {c = #attnc.tensor_param<"q", f32, [N], input, align = 16, row_align = 12>} { return }

// -----

// expected-error @+1 {{stride parameter 's' has dim -1; dimensions count from 0}}
func.func @stride_dim() attributes {c = #attnc.stride_param<"s", i64, tensor = "q", dim = -1>} { return }

// -----

// expected-error @+1 {{scalar parameter 'seed' has type i16; scalars are i64, i32, f32 or f64}}
func.func @scalar_type() attributes {c = #attnc.scalar_param<"seed", i16>} { return }

// -----

// expected-error @+1 {{tensormap parameter 'm' has a box of rank 6; TMA boxes have 1 to 5 dimensions}}
func.func @tensormap_rank() attributes {c = #attnc.tensormap_param<"m", tensor = "q", box = [1, 1, 1, 1, 1, 1], swizzle = 0, oob_fill = zero>} { return }

// -----

// expected-error @+1 {{tensormap parameter 'm' has box extent 300; TMA boxes are 1 to 256 elements per dimension}}
func.func @tensormap_extent() attributes {c = #attnc.tensormap_param<"m", tensor = "q", box = [300, 64], swizzle = 0, oob_fill = zero>} { return }

// -----

// expected-error @+1 {{tensormap parameter 'm' has swizzle 16; it must be 0, 32, 64 or 128 bytes}}
func.func @tensormap_swizzle() attributes {c = #attnc.tensormap_param<"m", tensor = "q", box = [64, 64], swizzle = 16, oob_fill = nan>} { return }

// -----

// expected-error @+1 {{workspace parameter 'w' has no byte rule}}
func.func @workspace_bytes() attributes {c = #attnc.workspace_param<"w", bytes = []>} { return }

// -----

// expected-error @+1 {{launch contract needs a kernel and a kind}}
func.func @contract_kind() attributes {c = #attnc.launch_contract<kernel = @k, kind = "", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{launch contract of 'k' names fallback 'k', which must be another kernel's name}}
func.func @contract_fallback_self() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0, fallback = @k>} { return }

// -----

// expected-error @+1 {{launch contract of 'k' names unsplit kernel 'f', which must be another kernel's name (not its fallback's)}}
func.func @contract_unsplit_fallback() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0, fallback = @f, unsplit = @f>} { return }

// -----

// expected-error @+1 {{launch contract of 'k' names variant 'f', which must be another kernel's name (not its fallback's, its unsplit kernel's or another variant's)}}
func.func @contract_variant_fallback() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0, fallback = @f, variants = [@f when [min(N, 2)]]>} { return }

// -----

// expected-error @+1 {{launch contract of 'k' names variant 'v', which must be another kernel's name (not its fallback's, its unsplit kernel's or another variant's)}}
func.func @contract_variant_twice() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0, variants = [@v when [min(N, 2)], @v when [max(N, 1)]]>} { return }

// -----

// expected-error @+1 {{variant 'v' runs when symbol 'M' meets a condition, but 'M' occurs in no tensor's shape}}
func.func @contract_variant_symbol() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0, variants = [@v when [min(M, 2)]]>} { return }

// -----

// expected-error @+1 {{kernel variant names kernel '../v'; a kernel name is a C identifier of at most 200 characters}}
func.func @kernel_variant_name() attributes {v = #attnc.kernel_variant<@"../v" when [min(N, 2)]>} { return }

// -----

// expected-error @+1 {{kernel variant 'v' has no condition; a variant that always runs would be the kernel}}
func.func @kernel_variant_always() attributes {v = #attnc.kernel_variant<@v when []>} { return }

// -----

// expected-error @+1 {{launch contract names kernel '../k'; a kernel name is a C identifier of at most 200 characters}}
func.func @contract_kernel_name() attributes {c = #attnc.launch_contract<kernel = @"../k", kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{grid.y has constant factors beyond CUDA's limit of 65535 blocks}}
func.func @contract_grid_limit() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [256, 256], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{params[0] is not a kernel parameter: 1 : i64}}
func.func @contract_param() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [1], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{unknown kernel parameter kind 'buffer' (known: tensor, size, stride, scalar, tensormap, workspace)}}
func.func @contract_param_kind() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [buffer<"b">], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{parameter name 'x' is used twice}}
func.func @contract_duplicate() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, scalar<"x", f32>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{stride parameter 'z.stride0' names 'z', which is not a tensor parameter}}
func.func @contract_stride_tensor() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, stride<"z.stride0", i64, tensor = "z", dim = 0>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{tensormap parameter 'm' names 'z', which is not a tensor parameter}}
func.func @contract_tensormap_tensor() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, tensormap<"m", tensor = "z", box = [64], swizzle = 0, oob_fill = zero>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{size parameter 'M' occurs in no tensor's shape, so no call can bind it}}
func.func @contract_size() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, size<"M", i64>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{stride parameter 'x.stride1' has dim 1 but tensor 'x' has rank 1}}
func.func @contract_stride_dim() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, stride<"x.stride1", i64, tensor = "x", dim = 1>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{tensormap parameter 'm' has a box of rank 2 but tensor 'x' has rank 1}}
func.func @contract_tensormap_rank() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, tensormap<"m", tensor = "x", box = [64, 64], swizzle = 0, oob_fill = zero>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{tensormap parameter 'm' has an innermost box row of 12 bytes; TMA needs a multiple of 16}}
func.func @contract_tensormap_row() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, tensormap<"m", tensor = "x", box = [3], swizzle = 0, oob_fill = zero>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{tensormap parameter 'm' has an innermost box row of 256 bytes, wider than its swizzle span of 128 bytes}}
func.func @contract_tensormap_span() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, tensormap<"m", tensor = "x", box = [64], swizzle = 128, oob_fill = zero>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{workspace parameter 'w' has a view with element type vector<2xf32>; contracts carry bf16, f16, f32, f64, i1, i8, i32 and i64}}
func.func @workspace_view_type() attributes {c = #attnc.workspace_param<"w", bytes = [64], view = vector<2xf32> [8]>} { return }

// -----

// expected-error @+1 {{workspace parameter 'w' has a view of rank 0}}
func.func @workspace_view_rank() attributes {c = #attnc.workspace_param<"w", bytes = [64], view = f32 []>} { return }

// -----

// expected-error @+1 {{workspace parameter 'w' has a view with shape entry -1 : i64; entries are non-negative extents and symbol names}}
func.func @workspace_view_entry() attributes {c = #attnc.workspace_param<"w", bytes = [64], view = f32 [-1]>} { return }

// -----

// expected-error @+1 {{workspace parameter 'w' has a view with symbol 'M', which occurs in no tensor's shape}}
func.func @contract_workspace_view_symbol() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, workspace<"w", bytes = [N, 4], view = f32 [M]>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{tensormap parameter 'm' maps workspace 'w', which has no typed view}}
func.func @contract_tensormap_workspace() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, workspace<"w", bytes = [N, 4]>, tensormap<"m", tensor = "w", box = [32], swizzle = 128, oob_fill = zero>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{tensormap parameter 'm' has a box of rank 1 but the view of workspace 'w' has rank 2}}
func.func @contract_tensormap_view_rank() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, workspace<"w", bytes = [N, 128], view = f32 [N, 32]>, tensormap<"m", tensor = "w", box = [32], swizzle = 128, oob_fill = zero>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{workspace parameter 'w' uses symbol 'M', which occurs in no tensor's shape}}
func.func @contract_workspace_symbol() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>, workspace<"w", bytes = [M, 4]>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{grid symbol 'M' occurs in no tensor's shape}}
func.func @contract_grid_symbol() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[ceil_div(M, 64)], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{grid symbol 'M' occurs in no tensor's shape}}
func.func @contract_grid_plus() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[ceil_div(N, 64) + M], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{grid must have three dimensions, got 2}}
func.func @contract_grid_rank() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[N], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{constraint symbol 'M' occurs in no tensor's shape}}
func.func @contract_constraint_symbol() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0, constraints = [min(M, 1)]>} { return }

// -----

// expected-error @+1 {{size rule symbol 'splits' occurs in no tensor's shape}}
func.func @contract_size_rule_symbol() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0, size_rules = [kv_splits(splits, kv_tiles = [N], max = 8, per_sm = 1)]>} { return }

// -----

// expected-error @+1 {{size rule of 'splits' uses symbol 'M' in kv_tiles, which occurs in no tensor's shape}}
func.func @contract_size_rule_tiles() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [splits, N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0, size_rules = [kv_splits(splits, kv_tiles = [ceil_div(M, 64)], max = 8, per_sm = 1)]>} { return }

// -----

// expected-error @+1 {{size symbol 'splits' has two size rules}}
func.func @contract_size_rule_twice() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [splits, N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0, size_rules = [kv_splits(splits, kv_tiles = [N], max = 8, per_sm = 1), kv_splits(splits, kv_tiles = [N], max = 4, per_sm = 1)]>} { return }

// -----

// expected-error @+1 {{block must be three positive extents}}
func.func @contract_block() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [128, 0, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{block has 2048 x 1 x 1 threads; CUDA allows at most 1024}}
func.func @contract_block_threads() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [2048, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{shared_memory must be non-negative, got -1}}
func.func @contract_smem() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = -1>} { return }

// -----

// expected-error @+1 {{attrs entry 'tiles' is not a bool, integer, float or string}}
func.func @contract_attrs() attributes {c = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0, attrs = {tiles = [64, 64]}>} { return }

// -----

// expected-error @+1 {{'attnc.launch_contract' must be a #attnc.launch_contract, got "k"}}
gpu.module @m attributes {attnc.launch_contract = "k"} {}

// -----

// expected-error @+1 {{'attnc.launch_contract' belongs on a kernel's gpu.module}}
func.func @k() attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} { return }

// -----

// expected-error @+1 {{launch contract names kernel @k, which is not a function of this gpu.module}}
gpu.module @m attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} {
  gpu.func @other(%x: !llvm.ptr<1>) kernel { gpu.return }
}

// -----

// expected-error @+1 {{launch contract has 1 parameters but kernel @k takes 2 arguments}}
gpu.module @m attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @k, kind = "t", params = [tensor<"x", f32, [N], input, align = 16>], grid = [[1], [1], [1]], block = [1, 1, 1], shared_memory = 0>} {
  gpu.func @k(%x: !llvm.ptr<1>, %y: !llvm.ptr<1>) kernel { gpu.return }
}

// -----

// expected-error @+1 {{'attnc.name' must be a non-empty string, got ""}}
func.func @name_empty(%x: f32 {attnc.name = ""}) { return }

// -----

// expected-error @+1 {{'attnc.name' must be a non-empty string, got 1 : i64}}
func.func @name_type(%x: f32 {attnc.name = 1}) { return }

// -----

// expected-error @+1 {{'attnc.name' of argument #1 repeats 'x', the name of argument #0}}
func.func @name_args(%a: f32 {attnc.name = "x"}, %b: f32 {attnc.name = "x"}) { return }

// -----

// expected-error @+1 {{'attnc.name' of result #0 repeats 'x', the name of argument #0}}
func.func @name_result(%a: f32 {attnc.name = "x"}) -> (f32 {attnc.name = "x"}) { return %a : f32 }

// -----

// expected-error @+1 {{'attnc.name' of result #1 repeats 'y', the name of result #0}}
func.func @name_results(%a: f32) -> (f32 {attnc.name = "y"}, f32 {attnc.name = "y"}) { return %a, %a : f32, f32 }

// -----

// expected-error @+1 {{'attnc.label' is not an attnc argument or result attribute (only 'attnc.name' is)}}
func.func @name_unknown(%a: f32 {attnc.label = "x"}) { return }

// -----

// 10^22 elements: element counts, byte sizes and FLOPs would overflow 64 bits
// in every later layer (the intensity report printed garbage, the row kernel
// builder never finished).
func.func @tensor_too_large(%x: tensor<100000000000x100000000000xf32>) -> tensor<100000000000x100000000000xf32> {
  // expected-error @+1 {{'attnc.exp' op operand #0 of type 'tensor<100000000000x100000000000xf32>' has more than 2^56 elements; attnc's size arithmetic stays inside 64 bits}}
  %y = attnc.exp %x : tensor<100000000000x100000000000xf32>
  return %y : tensor<100000000000x100000000000xf32>
}

// -----

func.func @grad_elem(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %do: tensor<?x8x?x64xf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>) {
  // expected-error @+1 {{operands 'query', 'key', 'value' and 'out_grad' must have the same element type}}
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x8x?x64xf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32> -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
  return
}

// -----

func.func @grad_out_grad(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %do: tensor<?x4x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>) {
  // expected-error @+1 {{operand 'out_grad' must be [batch, query heads, query seq, value head_dim] like the forward's result}}
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32> -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
  return
}

// -----

func.func @grad_lse(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?x1xf32>, %dl: tensor<?x8x?x1xf32>) {
  // expected-error @+1 {{operand 'logsumexp' must be f32 [batch, query heads, query seq]}}
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x1xf32>, tensor<?x8x?x1xf32> -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
  return
}

// -----

func.func @grad_delta(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?xf32>) {
  // expected-error @+1 {{operand 'delta' must be f32 [batch, query heads, query seq, 1] (attnc.reduce_sum of out_grad * result)}}
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?xf32> -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
  return
}

// -----

func.func @grad_dq(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>) {
  // expected-error @+1 {{result 'query_grad' must be f32 with the shape of 'query'}}
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32> -> tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
  return
}

// -----

func.func @grad_dk(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>) {
  // expected-error @+1 {{results 'key_grad' and 'value_grad' must have the types of 'key' and 'value'}}
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32> -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xbf16>
  return
}

// -----

func.func @grad_rank(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %do: tensor<?x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>) {
  // expected-error @+1 {{operand 'out_grad' must have rank 4 [batch, heads, seq, head_dim], got rank 3}}
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32> -> tensor<?x8x?x64xf32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
  return
}

// -----

func.func @grad_heads(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x3x?x64xbf16>, %v: tensor<?x3x?x64xbf16>, %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>) {
  // expected-error @+1 {{query heads (8) must be a multiple of key/value heads (3)}}
  %dq, %dk, %dv = attnc.attention_grad %q, %k, %v, %do, %lse, %dl {scale = 0.125 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x3x?x64xbf16>, tensor<?x3x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32> -> tensor<?x8x?x64xf32>, tensor<?x3x?x64xbf16>, tensor<?x3x?x64xbf16>
  return
}

// -----

func.func @grad_scale(%q: tensor<?x8x?x64xbf16>, %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>) {
  // expected-error @+1 {{attribute 'scale' must be positive and finite, got 0}}
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 0.0 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32> -> tensor<?x8x?x64xf32>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>
  return
}

// -----

func.func @grad_mask_region(%q: tensor<?x8x?x64xbf16>, %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>) {
  // expected-error @+1 {{region 'mask' must end in attnc.yield of one 'i1'}}
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 1.0 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32> -> tensor<?x8x?x64xf32>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %f = arith.constant 1.0 : f32
        attnc.yield %f : f32
      }
  return
}

// -----

func.func @step_rank(%q: tensor<?x?x64xbf16>, %k: tensor<?x64xbf16>, %v: tensor<?x64xbf16>, %do: tensor<?x64xbf16>, %lse: tensor<?xf32>, %dl: tensor<?xf32>, %dk: tensor<?x64xf32>, %dv: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{operands 'query', 'key', 'value', 'out_grad', 'key_acc', 'value_acc' and the result 'query_grad' must be rank-2 tiles}}
  %a, %b, %c = attnc.online_attention_grad %q, %k, %v, %do, %lse, %dl, %dk, %dv at [%i, %i, %i, %i] {scale = 0.125 : f64}
      : tensor<?x?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @step_rows(%q: tensor<?x64xbf16>, %k: tensor<?x64xbf16>, %v: tensor<?x64xbf16>, %do: tensor<?x64xbf16>, %lse: tensor<?x1xf32>, %dl: tensor<?xf32>, %dk: tensor<?x64xf32>, %dv: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{operands 'logsumexp' and 'delta' must be rank-1 row vectors}}
  %a, %b, %c = attnc.online_attention_grad %q, %k, %v, %do, %lse, %dl, %dk, %dv at [%i, %i, %i, %i] {scale = 0.125 : f64}
      : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x1xf32>, tensor<?xf32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @step_head(%q: tensor<?x64xbf16>, %k: tensor<?x32xbf16>, %v: tensor<?x64xbf16>, %do: tensor<?x64xbf16>, %lse: tensor<?xf32>, %dl: tensor<?xf32>, %dk: tensor<?x64xf32>, %dv: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{head dimension of 'query' and 'key' must be equal and static, and that of 'value' static}}
  %a, %b, %c = attnc.online_attention_grad %q, %k, %v, %do, %lse, %dl, %dk, %dv at [%i, %i, %i, %i] {scale = 0.125 : f64}
      : tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @step_elem(%q: tensor<?x64xbf16>, %k: tensor<?x64xbf16>, %v: tensor<?x64xbf16>, %do: tensor<?x64xf16>, %lse: tensor<?xf32>, %dl: tensor<?xf32>, %dk: tensor<?x64xf32>, %dv: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{'query', 'key', 'value' and 'out_grad' must have the same element type}}
  %a, %b, %c = attnc.online_attention_grad %q, %k, %v, %do, %lse, %dl, %dk, %dv at [%i, %i, %i, %i] {scale = 0.125 : f64}
      : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @step_kv_rows(%q: tensor<?x64xbf16>, %k: tensor<64x64xbf16>, %v: tensor<32x64xbf16>, %do: tensor<?x64xbf16>, %lse: tensor<?xf32>, %dl: tensor<?xf32>, %dk: tensor<?x64xf32>, %dv: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{'key' and 'value' tiles must have the same rows}}
  %a, %b, %c = attnc.online_attention_grad %q, %k, %v, %do, %lse, %dl, %dk, %dv at [%i, %i, %i, %i] {scale = 0.125 : f64}
      : tensor<?x64xbf16>, tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @step_do(%q: tensor<?x64xbf16>, %k: tensor<?x64xbf16>, %v: tensor<?x64xbf16>, %do: tensor<?x32xbf16>, %lse: tensor<?xf32>, %dl: tensor<?xf32>, %dk: tensor<?x64xf32>, %dv: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{'out_grad' must be [query rows, value head_dim] and 'logsumexp', 'delta' [query rows]}}
  %a, %b, %c = attnc.online_attention_grad %q, %k, %v, %do, %lse, %dl, %dk, %dv at [%i, %i, %i, %i] {scale = 0.125 : f64}
      : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x32xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @step_acc(%q: tensor<?x64xbf16>, %k: tensor<?x64xbf16>, %v: tensor<?x64xbf16>, %do: tensor<?x64xbf16>, %lse: tensor<?xf32>, %dl: tensor<?xf32>, %dk: tensor<?x32xf32>, %dv: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{'key_acc' and 'value_acc' must have the shapes of the 'key' and 'value' tiles}}
  %a, %b, %c = attnc.online_attention_grad %q, %k, %v, %do, %lse, %dl, %dk, %dv at [%i, %i, %i, %i] {scale = 0.125 : f64}
      : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x32xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @step_dq(%q: tensor<?x64xbf16>, %k: tensor<?x64xbf16>, %v: tensor<?x64xbf16>, %do: tensor<?x64xbf16>, %lse: tensor<?xf32>, %dl: tensor<?xf32>, %dk: tensor<?x64xf32>, %dv: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{result 'query_grad' must have the shape of 'query'}}
  %a, %b, %c = attnc.online_attention_grad %q, %k, %v, %do, %lse, %dl, %dk, %dv at [%i, %i, %i, %i] {scale = 0.125 : f64}
      : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x32xf32>
  return
}

// -----

func.func @step_f32(%q: tensor<?x64xbf16>, %k: tensor<?x64xbf16>, %v: tensor<?x64xbf16>, %do: tensor<?x64xbf16>, %lse: tensor<?xf32>, %dl: tensor<?xbf16>, %dk: tensor<?x64xf32>, %dv: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{'logsumexp', 'delta', the accumulators and 'query_grad' must be f32}}
  %a, %b, %c = attnc.online_attention_grad %q, %k, %v, %do, %lse, %dl, %dk, %dv at [%i, %i, %i, %i] {scale = 0.125 : f64}
      : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?xbf16>, tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @acc_f32(%t: tensor<?x64xbf16>, %d: tensor<?x?x64xbf16>, %i: index) {
  // expected-error @+1 {{the tile and the destination must be f32: sums are accumulated in f32}}
  %r = attnc.accumulate %t into %d[%i, %i, %i] : tensor<?x64xbf16> into tensor<?x?x64xbf16>
  return
}

// -----

func.func @acc_rank(%t: tensor<?x?x64xf32>, %d: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{the tile (rank 3) must not have a higher rank than the destination (rank 2)}}
  %r = attnc.accumulate %t into %d[%i, %i] : tensor<?x?x64xf32> into tensor<?x64xf32>
  return
}

// -----

func.func @acc_offsets(%t: tensor<?x64xf32>, %d: tensor<?x?x64xf32>, %i: index) {
  // expected-error @+1 {{needs one offset per dimension of the destination (3), got 2}}
  %r = attnc.accumulate %t into %d[%i, %i] : tensor<?x64xf32> into tensor<?x?x64xf32>
  return
}

// -----

func.func @acc_extent(%t: tensor<?x64xf32>, %d: tensor<?x?x32xf32>, %i: index) {
  // expected-error @+1 {{tile dimension 1 (64) is larger than destination dimension 2 (32)}}
  %r = attnc.accumulate %t into %d[%i, %i, %i] : tensor<?x64xf32> into tensor<?x?x32xf32>
  return
}

// -----

func.func @par_acc_parent(%t: tensor<?x64xf32>, %d: tensor<?x64xf32>, %i: index) {
  // expected-error @+1 {{must be in the terminator of a parallel loop (scf.forall.in_parallel)}}
  attnc.parallel_accumulate %t into %d[%i, %i] : tensor<?x64xf32> into tensor<?x64xf32>
  return
}

// -----

func.func @grad_score_without_derivative(%q: tensor<?x8x?x64xbf16>, %do: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dl: tensor<?x8x?x1xf32>) {
  // expected-error @+1 {{regions 'score' and 'score_grad' must both be present or both absent: the backward of a score modifier needs its derivative}}
  %dq, %dk, %dv = attnc.attention_grad %q, %q, %q, %do, %lse, %dl {scale = 1.0 : f64}
      : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x1xf32> -> tensor<?x8x?x64xf32>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>
      score {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        attnc.yield %x : f32
      }
  return
}

// -----

func.func @paged_kv_page_size(%pool: tensor<?x48x8x128xbf16>, %t: tensor<?x?xi32>) -> tensor<?x8x?x128xbf16> {
  // expected-error @+1 {{page_size must be a power of two from 16 to 256, got 48}}
  %0 = attnc.paged_kv %pool, %t {page_size = 48} : tensor<?x48x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  return %0 : tensor<?x8x?x128xbf16>
}

// -----

func.func @paged_kv_pool(%pool: tensor<?x32x8x128xbf16>, %t: tensor<?x?xi32>) -> tensor<?x8x?x128xbf16> {
  // expected-error @+1 {{operand 'pool' must be [num_blocks, page_size = 64, heads, head_dim]}}
  %0 = attnc.paged_kv %pool, %t {page_size = 64} : tensor<?x32x8x128xbf16>, tensor<?x?xi32> -> tensor<?x8x?x128xbf16>
  return %0 : tensor<?x8x?x128xbf16>
}

// -----

func.func @paged_kv_table(%pool: tensor<?x64x8x128xbf16>, %t: tensor<?xi32>) -> tensor<?x8x?x128xbf16> {
  // expected-error @+1 {{operand 'block_table' must be [batch, max_blocks]}}
  %0 = attnc.paged_kv %pool, %t {page_size = 64} : tensor<?x64x8x128xbf16>, tensor<?xi32> -> tensor<?x8x?x128xbf16>
  return %0 : tensor<?x8x?x128xbf16>
}

// -----

func.func @paged_kv_result(%pool: tensor<?x64x8x128xbf16>, %t: tensor<?x4xi32>) -> tensor<?x8x?x128xbf16> {
  // expected-error @+1 {{result must be [batch, heads, max_blocks * page_size, head_dim] of the pool's element type, the head dimension static}}
  %0 = attnc.paged_kv %pool, %t {page_size = 64} : tensor<?x64x8x128xbf16>, tensor<?x4xi32> -> tensor<?x8x?x128xbf16>
  return %0 : tensor<?x8x?x128xbf16>
}

// -----

func.func @ragged_view_packed(%p: tensor<?x32x?x128xbf16>, %s: tensor<?xi32>) -> tensor<?x32x?x128xbf16> {
  // expected-error @+1 {{operand 'packed' must be [rows, heads, head_dim]}}
  %0 = attnc.ragged_view %p, %s, %s : tensor<?x32x?x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x?x128xbf16>
  return %0 : tensor<?x32x?x128xbf16>
}

// -----

func.func @ragged_view_result(%p: tensor<?x32x128xbf16>, %s: tensor<?xi32>) -> tensor<?x16x?x128xbf16> {
  // expected-error @+1 {{result must be [batch, heads, rows, head_dim] of the packed rows' element type, the head dimension static}}
  %0 = attnc.ragged_view %p, %s, %s : tensor<?x32x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x?x128xbf16>
  return %0 : tensor<?x16x?x128xbf16>
}

// -----

func.func @ragged_view_bounds(%p: tensor<?x32x128xbf16>, %s: tensor<4xi32>, %e: tensor<5xi32>) -> tensor<?x32x?x128xbf16> {
  // expected-error @+1 {{operands 'starts' and 'ends' must be [batch], one row range per sequence}}
  %0 = attnc.ragged_view %p, %s, %e : tensor<?x32x128xbf16>, tensor<4xi32>, tensor<5xi32> -> tensor<?x32x?x128xbf16>
  return %0 : tensor<?x32x?x128xbf16>
}

// -----

func.func @ragged_pack_result(%b: tensor<?x32x?x128xbf16>, %s: tensor<?xi32>) -> tensor<?x32x64xbf16> {
  // expected-error @+1 {{result must be [rows, heads, head_dim] of the batch's element type}}
  %0 = attnc.ragged_pack %b, %s, %s : tensor<?x32x?x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x64xbf16>
  return %0 : tensor<?x32x64xbf16>
}

// -----

func.func @ragged_pack_batch(%b: tensor<?x?x128xbf16>, %s: tensor<?xi32>) -> tensor<?x32x128xbf16> {
  // expected-error @+1 {{operand 'batch' must be [batch, heads, rows, head_dim]}}
  %0 = attnc.ragged_pack %b, %s, %s : tensor<?x?x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %0 : tensor<?x32x128xbf16>
}

// -----

func.func @ragged_kv_lengths(%q: tensor<?x8x?x64xbf16>, %kp: tensor<?x8x64xbf16>, %s: tensor<?xi32>) -> tensor<?x8x?x64xbf16> {
  %k = attnc.ragged_view %kp, %s, %s : tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x?x64xbf16>
  // expected-error @+1 {{operand 'kv_lengths' bounds the keys of a padded cache; a ragged K ('attnc.ragged_view') has its sequences' lengths already}}
  %0 = attnc.attention %q, %k, %k kv_lengths(%s : tensor<?xi32>) {scale = 0.125 : f64} : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %0 : tensor<?x8x?x64xbf16>
}

// -----

func.func @ragged_k_dense_v(%q: tensor<?x8x?x64xbf16>, %kp: tensor<?x8x64xbf16>, %v: tensor<?x8x?x64xbf16>, %s: tensor<?xi32>) -> tensor<?x8x?x64xbf16> {
  %k = attnc.ragged_view %kp, %s, %s : tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x?x64xbf16>
  // expected-error @+1 {{operands 'key' and 'value' must both be ragged views of the same sequences ('attnc.ragged_view' with the same starts and ends) or neither}}
  %0 = attnc.attention %q, %k, %v {scale = 0.125 : f64} : tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %0 : tensor<?x8x?x64xbf16>
}

// -----

// expected-error @+1 {{l2_group_mib must be in [0, 1048576] (MiB; 0: no groups), got 1099511627776}}
func.func @flash_config_l2_group_huge() attributes {c = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_ws, l2_group_mib = 1099511627776>} { return }
