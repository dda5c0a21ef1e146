// Upstream MLIR: a use of result number N (`%r#N`) of a value not yet
// defined makes the parser allocate N placeholder results; N near 2^31
// exhausts memory and 2^32 - 1 overflows (stack dump) before any verifier
// runs. attnc_opt_fuzzer skips inputs with this signature (docs/fuzzing.md).
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %r#4294967295 : tensor<4xf32>
}
