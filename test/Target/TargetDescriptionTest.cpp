//===- TargetDescriptionTest.cpp - tests of the target description -------===//
//
// Part of the attnc project.
//
//===----------------------------------------------------------------------===//
//
// The table behind every chip=, target= and device= option: what each name
// resolves to, and the defaults the lit tests of the passes rely on.
//
//===----------------------------------------------------------------------===//

#include "attnc/Target/TargetDescription.h"
#include "attnc/Dialect/Attnc/IR/AttncDialect.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace attnc;

namespace {

TargetDescription lookup(llvm::StringRef name) {
  mlir::FailureOr<TargetDescription> t = lookupTargetDescription(name);
  EXPECT_TRUE(mlir::succeeded(t)) << name.str();
  return mlir::succeeded(t) ? *t : TargetDescription{};
}

TEST(TargetDescription, DevicesInReportOrder) {
  std::vector<std::string> devices;
  for (const TargetDescription &t : getTargetDescriptions())
    devices.push_back(t.device);
  EXPECT_EQ(devices, (std::vector<std::string>{"h100", "h200", "a100"}));
}

TEST(TargetDescription, ChipsResolveToTheirDefaultDevice) {
  EXPECT_EQ(lookup("sm_90a").device, "h100");
  EXPECT_EQ(lookup("sm_90").device, "h100");
  EXPECT_EQ(lookup("sm_80").device, "a100");
  EXPECT_EQ(lookup("H200").chip, "sm_90a");
  EXPECT_EQ(lookup("a100").chip, "sm_80");
  EXPECT_TRUE(mlir::failed(lookupTargetDescription("sm_75")));
  EXPECT_TRUE(mlir::failed(lookupTargetDescription("b200")));
  EXPECT_EQ(getKnownTargetNames(),
            "h100, h200, a100 (devices) or sm_80, sm_90, sm_90a (chips)");
}

TEST(TargetDescription, Sm90LacksTheArchSpecificFeatures) {
  TargetDescription a = lookup("sm_90a"), plain = lookup("sm_90");
  EXPECT_EQ(a.getFeatureNames(),
            (llvm::SmallVector<llvm::StringRef>{
                "mma_sync", "tma", "wgmma", "setmaxnreg", "griddepcontrol"}));
  EXPECT_EQ(plain.chip, "sm_90");
  EXPECT_TRUE(plain.hasFeature(TargetFeature::Tma));
  EXPECT_TRUE(plain.hasFeature(TargetFeature::GridDependency));
  EXPECT_FALSE(lookup("a100").hasFeature(TargetFeature::GridDependency));
  EXPECT_FALSE(plain.hasFeature(TargetFeature::Wgmma));
  EXPECT_FALSE(plain.hasFeature(TargetFeature::SetMaxNReg));
  EXPECT_FALSE(lookup("a100").hasFeature(TargetFeature::Tma));
  EXPECT_TRUE(lookup("a100").hasFeature(TargetFeature::MmaSync));
  EXPECT_EQ(a.attentionTiles(128), plain.attentionTiles(128));
}

TEST(TargetDescription, AttentionDefaults) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<AttncDialect>();
  // Hopper (sm_90a): warp-specialised wgmma with 128 x 128 tiles and two
  // computing warpgroups for d = 128, 192 x 128 and three for d <= 64, 2
  // stages (measured on an H200); wgmma asked for: 128 x 64 at d <= 64; with
  // mma_sync asked for, 256 x 64 for d = 128 and 256 x 128 for d <= 64, 8
  // warps. sm_90 has no wgmma: mma_sync. Above d = 64 the warp-specialised
  // kernels overlap P V with the next step's softmax, unless told not to.
  auto ws = [&](int64_t q, int64_t kv, int64_t warps, TileStrategy kind,
                bool overlap) {
    return FlashConfigAttr::get(&ctx, q, kv, warps, 2, kind, /*fallback=*/{},
                                /*keyWarps=*/1, /*interleaveKV=*/false,
                                overlap);
  };
  EXPECT_EQ(lookup("sm_90a").attentionConfig(&ctx, 128),
            ws(128, 128, 8, TileStrategy::wgmma_ws, true));
  EXPECT_EQ(lookup("sm_90a").attentionConfig(&ctx, 128, 0, 0, std::nullopt, 0,
                                             /*masked=*/true, 1, false,
                                             /*overlapPV=*/false),
            ws(128, 128, 8, TileStrategy::wgmma_ws, false));
  // Without a mask the default is the persistent form, with 128 K/V rows at
  // d = 128; asked for, wgmma_ws takes 176 K/V rows a step there; other
  // strategies and head dims keep theirs.
  EXPECT_EQ(lookup("sm_90a").attentionConfig(&ctx, 128, 0, 0, std::nullopt, 0,
                                             /*masked=*/false),
            ws(128, 128, 8, TileStrategy::wgmma_ws_persistent, true));
  EXPECT_EQ(lookup("sm_90a").attentionConfig(&ctx, 128, 0, 0,
                                             TileStrategy::wgmma_ws, 0,
                                             /*masked=*/false),
            ws(128, 176, 8, TileStrategy::wgmma_ws, true));
  EXPECT_EQ(lookup("sm_90a").attentionConfig(&ctx, 128, 0, 0,
                                             TileStrategy::wgmma, 0,
                                             /*masked=*/false),
            FlashConfigAttr::get(&ctx, 128, 128, 8, 2, TileStrategy::wgmma));
  EXPECT_EQ(lookup("sm_90a").attentionConfig(&ctx, 64, 0, 0, std::nullopt, 0,
                                             /*masked=*/false),
            FlashConfigAttr::get(&ctx, 192, 128, 12, 2,
                                 TileStrategy::wgmma_ws_persistent));
  EXPECT_EQ(
      lookup("sm_90a").attentionConfig(&ctx, 128, 0, 0, TileStrategy::wgmma),
      FlashConfigAttr::get(&ctx, 128, 128, 8, 2, TileStrategy::wgmma));
  EXPECT_EQ(
      lookup("sm_90a").attentionConfig(&ctx, 128, 0, 0, TileStrategy::wgmma, 3),
      FlashConfigAttr::get(&ctx, 128, 128, 8, 3, TileStrategy::wgmma));
  // With a mask (the default), d <= 64 takes two warpgroups: 128 x 128.
  EXPECT_EQ(lookup("h200").attentionConfig(&ctx, 64),
            FlashConfigAttr::get(&ctx, 128, 128, 8, 2, TileStrategy::wgmma_ws));
  EXPECT_EQ(lookup("h200").attentionConfig(&ctx, 64, 0, 0, TileStrategy::wgmma),
            FlashConfigAttr::get(&ctx, 128, 64, 8, 2, TileStrategy::wgmma));
  EXPECT_EQ(
      lookup("sm_90a").attentionConfig(&ctx, 128, 0, 0, TileStrategy::mma_sync),
      FlashConfigAttr::get(&ctx, 256, 64, 8, 2, TileStrategy::mma_sync));
  EXPECT_EQ(
      lookup("h200").attentionConfig(&ctx, 64, 0, 0, TileStrategy::mma_sync),
      FlashConfigAttr::get(&ctx, 256, 128, 8, 2, TileStrategy::mma_sync));
  EXPECT_EQ(lookup("sm_90").attentionConfig(&ctx, 128),
            FlashConfigAttr::get(&ctx, 256, 64, 8, 2, TileStrategy::mma_sync));
  EXPECT_EQ(lookup("sm_80").attentionConfig(&ctx, 128),
            FlashConfigAttr::get(&ctx, 128, 64, 4, 2, TileStrategy::mma_sync));
  // Given tiles win; small query tiles get one 16-row slab per warp.
  EXPECT_EQ(
      lookup("h100").attentionConfig(&ctx, 128, 64, 32, TileStrategy::mma_sync),
      FlashConfigAttr::get(&ctx, 64, 32, 4, 2, TileStrategy::mma_sync));
  // wgmma: a warp owns 16 rows of its warpgroup's m64 tile.
  EXPECT_EQ(lookup("h100").attentionConfig(&ctx, 128, 192, 64),
            ws(192, 64, 12, TileStrategy::wgmma_ws, true));
}

