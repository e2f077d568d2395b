#include "frontend/graph/cpu_operator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend/graph/reference_kernels.h"

namespace ethosu {
namespace {

// The integer -> integer QUANTIZE pairs TFLM's reference kernel runs (quantize_common.cc).
bool tflm_requantizes(ElementType in, ElementType out) {
    using E = ElementType;
    switch (in) {
        case E::Int8: return out == E::Int8 || out == E::UInt8 || out == E::Int16 || out == E::Int32;
        case E::UInt8: return out == E::Int8;
        case E::Int16: return out == E::Int8 || out == E::Int16 || out == E::Int32;
        case E::Int32: return out == E::Int8 || out == E::Int16;
        default: return false;
    }
}

reference::QuantizedMultiplier requantize_multiplier(const OperatorView& v) {
    const auto m = reference::quantize_multiplier(static_cast<double>(v.input(0).scale[0]) /
                                                  static_cast<double>(v.output(0).scale[0]));
    // Beyond 2^30 TFLite's left shift overflows int32.
    v.expect(m.shift <= 30, "the input scale is over 2^30 times the output scale");
    return m;
}

void check_quantize(const OperatorView& v) {
    v.expect_arity(1, 1);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    v.expect_same_shape(in, out);
    v.expect_quantized(out);
    if (in.type == ElementType::Float32) {
        v.expect(is_quantized_integer(out.type),
                 fmt::format("quantizes float32 to {}; implemented: int8, uint8, int16", element_type_name(out.type)));
        return;
    }
    v.expect(tflm_requantizes(in.type, out.type),
             fmt::format("requantizes {} to {}, which TFLM does not", element_type_name(in.type), element_type_name(out.type)));
    v.expect_quantized(in);
    requantize_multiplier(v);
}

void check_dequantize(const OperatorView& v) {
    v.expect_arity(1, 1);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    v.expect_same_shape(in, out);
    v.expect(is_quantized_integer(in.type) && out.type == ElementType::Float32,
             fmt::format("dequantizes {} to {}; implemented: int8, uint8, int16 to float32", element_type_name(in.type),
                         element_type_name(out.type)));
    v.expect_quantized(in);
}

// TFLM's RESHAPE, SQUEEZE and EXPAND_DIMS copy the bytes; the output shape is the output
// tensor's (RESHAPE's optional shape input and EXPAND_DIMS's axis only restate it).
void check_reshape(const OperatorView& v) {
    v.expect(v.op.outputs.size() == 1 && (v.op.inputs.size() == 1 || v.op.inputs.size() == 2),
             fmt::format("has {} inputs and {} outputs; {} takes 1 or 2 and 1", v.op.inputs.size(),
                         v.op.outputs.size(), v.name()));
    v.expect(v.op.inputs[0] >= 0 && v.op.outputs[0] >= 0, "its data input or output is omitted");
    const TensorInfo &in = v.input(0), &out = v.output(0);
    v.expect(in.type == out.type, fmt::format("reshapes {} into {}", element_type_name(in.type), element_type_name(out.type)));
    v.expect(element_count(in) == element_count(out),
             fmt::format("shapes disagree: [{}] and [{}] hold different element counts", fmt::join(in.shape, ","),
                         fmt::join(out.shape, ",")));
}

void run_quantize(const OperatorView& v, HostTensors& tensors) {
    const std::vector<uint8_t>& in_bytes = tensors.read(v.op.inputs[0]);
    std::vector<uint8_t>& out_bytes = tensors.write(v.op.outputs[0]);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    const auto out_zp = static_cast<int32_t>(out.zero_point[0]);
    with_integer_type(out.type, [&](auto out_value) {
        using Out = decltype(out_value);
        if (in.type == ElementType::Float32) {
            reference::affine_quantize(typed<float>(in_bytes), out.scale[0], out_zp, typed<Out>(out_bytes));
            return;
        }
        with_integer_type(in.type, [&](auto in_value) {
            using In = decltype(in_value);
            reference::requantize(typed<In>(in_bytes), requantize_multiplier(v), static_cast<int32_t>(in.zero_point[0]),
                                  out_zp, typed<Out>(out_bytes));
        });
    });
}

void run_dequantize(const OperatorView& v, HostTensors& tensors) {
    const std::vector<uint8_t>& in_bytes = tensors.read(v.op.inputs[0]);
    std::vector<uint8_t>& out_bytes = tensors.write(v.op.outputs[0]);
    const TensorInfo& in = v.input(0);
    with_integer_type(in.type, [&](auto in_value) {
        using In = decltype(in_value);
        reference::dequantize(typed<In>(in_bytes), in.scale[0], static_cast<int32_t>(in.zero_point[0]),
                              typed<float>(out_bytes));
    });
}

void run_reshape(const OperatorView& v, HostTensors& tensors) { tensors.write(v.op.outputs[0]) = tensors.read(v.op.inputs[0]); }

}  // namespace

std::span<const CpuKernel> conversion_kernels() {
    static constexpr CpuKernel kernels[] = {
        {"QUANTIZE", check_quantize, run_quantize},
        {"DEQUANTIZE", check_dequantize, run_dequantize},
        {"RESHAPE", check_reshape, run_reshape},
        {"SQUEEZE", check_reshape, run_reshape},
        {"EXPAND_DIMS", check_reshape, run_reshape},
    };
    return kernels;
}

}  // namespace ethosu
