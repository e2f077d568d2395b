// NPU_OP_ELEMENTWISE on U55/U65: binary ops with IFM2 tensor, broadcast or scalar operands,
// the OPA/OPB input scaling of ADD/SUB, and unary LRELU/ABS/CLZ.

#include <algorithm>
#include <bit>
#include <optional>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/engine/output_pipeline.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// Scale of the IFM scale modes (IFM_PRECISION.scale_mode).
constexpr int kOpaOpb16 = 0, kOpa32 = 1, kOpb32 = 2;

int64_t shift_left(int64_t v, int n) { return static_cast<int64_t>(static_cast<uint64_t>(v) << n); }

}  // namespace

void run_elementwise(const DecodedOp& op, ExecutionContext& ctx) {
    const LazyLocation where{&ctx.source, op.offset, "NPU_OP_ELEMENTWISE"};
    if (ctx.config.generation == Generation::U85) return run_elementwise_u85(op, ctx);
    const Elementwise& e = op.elementwise;
    const int H = op.ofm.height, W = op.ofm.width, C = op.ofm.depth;
    const FeatureMapView ifm = ctx.view(op, op.ifm, H, W, C, "IFM");
    const FeatureMapView ofm = ctx.view(op, op.ofm, H, W, C, "OFM", true);
    std::optional<FeatureMapView> ifm2;
    if (op.has_ifm2 && !e.ifm2_scalar) {
        ifm2.emplace(op.ifm2, e.broadcast_h ? 1 : H, e.broadcast_w ? 1 : W, e.broadcast_c ? 1 : C, ctx.memory,
                     ctx.access(op, "IFM2"), false);
    }
    const OutputPipeline out(op, ctx);
    const Scale& ofm_scale = op.output.global_scale;
    const RoundMode round = op.output.round;
    const int ifm_bits = op.ifm.precision.bits;
    // ADD/SUB left shift of the operands: TFLite's 20 for 8-bit, 15 for 16-bit inputs.
    const int L = ifm_bits == 8 ? 20 : 15;
    const int64_t zp1 = op.ifm.zero_point, zp2 = op.ifm2.zero_point;

    // A pixel at a time: its channels are read, computed, then written.
    std::vector<int64_t>& operands = ctx.scratch.operands;
    operands.resize(3 * static_cast<size_t>(C));
    int64_t* const first = operands.data();
    int64_t* const second = first + C;
    int64_t* const result = second + C;
    if (!ifm2) std::fill(second, second + C, e.ifm2_scalar ? e.scalar - zp2 : 0);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            ifm.load_channels(y, x, C, zp1, first);
            if (ifm2) {
                const int y2 = e.broadcast_h ? 0 : y, x2 = e.broadcast_w ? 0 : x;
                if (e.broadcast_c) std::fill(second, second + C, ifm2->load(y2, x2, 0) - zp2);
                else ifm2->load_channels(y2, x2, C, zp2, second);
            }
            for (int c = 0; c < C; ++c) {
                const int64_t a = first[c], b = second[c];
                // The operation's first and second operands (ORDER_A swaps IFM and IFM2).
                const int64_t lhs = e.reversed_operands ? b : a, rhs = e.reversed_operands ? a : b;
                int64_t v = 0;
                switch (e.mode) {
                    case ElementwiseMode::Add:
                    case ElementwiseMode::Sub: {
                        // OPA/OPB name the operation's operands, after the operand order: with
                        // ORDER_A, OPB_32 scales the IFM. The 32-bit scale is always OPA_SCALE's.
                        const auto scale32 = [&](int64_t operand) {
                            return scale_value(shift_left(operand, L), e.opa.scale, e.opa.shift + L,
                                               RoundMode::DoubleSymmetric);
                        };
                        int64_t sa = lhs, sb = rhs;
                        if (e.ifm_scale_mode == kOpaOpb16) {
                            sa = lhs * (e.opa.scale & 0xFFFF);
                            sb = rhs * (e.opb.scale & 0xFFFF);
                        } else if (e.ifm_scale_mode == kOpa32) {
                            sa = scale32(lhs);
                            sb = shift_left(rhs, L - 1);
                        } else if (e.ifm_scale_mode == kOpb32) {
                            sa = shift_left(lhs, L - 1);
                            sb = scale32(rhs);
                        }
                        const int64_t r = e.mode == ElementwiseMode::Add ? sa + sb : sa - sb;
                        v = scale_value(r, ofm_scale.scale, ofm_scale.shift, round);
                        break;
                    }
                    case ElementwiseMode::Mul: {
                        // 32-bit operands ignore the scale and only shift.
                        const uint32_t scale = ifm_bits == 32 ? 1 : ofm_scale.scale;
                        v = scale_value(a * b, scale, ofm_scale.shift, round);
                        break;
                    }
                    case ElementwiseMode::Min:
                    case ElementwiseMode::Max: {
                        const int64_t m = e.mode == ElementwiseMode::Min ? std::min(a, b) : std::max(a, b);
                        v = scale_value(m, ofm_scale.scale, ofm_scale.shift, round);
                        break;
                    }
                    case ElementwiseMode::LRelu:
                        v = a >= 0 ? a : scale_value(a, ofm_scale.scale, ofm_scale.shift, round);
                        break;
                    case ElementwiseMode::Abs:
                        v = scale_value(a < 0 ? -a : a, ofm_scale.scale, ofm_scale.shift, round);
                        break;
                    case ElementwiseMode::Clz:
                        v = std::countl_zero(static_cast<uint32_t>(a));
                        break;
                    case ElementwiseMode::Shl: {
                        const int n = static_cast<int>(std::clamp<int64_t>(rhs, 0, 31));
                        v = static_cast<int32_t>(static_cast<uint32_t>(lhs) << n);
                        break;
                    }
                    case ElementwiseMode::Shr: {
                        const int n = static_cast<int>(std::clamp<int64_t>(rhs, 0, 31));
                        v = round == RoundMode::Natural && n > 0 ? (lhs + (int64_t{1} << (n - 1))) >> n : lhs >> n;
                        break;
                    }
                    default:
                        throw Error(where, "this elementwise mode does not exist on U55/U65");
                }
                result[c] = out.finish(v);
            }
            ofm.store_channels(y, x, C, result);
        }
}

}  // namespace ethosu
