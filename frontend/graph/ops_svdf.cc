#include "frontend/graph/cpu_operator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend/graph/operator_options.h"
#include "frontend/graph/reference_kernels.h"

namespace ethosu {
namespace {

// SVDF's inputs (TFLM svdf_common.cc): input, feature weights, time weights, bias (optional),
// activation state (a variable the operator updates).
constexpr size_t kSvdfInput = 0, kSvdfFeatureWeights = 1, kSvdfTimeWeights = 2, kSvdfBias = 3, kSvdfState = 4;

reference::SvdfShape svdf_shape(const OperatorView& v) {
    const auto dim = [](const TensorInfo& t, size_t k) { return k < t.shape.size() ? static_cast<int>(t.shape[k]) : 0; };
    return {.batches = dim(v.input(kSvdfInput), 0),
            .input_size = dim(v.input(kSvdfInput), 1),
            .filters = dim(v.input(kSvdfFeatureWeights), 0),
            .rank = builtin_options<tflite::SVDFOptionsT>(v).rank,
            .memory = dim(v.input(kSvdfTimeWeights), 1)};
}

reference::SvdfQuantization svdf_quantization(const OperatorView& v) {
    const TensorInfo &in = v.input(kSvdfInput), &features = v.input(kSvdfFeatureWeights),
                     &time = v.input(kSvdfTimeWeights), &state = v.input(kSvdfState), &out = v.output(0);
    // TFLM forms both products and quotients in float, then widens (svdf_common.cc PrepareSvdf).
    return {.input_zero_point = static_cast<int32_t>(in.zero_point[0]),
            .state_zero_point = static_cast<int32_t>(state.zero_point[0]),
            .output_zero_point = static_cast<int32_t>(out.zero_point[0]),
            .feature_scale = reference::quantize_multiplier(
                static_cast<double>(in.scale[0] * features.scale[0] / state.scale[0])),
            .output_scale = reference::quantize_multiplier(
                static_cast<double>(state.scale[0] * time.scale[0] / out.scale[0]))};
}

// The integer SVDF TFLM runs: int8 input, feature weights and output; int8 or int16 time
// weights and state of the same type; int32 bias; shapes as its PrepareSvdf requires.
void check_svdf(const OperatorView& v) {
    v.expect_arity(5, 1);
    const TensorInfo &in = v.input(kSvdfInput), &features = v.input(kSvdfFeatureWeights),
                     &time = v.input(kSvdfTimeWeights), &state = v.input(kSvdfState), &out = v.output(0);
    v.expect(in.type == ElementType::Int8 && features.type == ElementType::Int8 && out.type == ElementType::Int8,
             "implemented for int8 input, feature weights and output only");
    v.expect((time.type == ElementType::Int8 || time.type == ElementType::Int16) && state.type == time.type,
             "time weights and state must both be int8 or both int16");
    v.expect(v.tensor(v.op.inputs[kSvdfState]).info.is_variable && !v.tensor(v.op.inputs[kSvdfState]).constant,
             "its activation state is not a variable tensor");
    for (const TensorInfo* t : {&in, &features, &time, &state, &out}) v.expect_quantized(*t);
    v.expect(in.shape.size() == 2 && features.shape.size() == 2 && time.shape.size() == 2 && state.shape.size() == 2 &&
                 out.shape.size() == 2,
             "input, weights, state and output must be 2-D");
    const reference::SvdfShape s = svdf_shape(v);
    v.expect(s.rank > 0 && s.filters % s.rank == 0,
             fmt::format("rank {} does not divide the {} filters", s.rank, s.filters));
    v.expect(features.shape[1] == s.input_size && time.shape[0] == s.filters && state.shape[0] == s.batches &&
                 state.shape[1] == int64_t{s.memory} * s.filters && out.shape[0] == s.batches && out.shape[1] == s.units(),
             fmt::format("shapes disagree: input [{}], feature weights [{}], time weights [{}], state [{}], output [{}]",
                         fmt::join(in.shape, ","), fmt::join(features.shape, ","), fmt::join(time.shape, ","),
                         fmt::join(state.shape, ","), fmt::join(out.shape, ",")));
    if (v.op.inputs[kSvdfBias] >= 0) {
        const TensorInfo& bias = v.input(kSvdfBias);
        v.expect(bias.type == ElementType::Int32 && bias.shape.size() == 1 && bias.shape[0] == s.units(),
                 fmt::format("the bias must be int32 of {} units", s.units()));
    }
    const auto q = svdf_quantization(v);
    v.expect(q.feature_scale.shift <= 30 && q.output_scale.shift <= 30, "an effective scale is over 2^30");
    // The feature weights' product: each batch's input against every filter.
    v.expect_bounded_work({uint64_t(s.batches), uint64_t(s.filters), uint64_t(s.input_size)});
}

void run_svdf(const OperatorView& v, HostTensors& tensors) {
    const auto s = svdf_shape(v);
    const auto q = svdf_quantization(v);
    const int32_t bias = v.op.inputs[kSvdfBias];
    const std::span<const int32_t> bias_values = bias >= 0 ? typed<int32_t>(tensors.read(bias)) : std::span<const int32_t>{};
    std::vector<uint8_t>& state = tensors.write(v.op.inputs[kSvdfState]);
    const auto& in = tensors.read(v.op.inputs[kSvdfInput]);
    const auto& features = tensors.read(v.op.inputs[kSvdfFeatureWeights]);
    const auto& time = tensors.read(v.op.inputs[kSvdfTimeWeights]);
    auto& out = tensors.write(v.op.outputs[0]);
    if (v.input(kSvdfState).type == ElementType::Int16)
        reference::svdf<int16_t>(s, q, typed<int8_t>(in), typed<int8_t>(features), typed<int16_t>(time), bias_values,
                                 typed<int16_t>(state), typed<int8_t>(out));
    else
        reference::svdf<int8_t>(s, q, typed<int8_t>(in), typed<int8_t>(features), typed<int8_t>(time), bias_values,
                                typed<int8_t>(state), typed<int8_t>(out));
}

}  // namespace

std::span<const CpuKernel> svdf_kernels() {
    static constexpr CpuKernel kernels[] = {{"SVDF", check_svdf, run_svdf}};
    return kernels;
}

}  // namespace ethosu
