// The host's reference kernels against plain loops written from TFLite's definitions:
// QUANTIZE (AffineQuantize: float divide, round half away from zero, zero point, clamp),
// DEQUANTIZE (double product narrowed to float; for 8- and 16-bit values the double product is
// exact, so this equals one float rounding), integer QUANTIZE (Requantize with
// QuantizeMultiplier and the double-rounding MultiplyByQuantizedMultiplier).

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "frontend/graph/fixed_point.h"
#include "frontend/graph/reference_kernels.h"
#include "tests/engine/tflite_math.h"

namespace ethosu {
namespace {

template <class Out>
std::vector<Out> plain_quantize(const std::vector<float>& in, float scale, int32_t zero_point) {
    std::vector<Out> out;
    for (const float v : in) {
        const float q = std::round(v / scale);
        // x86 converts a float outside int32's range (or NaN) to INT32_MIN, which C++ leaves
        // undefined; TFLM then adds the zero point in int32, wrapping.
        const int32_t t = q >= -2147483648.0f && q < 2147483648.0f ? static_cast<int32_t>(q) : INT32_MIN;
        const int32_t r = static_cast<int32_t>(static_cast<uint32_t>(t) + static_cast<uint32_t>(zero_point));
        out.push_back(static_cast<Out>(std::min<int32_t>(std::max<int32_t>(r, std::numeric_limits<Out>::min()),
                                                         std::numeric_limits<Out>::max())));
    }
    return out;
}

template <class Out>
void expect_quantize_matches(const std::vector<float>& in, float scale, int32_t zero_point) {
    std::vector<Out> got(in.size());
    reference::affine_quantize<Out>(in, scale, zero_point, got);
    EXPECT_EQ(got, plain_quantize<Out>(in, scale, zero_point)) << "scale " << scale << " zero point " << zero_point;
}

TEST(ReferenceKernels, QuantizeFloatToEachIntegerType) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> value(-3.0f, 3.0f);
    std::vector<float> in(4000);
    for (float& v : in) v = value(rng);
    // Exact halves round away from zero: 0.5 / 0.25 = 2 exactly; 0.375 / 0.25 = 1.5 -> 2; -1.5 -> -2.
    in.insert(in.end(), {0.375f, -0.375f, 0.125f, -0.125f, 1e6f, -1e6f, 0.0f, -0.0f});
    for (const float scale : {0.25f, 0.0078125f, 0.01173f, 3.1e-5f}) {
        for (const int32_t zp : {0, -128, 5, 127}) expect_quantize_matches<int8_t>(in, scale, zp);
        for (const int32_t zp : {0, 128, 255}) expect_quantize_matches<uint8_t>(in, scale, zp);
        for (const int32_t zp : {0, -7}) expect_quantize_matches<int16_t>(in, scale, zp);
    }
    // Half away from zero, spelled out.
    std::vector<int8_t> halves(4);
    reference::affine_quantize<int8_t>(std::vector<float>{0.375f, -0.375f, 0.125f, -0.125f}, 0.25f, 0, halves);
    EXPECT_EQ(halves, (std::vector<int8_t>{2, -2, 1, -1}));
}

TEST(ReferenceKernels, QuantizeOutOfRangeFloatsAsX86Does) {
    // x86-64's float -> int32 conversion gives INT32_MIN for NaN and out-of-range values; TFLM
    // then adds the zero point in int32, wrapping: INT32_MIN + (-1) is INT32_MAX -> 127.
    const std::vector<float> in = {NAN, INFINITY, -INFINITY, 3e9f};
    std::vector<int8_t> zp0(in.size()), zp_minus1(in.size());
    reference::affine_quantize<int8_t>(in, 1.0f, 0, zp0);
    reference::affine_quantize<int8_t>(in, 1.0f, -1, zp_minus1);
    EXPECT_EQ(zp0, (std::vector<int8_t>{-128, -128, -128, -128}));
    EXPECT_EQ(zp_minus1, (std::vector<int8_t>{127, 127, 127, 127}));
}

template <class In>
void expect_dequantize_matches(float scale, int32_t zero_point) {
    std::vector<In> in;
    for (int64_t v = std::numeric_limits<In>::min(); v <= std::numeric_limits<In>::max(); v += sizeof(In) == 1 ? 1 : 7)
        in.push_back(static_cast<In>(v));
    std::vector<float> got(in.size());
    reference::dequantize<In>(in, scale, zero_point, got);
    const double wide = scale;
    for (size_t i = 0; i < in.size(); ++i) {
        const float expected = static_cast<float>(wide * (static_cast<int32_t>(in[i]) - zero_point));
        ASSERT_EQ(got[i], expected) << static_cast<int>(in[i]) << " scale " << scale;
    }
}

TEST(ReferenceKernels, DequantizeEachIntegerType) {
    for (const float scale : {0.25f, 0.0078125f, 0.01173f, 0.1f}) {
        expect_dequantize_matches<int8_t>(scale, -128);
        expect_dequantize_matches<int8_t>(scale, 3);
        expect_dequantize_matches<uint8_t>(scale, 128);
        expect_dequantize_matches<int16_t>(scale, 0);
    }
    // Values spelled out: (-128 - 3) * 0.25 and 127 - (-128) at 1/128.
    std::vector<float> got(2);
    reference::dequantize<int8_t>(std::vector<int8_t>{-128, 127}, 0.25f, 3, got);
    EXPECT_EQ(got, (std::vector<float>{-32.75f, 31.0f}));
}

TEST(ReferenceKernels, QuantizeMultiplierAsTflite) {
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> exponent(-30.0, 30.0);
    for (int i = 0; i < 10000; ++i) {
        const double real = std::pow(2.0, exponent(rng));
        const auto ours = reference::quantize_multiplier(real);
        const auto theirs = tflite_math::quantize_multiplier(real);
        ASSERT_EQ(ours.multiplier, theirs.multiplier) << real;
        ASSERT_EQ(ours.shift, theirs.shift) << real;
    }
    EXPECT_EQ(reference::quantize_multiplier(1.0).multiplier, 1 << 30);
    EXPECT_EQ(reference::quantize_multiplier(1.0).shift, 1);
    EXPECT_EQ(reference::quantize_multiplier(0.0).multiplier, 0);
}

template <class In, class Out>
void expect_requantize_matches(double in_scale, double out_scale, int32_t in_zp, int32_t out_zp) {
    std::vector<In> in;
    for (int64_t v = std::numeric_limits<In>::min(); v <= std::numeric_limits<In>::max(); v += sizeof(In) == 1 ? 1 : 13)
        in.push_back(static_cast<In>(v));
    const auto m = reference::quantize_multiplier(in_scale / out_scale);
    std::vector<Out> got(in.size());
    reference::requantize<In, Out>(in, m, in_zp, out_zp, got);
    for (size_t i = 0; i < in.size(); ++i) {
        const int32_t r = tflite_math::multiply(static_cast<int32_t>(in[i]) - in_zp, m.multiplier, m.shift) + out_zp;
        const int32_t expected = std::min<int32_t>(std::max<int32_t>(r, std::numeric_limits<Out>::min()),
                                                   std::numeric_limits<Out>::max());
        ASSERT_EQ(static_cast<int32_t>(got[i]), expected)
            << static_cast<int>(in[i]) << " scales " << in_scale << " / " << out_scale;
    }
}

TEST(ReferenceKernels, RequantizeEachTflmPair) {
    for (const auto& [si, so] : std::vector<std::pair<double, double>>{{0.5, 0.25}, {0.0123, 0.0456}, {0.3, 0.01}, {1.0, 1.0}}) {
        expect_requantize_matches<int8_t, int8_t>(si, so, -3, 11);
        expect_requantize_matches<int8_t, uint8_t>(si, so, 0, 128);
        expect_requantize_matches<uint8_t, int8_t>(si, so, 128, 0);
        expect_requantize_matches<int8_t, int16_t>(si, so, 5, 0);
        expect_requantize_matches<int16_t, int8_t>(si, so, 0, -1);
        expect_requantize_matches<int16_t, int16_t>(si / 64, so, 0, 0);
    }
    // int32 -> int8 / int16 (an accumulator brought back to a feature map), on a sample of int32.
    const std::vector<int32_t> wide = {INT32_MIN, -100000, -4097, -1, 0, 7, 4096, 123456, INT32_MAX};
    for (const double ratio : {1.0 / 4096, 0.37}) {  // above 1 TFLite's int32 left shift overflows on the extremes
        const auto m = reference::quantize_multiplier(ratio);
        std::vector<int16_t> to16(wide.size());
        std::vector<int8_t> to8(wide.size());
        reference::requantize<int32_t, int16_t>(wide, m, 0, 3, to16);
        reference::requantize<int32_t, int8_t>(wide, m, 0, -5, to8);
        for (size_t i = 0; i < wide.size(); ++i) {
            const int64_t r = tflite_math::multiply(wide[i], m.multiplier, m.shift);
            EXPECT_EQ(to16[i], std::clamp<int64_t>(r + 3, INT16_MIN, INT16_MAX)) << wide[i] << " x " << ratio;
            EXPECT_EQ(to8[i], std::clamp<int64_t>(r - 5, INT8_MIN, INT8_MAX)) << wide[i] << " x " << ratio;
        }
    }
    // Equal scales, zero points 128 apart: TFLM's XOR-0x80 fast path gives these values.
    std::vector<uint8_t> got(3);
    reference::requantize<int8_t, uint8_t>(std::vector<int8_t>{-128, 0, 127}, reference::quantize_multiplier(1.0), 0, 128,
                                           got);
    EXPECT_EQ(got, (std::vector<uint8_t>{0x00, 0x80, 0xFF}));
}

}  // namespace
}  // namespace ethosu

