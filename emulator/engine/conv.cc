// NPU_OP_CONV (also fully connected, as a 1x1 convolution) and NPU_OP_DEPTHWISE.

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <optional>

#include "emulator/engine/depthwise.h"
#include "emulator/engine/gemm.h"
#include "emulator/engine/output_pipeline.h"
#include "emulator/engine/kernel_context.h"
#include "emulator/engine/kernel_geometry.h"
#include "emulator/engine/output_stage.h"
#include "emulator/engine/simd.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// The fast path computes in int16 operands (IFM values minus the zero point) and int32 partial
// sums of 9-bit weight products (|w| <= 256). Returns how many products one int32 sum holds
// exactly, a multiple of 16 when it can be (whole vectors); 0 when the operands do not fit int16.
// Longer sums add such partial sums in int64, which gives the reference's sums exactly too.
int64_t int32_exact_terms(const DecodedOp& op) {
    const int bits = op.kernel().ifm.precision.bits;
    if (bits != 8 && bits != 16) return 0;
    const Range operands = operand_range(op.kernel().ifm);
    if (operands.min < INT16_MIN || operands.max > INT16_MAX) return 0;
    const int64_t terms = INT32_MAX / (std::max(largest_operand(op.kernel().ifm), int64_t{1}) * 256);
    return terms >= 16 ? terms / 16 * 16 : terms;
}

// Zeros after the dense IFM rows: gemm_int16 reads the operands of a 1x1 CONV's pixels in pairs,
// so an odd depth's last pixel reads one element further (its weight is zero), and
// depthwise_int16 reads a pixel's channels rounded up to kDepthwiseChannels (sums not stored).
constexpr size_t kDenseIfmSlack = kDepthwiseChannels;

// One brick of `pixels` pixels of an 8-bit IFM (Stored: int8_t or uint8_t), `channels` <= 16 of
// them, each pixel's `step` bytes after the previous one's, minus the zero point, into dense
// pixels `depth` apart. A whole brick is a loop of constant length, one vector of int16.
template <typename Stored>
[[gnu::always_inline]] inline void widen_brick(const uint8_t* from, int64_t step, int pixels, int channels,
                                               int32_t zero_point, int16_t* to, int depth) {
    // Restrict: bytes may alias anything, and without it the loop stays scalar.
    const auto pixel = [zero_point](const uint8_t* __restrict in, int16_t* __restrict out, int n) {
        for (int j = 0; j < n; ++j) out[j] = static_cast<int16_t>(static_cast<Stored>(in[j]) - zero_point);
    };
    for (int i = 0; i < pixels; ++i, from += step, to += depth) {
        if (channels == 16) pixel(from, to, 16);
        else pixel(from, to, channels);
    }
}
// One clone per element type, not a template: clones of templates are a GCC extension.
ETHOSU_SIMD_CLONES void widen_brick_int8(const uint8_t* from, int64_t step, int pixels, int channels, int32_t zero_point,
                                         int16_t* to, int depth) {
    widen_brick<int8_t>(from, step, pixels, channels, zero_point, to, depth);
}
ETHOSU_SIMD_CLONES void widen_brick_uint8(const uint8_t* from, int64_t step, int pixels, int channels,
                                          int32_t zero_point, int16_t* to, int depth) {
    widen_brick<uint8_t>(from, step, pixels, channels, zero_point, to, depth);
}

// IFM rows [first, last) x [0, width) x [0, depth), each value less `offset`, dense HWC as T, and
// kDenseIfmSlack zeros after them, into `out` (room for them made beforehand). An 8-bit IFM goes
// a brick of a run of pixels at a time, copy_brick(from, pixel_step, pixels, channels, to); others
// a pixel at a time.
template <typename T, typename CopyBrick>
void load_dense_rows(const FeatureMapView& ifm, int first, int last, int depth, int64_t offset, std::vector<T>& out,
                     CopyBrick copy_brick) {
    const int width = ifm.width();
    const size_t count = static_cast<size_t>(last - first) * width * depth;
    fit_scratch(out, count + kDenseIfmSlack);
    std::fill(out.begin() + static_cast<ptrdiff_t>(count), out.end(), 0);
    const bool by_bricks = ifm.precision().bits == 8 && !ifm.reordered();
    for (int y = first; y < last; ++y) {
        T* row = out.data() + static_cast<size_t>(y - first) * width * depth;
        if (!by_bricks) {
            for (int x = 0; x < width; ++x) ifm.load_channels(y, x, depth, offset, row + static_cast<size_t>(x) * depth);
            continue;
        }
        for (int x = 0; x < width;) {
            const int pixels = ifm.brick_run(y, x, 0, width - x).pixels;  // those in x's tile
            for (int c = 0; c < depth; c += 16) {
                const FeatureMapView::BrickRun run = ifm.brick_run(y, x, c, pixels);
                copy_brick(run.first, run.pixel_step, pixels, std::min(16, depth - c), row + static_cast<size_t>(x) * depth + c);
            }
            x += pixels;
        }
    }
}

