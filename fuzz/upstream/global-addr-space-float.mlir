// Upstream MLIR: llvm.mlir.addressof checks the address space of the global
// it names by reading the global's `addr_space` as an IntegerAttr, during the
// symbol-table verification, before the global's own verifier has rejected a
// non-integer value: a float there is a null dereference (mlir-opt 22 crashes
// on this file too). Found by the 4th session's campaign in a mutated
// launch-contract test. attnc_opt_fuzzer skips inputs with this signature
// (docs/fuzzing.md).
llvm.mlir.global internal @g() {addr_space = 1.5} : i32
llvm.func @f() -> !llvm.ptr {
  %p = llvm.mlir.addressof @g : !llvm.ptr
  llvm.return %p : !llvm.ptr
}
