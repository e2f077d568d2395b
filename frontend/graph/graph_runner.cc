#include "frontend/graph/graph_runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <span>
#include <string>

#include "emulator/isa/error.h"
#include "frontend/graph/cpu_operator.h"

namespace ethosu {
namespace {

// An ethos-u operator's inputs (the loader's layout): command stream, weights, scratch, fast
// scratch, then its feature maps. The scratch areas are working memory, not data it reads.
constexpr size_t kEthosUScratch = 2, kEthosUScratchFast = 3, kEthosUFirstFeatureMap = 4;

const ModelGraph& graph_of(const LoadedModel& model) {
    if (!model.graph) throw Error({model.path, std::nullopt, "graph"}, "only a .tflite model has an operator graph",
                                       ErrorKind::Unsupported);
    return *model.graph;
}

const CpuKernel& cpu_kernel(const OperatorView& v) {
    if (const CpuKernel* k = find_cpu_kernel(v.op.builtin_code)) return *k;
    v.fail(fmt::format("not implemented on the CPU (implemented: {}, and ethos-u on the NPU)", implemented_cpu_operators()),
           ErrorKind::Unsupported);
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
                             t.offset, region_role_name(region->role), region->size));
    };
    for (const auto& t : inv.inputs) check_fits(t, false);
    for (const auto& t : inv.outputs) check_fits(t, true);
}

}  // namespace

bool runs_as_graph(const LoadedModel& model) {
    return model.graph && (model.cpu_operators > 0 || model.invocations.size() != 1);
}

void check_graph(const LoadedModel& model, const WorkLimits& limits) {
    const ModelGraph& graph = graph_of(model);
    const auto check_host_buffer = [&](const TensorInfo& info) {
        if (const std::string refusal = host_allocation_refusal(info, limits); !refusal.empty())
            throw Error(definition_site(model, info.where, info.name), refusal, ErrorKind::LimitExceeded);
    };
    // A tensor is available once it holds data: a constant, a model input, a variable (its
    // initial state), or an earlier operator's output.
    std::vector<bool> available(graph.tensors.size(), false);
    for (size_t t = 0; t < graph.tensors.size(); ++t) {
        const GraphTensor& gt = graph.tensors[t];
        available[t] = gt.constant || gt.info.is_variable;
        if (gt.info.is_variable && !gt.constant) check_host_buffer(gt.info);
    }
    for (const int32_t t : graph.inputs) {
        if (t < 0) continue;
        available[static_cast<size_t>(t)] = true;
        check_host_buffer(graph.tensors[static_cast<size_t>(t)].info);
    }
    uint64_t host_work = 0;
    for (size_t i = 0; i < graph.operators.size(); ++i) {
        const OperatorView v{model, graph, i, graph.operators[i], limits};
        if (v.op.invocation >= 0) {
            check_ethos_u(v);
        } else {
            // The elements a host kernel reads and writes bound the work of all but the windowed
            // and matrix kernels, whose checks bound their multiply-accumulates.
            uint64_t elements = 0;
            for (const auto* list : {&v.op.inputs, &v.op.outputs})
                for (const int32_t t : *list)
                    if (t >= 0 && __builtin_add_overflow(elements, element_count(v.tensor(t).info), &elements))
                        elements = UINT64_MAX;
            v.expect_work_within_limit(elements, "elements in and out");
            if (__builtin_add_overflow(host_work, elements, &host_work)) host_work = UINT64_MAX;
            if (host_work > limits.max_run_work)
                v.fail(fmt::format("the host operators' elements reach {} with this one, above the limit of {} per run "
                                   "(raise it with --max-run-work)",
                                   host_work, limits.max_run_work),
                       ErrorKind::LimitExceeded);
            cpu_kernel(v).check(v);
        }
        for (size_t k = 0; k < v.op.inputs.size(); ++k) {
            const int32_t t = v.op.inputs[k];
            if (t < 0 || (v.op.invocation >= 0 && (k == kEthosUScratch || k == kEthosUScratchFast))) continue;
            v.expect(available[static_cast<size_t>(t)],
                     fmt::format("reads tensor {} ('{}') before any operator writes it (an operator cycle or a "
                                 "missing producer)",
                                 t, v.tensor(t).info.name));
        }
        for (const int32_t t : v.op.outputs) {
            if (t < 0) continue;
            v.expect(!available[static_cast<size_t>(t)],
                     fmt::format("writes tensor {} ('{}'), which already holds data", t, v.tensor(t).info.name));
            available[static_cast<size_t>(t)] = true;
            const TensorInfo& info = v.tensor(t).info;
            if (const std::string refusal = host_allocation_refusal(info, limits); !refusal.empty())
                v.fail(fmt::format("its output {}", refusal), ErrorKind::LimitExceeded);
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
    check_graph(model, options.pipeline.limits);
    const ModelGraph& graph = *model.graph;
    if (inputs.size() > graph.inputs.size())
        throw Error({model.path, std::nullopt, "--input"},
                    fmt::format("{} input files for {} model inputs", inputs.size(), graph.inputs.size()));
    RunResult result;
    result.memory = run_memory_system(model, options);

    // Host buffers by tensor index: model inputs, variables' initial state (TFLM's allocation
    // gives an int8 variable its zero point, others zeros), then each operator's outputs.
    HostTensors tensors(graph);
    const auto zeros_of = [&](int32_t t) { return std::vector<uint8_t>(graph.tensors[static_cast<size_t>(t)].info.size_bytes); };
    if (options.pipeline.execute) {
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
                throw Error(definition_site(model, info.where, info.name),
                            fmt::format("input {} ({}) has {} bytes, the model expects {}", k, info.name, bytes.size(),
                                        info.size_bytes));
            tensors.write(t) = std::move(bytes);
        }
    }

    for (size_t i = 0; i < graph.operators.size(); ++i) {
        const OperatorView v{model, graph, i, graph.operators[i], options.pipeline.limits};
        if (v.op.invocation >= 0) {
            const NpuInvocation& inv = model.invocations[static_cast<size_t>(v.op.invocation)];
            std::vector<std::vector<uint8_t>> npu_inputs;
            if (options.pipeline.execute)
                for (size_t k = kEthosUFirstFeatureMap; k < v.op.inputs.size(); ++k) npu_inputs.push_back(tensors.read(v.op.inputs[k]));
            auto npu_outputs = run_invocation(model, inv, inv.inputs, std::move(npu_inputs), inv.outputs, options, result);
            result.stream_operators.push_back(i);
            for (size_t k = 0; k < npu_outputs.size(); ++k) tensors.write(v.op.outputs[k]) = std::move(npu_outputs[k]);
            continue;
        }
        result.cpu_operators.push_back({i, v.name(), element_count(v.output(0))});
        if (!options.pipeline.execute) continue;
        for (size_t k = 0; k < v.op.outputs.size(); ++k)
            if (v.op.outputs[k] >= 0) tensors.write(v.op.outputs[k]).assign(v.output(k).size_bytes, 0);
        cpu_kernel(v).run(v, tensors);
    }
    if (options.pipeline.execute)
        for (const int32_t t : graph.outputs) result.outputs.push_back(tensors.read(t));
    return result;
}

RunResult run_whole_model(const LoadedModel& model, std::vector<std::vector<uint8_t>> inputs, const RunOptions& options) {
    return runs_as_graph(model) ? run_graph(model, std::move(inputs), options) : run_model(model, std::move(inputs), options);
}

}  // namespace ethosu