namespace ethosu {
namespace {

// SVDF from TFLite's definition, with a 3-D state [batch][filter][memory]: shift every filter's
// memory one step older, the newest entry the requantized feature dot product (zero point added,
// clamped), then per unit the bias plus the rank filters' time dot products, requantized to int8.
template <class State>
std::vector<int8_t> plain_svdf(const reference::SvdfShape& s, const reference::SvdfQuantization& q,
                               const std::vector<int8_t>& input, const std::vector<int8_t>& features,
                               const std::vector<State>& time, const std::vector<int32_t>& bias, std::vector<State>& state) {
    const auto clamp_to = [](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); };
    std::vector<int8_t> out;
    // TFLM shifts the flat state as one array (a filter's oldest entry takes the next filter's
    // first); the newest entries are all overwritten below, so a rotation is the same.
    std::rotate(state.begin(), state.begin() + 1, state.end());
    for (int b = 0; b < s.batches; ++b)
        for (int f = 0; f < s.filters; ++f) {
            int32_t dot = 0;
            for (int c = 0; c < s.input_size; ++c)
                dot += features[f * s.input_size + c] * (input[b * s.input_size + c] - q.input_zero_point);
            const int32_t v = tflite_math::multiply(dot, q.feature_scale.multiplier, q.feature_scale.shift) + q.state_zero_point;
            state[(b * s.filters + f) * s.memory + s.memory - 1] =
                static_cast<State>(clamp_to(v, std::numeric_limits<State>::min(), std::numeric_limits<State>::max()));
        }
    for (int b = 0; b < s.batches; ++b)
        for (int u = 0; u < s.units(); ++u) {
            int32_t acc = bias.empty() ? 0 : bias[u];
            for (int f = u * s.rank; f < (u + 1) * s.rank; ++f)
                for (int m = 0; m < s.memory; ++m)
                    acc += time[f * s.memory + m] * (state[(b * s.filters + f) * s.memory + m] - q.state_zero_point);
            const int32_t v = tflite_math::multiply(acc, q.output_scale.multiplier, q.output_scale.shift) + q.output_zero_point;
            out.push_back(static_cast<int8_t>(clamp_to(v, -128, 127)));
        }
    return out;
}

template <class State>
void expect_svdf_matches(const reference::SvdfShape& s, int steps, bool with_bias, uint32_t seed) {
    std::mt19937 rng(seed);
    const auto draw = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const reference::SvdfQuantization q{.input_zero_point = static_cast<int32_t>(draw(-20, 20)),
                                        .state_zero_point = static_cast<int32_t>(draw(-50, 50)),
                                        .output_zero_point = static_cast<int32_t>(draw(-128, 0)),
                                        .feature_scale = reference::quantize_multiplier(0.003 + 0.01 * (seed % 7)),
                                        .output_scale = reference::quantize_multiplier(0.0007 + 0.001 * (seed % 5))};
    std::vector<int8_t> features(static_cast<size_t>(s.filters * s.input_size));
    std::vector<State> time(static_cast<size_t>(s.filters * s.memory));
    std::vector<int32_t> bias;
    for (auto& w : features) w = static_cast<int8_t>(draw(-128, 127));
    for (auto& w : time) w = static_cast<State>(draw(std::numeric_limits<State>::min(), std::numeric_limits<State>::max()));
    if (with_bias)
        for (int u = 0; u < s.units(); ++u) bias.push_back(static_cast<int32_t>(draw(-5000, 5000)));
    std::vector<State> state(static_cast<size_t>(s.batches * s.filters * s.memory), static_cast<State>(q.state_zero_point));
    std::vector<State> plain_state = state;
    for (int step = 0; step < steps; ++step) {  // the state carries over from step to step
        std::vector<int8_t> input(static_cast<size_t>(s.batches * s.input_size));
        for (auto& v : input) v = static_cast<int8_t>(draw(-128, 127));
        std::vector<int8_t> got(static_cast<size_t>(s.batches * s.units()));
        reference::svdf<State>(s, q, input, features, time, bias, state, got);
        ASSERT_EQ(got, plain_svdf<State>(s, q, input, features, time, bias, plain_state)) << "step " << step;
        ASSERT_EQ(state, plain_state) << "step " << step;
    }
}

TEST(ReferenceKernels, SvdfAgainstPlainLoops) {
    expect_svdf_matches<int8_t>({.batches = 1, .input_size = 16, .filters = 64, .rank = 1, .memory = 8}, 12, true, 1);
    expect_svdf_matches<int8_t>({.batches = 2, .input_size = 7, .filters = 12, .rank = 3, .memory = 5}, 9, false, 2);
    expect_svdf_matches<int16_t>({.batches = 1, .input_size = 10, .filters = 8, .rank = 2, .memory = 4}, 9, true, 3);
    expect_svdf_matches<int16_t>({.batches = 3, .input_size = 5, .filters = 6, .rank = 1, .memory = 1}, 4, true, 4);
}

}  // namespace
}  // namespace ethosu

