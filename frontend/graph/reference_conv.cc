#include "frontend/graph/reference_conv.h"

#include <cmath>

namespace ethosu::reference {

int64_t window_output_size(bool same_padding, int64_t in, int64_t filter, int64_t stride, int64_t dilation) {
    const int64_t effective_filter = (filter - 1) * dilation + 1;
    const int64_t out = same_padding ? (in + stride - 1) / stride : (in + stride - effective_filter) / stride;
    return out < 0 ? -1 : out;
}

int64_t window_padding(int64_t stride, int64_t dilation, int64_t in, int64_t filter, int64_t out) {
    const int64_t effective_filter = (filter - 1) * dilation + 1;
    return std::max<int64_t>((out - 1) * stride + effective_filter - in, 0) / 2;
}

std::optional<QuantizedRange> quantized_activation_range(int8_t activation, float scale, int32_t zero_point,
                                                         QuantizedRange type) {
    // kernel_util.cc's Quantize: the quotient rounded in float, refused outside int32 (its bound
    // float(INT32_MAX) is 2^31 itself, which x86 converts to INT32_MIN), the zero point added.
    const auto quantize = [&](float f) -> std::optional<int32_t> {
        const float q = std::round(f / scale);
        if (!(q >= -2147483648.0f && q <= 2147483648.0f)) return std::nullopt;
        return static_cast<int32_t>(static_cast<uint32_t>(zero_point) + static_cast<uint32_t>(truncate_to_int32(q)));
    };
    const auto bound = [&](float low, float high) -> std::optional<QuantizedRange> {
        const auto lo = quantize(low), hi = quantize(high);
        if (!lo || !hi) return std::nullopt;
        return QuantizedRange{std::max(type.min, *lo), std::min(type.max, *hi)};
    };
    switch (activation) {
        case kActRelu: {
            const auto zero = quantize(0.0f);
            if (!zero) return std::nullopt;
            return QuantizedRange{std::max(type.min, *zero), type.max};
        }
        case kActRelu6: return bound(0.0f, 6.0f);
        case kActReluN1To1: return bound(-1.0f, 1.0f);
        default: return type;
    }
}

FloatRange float_activation_range(int8_t activation) {
    switch (activation) {
        case kActRelu: return {0.0f, std::numeric_limits<float>::max()};
        case kActRelu6: return {0.0f, 6.0f};
        case kActReluN1To1: return {-1.0f, 1.0f};
        default: return {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max()};
    }
}

int32_t multiply_by_quantized_multiplier_wide(int64_t x, QuantizedMultiplier m) {
    const int64_t reduced = m.multiplier < 0x7FFF0000 ? (int64_t{m.multiplier} + (1 << 15)) >> 16 : 0x7FFF;
    const int total_shift = 15 - m.shift;
    // TFLM's product and rounding add wrap in int64 (its input contract keeps them apart), and the
    // shifted result is narrowed to int32.
    const auto rounded = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(reduced) +
                                              (uint64_t{1} << (total_shift - 1)));
    return static_cast<int32_t>(static_cast<uint64_t>(rounded >> total_shift));
}

std::vector<int8_t> unpack_int4(std::span<const uint8_t> packed, size_t count) {
    std::vector<int8_t> values(count);
    for (size_t i = 0; i < count; ++i) {
        const uint8_t byte = packed[i / 2];
        const auto nibble = static_cast<uint8_t>(i % 2 == 0 ? byte & 0x0F : byte >> 4);
        values[i] = static_cast<int8_t>(nibble >= 8 ? nibble - 16 : nibble);
    }
    return values;
}

}  // namespace ethosu::reference
