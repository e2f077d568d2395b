#include "frontend/graph/cpu_operator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "frontend/graph/operator_options.h"
#include "frontend/graph/reference_kernels.h"

namespace ethosu {
namespace {

// TFLM's integer SOFTMAX (softmax_common.cc): int8 input; int8 output at scale 1/256 and zero
// point -128, or int16 at 1/65536 and -32768.
reference::SoftmaxParameters softmax_parameters(const OperatorView& v) {
    const float beta = builtin_options<tflite::SoftmaxOptionsT>(v).beta;
    const auto p = reference::softmax_parameters(beta, v.input(0).scale[0]);
    // TFLite requires beta * scale * 2^26 above one; a left shift of 31 would overflow its int32.
    v.expect(p.input_left_shift >= 0 && p.input_left_shift <= 30,
             fmt::format("beta {} times input scale {} is outside what TFLite's integer softmax takes", beta,
                         v.input(0).scale[0]));
    return p;
}

void check_softmax(const OperatorView& v) {
    v.expect_arity(1, 1);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    v.expect_same_shape(in, out);
    v.expect(!in.shape.empty() && in.shape.back() > 0, "needs a last dimension to normalise over");
    v.expect(in.type == ElementType::Int8 && (out.type == ElementType::Int8 || out.type == ElementType::Int16),
             fmt::format("takes {} to {}; implemented: int8 to int8 or int16", element_type_name(in.type),
                         element_type_name(out.type)));
    v.expect_quantized(in);
    v.expect_quantized(out);
    const bool wide = out.type == ElementType::Int16;
    const float unit = wide ? 1.0f / 65536 : 1.0f / 256;
    const int64_t zero_point = wide ? -32768 : -128;
    // TFLM: int16 within 0.1% of 1/65536, int8 exactly 1/256.
    v.expect(out.zero_point[0] == zero_point && (wide ? std::abs(out.scale[0] - unit) <= 0.001f * unit : out.scale[0] == unit),
             fmt::format("output '{}' must have zero point {} and scale 1/{}", out.name, zero_point, wide ? 65536 : 256));
    softmax_parameters(v);
}

void run_softmax(const OperatorView& v, HostTensors& tensors) {
    const auto p = softmax_parameters(v);
    const auto depth = static_cast<size_t>(v.input(0).shape.back());
    const auto in = typed<int8_t>(tensors.read(v.op.inputs[0]));
    auto& out = tensors.write(v.op.outputs[0]);
    if (v.output(0).type == ElementType::Int16)
        reference::softmax<int8_t, int16_t>(p, depth, in, typed<int16_t>(out));
    else
        reference::softmax<int8_t, int8_t>(p, depth, in, typed<int8_t>(out));
}

}  // namespace

std::span<const CpuKernel> softmax_kernels() {
    static constexpr CpuKernel kernels[] = {{"SOFTMAX", check_softmax, run_softmax}};
    return kernels;
}

}  // namespace ethosu
