// NPU_OP_ELEMENTWISE on U85: IFM and IFM2 each scaled on input (IFM_SCALE / IFM2_SCALE with the
// dbl_rnd pre-shift of ADD/SUB), either operand broadcast along H, W, C or a scalar, and the
// result scaled by OFM_SCALE with the OFM rounding mode. The comparisons, bitwise operations,
// LSR and DIV work on integers as Vela 5.1 programs them (unit OFM_SCALE, see check_integer_mode).

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>

#include "emulator/engine/executor.h"
#include "emulator/engine/output_pipeline.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

constexpr int kBroadcastH = 1, kBroadcastW = 2, kBroadcastC = 4, kBroadcastScalar = 8;

// One input operand: a feature map read with its broadcast, or the OP_SCALAR value.
class Operand {
public:
    Operand(const DecodedOp& op, const FeatureMap& fm, const char* what, ExecutionContext& ctx) : fm_(fm) {
        const int b = fm.broadcast;
        if (b & kBroadcastScalar) return;
        view_.emplace(ctx.view(op, fm, b & kBroadcastH ? 1 : op.ofm.height, b & kBroadcastW ? 1 : op.ofm.width,
                               b & kBroadcastC ? 1 : op.ofm.depth, what));
    }
    int64_t load(int y, int x, int c, int32_t scalar) const {
        if (!view_) return int64_t{scalar} - fm_.zero_point;
        const int b = fm_.broadcast;
        return view_->load(b & kBroadcastH ? 0 : y, b & kBroadcastW ? 0 : x, b & kBroadcastC ? 0 : c) - fm_.zero_point;
    }

private:
    const FeatureMap& fm_;
    std::optional<FeatureMapView> view_;
};

int64_t shift_left(int64_t v, int n) { return static_cast<int64_t>(static_cast<uint64_t>(v) << n); }

// Input scaling: scale / 2^shift applied to the operand, the result keeping dbl_rnd fraction
// bits; rounded as if the operand had been shifted left by dbl_rnd first (TFLite's ADD/SUB).
int64_t scale_input(int64_t v, const Scale& s) {
    return scale_value(shift_left(v, s.double_round), s.scale, s.shift + s.double_round, s.round);
}

bool is_comparison(ElementwiseMode m) {
    return m == ElementwiseMode::CmpEq || m == ElementwiseMode::CmpNe || m == ElementwiseMode::CmpGe ||
           m == ElementwiseMode::CmpGt;
}

bool is_bitwise(ElementwiseMode m) {
    return m == ElementwiseMode::And || m == ElementwiseMode::Or || m == ElementwiseMode::Xor ||
           m == ElementwiseMode::Not || m == ElementwiseMode::AndNot;
}

// Whether the op is one of the integer modes this file checks before running.
bool is_integer_mode(ElementwiseMode m) {
    return is_comparison(m) || is_bitwise(m) || m == ElementwiseMode::Lsr || m == ElementwiseMode::Div;
}

bool is_unit(const Scale& s) { return s.scale == 1 && s.shift == 0 && s.double_round == 0; }

// v taken as a two's complement value of the IFM's width and read back as that type: bitwise
// results and logical shifts stay within the element, as TOSA defines them per type.
int64_t in_width(int64_t v, const Precision& p) {
    const uint64_t mask = (uint64_t{1} << p.bits) - 1;
    const uint64_t bits = static_cast<uint64_t>(v) & mask;
    if (!p.is_signed || !(bits >> (p.bits - 1))) return static_cast<int64_t>(bits);
    return static_cast<int64_t>(bits | ~mask);
}

