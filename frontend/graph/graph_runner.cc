#include "frontend/graph/graph_runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <span>
#include <string>

#include "emulator/isa/error.h"
#include "frontend/graph/builtin_operators.h"
#include "frontend/graph/reference_kernels.h"

namespace ethosu {
namespace {

// An ethos-u operator's inputs (the loader's layout): command stream, weights, scratch, fast
// scratch, then its feature maps. The scratch areas are working memory, not data it reads.
constexpr size_t kEthosUScratch = 2, kEthosUScratchFast = 3, kEthosUFirstFeatureMap = 4;

const ModelGraph& graph_of(const LoadedModel& model) {
    if (!model.graph) throw Error({model.path, std::nullopt, "graph"}, "only a .tflite model has an operator graph");
    return *model.graph;
}

uint64_t element_count(const TensorInfo& t) {
    return std::accumulate(t.shape.begin(), t.shape.end(), uint64_t{1},
                           [](uint64_t n, int64_t d) { return n * static_cast<uint64_t>(d); });
}

// One operator of the graph, for its checks and its errors.
struct OperatorView {
    const LoadedModel& model;
    const ModelGraph& graph;
    size_t index;
    const GraphOperator& op;

    std::string name() const {
        return op.invocation >= 0 ? std::string("ethos-u")
                                  : op.builtin_code == static_cast<int32_t>(Builtin::Custom)
                                        ? fmt::format("CUSTOM \"{}\"", op.custom_code)
                                        : builtin_operator_name(op.builtin_code);
    }
    [[noreturn]] void fail(const std::string& reason) const {
        throw Error({model.path, std::nullopt, fmt::format("subgraphs[0].operators[{}] ({})", index, name())}, reason);
    }
    void expect(bool ok, const std::string& reason) const {
        if (!ok) fail(reason);
    }
    const GraphTensor& tensor(int32_t t) const { return graph.tensors[static_cast<size_t>(t)]; }
    const TensorInfo& input(size_t k) const { return tensor(op.inputs[k]).info; }
    const TensorInfo& output(size_t k) const { return tensor(op.outputs[k]).info; }

