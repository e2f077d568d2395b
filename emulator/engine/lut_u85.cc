#include "emulator/engine/lut_u85.h"

#include <algorithm>

namespace ethosu {

int64_t interpolate_lut(std::span<const uint8_t> table, int64_t v, InterpolatingLut kind) {
    constexpr int kFractionBits = 9;
    constexpr int64_t kEntries = 512;
    // Inputs saturate symmetrically to +-(2^17 - 1), the table's span.
    const int64_t limit = (kEntries / 2 << kFractionBits) - 1;
    v = std::clamp<int64_t>(v, -limit, limit);
    const int64_t index = (v >> kFractionBits) + kEntries / 2;
    const int64_t fraction = v & ((1 << kFractionBits) - 1);
    const uint8_t* e = table.data() + index * 4;
    const auto base = static_cast<int16_t>(e[0] | e[1] << 8);
    const auto slope = static_cast<int16_t>(e[2] | e[3] << 8);
    const int64_t r = int64_t{base} * (1 << kFractionBits) + int64_t{slope} * fraction;
    const int64_t toward_zero = v < 0 ? 1 : 0;  // half-way values round away from zero
    const int64_t result = kind == InterpolatingLut::Sigmoid ? (r + (int64_t{1} << 24) + 512 - toward_zero) >> 10
                                                              : (r + 256 - toward_zero) >> 9;
    return std::clamp<int64_t>(result, INT16_MIN, INT16_MAX);  // 16-bit results
}

int64_t interpolate_lut_s16_s32(std::span<const uint8_t> table, int64_t v) {
    constexpr int kFractionBits = 7;
    const int64_t offset = v + 32768;
    const uint8_t* e = table.data() + (offset >> kFractionBits) * 4;
    const auto base = static_cast<int16_t>(e[0] | e[1] << 8);
    const auto slope = static_cast<int16_t>(e[2] | e[3] << 8);
    return int64_t{base} * (1 << kFractionBits) + int64_t{slope} * (offset & ((1 << kFractionBits) - 1));
}

}  // namespace ethosu
