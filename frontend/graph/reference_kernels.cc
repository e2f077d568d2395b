#include "frontend/graph/reference_kernels.h"

#include "emulator/engine/output_stage.h"

namespace ethosu::reference {

QuantizedMultiplier quantize_multiplier(double real) {
    if (real == 0.0) return {};
    int exponent = 0;
    const double fraction = std::frexp(real, &exponent);
    auto fixed = static_cast<int64_t>(std::round(fraction * static_cast<double>(int64_t{1} << 31)));
    if (fixed == int64_t{1} << 31) {  // the fraction rounded up to 1
        fixed /= 2;
        ++exponent;
    }
    if (exponent < -31) return {};
    return {static_cast<int32_t>(fixed), exponent};
}

int64_t multiply_by_quantized_multiplier(int32_t x, QuantizedMultiplier m) {
    // The engine's DBL rounding is this double rounding in closed form (test_output_stage.cc
    // checks it against TFLite's steps), with the shift counted to the right from bit 31.
    return scale_value(x, static_cast<uint32_t>(m.multiplier), 31 - m.shift, RoundMode::DoubleSymmetric);
}

SoftmaxParameters softmax_parameters(double beta, double input_scale) {
    const double real = std::min<double>(beta * input_scale * (1 << (31 - kSoftmaxScaledDiffIntegerBits)),
                                         static_cast<double>((int64_t{1} << 31) - 1));
    const QuantizedMultiplier m = real > 1.0 ? quantize_multiplier(real) : QuantizedMultiplier{0, -1};
    SoftmaxParameters p{m.multiplier, m.shift, 0};
    if (m.shift < 0) return p;
    p.diff_min = -input_radius(kSoftmaxScaledDiffIntegerBits, m.shift);
    return p;
}

int32_t input_radius(int integer_bits, int left_shift) {
    const double radius = 1.0 * ((1 << integer_bits) - 1) * static_cast<double>(int64_t{1} << (31 - integer_bits)) /
                          static_cast<double>(int64_t{1} << left_shift);
    return static_cast<int32_t>(std::floor(radius));
}

}  // namespace ethosu::reference
