// Round trip of #attnc.launch_contract and its parts: parse, print, parse
// again; the printed form is the one in docs/launch-contract.md.
// RUN: attnc-opt %s | attnc-opt | FileCheck %s

// Every parameter kind, factor kind and constraint kind in one contract.
// CHECK-LABEL: gpu.module @attn_module
// CHECK-SAME: attnc.launch_contract = #attnc.launch_contract<kernel = @attn, kind = "attention",
// CHECK-SAME: params = [tensor<"q", bf16, [B, H, Sq, 128], input, align = 16, row_align = 16>,
// CHECK-SAME: tensor<"o", bf16, [B, H, Sq, 128], output, align = 16, row_align = 16>,
// CHECK-SAME: tensor<"lse", f32, [B, H, Sq], output, align = 16>,
// CHECK-SAME: tensor<"k", bf16, [B, Hkv, Skv, 128], input, align = 16>,
// CHECK-SAME: size<"B", i64>, size<"Sq", i32>,
// CHECK-SAME: stride<"q.stride0", i64, tensor = "q", dim = 0>,
// CHECK-SAME: scalar<"scale", f32>,
// CHECK-SAME: tensormap<"q.map", tensor = "q", box = [1, 1, 64, 64], swizzle = 128, oob_fill = zero>,
// CHECK-SAME: tensormap<"k.map", tensor = "k", box = [1, 1, 64, 64], swizzle = 128, oob_fill = nan>,
// CHECK-SAME: workspace<"partials", bytes = [device(num_sms), 4096], zero_init>,
// CHECK-SAME: workspace<"rows", bytes = [B, H, ceil_div(Sq, 128), 8]>,
// CHECK-SAME: workspace<"acc", bytes = [B, H, Sq, 512], zero_init, view = f32 [B, H, Sq, 128]>,
// CHECK-SAME: tensormap<"acc.map", tensor = "acc", box = [1, 1, 64, 32], swizzle = 128, oob_fill = zero>],
// CHECK-SAME: grid = {{\[\[}}ceil_div(Sq, 128)], [H], [B]], block = [256, 1, 1], shared_memory = 99328,
// CHECK-SAME: constraints = [divisible(H, Hkv), equal(Skv, Skv), min(Sq, 1)],
// CHECK-SAME: attrs = {block_q = 128 : i64, causal = true, note = "v2", scale = 1.250000e-01 : f64},
// CHECK-SAME: fallback = @attn_fallback>
gpu.module @attn_module attributes {attnc.launch_contract = #attnc.launch_contract<
    kernel = @attn, kind = "attention",
    params = [tensor<"q", bf16, [B, H, Sq, 128], input, align = 16, row_align = 16>,
              tensor<"o", bf16, [B, H, Sq, 128], output, align = 16, row_align = 16>,
              tensor<"lse", f32, [B, H, Sq], output, align = 16>,
              tensor<"k", bf16, [B, Hkv, Skv, 128], input, align = 16>,
              size<"B", i64>, size<"Sq", i32>,
              stride<"q.stride0", i64, tensor = "q", dim = 0>,
              scalar<"scale", f32>,
              tensormap<"q.map", tensor = "q", box = [1, 1, 64, 64], swizzle = 128, oob_fill = zero>,
              tensormap<"k.map", tensor = "k", box = [1, 1, 64, 64], swizzle = 128, oob_fill = nan>,
              workspace<"partials", bytes = [device(num_sms), 4096], zero_init>,
              workspace<"rows", bytes = [B, H, ceil_div(Sq, 128), 8]>,
              workspace<"acc", bytes = [B, H, Sq, 512], zero_init, view = f32 [B, H, Sq, 128]>,
              tensormap<"acc.map", tensor = "acc", box = [1, 1, 64, 32], swizzle = 128, oob_fill = zero>],
    grid = [[ceil_div(Sq, 128)], [H], [B]], block = [256, 1, 1], shared_memory = 99328,
    constraints = [divisible(H, Hkv), equal(Skv, Skv), min(Sq, 1)],
    fallback = @attn_fallback,
    attrs = {causal = true, scale = 0.125 : f64, block_q = 128 : i64, note = "v2"}>} {
  llvm.func @attn(%q: !llvm.ptr<1>, %o: !llvm.ptr<1>, %lse: !llvm.ptr<1>, %k: !llvm.ptr<1>,
                  %b: i64, %sq: i32, %qs0: i64, %scale: f32, %qmap: !llvm.ptr, %kmap: !llvm.ptr,
                  %partials: !llvm.ptr<1>, %rows: !llvm.ptr<1>, %acc: !llvm.ptr<1>,
                  %accmap: !llvm.ptr) attributes {nvvm.kernel} {
    llvm.return
  }
}

