#include "frontend/cli/graph_info.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "frontend/graph/cpu_operator.h"

namespace ethosu {
namespace {

using json = nlohmann::ordered_json;

// An ethos-u operator's inputs before its feature maps: command stream, weights, scratch, fast
// scratch (the loader's layout); info lists the feature maps only.
constexpr size_t kEthosUFirstFeatureMap = 4;

json quantization_json(const TensorInfo& t) {
    if (t.scale.empty()) return nullptr;
    if (t.scale.size() == 1 && t.zero_point.size() == 1) return {{"scale", t.scale[0]}, {"zero_point", t.zero_point[0]}};
    json q = {{"channels", t.scale.size()}, {"scale", {*std::ranges::min_element(t.scale), *std::ranges::max_element(t.scale)}}};
    if (!t.zero_point.empty())
        q["zero_point"] = {*std::ranges::min_element(t.zero_point), *std::ranges::max_element(t.zero_point)};
    return q;
}

json tensors_json(const ModelGraph& graph, const std::vector<int32_t>& indices, size_t from) {
    json list = json::array();
    for (size_t k = from; k < indices.size(); ++k) {
        const int32_t index = indices[k];
        if (index < 0) continue;  // an omitted optional input
        const GraphTensor& gt = graph.tensors[static_cast<size_t>(index)];
        const TensorInfo& t = gt.info;
        list.push_back({{"tensor", index}, {"name", t.name}, {"shape", t.shape}, {"type", element_type_name(t.type)},
                        {"constant", gt.constant}, {"variable", t.is_variable}, {"quantization", quantization_json(t)}});
    }
    return list;
}

std::string quantization_text(const json& q) {
    if (q.is_null()) return "";
    if (!q.contains("channels"))
        return fmt::format(" scale {:g} zero point {}", q["scale"].get<float>(), q["zero_point"].get<int64_t>());
    std::string text = fmt::format(" {} channels: scale {:g}..{:g}", q["channels"].get<size_t>(), q["scale"][0].get<float>(),
                                   q["scale"][1].get<float>());
    if (q.contains("zero_point"))
        text += fmt::format(" zero point {}..{}", q["zero_point"][0].get<int64_t>(), q["zero_point"][1].get<int64_t>());
    return text;
}

}  // namespace

json graph_info_json(const LoadedModel& model) {
    const ModelGraph& graph = *model.graph;
    json operators = json::array();
    for (size_t i = 0; i < graph.operators.size(); ++i) {
        const GraphOperator& op = graph.operators[i];
        const bool npu = op.invocation >= 0;
        json o = {{"index", i}, {"name", OperatorView{model, graph, i, op, WorkLimits{}}.name()}, {"on", npu ? "npu" : "cpu"}};
        if (npu) o["stream"] = op.invocation;
        o["inputs"] = tensors_json(graph, op.inputs, npu ? kEthosUFirstFeatureMap : 0);
        o["outputs"] = tensors_json(graph, op.outputs, 0);
        operators.push_back(std::move(o));
    }
    return {{"tensors", graph.tensors.size()}, {"operators", operators}};
}

std::string graph_info_text(const LoadedModel& model) {
    const json g = graph_info_json(model);
    const auto cpu = std::ranges::count_if(g["operators"], [](const json& o) { return o["on"] == "cpu"; });
    std::string text = fmt::format("graph: {} operators ({} on the CPU), {} tensors\n", g["operators"].size(), cpu,
                                   g["tensors"].get<size_t>());
    for (const json& o : g["operators"]) {
        text += fmt::format("  operator {} {} on the {}", o["index"].get<size_t>(), o["name"].get<std::string>(),
                            o["on"] == "npu" ? "NPU" : "CPU");
        text += o["on"] == "npu" ? fmt::format(" (stream {})\n", o["stream"].get<int>()) : "\n";
        for (const char* side : {"inputs", "outputs"})
            for (const json& t : o[side])
                text += fmt::format("    {} {} '{}' [{}] {}{}{}\n", side[0] == 'i' ? "in " : "out", t["tensor"].get<int>(),
                                    t["name"].get<std::string>(), fmt::join(t["shape"].get<std::vector<int64_t>>(), "x"),
                                    t["type"].get<std::string>(),
                                    t["constant"].get<bool>() ? " constant" : t["variable"].get<bool>() ? " variable" : "",
                                    quantization_text(t["quantization"]));
    }
    return text;
}

}  // namespace ethosu
