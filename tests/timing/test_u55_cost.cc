// U55/U65 kernel-op cost: exact-cycle micro tests (derivation in each comment) and roofline
// tests. Memory: Vela's defaults, U55 Ethos_U55_High_End_Embedded + Shared_Sram (region 0 in
// off-chip flash at 1 B/cycle, latency 64; regions 1 and 2 in SRAM at 8 B/cycle, latency 32,
// burst 32 B).

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "emulator/engine/timing/op_cost.h"
#include "emulator/isa/error.h"
#include "tests/timing/timing_test_util.h"

namespace ethosu {
namespace {

using namespace timing_test;

constexpr auto kSram = static_cast<size_t>(MemoryKind::Sram);

struct Npu {
    NpuConfig npu;
    MemorySystem memory;
    explicit Npu(const char* name, SystemSelection s = {}) : npu(*find_npu_config(name)), memory(make_memory_system(npu, s)) {}
    OpCost cost(const DecodedOp& op) const { return u55_kernel_cost(op, cost_context(npu, memory)); }
};

// ADD int8 8x8x32 in SRAM, block 8x8x32, advanced scaling (OPA_32), no activation, U55-128:
//   output unit: max(AddSub 1.5, no-activation 1.0) = 1.5 cycles/element x 2048 = 3072.
//   IFM block fetch: 2048 contiguous bytes (pixel stride 32 = block depth, full 32 B bursts):
//     32 latency + 2048 / 8 = 288; OFM block write: depth 32 > 16 -> 16 B bursts, 2048 bytes
//     cost 4096: 32 + 4096 / 8 = 544.
//   issue limit: ceil((544 / 2048 + 1.5) / 4 x 2048) = ceil(904) = 904 < 3072.
//   traffic: IFM 2048 + IFM2 2048 read, OFM 2048 written; the OFM's 16 B bursts take the SRAM
//   time of 4096 bytes. AXI's read and write channels each carry 8 B/cycle, so the access needs
//   max(2048 + 2048, 4096) / 8 = 512 cycles.
TEST(U55Cost, ElementwiseAddIsOutputUnitBound) {
    const Npu s("ethos-u55-128");
    const OpCost c = s.cost(elementwise_add(8, 8, 32, 8, 1, 1, {8, 8, 32}));
    EXPECT_EQ(c.compute_cycles, 3072);
    EXPECT_EQ(c.output_cycles, 3072);
    EXPECT_EQ(c.issue_cycles, 904);
    EXPECT_EQ(c.traffic.read[kSram], 4096);
    EXPECT_EQ(c.traffic.write[kSram], 2048);
    EXPECT_EQ(c.access_cycles[kSram], 512);
    EXPECT_EQ(c.macs, 0);
}

// The same ADD with a ReLU: the activation class drops to 0.5, so the AddSub rate 1.5 still
// bounds it: 3072.
TEST(U55Cost, ElementwiseActivationClassDoesNotLowerTheAddSubRate) {
    const Npu s("ethos-u55-128");
    DecodedOp op = elementwise_add(8, 8, 32, 8, 1, 1, {8, 8, 32});
    relu(op);
    EXPECT_EQ(s.cost(op).compute_cycles, 3072);
}

// The same ADD with both operands on 16-bit scales (IFM_SCALE_MODE OPA_OPB_16, Vela's simplified
// scaling for equal input scales) takes the table's simple ADD/SUB rate: 1.0 x 2048 = 2048
// (the issue limit ceil((544 / 2048 + 1.0) / 4 x 2048) = 648 stays below). On U55-64 the two
// rates are 2.0 and 3.0: 4096 and 6144.
TEST(U55Cost, SimpleAddTakesTheSimpleAddSubRate) {
    DecodedOp op = elementwise_add(8, 8, 32, 8, 1, 1, {8, 8, 32});
    op.kernel().elementwise().operand_scaling = OperandScaling::Both16;
    const OpCost c = Npu("ethos-u55-128").cost(op);
    EXPECT_EQ(c.compute_cycles, 2048);
    EXPECT_EQ(c.issue_cycles, 648);
    EXPECT_EQ(Npu("ethos-u55-64").cost(op).compute_cycles, 4096);
    op.kernel().elementwise().operand_scaling = OperandScaling::Opb32;
    EXPECT_EQ(Npu("ethos-u55-64").cost(op).compute_cycles, 6144);
}

// An ADD whose OFM is 8x8x4 stored NHCWB16, U55-64, advanced scaling: the output unit's rate
// (AddSub 3.0) applies to the OFM's 256 elements, not to the 1024 of its 16-channel bricks:
// 3.0 x 256 = 768; the issue limit stays below it. Stored NHWC, the same 768.
TEST(U55Cost, ElementwiseCountsTheOfmsElementsNotItsBricks) {
    const Npu s("ethos-u55-64");
    DecodedOp op = elementwise_add(8, 8, 4, 8, 1, 1, {8, 8, 16});
    for (FeatureMap* fm : {&op.kernel().ifm, &op.kernel().ifm2, &op.kernel().ofm})
        *fm = feature_map(8, 8, 4, 8, 1, DataFormat::NHCWB16);
    const OpCost nhcwb16 = s.cost(op);
    EXPECT_EQ(nhcwb16.output_cycles, 768);
    EXPECT_EQ(nhcwb16.compute_cycles, 768);
    EXPECT_LT(nhcwb16.issue_cycles, 768);
    EXPECT_EQ(s.cost(elementwise_add(8, 8, 4, 8, 1, 1, {8, 8, 16})).compute_cycles, 768);
}

// 1x1 CONV 16x16x128 -> 16x16x64 int8, ReLU, block 8x16x32, U55-256 (micro-block 2x2x8):
//   micro-blocks per block 4x8x4 (WH 32, depth 4); per IFM depth slice of 32:
//   max(writeback 32, 4 x 32) x 1 kernel step x 4 = 512; 128 / 32 = 4 slices -> 2048 per block.
//   OFM blocks: (8 x 8 x 8 micro-blocks) / 128 = 4.
//   output unit: max(Other 0.25, ReLU 0.25) x 4096 = 1024 per block; scale fetch 10 x 32 x 64 / 256 = 80.
//   IFM block: 8x16x32 of a 128-deep NHWC map (not contiguous: 32 B bursts) 32 + 4096 / 8 = 544;
//   OFM block write 4096 elements at 16 B bursts: 32 + 8192 / 8 = 1056; skew 512.
//   issue (512 + 2048 + 1024) / 4 = 896. MAC bound: 2048 x 4 + 1024 = 9216, plus the first IFM
//   fetch and last OFM write: 9216 + 544 + 1056 = 10816. MACs 16 x 16 x 64 x 128 = 2097152.
TEST(U55Cost, PointwiseConvIsMacBound) {
    const Npu s("ethos-u55-256");
    const OpCost c = s.cost(conv_1x1(16, 16, 128, 64, {8, 16, 32}));
    EXPECT_EQ(c.macs, 2097152);
    EXPECT_EQ(c.issue_cycles, 896);
    EXPECT_EQ(c.mac_cycles, 2048 * 4 + 1024);
    EXPECT_EQ(c.compute_cycles, 10816);
}

// Short bursts cost time, not bytes. ADD int8 8x8x8, block 8x8x8, both operands 8 channels of a
// 16-channel NHWC map (pixel stride 16 B > block depth 8 B: a pixel's 8 bytes at a time):
//   reads: 2 x 512 bytes moved (64 beats each); as 8 B of SRAM's 32 B bursts they take the time of
//   4 x 1024 = 4096 bytes. OFM: 512 contiguous bytes (depth 8 <= 16): whole bursts, 512.
//   access: the read channel's 4096 (the write channel's 512 beside it) / 8 B per cycle = 512 cycles.
TEST(U55Cost, ShortBurstsLengthenTheAccessButMoveTheSameBytes) {
    const Npu s("ethos-u55-128");
    DecodedOp op = elementwise_add(8, 8, 8, 8, 1, 1, {8, 8, 8});
    for (FeatureMap* fm : {&op.kernel().ifm, &op.kernel().ifm2}) {
        fm->stride_x = 16;
        fm->stride_y = 8 * 16;
    }
    const OpCost c = s.cost(op);
    EXPECT_EQ(c.traffic.read[kSram], 1024);
    EXPECT_EQ(c.traffic.write[kSram], 512);
    EXPECT_EQ(c.access_cycles[kSram], 512);
}

// Weights and scales are streamed again for every OFM block in height and width: a 16x16 OFM in
// 8x16 blocks has 2, so the flash reads are 2 x (128 x 64 weight bytes + 64 x 10 scale bytes).
TEST(U55Cost, WeightsAreRefetchedPerSpatialBlock) {
    const Npu s("ethos-u55-256");
    const OpCost c = s.cost(conv_1x1(16, 16, 128, 64, {8, 16, 32}));
    const auto flash = static_cast<size_t>(MemoryKind::OffChipFlash);
    EXPECT_EQ(c.traffic.read[flash], 2 * (128 * 64 + 64 * 10));
}

// The IFM of a block position stays in SHRAM across the OFM depth blocks there when it is one IFM
// block (32 channels for int8 depth-first) deep. 1x1 CONV 16x16xC -> 16x16x64 int8, block
// 8x16x16, U55-128: 2 block positions x 4 depth blocks; the IFM block is 8x16 pixels.
//   C = 16 (one IFM block deep): each position's 8 x 16 x 16 = 2048 bytes once: 2 x 2048 = 4096.
//   C = 48 (IFM block depth 32: two chunks): 8 x 16 x 48 = 6144 bytes per depth block: x 8 = 49152.
// The weights and scales are in flash: SRAM reads are the IFM's alone.
TEST(U55Cost, AnIfmOneBlockDeepIsReadOncePerBlockPosition) {
    const Npu s("ethos-u55-128");
    EXPECT_EQ(s.cost(conv_1x1(16, 16, 16, 64, {8, 16, 16})).traffic.read[kSram], 4096);
    EXPECT_EQ(s.cost(conv_1x1(16, 16, 48, 64, {8, 16, 16})).traffic.read[kSram], 49152);
}

// A block reads the IFM lines its OFM lines need, clipped to the IFM: padding is made, not read,
// and a block at the OFM's bottom edge holds only the rows there are. U55-128, int8, weights and
// scales in flash, so the SRAM reads are the IFM's alone.
//   DEPTHWISE 3x3, stride 1, padding 1 all round, 16x16x16 -> 16x16x16 in 6x16x16 blocks: the
//   blocks hold OFM rows 0-5, 6-11 and 12-15, which need IFM rows -1..6, 5..12 and 11..16,
//   clipped to 0..15: 7 + 8 + 5 = 20 rows; the one block column needs columns -1..16: all 16.
//   20 x 16 x 16 = 5120 bytes (whole 8-row IFM blocks: 3 x 8 x 16 x 16 = 6144).
//   1x1 CONV 14x16x16 -> 14x16x32 in 4x16x32 blocks: rows 4 + 4 + 4 + 2 = 14, the IFM once:
//   14 x 16 x 16 = 3584 bytes (whole blocks: 4 x 4 x 16 x 16 = 4096).
TEST(U55Cost, BlocksReadOnlyTheIfmLinesTheirOfmLinesNeed) {
    const Npu s("ethos-u55-128");
    DecodedOp dw(OpKind::Depthwise);
    dw.kernel().ifm = feature_map(16, 16, 16, 8, 1);
    dw.kernel().ofm = feature_map(16, 16, 16, 8, 1);
    dw.kernel().kernel.width = dw.kernel().kernel.height = 3;
    dw.kernel().kernel.padding = {1, 1, 1, 1};
    dw.kernel().block.ofm_height = 6;
    dw.kernel().block.ofm_width = 16;
    dw.kernel().block.ofm_depth = 16;
    dw.kernel().weights = {{0, 0, 3 * 3 * 16}};
    dw.kernel().scales = {{0, 3 * 3 * 16, 16 * 10}};
    relu(dw);
    EXPECT_EQ(s.cost(dw).traffic.read[kSram], 5120);
    EXPECT_EQ(s.cost(conv_1x1(14, 16, 16, 32, {4, 16, 32})).traffic.read[kSram], 3584);
}

// Reads come in the memory's aligned bursts: a weight stream of 200 bytes at flash address 100
// spans the 128-byte bursts at 0, 128 and 256: 384 bytes; its 80-byte scale stream at 300..379
// lies in the one at 256: 128 bytes. One OFM block (16x16x32 in 16x16x32): read once, 512 bytes.
TEST(U55Cost, StreamsAreReadInWholeAlignedBursts) {
    const Npu s("ethos-u55-128");
    DecodedOp op = conv_1x1(16, 16, 8, 32, {16, 16, 32});
    op.kernel().weights = {{0, 100, 200}};
    op.kernel().scales = {{0, 300, 80}};
    EXPECT_EQ(s.cost(op).traffic.read[static_cast<size_t>(MemoryKind::OffChipFlash)], 384 + 128);
    // On the Corstone-300 FVP the NPU splits its AXI bursts at 64 bytes: the weights' bursts cover
    // 64-320 (256 bytes), the scales' 256-384 (128).
    const Npu fvp("ethos-u55-128", {"Ethos_U55_High_End_Corstone300_FVP", "Shared_Sram", {}});
    EXPECT_EQ(fvp.cost(op).traffic.read[static_cast<size_t>(MemoryKind::OffChipFlash)], 256 + 128);
}

// IFM_UPSCALE: a 2x2 AVERAGE pool over an 8x8x16 IFM upscaled NEAREST to 16x16 (Vela's 2x
// bilinear resize) fetches IFM blocks half as high and wide from the 8x8 map in memory: less than
// half the bytes the same pool reads from a 16x16 IFM (the blocks' micro-block rounding and
// overlap keep it above a quarter). The OFM, so the output-unit work and the writes, is the same.
TEST(U55Cost, UpscaledIfmIsReadAtItsStoredSize) {
    const Npu s("ethos-u55-128");
    auto pool = [](int ifm_size, UpscaleMode upscale) {
        DecodedOp op(OpKind::Pool);
        op.kernel().pool() = PoolMode::Average;
        op.kernel().ifm = feature_map(ifm_size, ifm_size, 16, 8, 1);
        op.kernel().ofm = feature_map(16, 16, 16, 8, 1);
        op.kernel().kernel.width = op.kernel().kernel.height = 2;
        op.kernel().kernel.padding = {0, 0, 1, 1};
        op.kernel().kernel.upscale = upscale;
        op.kernel().block.ofm_width = op.kernel().block.ofm_height = 8;
        op.kernel().block.ofm_depth = 16;
        no_activation(op);
        return op;
    };
    const OpCost upscaled = s.cost(pool(8, UpscaleMode::Nearest));
    const OpCost plain = s.cost(pool(16, UpscaleMode::None));
    EXPECT_EQ(upscaled.output_cycles, plain.output_cycles);
    EXPECT_LT(2 * upscaled.traffic.read[kSram], plain.traffic.read[kSram]);
    EXPECT_GE(4 * upscaled.traffic.read[kSram], plain.traffic.read[kSram]);
    EXPECT_EQ(upscaled.traffic.write[kSram], plain.traffic.write[kSram]);
}

// Roofline: a large 1x1 conv approaches MACs / (MACs per cycle).
class MacRoofline : public ::testing::TestWithParam<const char*> {};
TEST_P(MacRoofline, LargePointwiseConvApproachesPeak) {
    const Npu s(GetParam());
    const OpCost c = s.cost(conv_1x1(64, 64, 256, 256, {16, 16, 64}));
    const double ideal = double(c.macs) / s.npu.macs;
    EXPECT_GE(double(c.compute_cycles), ideal);
    EXPECT_LE(double(c.compute_cycles), 1.10 * ideal) << "ideal " << ideal;
}
INSTANTIATE_TEST_SUITE_P(U55U65, MacRoofline,
                         ::testing::Values("ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256",
                                           "ethos-u65-256", "ethos-u65-512"));

// Roofline: an elementwise op whose operands sit in a slow memory approaches bytes / bandwidth.
// Region 0 is the constant area: off-chip flash at 1 B/cycle (U55 High_End, U65 Embedded).
class BandwidthRoofline : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};
TEST_P(BandwidthRoofline, ElementwiseFromFlashApproachesBandwidth) {
    const auto [npu, system] = GetParam();
    const Npu s(npu, {system, "Shared_Sram", {}});
    const DecodedOp op = elementwise_add(64, 64, 64, 8, 0, 1, {8, 8, 64});
    const OpCost c = s.cost(op);
    const auto flash = MemoryKind::OffChipFlash;
    const double bytes = double(c.traffic.read[static_cast<size_t>(flash)]);
    EXPECT_EQ(bytes, 2.0 * 64 * 64 * 64);  // both operands, contiguous full bursts
    const double bandwidth_cycles = bytes / s.memory.bytes_per_cycle(flash);
    EXPECT_GT(bandwidth_cycles, double(c.compute_cycles)) << "the op must be bandwidth bound";
    TimingModel model(s.npu, s.memory, region_memories(s.memory, {}), "test.bin");
    DecodedStream stream;
    stream.ops.push_back(op);
    const TimingResult r = model.run(stream);
    EXPECT_NEAR(double(r.ops[0].end - r.ops[0].start), bandwidth_cycles, 0.01 * bandwidth_cycles);
}
INSTANTIATE_TEST_SUITE_P(U55U65, BandwidthRoofline,
                         ::testing::Values(std::pair{"ethos-u55-128", "Ethos_U55_High_End_Embedded"},
                                           std::pair{"ethos-u65-256", "Ethos_U65_Embedded"}),
                         [](const auto& info) {
                             std::string name = info.param.first;
                             for (char& c : name)
                                 if (c == '-') c = '_';
                             return name;
                         });

// A 1x1 CONV of 65536 x 65536 x 65536 from 65536 channels in 1x1x1 blocks (registers a hostile
// stream can write) has 2^80 MACs and cycles to match: an Error naming the op, not a figure that
// overflowed (undefined behaviour; Release builds printed ~1e15 cycles).
TEST(U55Cost, AnOpBeyondTheCostRangeIsAnError) {
    const Npu s("ethos-u55-128");
    DecodedOp op = conv_1x1(65536, 65536, 65536, 65536, {1, 1, 1});
    op.offset = 0x40;
    const std::string error = expect_error_at([&] { s.cost(op); }, 0x40, "conv");
    EXPECT_NE(error.find("2^53"), std::string::npos) << error;
    // Through the timing model, the error names the stream's file.
    DecodedStream stream;
    stream.ops.push_back(op);
    try {
        TimingModel(s.npu, s.memory, region_memories(s.memory, {}), "model.tflite").run(stream);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "model.tflite");
        EXPECT_EQ(e.where().offset, 0x40u);
        EXPECT_EQ(e.where().field, "conv");
    }
}

