#include "frontend/graph/fixed_point.h"

#include <limits>

namespace ethosu::fixed_point {
namespace {

constexpr int32_t kRawMax = std::numeric_limits<int32_t>::max();

// Sums and differences of raw values wrap as gemmlowp's int32 ones do.
int32_t add(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
int32_t sub(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b)); }

// exp(a) for a in [-1/4, 0), no integer bits: Taylor series around -1/8 (gemmlowp's constants:
// exp(-1/8) and 1/3 in Q0.31).
int32_t exp_on_interval_between_negative_one_quarter_and_0(int32_t a) {
    constexpr int32_t kExpMinusOneEighth = 1895147668, kOneThird = 715827883;
    const int32_t x = add(a, 1 << 28);  // a + 1/8
    const int32_t x2 = doubling_high_mul(x, x);
    const int32_t x3 = doubling_high_mul(x2, x);
    const int32_t x4 = doubling_high_mul(x2, x2);
    const int32_t x4_over_4 = rounding_divide_by_pot(x4, 2);
    const int32_t poly = rounding_divide_by_pot(add(doubling_high_mul(add(x4_over_4, x3), kOneThird), x2), 1);
    return add(kExpMinusOneEighth, doubling_high_mul(kExpMinusOneEighth, add(x, poly)));
}

}  // namespace

int32_t doubling_high_mul(int32_t a, int32_t b) {
    if (a == b && a == std::numeric_limits<int32_t>::min()) return kRawMax;
    const int64_t ab = int64_t{a} * b;
    const int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

int32_t rounding_divide_by_pot(int32_t x, int exponent) {
    const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t multiply_by_pot(int32_t x, int exponent) {
    if (exponent <= 0) return rounding_divide_by_pot(x, -exponent);
    const int32_t threshold = (1 << (31 - exponent)) - 1;
    if (x > threshold) return kRawMax;
    if (x < -threshold) return std::numeric_limits<int32_t>::min();
    return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

int32_t exp_on_negative_values(int32_t a, int integer_bits) {
    const int fractional_bits = 31 - integer_bits;
    const int32_t one_quarter = 1 << (fractional_bits - 2);
    const int32_t a_mod_quarter_minus_one_quarter = sub(a & (one_quarter - 1), one_quarter);
    // From integer_bits to none: a left shift by integer_bits.
    int32_t result = exp_on_interval_between_negative_one_quarter_and_0(
        multiply_by_pot(a_mod_quarter_minus_one_quarter, integer_bits));
    const int32_t remainder = sub(a_mod_quarter_minus_one_quarter, a);
    // exp(-2^k) in Q0.31 for k = -2..4, applied for each bit of the remainder (gemmlowp's barrel shifter).
    constexpr int32_t kExpOfMinusPowerOfTwo[] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    for (int k = -2; k <= 4; ++k) {
        if (integer_bits <= k) continue;
        if (remainder & (1 << (fractional_bits + k))) result = doubling_high_mul(result, kExpOfMinusPowerOfTwo[k + 2]);
    }
    if (integer_bits > 5) {
        const int32_t clamp = -(1 << (36 - integer_bits));  // below -32 the result is 0
        if (a < clamp) result = 0;
    }
    return a == 0 ? kRawMax : result;
}

namespace {

// gemmlowp's Newton-Raphson division shared by 1/(1+x) and (1-x)/(1+x): 1 / ((1 + x) / 2) with
// 2 integer bits, from the estimate 48/17 - 32/17 * d.
int32_t reciprocal_of_half_sum_with_one(int32_t x) {
    const int64_t sum = int64_t{x} + kRawMax;
    const auto half_denominator = static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
    constexpr int32_t k48Over17 = 1515870810, kMinus32Over17 = -1010580540, kOneQ2 = 1 << 29;
    int32_t estimate = add(k48Over17, doubling_high_mul(half_denominator, kMinus32Over17));
    for (int i = 0; i < 3; ++i) {
        const int32_t one_minus_product = sub(kOneQ2, doubling_high_mul(half_denominator, estimate));
        estimate = add(estimate, multiply_by_pot(doubling_high_mul(estimate, one_minus_product), 2));
    }
    return estimate;
}

}  // namespace

int32_t one_over_one_plus_x(int32_t x) {
    // Halved (2 integer bits to 1, same raw), then to no integer bits: a saturating doubling.
    return multiply_by_pot(reciprocal_of_half_sum_with_one(x), 1);
}

int32_t one_minus_x_over_one_plus_x(int32_t x) {
    // 2 / (1 + x) - 1, from 2 integer bits to none: a saturating shift left by 2.
    return multiply_by_pot(sub(reciprocal_of_half_sum_with_one(x), 1 << 29), 2);
}

int32_t logistic(int32_t a, int integer_bits) {
    if (a == 0) return 1 << 30;  // one half
    // 1 / (1 + exp(-|a|)), and 1 minus that (raw "one" being INT32_MAX) for a negative a.
    const int32_t positive = one_over_one_plus_x(exp_on_negative_values(a > 0 ? sub(0, a) : a, integer_bits));
    return a > 0 ? positive : sub(kRawMax, positive);
}

int32_t tanh(int32_t a, int integer_bits) {
    if (a == 0) return 0;
    // -tanh(n) for n = -|a| is (1 - exp(2n)) / (1 + exp(2n)); doubling n keeps its raw value and
    // adds an integer bit (gemmlowp's ExactMulByPot<1>).
    const int32_t n = a < 0 ? a : sub(0, a);
    const int32_t t = one_minus_x_over_one_plus_x(exp_on_negative_values(n, integer_bits + 1));
    return a < 0 ? sub(0, t) : t;
}

}  // namespace ethosu::fixed_point
