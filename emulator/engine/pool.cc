// NPU_OP_POOL: MAX, AVERAGE, REDUCE_SUM.

#include <limits>

#include "emulator/engine/executor.h"
#include "emulator/engine/kernel_geometry.h"
#include "emulator/engine/output_pipeline.h"
#include "emulator/isa/error.h"

namespace ethosu {

void run_pool(const DecodedOp& op, ExecutionContext& ctx) {
    const ErrorLocation where{ctx.source, op.offset, "NPU_OP_POOL"};
    const Kernel& k = op.kernel;
    const int64_t zp = op.ifm.zero_point;
    const OutputPipeline out(op, ctx);
    const Scale& global = op.output.global_scale;

    if (op.pool == PoolMode::ReduceSum) {
        // Sums over the IFM depth into a single OFM channel.
        const FeatureMapView ifm = ctx.view(op, op.ifm, op.ofm.height, op.ofm.width, op.ifm.depth, "IFM");
        const FeatureMapView ofm = ctx.view(op, op.ofm, op.ofm.height, op.ofm.width, op.ofm.depth, "OFM", true);
        for (int y = 0; y < op.ofm.height; ++y)
            for (int x = 0; x < op.ofm.width; ++x) {
                int64_t sum = 0;
                for (int c = 0; c < op.ifm.depth; ++c) sum += ifm.load(y, x, c) - zp;
                const int64_t v = out.finish(scale_value(sum, global.scale, global.shift, op.output.round));
                for (int c = 0; c < op.ofm.depth; ++c) ofm.store(y, x, c, v);
            }
        return;
    }
    // U85 SUM adds the window up; OFM_SCALE carries any division.
    if (op.pool != PoolMode::Max && op.pool != PoolMode::Average && op.pool != PoolMode::Sum) {
        throw Error(where, "this pooling mode is not supported on this NPU yet");
    }
    const IfmGeometry geo = ifm_geometry(op, where);
    const FeatureMapView ifm = ctx.view(op, op.ifm, geo.height, geo.width, op.ofm.depth, "IFM");
    const FeatureMapView ofm = ctx.view(op, op.ofm, op.ofm.height, op.ofm.width, op.ofm.depth, "OFM", true);
    // A padded average pool divides by the valid elements of each window; Vela then writes a
    // unit OFM_SCALE and leaves the division to the hardware.
    const Padding& pad = k.padding;
    // U85 AVERAGE always divides by the valid elements, then applies OFM_SCALE.
    const bool u85 = ctx.config.generation == Generation::U85;
    const bool divide_by_valid =
        op.pool == PoolMode::Average && (u85 || pad.top || pad.left || pad.bottom || pad.right);

    for (int oy = 0; oy < op.ofm.height; ++oy) {
        const int y0 = oy * k.stride_y - pad.top;
        const int ya = std::max(0, y0), yb = std::min(geo.height, y0 + k.height);
        for (int ox = 0; ox < op.ofm.width; ++ox) {
            const int x0 = ox * k.stride_x - pad.left;
            const int xa = std::max(0, x0), xb = std::min(geo.width, x0 + k.width);
            const int64_t valid = int64_t{std::max(0, yb - ya)} * std::max(0, xb - xa);
            for (int c = 0; c < op.ofm.depth; ++c) {
                int64_t acc = op.pool == PoolMode::Max ? std::numeric_limits<int64_t>::min() : 0;
                for (int y = ya; y < yb; ++y)
                    for (int x = xa; x < xb; ++x) {
                        const int64_t v = ifm.load(y, x, c) - zp;
                        acc = op.pool == PoolMode::Max ? std::max(acc, v) : acc + v;
                    }
                if (valid == 0) acc = 0;
                int64_t scaled;
                if (op.pool == PoolMode::Average && divide_by_valid) {
                    const Scale s = average_pool_scale(std::max<int64_t>(valid, 1));
                    scaled = scale_value(acc, s.scale, s.shift, s.round);
                    if (u85) scaled = scale_value(scaled, global.scale, global.shift, op.output.round);
                } else {
                    scaled = scale_value(acc, global.scale, global.shift, op.output.round);
                }
                ofm.store(oy, ox, c, out.finish(scaled));
            }
        }
    }
}

}  // namespace ethosu
