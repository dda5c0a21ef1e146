// A mask written with index arithmetic, unfused (each op its own kernel):
// the report sizes the results of the integer and boolean elementwise ops
// (min, abs, and, or, not) by broadcasting, as it does add or cmp, instead
// of failing to bind their dimensions; an iota writes its result and reads
// nothing (its operand gives only the shape).
// RUN: attnc-opt %s --attnc-report-intensity="seq-len=1024" | FileCheck %s
// CHECK-LABEL: func @window_mask
// S = 1024: an i64 [S, S] tensor is 8.39 MB, an i1 one 1.05 MB.
// CHECK: 0 attnc.iota 0.000 8.389
// CHECK: 1 attnc.iota 0.000 8.389
// CHECK: 2 attnc.sub 0.001 25.166
// CHECK: 3 attnc.abs 0.001 16.777
// CHECK: 4 attnc.min 0.001 16.777
// CHECK: 5 attnc.cmp 0.001 9.437
// CHECK: 6 attnc.cmp 0.001 17.826
// CHECK: 7 attnc.not 0.000 2.097
// CHECK: 8 attnc.and 0.000 3.146
// CHECK: 9 attnc.or 0.000 3.146
// CHECK: total: 10 kernels
func.func @window_mask(%s: tensor<1x1x?x?xf32>) -> tensor<1x1x?x?xi1> {
  %rows = attnc.iota %s {dimension = 2 : i64} : tensor<1x1x?x?xf32> -> tensor<1x1x?x?xi64>
  %cols = attnc.iota %s {dimension = 3 : i64} : tensor<1x1x?x?xf32> -> tensor<1x1x?x?xi64>
  %d = attnc.sub %rows, %cols : tensor<1x1x?x?xi64>, tensor<1x1x?x?xi64> -> tensor<1x1x?x?xi64>
  %a = attnc.abs %d : tensor<1x1x?x?xi64>
  %w = arith.constant dense<256> : tensor<i64>
  %m = attnc.min %a, %w : tensor<1x1x?x?xi64>, tensor<i64> -> tensor<1x1x?x?xi64>
  %near = attnc.cmp lt, %m, %w : tensor<1x1x?x?xi64>, tensor<i64> -> tensor<1x1x?x?xi1>
  %after = attnc.cmp gt, %cols, %rows : tensor<1x1x?x?xi64>, tensor<1x1x?x?xi64> -> tensor<1x1x?x?xi1>
  %before = attnc.not %after : tensor<1x1x?x?xi1>
  %both = attnc.and %near, %before : tensor<1x1x?x?xi1>, tensor<1x1x?x?xi1> -> tensor<1x1x?x?xi1>
  %keep = attnc.or %both, %near : tensor<1x1x?x?xi1>, tensor<1x1x?x?xi1> -> tensor<1x1x?x?xi1>
  return %keep : tensor<1x1x?x?xi1>
}
