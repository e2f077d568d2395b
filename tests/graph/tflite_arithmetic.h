#pragma once
// TFLite's integer arithmetic written out plainly for the kernel tests (64-bit products, explicit
// rounding), independent of the project's fixed-point helpers: QuantizeMultiplier (frexp, the
// fraction rounded to 31 bits), the rounding doubling high multiply and the rounding shift.

#include <cmath>
#include <cstdint>
#include <vector>

namespace ethosu::test {

struct Multiplier {
    int64_t m = 0;
    int shift = 0;
};

inline Multiplier tflite_multiplier(double real) {
    if (real == 0) return {};
    int shift = 0;
    const double q = std::frexp(real, &shift);
    auto m = static_cast<int64_t>(std::round(q * 2147483648.0));
    if (m == 2147483648) {
        m /= 2;
        ++shift;
    }
    if (shift < -31) return {};
    return {m, shift};
}

// round(a * b / 2^31), ties away from zero (gemmlowp's nudge), INT32_MIN^2 saturating.
inline int64_t high_mul(int64_t a, int64_t b) {
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    const int64_t p = a * b;
    const int64_t nudge = p >= 0 ? (int64_t{1} << 30) : 1 - (int64_t{1} << 30);
    return (p + nudge) / (int64_t{1} << 31);
}

// x / 2^e rounded half away from zero.
inline int64_t round_shift(int64_t x, int e) {
    if (e == 0) return x;
    const int64_t mask = (int64_t{1} << e) - 1, rem = x & mask, threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (rem > threshold ? 1 : 0);
}

// MultiplyByQuantizedMultiplier: a left shift before the high multiply, a right one after.
inline int64_t scale(int64_t x, Multiplier m) {
    return round_shift(high_mul(x * (int64_t{1} << std::max(m.shift, 0)), m.m), std::max(-m.shift, 0));
}

// Row-major index of `at` in `shape`, a dimension of 1 read at 0 (broadcasting), shapes aligned
// right to at's rank.
inline size_t broadcast_index(const std::vector<int64_t>& shape, const std::vector<int64_t>& at) {
    size_t index = 0;
    const size_t skip = at.size() - shape.size();
    for (size_t d = 0; d < shape.size(); ++d)
        index = index * static_cast<size_t>(shape[d]) + (shape[d] == 1 ? 0 : static_cast<size_t>(at[skip + d]));
    return index;
}

}  // namespace ethosu::test
