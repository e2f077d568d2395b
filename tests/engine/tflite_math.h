#pragma once
// Test-only: TFLite's reference integer math written out plainly (SaturatingRoundingDoublingHighMul,
// RoundingDivideByPOT, MultiplyByQuantizedMultiplier with the left-shift convention, and
// QuantizeMultiplier), for tests that compare the engine with TFLite's kernels.

#include <cmath>
#include <cstdint>
#include <limits>

namespace ethosu::tflite_math {

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

// x * multiplier / 2^31 * 2^shift with TFLite's double rounding.
inline int32_t multiply(int32_t x, int32_t multiplier, int shift) {
    const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return rounding_divide_by_pot(srdhm(x * (1 << left), multiplier), right);
}

// real = multiplier / 2^31 * 2^shift with the multiplier in [2^30, 2^31).
struct Multiplier {
    int32_t multiplier = 0;
    int shift = 0;
};
inline Multiplier quantize_multiplier(double real) {
    if (real == 0.0) return {};
    int exponent = 0;
    const double fraction = std::frexp(real, &exponent);
    auto fixed = static_cast<int64_t>(std::round(fraction * static_cast<double>(int64_t{1} << 31)));
    if (fixed == (int64_t{1} << 31)) fixed /= 2, ++exponent;
    if (exponent < -31) return {};
    return {static_cast<int32_t>(fixed), exponent};
}

inline int32_t multiply(int32_t x, Multiplier m) { return multiply(x, m.multiplier, m.shift); }

}  // namespace ethosu::tflite_math
