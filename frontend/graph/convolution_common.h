#pragma once
// What the convolution family (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED) and the
// 2-D pools share when they check and run an operator: dimensions, the fused activation, the
// filter's and bias's quantization, TFLM's output multipliers, and int4 weights unpacked.

#include <cstdint>
#include <vector>

#include "frontend/graph/cpu_operator.h"
#include "frontend/graph/reference_conv.h"

namespace ethosu {

// Dimension k of t as an int (0 past its rank).
int dimension(const TensorInfo& t, size_t k);
void expect_rank(const OperatorView& v, const TensorInfo& t, size_t rank);

// The fused activation (an operator's options' code) must be one of TFLite's
// ActivationFunctionType; TANH and SIGN_BIT clamp nothing, as in TFLM (CalculateActivationRange's
// last case).
void expect_fused_activation(const OperatorView& v, int8_t activation);
// A window (stride, dilation) of padding SAME (0) or VALID (1) must give the output's extent.
// Returns the padding before the first element.
int window_padding(const OperatorView& v, const char* axis, int8_t padding, int in, int filter, int stride, int dilation,
                   int out);

// An int16 activation must have zero point 0: TFLM's 16-bit kernels leave the zero point out.
void expect_symmetric_int16(const OperatorView& v, const TensorInfo& t);

// The quantized-integer clamp of the fused activation for the operator's output.
reference::QuantizedRange activation_clamp(const OperatorView& v, const TensorInfo& out, int8_t activation);


// The bias input `k` as int64 (int16, int32 or int64 in the file), or empty where it is omitted.
std::vector<int64_t> integer_bias(const OperatorView& v, const HostTensors& tensors, size_t k);
// The bias input `k` must be one of `types` with `channels` elements, or omitted.
void expect_bias(const OperatorView& v, size_t k, std::initializer_list<ElementType> types, int64_t channels);
bool has_input(const OperatorView& v, size_t k);
// `required` inputs present, then `optional` ones that may be left off the end; one output.
void expect_inputs(const OperatorView& v, size_t required, size_t optional);

// int8 weights as TFLM computes with them: int4 ones unpacked, int8 ones as they are.
std::vector<int8_t> int8_weights(const OperatorView& v, const HostTensors& tensors, size_t k);

// Where a convolution-family operator keeps its inputs, and how TFLM scales its output.
struct WeightedInputs {
    size_t input = 0, filter = 1, bias = 2;
    size_t channel_dimension = 0;  // the filter's quantized (output channel) dimension
    bool per_tensor_product_in_float = false;
    bool int4_weights = true;  // TFLM unpacks int4 filters for int8 inputs
    // An int8 operator whose filter has one scale takes its zero point as a weights offset
    // (FULLY_CONNECTED); elsewhere filter zero points must be 0.
    bool per_tensor_weights_offset = false;
    int8_t fused_activation = 0;  // from the operator's options: the output stage's clamp
};

// The weights offset the kernel adds to each weight: minus the filter's zero point where k takes
// one (an int8 input and a per-tensor filter), else 0.
int32_t weights_offset(const OperatorView& v, const WeightedInputs& k);

// The output stage of an integer convolution-family operator with inputs k, its filter quantized
// along k.channel_dimension (per channel or one scale; zero points 0 unless k takes a weights
// offset): TFLM's multiplier per channel of input scale x filter scale / output scale in double
// (PopulateConvolutionQuantizationParams), or with k.per_tensor_product_in_float the per-tensor
// product formed in float first (GetQuantizedConvolutionMultipler, FULLY_CONNECTED). `wide`:
// int64 sums and bias.
reference::IntegerOutputStage integer_output_stage(const OperatorView& v, const WeightedInputs& k, bool wide);

// What a weighted operator's check shares, once its shapes are checked: the fused activation; the
// types TFLM runs (float32 with float32 weights and bias; int8 with int8 or int4 weights and int32
// bias; int16 with int8 weights and a bias of `int16_bias_types`) with `channels` bias elements;
// the quantization of input, weights and output (the output stage, `wide` or not); bounded work
// (the product of `macs`).
void expect_weighted_operator(const OperatorView& v, const WeightedInputs& k, int64_t channels,
                              std::initializer_list<ElementType> int16_bias_types, bool wide,
                              std::initializer_list<uint64_t> macs);

// Whether a 16-bit CONV_2D or FULLY_CONNECTED sums in int64: TFLM sums in int32 where the bias
// is int32, or omitted and quantized_bias_type says INT32; in int64 otherwise (conv.cc,
// fully_connected.cc).
bool int16_sums_wide(const OperatorView& v, const WeightedInputs& k, int8_t quantized_bias_type);

// Calls kernel(input, input_offset, weights, bias, stage, output) with the operator's typed
// buffers: float32 ones with the activation range as stage, integer ones with int8 weights
// (int4 unpacked), an int64 bias and the integer output stage (`wide`: int64 sums).
template <class Kernel>
void run_weighted(const OperatorView& v, HostTensors& tensors, const WeightedInputs& k, bool wide, Kernel&& kernel) {
    const std::vector<uint8_t>& in = tensors.read(v.op.inputs[k.input]);
    std::vector<uint8_t>& out = tensors.write(v.op.outputs[0]);
    if (v.input(k.input).type == ElementType::Float32) {
        const auto bias = has_input(v, k.bias) ? typed<float>(tensors.read(v.op.inputs[k.bias])) : std::span<const float>{};
        kernel(typed<float>(in), 0, typed<float>(tensors.read(v.op.inputs[k.filter])), bias,
               reference::float_activation_range(k.fused_activation), typed<float>(out));
        return;
    }
    const std::vector<int8_t> weights = int8_weights(v, tensors, k.filter);
    const std::vector<int64_t> bias = integer_bias(v, tensors, k.bias);
    const reference::IntegerOutputStage stage = integer_output_stage(v, k, wide);
    if (v.input(k.input).type == ElementType::Int16)
        kernel(typed<int16_t>(in), 0, std::span<const int8_t>(weights), std::span<const int64_t>(bias), stage,
               typed<int16_t>(out));
    else
        kernel(typed<int8_t>(in), -static_cast<int32_t>(v.input(k.input).zero_point[0]), std::span<const int8_t>(weights),
               std::span<const int64_t>(bias), stage, typed<int8_t>(out));
}

}  // namespace ethosu
