//===- AttncAttrs.td - attnc attributes --------------------*- tablegen -*-===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// Typed attributes that carry configuration between the layers: the
// attention configuration the middle-end chooses for the back-end
// (flash_config) and the launch contract the back-end hands to
// attnc-compile and the analyses (AttncContractAttrs.td). Configuration
// travels in these, never in discardable integers or JSON strings.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTNC_IR_ATTNCATTRS_TD
#define ATTNC_DIALECT_ATTNC_IR_ATTNCATTRS_TD

include "attnc/Dialect/Attnc/IR/AttncDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "attnc/Dialect/Attnc/IR/AttncAttrInterfaces.td"

class Attnc_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Attnc_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Attention configuration
//===----------------------------------------------------------------------===//

def Attnc_TileStrategy : I32EnumAttr<"TileStrategy",
    "how a flash-form attention kernel moves tiles and multiplies them", [
      I32EnumAttrCase<"mma_sync", 0>, I32EnumAttrCase<"wgmma", 1>,
      I32EnumAttrCase<"wgmma_ws", 2>,
      I32EnumAttrCase<"wgmma_ws_persistent", 3>,
      I32EnumAttrCase<"mma_sync_unaligned", 4>,
      I32EnumAttrCase<"wgmma_persistent", 5>]> {
  let cppNamespace = "::attnc";
  let genSpecializedAttr = 0;
}
def Attnc_TileStrategyAttr
    : EnumAttr<Attnc_Dialect, Attnc_TileStrategy, "tile_strategy">;

