#pragma once
// The output stage shared by every kernel op: accumulator scaling with the hardware's
// rounding modes, OFM zero point, clamp, LUT activation.

#include <algorithm>
#include <array>
#include <cstdint>

#include "emulator/isa/decoded_op.h"

namespace ethosu {

__extension__ typedef __int128 int128;  // exact products of 64-bit values and 32-bit scales

// value / 2^shift rounded as mode says. shift 0 returns value.
int64_t rounding_shift(int128 value, int shift, RoundMode mode);

// acc * scale / 2^shift, rounded by mode. DoubleSymmetric is U55/U65 "DBL": TFLite's
// MultiplyByQuantizedMultiplier (and TOSA apply_scale_32 with double_round); Natural rounds
// half toward +infinity (TFLite's 16-bit requantize with Vela's reduced scale).
inline int64_t scale_value(int64_t acc, uint32_t scale, int shift, RoundMode mode);

// scale_value in 128-bit arithmetic, for every case.
int64_t scale_value_wide(int64_t acc, uint32_t scale, int shift, RoundMode mode);

// The roundings with a 64-bit closed form for accumulators below 2^30 (DBL_ASYMMETRIC's form is
// NATURAL's), which scale_value and the fast scaling paths compute.
inline bool closed_form_rounding(RoundMode mode) {
    return mode == RoundMode::DoubleSymmetric || mode == RoundMode::Natural || mode == RoundMode::DoubleAsymmetric;
}

inline int64_t scale_value(int64_t acc, uint32_t scale, int shift, RoundMode mode) {
    // DBL and NATURAL of accumulators below 2^30 (nearly all of them) stay within 64 bits:
    // |acc * scale| < 2^62 and the rounding term is at most 2^61 + 2^30. Same closed forms as
    // scale_value_wide and rounding_shift.
    constexpr int64_t kLimit = int64_t{1} << 30;
    if (shift > 0 && shift < 63 && acc > -kLimit && acc < kLimit) {
        int64_t round = int64_t{1} << (shift - 1);
        if (mode == RoundMode::DoubleSymmetric) {
            if (shift > 31) round += acc >= 0 ? kLimit : -kLimit;
            return (acc * int64_t{scale} + round) >> shift;
        }
        if (closed_form_rounding(mode)) return (acc * int64_t{scale} + round) >> shift;
    }
    if (scale == 1 && shift == 0) return acc;  // every mode: the product itself
    return scale_value_wide(acc, scale, shift, mode);
}

// Vela's QuantizePoolingScale(n): 1/n as scale / 2^shift with NATURAL rounding, which equals
// TFLite's rounded average for every window size (regor ethos_u_scaling.cpp).
Scale average_pool_scale(int64_t n);

// Range of the OFM element type.
struct Range {
    int64_t min, max;
};
Range precision_range(const Precision& p);
// The values a feature map of at most 32 bits holds once its zero point is taken off (what the
// kernels compute on), and the largest magnitude among them.
Range operand_range(const FeatureMap& fm);
int64_t largest_operand(const FeatureMap& fm);

// Clip bounds of the op: ACTIVATION_MIN/MAX intersected with the OFM type.
Range clip_range(const DecodedOp& op);

inline int64_t clamp(int64_t v, Range r) { return std::min(std::max(v, r.min), r.max); }

// A scaled value plus the OFM zero point, saturated to int64: scale_value saturates a value out of
// range to an end of int64, where adding a zero point would overflow (a MUL into a 64-bit OFM can reach it).
inline int64_t add_zero_point(int64_t scaled, int64_t zero_point) {
    int64_t sum;
    if (__builtin_add_overflow(scaled, zero_point, &sum)) return zero_point > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}

// U55/U65 built-in activations of 16-bit OFMs (ACTIVATION_FUNCTION_SIGMOID / TANH), which
// TFLite's int16 LOGISTIC and TANH reference kernels reproduce. x is the scaled accumulator in
// units of 1/(3 * 4096) (Vela programs the OFM scale for that); the result is in units of 2^-15.
int64_t builtin_sigmoid(int64_t x);
int64_t builtin_tanh(int64_t x);

// The 256 samples both functions interpolate between: 65536 * sigmoid(i / 24), each nudged
// up for the interpolation (output_stage.cc says how).
const std::array<uint16_t, 256>& sigmoid_samples();

}  // namespace ethosu
