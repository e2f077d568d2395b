#pragma once
// The convolution family's reference arithmetic, computing exactly as TensorFlow Lite Micro's
// reference kernels do: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED, BATCH_MATMUL
// and the 2-D pools (TFLite's reference_ops / reference_integer_ops conv.h, depthwise_conv.h,
// transpose_conv.h, fully_connected.h, pooling.h, batch_matmul.h). Integer sums are formed in 64
// bits: where TFLM sums in int32 (wrapping), the sum is narrowed to int32 before the bias, which
// agrees mod 2^32.
// Float sums are formed in TFLM's order (this file's loops are its loops).

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "frontend/graph/reference_kernels.h"

namespace ethosu::reference {

// TFLite's ActivationFunctionType; TFLM clamps for the first four only.
enum FusedActivation : int8_t { kActNone = 0, kActRelu = 1, kActReluN1To1 = 2, kActRelu6 = 3, kActTanh = 4, kActSignBit = 5 };

// ComputeOutSize (padding.h): a window's output extent, SAME or VALID; -1 where TFLite's checked
// form refuses (a negative extent).
int64_t window_output_size(bool same_padding, int64_t in, int64_t filter, int64_t stride, int64_t dilation);
// ComputePaddingWithOffset: the padding before the first element (an odd total puts the extra
// element after the last).
int64_t window_padding(int64_t stride, int64_t dilation, int64_t in, int64_t filter, int64_t out);

struct QuantizedRange {
    int32_t min = 0, max = 0;
};
// CalculateActivationRangeQuantized (kernel_util.cc): 0, 6, -1 and 1 quantized with the output's
// float scale (round half away from zero) and zero point, inside the type's range; none where
// a bound's quotient lies outside int32 (TFLite refuses the operator).
std::optional<QuantizedRange> quantized_activation_range(int8_t activation, float scale, int32_t zero_point,
                                                         QuantizedRange type);
struct FloatRange {
    float min = 0, max = 0;
};
// CalculateActivationRange for float.
FloatRange float_activation_range(int8_t activation);

// TFLite's MultiplyByQuantizedMultiplier for an int64 accumulator (the double-rounding build's
// common.cc): the multiplier rounded to 16 bits, one rounding shift, the result narrowed to int32.
int32_t multiply_by_quantized_multiplier_wide(int64_t x, QuantizedMultiplier m);

// TFLite's dense INT4 (UnpackDenseInt4IntoInt8): two values a byte, low nibble first.
std::vector<int8_t> unpack_int4(std::span<const uint8_t> packed, size_t count);

// How an integer operator's sums become outputs. Narrow: TFLM sums in int32 (wrapping), adds an
// int32 bias and rescales with the int32 MultiplyByQuantizedMultiplier; wide: an int64 sum and
// bias, the int64 one. Then the output offset and the activation clamp.
struct IntegerOutputStage {
    std::vector<QuantizedMultiplier> multipliers{};  // one per output channel, or one for all
    bool wide = false;
    int32_t output_offset = 0;
    QuantizedRange clamp;
};

// The output value of one integer sum (products only) for output channel `channel`.
template <class Out>
Out requantize_sum(int64_t sum, std::span<const int64_t> bias, size_t channel, const IntegerOutputStage& s) {
    const QuantizedMultiplier& m = s.multipliers[s.multipliers.size() == 1 ? 0 : channel];
    const int64_t b = bias.empty() ? 0 : bias[channel];
    const auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
    // A hostile int64 bias may overflow the sum, as in TFLM; it wraps here.
    const auto wide_sum = static_cast<int64_t>(static_cast<uint64_t>(sum) + static_cast<uint64_t>(b));
    const int64_t scaled = s.wide ? multiply_by_quantized_multiplier_wide(wide_sum, m)
                                  : multiply_by_quantized_multiplier(wrap(int64_t{wrap(sum)} + b), m);
    return static_cast<Out>(std::clamp<int64_t>(scaled + s.output_offset, s.clamp.min, s.clamp.max));
}

// TFLite's ActivationFunctionWithMinMax: min(max(x, lo), hi), NaN passing through as std's do.
inline float activation_with_min_max(float x, FloatRange r) { return std::min(std::max(x, r.min), r.max); }

// TFLM's float convolutions add a bias of 0 where there is none (sums start at +0, so never -0).
inline float float_output(float sum, std::span<const float> bias, size_t channel, FloatRange r) {
    return activation_with_min_max(sum + (bias.empty() ? 0.0f : bias[channel]), r);
}

// NHWC geometry of a 2-D window operator. Convolution filters are [out_c, h, w, filter_c]
// (filter_c = in_c / groups), depthwise ones [1, h, w, out_c], transpose ones [out_c, h, w, in_c].
struct WindowGeometry {
    int batches = 0, in_h = 0, in_w = 0, in_c = 0;
    int filter_h = 0, filter_w = 0, filter_c = 0;
    int out_h = 0, out_w = 0, out_c = 0;
    int stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1, pad_h = 0, pad_w = 0;
    int depth_multiplier = 1;
    // Positions are int64: a stride times an extent, or a dilated filter, may pass int32.
    size_t in_index(int b, int64_t y, int64_t x, int c) const { return ((size_t(b) * in_h + size_t(y)) * in_w + size_t(x)) * in_c + c; }
    size_t out_index(int b, int64_t y, int64_t x, int c) const {
        return ((size_t(b) * out_h + size_t(y)) * out_w + size_t(x)) * out_c + c;
    }
    size_t filter_index(int o, int y, int x, int c, int depth) const {
        return ((size_t(o) * filter_h + y) * filter_w + x) * depth + c;
    }
};

// A float operator's stage is its activation range and it sums in float; an integer one sums in
// int64.
template <class Stage>
using SumOf = std::conditional_t<std::is_same_v<Stage, FloatRange>, float, int64_t>;

// Integer inputs are offset by input_offset (minus the zero point; 0 on the int16 paths);
// floats are not.
template <class Sum, class In, class W>
Sum product(In input, int32_t input_offset, W filter, int32_t filter_offset = 0) {
    if constexpr (std::is_floating_point_v<Sum>)
        return static_cast<Sum>(input) * static_cast<Sum>(filter);
    else
        return (int64_t{filter} + filter_offset) * (int64_t{input} + input_offset);
}

template <class Out, class Sum, class Bias, class Stage>
Out output_of(Sum sum, std::span<const Bias> bias, size_t channel, const Stage& stage) {
    if constexpr (std::is_floating_point_v<Sum>)
        return float_output(sum, bias, channel, stage);
    else
        return requantize_sum<Out>(sum, bias, channel, stage);
}

// CONV_2D (reference ConvPerChannel / Conv): grouped, strided, dilated; points outside the
// input are skipped. Stage is an IntegerOutputStage (Bias int64_t) or a FloatRange (Bias float).
template <class In, class W, class Bias, class Out, class Stage>
void conv_2d(const WindowGeometry& g, std::span<const In> input, int32_t input_offset, std::span<const W> filter,
             std::span<const Bias> bias, const Stage& stage, std::span<Out> output) {
    using Sum = SumOf<Stage>;
    const int filters_per_group = g.out_c / (g.in_c / g.filter_c);
    for (int b = 0; b < g.batches; ++b)
        for (int oy = 0; oy < g.out_h; ++oy)
            for (int ox = 0; ox < g.out_w; ++ox)
                for (int oc = 0; oc < g.out_c; ++oc) {
                    const int group = oc / filters_per_group;
                    Sum sum = 0;
                    for (int fy = 0; fy < g.filter_h; ++fy) {
                        const int64_t iy = int64_t{oy} * g.stride_h - g.pad_h + int64_t{g.dilation_h} * fy;
                        for (int fx = 0; fx < g.filter_w; ++fx) {
                            const int64_t ix = int64_t{ox} * g.stride_w - g.pad_w + int64_t{g.dilation_w} * fx;
                            if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                            for (int ic = 0; ic < g.filter_c; ++ic)
                                sum += product<Sum>(input[g.in_index(b, iy, ix, ic + group * g.filter_c)], input_offset,
                                                    filter[g.filter_index(oc, fy, fx, ic, g.filter_c)]);
                        }
                    }
                    output[g.out_index(b, oy, ox, oc)] = output_of<Out>(sum, bias, size_t(oc), stage);
                }
}

// DEPTHWISE_CONV_2D (DepthwisePerChannel / DepthwiseConv): output channel c * multiplier + m
// reads input channel c.
template <class In, class W, class Bias, class Out, class Stage>
void depthwise_conv_2d(const WindowGeometry& g, std::span<const In> input, int32_t input_offset,
                       std::span<const W> filter, std::span<const Bias> bias, const Stage& stage, std::span<Out> output) {
    using Sum = SumOf<Stage>;
    for (int b = 0; b < g.batches; ++b)
        for (int oy = 0; oy < g.out_h; ++oy)
            for (int ox = 0; ox < g.out_w; ++ox)
                for (int ic = 0; ic < g.in_c; ++ic)
                    for (int m = 0; m < g.depth_multiplier; ++m) {
                        const int oc = m + ic * g.depth_multiplier;
                        Sum sum = 0;
                        for (int fy = 0; fy < g.filter_h; ++fy)
                            for (int fx = 0; fx < g.filter_w; ++fx) {
                                const int64_t iy = int64_t{oy} * g.stride_h - g.pad_h + int64_t{g.dilation_h} * fy;
                                const int64_t ix = int64_t{ox} * g.stride_w - g.pad_w + int64_t{g.dilation_w} * fx;
                                if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                                sum += product<Sum>(input[g.in_index(b, iy, ix, ic)], input_offset,
                                                    filter[g.filter_index(0, fy, fx, oc, g.out_c)]);
                            }
                        output[g.out_index(b, oy, ox, oc)] = output_of<Out>(sum, bias, size_t(oc), stage);
                    }
}

// TRANSPOSE_CONV (reference TransposeConv): each input element scattered through the filter into
// a zeroed sum per output element (in this order, which fixes a float sum's), then bias, scale
// and clamp. Padding is the one a convolution from the output back to the input would have.
template <class In, class W, class Bias, class Out, class Stage>
void transpose_conv(const WindowGeometry& g, std::span<const In> input, int32_t input_offset, std::span<const W> filter,
                    std::span<const Bias> bias, const Stage& stage, std::span<Out> output) {
    using Sum = SumOf<Stage>;
    std::vector<Sum> sums(output.size(), Sum{0});
    for (int b = 0; b < g.batches; ++b)
        for (int iy = 0; iy < g.in_h; ++iy)
            for (int ix = 0; ix < g.in_w; ++ix)
                for (int ic = 0; ic < g.in_c; ++ic)
                    for (int fy = 0; fy < g.filter_h; ++fy)
                        for (int fx = 0; fx < g.filter_w; ++fx)
                            for (int oc = 0; oc < g.out_c; ++oc) {
                                const int64_t oy = int64_t{iy} * g.stride_h - g.pad_h + fy;
                                const int64_t ox = int64_t{ix} * g.stride_w - g.pad_w + fx;
                                if (oy < 0 || oy >= g.out_h || ox < 0 || ox >= g.out_w) continue;
                                sums[g.out_index(b, oy, ox, oc)] += product<Sum>(
                                    input[g.in_index(b, iy, ix, ic)], input_offset, filter[g.filter_index(oc, fy, fx, ic, g.in_c)]);
                            }
    for (size_t i = 0; i < sums.size(); ++i) {
        const auto oc = i % static_cast<size_t>(g.out_c);
        if constexpr (std::is_floating_point_v<Sum>)  // TFLM adds a float bias only where there is one
            output[i] = activation_with_min_max(bias.empty() ? sums[i] : sums[i] + bias[oc], stage);
        else
            output[i] = requantize_sum<Out>(sums[i], bias, oc, stage);
    }
}

// FULLY_CONNECTED (reference FullyConnected / FullyConnectedPerChannel): batches rows of
// accum_depth inputs against out_depth rows of weights, each weight plus weights_offset (the
// per-tensor form adds params.weights_offset, minus the filter's zero point; 0 elsewhere).
template <class In, class W, class Bias, class Out, class Stage>
void fully_connected(int batches, int accum_depth, int out_depth, std::span<const In> input, int32_t input_offset,
                     std::span<const W> weights, int32_t weights_offset, std::span<const Bias> bias, const Stage& stage,
                     std::span<Out> output) {
    using Sum = SumOf<Stage>;
    for (int b = 0; b < batches; ++b)
        for (int oc = 0; oc < out_depth; ++oc) {
            Sum sum = 0;
            for (int d = 0; d < accum_depth; ++d)
                sum += product<Sum>(input[size_t(b) * accum_depth + d], input_offset, weights[size_t(oc) * accum_depth + d],
                                    weights_offset);
            output[size_t(b) * out_depth + oc] = output_of<Out>(sum, bias, size_t(oc), stage);
        }
}

// BATCH_MATMUL (reference BatchMatMul, which TFLM feeds the right-hand side first and transposed:
// the same sums). Per batch, out[r][c] = the sum over k, in order, of x[r][k] * y[k][c] with x the
// left-hand side and y the right-hand one, each stored with its last two dimensions swapped when
// adjoint; the three batch dimensions broadcast where one side has 1. Integer sums take each side
// minus its zero point; floats are stored unclamped.
struct MatMulShape {
    std::array<int, 3> lhs_batch{1, 1, 1}, rhs_batch{1, 1, 1}, out_batch{1, 1, 1};
    int rows = 0, cols = 0, depth = 0;
    bool adj_x = false, adj_y = false;
};
template <class T, class Stage>
void batch_matmul(const MatMulShape& s, std::span<const T> lhs, int32_t lhs_offset, std::span<const T> rhs,
                  int32_t rhs_offset, const Stage& stage, std::span<T> output) {
    using Sum = SumOf<Stage>;
    const size_t lhs_matrix = size_t(s.rows) * s.depth, rhs_matrix = size_t(s.depth) * s.cols;
    // The offset of a batch's matrix on a side whose broadcast dimensions repeat it.
    const auto matrix_offset = [](const std::array<int, 3>& dims, int b0, int b1, int b2, size_t matrix) {
        const auto at = [&](int k, int b) { return dims[size_t(k)] == 1 ? 0 : b; };
        return ((size_t(at(0, b0)) * dims[1] + at(1, b1)) * dims[2] + at(2, b2)) * matrix;
    };
    size_t out_index = 0;
    for (int b0 = 0; b0 < s.out_batch[0]; ++b0)
        for (int b1 = 0; b1 < s.out_batch[1]; ++b1)
            for (int b2 = 0; b2 < s.out_batch[2]; ++b2) {
                const size_t x0 = matrix_offset(s.lhs_batch, b0, b1, b2, lhs_matrix);
                const size_t y0 = matrix_offset(s.rhs_batch, b0, b1, b2, rhs_matrix);
                for (int r = 0; r < s.rows; ++r)
                    for (int c = 0; c < s.cols; ++c, ++out_index) {
                        Sum sum = 0;
                        for (int k = 0; k < s.depth; ++k) {
                            const T x = lhs[x0 + (s.adj_x ? size_t(k) * s.rows + r : size_t(r) * s.depth + k)];
                            const T y = rhs[y0 + (s.adj_y ? size_t(c) * s.depth + k : size_t(k) * s.cols + c)];
                            if constexpr (std::is_floating_point_v<Sum>)
                                sum += y * x;
                            else
                                sum += (int64_t{y} + rhs_offset) * (int64_t{x} + lhs_offset);
                        }
                        if constexpr (std::is_floating_point_v<Sum>)
                            output[out_index] = sum;
                        else
                            output[out_index] = requantize_sum<T>(sum, {}, 0, stage);
                    }
            }
}

// The window of a pool at one output point, clipped to the input (pooling.h).
struct PoolWindow {
    int64_t y0, y1, x0, x1;  // filter rows [y0, y1) and columns [x0, x1) inside the input
    int64_t iy, ix;          // the input point of filter (0, 0)
};
inline PoolWindow pool_window(const WindowGeometry& g, int oy, int ox) {
    const int64_t iy = int64_t{oy} * g.stride_h - g.pad_h, ix = int64_t{ox} * g.stride_w - g.pad_w;
    return {std::max<int64_t>(0, -iy), std::min<int64_t>(g.filter_h, g.in_h - iy), std::max<int64_t>(0, -ix),
            std::min<int64_t>(g.filter_w, g.in_w - ix), iy, ix};
}

// Calls f(input point of filter (0, 0), window, output index, channel, batch) at each output
// point of a pool in TFLM's order, until f returns false; returns whether it never did.
template <class F>
bool for_each_pool_point(const WindowGeometry& g, F&& f) {
    for (int b = 0; b < g.batches; ++b)
        for (int oy = 0; oy < g.out_h; ++oy)
            for (int ox = 0; ox < g.out_w; ++ox)
                for (int c = 0; c < g.out_c; ++c)
                    if (!f(pool_window(g, oy, ox), g.out_index(b, oy, ox, c), c, b)) return false;
    return true;
}

// AVERAGE_POOL_2D: integer sums divided by the count of points inside the input, rounded half
// away from zero; float sums divided in float. False where a window holds no input point (TFLM
// fails the operator there).
template <class T, class Range>
bool average_pool(const WindowGeometry& g, std::span<const T> input, Range clamp, std::span<T> output) {
    return for_each_pool_point(g, [&](const PoolWindow& w, size_t out, int c, int b) {
        std::conditional_t<std::is_floating_point_v<T>, float, int64_t> sum = 0;
        int64_t count = 0;
        for (int64_t fy = w.y0; fy < w.y1; ++fy)
            for (int64_t fx = w.x0; fx < w.x1; ++fx, ++count) sum += input[g.in_index(b, w.iy + fy, w.ix + fx, c)];
        if (count == 0) return false;
        if constexpr (std::is_floating_point_v<T>) {
            // TFLM counts in float, which stops at 2^24.
            output[out] = activation_with_min_max(sum / static_cast<float>(std::min<int64_t>(count, 1 << 24)), clamp);
        } else {
            // TFLM sums and rounds in int32, wrapping where a huge window overflows it.
            const auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
            const int32_t total = wrap(sum);
            const int32_t average = total > 0 ? wrap(int64_t{total} + count / 2) / static_cast<int32_t>(count)
                                              : wrap(int64_t{total} - count / 2) / static_cast<int32_t>(count);
            output[out] = static_cast<T>(std::clamp(average, clamp.min, clamp.max));
        }
        return true;
    });
}

// MAX_POOL_2D: the largest point inside the input (std::max from the type's lowest, so a float
// NaN is passed over), then the activation clamp.
template <class T, class Range>
void max_pool(const WindowGeometry& g, std::span<const T> input, Range clamp, std::span<T> output) {
    for_each_pool_point(g, [&](const PoolWindow& w, size_t out, int c, int b) {
        T largest = std::numeric_limits<T>::lowest();
        for (int64_t fy = w.y0; fy < w.y1; ++fy)
            for (int64_t fx = w.x0; fx < w.x1; ++fx) largest = std::max(largest, input[g.in_index(b, w.iy + fy, w.ix + fx, c)]);
        if constexpr (std::is_floating_point_v<T>)
            output[out] = activation_with_min_max(largest, clamp);
        else
            output[out] = static_cast<T>(std::clamp<int32_t>(largest, clamp.min, clamp.max));
        return true;
    });
}

}  // namespace ethosu::reference
