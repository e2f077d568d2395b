// The output-stage arithmetic against plain transcriptions of TFLite's reference integer math.

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "emulator/engine/output_stage.h"
#include "tests/engine/tflite_integer_math.h"

namespace ethosu {
namespace {

using tflite_reference::tflite_multiply;

// TFLite's 16-bit requantize: int64 input, multiplier reduced to 16 bits, single rounding.
int32_t tflite_multiply_int64(int64_t x, int32_t multiplier, int shift) {
    const int32_t reduced = multiplier < 0x7FFF0000 ? ((multiplier + (1 << 15)) >> 16) : 0x7FFF;
    const int total_shift = 15 - shift;
    return static_cast<int32_t>((x * reduced + (int64_t{1} << (total_shift - 1))) >> total_shift);
}

// DBL with Vela's scale and shift = 31 - TFLite shift equals TFLite's double rounding.
TEST(OutputStage, DoubleRoundingEqualsTfliteMultiplyByQuantizedMultiplier) {
    std::mt19937_64 rng(1);
    for (int i = 0; i < 200000; ++i) {
        const int32_t x = static_cast<int32_t>(rng() >> (rng() % 40));
        const int32_t sign = rng() & 1 ? 1 : -1;
        const int32_t multiplier = static_cast<int32_t>((1u << 30) + (rng() % (1u << 30)));
        const int tflite_shift = -static_cast<int>(rng() % 31);  // scales below one
        const int32_t value = sign * x;
        ASSERT_EQ(scale_value(value, static_cast<uint32_t>(multiplier), 31 - tflite_shift, RoundMode::DoubleSymmetric),
                  tflite_multiply(value, multiplier, tflite_shift))
            << value << " * " << multiplier << " >> " << 31 - tflite_shift;
    }
    // Exact halves at both rounding steps, both signs.
    for (int32_t v : {-3, -2, -1, 1, 2, 3, 1 << 20, -(1 << 20)})
        for (int s = 0; s > -8; --s) EXPECT_EQ(scale_value(v, 1u << 30, 31 - s, RoundMode::DoubleSymmetric), tflite_multiply(v, 1 << 30, s));
}

TEST(OutputStage, NaturalWithReducedScaleEqualsTflite16BitRequantize) {
    std::mt19937_64 rng(2);
    for (int i = 0; i < 200000; ++i) {
        const int64_t x = static_cast<int64_t>(rng() % (int64_t{1} << 40)) - (int64_t{1} << 39);
        const int32_t multiplier = static_cast<int32_t>((1u << 30) + (rng() % ((1u << 31) - (1u << 16) - (1u << 30))));
        const int tflite_shift = -8 - static_cast<int>(rng() % 20);  // results fit TFLite's int32
        // Vela's reduced scale: round the 32-bit multiplier to 16 bits; shift drops by 16.
        const uint32_t reduced = static_cast<uint32_t>((multiplier + (1 << 15)) >> 16);
        ASSERT_EQ(scale_value(x, reduced, 31 - tflite_shift - 16, RoundMode::Natural),
                  tflite_multiply_int64(x, multiplier, tflite_shift));
    }
}

TEST(OutputStage, RoundingModesAtTheirEdges) {
    EXPECT_EQ(rounding_shift(5, 1, RoundMode::Natural), 3);    //  2.5 ->  3
    EXPECT_EQ(rounding_shift(-5, 1, RoundMode::Natural), -2);  // -2.5 -> -2
    EXPECT_EQ(rounding_shift(-5, 1, RoundMode::Truncate), -2);
    EXPECT_EQ(rounding_shift(5, 1, RoundMode::Truncate), 2);
    EXPECT_EQ(rounding_shift(-5, 1, RoundMode::TruncateToLower), -3);
    EXPECT_EQ(rounding_shift(-5, 1, RoundMode::DoubleSymmetric), -3);  // half away from zero
    EXPECT_EQ(rounding_shift(7, 0, RoundMode::Natural), 7);
    EXPECT_EQ(scale_value(1, 1, 0, RoundMode::DoubleSymmetric), 1);
    // Shifts at the top of the 6-bit range do not overflow.
    // (2^31 - 1)(2^32 - 1) / 2^63 = 0.99999... -> 1;  2^39 (2^32 - 1) / 2^63 = 255.99... -> 256.
    EXPECT_EQ(scale_value(std::numeric_limits<int32_t>::max(), 0xFFFFFFFFu, 63, RoundMode::DoubleSymmetric), 1);
    EXPECT_EQ(scale_value(int64_t{1} << 39, 0xFFFFFFFFu, 63, RoundMode::Natural), 256);
}

// TFLite's average: (sum +- n/2) / n, rounding half away from zero.
TEST(OutputStage, AveragePoolScaleEqualsTfliteRoundedDivision) {
    for (int n : {1, 2, 3, 4, 7, 9, 25, 49, 64, 100, 255, 256, 441, 2401, 4096}) {
        const Scale s = average_pool_scale(n);
        for (int64_t sum = -128 * n; sum <= 127 * n; sum += (n > 64 ? 7 : 1)) {
            const int64_t expected = sum > 0 ? (sum + n / 2) / n : (sum - n / 2) / n;
            ASSERT_EQ(scale_value(sum, s.scale, s.shift, s.round), expected) << "n " << n << " sum " << sum;
        }
    }
    EXPECT_EQ(average_pool_scale(49).scale, 2804876602u);  // Vela's listing for a 7x7 pool
    EXPECT_EQ(average_pool_scale(49).shift, 37);
}

TEST(OutputStage, ClipRangeFollowsTheOfmType) {
    DecodedOp op;
    op.ofm.precision = {false, 8};
    op.output.clip_min = 0;
    op.output.clip_max = 0xFF;
    EXPECT_EQ(clip_range(op).max, 255);  // 16-bit bound read unsigned for an unsigned OFM
    op.ofm.precision = {true, 8};
    op.output.clip_min = -32768;
    op.output.clip_max = 32767;
    EXPECT_EQ(clip_range(op).min, -128);
    EXPECT_EQ(clip_range(op).max, 127);
}

}  // namespace
}  // namespace ethosu
