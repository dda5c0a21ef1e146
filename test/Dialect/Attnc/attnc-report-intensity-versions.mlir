// A kernel in versions (scf.if on sizes) is priced as the version a host
// runs at the report's sizes: here 128-row query tiles from Skv = 4096 on
// (4 heads x 32 tiles = 128 CTAs at S = 4096, 0.97 waves of 132 SMs; the
// default 64-row tiles would be 256), 64-row ones below (64 CTAs at
// S = 1024).
// RUN: attnc-opt %s --attnc-online-softmax --canonicalize --cse | attnc-opt --attnc-report-intensity="seq-len=4096" -o /dev/null | FileCheck %s --check-prefix=LONG
// RUN: attnc-opt %s --attnc-online-softmax --canonicalize --cse | attnc-opt --attnc-report-intensity="seq-len=1024" -o /dev/null | FileCheck %s --check-prefix=SHORT

// LONG: 0   scf.if
// LONG: model #0: {{.*}}; 1 CTA/SM, 0.97 waves
// SHORT: 0   scf.if
// SHORT: model #0: {{.*}}; 1 CTA/SM, 0.48 waves
func.func @fwd(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x4x?x64xbf16>, %v: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c2 = arith.constant 2 : index
  %c4096 = arith.constant 4096 : index
  %skv = tensor.dim %k, %c2 : tensor<?x4x?x64xbf16>
  %long = arith.cmpi sge, %skv, %c4096 : index
  %o = scf.if %long -> tensor<?x4x?x64xbf16> {
    %a = attnc.attention %q, %k, %v {config = #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2, strategy = mma_sync>, scale = 0.125 : f64}
        : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  } else {
    %a = attnc.attention %q, %k, %v {config = #attnc.flash_config<block_q = 64, block_kv = 64, warps = 4, stages = 2, strategy = mma_sync>, scale = 0.125 : f64}
        : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16> -> tensor<?x4x?x64xbf16>
    scf.yield %a : tensor<?x4x?x64xbf16>
  }
  return %o : tensor<?x4x?x64xbf16>
}
