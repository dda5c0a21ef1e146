// The partial kernel of a split-KV form states in its launch contract how a
// host chooses the split count: the size rule of `splits`, the host's
// evaluation of the form's attnc.kv_split_count (its max_splits and
// ctas_per_sm, and the K/V tiles of a row: ceil(Skv / block_kv), a constant
// when Skv is static). attnc-compile writes it as the kernel's manifest
// entry's size_rules (docs/abi.md); the combine kernel has none.
// On sm_90 and later the two kernels overlap by programmatic dependent
// launch: the partial kernel's first instruction lets the combine kernel be
// scheduled, the combine kernel's first waits for the partials (before any
// global access) and its contract says `programmatic_launch`, so the host
// launches it with programmatic stream serialization. sm_80 has neither.
// The combine's 512 threads are 4 parts of 128 lanes: part p merges splits
// p, p + 4, ... of its lane's cell, parts 1-3 leave their states (3 x 3 x
// 128 words) in shared memory between two barriers and part 0 merges them
// in, in part order.
// RUN: attnc-opt %s --attnc-online-softmax="block-q=16 block-kv=64 strategy=mma_sync" \
// RUN:   --attnc-split-kv="max-splits=64 ctas-per-sm=2" --canonicalize --cse \
// RUN:   --attnc-convert-to-gpu | FileCheck %s
// RUN: attnc-opt %s --attnc-online-softmax="block-q=16 block-kv=64 strategy=mma_sync" \
// RUN:   --attnc-split-kv --canonicalize --cse --attnc-convert-to-gpu \
// RUN:   | attnc-opt | FileCheck %s --check-prefix=DEFAULT
// RUN: attnc-opt %s --attnc-online-softmax="block-q=16 block-kv=64 strategy=mma_sync" \
// RUN:   --attnc-split-kv --canonicalize --cse --attnc-convert-to-gpu="chip=sm_80" \
// RUN:   | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: gpu.module @decode_0_module
// CHECK-SAME: kind = "attention_partial"
// CHECK-SAME: grid = {{\[\[}}ceil_div(Sq, 16), splits], [H], [B]]
// CHECK-SAME: constraints = [divisible(H, Hkv), min(splits, 1), max(splits, 128)],
// CHECK-SAME: size_rules = [kv_splits(splits, kv_tiles = [ceil_div(Skv, 64)], max = 64, per_sm = 2)]
// CHECK-SAME: launches_dependents = true
// CHECK-SAME: unsplit = @decode_unsplit>
// CHECK: gpu.func @decode_0(
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-LABEL: gpu.module @decode_1_module
// CHECK-SAME: kind = "attention_combine"
// CHECK-SAME: block = [512, 1, 1], shared_memory = 4608,
// CHECK-SAME: constraints = [min(splits, 1), max(splits, 128)], attrs = {
// CHECK-SAME: programmatic_launch>
// CHECK: gpu.func @decode_1(
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK: memref.view {{.*}} to memref<1152xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4 iter_args
// CHECK-COUNT-3: memref.store {{.*}} : memref<1152xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-9: memref.load {{.*}} : memref<1152xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// The unsplit twin (--attnc-split-kv's clone of the function before the
// rewrite) is one kernel from q, k, v to o, named by the partial kernel's
// contract; a host runs it when the split rule gives one split.
// CHECK-LABEL: gpu.module @decode_unsplit_module
// CHECK-SAME: kernel = @decode_unsplit, kind = "attention"
// CHECK-SAME: tensor<"o", bf16, [B, H, Sq, 128], output
// CHECK-NOT: o_partial
// CHECK-NOT: unsplit =
// CHECK: gpu.func @decode_unsplit(
// SM80-LABEL: gpu.module @decode_0_module
// SM80-NOT: launches_dependents
// SM80-NOT: griddepcontrol
// SM80-LABEL: gpu.module @decode_1_module
// SM80-NOT: programmatic_launch
// SM80-NOT: griddepcontrol
// SM80: gpu.func @decode_1(
// DEFAULT: size_rules = [kv_splits(splits, kv_tiles = [ceil_div(Skv, 64)], max = 128, per_sm = {{[0-9]+}})]
func.func @decode(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// A static Skv of 1000: 16 tiles of 64 keys.
// CHECK-LABEL: gpu.module @static_kv_0_module
// CHECK-SAME: grid = {{\[\[}}splits], [32], [B]]
// CHECK-SAME: size_rules = [kv_splits(splits, kv_tiles = [16], max = 64, per_sm = 2)]
func.func @static_kv(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x1000x128xbf16>, %v: tensor<?x8x1000x128xbf16>) -> tensor<?x32x1x128xbf16> {
  %o = attnc.attention %q, %k, %v {scale = 0.08838834764831845 : f64}
      : tensor<?x32x1x128xbf16>, tensor<?x8x1000x128xbf16>, tensor<?x8x1000x128xbf16> -> tensor<?x32x1x128xbf16>
  return %o : tensor<?x32x1x128xbf16>
}
