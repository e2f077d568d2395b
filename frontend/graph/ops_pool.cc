// AVERAGE_POOL_2D and MAX_POOL_2D on the host, as TFLM's pooling.cc runs them (reference_conv.h
// holds the arithmetic).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "frontend/graph/convolution_common.h"
#include "frontend/graph/operator_options.h"

namespace ethosu {
namespace {

using E = ElementType;

// AVERAGE_POOL_2D's and MAX_POOL_2D's options (Pool2DOptions).
struct PoolOptions {
    int8_t padding = 0;  // TFLite Padding: SAME 0, VALID 1
    int32_t stride_w = 0, stride_h = 0, filter_w = 0, filter_h = 0;
    int8_t fused_activation = 0;
};

PoolOptions pool_options(const OperatorView& v) {
    const auto o = builtin_options<tflite::Pool2DOptionsT>(v);
    return {.padding = o.padding, .stride_w = o.stride_w, .stride_h = o.stride_h, .filter_w = o.filter_width,
            .filter_h = o.filter_height, .fused_activation = o.fused_activation_function};
}

// Input and output [N,H,W,C] of one type (int8, int16 or float32); integer ones share scale
// (within 1e-6) and zero point (pooling_common.cc PoolingPrepare).
reference::WindowGeometry pool_geometry(const OperatorView& v, const PoolOptions& o) {
    const TensorInfo &in = v.input(0), &out = v.output(0);
    expect_rank(v, in, 4);
    expect_rank(v, out, 4);
    reference::WindowGeometry g{.batches = dimension(in, 0), .in_h = dimension(in, 1), .in_w = dimension(in, 2),
                                .in_c = dimension(in, 3), .filter_h = o.filter_h, .filter_w = o.filter_w,
                                .out_h = dimension(out, 1), .out_w = dimension(out, 2), .out_c = dimension(out, 3),
                                .stride_h = o.stride_h, .stride_w = o.stride_w};
    v.expect(dimension(out, 0) == g.batches && g.out_c == g.in_c,
             fmt::format("input '{}' is [{}], output '{}' [{}]: batches and channels must agree", in.name,
                         fmt::join(in.shape, ","), out.name, fmt::join(out.shape, ",")));
    g.pad_h = window_padding(v, "height", o.padding, g.in_h, g.filter_h, g.stride_h, 1, g.out_h);
    g.pad_w = window_padding(v, "width", o.padding, g.in_w, g.filter_w, g.stride_w, 1, g.out_w);
    return g;
}

void check_pool(const OperatorView& v) {
    v.expect_arity(1, 1);
    const PoolOptions o = pool_options(v);
    const auto g = pool_geometry(v, o);
    expect_fused_activation(v, o.fused_activation);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    v.expect((in.type == E::Int8 || in.type == E::Int16 || in.type == E::Float32) && out.type == in.type,
             fmt::format("pools {} into {}; TFLM pools int8, int16 and float32 into the same type", element_type_name(in.type),
                         element_type_name(out.type)));
    if (in.type != E::Float32) {
        v.expect_quantized(in);
        v.expect_quantized(out);
        v.expect(std::abs(in.scale[0] - out.scale[0]) <= 1.0e-6 && in.zero_point[0] == out.zero_point[0],
                 fmt::format("input scale {} and zero point {} differ from the output's {} and {}", in.scale[0],
                             in.zero_point[0], out.scale[0], out.zero_point[0]));
        activation_clamp(v, out, o.fused_activation);
    }
    // Windows are clipped to the input; TFLM counts a window's points in an int.
    v.expect(int64_t{std::min(g.filter_h, g.in_h)} * std::min(g.filter_w, g.in_w) <= INT32_MAX,
             "a pooling window holds more than 2^31 points");
    v.expect_bounded_work({element_count(out), uint64_t(std::min(g.filter_h, g.in_h)), uint64_t(std::min(g.filter_w, g.in_w))});
}

// Calls pool(geometry, input, clamp, output) with the operator's typed buffers.
template <class Pool>
void run_pool(const OperatorView& v, HostTensors& tensors, Pool&& pool) {
    const PoolOptions o = pool_options(v);
    const auto g = pool_geometry(v, o);
    const std::vector<uint8_t>& in = tensors.read(v.op.inputs[0]);
    std::vector<uint8_t>& out = tensors.write(v.op.outputs[0]);
    switch (v.input(0).type) {
        case E::Float32: return pool(g, typed<float>(in), reference::float_activation_range(o.fused_activation), typed<float>(out));
        case E::Int16: return pool(g, typed<int16_t>(in), activation_clamp(v, v.output(0), o.fused_activation), typed<int16_t>(out));
        default: return pool(g, typed<int8_t>(in), activation_clamp(v, v.output(0), o.fused_activation), typed<int8_t>(out));
    }
}

void run_average_pool(const OperatorView& v, HostTensors& tensors) {
    run_pool(v, tensors, [&](const auto& g, auto in, auto clamp, auto out) {
        // TFLM fails the operator where a window holds no input point.
        v.expect(reference::average_pool(g, in, clamp, out), "a pooling window lies wholly outside the input");
    });
}

void run_max_pool(const OperatorView& v, HostTensors& tensors) {
    run_pool(v, tensors, [](const auto& g, auto in, auto clamp, auto out) { reference::max_pool(g, in, clamp, out); });
}

}  // namespace

std::span<const CpuKernel> pool_kernels() {
    static constexpr CpuKernel kernels[] = {
        {"AVERAGE_POOL_2D", check_pool, run_average_pool},
        {"MAX_POOL_2D", check_pool, run_max_pool},
    };
    return kernels;
}

}  // namespace ethosu
