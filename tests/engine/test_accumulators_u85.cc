// U85 accumulator control on hand-built streams, in the splits Vela 5.1 makes
// (compiler/scheduler_decompose.cpp): a CONV over IFM depth in parts that keep the accumulators
// (RESET + DISABLE, KEEP + DISABLE, KEEP + ENABLE); parts handed on through an int32 map read back
// with accumulator input IFM2; a bias preloaded by POOL NONE. Each equals one plain convolution
// of the whole IFM. KEEP without matching accumulators is an error naming the op and field.

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "emulator/isa/error.h"
#include "tests/engine/u85_conv_rig.h"
#include "tests/engine/weight_encoder.h"
#include "tests/engine/weight_encoder_u85.h"

namespace ethosu {
namespace {

using namespace u85_conv_test;

constexpr int kReset = 0, kKeep = 1, kFromIfm2 = 2;
constexpr int kEnable = 0, kDisable = 1;
constexpr const char* kConfig = "ethos-u85-256";
constexpr int kMicroblock = 1, kUblockDepth = 16;  // U1X2: 16 deep on ethos-u85-256

constexpr int kHeight = 5, kWidth = 6, kKernel = 3, kOfmDepth = 20;
constexpr int kPartDepth = 16, kParts = 3;  // the IFM depth split in three

// OHWI weights (a part's IFM channels) as one standard stream.
std::vector<std::vector<uint8_t>> encode(const std::vector<int16_t>& ohwi, int ifm_depth, int ofm_depth = kOfmDepth,
                                         int kernel = kKernel) {
    test_support::U85OrderSpec spec;
    spec.ofm_depth = ofm_depth;
    spec.kernel_h = spec.kernel_w = kernel;
    spec.ifm_depth = ifm_depth;
    spec.ofm_block_depth = 32;
    spec.ifm_block_depth = 32;
    spec.ofm_ublock_depth = kUblockDepth;
    std::vector<int16_t> values;
    for (const auto& [o, y, x, i] : test_support::u85_vela_order(spec, 0)) {
        values.push_back(o < 0 ? int16_t{0}
                               : ohwi[((static_cast<size_t>(o) * kernel + y) * kernel + x) * ifm_depth + i]);
    }
    return {test_support::encode_values(values)};
}

// A CONV split over IFM depth, and the reference of the whole.
struct SplitConv {
    std::mt19937 rng{77};
    FeatureMap8 parts[kParts];
    std::vector<int16_t> part_weights[kParts];
    std::vector<ChannelScale> scales;
    Geometry geometry = same_padding(kHeight, kWidth, kKernel, kKernel, 1);
    std::vector<int64_t> sums;  // the whole convolution's

    explicit SplitConv(const Rig& rig) {
        std::uniform_int_distribution<int> weight(-255, 255);
        sums.assign(static_cast<size_t>(geometry.ofm_height) * geometry.ofm_width * kOfmDepth, 0);
        for (int p = 0; p < kParts; ++p) {
            parts[p] = rig.random_ifm(kHeight, kWidth, kPartDepth, -3, rng);
            part_weights[p].resize(static_cast<size_t>(kOfmDepth) * kKernel * kKernel * kPartDepth);
            for (auto& w : part_weights[p]) w = static_cast<int16_t>(weight(rng));
            const auto part = plain_sums(parts[p], part_weights[p], kOfmDepth, kKernel, kKernel, 1, geometry);
            for (size_t n = 0; n < sums.size(); ++n) sums[n] += part[n];
        }
        scales = random_scales(kOfmDepth, rng);
    }

