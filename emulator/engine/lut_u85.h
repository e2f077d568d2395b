#pragma once
// U85's interpolating int16 LUTs (LUT_SIGMOID, LUT_TANH): 512 32-bit entries in the LUT RAM,
// each a base (low 16 bits, signed) and a slope (high 16 bits) over 512 input steps, as Vela 5.1
// writes them from the sigmoid table TFLite's int16 LOGISTIC/TANH kernels interpolate.

#include <cstdint>
#include <span>

namespace ethosu {

enum class InterpolatingLut : uint8_t { Sigmoid, Tanh };

// The table's value for an OFM-scaled input v: entry v >> 9 (clamped to the table), interpolated
// by the low 9 bits, rounded half away from zero to 16 bits (sigmoid: 0..32767 around 16384).
int64_t interpolate_lut(std::span<const uint8_t> table, int64_t v, InterpolatingLut kind);

// LUT_S16_S32: the same 512 base/slope entries spread over the int16 input range, 128 inputs per
// entry: entry (v + 32768) >> 7, 7-bit fraction f, result (base << 7) + slope * f. This is TOSA's
// int16 TABLE, which Vela 5.1 maps onto it (compiler/graphir_optimiser.cpp RewriteTable: entry i
// holds table[i] and table[i + 1] - table[i]). v must lie in -32768..32767.
int64_t interpolate_lut_s16_s32(std::span<const uint8_t> table, int64_t v);

}  // namespace ethosu
