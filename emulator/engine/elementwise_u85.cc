// NPU_OP_ELEMENTWISE on U85: IFM and IFM2 each scaled on input (IFM_SCALE / IFM2_SCALE with the
// dbl_rnd pre-shift of ADD/SUB), either operand broadcast along H, W, C or a scalar, and the
// result scaled by OFM_SCALE with the OFM rounding mode.

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

}  // namespace

void run_elementwise_u85(const DecodedOp& op, ExecutionContext& ctx) {
    const ErrorLocation where{ctx.source, op.offset, "NPU_OP_ELEMENTWISE"};
    const Elementwise& e = op.elementwise;
    const Operand ifm(op, op.ifm, "IFM", ctx);
    std::optional<Operand> ifm2;
    if (op.has_ifm2) ifm2.emplace(op, op.ifm2, "IFM2", ctx);
    const OutputPipeline out(op, ctx);
    const FeatureMapView ofm = ctx.view(op, op.ofm, op.ofm.height, op.ofm.width, op.ofm.depth, "OFM", true);
    const Scale& ofm_scale = op.output.global_scale;
    const RoundMode round = op.output.round;
    auto scale_output = [&](int64_t v) { return scale_value(v, ofm_scale.scale, ofm_scale.shift, round); };

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
                    default:
                        throw Error(where, fmt::format("elementwise mode {} is not supported on U85 yet",
                                                       static_cast<int>(e.mode)));
                }
                ofm.store(y, x, c, out.finish(v));
            }
}

}  // namespace ethosu
