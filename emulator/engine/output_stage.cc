#include "emulator/engine/output_stage.h"

#include <bit>

namespace ethosu {

int64_t rounding_shift(int128 value, int shift, RoundMode mode) {
    if (shift <= 0) return static_cast<int64_t>(value << -shift);
    const int128 one = 1;
    const int128 half = one << (shift - 1);
    const int128 floor = value >> shift;  // arithmetic: toward -infinity
    const int128 remainder = value - (floor << shift);
    switch (mode) {
        case RoundMode::Natural:  // half toward +infinity
            return static_cast<int64_t>((value + half) >> shift);
        case RoundMode::Truncate:  // toward zero
            return static_cast<int64_t>(value >= 0 || remainder == 0 ? floor : floor + 1);
        case RoundMode::TruncateToLower:
            return static_cast<int64_t>(floor);
        case RoundMode::Symmetric:
        case RoundMode::DoubleSymmetric:  // half away from zero
            if (remainder > half || (remainder == half && value >= 0)) return static_cast<int64_t>(floor + 1);
            return static_cast<int64_t>(floor);
        case RoundMode::DoubleAsymmetric:  // half toward +infinity
            return static_cast<int64_t>((value + half) >> shift);
    }
    return static_cast<int64_t>(floor);
}

int64_t scale_value_wide(int64_t acc, uint32_t scale, int shift, RoundMode mode) {
    const int128 product = static_cast<int128>(acc) * scale;
    if (mode != RoundMode::DoubleSymmetric) return rounding_shift(product, shift, mode);
    // DBL: TFLite's double rounding (doubling high multiply, then rounding divide by a power
    // of two) in closed form: half up, plus a +-2^30 nudge once the shift passes bit 31.
    if (shift <= 0) return static_cast<int64_t>(product);
    int128 round = int128{1} << (shift - 1);
    if (shift > 31) round += acc >= 0 ? (int128{1} << 30) : -(int128{1} << 30);
    return static_cast<int64_t>((product + round) >> shift);
}

Scale average_pool_scale(int64_t n) {
    const int k = std::bit_width(static_cast<uint64_t>(n - 1));
    const int shift = 31 + k;
    const uint64_t scale = ((uint64_t{1} << shift) + (uint64_t{1} << k)) / static_cast<uint64_t>(n);
    return {static_cast<uint32_t>(scale), shift, 0, RoundMode::Natural};
}

Range precision_range(const Precision& p) {
    if (p.bits >= 64) return {INT64_MIN, INT64_MAX};
    if (p.is_signed) return {-(int64_t{1} << (p.bits - 1)), (int64_t{1} << (p.bits - 1)) - 1};
    return {0, (int64_t{1} << p.bits) - 1};
}

Range clip_range(const DecodedOp& op) {
    const Range type = precision_range(op.ofm.precision);
    const Precision& p = op.ofm.precision;
    // ACTIVATION_MIN/MAX are 16-bit: signed for signed OFMs, unsigned for unsigned ones.
    int64_t lo = op.output.clip_min, hi = op.output.clip_max;
    if (!p.is_signed) {
        lo = static_cast<uint16_t>(lo);
        hi = static_cast<uint16_t>(hi);
    }
    if (p.bits > 16) return type;  // 32-bit OFMs are not clipped by the 16-bit bounds
    return {std::max(lo, type.min), std::min(hi, type.max)};
}

}  // namespace ethosu
