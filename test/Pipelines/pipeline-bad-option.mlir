// A misspelt pipeline option is an error with a non-zero exit, not a
// diagnostic from a pass that lets the run succeed.
// RUN: not attnc-opt %s --attnc-pipeline="binary=bogus" 2>&1 | FileCheck %s
// CHECK: for the --binary option: Cannot find option named 'bogus'!
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = attnc.exp %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
