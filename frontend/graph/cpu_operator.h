#pragma once
// What a host kernel sees of its operator (OperatorView: tensors, options, errors naming it) and
// of the run (HostTensors), and how kernels are registered: each family file lists its
// CpuKernels by TFLite builtin name, and cpu_operator.cc's list of families is the whole set.

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/engine/work_budget.h"
#include "emulator/isa/error.h"
#include "frontend/loaders/model.h"

namespace ethosu {

uint64_t element_count(const TensorInfo& t);
bool is_quantized_integer(ElementType t);  // int8, uint8 or int16

// One operator of the graph, for its checks and its errors.
struct OperatorView {
    const LoadedModel& model;
    const ModelGraph& graph;
    size_t index;
    const GraphOperator& op;
    const WorkLimits& limits;  // the run's: a host kernel's work and buffers are charged to them

    std::string name() const;
    // An ethosu::Error naming `subgraphs[0].operators[<index>] (<NAME>)`.
    [[noreturn]] void fail(const std::string& reason, ErrorKind kind = ErrorKind::Malformed) const;
    void expect(bool ok, const std::string& reason) const {
        if (!ok) fail(reason);
    }
    // Refuses (ErrorKind::LimitExceeded) work over limits.max_op_work: `what` names the figure.
    void expect_work_within_limit(uint64_t work, std::string_view what) const;
    // The same for multiply-accumulates (or window points), the product of `factors`: the host
    // kernels are plain loops, and a hostile file must not keep them busy for hours.
    void expect_bounded_work(std::initializer_list<uint64_t> factors) const;
    const GraphTensor& tensor(int32_t t) const { return graph.tensors[static_cast<size_t>(t)]; }
    const TensorInfo& input(size_t k) const { return tensor(op.inputs[k]).info; }
    const TensorInfo& output(size_t k) const { return tensor(op.outputs[k]).info; }

    void expect_arity(size_t inputs, size_t outputs) const;
    void expect_same_shape(const TensorInfo& a, const TensorInfo& b) const;
    // Per-tensor quantization (one scale, positive and finite; one zero point inside the type).
    void expect_quantized(const TensorInfo& t) const;
};

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

// A host kernel: `check` refuses (OperatorView::fail) what it cannot run exactly as TFLM, before
// anything runs; `run` computes the outputs, which the runner has sized and zeroed.
struct CpuKernel {
    std::string_view builtin;  // TFLite's BuiltinOperator name, "QUANTIZE"
    void (*check)(const OperatorView&);
    void (*run)(const OperatorView&, HostTensors&);
};

// The families (one per ops_*.cc file).
std::span<const CpuKernel> conversion_kernels();  // QUANTIZE, DEQUANTIZE, RESHAPE, SQUEEZE, EXPAND_DIMS
std::span<const CpuKernel> svdf_kernels();        // SVDF
std::span<const CpuKernel> softmax_kernels();     // SOFTMAX
std::span<const CpuKernel> convolution_kernels();      // CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV
std::span<const CpuKernel> fully_connected_kernels();  // FULLY_CONNECTED, BATCH_MATMUL
std::span<const CpuKernel> pool_kernels();             // AVERAGE_POOL_2D, MAX_POOL_2D
std::span<const CpuKernel> shape_kernels();  // PAD(V2), TRANSPOSE, CONCATENATION, PACK, SPLIT(_V), UNPACK, (STRIDED_)SLICE, GATHER
std::span<const CpuKernel> activation_kernels();   // RELU, RELU6, LEAKY_RELU, PRELU, LOGISTIC, TANH, HARD_SWISH
std::span<const CpuKernel> reduce_kernels();       // MEAN, SUM, ARG_MAX, ARG_MIN
std::span<const CpuKernel> resize_kernels();       // RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR
std::span<const CpuKernel> elementwise_kernels();  // ADD, SUB, MUL, MINIMUM, MAXIMUM, SQUARED_DIFFERENCE

// The kernel of a builtin code, or null.
const CpuKernel* find_cpu_kernel(int32_t builtin_code);
// "DEQUANTIZE, QUANTIZE, ...": the builtins with a host kernel, sorted.
std::string implemented_cpu_operators();

}  // namespace ethosu
