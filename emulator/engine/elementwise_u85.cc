// NPU_OP_ELEMENTWISE on U85: IFM and IFM2 each scaled on input (IFM_SCALE / IFM2_SCALE with the
// dbl_rnd pre-shift of ADD/SUB), either operand broadcast along H, W, C or a scalar, and the
// result scaled by OFM_SCALE with the OFM rounding mode. The comparisons, bitwise operations,
// LSR and DIV work on integers as Vela 5.1 programs them (unit OFM_SCALE, see validate.cc check_integer_mode).

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
        view_.emplace(ctx.view(op, fm, along_h(b) ? 1 : op.kernel().ofm.height, along_w(b) ? 1 : op.kernel().ofm.width,
                               along_c(b) ? 1 : op.kernel().ofm.depth, what));
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

// v taken as a two's complement value of the IFM's width and read back as that type: bitwise
// results and logical shifts stay within the element, as TOSA defines them per type.
int64_t in_width(int64_t v, const Precision& p) {
    const uint64_t mask = (uint64_t{1} << p.bits) - 1;
    const uint64_t bits = static_cast<uint64_t>(v) & mask;
    if (!p.is_signed || !(bits >> (p.bits - 1))) return static_cast<int64_t>(bits);
    return static_cast<int64_t>(bits | ~mask);
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
        const Elementwise& e = op.kernel().elementwise();
        const int W = op.kernel().ofm.width, C = op.kernel().ofm.depth;
        const Scale& ofm_scale = op.kernel().output.global_scale;
        const RoundMode round = op.kernel().output.round;
        const Precision& type = op.kernel().ifm.precision;
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
            throw Error({ctx.source, op.offset, ifm2 && !op.kernel().elementwise().ifm2_scalar ? "IFM2" : "NPU_SET_OP_SCALAR.scalar", OffsetKind::Command},
                        fmt::format("DIV by zero at OFM element ({}, {}, {})", y, x, c));
        }
        const int64_t v = a / b;
        if (v > precision_range(op.kernel().ifm.precision).max) {
            throw Error({ctx.source, op.offset, "NPU_OP_ELEMENTWISE", OffsetKind::Command},
                        fmt::format("DIV overflows the IFM type at OFM element ({}, {}, {})", y, x, c));
        }
        return v;
    }
};

}  // namespace

void run_elementwise_u85(const DecodedOp& op, ExecutionContext& ctx) {
    const Operand ifm(op, op.kernel().ifm, "IFM", ctx);
    std::optional<Operand> ifm2;
    if (op.kernel().has_ifm2) ifm2.emplace(op, op.kernel().ifm2, "IFM2", ctx);
    const OutputPipeline out(op, ctx);
    const FeatureMapView ofm = ctx.view(op, op.kernel().ofm, op.kernel().ofm.height, op.kernel().ofm.width, op.kernel().ofm.depth, "OFM", true);
    // Not in parallel for DIV, whose error names the first element that fails in OFM order.
    run_elementwise_rows(op, ctx, ofm, {ifm.view(), ifm2 ? ifm2->view() : nullptr},
                         op.kernel().elementwise().mode != ElementwiseMode::Div, Elementwise85{op, ctx, ifm, ifm2, ofm, out});
}

}  // namespace ethosu
