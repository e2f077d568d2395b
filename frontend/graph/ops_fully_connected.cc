// FULLY_CONNECTED on the host, as TFLM's fully_connected.cc runs it (reference_conv.h holds the
// arithmetic).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend/graph/convolution_common.h"

namespace ethosu {
namespace {

using E = ElementType;

// Input [..., accum] (any shape holding batches rows), weights [out, accum], bias [out]; the
// output's last dimension is out, the rest batches (keep_num_dims only shapes the output tensor).
struct FullyConnectedShape {
    int batches = 0, accum_depth = 0, out_depth = 0;
};

// Per-tensor weights: TFLM's multiplier from the float product of the scales
// (GetQuantizedConvolutionMultipler); per-channel ones: per output channel in double.
WeightedInputs fully_connected_inputs(const OperatorView& v) {
    return {.input = 0, .filter = 1, .bias = 2, .channel_dimension = 0, .per_tensor_product_in_float = true,
            .int4_weights = v.input(1).scale.size() <= 1};
}

FullyConnectedShape fully_connected_shape(const OperatorView& v) {
    const TensorInfo &in = v.input(0), &weights = v.input(1), &out = v.output(0);
    expect_rank(v, weights, 2);
    v.expect(!out.shape.empty() && out.shape.back() > 0, fmt::format("output '{}' has no last dimension", out.name));
    const FullyConnectedShape s{.batches = static_cast<int>(element_count(out) / static_cast<uint64_t>(out.shape.back())),
                                .accum_depth = dimension(weights, 1),
                                .out_depth = static_cast<int>(out.shape.back())};
    v.expect(dimension(weights, 0) == s.out_depth,
             fmt::format("weights '{}' are [{}] for {} outputs", weights.name, fmt::join(weights.shape, ","), s.out_depth));
    v.expect(element_count(in) == uint64_t(s.batches) * uint64_t(s.accum_depth),
             fmt::format("input '{}' is [{}], not {} rows of {}", in.name, fmt::join(in.shape, ","), s.batches, s.accum_depth));
    return s;
}

void check_fully_connected(const OperatorView& v) {
    expect_inputs(v, 2, 1);
    v.expect(v.op.fully_connected.weights_format == 0,
             fmt::format("weights format {} is not DEFAULT, which TFLM does not run", v.op.fully_connected.weights_format));
    const FullyConnectedShape s = fully_connected_shape(v);
    expect_fused_activation(v);
    const WeightedInputs k = fully_connected_inputs(v);
    expect_weighted_types(v, k, s.out_depth, {E::Int32, E::Int64});
    if (v.input(0).type != E::Float32) {
        // TFLM checks that a per-tensor bias's scale is about input scale x weight scale.
        if (v.input(1).scale.size() == 1 && has_input(v, 2)) {
            const TensorInfo &in = v.input(0), &bias = v.input(2), &out = v.output(0);
            const double product = static_cast<double>(in.scale[0]) * static_cast<double>(v.input(1).scale[0]);
            const double bias_scale = bias.scale.empty() ? 0.0 : static_cast<double>(bias.scale[0]);
            v.expect(std::abs(product - bias_scale) / static_cast<double>(out.scale[0]) <= 0.02,
                     fmt::format("bias '{}' has scale {}, not input scale x weight scale {}", bias.name, bias_scale, product));
        }
        integer_output_stage(v, 0, 1, 0, int16_sums_wide(v, k, v.op.fully_connected.quantized_bias_type), true);
    }
    expect_bounded_work(v, uint64_t(s.batches) * uint64_t(s.accum_depth) * uint64_t(s.out_depth));
}

void run_fully_connected(const OperatorView& v, HostTensors& tensors) {
    const FullyConnectedShape s = fully_connected_shape(v);
    const WeightedInputs k = fully_connected_inputs(v);
    run_weighted(v, tensors, k, int16_sums_wide(v, k, v.op.fully_connected.quantized_bias_type),
                 [&](auto in, int32_t offset, auto weights, auto bias, const auto& stage, auto out) {
                     reference::fully_connected(s.batches, s.accum_depth, s.out_depth, in, offset, weights, bias, stage, out);
                 });
}

}  // namespace

std::span<const CpuKernel> fully_connected_kernels() {
    static constexpr CpuKernel kernels[] = {
        {"FULLY_CONNECTED", check_fully_connected, run_fully_connected},
    };
    return kernels;
}

}  // namespace ethosu