// The comparisons, bitwise modes, LSR and DIV as Vela 5.1 programs them (graph optimisers and
// ethos_u85_register_cs_generator.cpp): IFM and IFM2 of one type (8, 16 or 32 bits), OFM_SCALE
// unit; the bitwise modes, LSR and DIV also with unit input scales and zero points 0; LSR and DIV
// with the OFM rounding mode Vela writes (DOUBLE_SYMMETRIC, from AUTO) or TRUNCATE_TO_ZERO.
// Anything else has no reference to be checked against and is refused.
void check_integer_mode(const DecodedOp& op, const ExecutionContext& ctx) {
    const ElementwiseMode m = op.elementwise.mode;
    auto refuse = [&](const char* field, const std::string& why) {
        throw Error({ctx.source, op.offset, field},
                    fmt::format("elementwise mode {}: {}", static_cast<int>(m), why));
    };
    const Precision& p = op.ifm.precision;
    if (p.bits > 32) refuse("NPU_SET_IFM_PRECISION.activation_precision", "64-bit operands are undefined");
    if (op.has_ifm2 && !op.elementwise.ifm2_scalar &&
        (op.ifm2.precision.bits != p.bits || op.ifm2.precision.is_signed != p.is_signed)) {
        refuse("NPU_SET_IFM2_PRECISION.activation_precision", "IFM2 must have the IFM's type");
    }
    if (!is_unit(op.output.global_scale) || op.output.per_channel_scale) {
        refuse("NPU_SET_OFM_SCALE", "only a unit global OFM scale is defined (Vela writes no other)");
    }
    if (is_comparison(m)) return;
    if (!is_unit(op.elementwise.opa)) refuse("NPU_SET_IFM_SCALE", "only a unit IFM scale is defined");
    if (op.has_ifm2 && !is_unit(op.elementwise.opb)) refuse("NPU_SET_IFM2_SCALE", "only a unit IFM2 scale is defined");
    if (op.ifm.zero_point) refuse("NPU_SET_IFM_ZERO_POINT", "only zero point 0 is defined");
    if (op.has_ifm2 && op.ifm2.zero_point) refuse("NPU_SET_IFM2_ZERO_POINT", "only zero point 0 is defined");
    if (op.ofm.zero_point) refuse("NPU_SET_OFM_ZERO_POINT", "only zero point 0 is defined");
    const RoundMode round = op.output.round;
    if ((m == ElementwiseMode::Lsr || m == ElementwiseMode::Div) && round != RoundMode::DoubleSymmetric &&
        round != RoundMode::Truncate) {
        refuse("NPU_SET_OFM_SCALE.round_mode", "only DOUBLE_SYMMETRIC and TRUNCATE_TO_ZERO are defined");
    }
}

// Compare results in Vela's internal boolean encoding: true is all ones (-1), false 0
// (graphir_optimiser.cpp ConvertBool8Tensors converts TFLite's 1 and TOSA's non-zero to it and
// back with an AND 1 at graph outputs; SELECT is AND / AND_NOT / OR on it).
int64_t truth(bool b) { return b ? -1 : 0; }

}  // namespace

