// ADD, SUB, MUL, MINIMUM, MAXIMUM and SQUARED_DIFFERENCE against plain loops over the output's
// 4-D index written from TFLite's definitions (add_common.cc, sub_common.cc, mul_common.cc,
// squared_difference.cc), with broadcasting, fused activations and saturation; and the
// refusals TFLM's Prepare makes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "tests/graph/host_graph.h"
#include "tests/engine/tflite_math.h"

namespace ethosu::test {
namespace {

using ::testing::HasSubstr;

size_t count(const std::vector<int64_t>& s) {
    size_t n = 1;
    for (const int64_t d : s) n *= static_cast<size_t>(d);
    return n;
}

// Calls f(output index, 4-D index) over a 4-D output shape in row-major order.
template <class F>
void for_each_4d(const std::vector<int64_t>& out, F&& f) {
    size_t i = 0;
    for (int64_t a = 0; a < out[0]; ++a)
        for (int64_t b = 0; b < out[1]; ++b)
            for (int64_t c = 0; c < out[2]; ++c)
                for (int64_t d = 0; d < out[3]; ++d) f(i++, std::vector<int64_t>{a, b, c, d});
}

struct Quant {
    float scale;
    int64_t zero_point;
};

HostGraph binary(std::string_view op, ElementType type, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                 const std::vector<int64_t>& out, Quant qa, Quant qb, Quant qo, int8_t activation = 0) {
    const auto t = [&](const std::vector<int64_t>& s, Quant q) {
        return q.scale > 0 ? HostTensor{s, type, {q.scale}, {q.zero_point}} : HostTensor{s, type};
    };
    HostGraph g{op, {t(a, qa), t(b, qb), t(out, qo)}, {0, 1}, {2}};
    // ADD, SUB and MUL carry their own options table; the others have none.
    if (op == "ADD") {
        tflite::AddOptionsT o;
        o.fused_activation_function = activation;
        g.options = options_table(o);
    } else if (op == "SUB") {
        tflite::SubOptionsT o;
        o.fused_activation_function = activation;
        g.options = options_table(o);
    } else if (op == "MUL") {
        tflite::MulOptionsT o;
        o.fused_activation_function = activation;
        g.options = options_table(o);
    }
    return g;
}

// TFLite's ADD/SUB recipe: each input shifted left, scaled by its share of twice the larger
// scale, summed, and scaled to the output (multipliers from double ratios; SUB forms them in float).
template <class T>
std::vector<T> expected_add_sub(bool subtract, const std::vector<T>& x, const std::vector<T>& y,
                                const std::vector<int64_t>& sa, const std::vector<int64_t>& sb,
                                const std::vector<int64_t>& so, Quant qa, Quant qb, Quant qo, int64_t lo, int64_t hi) {
    const int left_shift = sizeof(T) == 2 ? 15 : 20;
    tflite_math::Multiplier m1, m2, mo;
    if (subtract) {
        const float twice = 2 * std::max(qa.scale, qb.scale);
        m1 = tflite_math::quantize_multiplier(qa.scale / twice);
        m2 = tflite_math::quantize_multiplier(qb.scale / twice);
        mo = tflite_math::quantize_multiplier(twice / (static_cast<float>(1 << left_shift) * qo.scale));
    } else {
        const double twice = 2.0 * std::max(qa.scale, qb.scale);
        m1 = tflite_math::quantize_multiplier(qa.scale / twice);
        m2 = tflite_math::quantize_multiplier(qb.scale / twice);
        mo = tflite_math::quantize_multiplier(twice / ((1 << left_shift) * static_cast<double>(qo.scale)));
    }
    std::vector<T> z(count(so));
    for_each_4d(so, [&](size_t i, const std::vector<int64_t>& at) {
        const auto a = static_cast<int32_t>((x[broadcast_index(sa, at)] - qa.zero_point) * (1 << left_shift));
        const auto b = static_cast<int32_t>((y[broadcast_index(sb, at)] - qb.zero_point) * (1 << left_shift));
        const int32_t s1 = tflite_math::multiply(a, m1), s2 = tflite_math::multiply(b, m2);
        const int64_t r = tflite_math::multiply(subtract ? s1 - s2 : s1 + s2, mo) + qo.zero_point;
        z[i] = static_cast<T>(std::clamp(r, lo, hi));
    });
    return z;
}

TEST(ElementwiseKernels, AddInt8BroadcastWithRelu6) {
    const std::vector<int64_t> sa = {4, 1, 6, 16}, sb = {1, 8, 1, 16}, so = {4, 8, 6, 16};
    const Quant qa{0.05f, -3}, qb{0.11f, 7}, qo{0.09f, -10};
    const auto x = random_values<int8_t>(count(sa), 1), y = random_values<int8_t>(count(sb), 2);
    const auto out = binary("ADD", ElementType::Int8, sa, sb, so, qa, qb, qo, 3).run({bytes_of(x), bytes_of(y)});
    // RELU6: from the zero point to zero point + round(6 / 0.09) = 57.
    const auto want = expected_add_sub<int8_t>(false, x, y, sa, sb, so, qa, qb, qo, -10, 57);
    EXPECT_EQ(values_of<int8_t>(out[0]), want);
    // And within one step of the real sum.
    const auto got = values_of<int8_t>(out[0]);
    for_each_4d(so, [&](size_t i, const std::vector<int64_t>& at) {
        const double real = (x[broadcast_index(sa, at)] - qa.zero_point) * double{qa.scale} +
                            (y[broadcast_index(sb, at)] - qb.zero_point) * double{qb.scale};
        const double q = std::clamp(real / qo.scale + qo.zero_point, -10.0, 57.0);
        EXPECT_NEAR(got[i], q, 1.0) << i;
    });
}

TEST(ElementwiseKernels, SubInt16AndInt8) {
    const std::vector<int64_t> s = {1, 2, 3, 5};
    const Quant qa{0.0003f, 0}, qb{0.0002f, 0}, qo{0.0004f, 0};
    const auto x = random_values<int16_t>(count(s), 3), y = random_values<int16_t>(count(s), 4);
    const auto out = binary("SUB", ElementType::Int16, s, s, s, qa, qb, qo).run({bytes_of(x), bytes_of(y)});
    EXPECT_EQ(values_of<int16_t>(out[0]), expected_add_sub<int16_t>(true, x, y, s, s, s, qa, qb, qo, INT16_MIN, INT16_MAX));

    const std::vector<int64_t> sb = {1, 1, 1, 5};
    const Quant q8a{0.3f, 5}, q8b{0.07f, -100}, q8o{0.2f, 1};
    const auto x8 = random_values<int8_t>(count(s), 5), y8 = random_values<int8_t>(count(sb), 6);
    const auto out8 = binary("SUB", ElementType::Int8, s, sb, s, q8a, q8b, q8o, 1).run({bytes_of(x8), bytes_of(y8)});
    EXPECT_EQ(values_of<int8_t>(out8[0]), expected_add_sub<int8_t>(true, x8, y8, s, sb, s, q8a, q8b, q8o, 1, 127));
}

TEST(ElementwiseKernels, MulInt8AndInt16Broadcast) {
    const std::vector<int64_t> sa = {3, 1, 4, 1}, sb = {1, 2, 1, 6}, so = {3, 2, 4, 6};
    for (const bool wide : {false, true}) {
        const Quant qa{0.02f, wide ? 0 : 4}, qb{0.5f, wide ? 0 : -9}, qo{wide ? 0.4f : 0.3f, wide ? 0 : 2};
        const ElementType type = wide ? ElementType::Int16 : ElementType::Int8;
        std::vector<int64_t> x(count(sa)), y(count(sb)), got;
        std::mt19937 rng(wide ? 7 : 8);
        const int hi = wide ? 32767 : 127;
        for (auto& v : x) v = static_cast<int64_t>(rng() % (2 * hi + 1)) - hi;
        for (auto& v : y) v = static_cast<int64_t>(rng() % (2 * hi + 1)) - hi;
        std::vector<std::vector<uint8_t>> in;
        if (wide) {
            in = {bytes_of(std::vector<int16_t>(x.begin(), x.end())), bytes_of(std::vector<int16_t>(y.begin(), y.end()))};
            const auto o = values_of<int16_t>(binary("MUL", type, sa, sb, so, qa, qb, qo).run(in)[0]);
            got.assign(o.begin(), o.end());
        } else {
            in = {bytes_of(std::vector<int8_t>(x.begin(), x.end())), bytes_of(std::vector<int8_t>(y.begin(), y.end()))};
            const auto o = values_of<int8_t>(binary("MUL", type, sa, sb, so, qa, qb, qo).run(in)[0]);
            got.assign(o.begin(), o.end());
        }
        const tflite_math::Multiplier m = tflite_math::quantize_multiplier(double{qa.scale} * double{qb.scale} / double{qo.scale});
        for_each_4d(so, [&](size_t i, const std::vector<int64_t>& at) {
            const int64_t p = (x[broadcast_index(sa, at)] - qa.zero_point) * (y[broadcast_index(sb, at)] - qb.zero_point);
            EXPECT_EQ(got[i], std::clamp<int64_t>(tflite_math::multiply(p, m) + qo.zero_point, -hi - 1, hi)) << i;
        });
    }
}

TEST(ElementwiseKernels, SquaredDifferenceInt8) {
    const std::vector<int64_t> sa = {1, 3, 4, 2}, sb = {1, 1, 4, 2};
    const Quant qa{0.1f, 3}, qb{0.08f, -5}, qo{0.5f, -128};
    const auto x = random_values<int8_t>(count(sa), 9), y = random_values<int8_t>(count(sb), 10);
    const auto got = values_of<int8_t>(binary("SQUARED_DIFFERENCE", ElementType::Int8, sa, sb, sa, qa, qb, qo)
                                           .run({bytes_of(x), bytes_of(y)})[0]);
    const double twice = 2.0 * std::max(qa.scale, qb.scale);
    const tflite_math::Multiplier m1 = tflite_math::quantize_multiplier(qa.scale / twice), m2 = tflite_math::quantize_multiplier(qb.scale / twice),
                     mo = tflite_math::quantize_multiplier(twice * twice / (static_cast<float>(1 << 14) * qo.scale));
    for_each_4d(sa, [&](size_t i, const std::vector<int64_t>& at) {
        const int64_t d = tflite_math::multiply((x[broadcast_index(sa, at)] - qa.zero_point) * 128, m1) -
                          tflite_math::multiply((y[broadcast_index(sb, at)] - qb.zero_point) * 128, m2);
        EXPECT_EQ(got[i], std::clamp<int64_t>(tflite_math::multiply(d * d, mo) + qo.zero_point, -128, 127)) << i;
        const double real = (x[broadcast_index(sa, at)] - qa.zero_point) * double{qa.scale} -
                            (y[broadcast_index(sb, at)] - qb.zero_point) * double{qb.scale};
        EXPECT_NEAR(got[i], std::clamp(real * real / qo.scale + qo.zero_point, -128.0, 127.0), 1.0) << i;
    });
}

TEST(ElementwiseKernels, MinimumMaximumBroadcastIn5D) {
    const std::vector<int64_t> sa = {2, 1, 3, 1, 2}, sb = {1, 2, 1, 2, 1}, so = {2, 2, 3, 2, 2};
    const auto x = random_values<int8_t>(count(sa), 11), y = random_values<int8_t>(count(sb), 12);
    const Quant q{0.1f, 0};
    const auto mn = values_of<int8_t>(binary("MINIMUM", ElementType::Int8, sa, sb, so, q, q, q).run({bytes_of(x), bytes_of(y)})[0]);
    const auto mx = values_of<int8_t>(binary("MAXIMUM", ElementType::Int8, sa, sb, so, q, q, q).run({bytes_of(x), bytes_of(y)})[0]);
    size_t i = 0;
    for (int64_t a = 0; a < 2; ++a)
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t c = 0; c < 3; ++c)
                for (int64_t d = 0; d < 2; ++d)
                    for (int64_t e = 0; e < 2; ++e, ++i) {
                        const int8_t u = x[broadcast_index(sa, {a, b, c, d, e})], w = y[broadcast_index(sb, {a, b, c, d, e})];
                        EXPECT_EQ(mn[i], std::min(u, w));
                        EXPECT_EQ(mx[i], std::max(u, w));
                    }
}

TEST(ElementwiseKernels, FloatAndInt32WithActivations) {
    const std::vector<int64_t> s = {1, 1, 2, 3};
    const std::vector<float> x = {-2.5f, 0.25f, 3.0f, 7.5f, -0.0f, 1e30f}, y = {1.0f, 0.5f, 4.0f, -1.0f, 2.0f, 1e30f};
    const Quant none{0, 0};
    const auto add = values_of<float>(binary("ADD", ElementType::Float32, s, s, s, none, none, none, 3).run({bytes_of(x), bytes_of(y)})[0]);
    const auto mul = values_of<float>(binary("MUL", ElementType::Float32, s, s, s, none, none, none, 2).run({bytes_of(x), bytes_of(y)})[0]);
    const auto sqd = values_of<float>(binary("SQUARED_DIFFERENCE", ElementType::Float32, s, s, s, none, none, none).run({bytes_of(x), bytes_of(y)})[0]);
    for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(add[i], std::clamp(x[i] + y[i], 0.0f, 6.0f));
        EXPECT_EQ(mul[i], std::clamp(x[i] * y[i], -1.0f, 1.0f));
        EXPECT_EQ(sqd[i], (x[i] - y[i]) * (x[i] - y[i]));
    }
    const std::vector<int32_t> a = {INT32_MAX, -7, 5, 100000, -3, 2}, b = {1, 3, 5, 100000, -4, -9};
    const auto add32 = values_of<int32_t>(binary("ADD", ElementType::Int32, s, s, s, none, none, none).run({bytes_of(a), bytes_of(b)})[0]);
    const auto mul32 = values_of<int32_t>(binary("MUL", ElementType::Int32, s, s, s, none, none, none, 1).run({bytes_of(a), bytes_of(b)})[0]);
    const auto sub32 = values_of<int32_t>(binary("SUB", ElementType::Int32, s, s, s, none, none, none, 3).run({bytes_of(a), bytes_of(b)})[0]);
    for (size_t i = 0; i < a.size(); ++i) {
        // int32 wraps as TFLite's does on x86.
        EXPECT_EQ(add32[i], static_cast<int32_t>(static_cast<uint32_t>(a[i]) + static_cast<uint32_t>(b[i])));
        const auto product = static_cast<int32_t>(static_cast<uint32_t>(a[i]) * static_cast<uint32_t>(b[i]));
        EXPECT_EQ(mul32[i], std::max(product, 0));
        EXPECT_EQ(sub32[i], std::clamp(static_cast<int32_t>(static_cast<uint32_t>(a[i]) - static_cast<uint32_t>(b[i])), 0, 6));
    }
}

