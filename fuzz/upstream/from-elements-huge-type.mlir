// Upstream MLIR: tensor.from_elements parses one operand type per element of
// its result type; 2^32 elements abort in SmallVector ("unable to grow")
// before any verifier runs. attnc_opt_fuzzer skips inputs with this
// signature (docs/fuzzing.md).
func.func @f(%b: f32) -> tensor<65536x65536xf32> {
  %t = tensor.from_elements %b : tensor<65536x65536xf32>
  return %t : tensor<65536x65536xf32>
}
