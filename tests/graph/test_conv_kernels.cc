// The convolution family's and the pools' reference arithmetic (reference_conv.h) against plain
// loops written from TFLite's definitions: each output point as the sum over its window of
// (input - zero point) x weight, the int32 sum wrapped, the bias, TFLite's double-rounding
// MultiplyByQuantizedMultiplier per channel (tflite_math.h) or the int64 one with its 16-bit
// multiplier, the output zero point and the activation clamp. Transpose convolution is checked
// gathering what the kernel scatters; padding comes from the SAME/VALID formulas written here.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "frontend/graph/reference_conv.h"
#include "tests/engine/tflite_math.h"

namespace ethosu {
namespace {

using reference::WindowGeometry;

std::mt19937 rng(11);

template <class T>
std::vector<T> random_values(size_t n, int64_t lo, int64_t hi) {
    std::uniform_int_distribution<int64_t> d(lo, hi);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(d(rng));
    return v;
}

std::vector<float> random_floats(size_t n) {
    std::uniform_real_distribution<float> d(-2.0f, 2.0f);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

// SAME: ceil(in / stride), the total padding (out - 1) * stride + extent - in split with the odd
// element after; VALID: no padding.
void set_window(WindowGeometry& g, bool same) {
    const auto axis = [&](int in, int filter, int stride, int dilation, int& out, int& pad) {
        const int extent = (filter - 1) * dilation + 1;
        out = same ? (in + stride - 1) / stride : (in - extent) / stride + 1;
        pad = same ? std::max((out - 1) * stride + extent - in, 0) / 2 : 0;
        EXPECT_EQ(reference::window_output_size(same, in, filter, stride, dilation), out);
        EXPECT_EQ(reference::window_padding(stride, dilation, in, filter, out), pad);
    };
    axis(g.in_h, g.filter_h, g.stride_h, g.dilation_h, g.out_h, g.pad_h);
    axis(g.in_w, g.filter_w, g.stride_w, g.dilation_w, g.out_w, g.pad_w);
}

int32_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

// TFLite's int64 MultiplyByQuantizedMultiplier: the multiplier rounded to 16 bits, then
// round-half-up division by 2^(15 - shift) (sums here stay below 2^47, so nothing overflows).
int32_t multiply_wide(int64_t x, tflite_math::Multiplier m) {
    const int64_t reduced = m.multiplier < 0x7FFF0000 ? (m.multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int shift = 15 - m.shift;
    return static_cast<int32_t>((x * reduced + (int64_t{1} << (shift - 1))) >> shift);
}

struct Quantization {
    std::vector<tflite_math::Multiplier> multipliers;
    int32_t input_zero_point = 0, output_zero_point = 0, lo = -128, hi = 127;
    bool wide = false;
};

// Random per-channel scales around 2^-8 .. 2^-14 (right shifts, as real models have).
Quantization random_quantization(int channels, bool wide, int32_t in_zp, int32_t out_zp, int32_t lo, int32_t hi) {
    std::uniform_real_distribution<double> exponent(-14.0, -8.0);
    Quantization q{{}, in_zp, out_zp, lo, hi, wide};
    for (int c = 0; c < channels; ++c) q.multipliers.push_back(tflite_math::quantize_multiplier(std::pow(2.0, exponent(rng))));
    return q;
}

reference::IntegerOutputStage stage_of(const Quantization& q) {
    reference::IntegerOutputStage s{.wide = q.wide, .output_offset = q.output_zero_point, .clamp = {q.lo, q.hi}};
    for (const auto& m : q.multipliers) s.multipliers.push_back({m.multiplier, m.shift});
    return s;
}

// The plain output stage: int32 wrap and bias then TFLite's int32 rescale, or int64 sum and bias
// then the int64 rescale; offset and clamp.
int32_t plain_output(int64_t sum, int64_t bias, int channel, const Quantization& q) {
    const auto& m = q.multipliers[static_cast<size_t>(channel)];
    const int32_t scaled = q.wide ? multiply_wide(sum + bias, m) : tflite_math::multiply(wrap32(wrap32(sum) + bias), m.multiplier, m.shift);
    return std::clamp(scaled + q.output_zero_point, q.lo, q.hi);
}

// Runs kernel(input, input offset, output) on `in` as int16 values (wide) or as int8 ones, the
// outputs widened for comparison.
template <class Kernel>
std::vector<int32_t> run_int8_or_int16(bool wide, const std::vector<int16_t>& in, int32_t input_zero_point, size_t outputs,
                                       Kernel&& kernel) {
    if (wide) {
        std::vector<int16_t> out(outputs);
        kernel(std::span<const int16_t>(in), 0, std::span<int16_t>(out));
        return {out.begin(), out.end()};
    }
    const std::vector<int8_t> in8(in.begin(), in.end());
    std::vector<int8_t> out(outputs);
    kernel(std::span<const int8_t>(in8), -input_zero_point, std::span<int8_t>(out));
    return {out.begin(), out.end()};
}

template <class In, class Out>
std::vector<Out> plain_conv(const WindowGeometry& g, const std::vector<In>& in, const std::vector<int8_t>& w,
                            const std::vector<int64_t>& bias, const Quantization& q) {
    std::vector<Out> out(size_t(g.batches) * g.out_h * g.out_w * g.out_c);
    const int groups = g.in_c / g.filter_c, per_group = g.out_c / groups;
    for (int b = 0; b < g.batches; ++b)
        for (int oy = 0; oy < g.out_h; ++oy)
            for (int ox = 0; ox < g.out_w; ++ox)
                for (int o = 0; o < g.out_c; ++o) {
                    int64_t sum = 0;
                    for (int ky = 0; ky < g.filter_h; ++ky)
                        for (int kx = 0; kx < g.filter_w; ++kx)
                            for (int c = 0; c < g.filter_c; ++c) {
                                const int y = oy * g.stride_h + ky * g.dilation_h - g.pad_h;
                                const int x = ox * g.stride_w + kx * g.dilation_w - g.pad_w;
                                if (y < 0 || x < 0 || y >= g.in_h || x >= g.in_w) continue;  // zero padding
                                const int ic = (o / per_group) * g.filter_c + c;
                                sum += int64_t{w[((size_t(o) * g.filter_h + ky) * g.filter_w + kx) * g.filter_c + c]} *
                                       (in[((size_t(b) * g.in_h + y) * g.in_w + x) * g.in_c + ic] - q.input_zero_point);
                            }
                    out[((size_t(b) * g.out_h + oy) * g.out_w + ox) * g.out_c + o] =
                        static_cast<Out>(plain_output(sum, bias.empty() ? 0 : bias[size_t(o)], o, q));
                }
    return out;
}

TEST(ConvKernels, Conv2dInt8PerChannelStridedDilatedGroupedBatched) {
    for (const bool same : {true, false})
        for (const int stride : {1, 2})
            for (const int dilation : {1, 2})
                for (const int groups : {1, 2}) {
                    WindowGeometry g{.batches = 2, .in_h = 7, .in_w = 6, .in_c = 4, .filter_h = 3, .filter_w = 2,
                                     .filter_c = 4 / groups, .out_c = 6, .stride_h = stride, .stride_w = stride,
                                     .dilation_h = dilation, .dilation_w = 1};
                    set_window(g, same);
                    const auto in = random_values<int8_t>(size_t(g.batches) * g.in_h * g.in_w * g.in_c, -128, 127);
                    const auto w = random_values<int8_t>(size_t(g.out_c) * g.filter_h * g.filter_w * g.filter_c, -127, 127);
                    const auto bias = random_values<int64_t>(size_t(g.out_c), -3000, 3000);
                    // RELU6-like clamp inside the type, input zero point -5, output 3.
                    const Quantization q = random_quantization(g.out_c, false, -5, 3, -3, 100);
                    std::vector<int8_t> got(plain_conv<int8_t, int8_t>(g, in, w, bias, q).size());
                    reference::conv_2d(g, std::span<const int8_t>(in), -q.input_zero_point, std::span<const int8_t>(w),
                                       std::span<const int64_t>(bias), stage_of(q), std::span<int8_t>(got));
                    EXPECT_EQ(got, (plain_conv<int8_t, int8_t>(g, in, w, bias, q)))
                        << "same " << same << " stride " << stride << " dilation " << dilation << " groups " << groups;
                }
}

TEST(ConvKernels, Conv2dInt16WideAndNarrowSums) {
    WindowGeometry g{.batches = 1, .in_h = 5, .in_w = 5, .in_c = 8, .filter_h = 3, .filter_w = 3, .filter_c = 8, .out_c = 5};
    set_window(g, true);
    const auto in = random_values<int16_t>(size_t(g.in_h) * g.in_w * g.in_c, -32768, 32767);
    const auto w = random_values<int8_t>(size_t(g.out_c) * 9 * 8, -127, 127);
    for (const bool wide : {true, false}) {
        // An int64 bias beyond int32 on the wide path; an int32 one on the narrow path.
        const auto bias = wide ? random_values<int64_t>(size_t(g.out_c), -(int64_t{1} << 36), int64_t{1} << 36)
                               : random_values<int64_t>(size_t(g.out_c), INT32_MIN, INT32_MAX);
        const Quantization q = random_quantization(g.out_c, wide, 0, 0, -32768, 32767);
        const auto expected = plain_conv<int16_t, int16_t>(g, in, w, bias, q);
        std::vector<int16_t> got(expected.size());
        reference::conv_2d(g, std::span<const int16_t>(in), 0, std::span<const int8_t>(w), std::span<const int64_t>(bias),
                           stage_of(q), std::span<int16_t>(got));
        EXPECT_EQ(got, expected) << "wide " << wide;
        // Saturation: both ends of int16 are reached.
        EXPECT_NE(std::ranges::find(expected, int16_t{32767}), expected.end());
    }
}

TEST(ConvKernels, Conv2dFloatSumsInTflmOrderAndClamps) {
    WindowGeometry g{.batches = 2, .in_h = 6, .in_w = 5, .in_c = 3, .filter_h = 3, .filter_w = 3, .filter_c = 3, .out_c = 4,
                     .stride_h = 2, .stride_w = 1};
    set_window(g, true);
    const auto in = random_floats(size_t(g.batches) * g.in_h * g.in_w * g.in_c);
    const auto w = random_floats(size_t(g.out_c) * 9 * 3);
    const auto bias = random_floats(size_t(g.out_c));
    const auto range = reference::float_activation_range(reference::kActRelu6);
    std::vector<float> got(size_t(g.batches) * g.out_h * g.out_w * g.out_c);
    reference::conv_2d(g, std::span<const float>(in), 0, std::span<const float>(w), std::span<const float>(bias), range,
                       std::span<float>(got));
    size_t i = 0;
    for (int b = 0; b < g.batches; ++b)
        for (int oy = 0; oy < g.out_h; ++oy)
            for (int ox = 0; ox < g.out_w; ++ox)
                for (int o = 0; o < g.out_c; ++o, ++i) {
                    float total = 0.0f;  // filter row, column, channel: TFLite's order
                    for (int ky = 0; ky < 3; ++ky)
                        for (int kx = 0; kx < 3; ++kx)
                            for (int c = 0; c < 3; ++c) {
                                const int y = oy * 2 + ky - g.pad_h, x = ox + kx - g.pad_w;
                                if (y < 0 || x < 0 || y >= g.in_h || x >= g.in_w) continue;
                                total += in[((size_t(b) * g.in_h + y) * g.in_w + x) * 3 + c] * w[((size_t(o) * 3 + ky) * 3 + kx) * 3 + c];
                            }
                    ASSERT_EQ(got[i], std::min(std::max(total + bias[size_t(o)], 0.0f), 6.0f)) << i;
                }
}

TEST(ConvKernels, DepthwiseWithMultiplierInt8AndInt16) {
    for (const bool wide : {false, true}) {
        WindowGeometry g{.batches = 2, .in_h = 6, .in_w = 7, .in_c = 3, .filter_h = 3, .filter_w = 3, .out_c = 6,
                         .stride_h = 2, .stride_w = 2, .dilation_h = 1, .dilation_w = 2, .depth_multiplier = 2};
        set_window(g, true);
        const auto in = wide ? random_values<int16_t>(size_t(g.batches) * g.in_h * g.in_w * g.in_c, -32768, 32767)
                             : random_values<int16_t>(size_t(g.batches) * g.in_h * g.in_w * g.in_c, -128, 127);
        const auto w = random_values<int8_t>(size_t(9) * g.out_c, -127, 127);
        const auto bias = random_values<int64_t>(size_t(g.out_c), -100000, 100000);
        const Quantization q = wide ? random_quantization(g.out_c, true, 0, 0, -32768, 32767)
                                    : random_quantization(g.out_c, false, 7, -2, -128, 127);
        std::vector<int32_t> expected;
        for (int b = 0; b < g.batches; ++b)
            for (int oy = 0; oy < g.out_h; ++oy)
                for (int ox = 0; ox < g.out_w; ++ox)
                    for (int o = 0; o < g.out_c; ++o) {
                        int64_t sum = 0;
                        for (int ky = 0; ky < 3; ++ky)
                            for (int kx = 0; kx < 3; ++kx) {
                                const int y = oy * 2 + ky - g.pad_h, x = ox * 2 + kx * 2 - g.pad_w;
                                if (y < 0 || x < 0 || y >= g.in_h || x >= g.in_w) continue;
                                sum += int64_t{w[(size_t(ky) * 3 + kx) * g.out_c + o]} *
                                       (in[((size_t(b) * g.in_h + y) * g.in_w + x) * g.in_c + o / 2] - q.input_zero_point);
                            }
                        expected.push_back(plain_output(sum, bias[size_t(o)], o, q));
                    }
        const auto got = run_int8_or_int16(wide, in, q.input_zero_point, expected.size(), [&](auto input, int32_t offset, auto out) {
            reference::depthwise_conv_2d(g, input, offset, std::span<const int8_t>(w), std::span<const int64_t>(bias), stage_of(q), out);
        });
        EXPECT_EQ(got, expected) << "wide " << wide;
    }
}

// Transpose convolution gathered: output (y, x) takes input (iy, ix) through filter (ky, kx)
// where y = iy * stride - pad + ky; the padding is that of a convolution from the output.
TEST(ConvKernels, TransposeConvGatheredEqualsScattered) {
    for (const bool same : {true, false})
        for (const bool with_bias : {true, false})
            for (const bool wide : {false, true}) {
                const int stride = 2, filter = 3, out_h = 9, out_w = 8;
                WindowGeometry g{.batches = 2, .filter_h = filter, .filter_w = filter, .out_h = out_h, .out_w = out_w,
                                 .out_c = 3, .stride_h = stride, .stride_w = stride};
                // The input is the output of the matching convolution.
                WindowGeometry conv{.in_h = out_h, .in_w = out_w, .filter_h = filter, .filter_w = filter,
                                    .stride_h = stride, .stride_w = stride};
                set_window(conv, same);
                g.in_h = conv.out_h, g.in_w = conv.out_w, g.in_c = 4, g.filter_c = 4, g.pad_h = conv.pad_h, g.pad_w = conv.pad_w;
                const size_t in_size = size_t(g.batches) * g.in_h * g.in_w * g.in_c;
                const auto in = wide ? random_values<int16_t>(in_size, -32768, 32767) : random_values<int16_t>(in_size, -128, 127);
                const auto w = random_values<int8_t>(size_t(g.out_c) * filter * filter * g.in_c, -127, 127);
                const auto bias = with_bias ? random_values<int64_t>(size_t(g.out_c), -5000, 5000) : std::vector<int64_t>{};
                const Quantization q = wide ? random_quantization(g.out_c, true, 0, 0, -32768, 32767)
                                            : random_quantization(g.out_c, false, -1, 4, -128, 127);
                std::vector<int32_t> expected;
                for (int b = 0; b < g.batches; ++b)
                    for (int y = 0; y < out_h; ++y)
                        for (int x = 0; x < out_w; ++x)
                            for (int o = 0; o < g.out_c; ++o) {
                                int64_t sum = 0;
                                for (int iy = 0; iy < g.in_h; ++iy)
                                    for (int ix = 0; ix < g.in_w; ++ix) {
                                        const int ky = y - (iy * stride - g.pad_h), kx = x - (ix * stride - g.pad_w);
                                        if (ky < 0 || kx < 0 || ky >= filter || kx >= filter) continue;
                                        for (int c = 0; c < g.in_c; ++c)
                                            sum += int64_t{w[((size_t(o) * filter + ky) * filter + kx) * g.in_c + c]} *
                                                   (in[((size_t(b) * g.in_h + iy) * g.in_w + ix) * g.in_c + c] - q.input_zero_point);
                                    }
                                expected.push_back(plain_output(sum, with_bias ? bias[size_t(o)] : 0, o, q));
                            }
                const auto got = run_int8_or_int16(wide, in, q.input_zero_point, expected.size(), [&](auto input, int32_t offset, auto out) {
                    reference::transpose_conv(g, input, offset, std::span<const int8_t>(w), std::span<const int64_t>(bias), stage_of(q), out);
                });
                EXPECT_EQ(got, expected) << "same " << same << " bias " << with_bias << " wide " << wide;
            }
}

TEST(ConvKernels, FullyConnectedPerTensorPerChannelAndWide) {
    const int batches = 3, depth = 37, outputs = 5;
    for (const bool wide : {false, true})
        for (const bool per_channel : {false, true}) {
            const auto in = wide ? random_values<int16_t>(size_t(batches) * depth, -32768, 32767)
                                 : random_values<int16_t>(size_t(batches) * depth, -128, 127);
            const auto w = random_values<int8_t>(size_t(outputs) * depth, -127, 127);
            const auto bias = random_values<int64_t>(size_t(outputs), -20000, 20000);
            Quantization q = wide ? random_quantization(outputs, true, 0, 0, -32768, 32767)
                                  : random_quantization(outputs, false, 12, -7, -128, 127);
            if (!per_channel) q.multipliers.assign(size_t(outputs), q.multipliers[0]);
            auto stage = stage_of(q);
            if (!per_channel) stage.multipliers.resize(1);
            // The per-tensor int8 form adds minus the filter's zero point to each weight.
            const int32_t weights_offset = !wide && !per_channel ? 13 : 0;
            std::vector<int32_t> expected;
            for (int b = 0; b < batches; ++b)
                for (int o = 0; o < outputs; ++o) {
                    int64_t sum = 0;
                    for (int d = 0; d < depth; ++d)
                        sum += (w[size_t(o) * depth + d] + weights_offset) * (in[size_t(b) * depth + d] - q.input_zero_point);
                    expected.push_back(plain_output(sum, bias[size_t(o)], o, q));
                }
            const auto got = run_int8_or_int16(wide, in, q.input_zero_point, expected.size(), [&](auto input, int32_t offset, auto out) {
                reference::fully_connected(batches, depth, outputs, input, offset, std::span<const int8_t>(w), weights_offset,
                                           std::span<const int64_t>(bias), stage, out);
            });
            EXPECT_EQ(got, expected) << "wide " << wide << " per channel " << per_channel;
        }
}

TEST(ConvKernels, FloatFullyConnectedDepthwiseAndTransposeConv) {
    // FULLY_CONNECTED: each row's sum in depth order, then the bias, then RELU_N1_TO_1.
    const int batches = 2, depth = 9, outputs = 3;
    const auto in = random_floats(size_t(batches) * depth), w = random_floats(size_t(outputs) * depth), bias = random_floats(3);
    std::vector<float> got(size_t(batches) * outputs);
    const auto range = reference::float_activation_range(reference::kActReluN1To1);
    reference::fully_connected(batches, depth, outputs, std::span<const float>(in), 0, std::span<const float>(w), 0,
                               std::span<const float>(bias), range, std::span<float>(got));
    for (int b = 0; b < batches; ++b)
        for (int o = 0; o < outputs; ++o) {
            float total = 0.0f;
            for (int d = 0; d < depth; ++d) total += in[size_t(b) * depth + d] * w[size_t(o) * depth + d];
            EXPECT_EQ(got[size_t(b) * outputs + o], std::min(std::max(total + bias[size_t(o)], -1.0f), 1.0f));
        }
    // Small integers in float sum exactly whatever the order: the depthwise and transpose
    // convolutions' float paths index as their integer ones (checked above against plain loops).
    WindowGeometry g{.batches = 1, .in_h = 4, .in_w = 4, .in_c = 2, .filter_h = 3, .filter_w = 3, .out_c = 2};
    set_window(g, true);
    const auto small = [](size_t n) {
        const auto v = random_values<int16_t>(n, -2, 2);  // sums stay inside int8
        return std::pair{std::vector<float>(v.begin(), v.end()), std::vector<int8_t>(v.begin(), v.end())};
    };
    const auto [in_f, in_i] = small(32);
    const auto [w_f, w_i] = small(18);
    std::vector<float> depthwise_f(32);
    std::vector<int8_t> depthwise_i(32);
    const auto none = reference::float_activation_range(reference::kActNone);
    const Quantization identity{{{1 << 30, 1}}, 0, 0, -128, 127, false};  // a multiplier of exactly 1
    reference::depthwise_conv_2d(g, std::span<const float>(in_f), 0, std::span<const float>(w_f), std::span<const float>{}, none,
                                 std::span<float>(depthwise_f));
    reference::depthwise_conv_2d(g, std::span<const int8_t>(in_i), 0, std::span<const int8_t>(w_i), std::span<const int64_t>{},
                                 stage_of(identity), std::span<int8_t>(depthwise_i));
    for (size_t i = 0; i < 32; ++i) EXPECT_EQ(depthwise_f[i], static_cast<float>(depthwise_i[i])) << i;
    WindowGeometry t{.batches = 1, .in_h = 2, .in_w = 2, .in_c = 2, .filter_h = 3, .filter_w = 3, .filter_c = 2, .out_h = 4,
                     .out_w = 4, .out_c = 1, .stride_h = 2, .stride_w = 2, .pad_h = 0, .pad_w = 0};
    std::vector<float> transpose_f(16);
    std::vector<int8_t> transpose_i(16);
    const std::vector<float> in_t(in_f.begin(), in_f.begin() + 8);
    const std::vector<int8_t> in_ti(in_i.begin(), in_i.begin() + 8);
    reference::transpose_conv(t, std::span<const float>(in_t), 0, std::span<const float>(w_f), std::span<const float>{}, none,
                              std::span<float>(transpose_f));
    reference::transpose_conv(t, std::span<const int8_t>(in_ti), 0, std::span<const int8_t>(w_i), std::span<const int64_t>{},
                              stage_of(identity), std::span<int8_t>(transpose_i));
    for (size_t i = 0; i < 16; ++i) EXPECT_EQ(transpose_f[i], static_cast<float>(transpose_i[i])) << i;
}

TEST(ConvKernels, WideRescaleAsTflite) {
    std::uniform_int_distribution<int64_t> value(-(int64_t{1} << 40), int64_t{1} << 40);
    std::uniform_real_distribution<double> exponent(-20.0, 0.0);
    for (int i = 0; i < 20000; ++i) {
        const auto m = tflite_math::quantize_multiplier(std::pow(2.0, exponent(rng)));
        const int64_t x = value(rng);
        ASSERT_EQ(reference::multiply_by_quantized_multiplier_wide(x, {m.multiplier, m.shift}), multiply_wide(x, m)) << x;
    }
    // A multiplier at 0x7FFF0000 or above keeps 0x7FFF instead of rounding up to 2^15.
    EXPECT_EQ(reference::multiply_by_quantized_multiplier_wide(1 << 20, {0x7FFFFFFF, 0}), 0x7FFF * 32);
    // Half rounds up (towards +infinity): -1.5 -> -1, 1.5 -> 2 at multiplier 1/2.
    EXPECT_EQ(reference::multiply_by_quantized_multiplier_wide(-3, {1 << 30, 0}), -1);
    EXPECT_EQ(reference::multiply_by_quantized_multiplier_wide(3, {1 << 30, 0}), 2);
}

TEST(ConvKernels, UnpackInt4LowNibbleFirst) {
    const std::vector<uint8_t> packed = {0x7F, 0x89, 0x0F};
    EXPECT_EQ(reference::unpack_int4(packed, 5), (std::vector<int8_t>{-1, 7, -7, -8, -1}));
}

TEST(ConvKernels, QuantizedActivationRanges) {
    using reference::QuantizedRange;
    const QuantizedRange int8{-128, 127};
    const auto range = [&](int8_t act, float scale, int32_t zp) { return *reference::quantized_activation_range(act, scale, zp, int8); };
    // zero point -3, scale 0.05: 0 -> -3, 6 -> 117, -1 -> -23, 1 -> 17.
    EXPECT_EQ(range(reference::kActRelu, 0.05f, -3).min, -3);
    EXPECT_EQ(range(reference::kActRelu, 0.05f, -3).max, 127);
    EXPECT_EQ(range(reference::kActRelu6, 0.05f, -3).max, 117);
    EXPECT_EQ(range(reference::kActReluN1To1, 0.05f, -3).min, -23);
    EXPECT_EQ(range(reference::kActReluN1To1, 0.05f, -3).max, 17);
    // 6 / 0.0235 = 255.3: clamped to the type.
    EXPECT_EQ(range(reference::kActRelu6, 0.0235f, -128).max, 127);
    EXPECT_EQ(range(reference::kActNone, 0.05f, 9).min, -128);
    // A scale so small that 6 / scale leaves int32: TFLite refuses the operator.
    EXPECT_FALSE(reference::quantized_activation_range(reference::kActRelu6, 1e-12f, 0, int8).has_value());
    const auto relu = reference::float_activation_range(reference::kActRelu);
    EXPECT_EQ(relu.min, 0.0f);
    EXPECT_EQ(relu.max, std::numeric_limits<float>::max());
}

template <class T>
void expect_pools_match(const std::vector<T>& in, const WindowGeometry& g, int32_t lo, int32_t hi) {
    std::vector<T> average(size_t(g.batches) * g.out_h * g.out_w * g.out_c), largest(average.size());
    ASSERT_TRUE(reference::average_pool(g, std::span<const T>(in), reference::QuantizedRange{lo, hi}, std::span<T>(average)));
    reference::max_pool(g, std::span<const T>(in), reference::QuantizedRange{lo, hi}, std::span<T>(largest));
    size_t i = 0;
    for (int b = 0; b < g.batches; ++b)
        for (int oy = 0; oy < g.out_h; ++oy)
            for (int ox = 0; ox < g.out_w; ++ox)
                for (int c = 0; c < g.out_c; ++c, ++i) {
                    int32_t sum = 0, count = 0, top = std::numeric_limits<T>::min();
                    for (int ky = 0; ky < g.filter_h; ++ky)
                        for (int kx = 0; kx < g.filter_w; ++kx) {
                            const int y = oy * g.stride_h + ky - g.pad_h, x = ox * g.stride_w + kx - g.pad_w;
                            if (y < 0 || x < 0 || y >= g.in_h || x >= g.in_w) continue;  // padding is not counted
                            const T v = in[((size_t(b) * g.in_h + y) * g.in_w + x) * g.in_c + c];
                            sum += v, ++count, top = std::max<int32_t>(top, v);
                        }
                    // The mean rounded half away from zero.
                    const auto mean = static_cast<int32_t>(std::lround(static_cast<double>(sum) / count));
                    ASSERT_EQ(average[i], std::clamp(mean, lo, hi)) << i;
                    ASSERT_EQ(largest[i], std::clamp(top, lo, hi)) << i;
                }
}

TEST(ConvKernels, PoolsCountOnlyPointsInsideAndRoundAwayFromZero) {
    for (const bool same : {true, false}) {
        WindowGeometry g{.batches = 2, .in_h = 7, .in_w = 8, .in_c = 3, .filter_h = 3, .filter_w = 2, .out_c = 3,
                         .stride_h = 2, .stride_w = 3};
        set_window(g, same);
        const size_t n = size_t(g.batches) * g.in_h * g.in_w * g.in_c;
        expect_pools_match(random_values<int8_t>(n, -128, 127), g, -128, 127);
        expect_pools_match(random_values<int8_t>(n, -128, 127), g, -20, 90);  // a fused clamp
        expect_pools_match(random_values<int16_t>(n, -32768, 32767), g, -32768, 32767);
    }
    // -5 / 2 = -2.5 -> -3 and 5 / 2 -> 3, as TFLite's (sum -+ count / 2) / count.
    WindowGeometry g{.batches = 1, .in_h = 1, .in_w = 2, .in_c = 1, .filter_h = 1, .filter_w = 2, .out_h = 1, .out_w = 1,
                     .out_c = 1, .stride_h = 1, .stride_w = 1};
    std::vector<int8_t> out(1);
    ASSERT_TRUE(reference::average_pool(g, std::span<const int8_t>(std::vector<int8_t>{-2, -3}), reference::QuantizedRange{-128, 127},
                                        std::span<int8_t>(out)));
    EXPECT_EQ(out[0], -3);
    ASSERT_TRUE(reference::average_pool(g, std::span<const int8_t>(std::vector<int8_t>{2, 3}), reference::QuantizedRange{-128, 127},
                                        std::span<int8_t>(out)));
    EXPECT_EQ(out[0], 3);
}

TEST(ConvKernels, FloatPoolsDivideInFloatAndSkipNaN) {
    WindowGeometry g{.batches = 1, .in_h = 2, .in_w = 2, .in_c = 1, .filter_h = 2, .filter_w = 2, .out_h = 1, .out_w = 1,
                     .out_c = 1, .stride_h = 2, .stride_w = 2};
    const auto none = reference::float_activation_range(reference::kActNone);
    const std::vector<float> in = {0.1f, 0.2f, 0.7f, -0.3f};
    std::vector<float> out(1);
    ASSERT_TRUE(reference::average_pool(g, std::span<const float>(in), none, std::span<float>(out)));
    EXPECT_EQ(out[0], (((0.1f + 0.2f) + 0.7f) + -0.3f) / 4.0f);
    // std::max(largest, NaN) keeps largest: a NaN never wins the max.
    reference::max_pool(g, std::span<const float>(std::vector<float>{NAN, -1.0f, NAN, -2.0f}), none, std::span<float>(out));
    EXPECT_EQ(out[0], -1.0f);
}

// BATCH_MATMUL written as the definition: lhs [2,1,R,D] (or [2,1,D,R] adjoint) times rhs [3,D,C]
// (or [3,C,D]), batch dimensions broadcast to [2,3].
TEST(ConvKernels, BatchMatMulBroadcastsAndTransposes) {
    const int rows = 3, cols = 4, depth = 5;
    for (const bool adj_x : {false, true})
        for (const bool adj_y : {false, true})
            for (const bool wide : {false, true}) {
                reference::MatMulShape s{.lhs_batch = {1, 2, 1}, .rhs_batch = {1, 1, 3}, .out_batch = {1, 2, 3},
                                         .rows = rows, .cols = cols, .depth = depth, .adj_x = adj_x, .adj_y = adj_y};
                const auto lhs = wide ? random_values<int16_t>(2 * rows * depth, -32768, 32767) : random_values<int16_t>(2 * rows * depth, -128, 127);
                const auto rhs = wide ? random_values<int16_t>(3 * depth * cols, -32768, 32767) : random_values<int16_t>(3 * depth * cols, -128, 127);
                Quantization q = wide ? random_quantization(1, true, 0, 0, -32768, 32767) : random_quantization(1, false, 9, -4, -128, 127);
                const int32_t rhs_zero_point = wide ? 0 : -3;
                std::vector<int32_t> expected;
                for (int b1 = 0; b1 < 2; ++b1)
                    for (int b2 = 0; b2 < 3; ++b2)
                        for (int r = 0; r < rows; ++r)
                            for (int c = 0; c < cols; ++c) {
                                int64_t sum = 0;
                                for (int k = 0; k < depth; ++k) {
                                    const int x = lhs[size_t(b1) * rows * depth + (adj_x ? k * rows + r : r * depth + k)];
                                    const int y = rhs[size_t(b2) * depth * cols + (adj_y ? c * depth + k : k * cols + c)];
                                    sum += int64_t{x - q.input_zero_point} * (y - rhs_zero_point);
                                }
                                expected.push_back(plain_output(sum, 0, 0, q));
                            }
                std::vector<int32_t> got;
                if (wide) {
                    std::vector<int16_t> out(expected.size());
                    reference::batch_matmul(s, std::span<const int16_t>(lhs), 0, std::span<const int16_t>(rhs), 0, stage_of(q),
                                            std::span<int16_t>(out));
                    got.assign(out.begin(), out.end());
                } else {
                    const std::vector<int8_t> lhs8(lhs.begin(), lhs.end()), rhs8(rhs.begin(), rhs.end());
                    std::vector<int8_t> out(expected.size());
                    reference::batch_matmul(s, std::span<const int8_t>(lhs8), -q.input_zero_point, std::span<const int8_t>(rhs8),
                                            -rhs_zero_point, stage_of(q), std::span<int8_t>(out));
                    got.assign(out.begin(), out.end());
                }
                EXPECT_EQ(got, expected) << "adj_x " << adj_x << " adj_y " << adj_y << " wide " << wide;
            }
    // Floats: the sum over k in order, stored without a clamp (an infinity stays one).
    reference::MatMulShape s{.rows = 1, .cols = 2, .depth = 3};
    const std::vector<float> lhs = {1e38f, 1e38f, 0.5f}, rhs = {4.0f, 1.0f, 1.0f, 1.0f, 2.0f, 0.25f};
    std::vector<float> out(2);
    reference::batch_matmul(s, std::span<const float>(lhs), 0, std::span<const float>(rhs), 0, reference::FloatRange{},
                            std::span<float>(out));
    EXPECT_EQ(out[0], INFINITY);
    EXPECT_EQ(out[1], (1e38f * 1.0f + 1e38f * 1.0f) + 0.5f * 0.25f);
}

}  // namespace
}  // namespace ethosu