TEST(TargetDescription, TmaKernelsGetAnUnalignedFallback) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<AttncDialect>();
  TargetDescription h200 = lookup("h200");
  auto ws = FlashConfigAttr::get(&ctx, 128, 176, 8, 2, TileStrategy::wgmma_ws);
  // Same tiles and warps, two stages, element accesses: 226304 bytes of
  // shared memory at d = 128 with 176 K/V rows (padded rows: a 128-row
  // query tile), which fit.
  EXPECT_EQ(mmaSyncSharedMemoryBytes(128, 176, 128, 16, 2), 226304);
  // Query tiles of up to 64 rows get swizzled rows: unpadded, plus the
  // 128 bytes that align them.
  EXPECT_EQ(mmaSyncSharedMemoryBytes(16, 128, 128, 16, 3, true),
            16 * 256 + 3 * 128 * 256 + 128);
  EXPECT_EQ(mmaSyncSharedMemoryBytes(64, 64, 64, 16, 2),
            (64 + 4 * 64) * 128 + 128);
  EXPECT_EQ(mmaSyncSharedMemoryBytes(128, 64, 64, 16, 2), (128 + 4 * 64) * 144);
  EXPECT_EQ(h200.withFallback(ws, 128, 16),
            FlashConfigAttr::get(
                &ctx, 128, 176, 8, 2, TileStrategy::wgmma_ws,
                FlashConfigAttr::get(&ctx, 128, 176, 8, 2,
                                     TileStrategy::mma_sync_unaligned)));
  // Whose shared memory would not fit a block: none.
  auto wide =
      FlashConfigAttr::get(&ctx, 128, 256, 8, 2, TileStrategy::wgmma_ws);
  EXPECT_EQ(h200.withFallback(wide, 128, 16), wide);
  // Kernels that read by address need none.
  auto lockstep =
      FlashConfigAttr::get(&ctx, 128, 128, 8, 2, TileStrategy::wgmma);
  EXPECT_EQ(h200.withFallback(lockstep, 128, 16), lockstep);
  // The fallback lowers the config's grid: l2_group_mib stays on the
  // config, not on the fallback.
  auto grouped =
      FlashConfigAttr::get(&ctx, 128, 128, 8, 2, TileStrategy::wgmma_ws, {}, 1,
                           false, true, /*l2GroupMib=*/16);
  EXPECT_EQ(h200.withFallback(grouped, 128, 16),
            FlashConfigAttr::get(
                &ctx, 128, 128, 8, 2, TileStrategy::wgmma_ws,
                FlashConfigAttr::get(&ctx, 128, 128, 8, 2,
                                     TileStrategy::mma_sync_unaligned),
                1, false, true, 16));
}

