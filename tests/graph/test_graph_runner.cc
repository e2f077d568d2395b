// The graph runner on small .tflite graphs built here with the loader's schema subset: a graph
// with no ethos-u operator runs on the reference kernels alone; hostile graphs (operator cycles,
// tensors read before written, shapes that disagree, unimplemented operators, buffers outside the
// file, an ethos-u operator's feature map outside its regions) are refused before anything runs,
// naming the operator.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "frontend/graph/graph_runner.h"
#include "frontend/loaders/vela_tflite_generated.h"
#include "tests/loaders/loader_test_util.h"

namespace ethosu::test {
namespace {

namespace tfl = ethosu::tflite;
using ::testing::HasSubstr;

constexpr int8_t kFloat32 = 0, kUInt8 = 3, kInt8 = 9;
constexpr int32_t kDequantize = 6, kEmbeddingLookup = 7, kReshape = 22, kCustom = 32, kQuantize = 114;

struct TensorSpec {
    std::vector<int32_t> shape;
    int8_t type = kInt8;
    float scale = 0.0f;  // 0: no quantization
    int64_t zero_point = 0;
    uint32_t buffer = 0;
};
struct OperatorSpec {
    int32_t code;
    std::vector<int32_t> inputs, outputs;
};
struct GraphSpec {
    std::vector<TensorSpec> tensors;
    std::vector<OperatorSpec> operators;
    std::vector<int32_t> inputs, outputs;
    std::vector<Bytes> buffers = {{}};  // buffer 0 is TFLite's empty one
    std::vector<int32_t> plan;          // OfflineMemoryAllocation offsets, none if empty
    uint64_t external_offset = 0;       // when set, buffer 1's data lies at this file offset
};

Bytes build(const GraphSpec& spec) {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<tfl::Tensor>> tensors;
    for (size_t i = 0; i < spec.tensors.size(); ++i) {
        const TensorSpec& t = spec.tensors[i];
        const std::vector<float> scale = {t.scale};
        const std::vector<int64_t> zero_point = {t.zero_point};
        const auto quant = t.scale != 0.0f
                               ? tfl::CreateQuantizationParametersDirect(fbb, nullptr, nullptr, &scale, &zero_point)
                               : flatbuffers::Offset<tfl::QuantizationParameters>();
        const std::string name = fmt::format("t{}", i);
        tensors.push_back(tfl::CreateTensorDirect(fbb, &t.shape, t.type, t.buffer, name.c_str(), quant));
    }
    std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes;
    std::vector<flatbuffers::Offset<tfl::Operator>> operators;
    for (size_t i = 0; i < spec.operators.size(); ++i) {
        const OperatorSpec& op = spec.operators[i];
        codes.push_back(tfl::CreateOperatorCodeDirect(fbb, static_cast<int8_t>(std::min(op.code, 127)),
                                                      op.code == kCustom ? "ethos-u" : nullptr, 1, op.code));
        operators.push_back(tfl::CreateOperatorDirect(fbb, static_cast<uint32_t>(i), &op.inputs, &op.outputs));
    }
    const std::vector<flatbuffers::Offset<tfl::SubGraph>> subgraphs = {
        tfl::CreateSubGraphDirect(fbb, &tensors, &spec.inputs, &spec.outputs, &operators, "main")};
    std::vector<flatbuffers::Offset<tfl::Buffer>> buffers;
    for (size_t b = 0; b < spec.buffers.size(); ++b) {
        if (b == 1 && spec.external_offset)
            buffers.push_back(tfl::CreateBuffer(fbb, 0, spec.external_offset, spec.buffers[b].size()));
        else
            buffers.push_back(tfl::CreateBufferDirect(fbb, &spec.buffers[b]));
    }
    std::vector<flatbuffers::Offset<tfl::Metadata>> metadata;
    if (!spec.plan.empty()) {
        Bytes plan;
        for (const int32_t v : std::vector<int32_t>{0, 1, static_cast<int32_t>(spec.plan.size())})
            put_u32(plan, static_cast<uint32_t>(v));
        for (const int32_t v : spec.plan) put_u32(plan, static_cast<uint32_t>(v));
        buffers.push_back(tfl::CreateBufferDirect(fbb, &plan));
        metadata.push_back(tfl::CreateMetadataDirect(fbb, "OfflineMemoryAllocation", static_cast<uint32_t>(buffers.size() - 1)));
    }
    fbb.Finish(tfl::CreateModelDirect(fbb, 3, &codes, &subgraphs, "test", &buffers, nullptr, &metadata),
               tfl::ModelIdentifier());
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// float [1,4] -QUANTIZE-> int8 [1,4] -RESHAPE-> int8 [2,2] -QUANTIZE-> int8 [2,2] (requantized)
// -DEQUANTIZE-> float [2,2]: no ethos-u operator.
GraphSpec cpu_only_graph() {
    GraphSpec g;
    g.tensors = {{{1, 4}, kFloat32}, {{1, 4}, kInt8, 0.05f, -3}, {{2, 2}, kInt8, 0.05f, -3},
                 {{2, 2}, kInt8, 0.1f, 7},  {{2, 2}, kFloat32}};
    g.operators = {{kQuantize, {0}, {1}}, {kReshape, {1}, {2}}, {kQuantize, {2}, {3}}, {kDequantize, {3}, {4}}};
    g.inputs = {0};
    g.outputs = {4};
    return g;
}

std::unique_ptr<LoadedModel> load(const GraphSpec& spec) { return load_vela_tflite("graph.tflite", build(spec), {}); }

std::string graph_error(const GraphSpec& spec) {
    return error_of([&] {
        const auto model = load(spec);
        check_graph(*model);
    });
}

TEST(GraphRunner, CpuOnlyGraphRunsOnTheReferenceKernels) {
    const auto model = load(cpu_only_graph());
    EXPECT_TRUE(runs_as_graph(*model));
    const std::vector<float> in = {0.49f, -0.12f, 7.3f, -0.075f};
    Bytes in_bytes(sizeof(float) * in.size());
    std::memcpy(in_bytes.data(), in.data(), in_bytes.size());
    const RunResult r = run_graph(*model, {in_bytes});
    ASSERT_EQ(r.outputs.size(), 1u);
    ASSERT_EQ(r.outputs[0].size(), 4 * sizeof(float));
    std::vector<float> out(4);
    std::memcpy(out.data(), r.outputs[0].data(), r.outputs[0].size());
    // By hand: q = round(x / 0.05) - 3, clamped; then r = (q + 3) * 0.05 / 0.1 + 7; then
    // (r - 7) * 0.1. 0.49 -> 9.8 -> 7 -> 12; -0.12 -> -2.4 -> -5 -> 6; 7.3 -> 146 -> 127 (clamped)
    // -> 72; -0.075 -> -1.5, away from zero -> -5 -> 6.
    const std::vector<float> expected = {static_cast<float>(double{0.1f} * 5), static_cast<float>(double{0.1f} * -1),
                                         static_cast<float>(double{0.1f} * 65), static_cast<float>(double{0.1f} * -1)};
    EXPECT_EQ(out, expected);
    ASSERT_EQ(r.cpu_operators.size(), 4u);
    EXPECT_EQ(r.cpu_operators[1].name, "RESHAPE");
    EXPECT_EQ(r.cpu_operators[1].elements, 4u);
    EXPECT_TRUE(r.streams.empty());
}

TEST(GraphRunner, UnimplementedOperatorNamedWithItsIndex) {
    GraphSpec g = cpu_only_graph();
    g.operators[2].code = kEmbeddingLookup;
    EXPECT_THAT(graph_error(g), HasSubstr("subgraphs[0].operators[2] (EMBEDDING_LOOKUP): not implemented on the CPU"));
    g.operators[2].code = 400;
    EXPECT_THAT(graph_error(g), HasSubstr("operators[2] (builtin operator 400): not implemented"));
}

TEST(GraphRunner, OperatorCycleAndReadsBeforeWrites) {
    GraphSpec cycle = cpu_only_graph();
    std::swap(cycle.operators[1], cycle.operators[2]);  // requantize reads the reshape's later output
    EXPECT_THAT(graph_error(cycle), HasSubstr("operators[1] (QUANTIZE): reads tensor 2 ('t2') before any operator writes it"));
    GraphSpec self = cpu_only_graph();
    self.operators[1].inputs = {2};  // RESHAPE reads its own output
    EXPECT_THAT(graph_error(self), HasSubstr("operators[1] (RESHAPE): reads tensor 2"));
    GraphSpec twice = cpu_only_graph();
    twice.operators[2].outputs = {2};
    twice.tensors[2].scale = 0.1f;
    EXPECT_THAT(graph_error(twice), HasSubstr("operators[2] (QUANTIZE): writes tensor 2 ('t2'), which already holds data"));
    GraphSpec unwritten = cpu_only_graph();
    unwritten.tensors.push_back({{1}, kInt8, 1.0f});
    unwritten.outputs = {5};
    EXPECT_THAT(graph_error(unwritten), HasSubstr("subgraphs[0].outputs[0]: model output tensor 5 is written by no operator"));
}

TEST(GraphRunner, ShapesAndTypesThatDisagree) {
    GraphSpec g = cpu_only_graph();
    g.tensors[1].shape = {1, 5};
    EXPECT_THAT(graph_error(g), HasSubstr("operators[0] (QUANTIZE): shapes disagree: 't0' is [1,4], 't1' is [1,5]"));
    g = cpu_only_graph();
    g.tensors[2].shape = {3, 2};
    EXPECT_THAT(graph_error(g), HasSubstr("operators[1] (RESHAPE): shapes disagree: [1,4] and [3,2]"));
    g = cpu_only_graph();
    g.tensors[4].type = kInt8;
    EXPECT_THAT(graph_error(g), HasSubstr("operators[3] (DEQUANTIZE): dequantizes int8 to int8"));
    g = cpu_only_graph();
    g.tensors[1].scale = 0.0f;  // no quantization
    EXPECT_THAT(graph_error(g), HasSubstr("operators[0] (QUANTIZE): 't1' needs one scale and zero point"));
    g = cpu_only_graph();
    g.tensors[1].scale = -1.0f;
    EXPECT_THAT(graph_error(g), HasSubstr("scale -1; a scale must be positive"));
    g = cpu_only_graph();
    g.tensors[1].zero_point = 300;
    EXPECT_THAT(graph_error(g), HasSubstr("'t1' has zero point 300 outside its int8 range"));
    g = cpu_only_graph();
    g.tensors[3].scale = 1e-12f;
    EXPECT_THAT(graph_error(g), HasSubstr("operators[2] (QUANTIZE): the input scale is over 2^30 times the output scale"));
    g = cpu_only_graph();
    g.tensors[3].type = kUInt8;
    g.tensors[2].type = kUInt8;
    g.tensors[1].type = kUInt8;
    g.tensors[3].zero_point = 7;
    g.tensors[1].zero_point = g.tensors[2].zero_point = 3;
    EXPECT_THAT(graph_error(g), HasSubstr("operators[2] (QUANTIZE): requantizes uint8 to uint8, which TFLM does not"));
}

TEST(GraphRunner, InputSizesChecked) {
    const auto model = load(cpu_only_graph());
    EXPECT_THAT(error_of([&] { run_graph(*model, {Bytes(15)}); }), HasSubstr("input 0 has 15 bytes, the model expects 16"));
    EXPECT_THAT(error_of([&] { run_graph(*model, {Bytes(16), Bytes(16)}); }), HasSubstr("2 input files for 1 model inputs"));
}

TEST(GraphRunner, BufferOutsideTheFile) {
    // A RESHAPE of a constant whose data is said to lie past the end of the file.
    GraphSpec g;
    g.tensors = {{{4}, kInt8, 0.0f, 0, 1}, {{2, 2}, kInt8}};
    g.operators = {{kReshape, {0}, {1}}};
    g.outputs = {1};
    g.buffers = {{}, {1, 2, 3, 4}};
    g.external_offset = 1 << 20;
    EXPECT_THAT(graph_error(g), HasSubstr("runs past the end of the"));
    // Within the file it runs: the constant's bytes reshaped.
    g.external_offset = 0;
    const auto model = load(g);
    EXPECT_EQ(run_graph(*model, {}).outputs.at(0), (Bytes{1, 2, 3, 4}));
}

TEST(GraphRunner, EthosUFeatureMapsMustFitTheirRegions) {
    // tensors: command stream, weights, scratch (64 bytes), fast scratch, input, output; the plan
    // puts the output at 48 in the scratch: its 32 bytes run 16 past the region.
    GraphSpec g;
    const Bytes payload = cop1_payload(kU55_128Config, kU55Id, kSomeWords);
    g.buffers = {{}, payload, {1, 2, 3, 4}};
    g.tensors = {{{static_cast<int32_t>(payload.size())}, kUInt8, 0.0f, 0, 1},
                 {{4}, kUInt8, 0.0f, 0, 2},
                 {{64}, kUInt8},
                 {{64}, kUInt8},
                 {{1, 4, 4, 2}, kInt8, 0.5f},
                 {{1, 4, 4, 2}, kInt8, 0.5f}};
    g.operators = {{kCustom, {0, 1, 2, 2, 4}, {5}}};
    g.inputs = {4};
    g.outputs = {5};
    g.plan = {-1, -1, 0, 0, 0, 48};
    // One ethos-u operator alone runs as before (run_model); the check still applies to it.
    EXPECT_FALSE(runs_as_graph(*load(g)));
    EXPECT_THAT(graph_error(g),
                HasSubstr("operators[0] (ethos-u): 't5' (32 bytes at offset 48) does not fit its scratch region of 64 bytes"));
    // After a QUANTIZE it is a graph, refused before the QUANTIZE runs.
    g.tensors.push_back({{1, 4, 4, 2}, kFloat32});
    g.operators.insert(g.operators.begin(), {kQuantize, {6}, {4}});
    g.inputs = {6};
    g.plan.push_back(-1);
    const auto model = load(g);
    EXPECT_TRUE(runs_as_graph(*model));
    EXPECT_THAT(error_of([&] { run_graph(*model, {}); }), HasSubstr("operators[1] (ethos-u): 't5'"));
}

}  // namespace
}  // namespace ethosu::test
