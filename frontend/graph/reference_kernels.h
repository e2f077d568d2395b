#pragma once
// The host's reference kernels for the operators Vela leaves on the CPU, computing exactly as
// TensorFlow Lite Micro's reference kernels do (same integer math, same float operations in the
// same order), so a whole model's outputs match TFLM's byte for byte.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "frontend/graph/fixed_point.h"

namespace ethosu::reference {

// TFLite's fixed-point multiplier: real = multiplier / 2^31 * 2^shift, multiplier in [2^30, 2^31)
// (0 for a real of 0 or below 2^-32).
struct QuantizedMultiplier {
    int32_t multiplier = 0;
    int shift = 0;
};

// TFLite's QuantizeMultiplier (quantization_util.cc): frexp, the fraction rounded to 31 bits.
QuantizedMultiplier quantize_multiplier(double real);

// TFLite's MultiplyByQuantizedMultiplier with its double rounding (rounding doubling high
// multiply, then rounding divide by a power of two), for shifts up to 30; in 64 bits, so where
// TFLite's int32 left shift would overflow the result is the exact one, not a wrapped one.
int64_t multiply_by_quantized_multiplier(int32_t x, QuantizedMultiplier m);

// static_cast<int32_t> of a float as x86-64 does it (cvttss2si), where TFLM's goldens are made:
// NaN and values outside int32 give INT32_MIN instead of undefined behaviour.
inline int32_t truncate_to_int32(float v) {
    if (!(v >= -2147483648.0f && v < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
    return static_cast<int32_t>(v);
}

// CalculateInputRadius: the largest input magnitude, on the input's scale, that a fixed-point
// function of integer_bits integer bits takes after a left shift of left_shift (0 to 62).
int32_t input_radius(int integer_bits, int left_shift);

// QUANTIZE float -> integer (reference_ops::AffineQuantize): round(value / scale) + zero point,
// divided in float, rounded half away from zero (TfLiteRound = std::round), then clamped.
template <class Out>
void affine_quantize(std::span<const float> in, float scale, int32_t zero_point, std::span<Out> out) {
    for (size_t i = 0; i < in.size(); ++i) {
        // TFLM adds the zero point in int32; an out-of-range value's INT32_MIN wraps there.
        const auto sum = static_cast<int32_t>(static_cast<uint32_t>(truncate_to_int32(std::round(in[i] / scale))) +
                                              static_cast<uint32_t>(zero_point));
        out[i] = static_cast<Out>(std::clamp<int32_t>(sum, std::numeric_limits<Out>::min(), std::numeric_limits<Out>::max()));
    }
}

// DEQUANTIZE integer -> float (reference_ops::Dequantize): the difference from the zero point
// times the scale widened to double, the product narrowed to float (TFLM's order; for 8- and
// 16-bit values the double product is exact, so one float rounding).
template <class In>
void dequantize(std::span<const In> in, float scale, int32_t zero_point, std::span<float> out) {
    const double wide_scale = scale;
    for (size_t i = 0; i < in.size(); ++i)
        out[i] = static_cast<float>(wide_scale * (static_cast<int32_t>(in[i]) - zero_point));
}

// QUANTIZE integer -> integer (reference_ops::Requantize): the difference from the input zero
// point scaled by the multiplier of input scale / output scale, plus the output zero point,
// clamped. (TFLM's int8 <-> uint8 fast path at equal scales, an XOR of 0x80, gives the same.)
template <class In, class Out>
void requantize(std::span<const In> in, QuantizedMultiplier m, int32_t input_zero_point, int32_t output_zero_point,
                std::span<Out> out) {
    for (size_t i = 0; i < in.size(); ++i) {
        // In int32, wrapping as TFLM's subtraction does for an int32 input far from its zero point.
        const auto difference = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int32_t>(in[i])) -
                                                     static_cast<uint32_t>(input_zero_point));
        const int64_t v = multiply_by_quantized_multiplier(difference, m) + output_zero_point;
        out[i] = static_cast<Out>(std::clamp<int64_t>(v, std::numeric_limits<Out>::min(), std::numeric_limits<Out>::max()));
    }
}

// SVDF with int8 input and output and State (int8 or int16) time weights and activation state
// (TFLM's EvalIntegerSvdfReference, svdf_common.cc): the state shifts one step left, the feature
// matmul fills each filter's newest state entry, the time matmul, rank reduction and bias give
// each unit, rescaled to int8. TFLM ignores the fused activation here (the int8 clamp only).
struct SvdfShape {
    int batches = 0, input_size = 0, filters = 0, rank = 1, memory = 0;
    int units() const { return filters / rank; }
};
struct SvdfQuantization {
    int32_t input_zero_point = 0, state_zero_point = 0, output_zero_point = 0;
    QuantizedMultiplier feature_scale;  // input scale * feature weight scale / state scale
    QuantizedMultiplier output_scale;   // state scale * time weight scale / output scale
};
template <class State>
void svdf(const SvdfShape& s, const SvdfQuantization& q, std::span<const int8_t> input,
          std::span<const int8_t> feature_weights, std::span<const State> time_weights,
          std::span<const int32_t> bias /* empty: none */, std::span<State> state, std::span<int8_t> output) {
    // TFLM sums in int32, wrapping on overflow: sums kept in 64 bits and narrowed at the end agree.
    const auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
    std::copy(state.begin() + 1, state.end(), state.begin());
    for (int b = 0; b < s.batches; ++b) {
        for (int f = 0; f < s.filters; ++f) {
            int64_t dot = 0;
            for (int c = 0; c < s.input_size; ++c)
                dot += int64_t{feature_weights[static_cast<size_t>(f * s.input_size + c)]} *
                       (input[static_cast<size_t>(b * s.input_size + c)] - q.input_zero_point);
            // The state's zero point is added before the clamp to the state's type.
            const int64_t newest = multiply_by_quantized_multiplier(wrap(dot), q.feature_scale) + q.state_zero_point;
            state[static_cast<size_t>((b * s.filters + f) * s.memory + s.memory - 1)] = static_cast<State>(
                std::clamp<int64_t>(newest, std::numeric_limits<State>::min(), std::numeric_limits<State>::max()));
        }
    }
    for (int b = 0; b < s.batches; ++b) {
        for (int u = 0; u < s.units(); ++u) {
            int64_t sum = bias.empty() ? 0 : bias[static_cast<size_t>(u)];
            for (int r = 0; r < s.rank; ++r) {
                const int f = u * s.rank + r;
                int64_t time_dot = 0;
                for (int m = 0; m < s.memory; ++m)
                    time_dot += int64_t{time_weights[static_cast<size_t>(f * s.memory + m)]} *
                                (state[static_cast<size_t>((b * s.filters + f) * s.memory + m)] - q.state_zero_point);
                sum += wrap(time_dot);
            }
            const int64_t out = multiply_by_quantized_multiplier(wrap(sum), q.output_scale) + q.output_zero_point;
            output[static_cast<size_t>(b * s.units() + u)] = static_cast<int8_t>(std::clamp<int64_t>(out, INT8_MIN, INT8_MAX));
        }
    }
}

// Integer SOFTMAX over the last dimension (TFLM's softmax_common.cc and reference_ops::Softmax):
// each input's difference from its row's maximum, scaled by beta * input scale into Q5.26, goes
// through gemmlowp's exp; the sum of exps (Q12.19) is inverted with gemmlowp's 1/(1+x), and each
// exp times that reciprocal is the output, offset to start at the type's minimum. Differences
// below diff_min give the minimum.
struct SoftmaxParameters {
    int32_t input_multiplier = 0;
    int input_left_shift = 0;
    int32_t diff_min = 0;
};
constexpr int kSoftmaxScaledDiffIntegerBits = 5, kSoftmaxAccumulationIntegerBits = 12;
// PreprocessSoftmaxScaling (beta * input scale * 2^26, capped below 2^31, as a multiplier over one)
// and CalculateInputRadius, as TFLM computes them. Throws nothing; left_shift < 0 means the
// scaling is one TFLite refuses (a multiplier not above one).
SoftmaxParameters softmax_parameters(double beta, double input_scale);

template <class In, class Out>
void softmax(const SoftmaxParameters& p, size_t depth, std::span<const In> in, std::span<Out> out) {
    namespace fp = fixed_point;
    const auto scaled_diff = [&](int32_t diff) {  // MultiplyByQuantizedMultiplierGreaterThanOne
        return fp::doubling_high_mul(diff * (1 << p.input_left_shift), p.input_multiplier);
    };
    for (size_t row = 0; row + depth <= in.size(); row += depth) {
        const In max_in_row = *std::max_element(in.begin() + static_cast<ptrdiff_t>(row),
                                                in.begin() + static_cast<ptrdiff_t>(row + depth));
        int32_t sum_of_exps = 0;  // Q12.19, wrapping as gemmlowp's sum does
        for (size_t c = 0; c < depth; ++c) {
            const int32_t diff = static_cast<int32_t>(in[row + c]) - max_in_row;
            if (diff < p.diff_min) continue;
            const int32_t e = fp::exp_on_negative_values(scaled_diff(diff), kSoftmaxScaledDiffIntegerBits);
            sum_of_exps = static_cast<int32_t>(static_cast<uint32_t>(sum_of_exps) +
                                               static_cast<uint32_t>(fp::rounding_divide_by_pot(e, kSoftmaxAccumulationIntegerBits)));
        }
        // GetReciprocal: normalise the sum to [1, 2) and invert it.
        const int headroom_plus_one = std::countl_zero(static_cast<uint32_t>(sum_of_exps));
        const int bits_over_unit = kSoftmaxAccumulationIntegerBits - headroom_plus_one;
        const auto shifted_sum_minus_one =
            static_cast<int32_t>((static_cast<uint32_t>(sum_of_exps) << headroom_plus_one) - (uint32_t{1} << 31));
        const int32_t reciprocal = fp::one_over_one_plus_x(shifted_sum_minus_one);
        const int exponent = bits_over_unit + 31 - static_cast<int>(sizeof(Out) * 8);
        for (size_t c = 0; c < depth; ++c) {
            const int32_t diff = static_cast<int32_t>(in[row + c]) - max_in_row;
            if (diff < p.diff_min) {
                out[row + c] = std::numeric_limits<Out>::min();
                continue;
            }
            const int32_t e = fp::exp_on_negative_values(scaled_diff(diff), kSoftmaxScaledDiffIntegerBits);
            const int64_t v = int64_t{fp::rounding_divide_by_pot(fp::doubling_high_mul(reciprocal, e), exponent)} +
                              std::numeric_limits<Out>::min();
            out[row + c] = static_cast<Out>(std::clamp<int64_t>(v, std::numeric_limits<Out>::min(), std::numeric_limits<Out>::max()));
        }
    }
}

}  // namespace ethosu::reference
