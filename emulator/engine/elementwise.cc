// NPU_OP_ELEMENTWISE on U55/U65: binary ops with IFM2 tensor, broadcast or scalar operands,
// the OPA/OPB input scaling of ADD/SUB, and unary LRELU/ABS/CLZ.

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <optional>
#include <vector>

#include "emulator/engine/elementwise_rows.h"
#include "emulator/engine/kernel_context.h"
#include "emulator/engine/output_pipeline.h"
#include "emulator/engine/scaled_add.h"
#include "emulator/engine/simd.h"

namespace ethosu {
namespace {

int64_t shift_left(int64_t v, int n) { return static_cast<int64_t>(static_cast<uint64_t>(v) << n); }

}  // namespace

ETHOSU_SIMD_CLONES void add_scaled(const int64_t* __restrict scaled, const int64_t* __restrict shifted, int count,
                                   const ScaledAddTerms& t, int64_t* __restrict out) {
    for (int c = 0; c < count; ++c) {
        const int64_t v = t.scaled_sign * t.operand(scaled[c] * (int64_t{1} << t.operand_shift)) +
                          t.shifted_sign * (shifted[c] * (int64_t{1} << t.other_shift));
        out[c] = t.output(v);
    }
}

std::optional<ScaledAddTerms> scaled_add_terms(const DecodedOp& op) {
    const Elementwise& e = op.kernel().elementwise();
    const bool opa = e.operand_scaling == OperandScaling::Opa32;
    if ((e.mode != ElementwiseMode::Add && e.mode != ElementwiseMode::Sub) || e.operand_scaling == OperandScaling::Both16)
        return std::nullopt;
    const RoundMode round = op.kernel().output.round;
    if (!closed_form_rounding(round)) return std::nullopt;
    const int operand_shift = add_left_shift(op.kernel().ifm.precision);
    constexpr int64_t kLimit = int64_t{1} << 30;
    // The operation's operands (ORDER_A swaps IFM and IFM2): the first is OPA's, the second OPB's.
    const FeatureMap& first = e.reversed_operands ? op.kernel().ifm2 : op.kernel().ifm;
    const FeatureMap& second = e.reversed_operands ? op.kernel().ifm : op.kernel().ifm2;
    // IFM2 as a scalar is the scalar less its zero point.
    const auto largest = [&](const FeatureMap& fm) {
        return &fm == &op.kernel().ifm2 && e.ifm2_scalar ? std::abs(e.scalar - op.kernel().ifm2.zero_point) : largest_operand(fm);
    };
    const int64_t largest_scaled = largest(opa ? first : second), largest_shifted = largest(opa ? second : first);
    const int operand_scale_shift = e.opa.shift + operand_shift;
    const int output_shift = op.kernel().output.global_scale.shift;
    if (largest_scaled >= (kLimit >> operand_shift) || largest_shifted >= (kLimit >> (operand_shift - 1)) ||
        operand_scale_shift <= 0 || operand_scale_shift >= 63 || output_shift <= 0 || output_shift >= 63)
        return std::nullopt;
    // |scaled operand| <= largest x 2^L x scale / 2^shift, plus one for the rounding.
    const int64_t scaled_bound = ((largest_scaled << operand_shift) * int64_t{e.opa.scale} >> operand_scale_shift) + 1;
    if (scaled_bound + (largest_shifted << (operand_shift - 1)) >= kLimit) return std::nullopt;
    const auto closed = [](uint32_t scale, int shift, bool double_symmetric) {
        return ClosedScale{.scale = scale,
                           .half = int64_t{1} << (shift - 1),
                           .nudge = double_symmetric && shift > 31 ? kLimit : 0,
                           .shift = shift};
    };
    const int64_t sign = e.mode == ElementwiseMode::Add ? 1 : -1;
    return ScaledAddTerms{.operand = closed(e.opa.scale, operand_scale_shift, true),
                          .output = closed(op.kernel().output.global_scale.scale, output_shift,
                                           round == RoundMode::DoubleSymmetric),
                          .operand_shift = operand_shift,
                          .other_shift = operand_shift - 1,
                          .scaled_sign = opa ? 1 : sign,
                          .shifted_sign = opa ? sign : 1};
}

namespace {

// The op over a band of OFM rows, a pixel at a time: its channels are read, computed (one loop
// over the channels per mode), then written.
struct Elementwise55 {
    const DecodedOp& op;
    const FeatureMapView& ifm;
    const std::optional<FeatureMapView>& ifm2;
    const FeatureMapView& ofm;
    const OutputPipeline& out;
    std::optional<ScaledAddTerms> scaled_add;  // ADD/SUB in the closed form, where it holds

