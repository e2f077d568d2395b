// CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV on the host, as TFLM's conv.cc,
// depthwise_conv.cc and transpose_conv.cc run them (reference_conv.h holds the arithmetic).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend/graph/convolution_common.h"
#include "frontend/graph/operator_options.h"

namespace ethosu {
namespace {

using E = ElementType;

// A convolution's options, each kernel's from its own table (Conv2DOptions,
// DepthwiseConv2DOptions, TransposeConvOptions).
struct ConvOptions {
    int8_t padding = 0;  // TFLite Padding: SAME 0, VALID 1
    int32_t stride_w = 0, stride_h = 0, dilation_w = 1, dilation_h = 1;
    int32_t depth_multiplier = 0;    // DEPTHWISE_CONV_2D
    int8_t quantized_bias_type = 0;  // TFLite TensorType; 0 (FLOAT32) where unset
    int8_t fused_activation = 0;
};

WeightedInputs with_activation(WeightedInputs k, const ConvOptions& o) {
    k.fused_activation = o.fused_activation;
    return k;
}

// Height and width of a window over `in` producing `out` (both NHWC).
void fill_window(const OperatorView& v, const ConvOptions& o, const TensorInfo& in, const TensorInfo& out,
                 reference::WindowGeometry& g) {
    g.pad_h = window_padding(v, "height", o.padding, g.in_h, g.filter_h, o.stride_h, o.dilation_h, g.out_h);
    g.pad_w = window_padding(v, "width", o.padding, g.in_w, g.filter_w, o.stride_w, o.dilation_w, g.out_w);
    g.stride_h = o.stride_h;
    g.stride_w = o.stride_w;
    g.dilation_h = o.dilation_h;
    g.dilation_w = o.dilation_w;
    v.expect(dimension(in, 0) == dimension(out, 0),
             fmt::format("input '{}' has {} batches, output '{}' {}", in.name, dimension(in, 0), out.name, dimension(out, 0)));
}

reference::WindowGeometry nhwc(const TensorInfo& in, const TensorInfo& filter, const TensorInfo& out) {
    return {.batches = dimension(in, 0), .in_h = dimension(in, 1), .in_w = dimension(in, 2), .in_c = dimension(in, 3),
            .filter_h = dimension(filter, 1), .filter_w = dimension(filter, 2), .filter_c = dimension(filter, 3),
            .out_h = dimension(out, 1), .out_w = dimension(out, 2), .out_c = dimension(out, 3)};
}

void expect_4d(const OperatorView& v, std::initializer_list<const TensorInfo*> tensors) {
    for (const TensorInfo* t : tensors) expect_rank(v, *t, 4);
}

// --- CONV_2D: input [N,H,W,C], filter [O,KH,KW,C/groups], bias [O] (conv.cc, conv_common.cc).

constexpr WeightedInputs kConv{.input = 0, .filter = 1, .bias = 2, .channel_dimension = 0};

ConvOptions conv_options(const OperatorView& v) {
    const auto o = builtin_options<tflite::Conv2DOptionsT>(v);
    return {.padding = o.padding, .stride_w = o.stride_w, .stride_h = o.stride_h, .dilation_w = o.dilation_w_factor,
            .dilation_h = o.dilation_h_factor, .quantized_bias_type = o.quantized_bias_type,
            .fused_activation = o.fused_activation_function};
}

reference::WindowGeometry conv_geometry(const OperatorView& v, const ConvOptions& o) {
    const TensorInfo &in = v.input(0), &filter = v.input(1), &out = v.output(0);
    expect_4d(v, {&in, &filter, &out});
    reference::WindowGeometry g = nhwc(in, filter, out);
    v.expect(dimension(filter, 0) == g.out_c,
             fmt::format("filter '{}' has {} output channels, output '{}' {}", filter.name, dimension(filter, 0), out.name, g.out_c));
    v.expect(g.in_c % g.filter_c == 0 && g.out_c % (g.in_c / g.filter_c) == 0,
             fmt::format("{} input channels do not split into groups of the filter's {} for {} outputs", g.in_c, g.filter_c,
                         g.out_c));
    fill_window(v, o, in, out, g);
    return g;
}

void check_conv(const OperatorView& v) {
    expect_inputs(v, 2, 1);
    const ConvOptions o = conv_options(v);
    const auto g = conv_geometry(v, o);
    expect_weighted_operator(v, with_activation(kConv, o), g.out_c, {E::Int32, E::Int64},
                             int16_sums_wide(v, kConv, o.quantized_bias_type),
                             {element_count(v.output(0)), uint64_t(g.filter_h), uint64_t(g.filter_w), uint64_t(g.filter_c)});
}

void run_conv(const OperatorView& v, HostTensors& tensors) {
    const ConvOptions o = conv_options(v);
    const auto g = conv_geometry(v, o);
    run_weighted(v, tensors, with_activation(kConv, o), int16_sums_wide(v, kConv, o.quantized_bias_type),
                 [&](auto in, int32_t offset, auto weights, auto bias, const auto& stage, auto out) {
                     reference::conv_2d(g, in, offset, weights, bias, stage, out);
                 });
}

// --- DEPTHWISE_CONV_2D: input [N,H,W,C], filter [1,KH,KW,C*M], bias [C*M] (depthwise_conv.cc).

constexpr WeightedInputs kDepthwise{.input = 0, .filter = 1, .bias = 2, .channel_dimension = 3};

ConvOptions depthwise_options(const OperatorView& v) {
    const auto o = builtin_options<tflite::DepthwiseConv2DOptionsT>(v);
    return {.padding = o.padding, .stride_w = o.stride_w, .stride_h = o.stride_h, .dilation_w = o.dilation_w_factor,
            .dilation_h = o.dilation_h_factor, .depth_multiplier = o.depth_multiplier,
            .fused_activation = o.fused_activation_function};
}

reference::WindowGeometry depthwise_geometry(const OperatorView& v, const ConvOptions& o) {
    const TensorInfo &in = v.input(0), &filter = v.input(1), &out = v.output(0);
    expect_4d(v, {&in, &filter, &out});
    reference::WindowGeometry g = nhwc(in, filter, out);
    g.depth_multiplier = o.depth_multiplier;
    v.expect(dimension(filter, 0) == 1 && g.filter_c == g.out_c,
             fmt::format("filter '{}' is [{}]; a depthwise filter is [1,h,w,{}]", filter.name, fmt::join(filter.shape, ","), g.out_c));
    v.expect(int64_t{g.in_c} * g.depth_multiplier == g.out_c,
             fmt::format("{} input channels times depth multiplier {} are not the output's {} channels", g.in_c,
                         g.depth_multiplier, g.out_c));
    fill_window(v, o, in, out, g);
    return g;
}

void check_depthwise(const OperatorView& v) {
    expect_inputs(v, 2, 1);
    const ConvOptions o = depthwise_options(v);
    const auto g = depthwise_geometry(v, o);
    // TFLM's 16-bit depthwise convolution reads its bias as int64 whatever its type.
    expect_weighted_operator(v, with_activation(kDepthwise, o), g.out_c, {E::Int64}, v.input(0).type == E::Int16,
                             {element_count(v.output(0)), uint64_t(g.filter_h), uint64_t(g.filter_w)});
}

void run_depthwise(const OperatorView& v, HostTensors& tensors) {
    const ConvOptions o = depthwise_options(v);
    const auto g = depthwise_geometry(v, o);
    run_weighted(v, tensors, with_activation(kDepthwise, o), v.input(0).type == E::Int16,
                 [&](auto in, int32_t offset, auto weights, auto bias, const auto& stage, auto out) {
                     reference::depthwise_conv_2d(g, in, offset, weights, bias, stage, out);
                 });
}

// --- TRANSPOSE_CONV: output shape (int32 [4], unread: TFLM sizes from the output tensor), filter
// [O,KH,KW,C], input [N,H,W,C], bias [O] (transpose_conv.cc).

constexpr WeightedInputs kTransposeConv{.input = 2, .filter = 1, .bias = 3, .channel_dimension = 0, .int4_weights = false};

ConvOptions transpose_conv_options(const OperatorView& v) {
    const auto o = builtin_options<tflite::TransposeConvOptionsT>(v);
    return {.padding = o.padding, .stride_w = o.stride_w, .stride_h = o.stride_h,
            .quantized_bias_type = o.quantized_bias_type, .fused_activation = o.fused_activation_function};
}

reference::WindowGeometry transpose_conv_geometry(const OperatorView& v, const ConvOptions& o) {
    const TensorInfo &in = v.input(2), &filter = v.input(1), &out = v.output(0);
    expect_4d(v, {&in, &filter, &out});
    reference::WindowGeometry g = nhwc(in, filter, out);
    v.expect(dimension(filter, 0) == g.out_c && g.filter_c == g.in_c,
             fmt::format("filter '{}' is [{}] for {} input and {} output channels", filter.name, fmt::join(filter.shape, ","),
                         g.in_c, g.out_c));
    v.expect(dimension(in, 0) == dimension(out, 0),
             fmt::format("input '{}' has {} batches, output '{}' {}", in.name, dimension(in, 0), out.name, dimension(out, 0)));
    // The padding of a convolution from the output's extent (dilation 1); the input's extent
    // only bounds the loops, as in TFLM.
    v.expect(o.padding == 0 || o.padding == 1, fmt::format("padding {} is neither SAME (0) nor VALID (1)", o.padding));
    v.expect(o.stride_h >= 1 && o.stride_w >= 1, fmt::format("strides {}x{} must be positive", o.stride_h, o.stride_w));
    const auto padding = [&](int out_extent, int filter_extent, int stride) {
        const int64_t in_extent = reference::window_output_size(o.padding == 0, out_extent, filter_extent, stride, 1);
        return static_cast<int>(reference::window_padding(stride, 1, out_extent, filter_extent, std::max<int64_t>(in_extent, 0)));
    };
    g.pad_h = padding(g.out_h, g.filter_h, o.stride_h);
    g.pad_w = padding(g.out_w, g.filter_w, o.stride_w);
    g.stride_h = o.stride_h;
    g.stride_w = o.stride_w;
    return g;
}

void check_transpose_conv(const OperatorView& v) {
    expect_inputs(v, 3, 1);
    const ConvOptions o = transpose_conv_options(v);
    const auto g = transpose_conv_geometry(v, o);
    // TFLM's 16-bit transpose convolution widens an int16 bias and reads any other as int64.
    expect_weighted_operator(v, with_activation(kTransposeConv, o), g.out_c, {E::Int16, E::Int64}, v.input(2).type == E::Int16,
                             {element_count(v.input(2)), uint64_t(g.filter_h), uint64_t(g.filter_w), uint64_t(g.out_c)});
}

void run_transpose_conv(const OperatorView& v, HostTensors& tensors) {
    const ConvOptions o = transpose_conv_options(v);
    const auto g = transpose_conv_geometry(v, o);
    run_weighted(v, tensors, with_activation(kTransposeConv, o), v.input(2).type == E::Int16,
                 [&](auto in, int32_t offset, auto weights, auto bias, const auto& stage, auto out) {
                     reference::transpose_conv(g, in, offset, weights, bias, stage, out);
                 });
}

}  // namespace

std::span<const CpuKernel> convolution_kernels() {
    static constexpr CpuKernel kernels[] = {
        {"CONV_2D", check_conv, run_conv},
        {"DEPTHWISE_CONV_2D", check_depthwise, run_depthwise},
        {"TRANSPOSE_CONV", check_transpose_conv, run_transpose_conv},
    };
    return kernels;
}

}  // namespace ethosu