void run_elementwise_u85(const DecodedOp& op, ExecutionContext& ctx) {
    const LazyLocation where{&ctx.source, op.offset, "NPU_OP_ELEMENTWISE"};
    const Elementwise& e = op.elementwise;
    const Operand ifm(op, op.ifm, "IFM", ctx);
    std::optional<Operand> ifm2;
    if (op.has_ifm2) ifm2.emplace(op, op.ifm2, "IFM2", ctx);
    const OutputPipeline out(op, ctx);
    const FeatureMapView ofm = ctx.view(op, op.ofm, op.ofm.height, op.ofm.width, op.ofm.depth, "OFM", true);
    const Scale& ofm_scale = op.output.global_scale;
    const RoundMode round = op.output.round;
    auto scale_output = [&](int64_t v) { return scale_value(v, ofm_scale.scale, ofm_scale.shift, round); };
    if (is_integer_mode(e.mode)) check_integer_mode(op, ctx);
    const Precision& type = op.ifm.precision;

    for (int y = 0; y < op.ofm.height; ++y)
        for (int x = 0; x < op.ofm.width; ++x)
            for (int c = 0; c < op.ofm.depth; ++c) {
                const int64_t a = ifm.load(y, x, c, e.scalar);
                const int64_t b = ifm2 ? ifm2->load(y, x, c, e.scalar) : 0;
                int64_t v = 0;
                switch (e.mode) {
                    case ElementwiseMode::Add: v = scale_output(scale_input(a, e.opa) + scale_input(b, e.opb)); break;
                    case ElementwiseMode::Sub: v = scale_output(scale_input(a, e.opa) - scale_input(b, e.opb)); break;
                    case ElementwiseMode::Mul: {
                        const int64_t product = scale_input(a, e.opa) * scale_input(b, e.opb);
                        // As on U55, 32-bit operands ignore the scale and only shift.
                        v = op.ifm.precision.bits == 32 ? scale_value(product, 1, ofm_scale.shift, round)
                                                        : scale_output(product);
                        break;
                    }
                    case ElementwiseMode::Min:
                        v = scale_output(std::min(scale_input(a, e.opa), scale_input(b, e.opb)));
                        break;
                    case ElementwiseMode::Max:
                        v = scale_output(std::max(scale_input(a, e.opa), scale_input(b, e.opb)));
                        break;
                    case ElementwiseMode::LRelu:
                        // IFM_SCALE rescales the non-negative inputs, IFM2_SCALE (alpha) the negative ones.
                        v = scale_output(a >= 0 ? scale_input(a, e.opa) : scale_input(a, e.opb));
                        break;
                    case ElementwiseMode::Abs: v = scale_output(scale_input(a < 0 ? -a : a, e.opa)); break;
                    case ElementwiseMode::Clz: v = std::countl_zero(static_cast<uint32_t>(a)); break;
                    case ElementwiseMode::Shl: {
                        const int n = static_cast<int>(std::clamp<int64_t>(b, 0, 31));
                        v = static_cast<int32_t>(static_cast<uint32_t>(a) << n);
                        break;
                    }
                    case ElementwiseMode::Shr: {
                        const int n = static_cast<int>(std::clamp<int64_t>(b, 0, 31));
                        v = round == RoundMode::Natural && n > 0 ? (a + (int64_t{1} << (n - 1))) >> n : a >> n;
                        break;
                    }
                    case ElementwiseMode::Lsr: {
                        // TOSA LOGICAL_RIGHT_SHIFT: the element's bits shifted as unsigned.
                        const int n = static_cast<int>(std::clamp<int64_t>(b, 0, 31));
                        const uint64_t bits = static_cast<uint64_t>(a) & ((uint64_t{1} << type.bits) - 1);
                        v = in_width(static_cast<int64_t>(bits >> n), type);
                        break;
                    }
                    case ElementwiseMode::Div: {
                        // TFLite's integer DIV and TOSA INTDIV truncate toward zero; both leave a
                        // zero divisor and an int32 overflow undefined, so they are refused.
                        if (b == 0) {
                            throw Error({ctx.source, op.offset, ifm2 && !e.ifm2_scalar
                                                                    ? "IFM2" : "NPU_SET_OP_SCALAR.scalar"},
                                        fmt::format("DIV by zero at OFM element ({}, {}, {})", y, x, c));
                        }
                        v = a / b;
                        if (v > precision_range(type).max) {
                            throw Error(where, fmt::format("DIV overflows the IFM type at OFM element ({}, {}, {})",
                                                           y, x, c));
                        }
                        break;
                    }
                    // Operands scaled as TFLite's quantized comparisons rescale them (Vela moves
                    // their left shift of 8 into IFM_SCALE / IFM2_SCALE).
                    case ElementwiseMode::CmpEq: v = truth(scale_input(a, e.opa) == scale_input(b, e.opb)); break;
                    case ElementwiseMode::CmpNe: v = truth(scale_input(a, e.opa) != scale_input(b, e.opb)); break;
                    case ElementwiseMode::CmpGe: v = truth(scale_input(a, e.opa) >= scale_input(b, e.opb)); break;
                    case ElementwiseMode::CmpGt: v = truth(scale_input(a, e.opa) > scale_input(b, e.opb)); break;
                    case ElementwiseMode::And: v = in_width(a & b, type); break;
                    case ElementwiseMode::Or: v = in_width(a | b, type); break;
                    case ElementwiseMode::Xor: v = in_width(a ^ b, type); break;
                    case ElementwiseMode::Not: v = in_width(~a, type); break;
                    // IFM and not IFM2 (Vela's SELECT: the false-side values AND_NOT the selector).
                    case ElementwiseMode::AndNot: v = in_width(a & ~b, type); break;
                }
                ofm.store(y, x, c, out.finish(v));
            }
}

}  // namespace ethosu
