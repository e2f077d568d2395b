// U85 POOL AVERAGE as Vela 4.5 and 5.1 program TFLite's AVERAGE_POOL_2D, MIN, ARGMAX_X and ARGMAX_Y
// as Vela 5.1 programs TFLite's REDUCE_MIN / REDUCE_ANY and ARG_MAX (a kernel spanning the reduced
// axis; ARGMAX with OFM_SCALE 1 >> 16), against plain loops from TFLite's pooling, reduce and
// arg_min_max reference kernels; and ARGMAX programmings no reference defines, refused with the
// op's offset and field.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "emulator/isa/decoder.h"
#include "emulator/isa/error.h"
#include "tests/engine/u85_conv_rig.h"

namespace ethosu {
namespace {

using namespace u85_conv_test;

constexpr int kPoolAverage = 1, kPoolMin = 5, kArgMaxX = 6, kArgMaxY = 7;
constexpr int kArgMaxShift = 16;

std::vector<int64_t> random_values(size_t n, int64_t lo, int64_t hi, std::mt19937& rng) {
    std::uniform_int_distribution<int64_t> any(lo, hi);
    std::vector<int64_t> v(n);
    for (auto& x : v) x = any(rng);
    return v;
}

size_t at(int y, int x, int c, int width, int depth) {
    return (static_cast<size_t>(y) * width + x) * depth + static_cast<size_t>(c);
}

// ---- MIN

// REDUCE_MIN over H (kernel height = IFM height) and over W, int8 and int16, unit OFM scale.
TEST(U85PoolMin, ReduceMinOverHeightOrWidthEqualsTflite) {
    std::mt19937 rng(3);
    constexpr int kH = 5, kW = 6, kC = 20;
    for (const Precision& type : {Rig::kInt8, Rig::kInt16})
        for (bool over_height : {true, false}) {
            Rig rig("ethos-u85-256");
            const int64_t half = int64_t{1} << (type.bits - 1);
            const auto values = random_values(kH * kW * kC, -half, half - 1, rng);
            ConvRegs r;
            r.pool = kPoolMin;
            r.ifm = rig.place_wide(kH, kW, kC, type, values);
            r.ofm = rig.reserve(over_height ? 1 : kH, over_height ? kW : 1, kC, type, 0);
            r.kernel_h = over_height ? kH : 1;
            r.kernel_w = over_height ? 1 : kW;
            r.global_scale = true;
            r.ofm_scale = 1;
            rig.emit_conv(r);
            rig.run();
            const auto out = rig.read_wide(r.ofm);
            for (int y = 0; y < r.ofm.height; ++y)
                for (int x = 0; x < r.ofm.width; ++x)
                    for (int c = 0; c < kC; ++c) {
                        int64_t smallest = values[at(y, x, c, kW, kC)];
                        for (int i = 0; i < (over_height ? kH : kW); ++i)
                            smallest = std::min(smallest, values[over_height ? at(i, x, c, kW, kC) : at(y, i, c, kW, kC)]);
                        ASSERT_EQ(out[at(y, x, c, r.ofm.width, kC)], smallest) << y << "," << x << "," << c;
                    }
        }
}

// REDUCE_ANY on Vela's booleans (-1 true, 0 false) is MIN: -1 where any element is true.
TEST(U85PoolMin, ReduceAnyOfBooleans) {
    std::mt19937 rng(5);
    constexpr int kW = 9, kC = 64;
    Rig rig("ethos-u85-256");
    auto values = random_values(kW * kC, 0, 6, rng);
    for (auto& v : values) v = v == 0 ? -1 : 0;  // about one true in seven
    ConvRegs r;
    r.pool = kPoolMin;
    r.ifm = rig.place_wide(1, kW, kC, Rig::kInt8, values);
    r.ofm = rig.reserve(1, 1, kC, Rig::kInt8, 0);
    r.kernel_w = kW;
    r.global_scale = true;
    r.ofm_scale = 1;
    rig.emit_conv(r);
    rig.run();
    const auto out = rig.read8(r.ofm);
    for (int c = 0; c < kC; ++c) {
        bool any = false;
        for (int x = 0; x < kW; ++x) any = any || values[at(0, x, c, kW, kC)] != 0;
        ASSERT_EQ(out[static_cast<size_t>(c)], any ? -1 : 0) << "channel " << c;
    }
}

// ---- AVERAGE

// TFLite's AVERAGE_POOL_2D (pooling.h): the window's valid elements summed, divided by their count
// with rounding half away from zero.
std::vector<int8_t> plain_average(const FeatureMap8& ifm, int kernel, int stride, const Geometry& g) {
    std::vector<int8_t> out;
    for (int oy = 0; oy < g.ofm_height; ++oy)
        for (int ox = 0; ox < g.ofm_width; ++ox)
            for (int c = 0; c < ifm.depth; ++c) {
                int sum = 0, count = 0;
                for (int ky = 0; ky < kernel; ++ky)
                    for (int kx = 0; kx < kernel; ++kx) {
                        const int y = oy * stride - g.pad.top + ky, x = ox * stride - g.pad.left + kx;
                        if (y < 0 || y >= ifm.height || x < 0 || x >= ifm.width) continue;
                        sum += ifm.at(y, x, c) - ifm.zero_point, ++count;
                    }
                const int average = sum >= 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
                out.push_back(static_cast<int8_t>(std::clamp(average + ifm.zero_point, -128, 127)));
            }
    return out;
}

// The OFM_SCALE Regor 4.0-5.0 write for a TFLite AVERAGE_POOL_2D of n elements with equal input and
// output scales: QuantizePoolingScale(n, 1.0) in ethos_u_scaling.cpp (31-bit register).
std::pair<uint32_t, int> regor_45_reciprocal(int n) {
    int exponent = 0;
    std::frexp(static_cast<float>(n - 1), &exponent);
    const int shift = 30 + exponent;
    const uint64_t scale = ((uint64_t{1} << shift) + (uint64_t{1} << exponent)) / static_cast<uint64_t>(n);
    return {static_cast<uint32_t>(scale), shift};
}

struct AverageCase {
    const char* name;
    int size, depth, kernel, stride;
    bool same;  // TFLite SAME padding, else VALID
};

// The corpus's three pools (avgpool_global_7x7x32, avgpool_k2s2_valid_16x16x16,
// avgpool_k3s1_same_12x12x20), each with the OFM_SCALE of Vela 5.1 (one) and of Vela 4.5 (1/N):
// both give TFLite's average. The hardware divides by the valid elements and does not apply
// OFM_SCALE (pool.cc); dividing and then scaling by 1/N divided 4.5's pools twice.
TEST(U85PoolAverage, EqualsTfliteWithTheScaleOfEitherVelaVersion) {
    const AverageCase cases[] = {{"global 7x7", 7, 32, 7, 1, false},
                                 {"2x2 stride 2 VALID", 16, 16, 2, 2, false},
                                 {"3x3 SAME", 12, 20, 3, 1, true}};
    const std::pair<uint32_t, int> unit{1u << 30, 30};
    for (const AverageCase& c : cases)
        for (const auto& [scale, shift] : {unit, regor_45_reciprocal(c.kernel * c.kernel)}) {
            SCOPED_TRACE(fmt::format("{}, OFM_SCALE {} >> {}", c.name, scale, shift));
            std::mt19937 rng(11);
            Rig rig("ethos-u85-256");
            const Geometry g = c.same ? same_padding(c.size, c.size, c.kernel, c.kernel, c.stride)
                                      : Geometry{(c.size - c.kernel) / c.stride + 1, (c.size - c.kernel) / c.stride + 1, {}};
            const FeatureMap8 ifm = rig.random_ifm(c.size, c.size, c.depth, -5, rng);
            ConvRegs r;
            r.pool = kPoolAverage;
            r.ifm = rig.place(ifm);
            r.ofm = rig.reserve(g.ofm_height, g.ofm_width, c.depth, Rig::kInt8, -5);
            r.kernel_h = r.kernel_w = c.kernel, r.stride = c.stride, r.pad = g.pad;
            r.global_scale = true;
            r.ofm_scale = scale, r.ofm_shift = shift;
            rig.emit_conv(r);
            rig.run();
            EXPECT_EQ(rig.read8(r.ofm), plain_average(ifm, c.kernel, c.stride, g));
            EXPECT_TRUE(decode_stream(rig.config(), rig.words(), "avg").warnings.empty());
        }
}

// An OFM_SCALE that is neither one nor 1/N (Vela 5.1's bare rescale for unequal scales) runs by the
// same rule, with a warning naming the op's offset, the register and the scale.
TEST(U85PoolAverage, AnUndeterminedScaleRunsByTheSameRuleAndIsReported) {
    std::mt19937 rng(13);
    Rig rig("ethos-u85-256");
    const FeatureMap8 ifm = rig.random_ifm(4, 4, 16, 0, rng);
    ConvRegs r;
    r.pool = kPoolAverage;
    r.ifm = rig.place(ifm);
    r.ofm = rig.reserve(2, 2, 16, Rig::kInt8, 0);
    r.kernel_h = r.kernel_w = 2, r.stride = 2;
    r.global_scale = true;
    r.ofm_scale = 1u << 29, r.ofm_shift = 30;  // one half
    const uint32_t offset = rig.emit_conv(r);
    rig.run();
    EXPECT_EQ(rig.read8(r.ofm), plain_average(ifm, 2, 2, Geometry{2, 2, {}}));
    const auto warnings = decode_stream(rig.config(), rig.words(), "avg.bin").warnings;
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(fmt::format("{:#x}", offset)), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("NPU_SET_OFM_SCALE"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("536870912 >> 30"), std::string::npos) << warnings[0];
}

// ---- SUM

// A 1x1 SUM pool is Regor's memory copy (concat, split, pad, strided slice); 4.5 writes its unit
// OFM_SCALE as 1073741825 >> 30, 5.1 as 1 >> 0 (and a clamp's as 1073741824 >> 30). OFM_SCALE
// applies as written, and each of them leaves every int8 and int16 value as it was.
TEST(U85PoolSum, EveryEncodingOfAUnitScaleCopiesExactly) {
    constexpr int kPoolSum = 3;
    for (const Precision& type : {Rig::kInt8, Rig::kInt16})
        for (const auto& [scale, shift] : {std::pair<uint32_t, int>{1073741825u, 30}, {1u << 30, 30}, {1u, 0}}) {
            SCOPED_TRACE(fmt::format("int{}, OFM_SCALE {} >> {}", type.bits, scale, shift));
            const int64_t half = int64_t{1} << (type.bits - 1);
            std::vector<int64_t> values;
            for (int64_t v = -half; v < half; v += type.bits == 8 ? 1 : 127) values.push_back(v);
            values.push_back(half - 1);
            Rig rig("ethos-u85-256");
            ConvRegs r;
            r.pool = kPoolSum;
            r.ifm = rig.place_wide(1, static_cast<int>(values.size()), 1, type, values);
            r.ofm = rig.reserve(1, static_cast<int>(values.size()), 1, type, 0);
            r.global_scale = true;
            r.ofm_scale = scale, r.ofm_shift = shift;
            rig.emit_conv(r);
            rig.run();
            EXPECT_EQ(rig.read_wide(r.ofm), values);
        }
}

// ---- ARGMAX

// TFLite's ARG_MAX (arg_min_max.h) along one axis: the first position of the largest value.
int64_t first_largest(const std::vector<int64_t>& values, int n, const std::function<size_t(int)>& index) {
    int best = 0;
    for (int i = 1; i < n; ++i)
        if (values[index(i)] > values[index(best)]) best = i;
    return best;
}

// Small value ranges make ties common; int8 and int16; along W (ARGMAX_X) and H (ARGMAX_Y).
TEST(U85PoolArgMax, ArgMaxAlongWidthOrHeightEqualsTfliteWithTies) {
    std::mt19937 rng(7);
    constexpr int kH = 7, kW = 11, kC = 24;
    for (const Precision& type : {Rig::kInt8, Rig::kInt16})
        for (int mode : {kArgMaxX, kArgMaxY})
            for (int64_t spread : {int64_t{3}, int64_t{1} << (type.bits - 1)}) {
                Rig rig("ethos-u85-256");
                const auto values = random_values(kH * kW * kC, -spread, spread - 1, rng);
                const bool along_x = mode == kArgMaxX;
                ConvRegs r;
                r.pool = mode;
                r.ifm = rig.place_wide(kH, kW, kC, type, values);
                r.ofm = rig.reserve(along_x ? kH : 1, along_x ? 1 : kW, kC, Rig::kInt32, 0);
                r.kernel_h = along_x ? 1 : kH;
                r.kernel_w = along_x ? kW : 1;
                r.global_scale = true;
                r.ofm_scale = 1;
                r.ofm_shift = kArgMaxShift;
                rig.emit_conv(r);
                rig.run();
                const auto out = rig.read_wide(r.ofm);
                for (int y = 0; y < r.ofm.height; ++y)
                    for (int x = 0; x < r.ofm.width; ++x)
                        for (int c = 0; c < kC; ++c) {
                            const int64_t expected =
                                along_x ? first_largest(values, kW, [&](int i) { return at(y, i, c, kW, kC); })
                                        : first_largest(values, kH, [&](int i) { return at(i, x, c, kW, kC); });
                            ASSERT_EQ(out[at(y, x, c, r.ofm.width, kC)], expected) << y << "," << x << "," << c;
                        }
            }
}

// ARGMAX_X with the registers Vela writes, changed one at a time.
ConvRegs argmax_regs(Rig& rig) {
    ConvRegs r;
    r.pool = kArgMaxX;
    r.ifm = rig.place_wide(2, 8, 16, Rig::kInt8, std::vector<int64_t>(2 * 8 * 16, 1));
    r.ofm = rig.reserve(2, 1, 16, Rig::kInt32, 0);
    r.kernel_w = 8;
    r.global_scale = true;
    r.ofm_scale = 1;
    r.ofm_shift = kArgMaxShift;
    return r;
}

void expect_refused(const std::function<void(Rig&, ConvRegs&)>& change, const std::string& field) {
    Rig rig("ethos-u85-256");
    ConvRegs r = argmax_regs(rig);
    change(rig, r);
    const uint32_t offset = rig.emit_conv(r);
    try {
        rig.run();
        ADD_FAILURE() << "not refused: " << field;
    } catch (const Error& e) {
        EXPECT_EQ(e.where().field, field) << e.what();
        EXPECT_EQ(e.where().offset, offset) << e.what();
    }
}

TEST(U85PoolArgMax, UndefinedProgrammingsAreRefused) {
    expect_refused([](Rig&, ConvRegs& r) { r.ofm_shift = 0; }, "NPU_SET_OFM_SCALE");
    expect_refused([](Rig&, ConvRegs& r) { r.ofm_scale = 3; }, "NPU_SET_OFM_SCALE");
    expect_refused([](Rig&, ConvRegs& r) { r.pad.left = 1, r.kernel_w = 9; }, "NPU_SET_IFM_PAD_LEFT");
    expect_refused([](Rig&, ConvRegs& r) { r.pad.top = 1, r.kernel_h = 2; }, "NPU_SET_IFM_PAD_TOP");
    expect_refused([](Rig&, ConvRegs& r) { r.kernel_h = 2, r.ofm.height = 1; }, "NPU_SET_KERNEL_HEIGHT_M1");
    expect_refused(
        [](Rig& rig, ConvRegs& r) { r.ifm = rig.place_wide(2, 8, 16, Rig::kInt32, std::vector<int64_t>(256, 1)); },
        "NPU_SET_IFM_PRECISION.activation_precision");
}

}  // namespace
}  // namespace ethosu