// The int16 operands of the fast path: the IFM's values minus the zero point (its condition keeps
// them, and so the zero point, within int16 and int32).
void load_dense_ifm(const FeatureMapView& ifm, int first, int last, int depth, int64_t zero_point,
                    std::vector<int16_t>& out) {
    const auto widen = ifm.precision().is_signed ? widen_brick_int8 : widen_brick_uint8;
    load_dense_rows(ifm, first, last, depth, zero_point, out,
                    [&](const uint8_t* from, int64_t step, int pixels, int channels, int16_t* to) {
                        widen(from, step, pixels, channels, static_cast<int32_t>(zero_point), to, depth);
                    });
}

// The byte operands of gemm_u8: an 8-bit IFM's values less the zero point plus `offset`, as
// unsigned bytes (an int8 IFM's stored bytes with the sign bit flipped, offset zero point + 128).
void load_dense_ifm_bytes(const FeatureMapView& ifm, int first, int last, int depth, int64_t zero_point,
                          int32_t offset, std::vector<uint8_t>& out) {
    const uint8_t flip = ifm.precision().is_signed ? 0x80 : 0;
    load_dense_rows(ifm, first, last, depth, zero_point - offset, out,
                    [&](const uint8_t* from, int64_t step, int pixels, int channels, uint8_t* to) {
                        for (int p = 0; p < pixels; ++p, from += step, to += depth)
                            for (int j = 0; j < channels; ++j) to[j] = from[j] ^ flip;
                    });
}

// Most bytes of dense IFM one band of OFM rows copies: a large feature map is never copied whole.
// 128 KiB cost MobileNetV2 no measurable time against 512 KiB, and 0.4 MB of peak memory less.
constexpr int64_t kIfmBandBytes = 128 * 1024;

// Decoded weights a layer too large to hold whole (ConvWeightGroups) holds at a time.
constexpr int64_t kWeightGroupBytes = 128 * 1024;

// A pixel's output values of an 8-bit OFM (clamped to its type) to their bytes: channels [0,
// count) from `to` on, consecutive within each 16-channel brick and `brick_step` bytes from one
// brick to the next (channel 0 is channel `first` of the OFM, which fixes where bricks end).
ETHOSU_SIMD_CLONES void narrow_pixel(const int64_t* __restrict values, int count, int first, uint8_t* __restrict to,
                                     int64_t brick_step) {
    for (int c = 0; c < count;) {
        const int n = std::min(count - c, 16 - ((first + c) & 15));
        for (int j = 0; j < n; ++j) to[j] = static_cast<uint8_t>(values[c + j]);
        c += n;
        to += brick_step - ((first + c - n) & 15);  // the start of the next brick
    }
}

// ofm.store_channels(y, x, count, values, first); an 8-bit OFM that is not reordered in one
// vectorised loop.
void store_pixel(const FeatureMapView& ofm, int y, int x, int count, const int64_t* values, int first) {
    if (ofm.precision().bits != 8 || ofm.reordered()) {
        ofm.store_channels(y, x, count, values, first);
        return;
    }
    const FeatureMapView::BrickRun at = ofm.brick_run(y, x, first, 1);
    narrow_pixel(values, count, first, at.first, at.brick_step);
}