// A split-KV partial kernel: the size rule of the split count, which a host
// evaluates to allocate the partials (docs/abi.md), and the unsplit kernel
// it runs instead when the rule gives one split.
// CHECK-LABEL: gpu.module @partial_module
// CHECK-SAME: grid = {{\[\[}}ceil_div(Sq, 16), splits], [H], [B]], block = [32, 1, 1], shared_memory = 0,
// CHECK-SAME: constraints = [min(splits, 1), max(splits, 128)],
// CHECK-SAME: size_rules = [kv_splits(splits, kv_tiles = [ceil_div(Skv, 64)], max = 128, per_sm = 2),
// CHECK-SAME: kv_splits("s 2", kv_tiles = [Skv, 2, device(num_sms)], max = 1, per_sm = 1)], unsplit = @partial_unsplit>
gpu.module @partial_module attributes {attnc.launch_contract = #attnc.launch_contract<
    kernel = @partial, kind = "attention_partial",
    params = [tensor<"q", bf16, [B, H, Sq, 128], input, align = 16>,
              tensor<"k", bf16, [B, H, Skv, 128], input, align = 16>,
              tensor<"lse_partial", f32, [splits, B, H, Sq, "s 2"], output, align = 16>],
    grid = [[ceil_div(Sq, 16), splits], [H], [B]], block = [32, 1, 1], shared_memory = 0,
    size_rules = [kv_splits(splits, kv_tiles = [ceil_div(Skv, 64)], max = 128, per_sm = 2),
                  kv_splits("s 2", kv_tiles = [Skv, 2, device(num_sms)], max = 1, per_sm = 1)],
    unsplit = @partial_unsplit, constraints = [min(splits, 1), max(splits, 128)]>} {
  llvm.func @partial(%q: !llvm.ptr<1>, %k: !llvm.ptr<1>, %lse: !llvm.ptr<1>) attributes {nvvm.kernel} {
    llvm.return
  }
}

// A kernel launched programmatically (it waits for the grids before it):
// the keyword comes last when printed, wherever it was written.
// CHECK-LABEL: gpu.module @combine_module
// CHECK-SAME: shared_memory = 0, constraints = [min(splits, 1)], programmatic_launch>
gpu.module @combine_module attributes {attnc.launch_contract = #attnc.launch_contract<
    kernel = @combine, kind = "attention_combine",
    params = [tensor<"lse_partial", f32, [splits, B], input, align = 4>],
    grid = [[B], [1], [1]], block = [128, 1, 1], shared_memory = 0,
    programmatic_launch, constraints = [min(splits, 1)]>} {
  gpu.func @combine(%lse: !llvm.ptr<1>) kernel {
    gpu.return
  }
}

