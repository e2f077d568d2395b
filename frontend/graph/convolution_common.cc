#include "frontend/graph/convolution_common.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace ethosu {

int dimension(const TensorInfo& t, size_t k) { return k < t.shape.size() ? static_cast<int>(t.shape[k]) : 0; }

void expect_rank(const OperatorView& v, const TensorInfo& t, size_t rank) {
    v.expect(t.shape.size() == rank, fmt::format("'{}' is [{}]; {} takes it {}-D", t.name, fmt::join(t.shape, ","), v.name(), rank));
    for (const int64_t d : t.shape)
        v.expect(d > 0 && d <= INT32_MAX, fmt::format("'{}' is [{}]: a dimension is not positive", t.name, fmt::join(t.shape, ",")));
}

void expect_fused_activation(const OperatorView& v, int8_t activation) {
    v.expect(activation >= reference::kActNone && activation <= reference::kActSignBit,
             fmt::format("fused activation {} is not one of TFLite's", activation));
}

int window_padding(const OperatorView& v, const char* axis, int8_t padding, int in, int filter, int stride, int dilation,
                   int out) {
    v.expect(padding == 0 || padding == 1, fmt::format("padding {} is neither SAME (0) nor VALID (1)", padding));
    v.expect(stride >= 1 && dilation >= 1 && filter >= 1,
             fmt::format("{} stride {}, dilation {} and filter {} must be positive (are its options missing?)", axis,
                         stride, dilation, filter));
    // Real filters span a few points; one spanning more than int32 is a hostile file.
    v.expect((int64_t{filter} - 1) * dilation + 1 <= INT32_MAX,
             fmt::format("{} filter {} dilated {} spans more than 2^31 points", axis, filter, dilation));
    const int64_t expected = reference::window_output_size(padding == 0, in, filter, stride, dilation);
    v.expect(expected == out, fmt::format("output {} is {}; {} padding of {} by a filter of {} (stride {}, dilation {}) gives {}",
                                          axis, out, padding == 0 ? "SAME" : "VALID", in, filter, stride, dilation, expected));
    return static_cast<int>(reference::window_padding(stride, dilation, in, filter, out));
}

void expect_symmetric_int16(const OperatorView& v, const TensorInfo& t) {
    if (t.type == ElementType::Int16)
        v.expect(t.zero_point.size() == 1 && t.zero_point[0] == 0,
                 fmt::format("int16 '{}' has a zero point other than 0, which TFLM's 16-bit kernels leave out", t.name));
}

reference::QuantizedRange activation_clamp(const OperatorView& v, const TensorInfo& out, int8_t activation) {
    const reference::QuantizedRange type = out.type == ElementType::Int16 ? reference::QuantizedRange{INT16_MIN, INT16_MAX}
                                                                          : reference::QuantizedRange{INT8_MIN, INT8_MAX};
    const auto range = reference::quantized_activation_range(activation, out.scale[0],
                                                             static_cast<int32_t>(out.zero_point[0]), type);
    v.expect(range.has_value() && range->min <= range->max,
             fmt::format("the fused activation's bounds do not quantize into int32 at output scale {}", out.scale[0]));
    return *range;
}

// TFLM's per-tensor int8 FULLY_CONNECTED passes minus the filter's zero point as
// params.weights_offset, which reference_integer_ops::FullyConnected adds to every weight; the
// zero point 0 is only a TFLITE_DCHECK (fully_connected_common.cc), off in release builds, and
// Vela leaves such an operator on the CPU (a public KWT model has one with zero point -13).
int32_t weights_offset(const OperatorView& v, const WeightedInputs& k) {
    const TensorInfo &in = v.input(k.input), &weights = v.input(k.filter);
    const bool taken = k.per_tensor_weights_offset && in.type == ElementType::Int8 && weights.zero_point.size() == 1;
    return taken ? -static_cast<int32_t>(weights.zero_point[0]) : 0;
}

reference::IntegerOutputStage integer_output_stage(const OperatorView& v, const WeightedInputs& k, bool wide) {
    const TensorInfo &in = v.input(k.input), &weights = v.input(k.filter), &out = v.output(0);
    const int channels = dimension(weights, k.channel_dimension);
    v.expect(weights.scale.size() == 1 || weights.scale.size() == static_cast<size_t>(channels),
             fmt::format("filter '{}' has {} scales for {} channels", weights.name, weights.scale.size(), channels));
    v.expect(weights.zero_point.size() == weights.scale.size(),
             fmt::format("filter '{}' has {} scales and {} zero points", weights.name, weights.scale.size(),
                         weights.zero_point.size()));
    for (size_t c = 0; c < weights.scale.size(); ++c) {
        v.expect(std::isfinite(weights.scale[c]) && weights.scale[c] > 0,
                 fmt::format("filter '{}' has scale {}; a scale must be positive and finite", weights.name, weights.scale[c]));
        v.expect(weights.zero_point[c] == 0 || weights_offset(v, k) != 0,
                 fmt::format("filter '{}' has zero point {}; TFLM's kernels take symmetric weights here", weights.name,
                             weights.zero_point[c]));
    }
    // TFLM's 16-bit convolutions add no output offset; int16 zero points are 0 (checked).
    reference::IntegerOutputStage stage{.wide = wide,
                                        .output_offset = static_cast<int32_t>(out.zero_point[0]),
                                        .clamp = activation_clamp(v, out, k.fused_activation)};
    for (const float scale : weights.scale) {
        const double product = k.per_tensor_product_in_float && weights.scale.size() == 1
                                   ? static_cast<double>(in.scale[0] * scale)
                                   : static_cast<double>(in.scale[0]) * static_cast<double>(scale);
        stage.multipliers.push_back(reference::quantize_multiplier(product / static_cast<double>(out.scale[0])));
        // The int32 form shifts left at most 30 (TFLite's QuantizeMultiplier); the int64 one
        // asserts a shift below 8.
        v.expect(stage.multipliers.back().shift <= (wide ? 7 : 30),
                 fmt::format("the effective scale {} is beyond what TFLite's {}-bit rescaling takes",
                             product / static_cast<double>(out.scale[0]), wide ? 64 : 32));
    }
    return stage;
}

