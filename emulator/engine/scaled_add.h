#pragma once
// ADD/SUB with one operand scaled in 32 bits (IFM scale mode OPA_32 or OPB_32: Vela's lowering of
// 8-bit ADD and SUB) where every scale_value of the op takes its closed form (output_stage.h):
// the operands' magnitudes bound each accumulator below 2^30, decided once per op. Elementwise
// ops then compute a pixel's channels in one loop the compiler vectorises, where the general
// way calls scale_value twice per element.

#include <cstdint>
#include <optional>

#include "emulator/isa/decoded_op.h"

namespace ethosu {

// One scale_value in its closed form, for an accumulator below 2^30: the product with its
// rounding term, DBL's nudge following the accumulator's sign, shifted.
struct ClosedScale {
    int64_t scale = 0, half = 0, nudge = 0;
    int shift = 0;
    int64_t operator()(int64_t acc) const { return (acc * scale + half + (acc >= 0 ? nudge : -nudge)) >> shift; }
};

// The terms: the operand's scale (OPA_SCALE) and the output's, the left shifts of the scaled
// operand (L: 20 for 8-bit operands, 15 for 16-bit) and of the other (L - 1), and the
// operation's sign of each (SUB negates the second operand).
struct ScaledAddTerms {
    ClosedScale operand, output;
    int operand_shift = 0, other_shift = 0;
    int64_t scaled_sign = 1, shifted_sign = 1;
};

// ADD/SUB's left shift of the operands (L): TFLite's 20 for 8-bit inputs, 15 for 16-bit.
inline int add_left_shift(const Precision& ifm) { return ifm.bits == 8 ? 20 : 15; }

// The terms of an ADD/SUB, or nullopt where a scale_value of the op may leave the closed form
// (another scale mode or rounding, operands too large, an operand scale too small to keep the
// sum below 2^30).
std::optional<ScaledAddTerms> scaled_add_terms(const DecodedOp& op);

// out[c] = the output stage's scaled value of scaled_sign * scale(scaled[c] << L) + shifted_sign *
// (shifted[c] << (L - 1)), before the zero point and clamp, for c in [0, count).
void add_scaled(const int64_t* scaled, const int64_t* shifted, int count, const ScaledAddTerms& t, int64_t* out);

}  // namespace ethosu
