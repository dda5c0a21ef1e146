// A score modifier (a softcap, 30 * tanh(s / 30), before a causal mask) is
// evaluated per score in the kernel; its tanh is LLVM's tanh with the afn
// flag, which NVPTX selects as tanh.approx.f32 (not libdevice's tanhf).
// A position converted to a float (ALiBi's slope * float(j - i)) is
// converted once per thread and step, at the thread's first row and column;
// each score adds its constant offset in f32 (no per-score integer-to-float
// conversion, a quarter-rate instruction).
// RUN: attnc-opt %s --attnc-pipeline="to-nvvm=false" | FileCheck %s

// The scale's multiply and the modifier's arithmetic carry the contract
// flag: a multiply and an add may become one FMA (measured on the H200,
// ALiBi at S = 4096: 0.88x -> 0.95x of plain causal).
// The cap's multiply after the tanh (a positive constant) folds into the
// exponent's factor, cap * log2(e) = 43.28: the max is taken on the tanh.
// The tanh bounds the scores to [-1, 1] (before the cap): 86.6 exp2 units,
// which fit bf16's probabilities, so a row's max is taken at its first step
// only, raised to the floor -0.4787 (1 - 64 / 43.28: probabilities stay
// below 2^64), and kept. The TMA kernel's peeled first step takes it; the
// rows it left without one take the floor; the loops' steps take no max,
// so each score's tanh runs on into its exponential.
// CHECK: gpu.module @softcap_module
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[E:.*]] = arith.constant 43.2808495 : f32
// CHECK: %[[FLOOR:.*]] = arith.constant -4.787140e-01 : f32
// CHECK-NOT: math.tanh
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK-NOT: nvvm.vote.sync
// CHECK: arith.maxnumf %{{.*}}, %[[FLOOR]] : f32
// CHECK: scf.for
// CHECK: llvm.intr.tanh
// CHECK-NOT: arith.maxnumf
// CHECK: math.fma %{{.*}}, %[[E]], %{{.*}} : f32
// CHECK-NOT: arith.maxnumf
// CHECK-NOT: math.tanh
// CHECK: gpu.module @softcap_fallback_module
// The fallback (mma_sync: no peeled step) takes the max in a loop's step
// only in a warp whose rows still have none (-inf), behind a vote.
// CHECK: %[[NINF2:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for
// CHECK: arith.cmpf oeq, %{{.*}}, %[[NINF2]] : f32
// CHECK: %[[ANY:.*]] = nvvm.vote.sync  any %{{.*}}, %{{.*}} -> i1
// CHECK-NEXT: scf.if %[[ANY]] -> (f32, f32) {
// CHECK: arith.maxnumf
// CHECK: } else {
func.func @softcap(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.08838834764831843> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %cap = arith.constant dense<30.0> : tensor<f32>
  %sd = attnc.div %ss, %cap : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %th = attnc.tanh %sd : tensor<?x?x?x?xf32>
  %sc = attnc.mul %th, %cap : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %sc {dimension = 2 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %sc {dimension = 3 : i64} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %keep = attnc.cmp le, %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %sc, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// CHECK-LABEL: gpu.module @alibi_module
// CHECK: gpu.func @alibi(
// One conversion at (q0 + row base) and (k0 + column base): -1 * i + 1 * j.
// (The producer's first muli by -1 counts the masked tiles visited first.)
// CHECK: %[[I:.*]] = arith.muli %{{.*}}, %c-1_{{[0-9]+}} : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: arith.muli
// CHECK-NEXT: %[[D:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT: arith.addi %{{.*}}, %[[D]] : index
// CHECK-NEXT: %[[D64:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT: %[[BASE:.*]] = arith.sitofp %[[D64]] : i64 to f32
// CHECK-NOT: arith.sitofp
// Then every score of the step: the slope times the base once, and for each
// other score fma(slope, its offset from the base, slope * base), added to
// the scaled score.
// CHECK: %[[SB:.*]] = arith.mulf %[[SLOPE:.*]], %[[BASE]] : f32
// CHECK-NEXT: arith.addf %{{.*}}, %[[SB]] fastmath<contract> : f32
// CHECK-COUNT-8: math.fma %[[SLOPE]], %{{.*}}, %[[SB]] : f32
// A modifier reading key positions under a causal mask has its diagonal
// tiles visited first (--attnc-online-softmax), where a steep head's row
// max sits: the lazy rescale then skips acc's rescale behind a vote on
// the factors (!= 1).
// CHECK: arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.ori
// CHECK-NEXT: arith.constant -1 : i32
// CHECK-NEXT: %[[RS:.*]] = nvvm.vote.sync  any %{{.*}}, %{{.*}} -> i1
// CHECK-NEXT: scf.if %[[RS]] -> (f32, f32,
// CHECK-NEXT: arith.mulf
func.func @alibi(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %t: tensor<?x1x1xf32> {attnc.name = "slopes"}) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.08838834764831843> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %rows = attnc.iota %ss {dimension = 2} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %cols = attnc.iota %ss {dimension = 3} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi64>
  %d = attnc.sub %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi64>
  %df = attnc.cast %d : tensor<?x?x?x?xi64> to tensor<?x?x?x?xf32>
  %bias = attnc.mul %t, %df : tensor<?x1x1xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %sb = attnc.add %ss, %bias : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %keep = attnc.cmp le, %cols, %rows : tensor<?x?x?x?xi64>, tensor<?x?x?x?xi64> -> tensor<?x?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attnc.select %keep, %sb, %ninf : tensor<?x?x?x?xi1>, tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %m : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// A softcap too wide for one constant max: at cap 100 the tanh's [-1, 1]
// spans 289 exp2 units (probabilities from 2^-289 would flush), so the
// running max is taken, as without a modifier. In f16 (probabilities kept
// within [2^-16, 2^8]) a cap of 10 is already too wide (29 units).
// CHECK-LABEL: gpu.module @softcap_wide_module
// CHECK: arith.constant 144.269501 : f32
// CHECK: llvm.intr.tanh
// CHECK: arith.maxnumf
// CHECK-LABEL: gpu.module @softcap_f16_module
// CHECK: arith.constant 14.4269505 : f32
// CHECK: llvm.intr.tanh
// CHECK: arith.maxnumf
func.func @softcap_wide(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.08838834764831843> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %cap = arith.constant dense<100.0> : tensor<f32>
  %sd = attnc.div %ss, %cap : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %th = attnc.tanh %sd : tensor<?x?x?x?xf32>
  %sc = attnc.mul %th, %cap : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %sc : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @softcap_f16(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.08838834764831843> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %cap = arith.constant dense<10.0> : tensor<f32>
  %sd = attnc.div %ss, %cap : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %th = attnc.tanh %sd : tensor<?x?x?x?xf32>
  %sc = attnc.mul %th, %cap : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %sc : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

// A score clamped to [-20, 20] (max(min(s, 20), -20): no trailing factor,
// 57.7 exp2 units) is bounded as well: the floor is 20 - 64 / log2(e) =
// -24.36, and the TMA kernel's loops take no max.
// CHECK-LABEL: gpu.module @clamp_module
// CHECK: %[[FLOOR:.*]] = arith.constant -24.3614
// CHECK: arith.maxnumf %{{.*}}, %[[FLOOR]] : f32
// CHECK: scf.for
// CHECK-NOT: arith.maxnumf
// CHECK: gpu.module @clamp_fallback_module
func.func @clamp(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %s = attnc.matmul %q, %k {transpose_b} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x?xf32>
  %c = arith.constant dense<0.08838834764831843> : tensor<f32>
  %ss = attnc.mul %s, %c : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %hi = arith.constant dense<20.0> : tensor<f32>
  %lo = arith.constant dense<-20.0> : tensor<f32>
  %a = attnc.min %ss, %hi : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %b = attnc.max %a, %lo : tensor<?x?x?x?xf32>, tensor<f32> -> tensor<?x?x?x?xf32>
  %p = attnc.softmax %b : tensor<?x?x?x?xf32>
  %pb = attnc.cast %p : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %o = attnc.matmul %pb, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