namespace ethosu {
namespace {

// gemmlowp's exp and reciprocal approximations against the real functions, over their domains.
TEST(ReferenceKernels, FixedPointExpAndReciprocal) {
    constexpr double kQ31 = 2147483648.0;
    for (int integer_bits : {0, 5, 12}) {
        const double unit = std::ldexp(1.0, 31 - integer_bits);  // raw value of 1.0
        for (int64_t raw = 0; raw >= std::numeric_limits<int32_t>::min(); raw -= 9973) {
            const double a = static_cast<double>(raw) / unit;
            const double got = fixed_point::exp_on_negative_values(static_cast<int32_t>(raw), integer_bits) / kQ31;
            ASSERT_NEAR(got, std::exp(a), 1e-6) << "a = " << a << " with " << integer_bits << " integer bits";
        }
    }
    EXPECT_EQ(fixed_point::exp_on_negative_values(0, 5), std::numeric_limits<int32_t>::max());
    for (int64_t raw = 0; raw <= std::numeric_limits<int32_t>::max(); raw += 7919) {
        const double x = static_cast<double>(raw) / kQ31;
        ASSERT_NEAR(fixed_point::one_over_one_plus_x(static_cast<int32_t>(raw)) / kQ31, 1.0 / (1.0 + x), 2e-8) << x;
    }
}

// SOFTMAX against float softmax (TFLite's definition) to one output step, and exactly where the
// result is exact: equal inputs share the unit, a lone maximum far above the rest takes it all.
template <class Out>
void expect_softmax_near_float(double beta, double input_scale, uint32_t seed) {
    std::mt19937 rng(seed);
    const size_t depth = 1 + rng() % 40, rows = 1 + rng() % 4;
    std::vector<int8_t> in(depth * rows);
    for (auto& v : in) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    std::vector<Out> out(in.size());
    const auto p = reference::softmax_parameters(beta, input_scale);
    reference::softmax<int8_t, Out>(p, depth, in, out);
    const double steps = sizeof(Out) == 1 ? 256.0 : 65536.0;
    for (size_t r = 0; r < rows; ++r) {
        const int8_t max = *std::max_element(in.begin() + r * depth, in.begin() + (r + 1) * depth);
        double sum = 0;
        for (size_t c = 0; c < depth; ++c) sum += std::exp(beta * input_scale * (in[r * depth + c] - max));
        for (size_t c = 0; c < depth; ++c) {
            const double expected = std::exp(beta * input_scale * (in[r * depth + c] - max)) / sum * steps;
            const double got = static_cast<double>(out[r * depth + c]) - std::numeric_limits<Out>::min();
            ASSERT_NEAR(got, std::min(expected, steps - 1), 1.01) << "depth " << depth << " scale " << input_scale;
        }
    }
}

TEST(ReferenceKernels, SoftmaxAgainstFloatAndExactCases) {
    for (uint32_t seed = 1; seed <= 60; ++seed) {
        const double scale = 0.01 + 0.02 * (seed % 9);
        expect_softmax_near_float<int8_t>(1.0, scale, seed);
        expect_softmax_near_float<int16_t>(1.0, scale, seed);
    }
    const auto p = reference::softmax_parameters(1.0, 0.0699627);
    std::vector<int8_t> equal(4, 17);
    std::vector<int8_t> quarter8(4);
    std::vector<int16_t> quarter16(4);
    reference::softmax<int8_t, int8_t>(p, 4, equal, quarter8);
    reference::softmax<int8_t, int16_t>(p, 4, equal, quarter16);
    EXPECT_EQ(quarter8, (std::vector<int8_t>(4, 64 - 128)));
    EXPECT_EQ(quarter16, (std::vector<int16_t>(4, 16384 - 32768)));
    std::vector<int16_t> winner(2);
    reference::softmax<int8_t, int16_t>(p, 2, std::vector<int8_t>{-128, 127}, winner);
    EXPECT_EQ(winner, (std::vector<int16_t>{-32768, 32767}));
}

}  // namespace
}  // namespace ethosu
