// Inputs the GPU lowering cannot handle get a diagnostic naming the op and
// the reason, never a wrong kernel.
// RUN: attnc-opt %s -split-input-file -verify-diagnostics --attnc-fuse-elementwise --attnc-online-softmax="strategy=mma_sync" --attnc-convert-to-gpu

func.func @value_head_dim(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{'attnc.online_attention' op has value head dim 128 but query/key head dim 64; the flash kernel needs them equal}}
  %o = attnc.attention %q, %k, %v {scale = 0.125 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

func.func @head_dim_96(%q: tensor<?x?x?x96xbf16>) -> tensor<?x?x?x96xbf16> {
  // expected-error @+1 {{mma_sync strategy: head dim must be 64 or 128, got 96}}
  %o = attnc.attention %q, %q, %q {scale = 0.1 : f64} : tensor<?x?x?x96xbf16>, tensor<?x?x?x96xbf16>, tensor<?x?x?x96xbf16> -> tensor<?x?x?x96xbf16>
  return %o : tensor<?x?x?x96xbf16>
}

// -----

func.func @f32_attention(%q: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  // expected-error @+1 {{mma_sync strategy: element type must be bf16 or f16}}
  %o = attnc.attention %q, %q, %q {scale = 0.1 : f64} : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>
  return %o : tensor<?x?x?x64xf32>
}

// -----

func.func @dynamic_row(%x: tensor<?x?xbf16>) -> tensor<?x?xbf16> {
  // expected-error @+1 {{'attnc.fusion' op cannot be lowered to a row kernel: the last dimension must be static and a multiple of 8 (16-byte accesses), got ?}}
  %y = attnc.softmax %x : tensor<?x?xbf16>
  return %y : tensor<?x?xbf16>
}

// -----

func.func @odd_row(%x: tensor<4x100xf32>) -> tensor<4x100xf32> {
  // expected-error @+1 {{'attnc.fusion' op cannot be lowered to a row kernel: the last dimension must be static and a multiple of 8 (16-byte accesses), got 100}}
  %y = attnc.exp %x : tensor<4x100xf32>
  return %y : tensor<4x100xf32>
}

// -----

func.func @middle_broadcast(%x: tensor<4x8x64xf32>, %b: tensor<4x1x64xf32>) -> tensor<4x8x64xf32> {
  // expected-error @+1 {{cannot be lowered: it broadcasts against the iteration space in a way the row kernel does not support}}
  %y = attnc.add %x, %b : tensor<4x8x64xf32>, tensor<4x1x64xf32> -> tensor<4x8x64xf32>
  return %y : tensor<4x8x64xf32>
}

// -----

// A function name becomes the kernel's PTX entry and file names: one that is
// not a C identifier ('../' would write outside attnc-compile's -o) is refused.
// expected-error @+1 {{'func.func' op is named '../evil', which cannot name a kernel: kernel names are C identifiers of at most 200 characters}}
func.func @"../evil"(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = attnc.exp %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{'func.func' op is named '', which cannot name a kernel}}
func.func @""(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = attnc.exp %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Two kernels of @f are f_0 and f_1; a function named f_1 would clash.
func.func @f(%q: tensor<1x1x64x64xbf16>) -> (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>) {
  %a = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16> -> tensor<1x1x64x64xbf16>
  %b = attnc.attention %a, %q, %q {scale = 0.125 : f64} : tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16> -> tensor<1x1x64x64xbf16>
  return %a, %b : tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>
}
func.func @f_1(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{would be kernel 'f_1', a name another kernel of this module has}}
  %y = attnc.exp %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A row the kernel cannot hold in registers: 2^20 columns need 128 16-byte
// accesses per thread at 1024 threads (at most 32).
func.func @row_too_long(%x: tensor<4x1048576xf32>) -> tensor<4x1048576xf32> {
  // expected-error @+1 {{'attnc.fusion' op cannot be lowered to a row kernel: a row of 1048576 elements needs at least 128 16-byte accesses per thread at 1024 threads; the row kernel holds a row in registers and allows 32}}
  %y = attnc.exp %x : tensor<4x1048576xf32>
  return %y : tensor<4x1048576xf32>
}

// -----

// 8 x 1031 columns: 1031 groups of 8 (a prime above 1024) split evenly only
// into 1031 accesses of one thread. It used to build exactly that: a
// one-thread kernel with 1031 unrolled accesses, minutes to compile.
func.func @row_prime_groups(%x: tensor<4x8248xf32>) -> tensor<4x8248xf32> {
  // expected-error @+1 {{'attnc.fusion' op cannot be lowered to a row kernel: a row of 8248 elements (1031 16-byte groups) does not split evenly into at most 1024 threads of at most 32 accesses each}}
  %y = attnc.exp %x : tensor<4x8248xf32>
  return %y : tensor<4x8248xf32>
}

// -----

// 70000 static heads: the grid's y extent (heads, without a causal mask)
// exceeds CUDA's 65535; refused when compiling, not at launch.
func.func @heads_beyond_grid(%q: tensor<1x70000x64x64xbf16>) -> tensor<1x70000x64x64xbf16> {
  // expected-error @+1 {{'scf.forall' op grid.y has constant factors beyond CUDA's limit of 65535 blocks}}
  %o = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<1x70000x64x64xbf16>, tensor<1x70000x64x64xbf16>, tensor<1x70000x64x64xbf16> -> tensor<1x70000x64x64xbf16>
  return %o : tensor<1x70000x64x64xbf16>
}

// -----

// Empty rows used to reach the launch contract as a 0-thread block.
func.func @empty_rows(%x: tensor<4x0xf32>) -> tensor<4x0xf32> {
  // expected-error @+1 {{'attnc.fusion' op cannot be lowered to a row kernel: its rows are empty (last dimension 0)}}
  %y = attnc.exp %x : tensor<4x0xf32>
  return %y : tensor<4x0xf32>
}

// -----

// A K/V tile wider than a warp's registers hold (the fuzzer's hang:
// fuzz/regressions/opt/mma-sync-huge-block-kv.mlir).
func.func @huge_block_kv(%q: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  // expected-error @+1 {{mma_sync strategy: block_kv (2147483648) must be at most 256: each warp holds its rows' scores in registers}}
  %o = attnc.attention %q, %q, %q {config = #attnc.flash_config<block_q = 64, block_kv = 2147483648, warps = 4, stages = 2, strategy = mma_sync>, scale = 0.125 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A fallback exists for tensors TMA cannot address: one that reads through
// tensor maps itself is refused.
func.func @tma_fallback(%q: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  // expected-error @+1 {{has a fallback (strategy wgmma_ws) whose kernel reads through tensor maps; a fallback must take the same tensors and scalars and address them by pointer}}
  %o = attnc.attention %q, %q, %q {config = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync, fallback = <block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = wgmma_ws>>, scale = 0.125 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// The fallback of @f is kernel f_fallback, which a function of that name
// already is.
func.func @f_fallback(%q: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %q, %q {scale = 0.125 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
func.func @f(%q: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  // expected-error @+1 {{would have fallback kernel 'f_fallback', a name another kernel of this module has or that is not a C identifier of at most 200 characters; rename the function}}
  %o = attnc.attention %q, %q, %q {config = #attnc.flash_config<block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = wgmma_ws, fallback = <block_q = 128, block_kv = 64, warps = 8, stages = 2, strategy = mma_sync_unaligned>>, scale = 0.125 : f64} : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