    // buffer: the worker's own.
    void rows(int first_row, int last_row, std::vector<int64_t>& buffer) const {
        const Elementwise& e = op.kernel().elementwise();
        const int W = op.kernel().ofm.width, C = op.kernel().ofm.depth;
        const Scale& ofm_scale = op.kernel().output.global_scale;
        const RoundMode round = op.kernel().output.round;
        const int ifm_bits = op.kernel().ifm.precision.bits;
        const int L = add_left_shift(op.kernel().ifm.precision);
        const int64_t zp1 = op.kernel().ifm.zero_point, zp2 = op.kernel().ifm2.zero_point;
        const OperandRows pixel(buffer, C);
        int64_t* const first = pixel.first;
        int64_t* const second = pixel.second;
        int64_t* const values = pixel.values;
        int64_t* const result = pixel.result;
        if (!ifm2) std::fill(second, second + C, e.ifm2_scalar ? e.scalar - zp2 : 0);
        // The operation's first and second operands (ORDER_A swaps IFM and IFM2).
        const int64_t* const lhs = e.reversed_operands ? second : first;
        const int64_t* const rhs = e.reversed_operands ? first : second;
        const auto each = [&](const int64_t* x, const int64_t* y, auto f) {
            for (int c = 0; c < C; ++c) values[c] = f(x[c], y[c]);
        };
        const auto scale_output = [&](int64_t v) { return scale_value(v, ofm_scale.scale, ofm_scale.shift, round); };
        for (int y = first_row; y < last_row; ++y)
            for (int x = 0; x < W; ++x) {
                ifm.load_channels(y, x, C, zp1, first);
                if (ifm2) {
                    const int y2 = e.broadcast_h ? 0 : y, x2 = e.broadcast_w ? 0 : x;
                    if (e.broadcast_c) std::fill(second, second + C, ifm2->load(y2, x2, 0) - zp2);
                    else ifm2->load_channels(y2, x2, C, zp2, second);
                }
                switch (e.mode) {
                    case ElementwiseMode::Add:
                    case ElementwiseMode::Sub: {
                        // OPA/OPB name the operation's operands, after the operand order: with
                        // ORDER_A, OPB_32 scales the IFM. The 32-bit scale is always OPA_SCALE's.
                        const auto scale32 = [&](int64_t operand) {
                            return scale_value(shift_left(operand, L), e.opa.scale, e.opa.shift + L,
                                               RoundMode::DoubleSymmetric);
                        };
                        const int64_t opa16 = e.opa.scale & 0xFFFF, opb16 = e.opb.scale & 0xFFFF;
                        const int64_t sign = e.mode == ElementwiseMode::Add ? 1 : -1;
                        if (scaled_add) {
                            const bool opa = e.operand_scaling == OperandScaling::Opa32;
                            add_scaled(opa ? lhs : rhs, opa ? rhs : lhs, C, *scaled_add, values);
                            break;
                        }
                        switch (e.operand_scaling) {
                            case OperandScaling::Both16:
                                each(lhs, rhs, [&](int64_t a, int64_t b) {
                                    return scale_output(a * opa16 + sign * (b * opb16));
                                });
                                break;
                            case OperandScaling::Opa32:
                                each(lhs, rhs, [&](int64_t a, int64_t b) {
                                    return scale_output(scale32(a) + sign * shift_left(b, L - 1));
                                });
                                break;
                            case OperandScaling::Opb32:
                                each(lhs, rhs, [&](int64_t a, int64_t b) {
                                    return scale_output(shift_left(a, L - 1) + sign * scale32(b));
                                });
                                break;
                        }
                        break;
                    }
                    case ElementwiseMode::Mul: {
                        // 32-bit operands ignore the scale and only shift.
                        const uint32_t scale = ifm_bits == 32 ? 1 : ofm_scale.scale;
                        each(first, second, [&](int64_t a, int64_t b) { return scale_value(a * b, scale, ofm_scale.shift, round); });
                        break;
                    }
                    case ElementwiseMode::Min:
                        each(first, second, [&](int64_t a, int64_t b) { return scale_output(std::min(a, b)); });
                        break;
                    case ElementwiseMode::Max:
                        each(first, second, [&](int64_t a, int64_t b) { return scale_output(std::max(a, b)); });
                        break;
                    case ElementwiseMode::LRelu:
                        each(first, second, [&](int64_t a, int64_t) { return a >= 0 ? a : scale_output(a); });
                        break;
                    case ElementwiseMode::Abs:
                        each(first, second, [&](int64_t a, int64_t) { return scale_output(a < 0 ? -a : a); });
                        break;
                    case ElementwiseMode::Clz:
                        each(first, second, [](int64_t a, int64_t) -> int64_t {
                            return std::countl_zero(static_cast<uint32_t>(a));
                        });
                        break;
                    case ElementwiseMode::Shl:
                        each(lhs, rhs, [](int64_t a, int64_t b) -> int64_t {
                            const int n = static_cast<int>(std::clamp<int64_t>(b, 0, 31));
                            return static_cast<int32_t>(static_cast<uint32_t>(a) << n);
                        });
                        break;
                    case ElementwiseMode::Shr:
                        each(lhs, rhs, [&](int64_t a, int64_t b) {
                            const int n = static_cast<int>(std::clamp<int64_t>(b, 0, 31));
                            return round == RoundMode::Natural && n > 0 ? (a + (int64_t{1} << (n - 1))) >> n : a >> n;
                        });
                        break;
                    default: break;  // validate() refuses the U85 modes
                }
                out.finish_channels(values, C, result);
                ofm.store_channels(y, x, C, result);
            }
    }
};

}  // namespace

void run_elementwise(const DecodedOp& op, ExecutionContext& ctx) {
    if (ctx.config.traits().elementwise_scales_each_operand) return run_elementwise_u85(op, ctx);
    const Elementwise& e = op.kernel().elementwise();
    const int H = op.kernel().ofm.height, W = op.kernel().ofm.width, C = op.kernel().ofm.depth;
    const FeatureMapView ifm = ctx.view(op, op.kernel().ifm, H, W, C, "IFM");
    const FeatureMapView ofm = ctx.view(op, op.kernel().ofm, H, W, C, "OFM", true);
    std::optional<FeatureMapView> ifm2;
    if (op.kernel().has_ifm2 && !e.ifm2_scalar) {
        ifm2.emplace(op.kernel().ifm2, e.broadcast_h ? 1 : H, e.broadcast_w ? 1 : W, e.broadcast_c ? 1 : C, ctx.memory,
                     ctx.access(op, "IFM2"), false);
    }
    const OutputPipeline out(op, ctx);
    run_elementwise_rows(op, ctx, ofm, {&ifm, ifm2 ? &*ifm2 : nullptr}, true,
                         Elementwise55{op, ifm, ifm2, ofm, out, scaled_add_terms(op)});
}

}  // namespace ethosu
