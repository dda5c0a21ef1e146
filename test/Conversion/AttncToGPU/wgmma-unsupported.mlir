// What the wgmma tile strategies refuse, each with the rule it breaks: a chip
// without warpgroup MMAs, tiles that do not give each warpgroup 64 query
// rows, a K/V tile that is not the n of one MMA, a head dim it cannot
// swizzle, pipeline depths they do not build, key-split warps (and
// mma_sync's key parts narrower than one k step), P through shared memory
// without an overlapped P V or a producer.
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-online-softmax="strategy=wgmma" --attnc-convert-to-gpu="chip=sm_80"
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma block-q=96" --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma block-kv=40" --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=KV
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma_ws chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIP-WS
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=tma" 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma_persistent" 2>&1 | FileCheck %s --check-prefix=BACKWARD-ONLY
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma stages=4" --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma_ws stages=5" --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=RING
// RUN: not attnc-opt %s --attnc-online-softmax="stages=9" 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma key-warps=2" --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=KEYS
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma_ws key-warps=2" --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=KEYS
// RUN: not attnc-opt %s --attnc-online-softmax="key-warps=-1" 2>&1 | FileCheck %s --check-prefix=KEYS-OPTION
// RUN: not attnc-opt %s --attnc-online-softmax="overlap-pv=yes" 2>&1 | FileCheck %s --check-prefix=OVERLAP-OPTION
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=mma_sync overlap-pv=on" 2>&1 | FileCheck %s --check-prefix=OVERLAP-MMA
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma overlap-pv=on" 2>&1 | FileCheck %s --check-prefix=OVERLAP-STAGES
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=mma_sync block-q=16 block-kv=32 key-warps=4" --attnc-convert-to-gpu 2>&1 | FileCheck %s --check-prefix=KEYS-PART
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma_ws overlap-pv=off shared-p=true" 2>&1 | FileCheck %s --check-prefix=SHARED-P-OVERLAP
// RUN: not attnc-opt %s --attnc-online-softmax="strategy=wgmma stages=3 overlap-pv=on shared-p=true" 2>&1 | FileCheck %s --check-prefix=SHARED-P-WGMMA

// CHIP: tile strategy wgmma needs warpgroup MMAs, which sm_80 lacks (sm_90a only)
// CHIP-WS: tile strategy wgmma_ws needs warpgroup MMAs, which sm_80 lacks (sm_90a only)
// NAME: unknown tile strategy 'tma' for --attnc-online-softmax; known: mma_sync, wgmma, wgmma_ws
// BACKWARD-ONLY: tile strategy wgmma_persistent is the backward's (backward-strategy); the forward's persistent strategy is wgmma_ws_persistent
// STAGES: wgmma strategy: stages must be 2 (one K/V tile computed while the next loads) or 3 (two loading; with overlap_pv, a step's V in use while the next step computes), got 4
// RING: wgmma_ws strategy: stages (the producer's ring) must be in [2, 4], got 5
// OPTION: --attnc-online-softmax option stages must be in [1, 8] (or 0 for the target's default), got 9
// KEYS: wgmma strategy: each warpgroup computes all keys of its rows; key_warps must be 1, got 2 (key-split warps are mma_sync's)
// KEYS-OPTION: --attnc-online-softmax option key-warps must be positive (or 0 for 1), got -1
// OVERLAP-OPTION: --attnc-online-softmax option overlap-pv must be 'on' or 'off' (or empty for the target's choice), got 'yes'
// OVERLAP-MMA: --attnc-online-softmax option overlap-pv=on: overlap_pv needs a wgmma strategy (asynchronous warpgroup MMAs), got mma_sync
// OVERLAP-STAGES: --attnc-online-softmax option overlap-pv=on: overlap_pv with strategy wgmma needs stages >= 3 (a step's V stays in use during the next step), got 2
// KEYS-PART: mma_sync strategy: block_kv / key_warps (32 / 4) must be a multiple of 16
// SHARED-P-OVERLAP: 'attnc.attention' op gets #attnc.flash_config<{{.*}}strategy = wgmma_ws, fallback = {{.*}}> from the options and the target; --attnc-online-softmax option shared-p: shared_p needs overlap_pv
// SHARED-P-WGMMA: --attnc-online-softmax option shared-p: shared_p needs strategy wgmma_ws or wgmma_ws_persistent, got wgmma

func.func @on_sm80(%q: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{wgmma strategy: needs warpgroup MMAs, which only sm_90a has; the kernel targets sm_80 (use strategy mma_sync)}}
  %o = attnc.attention %q, %q, %q {scale = 0.1 : f64} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// ROWS: wgmma strategy: each warpgroup of 4 warps owns 64 query rows, so warps must be a multiple of 4 and block_q 16 x warps; got 6 warps and block_q 96
// KV: wgmma strategy: block_kv (40) must be a multiple of 16 in [16, 256] (the n of one warpgroup MMA)

// -----

// The backward's persistent strategy, given to a forward.
func.func @backward_strategy(%q: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{has tile strategy wgmma_persistent, the backward's; the forward's persistent strategy is wgmma_ws_persistent}}
  %o = attnc.attention %q, %q, %q {scale = 0.1 : f64,
      config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = wgmma_persistent>}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
