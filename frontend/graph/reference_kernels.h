#pragma once
// The host's reference kernels for the operators Vela leaves on the CPU, computing exactly as
// TensorFlow Lite Micro's reference kernels do (same integer math, same float operations in the
// same order), so a whole model's outputs match TFLM's byte for byte.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

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
        const int64_t v =
            multiply_by_quantized_multiplier(static_cast<int32_t>(in[i]) - input_zero_point, m) + output_zero_point;
        out[i] = static_cast<Out>(std::clamp<int64_t>(v, std::numeric_limits<Out>::min(), std::numeric_limits<Out>::max()));
    }
}

}  // namespace ethosu::reference