    void expect_arity(size_t inputs, size_t outputs) const {
        expect(op.inputs.size() == inputs && op.outputs.size() == outputs,
               fmt::format("has {} inputs and {} outputs; {} takes {} and {}", op.inputs.size(), op.outputs.size(),
                           name(), inputs, outputs));
        for (const int32_t t : op.inputs) expect(t >= 0, "an input is omitted");
        for (const int32_t t : op.outputs) expect(t >= 0, "an output is omitted");
    }
    void expect_same_shape(const TensorInfo& a, const TensorInfo& b) const {
        expect(a.shape == b.shape, fmt::format("shapes disagree: '{}' is [{}], '{}' is [{}]", a.name,
                                               fmt::join(a.shape, ","), b.name, fmt::join(b.shape, ",")));
    }
    // Per-tensor quantization (TFLM's QUANTIZE and DEQUANTIZE take one scale), with the zero
    // point inside the type's range.
    void expect_quantized(const TensorInfo& t) const {
        expect(t.scale.size() == 1 && t.zero_point.size() == 1,
               fmt::format("'{}' needs one scale and zero point; has {} and {}", t.name, t.scale.size(),
                           t.zero_point.size()));
        expect(std::isfinite(t.scale[0]) && t.scale[0] > 0,
               fmt::format("'{}' has scale {}; a scale must be positive and finite", t.name, t.scale[0]));
        const int64_t zp = t.zero_point[0];
        const auto [lo, hi] = [&]() -> std::pair<int64_t, int64_t> {
            switch (t.type) {
                case ElementType::Int8: return {INT8_MIN, INT8_MAX};
                case ElementType::UInt8: return {0, UINT8_MAX};
                case ElementType::Int16: return {INT16_MIN, INT16_MAX};
                default: return {INT32_MIN, INT32_MAX};
            }
        }();
        expect(zp >= lo && zp <= hi, fmt::format("'{}' has zero point {} outside its {} range", t.name, zp,
                                                 element_type_name(t.type)));
    }
};

bool is_quantized_integer(ElementType t) {
    return t == ElementType::Int8 || t == ElementType::UInt8 || t == ElementType::Int16;
}

// The integer -> integer QUANTIZE pairs TFLM's reference kernel runs (quantize_common.cc).
bool tflm_requantizes(ElementType in, ElementType out) {
    using E = ElementType;
    switch (in) {
        case E::Int8: return out == E::Int8 || out == E::UInt8 || out == E::Int16 || out == E::Int32;
        case E::UInt8: return out == E::Int8;
        case E::Int16: return out == E::Int8 || out == E::Int16 || out == E::Int32;
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

// TFLM's RESHAPE copies the bytes; its output shape is the output tensor's (the optional shape
// input only restates it).
void check_reshape(const OperatorView& v) {
    v.expect(v.op.outputs.size() == 1 && (v.op.inputs.size() == 1 || v.op.inputs.size() == 2),
             fmt::format("has {} inputs and {} outputs; RESHAPE takes 1 or 2 and 1", v.op.inputs.size(),
                         v.op.outputs.size()));
    v.expect(v.op.inputs[0] >= 0 && v.op.outputs[0] >= 0, "its data input or output is omitted");
    const TensorInfo &in = v.input(0), &out = v.output(0);
    v.expect(in.type == out.type, fmt::format("reshapes {} into {}", element_type_name(in.type), element_type_name(out.type)));
    v.expect(element_count(in) == element_count(out),
             fmt::format("shapes disagree: [{}] and [{}] hold different element counts", fmt::join(in.shape, ","),
                         fmt::join(out.shape, ",")));
}

// The host buffers of a graph run by tensor index; constants are read where the model holds them.
class HostTensors {
public:
    explicit HostTensors(const ModelGraph& graph) : graph_(graph), values_(graph.tensors.size()) {}
    const std::vector<uint8_t>& read(int32_t t) const {
        const GraphTensor& gt = graph_.tensors[static_cast<size_t>(t)];
        return gt.constant ? gt.data : values_[static_cast<size_t>(t)];
    }
    std::vector<uint8_t>& write(int32_t t) { return values_[static_cast<size_t>(t)]; }

private:
    const ModelGraph& graph_;
    std::vector<std::vector<uint8_t>> values_;
};

template <class T>
std::span<const T> typed(const std::vector<uint8_t>& bytes) {
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}
template <class T>
std::span<T> typed(std::vector<uint8_t>& bytes) {
    return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
}

// Calls f with a value of the integer type t holds (int8, uint8, int16 or int32).
template <class F>
void with_integer_type(ElementType t, F&& f) {
    switch (t) {
        case ElementType::Int8: return f(int8_t{});
        case ElementType::UInt8: return f(uint8_t{});
        case ElementType::Int16: return f(int16_t{});
        default: return f(int32_t{});
    }
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

// SVDF's inputs (TFLM svdf_common.cc): input, feature weights, time weights, bias (optional),
// activation state (a variable the operator updates).
constexpr size_t kSvdfInput = 0, kSvdfFeatureWeights = 1, kSvdfTimeWeights = 2, kSvdfBias = 3, kSvdfState = 4;

reference::SvdfShape svdf_shape(const OperatorView& v) {
    const auto dim = [](const TensorInfo& t, size_t k) { return k < t.shape.size() ? static_cast<int>(t.shape[k]) : 0; };
    return {.batches = dim(v.input(kSvdfInput), 0),
            .input_size = dim(v.input(kSvdfInput), 1),
            .filters = dim(v.input(kSvdfFeatureWeights), 0),
            .rank = v.op.svdf_rank,
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

// TFLM's integer SOFTMAX (softmax_common.cc): int8 input; int8 output at scale 1/256 and zero
// point -128, or int16 at 1/65536 and -32768.
reference::SoftmaxParameters softmax_parameters(const OperatorView& v) {
    const auto p = reference::softmax_parameters(v.op.softmax_beta, v.input(0).scale[0]);
    // TFLite requires beta * scale * 2^26 above one; a left shift of 31 would overflow its int32.
    v.expect(p.input_left_shift >= 0 && p.input_left_shift <= 30,
             fmt::format("beta {} times input scale {} is outside what TFLite's integer softmax takes", v.op.softmax_beta,
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

// The host's kernels by builtin code: how each checks its operator and runs it.
struct CpuKernel {
    Builtin code;
    void (*check)(const OperatorView&);
    void (*run)(const OperatorView&, HostTensors&);
};

constexpr CpuKernel kCpuKernels[] = {
    {Builtin::Quantize, check_quantize, run_quantize},
    {Builtin::Dequantize, check_dequantize, run_dequantize},
    {Builtin::Reshape, check_reshape, run_reshape},
    {Builtin::Svdf, check_svdf, run_svdf},
    {Builtin::Softmax, check_softmax, run_softmax},
};

const CpuKernel& cpu_kernel(const OperatorView& v) {
    for (const CpuKernel& k : kCpuKernels)
        if (static_cast<int32_t>(k.code) == v.op.builtin_code) return k;
    v.fail("not implemented on the CPU (implemented: QUANTIZE, DEQUANTIZE, RESHAPE, SOFTMAX, SVDF, and ethos-u on the NPU)");
}

// Each feature map of an ethos-u operator must lie inside the region its command stream addresses.
void check_ethos_u(const OperatorView& v) {
    v.expect(static_cast<size_t>(v.op.invocation) < v.model.invocations.size(), "has no NPU invocation");
    const NpuInvocation& inv = v.model.invocations[static_cast<size_t>(v.op.invocation)];
    const auto check_fits = [&](const TensorInfo& t, bool is_output) {
        if (t.region < 0) {
            // Vela leaves unplaced only inputs folded into the stream (TRANSPOSE_CONV's shape).
            v.expect(!is_output, fmt::format("output '{}' has no place planned in the NPU's memory", t.name));
            return;
        }
        const auto region = std::ranges::find(inv.regions, t.region, &RegionImage::index);
        v.expect(region != inv.regions.end(),
                 fmt::format("'{}' is planned in region {}, which the operator does not have", t.name, t.region));
        v.expect(t.offset <= region->size && t.size_bytes <= region->size - t.offset,
                 fmt::format("'{}' ({} bytes at offset {}) does not fit its {} region of {} bytes", t.name, t.size_bytes,
                             t.offset, region->role, region->size));
    };
    for (const auto& t : inv.inputs) check_fits(t, false);
    for (const auto& t : inv.outputs) check_fits(t, true);
}

}  // namespace

bool runs_as_graph(const LoadedModel& model) {
    return model.graph && (model.cpu_operators > 0 || model.invocations.size() != 1);
}

void check_graph(const LoadedModel& model) {
    const ModelGraph& graph = graph_of(model);
    // A tensor is available once it holds data: a constant, a model input, a variable (its
    // initial state), or an earlier operator's output.
    std::vector<bool> available(graph.tensors.size(), false);
    for (size_t t = 0; t < graph.tensors.size(); ++t)
        available[t] = graph.tensors[t].constant || graph.tensors[t].info.is_variable;
    for (const int32_t t : graph.inputs)
        if (t >= 0) available[static_cast<size_t>(t)] = true;
    for (size_t i = 0; i < graph.operators.size(); ++i) {
        const OperatorView v{model, graph, i, graph.operators[i]};
        if (v.op.invocation >= 0)
            check_ethos_u(v);
        else
            cpu_kernel(v).check(v);
        for (size_t k = 0; k < v.op.inputs.size(); ++k) {
            const int32_t t = v.op.inputs[k];
            if (v.op.invocation >= 0 && (k == kEthosUScratch || k == kEthosUScratchFast)) continue;
            v.expect(t < 0 || available[static_cast<size_t>(t)],
                     fmt::format("reads tensor {} ('{}') before any operator writes it (an operator cycle or a "
                                 "missing producer)",
                                 t, v.tensor(t).info.name));
        }
        for (const int32_t t : v.op.outputs) {
            if (t < 0) continue;
            v.expect(!available[static_cast<size_t>(t)],
                     fmt::format("writes tensor {} ('{}'), which already holds data", t, v.tensor(t).info.name));
            available[static_cast<size_t>(t)] = true;
        }
    }
    for (size_t k = 0; k < graph.outputs.size(); ++k) {
        const int32_t t = graph.outputs[k];
        if (t < 0 || !available[static_cast<size_t>(t)])
            throw Error({model.path, std::nullopt, fmt::format("subgraphs[0].outputs[{}]", k)},
                        fmt::format("model output tensor {} is written by no operator", t));
    }
}

RunResult run_graph(const LoadedModel& model, std::vector<std::vector<uint8_t>> inputs, const RunOptions& options) {
    check_graph(model);
    const ModelGraph& graph = *model.graph;
    if (inputs.size() > graph.inputs.size())
        throw Error({model.path, std::nullopt, "--input"},
                    fmt::format("{} input files for {} model inputs", inputs.size(), graph.inputs.size()));
    RunResult result;
    result.memory = make_memory_system(model.config, options.system);

    // Host buffers by tensor index: model inputs, variables' initial state (TFLM's allocation
    // gives an int8 variable its zero point, others zeros), then each operator's outputs.
    HostTensors tensors(graph);
    const auto zeros_of = [&](int32_t t) { return std::vector<uint8_t>(graph.tensors[static_cast<size_t>(t)].info.size_bytes); };
    if (options.execute) {
        for (size_t t = 0; t < graph.tensors.size(); ++t) {
            const TensorInfo& info = graph.tensors[t].info;
            if (!info.is_variable || graph.tensors[t].constant) continue;
            const bool int8_zero_point = info.type == ElementType::Int8 && !info.zero_point.empty();
            tensors.write(static_cast<int32_t>(t)).assign(info.size_bytes, int8_zero_point ? static_cast<uint8_t>(info.zero_point[0]) : 0);
        }
        for (size_t k = 0; k < graph.inputs.size(); ++k) {
            const int32_t t = graph.inputs[k];
            if (t < 0) continue;
            const TensorInfo& info = graph.tensors[static_cast<size_t>(t)].info;
            std::vector<uint8_t> bytes = k < inputs.size() && !inputs[k].empty() ? std::move(inputs[k]) : zeros_of(t);
            if (bytes.size() != info.size_bytes)
                throw Error({model.path, std::nullopt, info.name},
                            fmt::format("input {} has {} bytes, the model expects {}", k, bytes.size(), info.size_bytes));
            tensors.write(t) = std::move(bytes);
        }
    }

    for (size_t i = 0; i < graph.operators.size(); ++i) {
        const OperatorView v{model, graph, i, graph.operators[i]};
        if (v.op.invocation >= 0) {
            const NpuInvocation& inv = model.invocations[static_cast<size_t>(v.op.invocation)];
            std::vector<std::vector<uint8_t>> npu_inputs;
            if (options.execute)
                for (size_t k = kEthosUFirstFeatureMap; k < v.op.inputs.size(); ++k) npu_inputs.push_back(tensors.read(v.op.inputs[k]));
            auto npu_outputs = run_invocation(model, inv, inv.inputs, std::move(npu_inputs), inv.outputs, options, result);
            result.stream_operators.push_back(i);
            for (size_t k = 0; k < npu_outputs.size(); ++k) tensors.write(v.op.outputs[k]) = std::move(npu_outputs[k]);
            continue;
        }
        result.cpu_operators.push_back({i, v.name(), element_count(v.output(0))});
        if (!options.execute) continue;
        tensors.write(v.op.outputs[0]).assign(v.output(0).size_bytes, 0);
        cpu_kernel(v).run(v, tensors);
    }
    if (options.execute)
        for (const int32_t t : graph.outputs) result.outputs.push_back(tensors.read(t));
    return result;
}

RunResult run_whole_model(const LoadedModel& model, std::vector<std::vector<uint8_t>> inputs, const RunOptions& options) {
    return runs_as_graph(model) ? run_graph(model, std::move(inputs), options) : run_model(model, std::move(inputs), options);
}

}  // namespace ethosu