// A kernel with size variants (docs/abi.md, "Variants"): the kernels a host
// runs instead, in order, each with the sizes it runs for.
// CHECK-LABEL: gpu.module @grad_module
// CHECK-SAME: shared_memory = 0, fallback = @grad_fallback, variants = [@grad_v0 when [min(Sq, 4096), max(Skv, 65536)], @grad_v1 when [min(Sq, 1024)]]>
gpu.module @grad_module attributes {attnc.launch_contract = #attnc.launch_contract<
    kernel = @grad, kind = "attention_backward",
    params = [tensor<"q", bf16, [B, H, Sq, 64], input, align = 16>,
              tensor<"k", bf16, [B, H, Skv, 64], input, align = 16>],
    grid = [[H], [ceil_div(Skv, 64)], [B]], block = [128, 1, 1], shared_memory = 0,
    variants = [@grad_v0 when [min(Sq, 4096), max(Skv, 65536)], @grad_v1 when [min(Sq, 1024)]],
    fallback = @grad_fallback>} {
  gpu.func @grad(%q: !llvm.ptr<1>, %k: !llvm.ptr<1>) kernel {
    gpu.return
  }
}

// Without constraints and attrs, neither is printed; symbols that are not
// identifiers are quoted.
// CHECK-LABEL: gpu.module @fill_module
// CHECK-SAME: #attnc.launch_contract<kernel = @fill, kind = "fusion", params = [tensor<"y", f32, ["rows 0", 4096], output, align = 4>, size<"rows 0", i64>], grid = {{\[\[}}"rows 0"], [1], [1]], block = [128, 1, 1], shared_memory = 0>}
gpu.module @fill_module attributes {attnc.launch_contract = #attnc.launch_contract<kernel = @fill, kind = "fusion", params = [tensor<"y", f32, ["rows 0", 4096], output, align = 4>, size<"rows 0", i64>], grid = [["rows 0"], [1], [1]], block = [128, 1, 1], shared_memory = 0, attrs = {}>} {
  gpu.func @fill(%y: !llvm.ptr<1>, %n: i64) kernel {
    gpu.return
  }
}

// The parts on their own, and kernel parameter names.
// CHECK-LABEL: func.func @parts
// CHECK-SAME: %{{.*}}: f32 {attnc.name = "x"}
// CHECK-SAME: -> (f32 {attnc.name = "y"})
// CHECK-SAME: c = #attnc.constraint<divisible(H, Hkv)>
// CHECK-SAME: c2 = #attnc.constraint<ratio(H, Hkv, 4)>
// CHECK-SAME: c3 = #attnc.constraint<at_most(T, B, 1024)>
// CHECK-SAME: f = #attnc.factor<ceil_div(S, 64)>
// CHECK-SAME: g = #attnc.factor<device(num_sms)>
// CHECK-SAME: h = #attnc.factor<ceil_div(T, 128) + B>
// CHECK-SAME: k = #attnc.kernel_variant<@attn_v0 when [min(Sq, 4096)]>
// CHECK-SAME: p = #attnc.tensor_param<"q", bf16, [B, 64], input, align = 16>
// CHECK-SAME: r = #attnc.size_rule<kv_splits(splits, kv_tiles = [ceil_div(Skv, 64)], max = 128, per_sm = 2)>
// CHECK-SAME: w = #attnc.workspace_param<"w", bytes = [64]>
func.func @parts(%x: f32 {attnc.name = "x"}) -> (f32 {attnc.name = "y"}) attributes {
    c = #attnc.constraint<divisible(H, Hkv)>, f = #attnc.factor<ceil_div(S, 64)>,
    c2 = #attnc.constraint<ratio(H, Hkv, 4)>,
    c3 = #attnc.constraint<at_most(T, B, 1024)>,
    g = #attnc.factor<device(num_sms)>,
    h = #attnc.factor<ceil_div(T, 128) + B>,
    k = #attnc.kernel_variant<@attn_v0 when [min(Sq, 4096)]>,
    r = #attnc.size_rule<kv_splits(splits, kv_tiles = [ceil_div(Skv, 64)], max = 128, per_sm = 2)>,
    p = #attnc.tensor_param<"q", bf16, [B, 64], input, align = 16>,
    w = #attnc.workspace_param<"w", bytes = [64]>} {
  return %x : f32
}
