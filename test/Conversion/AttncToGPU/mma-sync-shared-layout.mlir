// The mma_sync strategy's shared-memory rows: swizzled for query tiles of
// up to 64 rows (a kernel that streams K and V for few queries, as decode
// does), padded for larger ones (compute-bound prefill tiles).
// RUN: attnc-opt %s --attnc-online-softmax="block-q=32 block-kv=64 strategy=mma_sync" --attnc-convert-to-gpu | FileCheck %s --check-prefix=SWZ
// RUN: attnc-opt %s --attnc-online-softmax="block-q=128 block-kv=64 strategy=mma_sync" --attnc-convert-to-gpu | FileCheck %s --check-prefix=PAD

// 32-row query tile, rows of 256 bytes: unpadded, the tiles start on a
// 128-byte line ((-base) mod 128 bytes in; (32 + 2 x 2 x 64) x 256 + 128
// bytes), and 16-byte chunk c of row r sits at chunk c ^ (r mod 8), for the
// cp.async that writes it (four rows a pass here: each pass its own key)
// and the ldmatrix that reads it (r mod 8 = lane mod 8 for every Q, K and
// V fragment; the column's bits within a line swizzled, whole lines added
// after). Without it a warp's 512 bytes of two rows land 16 bytes off
// their lines and the L2 serves 1.5x the sectors.
// SWZ: gpu.module @attn_module
// SWZ-SAME: block = [64, 1, 1], shared_memory = 73856
// SWZ: gpu.dynamic_shared_memory
// SWZ: %[[BASE:.+]] = memref.extract_aligned_pointer_as_index
// SWZ: %[[NEG:.+]] = arith.subi %{{.+}}, %[[BASE]]
// SWZ: %[[ORIGIN:.+]] = arith.andi %[[NEG]], %c127
// SWZ: %[[LANEKEY:.+]] = arith.remui %{{.+}}, %c8
// SWZ: memref.view %{{.+}}[%[[ORIGIN]]][] {{.+}} to memref<32x128xbf16
// SWZ: memref.view {{.+}} to memref<2x64x128xbf16
// SWZ: %[[ROWKEY:.+]] = arith.remui %{{.+}}, %c8
// SWZ: %[[SHIFT:.+]] = arith.muli %[[ROWKEY]], %c8
// SWZ-NEXT: %[[COL:.+]] = arith.xori %{{.+}}, %[[SHIFT]]
// SWZ-NEXT: nvgpu.device_async_copy %{{.+}}[%{{.+}}], %{{.+}}[%{{.+}}, %[[COL]]], 8
// Q stays in registers (one 16-row slab per warp): loaded before the loop.
// SWZ: %[[QSHIFT:.+]] = arith.muli %[[LANEKEY]], %c8
// SWZ-NEXT: %[[QSW:.+]] = arith.xori %{{.+}}, %[[QSHIFT]]
// SWZ: %[[QCOL:.+]] = arith.addi %[[QSW]], %c0
// SWZ-NEXT: nvgpu.ldmatrix %{{.+}}[%{{.+}}, %[[QCOL]]] {numTiles = 4 : i32, transpose = false}
// SWZ: scf.for
// SWZ: %[[KSHIFT:.+]] = arith.muli %[[LANEKEY]], %c8
// SWZ-NEXT: %[[KSW:.+]] = arith.xori %{{.+}}, %[[KSHIFT]]
// SWZ: %[[KCOL:.+]] = arith.addi %[[KSW]], %c0
// SWZ: nvgpu.ldmatrix %{{.+}}[%{{.+}}, %{{.+}}, %[[KCOL]]] {numTiles = 4 : i32, transpose = false}
// SWZ: nvvm.mma.sync
// SWZ: gpu.shuffle xor
// SWZ: %[[VSHIFT:.+]] = arith.muli %[[LANEKEY]], %c8
// SWZ-NEXT: %[[VSW:.+]] = arith.xori %{{.+}}, %[[VSHIFT]]
// SWZ: %[[VCOL:.+]] = arith.addi %[[VSW]], %c0
// SWZ-NEXT: nvgpu.ldmatrix %{{.+}}[%{{.+}}, %{{.+}}, %[[VCOL]]] {numTiles = 4 : i32, transpose = true}

// 128-row query tile: rows padded to 272 bytes ((128 + 2 x 2 x 64) x 272),
// no swizzle, no alignment slack.
// PAD: gpu.module @attn_module
// PAD-SAME: shared_memory = 104448
// PAD-NOT: memref.extract_aligned_pointer_as_index
// PAD: memref.view {{.+}} to memref<128x136xbf16
// PAD: memref.view {{.+}} to memref<2x64x136xbf16
// PAD-NOT: arith.xori
// PAD: gpu.return

func.func @attn(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.088 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
