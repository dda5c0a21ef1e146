// Arguments of any element type are sized without crashing (found by the
// fuzzer: an index tensor aborted in getIntOrFloatBitWidth): index counts
// 8 bytes, so tensor<?xindex> at the default seq-len 4096 is 32.77 KB.
// RUN: attnc-opt %s --attnc-report-intensity -o /dev/null | FileCheck %s
// CHECK: func @finalize_rank
// CHECK: total bytes: 0.00x the largest argument or result (32.77 KB)
func.func @finalize_rank(%acc: tensor<?xi8>, %m: tensor<?xindex>, %c: tensor<?xcomplex<f32>>) {
  return
}
