// NPU_OP_POOL: MAX, AVERAGE, REDUCE_SUM; U85 SUM, NONE, MIN, ARGMAX_X and ARGMAX_Y.

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "emulator/engine/kernel_context.h"
#include "emulator/engine/kernel_geometry.h"
#include "emulator/engine/output_pipeline.h"
#include "emulator/engine/simd.h"

namespace ethosu {

namespace {

// U85 POOL NONE: the IFM adds nothing; the accumulators are what acc_input loads (Vela 5.1 loads
// 32/64-bit maps this way through IFM2, ethos_u85_register_cs_generator.cpp GeneratePoolingOp, and
// preloads biases with output disabled, scheduler_decompose.cpp DecomposeNonConstWeights) and
// leave through OFM_SCALE or stay for the next op.
void run_null_pool(const DecodedOp& op, ExecutionContext& ctx, const OutputPipeline& out) {
    const KernelOp& pooling = op.kernel();
    AccumulatorIo accumulators(op, ctx);
    const Scale& global = pooling.output.global_scale;
    if (!accumulators.outputs()) {
        for (int y = 0; y < pooling.ofm.height; ++y)
            for (int x = 0; x < pooling.ofm.width; ++x)
                for (int c = 0; c < pooling.ofm.depth; ++c) accumulators.keep(y, x, c, accumulators.initial(y, x, c));
    } else {
        const FeatureMapView ofm = ctx.view(op, pooling.ofm, pooling.ofm.height, pooling.ofm.width, pooling.ofm.depth, "OFM", true);
        for (int y = 0; y < pooling.ofm.height; ++y)
            for (int x = 0; x < pooling.ofm.width; ++x)
                for (int c = 0; c < pooling.ofm.depth; ++c) {
                    const int64_t acc = accumulators.initial(y, x, c);
                    ofm.store(y, x, c, out.finish(scale_value(acc, global.scale, global.shift, pooling.output.round)));
                }
    }
    accumulators.finish(ctx.accumulators);
}

// U85 ARGMAX_X / ARGMAX_Y: per channel, the position of the largest IFM element along the
// kernel's row (X) or column (Y). Ties give the first position, as TFLite's ARG_MAX and TOSA
// ARGMAX both do (they update only on a strictly greater value); Vela lowers both to this.
// What Vela never programs (padding, upscaling, dilation, a 2-D window, another OFM scale, 32-bit
// values) leaves the accumulator's contents undetermined and validate() refuses it.
void run_argmax(const DecodedOp& op, ExecutionContext& ctx, const OutputPipeline& out) {
    const KernelOp& pooling = op.kernel();
    const bool along_x = pooling.pool() == PoolMode::ArgMaxX;
    const Kernel& k = pooling.kernel;
    const Scale& s = pooling.output.global_scale;
    const int length = along_x ? k.width : k.height;
    const IfmGeometry geo = ifm_geometry(op, LazyLocation{&ctx.source, op.offset, "NPU_OP_POOL"});
    const FeatureMapView ifm = ctx.kernel_ifm(op, geo, pooling.ofm.depth);
    const FeatureMapView ofm = ctx.view(op, pooling.ofm, pooling.ofm.height, pooling.ofm.width, pooling.ofm.depth, "OFM", true);
    for (int oy = 0; oy < pooling.ofm.height; ++oy)
        for (int ox = 0; ox < pooling.ofm.width; ++ox)
            for (int c = 0; c < pooling.ofm.depth; ++c) {
                const int y0 = oy * k.stride_y, x0 = ox * k.stride_x;
                int best = 0;
                int64_t largest = ifm.load(y0, x0, c);
                for (int i = 1; i < length; ++i) {
                    const int64_t v = along_x ? ifm.load(y0, x0 + i, c) : ifm.load(y0 + i, x0, c);
                    if (v > largest) largest = v, best = i;
                }
                const int64_t acc = int64_t{best} << kArgMaxIndexShift;
                ofm.store(oy, ox, c, out.finish(scale_value(acc, s.scale, s.shift, pooling.output.round)));
            }
}

// Combining a window pixel's channels into the accumulators.
ETHOSU_SIMD_CLONES void take_max(int32_t* acc, const int32_t* x, int n) {
    for (int c = 0; c < n; ++c) acc[c] = std::max(acc[c], x[c]);
}
ETHOSU_SIMD_CLONES void take_min(int32_t* acc, const int32_t* x, int n) {
    for (int c = 0; c < n; ++c) acc[c] = std::min(acc[c], x[c]);
}
ETHOSU_SIMD_CLONES void add(int32_t* acc, const int32_t* x, int n) {
    for (int c = 0; c < n; ++c) acc[c] += x[c];
}
ETHOSU_SIMD_CLONES void take_max(int64_t* acc, const int64_t* x, int n) {
    for (int c = 0; c < n; ++c) acc[c] = std::max(acc[c], x[c]);
}
ETHOSU_SIMD_CLONES void take_min(int64_t* acc, const int64_t* x, int n) {
    for (int c = 0; c < n; ++c) acc[c] = std::min(acc[c], x[c]);
}
ETHOSU_SIMD_CLONES void add(int64_t* acc, const int64_t* x, int n) {
    for (int c = 0; c < n; ++c) acc[c] += x[c];
}

// Whether the window ops can combine in int32: IFM values minus the zero point fit it, and so
// does a sum over the whole window.
bool int32_windows_are_exact(const DecodedOp& op) {
    if (op.kernel().ifm.precision.bits > 16) return false;
    return largest_operand(op.kernel().ifm) * op.kernel().kernel.height * op.kernel().kernel.width <= INT32_MAX;
}

// MAX, AVERAGE, U85 SUM and MIN over a band of OFM rows: a pixel at a time, the window's IFM
// pixels read whole and combined channel by channel.
struct WindowPool {
    const DecodedOp& op;
    const FeatureMapView& ifm;
    const FeatureMapView& ofm;
    const OutputPipeline& out;
    const IfmGeometry& geo;
    KernelScratch& scratch;
    // AVERAGE divides each window by its valid elements instead of applying OFM_SCALE (see run_pool).
    bool divide_by_valid;

