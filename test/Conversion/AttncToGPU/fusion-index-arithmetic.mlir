// Index arithmetic and mask logic in an elementwise chain: one row kernel
// computing i64 differences, absolute values (max(x, -x)), floor division,
// comparisons and i1 and/or/not per element, in vectors of 8.
// RUN: attnc-opt %s --attnc-pipeline="to-nvvm=false" | FileCheck %s

// CHECK-LABEL: gpu.func @band(
// CHECK: %[[D:.*]] = arith.subi %{{.*}}, %{{.*}} : vector<8xi64>
// CHECK: %[[N:.*]] = arith.subi %{{.*}}, %[[D]] : vector<8xi64>
// CHECK: %[[A:.*]] = arith.maxsi %[[D]], %[[N]] : vector<8xi64>
// CHECK: %[[NEAR:.*]] = arith.cmpi sle, %[[A]], %{{.*}} : vector<8xi64>
// CHECK: arith.floordivsi %{{.*}} : i64
// CHECK: %[[CC:.*]] = arith.floordivsi %{{.*}} : vector<8xi64>
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %{{.*}}, %[[CC]] : vector<8xi64>
// CHECK: %[[OR:.*]] = arith.ori %[[NEAR]], %[[SAME]] : vector<8xi1>
// CHECK: %[[NOT:.*]] = arith.xori %[[OR]], %{{.*}} : vector<8xi1>
// CHECK: arith.select %[[NOT]], %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
func.func @band(%x: tensor<?x256xf32> {attnc.name = "x"}) -> (tensor<?x256xf32> {attnc.name = "y"}) {
  %r = attnc.iota %x {dimension = 0 : i64} : tensor<?x256xf32> -> tensor<?x256xi64>
  %c = attnc.iota %x {dimension = 1 : i64} : tensor<?x256xf32> -> tensor<?x256xi64>
  %d = attnc.sub %r, %c : tensor<?x256xi64>, tensor<?x256xi64> -> tensor<?x256xi64>
  %a = attnc.abs %d : tensor<?x256xi64>
  %k = arith.constant dense<16> : tensor<i64>
  %near = attnc.cmp le, %a, %k : tensor<?x256xi64>, tensor<i64> -> tensor<?x256xi1>
  %q = arith.constant dense<64> : tensor<i64>
  %rc = attnc.div %r, %q : tensor<?x256xi64>, tensor<i64> -> tensor<?x256xi64>
  %cc = attnc.div %c, %q : tensor<?x256xi64>, tensor<i64> -> tensor<?x256xi64>
  %same = attnc.cmp eq, %rc, %cc : tensor<?x256xi64>, tensor<?x256xi64> -> tensor<?x256xi1>
  %m = attnc.or %near, %same : tensor<?x256xi1>, tensor<?x256xi1> -> tensor<?x256xi1>
  %n = attnc.not %m : tensor<?x256xi1>
  %z = arith.constant dense<0.0> : tensor<f32>
  %y = attnc.select %n, %z, %x : tensor<?x256xi1>, tensor<f32>, tensor<?x256xf32> -> tensor<?x256xf32>
  return %y : tensor<?x256xf32>
}