// An op far larger than any corpus op but within range (2^38 MACs) is costed: its MAC count is
// exact, and the MAC array's 128 per cycle bound its cycles from below.
TEST(U55Cost, LargeOpsInRangeKeepTheirCost) {
    const Npu s("ethos-u55-128");
    const OpCost c = s.cost(conv_1x1(1024, 2048, 512, 256, {16, 16, 16}));
    EXPECT_EQ(c.macs, int64_t{1024} * 2048 * 512 * 256);
    EXPECT_GE(c.compute_cycles, c.macs / 128);
}

// The hardware's 8x8 sub-kernels, by size: their taps add up to the kernel's, and there are as
// many of each size as a walk over the kernel in 8x8 steps finds.
TEST(SubKernels, SizesAndCountsMatchAWalkOverTheKernel) {
    for (const auto& [h, w] : std::vector<std::pair<int, int>>{{1, 1}, {3, 3}, {8, 8}, {9, 1}, {17, 20}, {64, 7}}) {
        std::map<int, int64_t> walked;
        for (int y = 0; y < h; y += 8)
            for (int x = 0; x < w; x += 8) ++walked[std::min(h - y, 8) * std::min(w - x, 8)];
        std::map<int, int64_t> grouped;
        for_each_sub_kernel(Block3{h, w, 1}, [&](int taps, int64_t count) { grouped[taps] += count; });
        EXPECT_EQ(grouped, walked) << h << "x" << w;
    }
}