struct FastConv {
    const DecodedOp& op;
    const OpWeights& w;
    const FeatureMapView& ofm;
    const OutputPipeline& act;
    const std::vector<int16_t>& ifm;  // dense, zero point removed: IFM rows from ifm_row0 on
    const std::vector<uint8_t>& ifm_bytes;  // or (gemm_u8) dense bytes, operand + byte_offset
    int32_t byte_offset;
    int ifm_row0, ifm_height, ifm_width, step_y, step_x;
    KernelScratch& scratch;
    // The OFM channels w holds: [first_channel, first_channel + channels) (DEPTHWISE: all, from 0).
    int first_channel = 0;
    int channels = 0;
    // Products one int32 sum holds exactly (int32_exact_terms, even); longer sums go on in int64.
    int chunk = 0;
    const GemmWeights* packed = nullptr;  // CONV: w's values packed for gemm_int16

    // The IFM operands of OFM pixel (oy, ox) in `dense` (ifm, or ifm_bytes for gemm_u8),
    // kernel_height x kernel_width x depth (OHWI order, padding taps read `padding`: zeros, or the
    // byte offset): a 1x1 kernel's are an IFM pixel itself, others are copied to `patch`.
    template <typename T>
    const T* operands(const std::vector<T>& dense, int oy, int ox, T* patch, const T* padding) const {
        const int depth = w.ifm_depth;
        const WindowOrigin origin = window_origin(op.kernel().kernel, oy, ox);
        const auto pixel = [&](int iy, int ix) -> const T* {
            if (iy < 0 || iy >= ifm_height || ix < 0 || ix >= ifm_width) return padding;
            return dense.data() + (static_cast<size_t>(iy - ifm_row0) * ifm_width + ix) * depth;
        };
        if (w.kernel_height == 1 && w.kernel_width == 1) return pixel(origin.y, origin.x);
        T* to = patch;
        for (int ky = 0; ky < w.kernel_height; ++ky)
            for (int kx = 0; kx < w.kernel_width; ++kx, to += depth) {
                const T* from = pixel(origin.y + ky * step_y, origin.x + kx * step_x);
                std::copy(from, from + depth, to);
            }
        return patch;
    }

    // For each group of kGemmRows OFM pixels of rows [first, last): f(oy, ox0, count, rows), rows
    // pointing at each pixel's operands in `dense` (patches copied to `patches`, patch_room apart;
    // past a row's end, the row's last pixel again, which f does not store).
    template <typename T, typename F>
    void for_each_pixel_group(int first, int last, const std::vector<T>& dense, T* patches, int patch_room,
                              const T* padding, F f) const {
        for (int oy = first; oy < last; ++oy) {
            for (int ox0 = 0; ox0 < op.kernel().ofm.width; ox0 += kGemmRows) {
                const int count = std::min(kGemmRows, op.kernel().ofm.width - ox0);
                const T* rows[kGemmRows];
                for (int r = 0; r < kGemmRows; ++r)
                    rows[r] = operands(dense, oy, ox0 + std::min(r, count - 1),
                                       patches + static_cast<size_t>(r) * patch_room, padding);
                f(oy, ox0, count, rows);
            }
        }
    }

    // One OFM pixel's int32 sums through the output stage into the OFM: an 8-bit OFM that is not
    // reordered takes its bytes straight from the sums where OutputPipeline::store_channels_as_bytes
    // applies, anything else goes by way of int64 values (`values`, `channels` long).
    void finish_pixel(const int32_t* sums, int oy, int ox, int64_t* values) const {
        if (!ofm.reordered()) {
            const FeatureMapView::BrickRun at = ofm.brick_run(oy, ox, first_channel, 1);
            if (act.store_channels_as_bytes(sums, channels, w, first_channel, at.first, at.brick_step)) return;
        }
        act.apply_channels(sums, channels, &w, values);
        store_pixel(ofm, oy, ox, channels, values, first_channel);
    }

