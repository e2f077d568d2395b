// NPU_OP_CONV (also fully connected, as a 1x1 convolution) and NPU_OP_DEPTHWISE.

#include <fmt/format.h>

#include "emulator/engine/output_pipeline.h"
#include "emulator/engine/executor.h"
#include "emulator/engine/kernel_geometry.h"
#include "emulator/engine/output_stage.h"
#include "emulator/isa/error.h"

namespace ethosu {

void run_conv(const DecodedOp& op, ExecutionContext& ctx) {
    const ErrorLocation where{ctx.source, op.offset, std::string(op_kind_name(op.kind))};
    if (op.weights_from_ifm2) throw Error(where, "weights from IFM2 are not supported yet");
    const bool depthwise = op.kind == OpKind::Depthwise;
    const Kernel& k = op.kernel;
    const IfmGeometry geo = ifm_geometry(op, where);
    const OpWeights& w = ctx.weights.get(op, ctx.config, ctx.memory, ctx.source);
    if (w.ofm_depth < op.ofm.depth || (!depthwise && w.ifm_depth != op.ifm.depth)) {
        throw Error(where, fmt::format("weights hold {} OFM x {} IFM channels, the op needs {} x {}", w.ofm_depth,
                                       w.ifm_depth, op.ofm.depth, op.ifm.depth));
    }
    // The decoded kernel is either the programmed (dilated) size, or the undilated taps.
    const bool taps_dilated = w.kernel_height == k.height && w.kernel_width == k.width;
    const int step_y = taps_dilated ? 1 : k.dilation_y;
    const int step_x = taps_dilated ? 1 : k.dilation_x;

    const FeatureMapView ifm = ctx.view(op, op.ifm, geo.height, geo.width, op.ifm.depth, "IFM");
    const FeatureMapView ofm = ctx.view(op, op.ofm, op.ofm.height, op.ofm.width, op.ofm.depth, "OFM", true);
    const OutputPipeline act(op, ctx);
    const int64_t ifm_zp = op.ifm.zero_point;

    for (int oy = 0; oy < op.ofm.height; ++oy) {
        for (int ox = 0; ox < op.ofm.width; ++ox) {
            const int iy0 = oy * k.stride_y - k.padding.top;
            const int ix0 = ox * k.stride_x - k.padding.left;
            for (int oc = 0; oc < op.ofm.depth; ++oc) {
                int64_t acc = 0;
                for (int ky = 0; ky < w.kernel_height; ++ky) {
                    const int iy = iy0 + ky * step_y;
                    if (iy < 0 || iy >= geo.height) continue;  // padding contributes zero
                    for (int kx = 0; kx < w.kernel_width; ++kx) {
                        const int ix = ix0 + kx * step_x;
                        if (ix < 0 || ix >= geo.width) continue;
                        if (depthwise) {
                            acc += (ifm.load(iy, ix, oc) - ifm_zp) * w.at(oc, ky, kx, 0);
                        } else {
                            for (int ic = 0; ic < op.ifm.depth; ++ic)
                                acc += (ifm.load(iy, ix, ic) - ifm_zp) * w.at(oc, ky, kx, ic);
                        }
                    }
                }
                ofm.store(oy, ox, oc, act.apply(acc, oc, &w));
            }
        }
    }
}

}  // namespace ethosu