TEST(TargetDescription, L2GroupsOfCausalGrids) {
  // A causal wgmma_ws grid above d = 64 groups its heads by 32 MiB of K/V
  // (measured on an H200), and the persistent grid, which draws its tiles
  // in the groups' order, at every head dimension; wgmma_ws at d = 64 and
  // mma_sync do not.
  TargetDescription h200 = lookup("h200");
  EXPECT_EQ(h200.attentionL2GroupMib(128, TileStrategy::wgmma_ws), 32);
  EXPECT_EQ(h200.attentionL2GroupMib(256, TileStrategy::wgmma_ws), 32);
  EXPECT_EQ(h200.attentionL2GroupMib(64, TileStrategy::wgmma_ws), 0);
  EXPECT_EQ(h200.attentionL2GroupMib(128, TileStrategy::mma_sync), 0);
  EXPECT_EQ(h200.attentionL2GroupMib(128, TileStrategy::wgmma_ws_persistent),
            32);
  EXPECT_EQ(h200.attentionL2GroupMib(64, TileStrategy::wgmma_ws_persistent),
            32);
}

TEST(TargetDescription, MachineNumbers) {
  TargetDescription h100 = lookup("h100"), a100 = lookup("a100");
  EXPECT_EQ(h100.numSMs, 132);
  EXPECT_EQ(a100.numSMs, 108);
  EXPECT_EQ(h100.sharedMemoryPerBlock, 227 * 1024);
  EXPECT_EQ(a100.sharedMemoryPerBlock, 163 * 1024);
}

TEST(TargetDescription, Rooflines) {
  // The reference ridges: 295 FLOP/B on H100, 153 on A100.
  EXPECT_NEAR(lookup("sm_90a").roofline.ridge(), 295.2, 0.1);
  EXPECT_NEAR(lookup("h200").roofline.ridge(), 206.0, 0.1);
  EXPECT_NEAR(lookup("sm_80").roofline.ridge(), 152.9, 0.1);
  EXPECT_EQ(lookup("h200").roofline.name, "h200");
  EXPECT_EQ(lookup("h100").roofline.launchOverheadUs, 5.0);
}

} // namespace