    // CONV of an 8-bit IFM with weights packed as bytes (GemmWeights::quads): conv_rows by way of
    // gemm_u8, whose sums are always within int32 (kGemmU8MaxK).
    void conv_rows_bytes(int first, int last) const {
        const GemmWeights& gemm = *packed;
        const int patch_room = (gemm.k + 3) / 4 * 4;  // gemm_u8 reads whole quads
        std::vector<uint8_t>& buffers = scratch.byte_patches.local();
        buffers.assign(static_cast<size_t>(kGemmRows + 1) * patch_room, static_cast<uint8_t>(byte_offset));
        const uint8_t* padding = buffers.data() + static_cast<size_t>(kGemmRows) * patch_room;
        std::vector<int32_t>& sums = scratch.accumulators.local();
        sums.resize(static_cast<size_t>(kGemmRows) * gemm.n_padded);
        std::vector<int64_t>& out = scratch.results.local();
        out.resize(static_cast<size_t>(channels));
        const auto group = [&](int oy, int ox0, int count, const uint8_t* const* rows) {
            gemm_u8(rows, gemm, channels, byte_offset, sums.data());
            for (int r = 0; r < count; ++r)
                finish_pixel(sums.data() + static_cast<size_t>(r) * gemm.n_padded, oy, ox0 + r, out.data());
        };
        for_each_pixel_group(first, last, ifm_bytes, buffers.data(), patch_room, padding, group);
    }

    // CONV: kGemmRows OFM pixels at a time, each the product of its IFM operands with every
    // channel's weights (gemm_int16); sums longer than `chunk` products go on in int64.
    void conv_rows(int first, int last) const {
        const GemmWeights& gemm = *packed;
        const int patch_len = gemm.k;
        const int patch_room = (patch_len + 1) / 2 * 2;  // gemm_int16 reads whole pairs
        std::vector<int16_t>& buffers = scratch.patches.local();
        buffers.assign(static_cast<size_t>(kGemmRows + 1) * patch_room, 0);
        const int16_t* zeros = buffers.data() + static_cast<size_t>(kGemmRows) * patch_room;
        std::vector<int32_t>& sums = scratch.accumulators.local();
        sums.resize(static_cast<size_t>(kGemmRows) * gemm.n_padded);
        std::vector<int64_t>& out = scratch.results.local();
        out.resize(static_cast<size_t>(channels));
        const bool wide = patch_len > chunk;
        std::vector<int64_t>& wide_sums = scratch.wide_sums.local();
        if (wide) wide_sums.resize(static_cast<size_t>(kGemmRows) * gemm.n_padded);
        const auto group = [&](int oy, int ox0, int count, const int16_t* const* rows) {
            if (wide) {
                std::fill(wide_sums.begin(), wide_sums.end(), 0);
                for (int start = 0; start < patch_len; start += chunk) {
                    gemm_int16(rows, gemm, start, std::min(patch_len, start + chunk), channels, sums.data());
                    for (size_t i = 0; i < sums.size(); ++i) wide_sums[i] += sums[i];
                }
            } else {
                gemm_int16(rows, gemm, 0, patch_len, channels, sums.data());
            }
            for (int r = 0; r < count; ++r) {
                const size_t at = static_cast<size_t>(r) * gemm.n_padded;
                if (wide) {
                    act.apply_channels(wide_sums.data() + at, channels, &w, out.data());
                    store_pixel(ofm, oy, ox0 + r, channels, out.data(), first_channel);
                } else {
                    finish_pixel(sums.data() + at, oy, ox0 + r, out.data());
                }
            }
        };
        for_each_pixel_group(first, last, ifm, buffers.data(), patch_room, zeros, group);
    }

