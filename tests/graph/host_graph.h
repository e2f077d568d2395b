#pragma once
// One CPU operator as an in-memory graph (no file): its tensors, options and constant inputs
// set directly, run through check_graph and run_graph as a model's operator would be. For the
// kernel tests, which compare each operator with plain loops written from TFLite's definitions.

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/graph/builtin_operators.h"
#include "frontend/graph/graph_runner.h"
#include "frontend/loaders/vela_tflite_generated.h"

namespace ethosu::test {

struct HostTensor {
    std::vector<int64_t> shape;
    ElementType type = ElementType::Int8;
    std::vector<float> scale = {};  // empty: not quantized
    std::vector<int64_t> zero_point = {};
    std::vector<uint8_t> constant = {};  // non-empty: a constant tensor with these bytes
};

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& values) {
    std::vector<uint8_t> b(values.size() * sizeof(T));
    if (!b.empty()) std::memcpy(b.data(), values.data(), b.size());
    return b;
}
template <class T>
std::vector<T> values_of(const std::vector<uint8_t>& bytes) {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
}

// An operator's builtin options table (tflite::LeakyReluOptionsT, ...), as a loader keeps it.
template <class T>
std::shared_ptr<const tflite::BuiltinOptionsUnion> options_table(T table) {
    auto options = std::make_shared<tflite::BuiltinOptionsUnion>();
    options->Set(std::move(table));
    return options;
}

// One operator over `tensors`: its inputs and outputs name them by index; the non-constant
// inputs are the model's inputs, in order, and its outputs the model's outputs.
struct HostGraph {
    std::string_view builtin;
    std::vector<HostTensor> tensors;
    std::vector<int32_t> inputs, outputs;
    std::shared_ptr<const tflite::BuiltinOptionsUnion> options{};  // options_table; none by default

    LoadedModel model() const {
        LoadedModel m;
        m.path = "host_graph";
        m.cpu_operators = 1;
        ModelGraph g;
        for (size_t i = 0; i < tensors.size(); ++i) {
            const HostTensor& t = tensors[i];
            GraphTensor gt;
            gt.info.name = fmt::format("t{}", i);
            gt.info.shape = t.shape;
            gt.info.type = t.type;
            gt.info.scale = t.scale;
            gt.info.zero_point = t.zero_point;
            uint64_t n = 1;
            for (const int64_t d : t.shape) n *= static_cast<uint64_t>(d);
            gt.info.size_bytes = n * static_cast<uint64_t>(element_size(t.type));
            gt.constant = !t.constant.empty();
            gt.data = t.constant;
            g.tensors.push_back(gt);
        }
        GraphOperator op;
        op.builtin_options = options;
        op.builtin_code = builtin_code(builtin);
        op.inputs = inputs;
        op.outputs = outputs;
        g.operators.push_back(op);
        for (const int32_t t : inputs)
            if (t >= 0 && tensors[static_cast<size_t>(t)].constant.empty()) g.inputs.push_back(t);
        g.outputs = outputs;
        m.graph = std::move(g);
        return m;
    }

    // The outputs for these model inputs (raw bytes each).
    std::vector<std::vector<uint8_t>> run(std::vector<std::vector<uint8_t>> in) const {
        const LoadedModel m = model();
        RunOptions options;
        options.pipeline.timing = false;
        return run_graph(m, std::move(in), options).outputs;
    }
};

// check_graph's refusal of g, or "accepted".
inline std::string refusal(const HostGraph& g) {
    try {
        check_graph(g.model());
    } catch (const Error& e) {
        return e.what();
    }
    return "accepted";
}

// A constant int32 vector (a parameter input: paddings, axes, sizes).
inline HostTensor ints(const std::vector<int32_t>& values) {
    return {{static_cast<int64_t>(values.size())}, ElementType::Int32, {}, {}, bytes_of(values)};
}

template <class T>
std::vector<T> random_values(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(d(rng));
    return v;
}

// Row-major index of `at` in `shape`, a dimension of 1 read at 0 (broadcasting), shapes aligned
// right to at's rank.
inline size_t broadcast_index(const std::vector<int64_t>& shape, const std::vector<int64_t>& at) {
    size_t index = 0;
    const size_t skip = at.size() - shape.size();
    for (size_t d = 0; d < shape.size(); ++d)
        index = index * static_cast<size_t>(shape[d]) + (shape[d] == 1 ? 0 : static_cast<size_t>(at[skip + d]));
    return index;
}

}  // namespace ethosu::test
