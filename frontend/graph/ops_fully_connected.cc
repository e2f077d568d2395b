// FULLY_CONNECTED and BATCH_MATMUL on the host, as TFLM's fully_connected.cc and batch_matmul.cc
// run them (reference_conv.h holds the arithmetic).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend/graph/convolution_common.h"
#include "frontend/graph/operator_options.h"

namespace ethosu {
namespace {

using E = ElementType;

// Input [..., accum] (any shape holding batches rows), weights [out, accum], bias [out]; the
// output's last dimension is out, the rest batches (keep_num_dims only shapes the output tensor).
struct FullyConnectedShape {
    int batches = 0, accum_depth = 0, out_depth = 0;
};

// FULLY_CONNECTED's options (FullyConnectedOptions).
struct FullyConnectedOptions {
    int8_t weights_format = 0;  // 0 DEFAULT, 1 SHUFFLED4x16INT8
    int8_t quantized_bias_type = 0;
    int8_t fused_activation = 0;
};

FullyConnectedOptions fully_connected_options(const OperatorView& v) {
    const auto o = builtin_options<tflite::FullyConnectedOptionsT>(v);
    return {.weights_format = o.weights_format, .quantized_bias_type = o.quantized_bias_type,
            .fused_activation = o.fused_activation_function};
}

// Per-tensor weights: TFLM's multiplier from the float product of the scales
// (GetQuantizedConvolutionMultipler) and their zero point as the weights offset; per-channel ones:
// per output channel in double.
WeightedInputs fully_connected_inputs(const OperatorView& v, const FullyConnectedOptions& o) {
    return {.input = 0, .filter = 1, .bias = 2, .channel_dimension = 0, .per_tensor_product_in_float = true,
            .int4_weights = v.input(1).scale.size() <= 1, .per_tensor_weights_offset = true,
            .fused_activation = o.fused_activation};
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
    const FullyConnectedOptions o = fully_connected_options(v);
    v.expect(o.weights_format == 0, fmt::format("weights format {} is not DEFAULT, which TFLM does not run", o.weights_format));
    const FullyConnectedShape s = fully_connected_shape(v);
    const WeightedInputs k = fully_connected_inputs(v, o);
    expect_weighted_operator(v, k, s.out_depth, {E::Int32, E::Int64}, int16_sums_wide(v, k, o.quantized_bias_type),
                             {uint64_t(s.batches), uint64_t(s.accum_depth), uint64_t(s.out_depth)});
    // TFLM checks that a per-tensor bias's scale is about input scale x weight scale.
    if (v.input(0).type != E::Float32 && v.input(1).scale.size() == 1 && has_input(v, 2)) {
        const TensorInfo &in = v.input(0), &bias = v.input(2), &out = v.output(0);
        const double product = static_cast<double>(in.scale[0]) * static_cast<double>(v.input(1).scale[0]);
        const double bias_scale = bias.scale.empty() ? 0.0 : static_cast<double>(bias.scale[0]);
        v.expect(std::abs(product - bias_scale) / static_cast<double>(out.scale[0]) <= 0.02,
                 fmt::format("bias '{}' has scale {}, not input scale x weight scale {}", bias.name, bias_scale, product));
    }
}

void run_fully_connected(const OperatorView& v, HostTensors& tensors) {
    const FullyConnectedOptions o = fully_connected_options(v);
    const FullyConnectedShape s = fully_connected_shape(v);
    const WeightedInputs k = fully_connected_inputs(v, o);
    const int32_t filter_offset = weights_offset(v, k);
    run_weighted(v, tensors, k, int16_sums_wide(v, k, o.quantized_bias_type),
                 [&](auto in, int32_t offset, auto weights, auto bias, const auto& stage, auto out) {
                     reference::fully_connected(s.batches, s.accum_depth, s.out_depth, in, offset, weights,
                                                filter_offset, bias, stage, out);
                 });
}

// --- BATCH_MATMUL: lhs [..., rows, depth] x rhs [..., depth, cols] (each with its last two
// dimensions swapped when adjoint) -> [batch..., rows, cols]; ranks 2 to 5, batch dimensions
// broadcast where one side has 1 (batch_matmul.cc BatchMatMulPrepare).

reference::MatMulShape matmul_shape(const OperatorView& v) {
    const TensorInfo &lhs = v.input(0), &rhs = v.input(1), &out = v.output(0);
    for (const TensorInfo* t : {&lhs, &rhs}) {
        v.expect(t->shape.size() >= 2 && t->shape.size() <= 5,
                 fmt::format("'{}' is [{}]; BATCH_MATMUL takes ranks 2 to 5", t->name, fmt::join(t->shape, ",")));
        expect_rank(v, *t, t->shape.size());
    }
    const auto o = builtin_options<tflite::BatchMatMulOptionsT>(v);  // adj_x, adj_y
    const size_t rank = std::max(lhs.shape.size(), rhs.shape.size());
    // A dimension of the shape right-aligned to `rank` (1 where it is missing).
    const auto dim = [&](const TensorInfo& t, size_t k) {
        return k + t.shape.size() < rank ? 1 : static_cast<int>(t.shape[k + t.shape.size() - rank]);
    };
    reference::MatMulShape s{.rows = o.adj_x ? dim(lhs, rank - 1) : dim(lhs, rank - 2),
                             .cols = o.adj_y ? dim(rhs, rank - 2) : dim(rhs, rank - 1),
                             .depth = o.adj_x ? dim(lhs, rank - 2) : dim(lhs, rank - 1),
                             .adj_x = o.adj_x,
                             .adj_y = o.adj_y};
    const int rhs_depth = o.adj_y ? dim(rhs, rank - 1) : dim(rhs, rank - 2);
    v.expect(rhs_depth == s.depth, fmt::format("'{}' [{}] and '{}' [{}] disagree on the summed dimension ({} and {})",
                                               lhs.name, fmt::join(lhs.shape, ","), rhs.name, fmt::join(rhs.shape, ","),
                                               s.depth, rhs_depth));
    std::vector<int64_t> expected;
    for (size_t k = 0; k + 2 < rank; ++k) {
        const int a = dim(lhs, k), b = dim(rhs, k);
        v.expect(a == b || a == 1 || b == 1, fmt::format("batch dimensions {} and {} do not broadcast", a, b));
        expected.push_back(std::max(a, b));
        // Batch dimensions right-aligned into the reference's three.
        const size_t slot = k + 5 - rank;
        s.lhs_batch[slot] = a, s.rhs_batch[slot] = b, s.out_batch[slot] = std::max(a, b);
    }
    expected.push_back(s.rows);
    expected.push_back(s.cols);
    v.expect(out.shape == expected, fmt::format("output '{}' is [{}]; the product is [{}]", out.name, fmt::join(out.shape, ","),
                                                fmt::join(expected, ",")));
    return s;
}

// TFLM's multiplier from the float product of the two scales (GetQuantizedConvolutionMultipler).
reference::IntegerOutputStage matmul_stage(const OperatorView& v) {
    const TensorInfo &lhs = v.input(0), &rhs = v.input(1), &out = v.output(0);
    const bool wide = lhs.type == E::Int16;  // int64 sums
    const double real = static_cast<double>(lhs.scale[0] * rhs.scale[0]) / static_cast<double>(out.scale[0]);
    reference::IntegerOutputStage stage{.multipliers = {reference::quantize_multiplier(real)},
                                        .wide = wide,
                                        .output_offset = static_cast<int32_t>(out.zero_point[0]),
                                        .clamp = wide ? reference::QuantizedRange{INT16_MIN, INT16_MAX}
                                                      : reference::QuantizedRange{INT8_MIN, INT8_MAX}};
    v.expect(stage.multipliers[0].shift <= (wide ? 7 : 30),
             fmt::format("the effective scale {} is beyond what TFLite's rescaling takes", real));
    return stage;
}

void check_batch_matmul(const OperatorView& v) {
    v.expect_arity(2, 1);
    const TensorInfo &lhs = v.input(0), &rhs = v.input(1), &out = v.output(0);
    v.expect((lhs.type == E::Float32 || lhs.type == E::Int8 || lhs.type == E::Int16) && rhs.type == lhs.type &&
                 out.type == lhs.type,
             fmt::format("multiplies {} by {} into {}; TFLM takes float32, int8 or int16, all alike",
                         element_type_name(lhs.type), element_type_name(rhs.type), element_type_name(out.type)));
    const reference::MatMulShape s = matmul_shape(v);
    if (lhs.type != E::Float32) {
        for (const TensorInfo* t : {&lhs, &rhs, &out}) {
            v.expect_quantized(*t);
            expect_symmetric_int16(v, *t);
        }
        matmul_stage(v);
    }
    v.expect_bounded_work({element_count(out), uint64_t(s.depth)});
}

void run_batch_matmul(const OperatorView& v, HostTensors& tensors) {
    const reference::MatMulShape s = matmul_shape(v);
    const auto &lhs = tensors.read(v.op.inputs[0]), &rhs = tensors.read(v.op.inputs[1]);
    auto& out = tensors.write(v.op.outputs[0]);
    const auto offset = [&](size_t k) { return -static_cast<int32_t>(v.input(k).zero_point[0]); };
    switch (v.input(0).type) {
        case E::Float32: return reference::batch_matmul(s, typed<float>(lhs), 0, typed<float>(rhs), 0, reference::FloatRange{}, typed<float>(out));
        case E::Int16: return reference::batch_matmul(s, typed<int16_t>(lhs), 0, typed<int16_t>(rhs), 0, matmul_stage(v), typed<int16_t>(out));
        default: return reference::batch_matmul(s, typed<int8_t>(lhs), offset(0), typed<int8_t>(rhs), offset(1), matmul_stage(v), typed<int8_t>(out));
    }
}

}  // namespace

std::span<const CpuKernel> fully_connected_kernels() {
    static constexpr CpuKernel kernels[] = {
        {"FULLY_CONNECTED", check_fully_connected, run_fully_connected},
        {"BATCH_MATMUL", check_batch_matmul, run_batch_matmul},
    };
    return kernels;
}

}  // namespace ethosu