    // DEPTHWISE: channels are independent, so each OFM pixel is one call of depthwise_int16 over
    // its taps' IFM pixels (padding taps read zeros). A kernel of more taps than an int32 sum
    // holds goes on in int64 every `chunk` taps.
    void depthwise_rows(int first, int last) const {
        const DepthwiseWeights& dw = w.depthwise;
        const int ifm_depth = op.kernel().ifm.depth;
        const int taps = w.kernel_height * w.kernel_width;
        const size_t padded = static_cast<size_t>(dw.channels_padded);
        std::vector<int16_t>& zeros = scratch.patches.local();
        zeros.assign(padded, 0);
        std::vector<const int16_t*>& pixels = scratch.tap_pixels.local();
        pixels.assign(static_cast<size_t>(taps + 1) / 2 * 2, zeros.data());  // an odd kernel's last pair: zeros
        std::vector<int32_t>& sums = scratch.accumulators.local();
        sums.resize(padded);
        std::vector<int64_t>& out = scratch.results.local();
        out.resize(static_cast<size_t>(channels));
        const bool wide = taps > chunk;
        std::vector<int64_t>& wide_sums = scratch.wide_sums.local();
        if (wide) wide_sums.resize(static_cast<size_t>(channels));
        for (int oy = first; oy < last; ++oy) {
            for (int ox = 0; ox < op.kernel().ofm.width; ++ox) {
                const WindowOrigin origin = window_origin(op.kernel().kernel, oy, ox);
                for (int ky = 0; ky < w.kernel_height; ++ky) {
                    const int iy = origin.y + ky * step_y;
                    for (int kx = 0; kx < w.kernel_width; ++kx) {
                        const int ix = origin.x + kx * step_x;
                        const bool inside = iy >= 0 && iy < ifm_height && ix >= 0 && ix < ifm_width;
                        pixels[static_cast<size_t>(ky * w.kernel_width + kx)] =
                            inside ? ifm.data() + (static_cast<size_t>(iy - ifm_row0) * ifm_width + ix) * ifm_depth
                                   : zeros.data();
                    }
                }
                if (wide) {
                    std::fill(wide_sums.begin(), wide_sums.end(), 0);
                    for (int start = 0; start < taps; start += chunk) {
                        depthwise_int16(pixels.data(), dw, start, std::min(taps, start + chunk), channels, sums.data());
                        for (size_t c = 0; c < wide_sums.size(); ++c) wide_sums[c] += sums[c];
                    }
                    act.apply_channels(wide_sums.data(), channels, &w, out.data());
                    store_pixel(ofm, oy, ox, channels, out.data(), 0);
                } else {
                    depthwise_int16(pixels.data(), dw, 0, taps, channels, sums.data());
                    finish_pixel(sums.data(), oy, ox, out.data());
                }
            }
        }
    }
};

// U85 CONV with its weights in the IFM2 map (NPU_OP_CONV weights_ifm2). Vela 5.1 lowers MatMul,
// BatchMatMul and FullyConnected or convolutions with non-constant weights to it: RewriteMatmul
// (compiler/graphir_optimiser.cpp) transposes the weights to [rows, OFM channels, IFM channels],
// DecomposeMatmul and DecomposeNonConstWeights (compiler/scheduler_decompose.cpp) cut one-row OFMs
// and 1x1 kernels, and the register generator writes a global OFM_SCALE and no scale stream. So
// the weight of OFM channel o and IFM channel i is IFM2 element (0, o, i) minus the IFM2 zero
// point, which reproduces TFLite's (rhs - rhs zero point) products.
void run_conv_ifm2_weights(const DecodedOp& op, ExecutionContext& ctx, const LazyLocation& where) {
    const KernelOp& conv = op.kernel();
    const Kernel& k = conv.kernel;
    const IfmGeometry geo = ifm_geometry(op, where);
    AccumulatorIo accumulators(op, ctx);
    const int depth = conv.ifm.depth;
    const FeatureMapView ifm = ctx.view(op, conv.ifm, geo.height, geo.width, depth, "IFM");
    const FeatureMapView ifm2 = ctx.view(op, conv.ifm2, 1, conv.ofm.depth, depth, "IFM2 weights");
    const size_t weight_count = static_cast<size_t>(conv.ofm.depth) * depth;
    std::vector<int64_t> weights(weight_count);
    for (int o = 0; o < conv.ofm.depth; ++o)
        for (int i = 0; i < depth; ++i)
            weights[static_cast<size_t>(o) * depth + i] = ifm2.load(0, o, i) - conv.ifm2.zero_point;
    std::optional<FeatureMapView> ofm;
    if (accumulators.outputs()) ofm.emplace(ctx.view(op, conv.ofm, conv.ofm.height, conv.ofm.width, conv.ofm.depth, "OFM", true));
    const OutputPipeline act(op, ctx);
    std::vector<int64_t> pixel(static_cast<size_t>(depth));
    for (int oy = 0; oy < conv.ofm.height; ++oy) {
        for (int ox = 0; ox < conv.ofm.width; ++ox) {
            const WindowOrigin at = window_origin(k, oy, ox);  // a 1x1 window: the one IFM pixel
            const bool inside = at.y >= 0 && at.y < geo.height && at.x >= 0 && at.x < geo.width;
            if (inside) ifm.load_channels(at.y, at.x, depth, conv.ifm.zero_point, pixel.data());
            for (int oc = 0; oc < conv.ofm.depth; ++oc) {
                int64_t acc = accumulators.initial(oy, ox, oc);
                if (inside) {
                    const int64_t* w = weights.data() + static_cast<size_t>(oc) * depth;
                    for (int i = 0; i < depth; ++i) acc += pixel[static_cast<size_t>(i)] * w[i];
                }
                if (ofm) ofm->store(oy, ox, oc, act.apply(acc, oc, nullptr));
                else accumulators.keep(oy, ox, oc, acc);
            }
        }
    }
    accumulators.finish(ctx.accumulators);
}

