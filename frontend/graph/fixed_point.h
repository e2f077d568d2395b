#pragma once
// The gemmlowp fixed-point arithmetic TFLite's integer SOFTMAX, LOGISTIC and TANH are written in (fixedpoint.h):
// int32 raw values with a number of integer bits, multiplied with the saturating rounding doubling
// high multiply, and the exp / reciprocal approximations built on them.

#include <cstdint>

namespace ethosu::fixed_point {

// SaturatingRoundingDoublingHighMul: round(a * b / 2^31), INT32_MIN * INT32_MIN saturating.
int32_t doubling_high_mul(int32_t a, int32_t b);
// RoundingDivideByPOT: x / 2^exponent rounded half away from zero.
int32_t rounding_divide_by_pot(int32_t x, int exponent);
// SaturatingRoundingMultiplyByPOT: x * 2^exponent, saturating left shifts, rounding right ones.
int32_t multiply_by_pot(int32_t x, int exponent);

// exp(a) for a <= 0 given with integer_bits integer bits; the result has none (exp_on_negative_values).
int32_t exp_on_negative_values(int32_t a, int integer_bits);
// 1 / (1 + x) for x in [0, 1), both with no integer bits (one_over_one_plus_x_for_x_in_0_1).
int32_t one_over_one_plus_x(int32_t x);
// (1 - x) / (1 + x) for x in [0, 1) (one_minus_x_over_one_plus_x_for_x_in_0_1).
int32_t one_minus_x_over_one_plus_x(int32_t x);
// gemmlowp's logistic and tanh of a value with integer_bits integer bits; results have none.
int32_t logistic(int32_t a, int integer_bits);
int32_t tanh(int32_t a, int integer_bits);

}  // namespace ethosu::fixed_point
