// The fuzz campaign at e74395a: block_kv = 2^31 with mma_sync passed the
// strategy's checks and the kernel builder then grouped 2^31 score elements
// (a hang). Now refused: block_kv is at most 256.
func.func @window_softcap(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %s: f32) -> tensor<?x?x?x64xbf16> {
  %o = attnc.attention %q, %k, %v runtime_scale(%s)
      {config = #attnc.flash_config<block_q = 064, block_kv = 2147483648, warps = 4, stages = 2, strategy = mma_sync>, scale = 0.125 : f64}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
      score {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 30.0 : f32
        %d = arith.divf %x, %c : f32
        %t = math.tanh %d : f32
        %y = arith.mulf %t, %c : f32
        attnc.yield %y : f32
      }
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %w = arith.constant 0 : index
        %jw = arith.addi %j, %w : index
        %keep = arith.cmpi ult, %i, %jw : index
        attnc.yield %keep : i1
      }
  return %o : tensor<?x?x?x64xbf16>
}