// The fast path over the OFM, a band of rows at a time (CONV: the OFM channels w holds, from
// first_channel on).
void run_fast(const DecodedOp& op, ExecutionContext& ctx, const OpWeights& w, const FeatureMapView& ifm,
              const FeatureMapView& ofm, const OutputPipeline& act, const IfmGeometry& geo, int step_y, int step_x,
              int first_channel) {
    const Kernel& k = op.kernel().kernel;
    const bool depthwise = op.kind == OpKind::Depthwise;
    KernelScratch& scratch = ctx.scratch;
    const int64_t row_bytes = int64_t{geo.width} * op.kernel().ifm.depth * 2 * std::max(1, k.stride_y);
    const int workers = tbb::this_task_arena::max_concurrency();
    // Bands of OFM rows: eight per worker, so that none waits long for the last (two or four a
    // worker were slower, bench_kernels: depthwise 3x3 0.25-0.29 and 0.27-0.31 ms against 0.25,
    // conv 1x1 0.064-0.077 and 0.067-0.081 against 0.061); at least the
    // rows of one window, so that the IFM rows two bands both load stay fewer than their own; and
    // at most kIfmBandBytes of dense IFM.
    const int window_rows = ((w.kernel_height - 1) * step_y + 1 + k.stride_y - 1) / std::max(1, k.stride_y);
    const int by_bytes = static_cast<int>(std::clamp<int64_t>(kIfmBandBytes / std::max<int64_t>(row_bytes, 1), 1,
                                                              std::max(op.kernel().ofm.height, 1)));
    const int band = std::clamp((op.kernel().ofm.height + 8 * workers - 1) / (8 * workers), std::min(window_rows, by_bytes),
                                by_bytes);
    const int channels = std::min(w.ofm_depth, op.kernel().ofm.depth - first_channel);
    const int chunk = static_cast<int>(std::min<int64_t>(int32_exact_terms(op), INT32_MAX));
    // Sums: DEPTHWISE one pixel's channels (and a row of zeros for padding taps, a pointer per
    // tap), CONV kGemmRows pixels' (and their operands, plus a row of zeros for padding taps).
    size_t sums = static_cast<size_t>(w.depthwise.channels_padded);
    if (depthwise) {
        scratch.patches.fit(sums);
        scratch.tap_pixels.fit(static_cast<size_t>(w.kernel_height * w.kernel_width + 1) / 2 * 2);
    } else {
        const size_t patch_room = (static_cast<size_t>(w.gemm.k) + 1) / 2 * 2;
        scratch.patches.fit((kGemmRows + 1) * patch_room);
        sums = static_cast<size_t>(kGemmRows) * w.gemm.n_padded;
    }
    scratch.accumulators.fit(sums);
    scratch.results.fit(static_cast<size_t>(channels));
    scratch.wide_sums.fit(sums);
    // Each band of OFM rows is one task: it loads the IFM rows its windows reach (padding rows
    // excepted) into its worker's buffer and computes its rows, with no wait between bands.
    const auto ifm_rows = [&](int first, int last) {
        const int top = std::clamp(first * k.stride_y - k.padding.top, 0, geo.height);
        const int bottom = std::clamp((last - 1) * k.stride_y - k.padding.top + (w.kernel_height - 1) * step_y + 1,
                                      top, geo.height);
        return std::pair{top, bottom};
    };
    const int band_ifm_rows = std::min(geo.height, (band - 1) * k.stride_y + (w.kernel_height - 1) * step_y + 1);
    const size_t band_values = static_cast<size_t>(std::max(band_ifm_rows, 0)) * geo.width * op.kernel().ifm.depth;
    ctx.budget.check_allocation(op, band_values * sizeof(int16_t) * static_cast<size_t>(workers),
                                "dense IFM rows of the bands in flight");
    // An 8-bit IFM whose weights were packed as bytes goes by gemm_u8: its operands as unsigned
    // bytes, offset by 128 for int8 (the sign bit flipped) and by its zero point.
    // A zero point whose offset leaves a byte (no Vela writes one) takes the int16 path, its
    // weights packed for it here.
    const int32_t byte_offset = static_cast<int32_t>(op.kernel().ifm.zero_point) + (op.kernel().ifm.precision.is_signed ? 128 : 0);
    std::optional<GemmWeights> pairs;
    if (!depthwise && !w.gemm.quads.empty() && (byte_offset < 0 || byte_offset > UINT8_MAX))
        pairs = pack_gemm_weights(w.values.data(), w.gemm.n, w.gemm.k, false);
    const GemmWeights& gemm = pairs ? *pairs : w.gemm;
    const bool bytes = !depthwise && !gemm.quads.empty();
    // Room in the buffer the path uses; the other's stays empty.
    scratch.ifm.fit(bytes ? 0 : band_values + kDenseIfmSlack);
    scratch.ifm_bytes.fit(bytes ? band_values + kDenseIfmSlack : 0);
    if (bytes) scratch.byte_patches.fit(static_cast<size_t>(kGemmRows + 1) * ((gemm.k + 3) / 4 * 4));
    const auto run_bands = [&](const tbb::blocked_range<int>& bands) {
        for (int b = bands.begin(); b < bands.end(); ++b) {
            const int first = b * band, last = std::min(op.kernel().ofm.height, first + band);
            const auto [top, bottom] = ifm_rows(first, last);
            std::vector<int16_t>& dense = scratch.ifm.local();
            std::vector<uint8_t>& dense_bytes = scratch.ifm_bytes.local();
            if (bytes) load_dense_ifm_bytes(ifm, top, bottom, op.kernel().ifm.depth, op.kernel().ifm.zero_point, byte_offset, dense_bytes);
            else load_dense_ifm(ifm, top, bottom, op.kernel().ifm.depth, op.kernel().ifm.zero_point, dense);
            const FastConv fast{op,         w,         ofm,    act,     dense,   dense_bytes,   byte_offset,
                                top,        geo.height, geo.width, step_y, step_x, scratch,     first_channel,
                                channels,   chunk,     &gemm};
            if (depthwise) fast.depthwise_rows(first, last);
            else if (bytes) fast.conv_rows_bytes(first, last);
            else fast.conv_rows(first, last);
        }
    };
    const tbb::blocked_range<int> bands(0, (op.kernel().ofm.height + band - 1) / band, 1);
    // OFM rows that share bytes (a hostile stride) are written in order, as the reference does.
    if (ofm.rows_are_disjoint()) tbb::parallel_for(bands, run_bands, tbb::simple_partitioner());
    else run_bands(bands);
}