TEST(ElementwiseKernels, RefusesWhatTflmRefuses) {
    const Quant q{0.1f, 0}, off{0.1f, 3};
    const std::vector<int64_t> s = {1, 2, 2, 3};
    EXPECT_THAT(refusal(binary("ADD", ElementType::Int8, s, {1, 2, 1, 2}, s, q, q, q)), HasSubstr("do not broadcast"));
    EXPECT_THAT(refusal(binary("ADD", ElementType::Int8, {2, 1, 2, 2, 3}, {1, 2, 2, 2, 3}, {2, 2, 2, 2, 3}, q, q, q)),
                HasSubstr("up to 4-D"));
    EXPECT_THAT(refusal(binary("MUL", ElementType::Int16, s, s, s, q, off, q)), HasSubstr("zero points of 0"));
    EXPECT_THAT(refusal(binary("ADD", ElementType::UInt8, s, s, s, q, q, q)), HasSubstr("implemented"));
    EXPECT_THAT(refusal(binary("SUB", ElementType::Int8, s, s, s, q, q, q, 9)), HasSubstr("fused activation 9"));
    // ADD's output multiplier must stay below one: an output scale 2^20 times smaller is refused.
    EXPECT_THAT(refusal(binary("ADD", ElementType::Int8, s, s, s, q, q, {1e-8f, 0})), HasSubstr("outside (0, 1)"));
    // RELU6's bound of 6 on a scale of 1e-12 is beyond int32, which TFLite's Quantize refuses.
    EXPECT_THAT(refusal(binary("MUL", ElementType::Int8, s, s, s, q, q, {1e-12f, 0}, 3)), HasSubstr("beyond int32"));
    HostGraph mixed = binary("MAXIMUM", ElementType::Int8, s, s, s, q, q, q);
    mixed.tensors[1].type = ElementType::Int16;
    EXPECT_THAT(refusal(mixed), HasSubstr("takes int8 and int16"));
    EXPECT_EQ(refusal(binary("ADD", ElementType::Int8, {2, 1, 2, 2, 3}, {2, 1, 2, 2, 3}, {2, 1, 2, 2, 3}, q, q, q)), "accepted");
}

}  // namespace
}  // namespace ethosu::test