    // Acc: int32_t where int32_windows_are_exact, else int64_t; buffer: the worker's own.
    template <typename Acc>
    void rows(int first, int last, std::vector<Acc>& buffer) const {
        const Kernel& k = op.kernel().kernel;
        const Padding& pad = k.padding;
        const int depth = op.kernel().ofm.depth;
        const int64_t zp = op.kernel().ifm.zero_point;
        const Scale& global = op.kernel().output.global_scale;
        const Scale programmed{global.scale, global.shift, 0, op.kernel().output.round};
        buffer.resize(2 * static_cast<size_t>(depth));
        Acc* const acc = buffer.data();
        Acc* const pixel = acc + depth;
        std::vector<int64_t>& results = scratch.results.local();
        results.resize(2 * static_cast<size_t>(depth));
        int64_t* const scaled = results.data();
        int64_t* const result = scaled + depth;
        const bool max = op.kernel().pool() == PoolMode::Max, min = op.kernel().pool() == PoolMode::Min;
        for (int oy = first; oy < last; ++oy) {
            const int y0 = oy * k.stride_y - pad.top;
            const int ya = std::max(0, y0), yb = std::min(geo.height, y0 + k.height);
            for (int ox = 0; ox < op.kernel().ofm.width; ++ox) {
                const int x0 = ox * k.stride_x - pad.left;
                const int xa = std::max(0, x0), xb = std::min(geo.width, x0 + k.width);
                const int64_t valid = int64_t{std::max(0, yb - ya)} * std::max(0, xb - xa);
                const Acc start = !valid ? 0
                                  : max  ? std::numeric_limits<Acc>::min()
                                  : min  ? std::numeric_limits<Acc>::max()
                                         : 0;
                std::fill(acc, acc + depth, start);
                for (int y = ya; y < yb; ++y)
                    for (int x = xa; x < xb; ++x) {
                        ifm.load_channels(y, x, depth, zp, pixel);
                        if (max) take_max(acc, pixel, depth);
                        else if (min) take_min(acc, pixel, depth);
                        else add(acc, pixel, depth);
                    }
                const Scale s = divide_by_valid ? average_pool_scale(std::max<int64_t>(valid, 1)) : programmed;
                for (int c = 0; c < depth; ++c) scaled[c] = scale_value(acc[c], s.scale, s.shift, s.round);
                out.finish_channels(scaled, depth, result);
                ofm.store_channels(oy, ox, depth, result);
            }
        }
    }
};

}  // namespace

void run_pool(const DecodedOp& op, ExecutionContext& ctx) {
    const KernelOp& pooling = op.kernel();
    const LazyLocation where{&ctx.source, op.offset, "NPU_OP_POOL"};
    const Kernel& k = pooling.kernel;
    const int64_t zp = pooling.ifm.zero_point;
    const OutputPipeline out(op, ctx);
    const Scale& global = pooling.output.global_scale;

    if (pooling.pool() == PoolMode::ReduceSum) {
        // Sums over the IFM depth into a single OFM channel, a row of pixels at a time.
        const FeatureMapView ifm = ctx.view(op, pooling.ifm, pooling.ofm.height, pooling.ofm.width, pooling.ifm.depth, "IFM");
        const FeatureMapView ofm = ctx.view(op, pooling.ofm, pooling.ofm.height, pooling.ofm.width, pooling.ofm.depth, "OFM", true);
        ctx.scratch.operands.fit(static_cast<size_t>(std::max(pooling.ifm.depth, pooling.ofm.depth)));
        const auto run_rows = [&](const tbb::blocked_range<int>& rows) {
            std::vector<int64_t>& buffer = ctx.scratch.operands.local();
            buffer.resize(static_cast<size_t>(std::max(pooling.ifm.depth, pooling.ofm.depth)));
            for (int y = rows.begin(); y < rows.end(); ++y)
                for (int x = 0; x < pooling.ofm.width; ++x) {
                    ifm.load_channels(y, x, pooling.ifm.depth, zp, buffer.data());
                    int64_t sum = 0;
                    for (int c = 0; c < pooling.ifm.depth; ++c) sum += buffer[static_cast<size_t>(c)];
                    const int64_t v = out.finish(scale_value(sum, global.scale, global.shift, pooling.output.round));
                    std::fill(buffer.begin(), buffer.begin() + pooling.ofm.depth, v);
                    ofm.store_channels(y, x, pooling.ofm.depth, buffer.data());
                }
        };
        const tbb::blocked_range<int> rows(0, pooling.ofm.height);
        if (ofm.rows_are_disjoint() && !ofm.shares_bytes_with(ifm)) tbb::parallel_for(rows, run_rows);
        else run_rows(rows);
        return;
    }
    if (pooling.pool() == PoolMode::None) {
        run_null_pool(op, ctx, out);
        return;
    }
    if (pooling.pool() == PoolMode::ArgMaxX || pooling.pool() == PoolMode::ArgMaxY) {
        run_argmax(op, ctx, out);
        return;
    }
    // U85 SUM adds the window up; OFM_SCALE carries any division. U85 MIN is MAX's mirror image
    // (Vela's REDUCE_MIN, and REDUCE_ANY on its -1/0 booleans).
    const IfmGeometry geo = ifm_geometry(op, where);
    const FeatureMapView ifm = ctx.kernel_ifm(op, geo, pooling.ofm.depth);
    const FeatureMapView ofm = ctx.view(op, pooling.ofm, pooling.ofm.height, pooling.ofm.width, pooling.ofm.depth, "OFM", true);
    const Padding& pad = k.padding;
    // An AVERAGE pool that the hardware divides takes each window's sum over its valid (not padded)
    // elements, divided with TFLite's rounding, and no OFM_SCALE.
    // U55/U65 divide when the window is padded (Vela 5.1 then writes a unit OFM_SCALE in GLOBAL mode)
    // and in PER_CHANNEL mode, which pooling has no scale stream for (Vela 2.x-4.x program padded
    // AVERAGE pools so, with no OFM_SCALE); an unpadded GLOBAL pool is OFM_SCALE alone, which Vela
    // writes as 1/N (quantise_pooling_scale). No Vela version programs an unpadded PER_CHANNEL
    // AVERAGE pool; the hardware scaling reads the same there.
    // U85 divides every AVERAGE pool. The same TFLite AVERAGE_POOL_2D compiles to byte-identical
    // registers in Regor 4.0-5.0 and 5.1 but for OFM_SCALE: 1/N (ethos_u85_scaling.cpp RescalePooling,
    // "normal pooling": QuantizePoolingScale(kernel elements)) against a unit scale from 5.1 on
    // (MLBEDSW-11322, ethos_u85_register_cs_generator.cpp GenerateOFMScalingForPooling), and TOSA
    // AVG_POOL2D gets a unit scale in both. Only this reading gives TFLite's and TOSA's results for
    // all of them (../shared/vectors-vela-u85 4.5.0 and 5.1.0: unpadded 7x7 and 2x2, padded 3x3 SAME):
    // dividing and then applying OFM_SCALE divides 4.5's pools twice, OFM_SCALE alone misses the
    // padded borders and 5.1. An OFM_SCALE that is neither unit nor 1/N is not determined by any
    // source; the decoder warns of it (Decoder::warn_undetermined_average_scale).
    const bool padded = pad.top || pad.left || pad.bottom || pad.right;
    const bool divide_by_valid = pooling.pool() == PoolMode::Average && (ctx.config.traits().average_pool_always_divides ||
                                                                  padded || pooling.output.per_channel_scale);
    const WindowPool pool{op, ifm, ofm, out, geo, ctx.scratch, divide_by_valid};
    const bool narrow = int32_windows_are_exact(op);
    const size_t two_pixels = 2 * static_cast<size_t>(pooling.ofm.depth);
    ctx.scratch.results.fit(two_pixels);
    if (narrow) ctx.scratch.accumulators.fit(two_pixels);
    else ctx.scratch.wide_sums.fit(two_pixels);
    const auto run_rows = [&](const tbb::blocked_range<int>& rows) {
        if (narrow) pool.rows(rows.begin(), rows.end(), ctx.scratch.accumulators.local());
        else pool.rows(rows.begin(), rows.end(), ctx.scratch.wide_sums.local());
    };
    // Rows run in parallel when no OFM byte is one another row writes or any row reads.
    const tbb::blocked_range<int> rows(0, pooling.ofm.height);
    if (ofm.rows_are_disjoint() && !ofm.shares_bytes_with(ifm)) tbb::parallel_for(rows, run_rows);
    else run_rows(rows);
}

}  // namespace ethosu