// A CONV too large to hold decoded, in a run of its own: decoded and computed a group of OFM
// blocks at a time (the fast path's conditions hold; the caller checked).
void run_conv_in_groups(const DecodedOp& op, ExecutionContext& ctx, const IfmGeometry& geo) {
    const KernelOp& conv = op.kernel();
    const Kernel& k = conv.kernel;
    const StreamFetch fetch = [&](const Stream& s) {
        return ctx.memory.read(s.region, s.base, s.length, ctx.access(op, "weight/scale stream"));
    };
    ConvWeightGroups groups(op, ctx.config, fetch, ctx.source);
    const FeatureMapView ifm = ctx.kernel_ifm(op, geo, conv.ifm.depth);
    const FeatureMapView ofm = ctx.view(op, conv.ofm, conv.ofm.height, conv.ofm.width, conv.ofm.depth, "OFM", true);
    const OutputPipeline act(op, ctx);
    const int64_t per_channel = int64_t{k.taps_height()} * k.taps_width() * conv.ifm.depth * int64_t{sizeof(int16_t)};
    const int channels = static_cast<int>(std::max<int64_t>(1, kWeightGroupBytes / per_channel));
    const std::span<const uint8_t> stream = fetch(conv.weights[0]);
    uint64_t released = 0;
    OpWeights group;
    while (groups.next(channels, group)) {
        // The stream is read once, in order: what the groups so far were decoded from is done.
        const uint64_t read = groups.stream_bytes_read();
        ctx.done_reading(stream.subspan(released, read - released));
        released = read;
        if (groups.first() >= conv.ofm.depth) continue;  // Vela's padding channels: decoded, not stored
        const bool taps_dilated = group.kernel_height == k.height && group.kernel_width == k.width;
        run_fast(op, ctx, group, ifm, ofm, act, geo, taps_dilated ? 1 : k.dilation_y, taps_dilated ? 1 : k.dilation_x,
                 groups.first());
    }
}

}  // namespace

