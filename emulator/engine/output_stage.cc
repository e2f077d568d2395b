#include "emulator/engine/output_stage.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <optional>

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

Range operand_range(const FeatureMap& fm) {
    const Range values = precision_range(fm.precision);
    return {values.min - fm.zero_point, values.max - fm.zero_point};
}

int64_t largest_operand(const FeatureMap& fm) {
    const Range r = operand_range(fm);
    return std::max(std::abs(r.min), std::abs(r.max));
}

Range clip_range(const DecodedOp& op) {
    const Range type = precision_range(op.kernel().ofm.precision);
    const Precision& p = op.kernel().ofm.precision;
    // ACTIVATION_MIN/MAX are 16-bit: signed for signed OFMs, unsigned for unsigned ones.
    int64_t lo = op.kernel().output.clip_min, hi = op.kernel().output.clip_max;
    if (!p.is_signed) {
        lo = static_cast<uint16_t>(lo);
        hi = static_cast<uint16_t>(hi);
    }
    if (p.bits > 16) return type;  // 32-bit OFMs are not clipped by the 16-bit bounds
    return {std::max(lo, type.min), std::min(hi, type.max)};
}

const std::array<uint16_t, 256>& sigmoid_samples() {
    // Each sample is raised by half the sag of the chord to its neighbour (the sag at the
    // midpoint is -sigmoid'' * step^2 / 8), so that linear interpolation errs as much above the
    // curve as below it. The last sample is the saturated maximum. This reproduces TFLite's
    // sigmoid_table_uint16 entry for entry; plain rounding of sigmoid misses 44 entries.
    static const std::array<uint16_t, 256> samples = [] {
        std::array<uint16_t, 256> t{};
        constexpr double step = 1.0 / 24;
        for (int i = 0; i + 1 < static_cast<int>(t.size()); ++i) {
            const double s = 1 / (1 + std::exp(-i * step));
            const double second_derivative = s * (1 - s) * (1 - 2 * s);
            t[i] = static_cast<uint16_t>(std::lround(65536 * (s - second_derivative * step * step / 16)));
        }
        t.back() = 0xFFFF;
        return t;
    }();
    return samples;
}

namespace {

// 65536 * sigmoid(|x| / 24 / 2^frac_bits) in units of 2^-frac_bits, linearly interpolated
// between the samples; nullopt past the last sample, where the functions saturate.
std::optional<int64_t> interpolate_sigmoid(int64_t x, int frac_bits) {
    const auto& samples = sigmoid_samples();
    const uint64_t magnitude = x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
    const uint64_t i = magnitude >> frac_bits;
    if (i >= samples.size() - 1) return std::nullopt;
    const int64_t frac = static_cast<int64_t>(magnitude & ((uint64_t{1} << frac_bits) - 1));
    return (int64_t{samples[i]} << frac_bits) + frac * (samples[i + 1] - samples[i]);
}

constexpr int64_t kInt16Max = 32767;

}  // namespace

int64_t builtin_sigmoid(int64_t x) {
    // 512 units of x per sample (1/24). sigmoid(-x) = 1 - sigmoid(x) exactly, so large negative
    // inputs end at 1, not 0, as in TFLite.
    const auto p = interpolate_sigmoid(x, 9);
    const int64_t s = p ? (*p + (1 << 9)) >> 10 : kInt16Max;
    return x >= 0 ? s : 32768 - s;
}

int64_t builtin_tanh(int64_t x) {
    // tanh(x) = 2 * sigmoid(2x) - 1: 256 units of x per sample. tanh(-x) = -tanh(x) exactly.
    const auto p = interpolate_sigmoid(x, 8);
    const int64_t t = p ? (*p - (int64_t{1} << 23) + (1 << 7)) >> 8 : kInt16Max;
    return x >= 0 ? t : -t;
}

}  // namespace ethosu