// ifm_lines_read counts only the sub-kernels an IFM edge cuts one by one; a walk over the lines of
// every block's window under every sub-kernel gives the same, kernels of 1 to 70 taps, strides, dilations, padding,
// upscaling and IFMs far smaller than the kernel among them.
TEST(IfmLines, MatchAWalkOverEveryBlockSubKernelAndLine) {
    auto walk = [](const IfmAxis& a) {
        int64_t lines = 0;
        for (int o = 0; o < a.ofm; o += a.block) {
            const int last = std::min(a.ofm, o + a.block) - 1;
            for (int first_tap = 0; first_tap < a.taps; first_tap += 8) {
                const int taps = std::min(8, a.taps - first_tap);
                // The block's window: from its first line's first tap to its last line's last tap.
                std::vector<bool> read(static_cast<size_t>(a.ifm), false);
                const int from = o * a.stride - a.pad_before + first_tap * a.dilation;  // upscaled
                const int to = last * a.stride - a.pad_before + (first_tap + taps - 1) * a.dilation;
                for (int at = std::max(from, 0); at <= to; ++at)
                    if (at / a.upscale < a.ifm) read[static_cast<size_t>(at / a.upscale)] = true;
                lines += std::count(read.begin(), read.end(), true);
            }
        }
        return lines;
    };
    int checked = 0;
    for (const int taps : {1, 3, 8, 9, 16, 17, 70})
        for (const int stride : {1, 2, 3})
            for (const int dilation : {1, 2})
                for (const int pad : {0, 1, 5, 20})
                    for (const int upscale : {1, 2})
                        for (const int ofm : {1, 7, 30})
                            for (const int block : {1, 4, 30}) {
                                const int span = (taps - 1) * dilation + 1;
                                // The IFM the registers describe (the kernel's reach less the
                                // padding), and one line, as a hostile stream may say.
                                const int described =
                                    std::max(1, ((ofm - 1) * stride + span - 2 * pad + upscale - 1) / upscale);
                                for (const int ifm : {described, 1}) {
                                    const IfmAxis a{ofm, block, stride, pad, ifm, taps, dilation, upscale};
                                    ASSERT_EQ(ifm_lines_read(a), walk(a))
                                        << taps << " taps, stride " << stride << ", dilation " << dilation << ", pad "
                                        << pad << ", upscale " << upscale << ", ofm " << ofm << " in " << block
                                        << ", ifm " << ifm;
                                    ++checked;
                                }
                            }
    EXPECT_EQ(checked, 7 * 3 * 2 * 4 * 2 * 3 * 3 * 2);
}

// A 64-bit OFM carries no fused clamp; its type range is not computed (it negated INT64_MIN).
TEST(ClampActivation, SixtyFourBitOfmsHaveNone) {
    DecodedOp op(OpKind::Conv);
    op.kernel().ofm.precision = {true, 64};
    op.kernel().output.clip_min = 0;
    op.kernel().output.clip_max = 0;
    EXPECT_FALSE(has_clamp_activation(op.kernel()));
    op.kernel().ofm.precision = {true, 8};
    EXPECT_TRUE(has_clamp_activation(op.kernel()));
}

}  // namespace
}  // namespace ethosu
