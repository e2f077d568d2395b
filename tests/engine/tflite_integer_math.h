#pragma once
// Test-only: TFLite's reference integer math (SaturatingRoundingDoublingHighMul,
// RoundingDivideByPOT, MultiplyByQuantizedMultiplier, QuantizeMultiplier), written out
// plainly so engine results can be checked against what TFLite computes.

#include <cmath>
#include <cstdint>
#include <limits>

namespace ethosu::tflite_reference {

inline int32_t srdhm(int32_t a, int32_t b) {
    if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
    const int64_t ab = int64_t{a} * b;
    const int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
    const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// MultiplyByQuantizedMultiplier: shift > 0 shifts left first, shift < 0 rounds right after.
inline int32_t tflite_multiply(int32_t x, int32_t multiplier, int shift) {
    const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return rounding_divide_by_pot(srdhm(x * (1 << left), multiplier), right);
}

struct TfliteMultiplier {
    int32_t multiplier = 0;
    int shift = 0;
};

// QuantizeMultiplier: the significand of frexp rounded to 31 bits, and its exponent.
inline TfliteMultiplier tflite_quantize_multiplier(double value) {
    if (value == 0) return {};
    int exponent = 0;
    int64_t q = static_cast<int64_t>(std::round(std::frexp(value, &exponent) * (int64_t{1} << 31)));
    if (q == (int64_t{1} << 31)) {
        q /= 2;
        ++exponent;
    }
    if (exponent < -31) return {};
    return {static_cast<int32_t>(q), exponent};
}

}  // namespace ethosu::tflite_reference
