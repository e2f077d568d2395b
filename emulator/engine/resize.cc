// NPU_OP_RESIZE (U85): TOSA RESIZE on the NPU. Along each axis OFM element o samples the IFM at
// position p = o * step + offset in units of 1/n of an IFM element: index i = floor(p / n),
// fraction f = p - i * n. BILINEAR weighs the samples i and i + 1 (clamped to the IFM area) by
// n - f and f on each axis; NEAREST takes i + 1 when 2f >= n, else i; REPLICATE takes i.
//
// Scaling: Vela 5.1 programs OFM_SCALE as scale 1, shift 16 + s for a result of
// (weighted sum) / 2^s, so the unit's accumulator holds the weighted sum with 16 fraction bits.
// With TFLite's power-of-two bilinear ratios and Vela's SYMMETRIC rounding (half away from zero)
// this is exactly TFLite's ResizeBilinearInteger (tests/engine/test_resize.cc).

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "emulator/engine/kernel_context.h"
#include "emulator/engine/output_pipeline.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

constexpr int kAccumulatorFractionBits = 16;

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

// One axis, checked against what the hardware's registers can mean.
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

// X: register names ..._X, OFM width and block width; Y likewise.
struct AxisRegisters {
    char name;  // 'X' or 'Y'
    int scale_n, offset;
    const std::array<int, 4>& step;  // one_step_int, blk_step_int, one_step_mod, blk_step_mod
    int ofm_size, ofm_block, ifm_size;
    const char* ofm_size_register;
    const char* kernel_register;
};

Axis check_axis(const AxisRegisters& a, const std::string& source, uint32_t op_offset) {
    const std::string resize_reg = fmt::format("NPU_SET_RESIZE_{}", a.name);
    auto fail = [&](const std::string& field, const std::string& what) {
        throw Error({source, op_offset, field, OffsetKind::Command}, "NPU_OP_RESIZE: " + what);
    };
    Axis axis;
    axis.n = a.scale_n;
    axis.ifm_size = a.ifm_size;
    const auto [one_int, blk_int, one_mod, blk_mod] = a.step;
    if (one_mod >= a.scale_n) {
        fail(resize_reg + ".one_step_mod",
             fmt::format("step remainder {} is not below the scale numerator n = {}", one_mod, a.scale_n));
    }
    if (blk_mod >= a.scale_n) {
        fail(resize_reg + ".blk_step_mod",
             fmt::format("block step remainder {} is not below the scale numerator n = {}", blk_mod, a.scale_n));
    }
    axis.step = int64_t{one_int} * a.scale_n + one_mod;
    if (axis.step == 0) {
        fail(resize_reg + ".one_step_int", "a zero step samples one IFM position for every OFM element");
    }
    // Vela writes the walk over one OFM block (block - 1 steps); the hardware's stepping from block
    // to block for any other value is undocumented.
    const int64_t block_walk = int64_t{blk_int} * a.scale_n + blk_mod;
    if (block_walk != int64_t{a.ofm_block - 1} * axis.step) {
        fail(resize_reg + ".blk_step_int",
             fmt::format("block step {}/{} is not (OFM block {} - 1) x step {}/{}", block_walk, a.scale_n,
                         a.ofm_block, axis.step, a.scale_n));
    }
    // TOSA's bounds, -n <= offset < 16n (Vela asserts offset < n, yet its TFLite lowering of a
    // nearest-neighbour downscale such as 8 -> 2 gives more).
    if (a.offset < -a.scale_n || a.offset >= 16 * a.scale_n) {
        fail(fmt::format("NPU_SET_RESIZE_{}_OFFSET.resize_{}_offset", a.name, a.name == 'X' ? 'x' : 'y'),
             fmt::format("offset {} is outside -n .. 16n-1 for n = {}", a.offset, a.scale_n));
    }
    axis.offset = a.offset;
    const int64_t last = floor_div(int64_t{a.ofm_size - 1} * axis.step + axis.offset, axis.n);
    if (last >= a.ifm_size) {
        fail(a.ofm_size_register,
             fmt::format("OFM size {} at step {}/{} and offset {} samples IFM index {}, past the IFM size {} ({})",
                         a.ofm_size, axis.step, a.scale_n, a.offset, last, a.ifm_size, a.kernel_register));
    }
    return axis;
}

}  // namespace

void run_resize(const DecodedOp& op, ExecutionContext& ctx) {
    auto fail = [&](const std::string& field, const std::string& what) {
        throw Error({ctx.source, op.offset, field, OffsetKind::Command}, "NPU_OP_RESIZE: " + what);
    };
    const Resize& r = op.resize;
    if (op.kernel.upscale != UpscaleMode::None) {
        fail("NPU_SET_IFM_UPSCALE.mode", "IFM upscaling with RESIZE is undefined");
    }
    if (op.ifm.precision.bits > 16) {
        fail("NPU_SET_IFM_PRECISION.activation_precision",
             fmt::format("{}-bit IFMs cannot be resized (8 or 16 bits)", op.ifm.precision.bits));
    }
    if (op.ofm.depth != op.ifm.depth) {
        fail("NPU_SET_OFM_DEPTH_M1", fmt::format("OFM depth {} differs from IFM depth {}", op.ofm.depth, op.ifm.depth));
    }
    const Axis x = check_axis({'X', r.x_scale_n, r.x_offset, r.x_step, op.ofm.width, op.block.ofm_width,
                               op.ifm.width, "NPU_SET_OFM_WIDTH_M1", "NPU_SET_KERNEL_WIDTH_M1"},
                              ctx.source, op.offset);
    const Axis y = check_axis({'Y', r.y_scale_n, r.y_offset, r.y_step, op.ofm.height, op.block.ofm_height,
                               op.ifm.height, "NPU_SET_OFM_HEIGHT_M1", "NPU_SET_KERNEL_HEIGHT_M1"},
                              ctx.source, op.offset);

    const int depth = op.ofm.depth;
    const FeatureMapView ifm = ctx.view(op, op.ifm, op.ifm.height, op.ifm.width, depth, "IFM");
    const FeatureMapView ofm = ctx.view(op, op.ofm, op.ofm.height, op.ofm.width, depth, "OFM", true);
    const OutputPipeline out(op, ctx);
    const int64_t zp = op.ifm.zero_point;

    ctx.scratch.operands.fit(6 * static_cast<size_t>(depth));
    std::vector<int64_t>& buffers = ctx.scratch.operands.local();
    buffers.resize(6 * static_cast<size_t>(depth));
    int64_t* const v00 = buffers.data();
    int64_t* const v01 = v00 + depth;
    int64_t* const v10 = v01 + depth;
    int64_t* const v11 = v10 + depth;
    int64_t* const acc = v11 + depth;
    int64_t* const result = acc + depth;
    for (int oy = 0; oy < op.ofm.height; ++oy) {
        const Axis::Sample sy = y.sample(oy);
        for (int ox = 0; ox < op.ofm.width; ++ox) {
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
