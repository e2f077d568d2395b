// The graph runner on small .tflite graphs built here with the loader's schema subset: a graph
// with no ethos-u operator runs on the reference kernels alone; hostile graphs (operator cycles,
// tensors read before written, shapes that disagree, unimplemented operators, buffers outside the
// file, an ethos-u operator's feature map outside its regions) are refused before anything runs,
// naming the operator.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <array>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "frontend/graph/graph_runner.h"
#include "frontend/loaders/vela_tflite_generated.h"
#include "tests/loaders/loader_test_util.h"

namespace ethosu::test {
namespace {

namespace tfl = ethosu::tflite;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

constexpr int8_t kFloat32 = 0, kInt32 = 2, kUInt8 = 3, kInt64 = 4, kInt16 = 7, kInt8 = 9, kInt4 = 17;
constexpr int32_t kAveragePool = 1, kConv2d = 3, kDepthwise = 4, kDequantize = 6, kEmbeddingLookup = 7,
                  kFullyConnected = 9, kReshape = 22, kCustom = 32, kTransposeConv = 67,
                  kQuantize = 114, kBatchMatMul = 126;

struct TensorSpec {
    std::vector<int32_t> shape;
    int8_t type = kInt8;
    float scale = 0.0f;  // 0: no quantization
    int64_t zero_point = 0;
    uint32_t buffer = 0;
    std::vector<float> channel_scales = {};  // per-channel scales instead of `scale` (each zero point `zero_point`)
};
struct OperatorSpec {
    int32_t code;
    std::vector<int32_t> inputs, outputs;
    // Builtin options: their union type and a function writing the table.
    tfl::BuiltinOptions options_type = tfl::BuiltinOptions_NONE;
    std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)> options = {};
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
        const std::vector<float> scale = t.channel_scales.empty() ? std::vector<float>{t.scale} : t.channel_scales;
        const std::vector<int64_t> zero_point =
            t.channel_scales.empty() ? std::vector<int64_t>{t.zero_point} : std::vector<int64_t>(t.channel_scales.size(), t.zero_point);
        const auto quant = t.scale != 0.0f || !t.channel_scales.empty()
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
        operators.push_back(tfl::CreateOperatorDirect(fbb, static_cast<uint32_t>(i), &op.inputs, &op.outputs,
                                                      op.options_type, op.options ? op.options(fbb) : 0));
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
    // The error points at the input tensor's table in the file.
    EXPECT_THAT(error_of([&] { run_graph(*model, {Bytes(15)}); }),
                ContainsRegex(R"(file@0x[0-9a-f]+: subgraphs\[0\]\.operators\[0\]\.inputs\[0\]: input 0 \(t0\) has 15 bytes, )"
                              "the model expects 16"));
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

Bytes le_bytes(std::initializer_list<int32_t> values) {
    Bytes b;
    for (const int32_t v : values) put_u32(b, static_cast<uint32_t>(v));
    return b;
}

// int8 [1,1,1,2] * filter [1,1,1,2] + bias [1] -> int8 [1,1,1,1]: a 1x1 CONV_2D with RELU6.
GraphSpec conv_graph() {
    GraphSpec g;
    g.tensors = {{{1, 1, 1, 2}, kInt8, 0.5f}, {{1, 1, 1, 2}, kInt8, 0.25f, 0, 1}, {{1}, kInt32, 0.125f, 0, 2},
                 {{1, 1, 1, 1}, kInt8, 0.5f, 1}};
    g.buffers = {{}, {3, 2}, le_bytes({8})};
    g.operators = {{kConv2d, {0, 1, 2}, {3}, tfl::BuiltinOptions_Conv2DOptions, [](auto& fbb) {
                        return tfl::CreateConv2DOptions(fbb, 0, 1, 1, /*RELU6*/ 3).Union();
                    }}};
    g.inputs = {0};
    g.outputs = {3};
    return g;
}

TEST(GraphRunner, Conv2dRunsWithItsOptions) {
    // 10 * 3 + -4 * 2 + 8 = 30 at scale 0.5 * 0.25 / 0.5: 7.5, rounded away from zero to 8, plus
    // the zero point 1; RELU6 would cap at 1 + 6 / 0.5 = 13.
    const auto model = load(conv_graph());
    EXPECT_EQ(run_graph(*model, {Bytes{10, static_cast<uint8_t>(-4)}}).outputs.at(0), Bytes{9});
    EXPECT_EQ(run_graph(*model, {Bytes{100, 0}}).outputs.at(0), Bytes{13});
}

TEST(GraphRunner, ConvolutionsRefuseWhatTflmRefuses) {
    GraphSpec g = conv_graph();
    g.tensors[1].type = kInt16;
    g.buffers[1] = {3, 0, 2, 0};
    EXPECT_THAT(graph_error(g), HasSubstr("operators[0] (CONV_2D): takes int8 input, int16 weights and int8 output"));
    g = conv_graph();
    g.operators[0].options = nullptr;
    g.operators[0].options_type = tfl::BuiltinOptions_NONE;
    EXPECT_THAT(graph_error(g), HasSubstr("operators[0] (CONV_2D): height stride 0, dilation 1 and filter 1 must be positive"));
    g = conv_graph();
    g.tensors[3].shape = {1, 1, 2, 1};
    EXPECT_THAT(graph_error(g), HasSubstr("output width is 2; SAME padding of 1 by a filter of 1 (stride 1, dilation 1) gives 1"));
    g = conv_graph();
    g.operators[0].options = [](auto& fbb) { return tfl::CreateConv2DOptions(fbb, 0, 1, 1, 6).Union(); };
    EXPECT_THAT(graph_error(g), HasSubstr("operators[0] (CONV_2D): fused activation 6 is not one of TFLite's"));
    // TANH fused into a convolution clamps nothing, as in TFLM: (100 * 3 + 8) * 0.25 + 1 = 78, where
    // RELU6 gave 13.
    g.operators[0].options = [](auto& fbb) { return tfl::CreateConv2DOptions(fbb, 0, 1, 1, /*TANH*/ 4).Union(); };
    EXPECT_EQ(run_graph(*load(g), {Bytes{100, 0}}).outputs.at(0), Bytes{78});
    g = conv_graph();
    g.tensors[1].channel_scales = {0.25f, 0.5f};
    EXPECT_THAT(graph_error(g), HasSubstr("filter 't1' has 2 scales for 1 channels"));
    g = conv_graph();
    g.tensors[1].zero_point = 1;
    EXPECT_THAT(graph_error(g), HasSubstr("filter 't1' has zero point 1; TFLM's kernels take symmetric weights here"));
    g = conv_graph();
    g.tensors[2].type = kInt64;
    g.buffers[2] = le_bytes({8, 0});
    EXPECT_THAT(graph_error(g), HasSubstr("bias 't2' is int64; with these inputs TFLM takes int32"));
    // int16 activations: zero points 0, bias int32 or int64 (not int16).
    g = conv_graph();
    g.tensors[0].type = g.tensors[3].type = kInt16;
    EXPECT_THAT(graph_error(g), HasSubstr("int16 't3' has a zero point other than 0"));
    g.tensors[3].zero_point = 0;
    EXPECT_NO_THROW(check_graph(*load(g)));
    // A dilated filter spanning more than int32 (3 taps 2^30 apart).
    g = conv_graph();
    g.tensors[1].shape = {1, 3, 1, 2};
    g.tensors[1].buffer = 0;
    g.inputs = {0, 1};
    g.operators[0].options = [](auto& fbb) { return tfl::CreateConv2DOptions(fbb, 0, 1, 1, 0, 1, 1 << 30).Union(); };
    EXPECT_THAT(graph_error(g), HasSubstr("height filter 3 dilated 1073741824 spans more than 2^31 points"));
    // A hostile size: 2^24 outputs of 2304 products each, from 16 MiB tensors, are refused before
    // anything runs (the run's limit per op, 2^30 by default).
    g = conv_graph();
    g.tensors[0].shape = {1, 256, 256, 256};
    g.tensors[1].shape = {256, 3, 3, 256};
    g.tensors[1].buffer = 0;
    g.tensors[2].shape = {256};
    g.tensors[2].buffer = 0;
    g.tensors[3].shape = {1, 256, 256, 256};
    g.inputs = {0, 1, 2};
    EXPECT_THAT(graph_error(g), HasSubstr("takes 38654705664 multiply-accumulates, above the limit of 1073741824 per op"));
    // Its 1 GiB form is refused before anything is allocated.
    g.tensors[0].shape = g.tensors[3].shape = {1, 4096, 4096, 64};
    EXPECT_THAT(graph_error(g), HasSubstr("'t0' needs 1073741824 bytes on the host, above the limit of 67108864 per buffer"));
}

// Host operators are charged to the run's limits as NPU ops are: the elements each reads and
// writes per op, their sum per run, and each buffer the run allocates.
TEST(GraphRunner, HostOperatorsAreChargedToTheRunsLimits) {
    GraphSpec g;
    g.tensors = {{{2, 8}, kInt8, 0.5f}, {{3, 8}, kInt8, 0.5f, 0, 1}, {{2, 3}, kInt8, 0.5f}, {{2, 3}, kInt8, 0.5f}};
    g.buffers = {{}, Bytes(24, 1)};
    g.operators = {{kFullyConnected, {0, 1}, {2}}, {kFullyConnected, {0, 1}, {3}}};
    g.inputs = {0};
    g.outputs = {2, 3};
    const auto model = load(g);
    // Each FULLY_CONNECTED reads 16 + 24 and writes 6 elements: 46 per op, 92 for the run.
    EXPECT_NO_THROW(check_graph(*model, {.max_op_work = 48, .max_run_work = 92}));
    const auto refusal = [](const LoadedModel& m, const WorkLimits& limits) {
        try {
            check_graph(m, limits);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::LimitExceeded);
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_THAT(refusal(*model, {.max_op_work = 45}), HasSubstr("operators[0] (FULLY_CONNECTED): takes 46 elements in and out, above the limit of 45 per op"));
    EXPECT_THAT(refusal(*model, {.max_run_work = 91}), HasSubstr("operators[1] (FULLY_CONNECTED): the host operators' elements reach 92 with this one"));
    EXPECT_THAT(refusal(*model, {.max_allocation_bytes = 15}), HasSubstr("'t0' needs 16 bytes on the host, above the limit of 15"));
    // An output larger than the input: [1,2] x [8,2] -> [1,8].
    g.tensors = {{{1, 2}, kInt8, 0.5f}, {{8, 2}, kInt8, 0.5f, 0, 1}, {{1, 8}, kInt8, 0.5f}};
    g.buffers = {{}, Bytes(16, 1)};
    g.operators = {{kFullyConnected, {0, 1}, {2}}};
    g.outputs = {2};
    EXPECT_THAT(refusal(*load(g), {.max_allocation_bytes = 7}),
                HasSubstr("operators[0] (FULLY_CONNECTED): its output 't2' needs 8 bytes on the host, above the limit of 7"));
}

TEST(GraphRunner, DepthwiseTransposeConvAndPoolsRefuseWhatTflmRefuses) {
    // DEPTHWISE_CONV_2D: 2 input channels times multiplier 1 are not 4 output channels.
    GraphSpec g;
    g.tensors = {{{1, 3, 3, 2}, kInt8, 0.5f}, {{1, 3, 3, 4}, kInt8, 0.5f}, {{1, 3, 3, 4}, kInt8, 0.5f}};
    g.operators = {{kDepthwise, {0, 1}, {2}, tfl::BuiltinOptions_DepthwiseConv2DOptions,
                    [](auto& fbb) { return tfl::CreateDepthwiseConv2DOptions(fbb, 0, 1, 1, 1).Union(); }}};
    g.inputs = {0, 1};
    g.outputs = {2};
    EXPECT_THAT(graph_error(g), HasSubstr("operators[0] (DEPTHWISE_CONV_2D): 2 input channels times depth multiplier 1"));
    g.operators[0].options = [](auto& fbb) { return tfl::CreateDepthwiseConv2DOptions(fbb, 0, 1, 1, 2).Union(); };
    EXPECT_NO_THROW(check_graph(*load(g)));
    // TRANSPOSE_CONV int16: TFLM would read an int32 bias as int64.
    g = {};
    g.tensors = {{{4}, kInt32}, {{2, 3, 3, 2}, kInt8, 0.5f}, {{1, 2, 2, 2}, kInt16, 0.5f}, {{2}, kInt32, 0.25f},
                 {{1, 4, 4, 2}, kInt16, 0.5f}};
    g.operators = {{kTransposeConv, {0, 1, 2, 3}, {4}, tfl::BuiltinOptions_TransposeConvOptions,
                    [](auto& fbb) { return tfl::CreateTransposeConvOptions(fbb, 0, 2, 2).Union(); }}};
    g.inputs = {0, 1, 2, 3};
    g.outputs = {4};
    EXPECT_THAT(graph_error(g), HasSubstr("operators[0] (TRANSPOSE_CONV): bias 't3' is int32; with these inputs TFLM takes int16 or int64"));
    g.tensors[3].type = kInt64;
    EXPECT_NO_THROW(check_graph(*load(g)));
    // AVERAGE_POOL_2D: input and output quantized alike.
    g = {};
    g.tensors = {{{1, 4, 4, 2}, kInt8, 0.5f}, {{1, 2, 2, 2}, kInt8, 0.25f}};
    g.operators = {{kAveragePool, {0}, {1}, tfl::BuiltinOptions_Pool2DOptions,
                    [](auto& fbb) { return tfl::CreatePool2DOptions(fbb, 1, 2, 2, 2, 2).Union(); }}};
    g.inputs = {0};
    g.outputs = {1};
    EXPECT_THAT(graph_error(g), HasSubstr("operators[0] (AVERAGE_POOL_2D): input scale 0.5 and zero point 0 differ"));
    g.tensors[1].scale = 0.5f;
    const auto model = load(g);
    // 2x2 VALID windows of 1, 2, 3, 4 (channel 0) average to 2.5, rounded away from zero.
    Bytes in(32, 0);
    for (const size_t i : {0, 2, 8, 10}) in[i] = static_cast<uint8_t>(1 + i / 4 + (i % 4) / 2);
    EXPECT_EQ(run_graph(*model, {in}).outputs.at(0)[0], 3);
}

// An omitted optional input is -1 in the operator's list (the bias of the public KWT model's
// FULLY_CONNECTED): it names no tensor, and nothing must read tensor -1 while checking the graph.
TEST(GraphRunner, OmittedOptionalInputNamesNoTensor) {
    GraphSpec g;
    g.tensors = {{{1, 2}, kInt8, 1.0f}, {{1, 2}, kInt8, 1.0f, 0, 1}, {{1, 1}, kInt8, 1.0f}};
    g.buffers = {{}, {3, 4}};
    g.operators = {{kFullyConnected, {0, 1, -1}, {2}}};
    g.inputs = {0};
    g.outputs = {2};
    EXPECT_EQ(run_graph(*load(g), {Bytes{2, 1}}).outputs.at(0), Bytes{10});
}

TEST(GraphRunner, Int4WeightsPackedTwoToAByte) {
    // FULLY_CONNECTED int8 [1,3] x int4 weights [3,3]: 9 values in 5 bytes, low nibble first.
    GraphSpec g;
    g.tensors = {{{1, 3}, kInt8, 1.0f}, {{3, 3}, kInt4, 1.0f, 0, 1}, {{1, 3}, kInt8, 1.0f}};
    // Rows {1, -1, 7}, {-8, 0, 2}, {3, -2, -1}.
    g.buffers = {{}, {0xF1, 0x87, 0x20, 0xE3, 0x0F}};
    g.operators = {{kFullyConnected, {0, 1}, {2}}};
    g.inputs = {0};
    g.outputs = {2};
    // Input {2, 3, 1}: 2 - 3 + 7 = 6, -16 + 2 = -14, 6 - 6 - 1 = -1.
    EXPECT_EQ(run_graph(*load(g), {Bytes{2, 3, 1}}).outputs.at(0), (Bytes{6, static_cast<uint8_t>(-14), 0xFF}));
    g.buffers[1].push_back(0);
    EXPECT_THAT(graph_error(g), HasSubstr("buffer holds 6 bytes but the tensor's shape needs 5"));
}

// TFLM's per-tensor int8 FULLY_CONNECTED adds minus the filter's zero point to each weight (a
// public KWT model's FULLY_CONNECTED, which Vela left on the CPU).
TEST(GraphRunner, FullyConnectedTakesAPerTensorFilterZeroPoint) {
    GraphSpec g;
    g.tensors = {{{1, 3}, kInt8, 1.0f}, {{2, 3}, kInt8, 1.0f, -13, 1}, {{1, 2}, kInt8, 1.0f}};
    g.buffers = {{}, {1, 2, 3, static_cast<uint8_t>(-1), 0, 4}};
    g.operators = {{kFullyConnected, {0, 1}, {2}}};
    g.inputs = {0};
    g.outputs = {2};
    // Weights {14, 15, 16} and {12, 13, 17} by {2, 3, 1}: 28 + 45 + 16 = 89, 24 + 39 + 17 = 80.
    EXPECT_EQ(run_graph(*load(g), {Bytes{2, 3, 1}}).outputs.at(0), (Bytes{89, 80}));
}

TEST(GraphRunner, FullyConnectedAndBatchMatMulRefuseWhatTflmRefuses) {
    GraphSpec g;
    g.tensors = {{{2, 8}, kInt8, 0.5f}, {{3, 8}, kInt8, 0.5f}, {{3}, kInt32, 0.25f}, {{2, 3}, kInt8, 0.5f}};
    g.operators = {{kFullyConnected, {0, 1, 2}, {3}}};
    g.inputs = {0, 1, 2};
    g.outputs = {3};
    EXPECT_NO_THROW(check_graph(*load(g)));
    g.tensors[0].shape = {2, 7};
    EXPECT_THAT(graph_error(g), HasSubstr("operators[0] (FULLY_CONNECTED): input 't0' is [2,7], not 2 rows of 8"));
    g.tensors[0].shape = {2, 8};
    g.tensors[2].scale = 0.5f;  // not 0.5 x 0.5
    EXPECT_THAT(graph_error(g), HasSubstr("bias 't2' has scale 0.5, not input scale x weight scale 0.25"));
    g.tensors[2].scale = 0.25f;
    // keep_num_dims shapes only the output tensor: [2,1,8] rows into [2,1,3].
    g.tensors[0].shape = {2, 1, 8};
    g.tensors[3].shape = {2, 1, 3};
    g.operators[0].options_type = tfl::BuiltinOptions_FullyConnectedOptions;
    g.operators[0].options = [](auto& fbb) { return tfl::CreateFullyConnectedOptions(fbb, 0, 0, /*keep_num_dims*/ true).Union(); };
    EXPECT_NO_THROW(check_graph(*load(g)));
    g.operators[0].options = [](auto& fbb) { return tfl::CreateFullyConnectedOptions(fbb, 0, /*SHUFFLED4x16INT8*/ 1).Union(); };
    EXPECT_THAT(graph_error(g), HasSubstr("weights format 1 is not DEFAULT"));
    // Per-channel weights and int16 inputs keep TFLM's symmetric weights (their kernels add no
    // weights offset).
    g.operators[0].options = nullptr;
    g.operators[0].options_type = tfl::BuiltinOptions_NONE;
    g.tensors[1].zero_point = -13;
    g.tensors[1].channel_scales = {0.5f, 0.5f, 0.5f};
    EXPECT_THAT(graph_error(g), HasSubstr("filter 't1' has zero point -13; TFLM's kernels take symmetric weights here"));
    g.tensors[1].channel_scales = {};
    g.tensors[0].type = g.tensors[3].type = kInt16;
    g.tensors[0].zero_point = g.tensors[3].zero_point = 0;
    g.tensors[2].type = kInt64;
    EXPECT_THAT(graph_error(g), HasSubstr("filter 't1' has zero point -13; TFLM's kernels take symmetric weights here"));
    // BATCH_MATMUL: [2,3] x [4,5] do not share a summed dimension; int16 zero points are 0.
    g = {};
    g.tensors = {{{2, 3}, kInt8, 0.5f}, {{4, 5}, kInt8, 0.5f}, {{2, 5}, kInt8, 0.5f}};
    g.operators = {{kBatchMatMul, {0, 1}, {2}}};
    g.inputs = {0, 1};
    g.outputs = {2};
    EXPECT_THAT(graph_error(g), HasSubstr("operators[0] (BATCH_MATMUL): 't0' [2,3] and 't1' [4,5] disagree on the summed dimension"));
    g.operators[0].options_type = tfl::BuiltinOptions_BatchMatMulOptions;
    g.operators[0].options = [](auto& fbb) { return tfl::CreateBatchMatMulOptions(fbb, false, true).Union(); };
    g.tensors[1].shape = {5, 3};  // adjoint: [cols, depth]
    EXPECT_NO_THROW(check_graph(*load(g)));
    for (auto& t : g.tensors) t.type = kInt16;
    g.tensors[1].zero_point = 2;
    EXPECT_THAT(graph_error(g), HasSubstr("int16 't1' has a zero point other than 0"));
}

// Random small graphs of each operator of the convolution family: a valid one (int8, int16 or
// float32; random extents, strides, filters, activation) and, half the time, one field of a tensor
// or the options drawn past what is valid. Every one is either refused with an ethosu::Error naming
// the operator or runs (under the sanitizers, without a report).
TEST(GraphRunner, RandomConvolutionFamilyGraphsAreRefusedOrRun) {
    std::mt19937 rng(5);
    const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    constexpr int32_t kMaxPool = 17;
    const int32_t codes[] = {kConv2d, kDepthwise, kTransposeConv, kFullyConnected, kAveragePool, kMaxPool, kBatchMatMul};
    int ran = 0, refused = 0;
    for (int i = 0; i < 2000; ++i) {
        const int32_t code = codes[pick(0, 6)];
        const int8_t type = std::array<int8_t, 3>{kInt8, kInt16, kFloat32}[size_t(pick(0, 2))];
        const float scale = type == kFloat32 ? 0.0f : 0.5f;
        const int8_t bias_type = type == kFloat32 ? kFloat32 : type == kInt16 ? kInt64 : kInt32;
        const int b = pick(1, 2), h = pick(1, 5), w = pick(1, 5), c = pick(1, 3), o = pick(1, 3), k = pick(1, 3),
                  s = pick(1, 2), act = pick(0, 5);
        const auto ceil_div = [](int x, int y) { return (x + y - 1) / y; };
        const TensorSpec data{{b, h, w, c}, type, scale}, filter{{o, k, k, c}, type == kFloat32 ? kFloat32 : kInt8, type == kFloat32 ? 0.0f : 0.25f},
            bias{{o}, bias_type, type == kFloat32 ? 0.0f : 0.125f};
        GraphSpec g;
        OperatorSpec op{code, {}, {}};
        switch (code) {
            case kConv2d:
                g.tensors = {data, filter, bias, {{b, ceil_div(h, s), ceil_div(w, s), o}, type, scale}};
                op.options_type = tfl::BuiltinOptions_Conv2DOptions;
                op.options = [=](auto& fbb) { return tfl::CreateConv2DOptions(fbb, 0, s, s, act).Union(); };
                break;
            case kDepthwise:
                g.tensors = {data, {{1, k, k, c * o}, filter.type, filter.scale}, {{c * o}, bias_type, bias.scale},
                             {{b, ceil_div(h, s), ceil_div(w, s), c * o}, type, scale}};
                op.options_type = tfl::BuiltinOptions_DepthwiseConv2DOptions;
                op.options = [=](auto& fbb) { return tfl::CreateDepthwiseConv2DOptions(fbb, 0, s, s, o, act).Union(); };
                break;
            case kTransposeConv:
                g.tensors = {{{4}, kInt32}, filter, data, bias, {{b, h * s, w * s, o}, type, scale}};
                op.options_type = tfl::BuiltinOptions_TransposeConvOptions;
                op.options = [=](auto& fbb) { return tfl::CreateTransposeConvOptions(fbb, 0, s, s, act).Union(); };
                break;
            case kFullyConnected:
                g.tensors = {{{b, c}, type, scale}, {{o, c}, filter.type, filter.scale}, bias, {{b, o}, type, scale}};
                op.options_type = tfl::BuiltinOptions_FullyConnectedOptions;
                op.options = [=](auto& fbb) { return tfl::CreateFullyConnectedOptions(fbb, act).Union(); };
                break;
            case kBatchMatMul:
                g.tensors = {{{b, h, c}, type, scale}, {{b, c, w}, type, scale}, {{b, h, w}, type, scale}};
                break;
            default:  // the pools
                g.tensors = {data, {{b, ceil_div(h, s), ceil_div(w, s), c}, type, scale}};
                op.options_type = tfl::BuiltinOptions_Pool2DOptions;
                op.options = [=](auto& fbb) { return tfl::CreatePool2DOptions(fbb, 0, s, s, k, k, act).Union(); };
        }
        if (pick(0, 1) == 0) {  // one field past what is valid
            TensorSpec& t = g.tensors[size_t(pick(0, static_cast<int>(g.tensors.size()) - 1))];
            switch (pick(0, 4)) {
                case 0: t.shape[size_t(pick(0, static_cast<int>(t.shape.size()) - 1))] = pick(0, 7); break;
                case 1: t.type = std::array<int8_t, 6>{kInt8, kInt16, kFloat32, kInt32, kInt64, kInt4}[size_t(pick(0, 5))]; break;
                case 2: t.zero_point = pick(-3, 3); break;
                case 3: t.channel_scales = std::vector<float>(size_t(pick(1, 4)), 0.5f); break;
                default:
                    op.options = [=](auto& fbb) { return tfl::CreateConv2DOptions(fbb, pick(0, 2), pick(0, 2), 1, pick(0, 7)).Union(); };
                    op.options_type = tfl::BuiltinOptions_Conv2DOptions;
            }
        }
        const int outputs = static_cast<int>(g.tensors.size()) - 1;
        for (int k2 = 0; k2 < outputs; ++k2) op.inputs.push_back(k2), g.inputs.push_back(k2);
        op.outputs = {outputs};
        g.operators = {op};
        g.outputs = {outputs};
        std::unique_ptr<LoadedModel> model;
        try {
            model = load(g);
            check_graph(*model);
        } catch (const Error& e) {
            ++refused;
            EXPECT_THAT(e.what(), HasSubstr("subgraphs[0]"));  // the operator, or the tensor the loader refuses
            continue;
        }
        std::vector<Bytes> inputs;
        for (int k2 = 0; k2 < outputs; ++k2) {
            Bytes bytes(model->graph->tensors[size_t(k2)].info.size_bytes);
            for (auto& x : bytes) x = static_cast<uint8_t>(pick(0, 255));
            inputs.push_back(std::move(bytes));
        }
        try {
            run_graph(*model, inputs);
            ++ran;
        } catch (const Error& e) {
            ++refused;  // e.g. an average pool window outside the input
            EXPECT_THAT(e.what(), HasSubstr("operators[0]"));
        }
    }
    // Both outcomes occur.
    EXPECT_GT(ran, 300);
    EXPECT_GT(refused, 300);
}

}  // namespace
}  // namespace ethosu::test
