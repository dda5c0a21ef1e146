// What the decode forms need from the tile strategy, refused with the
// reason: f32 partials and packed GQA rows are written by the mma_sync
// strategies only, whose pipelines hold 2 to 4 K/V tiles.
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma fallback=false" --attnc-split-kv --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=PARTIAL
// RUN: not attnc-opt %s --attnc-pack-gqa --attnc-online-softmax="strategy=wgmma fallback=false block-q=64" --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=PACKED
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=mma_sync stages=5" --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: attnc-opt %s --attnc-pack-gqa --attnc-online-softmax="strategy=mma_sync stages=4 block-kv=32" --attnc-split-kv --attnc-convert-to-gpu | FileCheck %s --check-prefix=OK
// RUN: not attnc-opt %s --attnc-online-softmax="interleave-kv=true" 2>&1 | FileCheck %s --check-prefix=RING-STRATEGY
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma interleave-kv=true" 2>&1 | FileCheck %s --check-prefix=RING-WGMMA
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=mma_sync interleave-kv=true stages=1" 2>&1 | FileCheck %s --check-prefix=RING-STAGES
// RUN: attnc-opt %s --attnc-pack-gqa --attnc-online-softmax="strategy=mma_sync interleave-kv=true stages=8 block-kv=32" --attnc-split-kv --attnc-convert-to-gpu | FileCheck %s --check-prefix=RING-OK
// A partial form whose unsplit twin is not a one-kernel function of the
// module (here: none, then the split function itself) is refused.
// RUN: attnc-opt %s --attnc-pack-gqa --attnc-online-softmax="strategy=mma_sync" --attnc-split-kv | sed -e 's/attnc.unsplit = @attn_unsplit/attnc.unsplit = @nowhere/' | not attnc-opt --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=TWIN
// RUN: attnc-opt %s --attnc-pack-gqa --attnc-online-softmax="strategy=mma_sync" --attnc-split-kv | sed -e 's/attnc.unsplit = @attn_unsplit/attnc.unsplit = @attn/' | not attnc-opt --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=TWIN-SPLIT

// PARTIAL: error: 'scf.forall' op is a split-KV partial form; its f32 partials are written by the mma_sync strategies, not by wgmma
// PACKED: error: 'scf.forall' op is a packed GQA flash form; its rows are addressed per query head, which the mma_sync strategies do and wgmma does not
// STAGES: error: mma_sync strategy: stages must be 2 to 4 (one K/V tile computed while the others load), got 5
// Four stages: each step waits for all but the two newest groups.
// OK: gpu.module @attn_0_module
// OK: nvvm.cp.async.wait.group 2
// OK: gpu.module @attn_1_module
// RING-STRATEGY: error: --attnc-online-softmax option interleave-kv needs strategy=mma_sync or mma_sync_unaligned (their cp.async pipeline), got the target's
// RING-WGMMA: error: --attnc-online-softmax option interleave-kv needs strategy=mma_sync or mma_sync_unaligned (their cp.async pipeline), got wgmma
// RING-STAGES: error: --attnc-online-softmax option interleave-kv needs stages >= 2 (a ring of single K/V tile buffers), got 1
// Eight interleaved single-tile buffers (the memory of four pairs): each
// half step waits for all but the six newest loads.
// RING-OK: gpu.module @attn_0_module
// RING-OK: nvvm.cp.async.wait.group 6
// RING-OK: gpu.module @attn_1_module
// TWIN: error: 'scf.forall' op names @nowhere as its unsplit twin, which must be a function of the module with exactly one kernel, itself not split
// TWIN-SPLIT: error: 'scf.forall' op names @attn as its unsplit twin, which must be a function of the module with exactly one kernel, itself not split
func.func @attn(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}
