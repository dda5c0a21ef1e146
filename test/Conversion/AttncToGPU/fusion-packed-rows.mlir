// Row kernels pack short rows: a row of at most 32 threads' accesses gets
// the next power of two of lanes and a 256-thread block takes 256 / lanes
// consecutive rows of the last leading dimension (grid: its ceil_div), so
// a row's reductions are shuffles within its lanes of one warp (no shared
// memory, no barrier) and the rows past the end of a block store nothing.
// RUN: attnc-opt %s --attnc-pipeline="to-gpu=false" | attnc-opt --attnc-convert-to-gpu | FileCheck %s

// The backward's delta: rows of 128 bf16 are 16 accesses of 16 bytes, 16
// lanes, 16 rows per block; the sum shuffles at lane distances 8, 4, 2, 1.
// CHECK-LABEL: gpu.module @delta_module
// CHECK-SAME: grid = {{\[\[}}D0, D1, ceil_div(D2, 16)], [1], [1]], block = [256, 1, 1]
// CHECK-SAME: attrs = {chunks_per_thread = 1 : i64, row_length = 128 : i64, rows_per_block = 16 : i64}
// CHECK: gpu.func @delta({{[^)]*}}) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK-NOT: gpu.shuffle
// The row within the block's 16 and the lane within the row's 16.
// CHECK: arith.remui %thread_id_x, %c16 : index
// CHECK: arith.ceildivui %{{.*}}, %c16{{.*}} : index
// CHECK: arith.divui %thread_id_x, %c16{{.*}} : index
// A row past D2 reads row D2 - 1 and is inactive.
// CHECK: %[[VALID:.*]] = arith.cmpi ult
// CHECK: arith.select %[[VALID]]
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @delta(%do: tensor<?x?x?x128xbf16> {attnc.name = "do"},
                 %o: tensor<?x?x?x128xbf16> {attnc.name = "o"})
    -> (tensor<?x?x?x1xf32> {attnc.name = "delta"}) {
  %a = attnc.cast %do : tensor<?x?x?x128xbf16> to tensor<?x?x?x128xf32>
  %b = attnc.cast %o : tensor<?x?x?x128xbf16> to tensor<?x?x?x128xf32>
  %p = attnc.mul %a, %b : tensor<?x?x?x128xf32>, tensor<?x?x?x128xf32> -> tensor<?x?x?x128xf32>
  %d = attnc.reduce_sum %p : tensor<?x?x?x128xf32> -> tensor<?x?x?x1xf32>
  return %d : tensor<?x?x?x1xf32>
}

// Static rows: 100 rows of 40 f32 are 5 accesses, 8 lanes (3 of them
// inactive), 32 rows per block, ceil(100 / 32) = 4 blocks per batch entry.
// A softmax reduces twice, each at lane distances 4, 2, 1.
// CHECK-LABEL: gpu.module @softmax_module
// CHECK-SAME: grid = {{\[\[}}3, 4], [1], [1]], block = [256, 1, 1]
// CHECK-SAME: rows_per_block = 32 : i64
// CHECK: gpu.func @softmax({{[^)]*}}) kernel
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32{{.*}}, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @softmax(%x: tensor<3x100x40xf32>) -> tensor<3x100x40xf32> {
  %p = attnc.softmax %x : tensor<3x100x40xf32>
  return %p : tensor<3x100x40xf32>
}

// Rows longer than a warp's accesses keep one block per row: 4096 bf16 are
// 128 threads of 4 accesses, reduced across warps through shared memory.
// CHECK-LABEL: gpu.module @long_rows_module
// CHECK-SAME: grid = {{\[\[}}D0], [1], [1]], block = [128, 1, 1]
// CHECK-SAME: rows_per_block = 1 : i64
// CHECK: gpu.func @long_rows({{.*}}) workgroup
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32
// CHECK: gpu.barrier
func.func @long_rows(%x: tensor<?x4096xbf16>) -> tensor<?x4096xbf16> {
  %p = attnc.softmax %x : tensor<?x4096xbf16>
  return %p : tensor<?x4096xbf16>
}
