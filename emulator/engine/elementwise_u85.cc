// NPU_OP_ELEMENTWISE on U85: IFM and IFM2 each scaled on input (IFM_SCALE / IFM2_SCALE with the
// dbl_rnd pre-shift of ADD/SUB), either operand broadcast along H, W, C or a scalar, and the
// result scaled by OFM_SCALE with the OFM rounding mode. The comparisons, bitwise operations,
// LSR and DIV work on integers as Vela 5.1 programs them (unit OFM_SCALE, see check_integer_mode).

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <vector>

#include "emulator/engine/elementwise_rows.h"
#include "emulator/engine/kernel_context.h"
#include "emulator/engine/output_pipeline.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// One input operand: a feature map read with its broadcast, or the OP_SCALAR value.
class Operand {
public:
    Operand(const DecodedOp& op, const FeatureMap& fm, const char* what, ExecutionContext& ctx) : fm_(fm) {
        const BroadcastMode b = fm.broadcast;
        if (is_scalar(b)) return;
        view_.emplace(ctx.view(op, fm, along_h(b) ? 1 : op.ofm.height, along_w(b) ? 1 : op.ofm.width,
                               along_c(b) ? 1 : op.ofm.depth, what));
    }
    // Channels [0, count) of OFM element (y, x), zero point taken off.
    void load_channels(int y, int x, int count, int32_t scalar, int64_t* out) const {
        if (!view_) {
            std::fill(out, out + count, int64_t{scalar} - fm_.zero_point);
            return;
        }
        const BroadcastMode b = fm_.broadcast;
        y = along_h(b) ? 0 : y;
        x = along_w(b) ? 0 : x;
        if (along_c(b)) std::fill(out, out + count, view_->load(y, x, 0) - fm_.zero_point);
        else view_->load_channels(y, x, count, fm_.zero_point, out);
    }
    const FeatureMapView* view() const { return view_ ? &*view_ : nullptr; }

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

bool is_unit(const Scale& s) { return s.scale == 1 && s.shift == 0 && s.double_round == 0; }

// v taken as a two's complement value of the IFM's width and read back as that type: bitwise
// results and logical shifts stay within the element, as TOSA defines them per type.
int64_t in_width(int64_t v, const Precision& p) {
    const uint64_t mask = (uint64_t{1} << p.bits) - 1;
    const uint64_t bits = static_cast<uint64_t>(v) & mask;
    if (!p.is_signed || !(bits >> (p.bits - 1))) return static_cast<int64_t>(bits);
    return static_cast<int64_t>(bits | ~mask);
}

// The modes the description marks same_type, unscaled and truncating (comparisons, bitwise
// modes, LSR, DIV) as Vela 5.1 programs them (graph optimisers and
// ethos_u85_register_cs_generator.cpp): same_type, IFM and IFM2 of one type (8, 16 or 32 bits)
// and OFM_SCALE unit; unscaled, also unit input scales and zero points 0; truncating, also the
// OFM rounding mode Vela writes (DOUBLE_SYMMETRIC, from AUTO) or TRUNCATE_TO_ZERO. Anything else
// has no reference to be checked against and is refused.
void check_integer_mode(const DecodedOp& op, const ExecutionContext& ctx) {
    const ElementwiseMode m = op.elementwise.mode;
    auto refuse = [&](const char* field, const std::string& why) {
        throw Error({ctx.source, op.offset, field, OffsetKind::Command},
                    fmt::format("elementwise mode {}: {}", EngineEnum<ElementwiseMode>::names[static_cast<size_t>(m)], why),
                    ErrorKind::Unsupported);
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
    if (!unscaled(m)) return;
    if (!is_unit(op.elementwise.opa)) refuse("NPU_SET_IFM_SCALE", "only a unit IFM scale is defined");
    if (op.has_ifm2 && !is_unit(op.elementwise.opb)) refuse("NPU_SET_IFM2_SCALE", "only a unit IFM2 scale is defined");
    if (op.ifm.zero_point) refuse("NPU_SET_IFM_ZERO_POINT", "only zero point 0 is defined");
    if (op.has_ifm2 && op.ifm2.zero_point) refuse("NPU_SET_IFM2_ZERO_POINT", "only zero point 0 is defined");
    if (op.ofm.zero_point) refuse("NPU_SET_OFM_ZERO_POINT", "only zero point 0 is defined");
    const RoundMode round = op.output.round;
    if (truncating(m) && round != RoundMode::DoubleSymmetric &&
        round != RoundMode::Truncate) {
        refuse("NPU_SET_OFM_SCALE.round_mode", "only DOUBLE_SYMMETRIC and TRUNCATE_TO_ZERO are defined");
    }
}

// The largest magnitude an operand reaches in its input scaling: its type's range (or its scalar)
// less its zero point, shifted left by dbl_rnd, then times scale / 2^(shift + dbl_rnd), plus one
// for the rounding. A pre-shifted magnitude past 64 bits is returned as it is: already too wide.
int128 scaled_bound(const FeatureMap& fm, int32_t scalar, const Scale& s) {
    const Precision& p = fm.precision;
    const int128 one = 1;
    const int128 lo = is_scalar(fm.broadcast) ? scalar : p.is_signed ? -(one << (p.bits - 1)) : 0;
    const int128 hi = is_scalar(fm.broadcast) ? scalar
                      : p.is_signed                   ? (one << (p.bits - 1)) - 1
                                                      : (one << p.bits) - 1;
    const int128 a = lo - fm.zero_point, b = hi - fm.zero_point;
    const int128 shifted = std::max(a < 0 ? -a : a, b < 0 ? -b : b) << s.double_round;  // below 2^65+31
    if (shifted > INT64_MAX) return shifted;
    return ((shifted * s.scale) >> (s.shift + s.double_round)) + 1;  // below 2^95
}

bool scales_operands(ElementwiseMode m) {
    switch (m) {
        case ElementwiseMode::Add: case ElementwiseMode::Sub: case ElementwiseMode::Mul: case ElementwiseMode::Min:
        case ElementwiseMode::Max: case ElementwiseMode::LRelu: case ElementwiseMode::Abs: case ElementwiseMode::CmpEq:
        case ElementwiseMode::CmpNe: case ElementwiseMode::CmpGe: case ElementwiseMode::CmpGt: return true;
        default: return false;
    }
}

// The scaling modes work in 64 bits: each operand shifted left by its dbl_rnd and scaled, then
// added (ADD, SUB), multiplied (MUL) or compared. Vela 5.1 programs 8- to 32-bit operands whose
// values stay far inside, and unit input scales for MUL (ethos_u85_register_cs_generator.cpp; no
// corpus stream has a 64-bit operand). Widths, scales and zero points that could carry a value past
// 64 bits have no defined result and are refused before the op runs, whatever the data: the fuzz
// campaign's int8 MUL with zero point 32767 and IFM scale 2^19, and its ADD of two int64
// operands, one scaled by 1557527444.
void check_scaled_range(const DecodedOp& op, const ExecutionContext& ctx) {
    const Elementwise& e = op.elementwise;
    const ElementwiseMode m = e.mode;
    const int128 a = scaled_bound(op.ifm, e.scalar, e.opa);
    // LRELU scales the IFM's negative values by IFM2_SCALE; ABS negates the IFM before scaling it.
    const int128 b = m == ElementwiseMode::LRelu ? scaled_bound(op.ifm, e.scalar, e.opb)
                     : op.has_ifm2              ? scaled_bound(op.ifm2, e.scalar, e.opb)
                                                : 1;
    const auto refuse = [&](const char* what) {
        throw Error({ctx.source, op.offset, "NPU_SET_IFM_SCALE", OffsetKind::Command},
                    fmt::format("elementwise mode {}: the scaled operands reach {} and {} in magnitude{}, which can "
                                "leave 64 bits (input widths, scales and zero points no stream of Vela's reaches)",
                                EngineEnum<ElementwiseMode>::names[static_cast<size_t>(m)], static_cast<double>(a),
                                static_cast<double>(b), what),
                    ErrorKind::Unsupported);
    };
    // Each bound first: two of them past 64 bits can multiply past 128.
    if (a > INT64_MAX || b > INT64_MAX) refuse("");
    if (m == ElementwiseMode::Mul && a * b > INT64_MAX) refuse(", whose product");
    if ((m == ElementwiseMode::Add || m == ElementwiseMode::Sub) && a + b > INT64_MAX) refuse(", whose sum");
}

// Compare results in Vela's internal boolean encoding: true is all ones (-1), false 0
// (graphir_optimiser.cpp ConvertBool8Tensors converts TFLite's 1 and TOSA's non-zero to it and
// back with an AND 1 at graph outputs; SELECT is AND / AND_NOT / OR on it).
int64_t truth(bool b) { return b ? -1 : 0; }

// The op over a band of OFM rows, a pixel at a time: its channels are read, computed (one loop
// over the channels per mode), then written.
struct Elementwise85 {
    const DecodedOp& op;
    const ExecutionContext& ctx;
    const Operand& ifm;
    const std::optional<Operand>& ifm2;
    const FeatureMapView& ofm;
    const OutputPipeline& out;

    // buffer: the worker's own.
    void rows(int first_row, int last_row, std::vector<int64_t>& buffer) const {
        const Elementwise& e = op.elementwise;
        const int W = op.ofm.width, C = op.ofm.depth;
        const Scale& ofm_scale = op.output.global_scale;
        const RoundMode round = op.output.round;
        const Precision& type = op.ifm.precision;
        const auto scale_output = [&](int64_t v) { return scale_value(v, ofm_scale.scale, ofm_scale.shift, round); };
        const OperandRows pixel(buffer, C);
        int64_t* const first = pixel.first;
        int64_t* const second = pixel.second;
        int64_t* const values = pixel.values;
        int64_t* const result = pixel.result;
        if (!ifm2) std::fill(second, second + C, 0);
        const auto each = [&](auto f) {
            for (int c = 0; c < C; ++c) values[c] = f(first[c], second[c]);
        };
        for (int y = first_row; y < last_row; ++y)
            for (int x = 0; x < W; ++x) {
                ifm.load_channels(y, x, C, e.scalar, first);
                if (ifm2) ifm2->load_channels(y, x, C, e.scalar, second);
                switch (e.mode) {
                    case ElementwiseMode::Add:
                        each([&](int64_t a, int64_t b) { return scale_output(scale_input(a, e.opa) + scale_input(b, e.opb)); });
                        break;
                    case ElementwiseMode::Sub:
                        each([&](int64_t a, int64_t b) { return scale_output(scale_input(a, e.opa) - scale_input(b, e.opb)); });
                        break;
                    case ElementwiseMode::Mul:
                        // As on U55, 32-bit operands ignore the scale and only shift.
                        each([&](int64_t a, int64_t b) {
                            const int64_t product = scale_input(a, e.opa) * scale_input(b, e.opb);
                            return type.bits == 32 ? scale_value(product, 1, ofm_scale.shift, round) : scale_output(product);
                        });
                        break;
                    case ElementwiseMode::Min:
                        each([&](int64_t a, int64_t b) { return scale_output(std::min(scale_input(a, e.opa), scale_input(b, e.opb))); });
                        break;
                    case ElementwiseMode::Max:
                        each([&](int64_t a, int64_t b) { return scale_output(std::max(scale_input(a, e.opa), scale_input(b, e.opb))); });
                        break;
                    case ElementwiseMode::LRelu:
                        // IFM_SCALE rescales the non-negative inputs, IFM2_SCALE (alpha) the negative ones.
                        each([&](int64_t a, int64_t) { return scale_output(a >= 0 ? scale_input(a, e.opa) : scale_input(a, e.opb)); });
                        break;
                    case ElementwiseMode::Abs:
                        each([&](int64_t a, int64_t) { return scale_output(scale_input(a < 0 ? -a : a, e.opa)); });
                        break;
                    case ElementwiseMode::Clz:
                        each([](int64_t a, int64_t) -> int64_t { return std::countl_zero(static_cast<uint32_t>(a)); });
                        break;
                    case ElementwiseMode::Shl:
                        each([](int64_t a, int64_t b) -> int64_t {
                            const int n = static_cast<int>(std::clamp<int64_t>(b, 0, 31));
                            return static_cast<int32_t>(static_cast<uint32_t>(a) << n);
                        });
                        break;
                    case ElementwiseMode::Shr:
                        each([&](int64_t a, int64_t b) {
                            const int n = static_cast<int>(std::clamp<int64_t>(b, 0, 31));
                            return round == RoundMode::Natural && n > 0 ? (a + (int64_t{1} << (n - 1))) >> n : a >> n;
                        });
                        break;
                    case ElementwiseMode::Lsr:
                        // TOSA LOGICAL_RIGHT_SHIFT: the element's bits shifted as unsigned.
                        each([&](int64_t a, int64_t b) {
                            const int n = static_cast<int>(std::clamp<int64_t>(b, 0, 31));
                            const uint64_t bits = static_cast<uint64_t>(a) & ((uint64_t{1} << type.bits) - 1);
                            return in_width(static_cast<int64_t>(bits >> n), type);
                        });
                        break;
                    case ElementwiseMode::Div:
                        for (int c = 0; c < C; ++c) values[c] = divide(first[c], second[c], y, x, c);
                        break;
                    // Operands scaled as TFLite's quantized comparisons rescale them (Vela moves
                    // their left shift of 8 into IFM_SCALE / IFM2_SCALE).
                    case ElementwiseMode::CmpEq:
                        each([&](int64_t a, int64_t b) { return truth(scale_input(a, e.opa) == scale_input(b, e.opb)); });
                        break;
                    case ElementwiseMode::CmpNe:
                        each([&](int64_t a, int64_t b) { return truth(scale_input(a, e.opa) != scale_input(b, e.opb)); });
                        break;
                    case ElementwiseMode::CmpGe:
                        each([&](int64_t a, int64_t b) { return truth(scale_input(a, e.opa) >= scale_input(b, e.opb)); });
                        break;
                    case ElementwiseMode::CmpGt:
                        each([&](int64_t a, int64_t b) { return truth(scale_input(a, e.opa) > scale_input(b, e.opb)); });
                        break;
                    case ElementwiseMode::And: each([&](int64_t a, int64_t b) { return in_width(a & b, type); }); break;
                    case ElementwiseMode::Or: each([&](int64_t a, int64_t b) { return in_width(a | b, type); }); break;
                    case ElementwiseMode::Xor: each([&](int64_t a, int64_t b) { return in_width(a ^ b, type); }); break;
                    case ElementwiseMode::Not: each([&](int64_t a, int64_t) { return in_width(~a, type); }); break;
                    // IFM and not IFM2 (Vela's SELECT: the false-side values AND_NOT the selector).
                    case ElementwiseMode::AndNot: each([&](int64_t a, int64_t b) { return in_width(a & ~b, type); }); break;
                }
                out.finish_channels(values, C, result);
                ofm.store_channels(y, x, C, result);
            }
    }

    // TFLite's integer DIV and TOSA INTDIV truncate toward zero; both leave a zero divisor and an
    // int32 overflow undefined, so they are refused.
    int64_t divide(int64_t a, int64_t b, int y, int x, int c) const {
        if (b == 0) {
            throw Error({ctx.source, op.offset, ifm2 && !op.elementwise.ifm2_scalar ? "IFM2" : "NPU_SET_OP_SCALAR.scalar", OffsetKind::Command},
                        fmt::format("DIV by zero at OFM element ({}, {}, {})", y, x, c));
        }
        const int64_t v = a / b;
        if (v > precision_range(op.ifm.precision).max) {
            throw Error({ctx.source, op.offset, "NPU_OP_ELEMENTWISE", OffsetKind::Command},
                        fmt::format("DIV overflows the IFM type at OFM element ({}, {}, {})", y, x, c));
        }
        return v;
    }
};

}  // namespace

void run_elementwise_u85(const DecodedOp& op, ExecutionContext& ctx) {
    const Operand ifm(op, op.ifm, "IFM", ctx);
    std::optional<Operand> ifm2;
    if (op.has_ifm2) ifm2.emplace(op, op.ifm2, "IFM2", ctx);
    const OutputPipeline out(op, ctx);
    const FeatureMapView ofm = ctx.view(op, op.ofm, op.ofm.height, op.ofm.width, op.ofm.depth, "OFM", true);
    if (same_type(op.elementwise.mode)) check_integer_mode(op, ctx);
    if (scales_operands(op.elementwise.mode)) check_scaled_range(op, ctx);
    // Not in parallel for DIV, whose error names the first element that fails in OFM order.
    run_elementwise_rows(op, ctx, ofm, {ifm.view(), ifm2 ? ifm2->view() : nullptr},
                         op.elementwise.mode != ElementwiseMode::Div, Elementwise85{op, ctx, ifm, ifm2, ofm, out});
}

}  // namespace ethosu
