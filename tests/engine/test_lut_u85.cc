// U85's interpolating int16 LUTs against plain transcriptions of TFLite's int16 LOGISTIC and TANH
// arithmetic, over every input the table spans and beyond, with a table in Vela's format; and
// LUT_S16_S32 against TOSA's int16 TABLE, alone and as the activation of a POOL run on the
// Executor.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "emulator/engine/lut_u85.h"
#include "emulator/isa/error.h"
#include "tests/engine/u85_conv_rig.h"

namespace ethosu {
namespace {

// sigmoid(i / 24) * 65536, rounded, for i = 0..254; the last entry is 65535, as in TFLite's table.
std::vector<uint32_t> sigmoid_table() {
    std::vector<uint32_t> t(256, 65535);
    for (int i = 0; i < 255; ++i)
        t[static_cast<size_t>(i)] = static_cast<uint32_t>(std::lround(65536 / (1 + std::exp(-i / 24.0))));
    return t;
}

// Vela's LUT RAM image: entry 256 + i holds base and slope from i to i + 1 around 0x8000; negative
// entries mirror the table (TANH's first one saturates with slope 0).
std::vector<uint8_t> lut_image(const std::vector<uint32_t>& t, InterpolatingLut kind) {
    std::vector<uint8_t> bytes(2048);
    for (int i = -256; i < 256; ++i) {
        int v0, v1;
        if (i >= 0) {
            v0 = static_cast<int>(t[static_cast<size_t>(i)]) - 0x8000;
            v1 = static_cast<int>(t[static_cast<size_t>(i == 255 ? 255 : i + 1)]) - 0x8000;
        } else {
            const int j0 = i == -256 ? 255 : -i;
            const int j1 = kind == InterpolatingLut::Tanh && i == -256 ? 255 : j0 - 1;
            v0 = 0x8000 - static_cast<int>(t[static_cast<size_t>(j0)]);
            v1 = 0x8000 - static_cast<int>(t[static_cast<size_t>(j1)]);
        }
        const uint32_t entry = (static_cast<uint32_t>(std::max(v1 - v0, 0)) << 16) | (static_cast<uint32_t>(v0) & 0xFFFF);
        for (int b = 0; b < 4; ++b) bytes[static_cast<size_t>((256 + i) * 4 + b)] = static_cast<uint8_t>(entry >> (8 * b));
    }
    return bytes;
}

// TFLite's int16 LOGISTIC after its input rescale (x: the rescaled input, 9 fraction bits).
int tflite_logistic(const std::vector<uint32_t>& t, int x) {
    const uint32_t a = static_cast<uint32_t>(std::abs(x));
    const uint32_t high = a >> 9;
    uint32_t r = 0x7FFFu << 10;
    if (high < 255) r = (t[high] << 9) + (a & 0x1FF) * (t[high + 1] - t[high]);
    r = x >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
    return static_cast<int>(r >> 10);
}

// TFLite's int16 TANH after its input rescale (x: 8 fraction bits).
int tflite_tanh(const std::vector<uint32_t>& t, int x) {
    const uint32_t a = static_cast<uint32_t>(std::abs(x));
    const uint32_t high = a >> 8;
    int32_t r = 0xFFFF << 8;
    if (high < 255) r = static_cast<int32_t>((t[high] << 8) + (a & 0xFF) * (t[high + 1] - t[high]));
    r = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return r >> 8;
}

// One input differs: at -255 * 2^9 TFLite saturates (to 1) while the table's entry -255 starts at
// 0x8000 - 65535 (rounding to 0). Which of the two the hardware gives is not known.
TEST(InterpolatingLut, SigmoidEqualsTfliteLogisticForEveryInputButOne) {
    const auto t = sigmoid_table();
    const auto lut = lut_image(t, InterpolatingLut::Sigmoid);
    constexpr int kSaturationEdge = -255 * 512;
    for (int x = -(1 << 18); x < (1 << 18); ++x) {
        if (x == kSaturationEdge) continue;
        ASSERT_EQ(interpolate_lut(lut, x, InterpolatingLut::Sigmoid), tflite_logistic(t, x)) << "x " << x;
    }
    EXPECT_EQ(interpolate_lut(lut, kSaturationEdge, InterpolatingLut::Sigmoid), 0);
    EXPECT_EQ(tflite_logistic(t, kSaturationEdge), 1);
}

// Vela's OFM scale doubles TANH's input: the table has 9 fraction bits, TFLite's TANH 8.
TEST(InterpolatingLut, TanhEqualsTfliteTanhForEveryInput) {
    const auto t = sigmoid_table();
    const auto lut = lut_image(t, InterpolatingLut::Tanh);
    for (int x = -(1 << 17); x < (1 << 17); ++x)
        ASSERT_EQ(interpolate_lut(lut, 2 * x, InterpolatingLut::Tanh), tflite_tanh(t, x)) << "x " << x;
}

// A TOSA int16 TABLE: 513 values, neighbours within int16 of each other.
std::vector<int16_t> tosa_table(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> value(-16384, 16383);
    std::vector<int16_t> t(513);
    for (auto& v : t) v = static_cast<int16_t>(value(rng));
    t[0] = -16384, t[512] = 16383;
    return t;
}

// TOSA's int16 TABLE: the index and fraction of value + 32768, interpolated with 7 fraction bits.
int32_t tosa_table_lookup(const std::vector<int16_t>& t, int value) {
    const int index = (value + 32768) >> 7, fraction = (value + 32768) & 0x7F;
    return t[static_cast<size_t>(index)] * 128 + (t[static_cast<size_t>(index) + 1] - t[static_cast<size_t>(index)]) * fraction;
}

// The LUT RAM image Vela writes for it: entry i holds table[i] and table[i + 1] - table[i].
std::vector<uint8_t> s16_lut_image(const std::vector<int16_t>& t) {
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < 512; ++i) {
        const auto base = static_cast<uint16_t>(t[i]), slope = static_cast<uint16_t>(t[i + 1] - t[i]);
        for (const uint16_t half : {base, slope}) {
            bytes.push_back(static_cast<uint8_t>(half));
            bytes.push_back(static_cast<uint8_t>(half >> 8));
        }
    }
    return bytes;
}

TEST(InterpolatingLut, S16ToS32EqualsTosaTableForEveryInput) {
    const auto t = tosa_table(3);
    const auto lut = s16_lut_image(t);
    for (int v = -32768; v <= 32767; ++v) ASSERT_EQ(interpolate_lut_s16_s32(lut, v), tosa_table_lookup(t, v)) << "v " << v;
}

// A TABLE op as Vela runs it on U85: POOL SUM 1x1 at unit scale with the LUT as activation; every
// int16 value once.
TEST(InterpolatingLut, S16ToS32ActivationOfAPoolEqualsTosaTable) {
    using namespace u85_conv_test;
    constexpr int kLutS16S32 = 9, kPoolSum = 3;
    const auto t = tosa_table(8);
    Rig rig("ethos-u85-256");
    std::vector<int64_t> inputs;
    for (int v = -32768; v <= 32767; ++v) inputs.push_back(v);
    rig.load_lut(s16_lut_image(t));
    ConvRegs r;
    r.pool = kPoolSum;
    r.activation = kLutS16S32;
    r.ifm = rig.place_wide(1, 256, 256, Rig::kInt16, inputs);
    r.ofm = rig.reserve(1, 256, 256, Rig::kInt32, 0);
    r.global_scale = true;
    r.ofm_scale = 1;
    rig.emit_conv(r);
    rig.run();
    const auto out = rig.read_wide(r.ofm);
    for (size_t n = 0; n < inputs.size(); ++n)
        ASSERT_EQ(out[n], tosa_table_lookup(t, static_cast<int>(inputs[n]))) << "input " << inputs[n];
}

// A 4x4 int16 POOL SUM at unit scale through the LUT activation `activation` (ACTIVATION_MIN/MAX
// `clip`, default the OFM's range), which must be refused at the op: where its error points.
ErrorLocation refused_lut_pool(int activation, std::optional<std::pair<int64_t, int64_t>> clip = {}) {
    using namespace u85_conv_test;
    Rig rig("ethos-u85-256");
    rig.load_lut(s16_lut_image(tosa_table(1)));
    ConvRegs r;
    r.pool = 3;
    r.activation = activation;
    r.clip = clip;
    r.ifm = rig.place_wide(1, 4, 4, Rig::kInt16, std::vector<int64_t>(16, 5));
    r.ofm = rig.reserve(1, 4, 4, Rig::kInt16, 0);
    r.global_scale = true;
    r.ofm_scale = 1;
    const uint32_t at = rig.emit_conv(r);
    try {
        rig.run();
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, at);
        return e.where();
    }
    ADD_FAILURE() << "activation " << activation << " ran";
    return {};
}

// An 8-bit LUT whose ACTIVATION_MIN/MAX miss its input range has no entry to look up: refused (a
// clip range below 0 on a LUT_U8_U8 would read past the table).
TEST(Lut, ClipRangeOutsideTheInputRangeIsRefused) {
    EXPECT_EQ(refused_lut_pool(1, {{1000, 2000}}).field, "NPU_SET_ACTIVATION_MIN");  // LUT_U8_U8
    EXPECT_EQ(refused_lut_pool(1, {{-32768, -26517}}).field, "NPU_SET_ACTIVATION_MIN");
}

// LUT_S16_S16 stays refused: the hardware's rounding of slope * fraction / 128 is not known.
TEST(InterpolatingLut, S16ToS16IsRefused) { refused_lut_pool(8); }

}  // namespace
}  // namespace ethosu
