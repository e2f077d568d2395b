// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR on NHWC tensors, as TFLM's kernels
// (resize_bilinear.cc, resize_nearest_neighbor.cc; reference/resize_bilinear.h with its float
// path and its int8 path in 10-bit fixed point, reference/resize_nearest_neighbor.h).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "frontend/graph/cpu_operator.h"
#include "frontend/graph/kernel_helpers.h"
#include "frontend/graph/operator_options.h"

namespace ethosu {
namespace {

struct Resize {
    int32_t batches, in_height, in_width, depth, out_height, out_width;
};

// RESIZE_BILINEAR's and RESIZE_NEAREST_NEIGHBOR's options, each from its own table.
struct ResizeOptions {
    bool align_corners = false, half_pixel_centers = false;
};

ResizeOptions bilinear_options(const OperatorView& v) {
    const auto o = builtin_options<tflite::ResizeBilinearOptionsT>(v);
    return {o.align_corners, o.half_pixel_centers};
}

ResizeOptions nearest_options(const OperatorView& v) {
    const auto o = builtin_options<tflite::ResizeNearestNeighborOptionsT>(v);
    return {o.align_corners, o.half_pixel_centers};
}

Resize resize_of(const OperatorView& v) {
    const auto& in = v.input(0).shape;
    const auto size = constant_integers(v, 1);
    return {static_cast<int32_t>(in[0]), static_cast<int32_t>(in[1]), static_cast<int32_t>(in[2]),
            static_cast<int32_t>(in[3]), static_cast<int32_t>(size[0]), static_cast<int32_t>(size[1])};
}

void check_resize(const OperatorView& v) {
    v.expect_arity(2, 1);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    const bool bilinear = v.name() == "RESIZE_BILINEAR";
    // resize_bilinear.cc: float32 or int8; resize_nearest_neighbor.cc also int16.
    v.expect(in.type == out.type && (in.type == ElementType::Float32 || in.type == ElementType::Int8 ||
                                     (!bilinear && in.type == ElementType::Int16)),
             fmt::format("takes {} to {}; TFLM's {} takes float32, int8{}, the same type in and out",
                         element_type_name(in.type), element_type_name(out.type), v.name(), bilinear ? "" : " or int16"));
    v.expect(in.shape.size() == 4, fmt::format("input is {}-D; TFLM resizes 4-D (NHWC) tensors", in.shape.size()));
    // Every output pixel reads input pixels: an empty input has none to read.
    v.expect(in.shape[1] > 0 && in.shape[2] > 0, fmt::format("'{}' has no pixels to resize", in.name));
    v.expect(v.input(1).type == ElementType::Int32 && element_count(v.input(1)) == 2, "its size must be two int32 values");
    const auto size = constant_integers(v, 1);
    v.expect(size[0] > 0 && size[1] > 0 && size[0] <= INT16_MAX && size[1] <= INT16_MAX,
             fmt::format("size [{}] is not a positive height and width", fmt::join(size, ",")));
    const std::vector<int64_t> want = {in.shape[0], size[0], size[1], in.shape[3]};
    v.expect(out.shape == want, fmt::format("'{}' is [{}]; the size gives [{}]", out.name, fmt::join(out.shape, ","),
                                            fmt::join(want, ",")));
    const ResizeOptions o = bilinear ? bilinear_options(v) : nearest_options(v);
    v.expect(!(o.half_pixel_centers && o.align_corners),
             "sets both half_pixel_centers and align_corners, which TFLM refuses");
    // The int8 path scales by 2^10 in int32: its products must fit.
    v.expect(!bilinear || (in.shape[1] < (1 << 20) && in.shape[2] < (1 << 20)), "input too large for the int8 path");
}

// GetNearestNeighbor: the scale in float, floor (or, aligning corners, round) of the scaled
// position (plus 0.5 with half-pixel centres), capped at the last input index.
int32_t nearest(int32_t at, int32_t in_size, int32_t out_size, bool align_corners, bool half_pixel_centers) {
    const float scale = align_corners && out_size > 1 ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1)
                                                      : static_cast<float>(in_size) / static_cast<float>(out_size);
    const float offset = half_pixel_centers ? 0.5f : 0.0f;
    const float position = (static_cast<float>(at) + offset) * scale;
    int32_t value = std::min(static_cast<int32_t>(align_corners ? std::round(position) : std::floor(position)), in_size - 1);
    if (half_pixel_centers) value = std::max(0, value);
    return value;
}

void run_nearest(const OperatorView& v, HostTensors& tensors) {
    const Resize r = resize_of(v);
    const ResizeOptions options = nearest_options(v);
    const auto size = static_cast<size_t>(element_size(v.input(0).type)) * static_cast<size_t>(r.depth);
    const auto& src = tensors.read(v.op.inputs[0]);
    auto& dst = tensors.write(v.op.outputs[0]);
    size_t o = 0;
    for (int32_t b = 0; b < r.batches; ++b)
        for (int32_t y = 0; y < r.out_height; ++y) {
            const int32_t in_y = nearest(y, r.in_height, r.out_height, options.align_corners, options.half_pixel_centers);
            for (int32_t x = 0; x < r.out_width; ++x, o += size) {
                const int32_t in_x = nearest(x, r.in_width, r.out_width, options.align_corners, options.half_pixel_centers);
                const auto i = ((static_cast<size_t>(b) * static_cast<size_t>(r.in_height) + static_cast<size_t>(in_y)) *
                                    static_cast<size_t>(r.in_width) +
                                static_cast<size_t>(in_x)) *
                               size;
                std::memcpy(dst.data() + o, src.data() + i, size);
            }
        }
}

// One axis of a bilinear sample: the two input indices and the position between them.
struct FloatTap {
    float position;
    int32_t low, high;
};
FloatTap float_tap(int32_t at, float scale, bool half_pixel_centers, int32_t in_size) {
    const float position = half_pixel_centers ? (static_cast<float>(at) + 0.5f) * scale - 0.5f : static_cast<float>(at) * scale;
    return {position, std::max(static_cast<int32_t>(std::floor(position)), 0),
            std::min(static_cast<int32_t>(std::ceil(position)), in_size - 1)};
}

// ComputeInterpolationValuesInteger: positions in 1/1024 steps.
struct IntegerTap {
    int32_t position, low, high;
};
IntegerTap integer_tap(int32_t at, int32_t scale_10, bool half_pixel_centers, int32_t in_size) {
    const int32_t position = half_pixel_centers ? at * scale_10 + scale_10 / 2 - (1 << 9) : at * scale_10;
    return {position, std::max(position / (1 << 10), 0), std::min((position + (1 << 10) - 1) / (1 << 10), in_size - 1)};
}

void run_bilinear(const OperatorView& v, HostTensors& tensors) {
    const Resize r = resize_of(v);
    const ResizeOptions options = bilinear_options(v);
    const bool align = options.align_corners, half = options.half_pixel_centers;
    const auto offset = [&](int32_t b, int32_t y, int32_t x, int32_t c) {
        return ((static_cast<size_t>(b) * static_cast<size_t>(r.in_height) + static_cast<size_t>(y)) *
                    static_cast<size_t>(r.in_width) +
                static_cast<size_t>(x)) *
                   static_cast<size_t>(r.depth) +
               static_cast<size_t>(c);
    };
    if (v.input(0).type == ElementType::Float32) {
        const auto in = typed<float>(tensors.read(v.op.inputs[0]));
        const auto out = typed<float>(tensors.write(v.op.outputs[0]));
        float height_scale = static_cast<float>(r.in_height) / static_cast<float>(r.out_height);
        float width_scale = static_cast<float>(r.in_width) / static_cast<float>(r.out_width);
        if (align && r.out_height > 1) height_scale = static_cast<float>(r.in_height - 1) / static_cast<float>(r.out_height - 1);
        if (align && r.out_width > 1) width_scale = static_cast<float>(r.in_width - 1) / static_cast<float>(r.out_width - 1);
        size_t o = 0;
        for (int32_t b = 0; b < r.batches; ++b)
            for (int32_t y = 0; y < r.out_height; ++y) {
                const FloatTap ty = float_tap(y, height_scale, half, r.in_height);
                const float dy = ty.position - static_cast<float>(ty.low);
                for (int32_t x = 0; x < r.out_width; ++x) {
                    const FloatTap tx = float_tap(x, width_scale, half, r.in_width);
                    const float dx = tx.position - static_cast<float>(tx.low);
                    for (int32_t c = 0; c < r.depth; ++c)
                        // TFLite's float order: each corner times (1 - dy) or dy, then (1 - dx) or dx,
                        // summed, plus its rounding offset of 0 (which turns -0 into +0).
                        out[o++] = in[offset(b, ty.low, tx.low, c)] * (1 - dy) * (1 - dx) +
                                   in[offset(b, ty.high, tx.low, c)] * dy * (1 - dx) +
                                   in[offset(b, ty.low, tx.high, c)] * (1 - dy) * dx +
                                   in[offset(b, ty.high, tx.high, c)] * dy * dx + 0.0f;
                }
            }
        return;
    }
    const auto in = typed<int8_t>(tensors.read(v.op.inputs[0]));
    const auto out = typed<int8_t>(tensors.write(v.op.outputs[0]));
    const auto scale_10 = [&](int32_t in_size, int32_t out_size) {
        return align && out_size > 1 ? ((1 << 10) * (in_size - 1) + (out_size - 1) / 2) / (out_size - 1)
                                     : ((1 << 10) * in_size + out_size / 2) / out_size;
    };
    const int32_t height_scale = scale_10(r.in_height, r.out_height), width_scale = scale_10(r.in_width, r.out_width);
    size_t o = 0;
    for (int32_t b = 0; b < r.batches; ++b)
        for (int32_t y = 0; y < r.out_height; ++y) {
            const IntegerTap ty = integer_tap(y, height_scale, half, r.in_height);
            const int64_t dy = ty.position - (1 << 10) * ty.low;
            for (int32_t x = 0; x < r.out_width; ++x) {
                const IntegerTap tx = integer_tap(x, width_scale, half, r.in_width);
                const int64_t dx = tx.position - (1 << 10) * tx.low;
                for (int32_t c = 0; c < r.depth; ++c) {
                    const int64_t sum = in[offset(b, ty.low, tx.low, c)] * ((1 << 10) - dy) * ((1 << 10) - dx) +
                                        in[offset(b, ty.high, tx.low, c)] * dy * ((1 << 10) - dx) +
                                        in[offset(b, ty.low, tx.high, c)] * ((1 << 10) - dy) * dx +
                                        in[offset(b, ty.high, tx.high, c)] * dy * dx;
                    // TFLite's default (not single) rounding: half away from zero, truncating divide.
                    out[o++] = static_cast<int8_t>((sum + (sum > 0 ? (1 << 19) : -(1 << 19))) / (1 << 20));
                }
            }
        }
}

}  // namespace

std::span<const CpuKernel> resize_kernels() {
    static constexpr CpuKernel kernels[] = {
        {"RESIZE_BILINEAR", check_resize, run_bilinear},
        {"RESIZE_NEAREST_NEIGHBOR", check_resize, run_nearest},
    };
    return kernels;
}

}  // namespace ethosu
