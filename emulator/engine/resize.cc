// NPU_OP_RESIZE (U85): TOSA RESIZE on the NPU. Along each axis OFM element o samples the IFM at
// position p = o * step + offset in units of 1/n of an IFM element: index i = floor(p / n),
// fraction f = p - i * n. BILINEAR weighs the samples i and i + 1 (clamped to the IFM area) by
// n - f and f on each axis; NEAREST takes i + 1 when 2f >= n, else i; REPLICATE takes i.
//
// Scaling: Vela 5.1 programs OFM_SCALE as scale 1, shift 16 + s for a result of
// (weighted sum) / 2^s, so the unit's accumulator holds the weighted sum with 16 fraction bits.
// With TFLite's power-of-two bilinear ratios and Vela's SYMMETRIC rounding (half away from zero)
// this is exactly TFLite's ResizeBilinearInteger (tests/engine/test_resize.cc).

#include <algorithm>
#include <array>
#include <vector>

#include "emulator/engine/kernel_context.h"
#include "emulator/engine/output_pipeline.h"

namespace ethosu {
namespace {

constexpr int kAccumulatorFractionBits = 16;

// One axis: OFM element o samples IFM position o * step + offset in units of 1/n (validate() has
// checked the registers against what they can mean).
struct Axis {
    int64_t n = 1, step = 1, offset = 0;
    int ifm_size = 1;

    struct Sample {
        int lower, upper;   // IFM indices, clamped to the area
        int64_t fraction;   // 0 .. n-1: the weight of upper
    };
    Sample sample(int o) const {
        const int64_t position = o * step + offset;
        const int64_t index = floor_div(position, n);
        return {static_cast<int>(std::max<int64_t>(index, 0)),
                static_cast<int>(std::min<int64_t>(index + 1, ifm_size - 1)), position - index * n};
    }
};

Axis resize_axis(int scale_n, int offset, const std::array<int, 4>& step, int ifm_size) {
    return {scale_n, resize_step(scale_n, step), offset, ifm_size};
}

}  // namespace

void run_resize(const DecodedOp& op, ExecutionContext& ctx) {
    const Resize& r = op.kernel().resize();
    const Axis x = resize_axis(r.x_scale_n, r.x_offset, r.x_step, op.kernel().ifm.width);
    const Axis y = resize_axis(r.y_scale_n, r.y_offset, r.y_step, op.kernel().ifm.height);

    const int depth = op.kernel().ofm.depth;
    const FeatureMapView ifm = ctx.view(op, op.kernel().ifm, op.kernel().ifm.height, op.kernel().ifm.width, depth, "IFM");
    const FeatureMapView ofm = ctx.view(op, op.kernel().ofm, op.kernel().ofm.height, op.kernel().ofm.width, depth, "OFM", true);
    const OutputPipeline out(op, ctx);
    const int64_t zp = op.kernel().ifm.zero_point;

    ctx.scratch.operands.fit(6 * static_cast<size_t>(depth));
    std::vector<int64_t>& buffers = ctx.scratch.operands.local();
    buffers.resize(6 * static_cast<size_t>(depth));
    int64_t* const v00 = buffers.data();
    int64_t* const v01 = v00 + depth;
    int64_t* const v10 = v01 + depth;
    int64_t* const v11 = v10 + depth;
    int64_t* const acc = v11 + depth;
    int64_t* const result = acc + depth;
    for (int oy = 0; oy < op.kernel().ofm.height; ++oy) {
        const Axis::Sample sy = y.sample(oy);
        for (int ox = 0; ox < op.kernel().ofm.width; ++ox) {
            const Axis::Sample sx = x.sample(ox);
            if (r.mode == ResizeMode::Bilinear) {
                ifm.load_channels(sy.lower, sx.lower, depth, zp, v00);
                ifm.load_channels(sy.lower, sx.upper, depth, zp, v01);
                ifm.load_channels(sy.upper, sx.lower, depth, zp, v10);
                ifm.load_channels(sy.upper, sx.upper, depth, zp, v11);
                const int64_t wy1 = sy.fraction, wy0 = y.n - wy1, wx1 = sx.fraction, wx0 = x.n - wx1;
                for (int c = 0; c < depth; ++c)
                    acc[c] = v00[c] * wy0 * wx0 + v01[c] * wy0 * wx1 + v10[c] * wy1 * wx0 + v11[c] * wy1 * wx1;
            } else {
                const bool nearest = r.mode == ResizeMode::Nearest;
                const int iy = nearest && 2 * sy.fraction >= y.n ? sy.upper : sy.lower;
                const int ix = nearest && 2 * sx.fraction >= x.n ? sx.upper : sx.lower;
                ifm.load_channels(iy, ix, depth, zp, acc);
            }
            for (int c = 0; c < depth; ++c)
                result[c] = out.apply(acc[c] * (int64_t{1} << kAccumulatorFractionBits), c, nullptr);
            ofm.store_channels(oy, ox, depth, result);
        }
    }
}

}  // namespace ethosu