void expect_inputs(const OperatorView& v, size_t required, size_t optional) {
    v.expect((v.op.inputs.size() == required || v.op.inputs.size() == required + optional) && v.op.outputs.size() == 1,
             fmt::format("has {} inputs and {} outputs; {} takes {}{} and 1", v.op.inputs.size(), v.op.outputs.size(),
                         v.name(), required, optional ? fmt::format(" or {}", required + optional) : ""));
    for (size_t k = 0; k < required; ++k) v.expect(v.op.inputs[k] >= 0, fmt::format("input {} is omitted", k));
    v.expect(v.op.outputs[0] >= 0, "its output is omitted");
}

bool has_input(const OperatorView& v, size_t k) { return k < v.op.inputs.size() && v.op.inputs[k] >= 0; }

void expect_bias(const OperatorView& v, size_t k, std::initializer_list<ElementType> types, int64_t channels) {
    if (!has_input(v, k)) return;
    const TensorInfo& bias = v.input(k);
    std::vector<std::string_view> names;
    for (const ElementType t : types) names.push_back(element_type_name(t));
    v.expect(std::ranges::find(types, bias.type) != types.end(),
             fmt::format("bias '{}' is {}; with these inputs TFLM takes {}", bias.name, element_type_name(bias.type),
                         fmt::join(names, " or ")));
    v.expect(element_count(bias) == static_cast<uint64_t>(channels),
             fmt::format("bias '{}' has {} elements for {} output channels", bias.name, element_count(bias), channels));
}

std::vector<int64_t> integer_bias(const OperatorView& v, const HostTensors& tensors, size_t k) {
    if (!has_input(v, k)) return {};
    const std::vector<uint8_t>& bytes = tensors.read(v.op.inputs[k]);
    const auto widen = [](auto values) { return std::vector<int64_t>(values.begin(), values.end()); };
    switch (v.input(k).type) {
        case ElementType::Int16: return widen(typed<int16_t>(bytes));
        case ElementType::Int32: return widen(typed<int32_t>(bytes));
        default: return widen(typed<int64_t>(bytes));
    }
}

std::vector<int8_t> int8_weights(const OperatorView& v, const HostTensors& tensors, size_t k) {
    const std::vector<uint8_t>& bytes = tensors.read(v.op.inputs[k]);
    if (v.input(k).type == ElementType::Int4) return reference::unpack_int4(bytes, element_count(v.input(k)));
    const auto values = typed<int8_t>(bytes);
    return {values.begin(), values.end()};
}

void expect_weighted_operator(const OperatorView& v, const WeightedInputs& k, int64_t channels,
                              std::initializer_list<ElementType> int16_bias_types, bool wide,
                              std::initializer_list<uint64_t> macs) {
    using E = ElementType;
    expect_fused_activation(v, k.fused_activation);
    v.expect_bounded_work(macs);
    const TensorInfo &in = v.input(k.input), &weights = v.input(k.filter), &out = v.output(0);
    const bool int8_weights = weights.type == E::Int8 || (k.int4_weights && weights.type == E::Int4);
    const bool runs = (in.type == E::Float32 && weights.type == E::Float32 && out.type == E::Float32) ||
                      (in.type == E::Int8 && int8_weights && out.type == E::Int8) ||
                      (in.type == E::Int16 && weights.type == E::Int8 && out.type == E::Int16);
    v.expect(runs, fmt::format("takes {} input, {} weights and {} output; TFLM runs float32 / float32 / float32, "
                               "int8 / int8{} / int8 and int16 / int8 / int16",
                               element_type_name(in.type), element_type_name(weights.type), element_type_name(out.type),
                               k.int4_weights ? " or int4" : ""));
    if (in.type == E::Float32) return expect_bias(v, k.bias, {E::Float32}, channels);
    expect_bias(v, k.bias, in.type == E::Int16 ? int16_bias_types : std::initializer_list<ElementType>{E::Int32}, channels);
    v.expect_quantized(in);
    v.expect_quantized(out);
    expect_symmetric_int16(v, in);
    expect_symmetric_int16(v, out);
    integer_output_stage(v, k, wide);
}

bool int16_sums_wide(const OperatorView& v, const WeightedInputs& k, int8_t quantized_bias_type) {
    constexpr int8_t kTensorTypeInt32 = 2;  // TFLite's TensorType
    if (v.input(k.input).type != ElementType::Int16) return false;
    return has_input(v, k.bias) ? v.input(k.bias).type != ElementType::Int32 : quantized_bias_type != kTensorTypeInt32;
}

}  // namespace ethosu