def Attnc_FlashConfigAttr : Attnc_Attr<"FlashConfig", "flash_config"> {
  let summary = "tiles, warps, pipeline depth and tile strategy of one "
                "flash-form attention kernel";
  let description = [{
    Chosen by `--attnc-online-softmax` from the target description (or
    given on `attnc.attention` as its `config`) and read by
    `--attnc-convert-to-gpu`:

    - `block_q`: query rows per CTA, the step of the flash form's query
      tile dimension. The back-end checks it against the query slice the IR
      extracts.
    - `block_kv`: key/value rows per step of the K/V loops; checked against
      the K/V slices of the IR.
    - `warps`: warps that compute; each owns `block_q * key_warps / warps`
      query rows.
    - `key_warps` (optional, 1 when omitted): the warps that share each
      query row split every K/V tile's keys among themselves, each keeping
      its own running max, sum and output over its `block_kv / key_warps`
      keys of every step; at the end they merge the way split-KV's combine
      does (mma_sync only). Decoding has one 16-row slab of packed query
      rows and many keys: split this way, a K/V tile's products are spread
      over several warps instead of one.
    - `stages`: K/V tiles in flight in shared memory (2: the next tile loads
      while the current one is computed).
    - `interleave_kv` (optional keyword; mma_sync strategies): K and V
      tiles take turns in one ring of `stages` single-tile buffers (K of
      tile j, then its V, then K of tile j + 1, ...) instead of `stages`
      buffers of (K, V) pairs: a step waits for its K, computes S while its
      V and the tiles after it load, then waits for its V and computes P V
      while the next K loads. All loads but one are in flight at any time,
      and an odd ring fits where pairs do not (decoding's 16 x 128 tile
      twice per SM with three buffers).
    - `overlap_pv` (optional keyword; wgmma strategies): P V of a step runs
      on the tensor cores during the next step's softmax
      (FlashAttention-3's intra-warpgroup overlap): a step issues its S,
      then the previous step's P V, waits for S only, and rescales the
      accumulator once P V is done. A step's V is then read one step
      longer: `wgmma_ws` gives K and V barriers of their own in its ring
      (K is released once S is read), so 2 stages suffice; `wgmma`'s
      cp.async pipeline needs `stages = 3`. With a producer and several
      consumer warpgroups, they also take turns issuing their MMAs
      (ping-pong), so one's softmax runs while another's MMAs do.
    - `shared_p` (optional keyword; `wgmma_ws` and `wgmma_ws_persistent`
      with `overlap_pv`): the P V reads P from shared memory through a
      descriptor instead of from registers. A step stores its
      probabilities into one of two `block_q x block_kv` buffers (the
      query tile's swizzled layout) while the previous step's P V, which
      reads the other buffer, is still in flight; no register that MMA
      reads is written, so the step's whole softmax runs before its wait.
      Costs the two buffers (a persistent kernel at d = 128 aliases the
      first with the output's staging buffer and keeps one query buffer)
      and a warpgroup barrier per step.
    - `mma_row_sums` (optional keyword; forward wgmma strategies, P in
      registers): the softmax's row sums are taken on the tensor cores
      instead of by one f32 add per probability: every k16 slice of a
      step's packed P (the register A operand of its P V, in the layout of
      an mma.sync m16n8k16 A fragment per warp) is multiplied by a 16 x 8
      tile of ones, each column of the product being its rows' sum,
      accumulated in f32. A step's 64 adds a thread (block_kv = 128)
      become 8 mma.sync a warp; the sums are those of the rounded P that P
      V reads, already whole rows (no quad reduction at the end). Dropout,
      whose sums are of the undropped probabilities, is refused.
    - `l2_group_mib` (optional keyword; 0 when omitted): the order of the
      blocks of a grid that runs longest first (a causal mask: heads on
      grid x, query tiles counted down on y, batch on z). The grid runs a batch's heads
      together, the longest query tiles of all its heads first; when the
      K and V of that many heads exceed this many MiB, each block takes
      the tile of its position in groups of heads whose K and V fit it
      (groups as equal as they can be), each group longest first. The
      blocks that run together then read the K/V of few heads, which stay
      in L2, instead of every head's K/V streaming through it. The kernel
      evaluates the group from Skv; a fallback lowers the same grid, so it
      follows the config it is the fallback of and carries no group of
      its own. A persistent grid (`wgmma_ws_persistent`), whose CTAs walk
      the tiles in that order, groups heads counted batch-major the same
      way, at most a batch's per group; the backward's `wgmma_persistent`
      has no such order and refuses it. On an `attnc.attention_grad`'s
      causal grid (K/V heads on x, K/V tiles on y, each head's first tile
      the longest) the groups are of K/V heads whose query rows (Q, dO,
      dQ's f32 workspace of their query heads) fit the
      budget: the blocks that run together then share those rows in L2.
    - `strategy`: how tiles move and multiply: `mma_sync` (cp.async into
      padded shared memory, ldmatrix, mma.sync m16n8k16; sm_80 and later)
      or `wgmma` (cp.async into 128-byte-swizzled shared memory, Q K^T by
      warpgroup MMAs from shared-memory descriptors, P V with P from
      registers; sm_90a only; each warp owns 16 query rows, each warpgroup
      of four warps 64) or `wgmma_ws` (the same MMAs, warp-specialised: one
      more warpgroup, the producer, loads every K/V tile into a ring of
      `stages` slots guarded by mbarriers, so the computing warpgroups never
      wait for each other at a CTA barrier; setmaxnreg moves the producer's
      registers to them; Q, K and V come by TMA) or `wgmma_ws_persistent`
      (the same, on a grid of one CTA per SM that walks the forall's
      iterations itself, so the producer loads the next tile's K/V while
      the consumers store the current one's output) or `mma_sync_unaligned`
      (mma_sync with element-wide global loads and stores instead of 16-byte
      ones: slower, but Q, K, V and O need only be aligned to their element
      size; it exists to be a fallback) or `wgmma_persistent` (the
      backward's `wgmma` kernel on a grid of one CTA per SM that walks the
      forall's K/V tiles itself: the next tile's K and V load while this
      one's dK and dV are stored, and no SM waits for a new CTA between
      tiles; backward only).
    - `fallback` (optional): the configuration of a second kernel of the
      same flash form, for tensors the first cannot address (TMA needs the
      base and every outer stride 16-byte aligned). Same `block_q` and
      `block_kv` (it lowers the same loops), no fallback of its own;
      `--attnc-convert-to-gpu` builds both and names the second in the
      first's launch contract, and the runtime runs it on the tensors the
      first refuses and it accepts.

    Example:

    ```mlir
    #attnc.flash_config<block_q = 256, block_kv = 64, warps = 8, stages = 2,
                        strategy = mma_sync>
    #attnc.flash_config<block_q = 16, block_kv = 64, warps = 2, stages = 2,
                        strategy = mma_sync, key_warps = 2>
    #attnc.flash_config<block_q = 128, block_kv = 128, warps = 8, stages = 2,
      strategy = wgmma_ws, overlap_pv, l2_group_mib = 32,
      fallback = <block_q = 128, block_kv = 128, warps = 8, stages = 2,
      strategy = mma_sync_unaligned>>
    ```
  }];
  let parameters = (ins "int64_t":$blockQ, "int64_t":$blockKV,
                        "int64_t":$warps, "int64_t":$stages,
                        "::attnc::TileStrategy":$strategy,
                        DefaultValuedParameter<"int64_t", "1">:$keyWarps,
                        DefaultValuedParameter<"bool", "false">:$interleaveKV,
                        DefaultValuedParameter<"bool", "false">:$overlapPV,
                        DefaultValuedParameter<"bool", "false">:$sharedP,
                        DefaultValuedParameter<"bool", "false">:$mmaRowSums,
                        DefaultValuedParameter<"int64_t", "0">:$l2GroupMib,
                        OptionalParameter<"::attnc::FlashConfigAttr">:
                            $fallback);
  let builders = [
    AttrBuilder<(ins "int64_t":$blockQ, "int64_t":$blockKV, "int64_t":$warps,
                     "int64_t":$stages, "::attnc::TileStrategy":$strategy,
                     CArg<"::attnc::FlashConfigAttr", "{}">:$fallback,
                     CArg<"int64_t", "1">:$keyWarps,
                     CArg<"bool", "false">:$interleaveKV,
                     CArg<"bool", "false">:$overlapPV,
                     CArg<"int64_t", "0">:$l2GroupMib,
                     CArg<"bool", "false">:$sharedP,
                     CArg<"bool", "false">:$mmaRowSums), [{
      return $_get($_ctxt, blockQ, blockKV, warps, stages, strategy, keyWarps,
                   interleaveKV, overlapPV, sharedP, mmaRowSums, l2GroupMib,
                   fallback);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let extraClassDeclaration = [{
    /// This configuration with one field changed (the passes that refine a
    /// target description's choice: a fallback, an overlap, an L2 group).
    FlashConfigAttr withFallback(FlashConfigAttr fallback) const {
      return get(getContext(), getBlockQ(), getBlockKV(), getWarps(),
                 getStages(), getStrategy(), fallback, getKeyWarps(),
                 getInterleaveKV(), getOverlapPV(), getL2GroupMib(),
                 getSharedP(), getMmaRowSums());
    }
    /// (P in shared memory is for overlapped P V only: without the overlap
    /// the keyword goes too.)
    FlashConfigAttr withOverlapPV(bool overlapPV) const {
      return get(getContext(), getBlockQ(), getBlockKV(), getWarps(),
                 getStages(), getStrategy(), getFallback(), getKeyWarps(),
                 getInterleaveKV(), overlapPV, getL2GroupMib(),
                 overlapPV && getSharedP(), getMmaRowSums());
    }
    FlashConfigAttr withSharedP(bool sharedP) const {
      return get(getContext(), getBlockQ(), getBlockKV(), getWarps(),
                 getStages(), getStrategy(), getFallback(), getKeyWarps(),
                 getInterleaveKV(), getOverlapPV(), getL2GroupMib(), sharedP,
                 getMmaRowSums());
    }
    FlashConfigAttr withMmaRowSums(bool mmaRowSums) const {
      return get(getContext(), getBlockQ(), getBlockKV(), getWarps(),
                 getStages(), getStrategy(), getFallback(), getKeyWarps(),
                 getInterleaveKV(), getOverlapPV(), getL2GroupMib(),
                 getSharedP(), mmaRowSums);
    }
    FlashConfigAttr withL2GroupMib(int64_t mib) const {
      return get(getContext(), getBlockQ(), getBlockKV(), getWarps(),
                 getStages(), getStrategy(), getFallback(), getKeyWarps(),
                 getInterleaveKV(), getOverlapPV(), mib, getSharedP(),
                 getMmaRowSums());
    }
  }];
  let assemblyFormat = [{
    `<` `block_q` `=` $blockQ `,` `block_kv` `=` $blockKV `,` `warps` `=`
    $warps `,` `stages` `=` $stages `,` `strategy` `=` $strategy
    `` custom<FlashConfigTail>($keyWarps, $interleaveKV, $overlapPV,
                               $sharedP, $mmaRowSums, $l2GroupMib, $fallback)
    `>`
  }];
  let genVerifyDecl = 1;
}

include "attnc/Dialect/Attnc/IR/AttncContractAttrs.td"

#endif // ATTNC_DIALECT_ATTNC_IR_ATTNCATTRS_TD
