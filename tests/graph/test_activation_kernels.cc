// RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH and HARD_SWISH against plain loops from TFLite's
// definitions: the integer rescaling of RELU and LEAKY_RELU exactly; the fixed-point and table
// curves (gemmlowp's logistic and tanh, TFLite's int16 sigmoid table, HARD_SWISH's 16-bit
// arithmetic) within one output step of the real function, exactly at their fixed points, and
// monotonic over every input; float paths as TFLM writes them. And the refusals TFLM's Prepare makes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/graph/host_graph.h"
#include "tests/engine/tflite_math.h"

namespace ethosu::test {
namespace {

using ::testing::HasSubstr;

template <class T>
std::vector<T> every_value() {
    std::vector<T> v;
    for (int x = std::numeric_limits<T>::min(); x <= std::numeric_limits<T>::max(); ++x) v.push_back(static_cast<T>(x));
    return v;
}

HostGraph unary(std::string_view op, ElementType type, float in_scale, int64_t in_zp, float out_scale, int64_t out_zp) {
    const int64_t n = type == ElementType::Int16 ? 65536 : 256;
    return {op, {{{n}, type, {in_scale}, {in_zp}}, {{n}, type, {out_scale}, {out_zp}}}, {0}, {1}};
}

template <class T>
std::vector<T> run_all(const HostGraph& g) {
    return values_of<T>(g.run({bytes_of(every_value<T>())})[0]);
}

TEST(ActivationKernels, ReluAndRelu6Int8) {
    const auto x = every_value<int8_t>();
    const auto relu = run_all<int8_t>(unary("RELU", ElementType::Int8, 0.05f, 3, 0.03f, -20));
    const tflite_math::Multiplier m = tflite_math::quantize_multiplier(static_cast<double>(0.05f / 0.03f));
    const auto relu6 = run_all<int8_t>(unary("RELU6", ElementType::Int8, 0.05f, 3, 0.05f, 3));
    for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(relu[i], std::clamp<int64_t>(-20 + tflite_math::multiply(x[i] - 3, m), -20, 127)) << i;
        // Between the input's 0 (3) and 6 (3 + 120), no rescaling.
        EXPECT_EQ(relu6[i], std::clamp<int>(x[i], 3, 123)) << i;
    }
    HostGraph f{"RELU6", {{{4}, ElementType::Float32}, {{4}, ElementType::Float32}}, {0}, {1}};
    EXPECT_EQ(values_of<float>(f.run({bytes_of(std::vector<float>{-1.0f, 0.5f, 6.5f, -0.0f})})[0]),
              (std::vector<float>{0.0f, 0.5f, 6.0f, -0.0f}));
}

TEST(ActivationKernels, LeakyReluInt8PositiveAndNegativeAlpha) {
    const auto x = every_value<int8_t>();
    for (const float alpha : {0.2f, -0.5f}) {
        HostGraph g = unary("LEAKY_RELU", ElementType::Int8, 0.1f, -5, 0.07f, 10);
        tflite::LeakyReluOptionsT options;
        options.alpha = alpha;
        g.options = options_table(options);
        const auto got = run_all<int8_t>(g);
        const tflite_math::Multiplier identity = tflite_math::quantize_multiplier(static_cast<double>(0.1f / 0.07f)),
                         scaled = tflite_math::quantize_multiplier(static_cast<double>(0.1f * std::abs(alpha) / 0.07f));
        for (size_t i = 0; i < x.size(); ++i) {
            const int32_t d = x[i] + 5;
            const int64_t y = d >= 0 ? tflite_math::multiply(d, identity)
                                     : (alpha < 0 ? -tflite_math::multiply(d, scaled) : tflite_math::multiply(d, scaled));
            EXPECT_EQ(got[i], std::clamp<int64_t>(10 + y, -128, 127)) << alpha << " " << i;
        }
    }
}

TEST(ActivationKernels, PreluWithPerChannelAlphas) {
    // int16 input [1, 2, 3, 4], int8 alphas [4] broadcast over the channels.
    const auto x = random_values<int16_t>(24, 31);
    const std::vector<int8_t> alphas = {-100, 0, 37, 127};
    HostGraph g{"PRELU",
                {{{1, 2, 3, 4}, ElementType::Int16, {0.002f}, {0}},
                 {{4}, ElementType::Int8, {0.01f}, {-3}, bytes_of(alphas)},
                 {{1, 2, 3, 4}, ElementType::Int16, {0.003f}, {0}}},
                {0, 1},
                {2}};
    const auto got = values_of<int16_t>(g.run({bytes_of(x)})[0]);
    const auto identity = tflite_math::quantize_multiplier(double{0.002f} / double{0.003f});
    const auto scaled = tflite_math::quantize_multiplier(double{0.002f} * double{0.01f} / double{0.003f});
    for (size_t i = 0; i < x.size(); ++i) {
        const int32_t alpha = alphas[i % 4] + 3;
        const int64_t y = x[i] >= 0 ? tflite_math::multiply(x[i], identity) : tflite_math::multiply(x[i] * alpha, scaled);
        EXPECT_EQ(got[i], std::clamp<int64_t>(y, INT16_MIN, INT16_MAX)) << i;
    }
    HostGraph f{"PRELU",
                {{{2, 2}, ElementType::Float32}, {{2}, ElementType::Float32, {}, {}, bytes_of(std::vector<float>{0.5f, -2.0f})},
                 {{2, 2}, ElementType::Float32}},
                {0, 1},
                {2}};
    EXPECT_EQ(values_of<float>(f.run({bytes_of(std::vector<float>{-1.0f, -1.0f, 3.0f, -0.25f})})[0]),
              (std::vector<float>{-0.5f, 2.0f, 3.0f, 0.5f}));
    HostGraph wide_alpha = g;
    wide_alpha.tensors[1].type = ElementType::Int16;
    wide_alpha.tensors[1].constant = bytes_of(std::vector<int16_t>{1, 2, 3, 4});
    EXPECT_THAT(refusal(wide_alpha), HasSubstr("int8 or int16 with int8 alphas"));
}

// Each quantized curve against the real function: within one step, monotonic.
template <class T>
void expect_curve(const std::vector<T>& got, float in_scale, int in_zp, float out_scale, int out_zp,
                  double (*f)(double), double tolerance) {
    const auto x = every_value<T>();
    for (size_t i = 0; i < x.size(); ++i) {
        const double real = f((x[i] - in_zp) * double{in_scale}) / out_scale + out_zp;
        const double want = std::clamp(real, double{std::numeric_limits<T>::min()}, double{std::numeric_limits<T>::max()});
        EXPECT_NEAR(got[i], want, tolerance) << "input " << int{x[i]};
        if (i > 0) {
            EXPECT_GE(got[i], got[i - 1]) << "input " << int{x[i]};
        }
    }
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double hyperbolic_tangent(double x) { return std::tanh(x); }
double hard_swish(double x) { return x * std::clamp(x + 3.0, 0.0, 6.0) / 6.0; }

TEST(ActivationKernels, LogisticAndTanhInt8) {
    const auto logistic = run_all<int8_t>(unary("LOGISTIC", ElementType::Int8, 0.08f, -4, 1.0f / 256, -128));
    expect_curve<int8_t>(logistic, 0.08f, -4, 1.0f / 256, -128, sigmoid, 1.0);
    EXPECT_EQ(logistic[static_cast<size_t>(-4 + 128)], 0);  // sigmoid(0) = 1/2 exactly
    EXPECT_EQ(logistic[0], -128);                            // below the radius
    const auto tanh = run_all<int8_t>(unary("TANH", ElementType::Int8, 0.03f, 7, 1.0f / 128, 0));
    expect_curve<int8_t>(tanh, 0.03f, 7, 1.0f / 128, 0, hyperbolic_tangent, 1.0);
    EXPECT_EQ(tanh[static_cast<size_t>(7 + 128)], 0);
}

TEST(ActivationKernels, LogisticAndTanhInt16FromTheTable) {
    // A power-of-two input scale (2^-12: the table's own path) and a general one.
    for (const float in_scale : {1.0f / 4096, 0.0007f}) {
        const auto logistic = run_all<int16_t>(unary("LOGISTIC", ElementType::Int16, in_scale, 0, 1.0f / 32768, 0));
        expect_curve<int16_t>(logistic, in_scale, 0, 1.0f / 32768, 0, sigmoid, 3.0);
        EXPECT_EQ(logistic[32768], 16384);  // sigmoid(0) = 1/2
        const auto tanh = run_all<int16_t>(unary("TANH", ElementType::Int16, in_scale, 0, 1.0f / 32768, 0));
        expect_curve<int16_t>(tanh, in_scale, 0, 1.0f / 32768, 0, hyperbolic_tangent, 6.0);
        EXPECT_EQ(tanh[32768], 0);
    }
}

TEST(ActivationKernels, FloatCurvesAsTflmWritesThem) {
    const std::vector<float> x = {-20.0f, -9.5f, -1.0f, 0.0f, 2.5f, 16.0f, 17.0f};
    HostGraph logistic{"LOGISTIC", {{{7}, ElementType::Float32}, {{7}, ElementType::Float32}}, {0}, {1}};
    HostGraph tanh = logistic, swish = logistic;
    tanh.builtin = "TANH";
    swish.builtin = "HARD_SWISH";
    const auto l = values_of<float>(logistic.run({bytes_of(x)})[0]);
    const auto t = values_of<float>(tanh.run({bytes_of(x)})[0]);
    const auto s = values_of<float>(swish.run({bytes_of(x)})[0]);
    for (size_t i = 0; i < x.size(); ++i) {
        // exp(x) below -9, 1 above 16.619..., else 1 / (1 + exp(-x)), all in float.
        const float want = x[i] < -9.0f ? std::exp(x[i]) : x[i] > 16.619047164916992188f ? 1.0f : 1.0f / (1.0f + std::exp(-x[i]));
        EXPECT_EQ(l[i], want);
        EXPECT_EQ(t[i], std::tanh(x[i]));
        EXPECT_EQ(s[i], x[i] * std::min(6.0f, std::max(0.0f, x[i] + 3.0f)) / 6.0f);
    }
}

TEST(ActivationKernels, HardSwishInt8) {
    const auto got = run_all<int8_t>(unary("HARD_SWISH", ElementType::Int8, 0.05f, 10, 0.03f, -30));
    const auto x = every_value<int8_t>();
    for (size_t i = 0; i < x.size(); ++i) {
        const double real = hard_swish((x[i] - 10) * 0.05) / 0.03 - 30;
        EXPECT_NEAR(got[i], std::clamp(real, -128.0, 127.0), 1.0) << int{x[i]};
    }
    // Exactly 0 at the input's zero point, x itself (rescaled) well above 3.
    EXPECT_EQ(got[10 + 128], -30);
    EXPECT_EQ(got[255], static_cast<int8_t>(std::clamp(std::lround(117 * 0.05 / 0.03) - 30, -128L, 127L)));
}

TEST(ActivationKernels, RefusesWhatTflmRefuses) {
    EXPECT_THAT(refusal(unary("LOGISTIC", ElementType::Int8, 0.1f, 0, 1.0f / 256, 0)), HasSubstr("zero point must be -128"));
    EXPECT_THAT(refusal(unary("TANH", ElementType::Int16, 0.001f, 0, 1.0f / 30000, 0)), HasSubstr("scale must be 2^-15"));
    EXPECT_THAT(refusal(unary("TANH", ElementType::Int16, 0.001f, 3, 1.0f / 32768, 0)), HasSubstr("zero points of 0"));
    EXPECT_THAT(refusal(unary("RELU", ElementType::Int16, 0.001f, 0, 0.001f, 2)), HasSubstr("zero points of 0"));
    EXPECT_THAT(refusal(unary("HARD_SWISH", ElementType::Int16, 0.001f, 0, 0.001f, 0)), HasSubstr("HARD_SWISH takes float32, int8,"));
    EXPECT_THAT(refusal(unary("HARD_SWISH", ElementType::Int8, 1.0f, 0, 0.001f, 0)), HasSubstr("over 128 times"));
    HostGraph mixed = unary("RELU", ElementType::Int8, 0.1f, 0, 0.1f, 0);
    mixed.tensors[1].type = ElementType::Int16;
    EXPECT_THAT(refusal(mixed), HasSubstr("the same type in and out"));
    EXPECT_THAT(refusal({"RELU_N1_TO_1", {{{4}, ElementType::Float32}, {{4}, ElementType::Float32}}, {0}, {1}}),
                HasSubstr("not implemented on the CPU"));
}

}  // namespace
}  // namespace ethosu::test