    ConvRegs part_regs(Rig& rig, int p, const Place& ofm, const std::vector<ChannelScale>& part_scales) {
        ConvRegs r;
        r.ifm = rig.place(parts[p]);
        r.ofm = ofm;
        r.kernel_h = r.kernel_w = kKernel;
        r.pad = geometry.pad;
        r.weights = rig.add_weights(encode(part_weights[p], kPartDepth));
        r.scales = rig.add_scales(part_scales, kUblockDepth);
        r.microblock = kMicroblock;
        r.ofm_block_depth = 32;
        return r;
    }
};

TEST(U85Accumulators, ConvSplitOverIfmDepthKeepsTheAccumulators) {
    Rig rig(kConfig);
    SplitConv conv(rig);
    const Place ofm = rig.reserve(conv.geometry.ofm_height, conv.geometry.ofm_width, kOfmDepth, Rig::kInt8, 9);
    for (int p = 0; p < kParts; ++p) {
        ConvRegs r = conv.part_regs(rig, p, ofm, conv.scales);
        r.acc_input = p == 0 ? kReset : kKeep;
        r.acc_output = p == kParts - 1 ? kEnable : kDisable;
        rig.emit_conv(r);
    }
    rig.run();
    EXPECT_EQ(rig.read8(ofm), requantize(conv.sums, conv.scales, 9));
}

// Parts before the last write their raw sums to an int32 map (unit scale, no bias); the next
// part starts from that map. Only the last applies the bias and scale.
TEST(U85Accumulators, ConvSplitThroughAnInt32MapReadAsIfm2) {
    Rig rig(kConfig);
    SplitConv conv(rig);
    const int h = conv.geometry.ofm_height, w = conv.geometry.ofm_width;
    const std::vector<ChannelScale> unit(kOfmDepth, ChannelScale{0, 1, 31});  // scale 1, shift 0
    Place previous;
    for (int p = 0; p < kParts; ++p) {
        const bool last = p == kParts - 1;
        const Place ofm = last ? rig.reserve(h, w, kOfmDepth, Rig::kInt8, 9) : rig.reserve(h, w, kOfmDepth, Rig::kInt32, 0);
        ConvRegs r = conv.part_regs(rig, p, ofm, last ? conv.scales : unit);
        if (p > 0) {
            r.acc_input = kFromIfm2;
            r.has_ifm2 = true;
            r.ifm2 = previous;
        }
        rig.emit_conv(r);
        previous = ofm;
    }
    rig.run();
    EXPECT_EQ(rig.read8(previous), requantize(conv.sums, conv.scales, 9));
}

// POOL NONE loads a bias map into the accumulators without output; the CONV parts keep them and
// the last one scales with a global OFM_SCALE.
TEST(U85Accumulators, BiasPreloadedByPoolNone) {
    Rig rig(kConfig);
    SplitConv conv(rig);
    const int h = conv.geometry.ofm_height, w = conv.geometry.ofm_width;
    std::vector<int64_t> bias_map;
    for (int n = 0; n < h * w; ++n)
        for (const ChannelScale& s : conv.scales) bias_map.push_back(s.bias);
    const Place ofm = rig.reserve(h, w, kOfmDepth, Rig::kInt8, -4);

    ConvRegs preload;
    preload.pool = 4;  // NONE
    preload.ifm = rig.reserve(h, w, kOfmDepth, Rig::kInt8, 0);  // read as int8, adds nothing
    preload.ofm = ofm;
    preload.has_ifm2 = true;
    preload.ifm2 = rig.place_wide(h, w, kOfmDepth, Rig::kInt32, bias_map);
    preload.global_scale = true;
    preload.acc_input = kFromIfm2;
    preload.acc_output = kDisable;
    preload.microblock = kMicroblock;
    rig.emit_conv(preload);

    const ChannelScale global = conv.scales[0];
    for (int p = 0; p < kParts; ++p) {
        ConvRegs r = conv.part_regs(rig, p, ofm, {});
        r.global_scale = true;
        r.ofm_scale = static_cast<uint32_t>(global.multiplier);
        r.ofm_shift = 31 - global.shift;
        r.acc_input = kKeep;
        r.acc_output = p == kParts - 1 ? kEnable : kDisable;
        rig.emit_conv(r);
    }
    rig.run();
    std::vector<ChannelScale> expected_scales(kOfmDepth, global);
    for (int c = 0; c < kOfmDepth; ++c) expected_scales[static_cast<size_t>(c)].bias = conv.scales[static_cast<size_t>(c)].bias;
    EXPECT_EQ(rig.read8(ofm), requantize(conv.sums, expected_scales, -4));
}

struct Refusal {
    uint32_t offset;
    std::string field, message;
};

Refusal run_expecting_error(Rig& rig) {
    try {
        rig.run();
    } catch (const Error& e) {
        return {static_cast<uint32_t>(e.where().offset.value_or(0)), e.where().field, e.what()};
    }
    ADD_FAILURE() << "the stream ran";
    return {};
}

TEST(U85Accumulators, KeepWithoutKeptAccumulatorsIsRefused) {
    Rig rig(kConfig);
    SplitConv conv(rig);
    const Place ofm = rig.reserve(conv.geometry.ofm_height, conv.geometry.ofm_width, kOfmDepth, Rig::kInt8, 0);
    ConvRegs r = conv.part_regs(rig, 0, ofm, conv.scales);
    r.acc_input = kKeep;
    const uint32_t at = rig.emit_conv(r);
    const Refusal e = run_expecting_error(rig);
    EXPECT_EQ(e.offset, at);
    EXPECT_EQ(e.field, "NPU_SET_ACC_FORMAT.acc_input");
    EXPECT_NE(e.message.find("left none"), std::string::npos) << e.message;
}

TEST(U85Accumulators, KeepAfterAnOpThatOutputIsRefused) {
    Rig rig(kConfig);
    SplitConv conv(rig);
    const Place ofm = rig.reserve(conv.geometry.ofm_height, conv.geometry.ofm_width, kOfmDepth, Rig::kInt8, 0);
    rig.emit_conv(conv.part_regs(rig, 0, ofm, conv.scales));  // RESET + ENABLE
    ConvRegs r = conv.part_regs(rig, 1, ofm, conv.scales);
    r.acc_input = kKeep;
    const uint32_t at = rig.emit_conv(r);
    const Refusal e = run_expecting_error(rig);
    EXPECT_EQ(e.offset, at);
    EXPECT_EQ(e.field, "NPU_SET_ACC_FORMAT.acc_input");
}

TEST(U85Accumulators, KeepOfAnotherOfmShapeIsRefused) {
    Rig rig(kConfig);
    SplitConv conv(rig);
    const int h = conv.geometry.ofm_height, w = conv.geometry.ofm_width;
    ConvRegs first = conv.part_regs(rig, 0, rig.reserve(h, w, kOfmDepth, Rig::kInt8, 0), conv.scales);
    first.acc_output = kDisable;
    const uint32_t first_at = rig.emit_conv(first);
    // The same IFM read for an OFM one column narrower (no right padding).
    ConvRegs r = conv.part_regs(rig, 1, rig.reserve(h, w - 1, kOfmDepth, Rig::kInt8, 0), conv.scales);
    r.pad.right = 0;
    r.acc_input = kKeep;
    const uint32_t at = rig.emit_conv(r);
    const Refusal e = run_expecting_error(rig);
    EXPECT_EQ(e.offset, at);
    EXPECT_EQ(e.field, "NPU_SET_ACC_FORMAT.acc_input");
    char left_by[32];
    std::snprintf(left_by, sizeof left_by, "op at 0x%x left 5x6x20", first_at);
    EXPECT_NE(e.message.find(left_by), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("5x5x20 (32-bit)"), std::string::npos) << e.message;
}

// ethos-u85-256 has 16 KB of accumulator RAM: 4096 32-bit accumulators.
TEST(U85Accumulators, KeepingMoreThanTheAccumulatorRamHoldsIsRefused) {
    Rig rig(kConfig);
    std::mt19937 rng(3);
    const FeatureMap8 ifm = rig.random_ifm(16, 16, 8, 0, rng);
    ConvRegs r;
    r.ifm = rig.place(ifm);
    r.ofm = rig.reserve(16, 16, 17, Rig::kInt8, 0);  // 4352 elements
    r.weights = rig.add_weights(encode(std::vector<int16_t>(static_cast<size_t>(17) * 8), 8, 17, 1));
    r.scales = rig.add_scales(random_scales(17, rng), kUblockDepth);
    r.microblock = kMicroblock;
    r.ofm_block_depth = 32;
    r.acc_output = kDisable;
    const uint32_t at = rig.emit_conv(r);
    const Refusal e = run_expecting_error(rig);
    EXPECT_EQ(e.offset, at);
    EXPECT_EQ(e.field, "NPU_SET_ACC_FORMAT.acc_output");
    EXPECT_NE(e.message.find("holds 4096"), std::string::npos) << e.message;
}

TEST(U85Accumulators, Ifm2AccumulatorsOfTheWrongWidthAreRefused) {
    Rig rig(kConfig);
    SplitConv conv(rig);
    const int h = conv.geometry.ofm_height, w = conv.geometry.ofm_width;
    ConvRegs r = conv.part_regs(rig, 0, rig.reserve(h, w, kOfmDepth, Rig::kInt8, 0), conv.scales);
    r.acc_input = kFromIfm2;
    r.has_ifm2 = true;
    r.ifm2 = rig.reserve(h, w, kOfmDepth, Rig::kInt8, 0);
    const uint32_t at = rig.emit_conv(r);
    const Refusal e = run_expecting_error(rig);
    EXPECT_EQ(e.offset, at);
    EXPECT_EQ(e.field, "NPU_SET_IFM2_PRECISION");
}

}  // namespace
}  // namespace ethosu