void run_conv(const DecodedOp& op, ExecutionContext& ctx) {
    const KernelOp& conv = op.kernel();
    const LazyLocation where{&ctx.source, op.offset, op_kind_name(op.kind)};
    if (conv.weights_from_ifm2) {
        run_conv_ifm2_weights(op, ctx, where);
        return;
    }
    const bool depthwise = op.kind == OpKind::Depthwise;
    const Kernel& k = conv.kernel;
    const IfmGeometry geo = ifm_geometry(op, where);
    if (ctx.weights.one_run() && ConvWeightGroups::applies(op, ctx.config) && int32_exact_terms(op) > 0) {
        run_conv_in_groups(op, ctx, geo);
        return;
    }
    const OpWeights& w = ctx.weights.get(op, ctx.config, ctx.memory, ctx.source);
    if (w.ofm_depth < conv.ofm.depth || (!depthwise && w.ifm_depth != conv.ifm.depth)) {
        throw Error(where, fmt::format("weights hold {} OFM x {} IFM channels, the op needs {} x {}", w.ofm_depth,
                                       w.ifm_depth, conv.ofm.depth, conv.ifm.depth));
    }
    // The decoded kernel is either the programmed (dilated) size, or the undilated taps.
    const bool taps_dilated = w.kernel_height == k.height && w.kernel_width == k.width;
    const int step_y = taps_dilated ? 1 : k.dilation_y;
    const int step_x = taps_dilated ? 1 : k.dilation_x;

    AccumulatorIo accumulators(op, ctx);
    const FeatureMapView ifm = ctx.kernel_ifm(op, geo, conv.ifm.depth);
    // With the accumulator output disabled the op writes no OFM.
    std::optional<FeatureMapView> ofm;
    if (accumulators.outputs()) ofm.emplace(ctx.view(op, conv.ofm, conv.ofm.height, conv.ofm.width, conv.ofm.depth, "OFM", true));
    const OutputPipeline act(op, ctx);
    const int64_t ifm_zp = conv.ifm.zero_point;

    // Any length of sum: int32 partial sums added in int64 (FastConv::chunk) are exact too.
    if (int32_exact_terms(op) > 0 && (!depthwise || conv.ofm.depth <= conv.ifm.depth) && accumulators.starts_at_zero() &&
        accumulators.outputs()) {
        run_fast(op, ctx, w, ifm, *ofm, act, geo, step_y, step_x, 0);
        accumulators.finish(ctx.accumulators);
        return;
    }

    for (int oy = 0; oy < conv.ofm.height; ++oy) {
        for (int ox = 0; ox < conv.ofm.width; ++ox) {
            const WindowOrigin origin = window_origin(k, oy, ox);
            for (int oc = 0; oc < conv.ofm.depth; ++oc) {
                int64_t acc = accumulators.initial(oy, ox, oc);
                for (int ky = 0; ky < w.kernel_height; ++ky) {
                    const int iy = origin.y + ky * step_y;
                    if (iy < 0 || iy >= geo.height) continue;  // padding contributes zero
                    for (int kx = 0; kx < w.kernel_width; ++kx) {
                        const int ix = origin.x + kx * step_x;
                        if (ix < 0 || ix >= geo.width) continue;
                        if (depthwise) {
                            acc += (ifm.load(iy, ix, oc) - ifm_zp) * w.at(oc, ky, kx, 0);
                        } else {
                            for (int ic = 0; ic < conv.ifm.depth; ++ic)
                                acc += (ifm.load(iy, ix, ic) - ifm_zp) * w.at(oc, ky, kx, ic);
                        }
                    }
                }
                if (ofm) ofm->store(oy, ox, oc, act.apply(acc, oc, &w));
                else accumulators.keep(oy, ox, oc, acc);
            }
        }
    }
    accumulators.finish(ctx.accumulators);
}

}  // namespace ethosu
