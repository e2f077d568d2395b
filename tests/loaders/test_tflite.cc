// Vela .tflite: models built here with the schema subset (inline and external buffer data,
// CPU operators, broken references) and corrupted copies of a corpus model.

#include <gtest/gtest.h>

#include <algorithm>

#include "frontend/loaders/model.h"
#include "frontend/loaders/vela_tflite_generated.h"
#include "loader_test_util.h"

namespace ethosu::test {
namespace {

using ::testing::HasSubstr;
namespace tfl = ethosu::tflite;

constexpr int8_t kUInt8 = 3, kInt8 = 9;
constexpr int32_t kFullyConnected = 9;

// A one-NPU-operator model: tensors [command stream, weights, scratch, fast scratch, input,
// output], buffers [empty, payload, weights, plan].
struct ModelSpec {
    Bytes payload = cop1_payload(kU55_128Config, kU55Id, kSomeWords);
    Bytes weights = {1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<int32_t> op_inputs = {0, 1, 2, 3, 4};
    std::vector<int32_t> plan = {0, 1, 6, -1, -1, 0, 0, 96, 128};  // version, subgraph, count, offsets
    int32_t weights_shape = 8;
    std::vector<int32_t> input_shape = {1, 4, 4, 2};
    bool external_weights = false;  // weights after the flatbuffer, found by Buffer.offset/size
    uint64_t external_offset = 0;   // override of the computed offset (0: right after the flatbuffer)
    bool cpu_operator = false;      // add a FULLY_CONNECTED after the NPU operator
    bool variable_input = false;    // the input is a variable tensor (state, as an LSTM's)
};

Bytes plan_bytes(const std::vector<int32_t>& plan) {
    Bytes out;
    for (const int32_t v : plan) put_u32(out, static_cast<uint32_t>(v));
    return out;
}

Bytes build_flatbuffer(const ModelSpec& spec, uint64_t weights_offset) {
    flatbuffers::FlatBufferBuilder fbb;
    const auto tensor = [&](std::vector<int32_t> shape, int8_t type, uint32_t buffer, const char* name,
                            bool is_variable = false) {
        const std::vector<float> scale = {0.25f};
        const std::vector<int64_t> zero_point = {-3};
        const auto quant = type == kInt8
                               ? tfl::CreateQuantizationParametersDirect(fbb, nullptr, nullptr, &scale, &zero_point)
                               : flatbuffers::Offset<tfl::QuantizationParameters>();
        return tfl::CreateTensorDirect(fbb, &shape, type, buffer, name, quant, is_variable);
    };
    const std::vector<flatbuffers::Offset<tfl::Tensor>> tensors = {
        tensor({static_cast<int32_t>(spec.payload.size())}, kUInt8, 1, "ethos_u_command_stream"),
        tensor({spec.weights_shape}, kUInt8, 2, "read_only"),
        tensor({96}, kUInt8, 0, "scratch"),
        tensor({32}, kUInt8, 0, "scratch_fast"),
        tensor(spec.input_shape, kInt8, 0, "input", spec.variable_input),
        tensor({1, 2, 2, 2}, kInt8, 0, "output"),
    };
    const std::vector<int32_t> npu_outputs = {5};
    std::vector<flatbuffers::Offset<tfl::Operator>> operators = {
        tfl::CreateOperatorDirect(fbb, 0, &spec.op_inputs, &npu_outputs)};
    if (spec.cpu_operator) {
        const std::vector<int32_t> in = {5}, out = {4};
        operators.push_back(tfl::CreateOperatorDirect(fbb, 1, &in, &out));
    }
    const std::vector<int32_t> inputs = {4}, outputs = {5};
    const std::vector<flatbuffers::Offset<tfl::SubGraph>> subgraphs = {
        tfl::CreateSubGraphDirect(fbb, &tensors, &inputs, &outputs, &operators, "main")};
    const std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes = {
        tfl::CreateOperatorCodeDirect(fbb, 32, "ethos-u", 1, 32),
        tfl::CreateOperatorCodeDirect(fbb, kFullyConnected, nullptr, 1, kFullyConnected)};
    const Bytes plan = plan_bytes(spec.plan);
    const std::vector<flatbuffers::Offset<tfl::Buffer>> buffers = {
        tfl::CreateBufferDirect(fbb), tfl::CreateBufferDirect(fbb, &spec.payload),
        spec.external_weights ? tfl::CreateBuffer(fbb, 0, weights_offset, spec.weights.size())
                              : tfl::CreateBufferDirect(fbb, &spec.weights),
        tfl::CreateBufferDirect(fbb, &plan)};
    const std::vector<flatbuffers::Offset<tfl::Metadata>> metadata = {
        tfl::CreateMetadataDirect(fbb, "OfflineMemoryAllocation", 3)};
    fbb.Finish(tfl::CreateModelDirect(fbb, 3, &codes, &subgraphs, "test", &buffers, nullptr, &metadata),
               tfl::ModelIdentifier());
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

Bytes build_model(const ModelSpec& spec) {
    if (!spec.external_weights) return build_flatbuffer(spec, 0);
    // The offset field is stored either way, so a second build with the real offset keeps the size.
    const size_t flatbuffer_size = build_flatbuffer(spec, 0x10000).size();
    const uint64_t offset = spec.external_offset ? spec.external_offset : (flatbuffer_size + 15) / 16 * 16;
    Bytes file = build_flatbuffer(spec, offset);
    file.resize((file.size() + 15) / 16 * 16, 0);
    put_bytes(file, spec.weights);
    return file;
}

std::string tflite_error(const ModelSpec& spec) {
    return error_of([&] { load_vela_tflite("model.tflite", build_model(spec), {}); });
}

TEST(Tflite, OneNpuOperator) {
    const auto model = load_vela_tflite("model.tflite", build_model({}), {});
    EXPECT_EQ(model->format, ModelFormat::VelaTflite);
    EXPECT_EQ(model->config.name, "ethos-u55-128");
    EXPECT_EQ(model->cpu_operators, 0);
    ASSERT_EQ(model->invocations.size(), 1u);
    const NpuInvocation& inv = model->invocations[0];
    EXPECT_EQ(inv.stream.words, kSomeWords);
    ASSERT_EQ(inv.regions.size(), 3u);
    EXPECT_TRUE(std::ranges::equal(inv.regions[0].bytes, Bytes{1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(inv.regions[1].size, 96u);
    EXPECT_EQ(inv.regions[2].role, RegionRole::ScratchFast);
    EXPECT_EQ(inv.regions[2].size, 32u);
    ASSERT_EQ(inv.inputs.size(), 1u);
    EXPECT_EQ(inv.inputs[0].region, 1);
    EXPECT_EQ(inv.inputs[0].offset, 96u);  // planned 96 bytes above the scratch tensor
    EXPECT_EQ(inv.outputs.at(0).offset, 128u);

    ASSERT_EQ(model->inputs.size(), 1u);
    const TensorInfo& in = model->inputs[0];
    EXPECT_EQ(in.name, "input");
    EXPECT_EQ(in.shape, (std::vector<int64_t>{1, 4, 4, 2}));
    EXPECT_EQ(in.type, ElementType::Int8);
    EXPECT_EQ(in.size_bytes, 32u);
    EXPECT_EQ(in.offset, 96u);
    EXPECT_EQ(in.scale, std::vector<float>{0.25f});
    EXPECT_EQ(in.zero_point, std::vector<int64_t>{-3});
    EXPECT_FALSE(in.is_variable);
}

TEST(Tflite, VariableTensorsAreMarked) {
    ModelSpec spec;
    spec.variable_input = true;
    const auto model = load_vela_tflite("model.tflite", build_model(spec), {});
    EXPECT_TRUE(model->invocations.at(0).inputs.at(0).is_variable);
    EXPECT_FALSE(model->invocations.at(0).outputs.at(0).is_variable);
}

TEST(Tflite, ExternalBufferData) {
    ModelSpec spec;
    spec.external_weights = true;
    const auto model = load_vela_tflite("big.tflite", build_model(spec), {});
    EXPECT_TRUE(std::ranges::equal(model->invocations.at(0).regions.at(0).bytes, spec.weights));

    spec.external_offset = 1u << 20;  // far past the end of the file
    const std::string e = tflite_error(spec);
    EXPECT_THAT(e, HasSubstr("model.tflite: file@0x100000: buffers[2]"));
    EXPECT_THAT(e, HasSubstr("runs past the end"));
}

// A file with an owner (load_model maps files) lends its bytes to the weights region; a caller's
// buffer without one is copied, so the model never points into memory it does not keep alive.
TEST(Tflite, WeightsPointIntoAnOwnedFileAndCopyOtherwise) {
    ModelSpec spec;
    auto file = std::make_shared<const Bytes>(build_model(spec));
    const std::span<const uint8_t> all(*file);
    const auto inside = [&](std::span<const uint8_t> b) {
        return b.data() >= all.data() && b.data() + b.size() <= all.data() + all.size();
    };
    const auto shared = load_vela_tflite("model.tflite", FileBytes(all, file), {});
    const RegionImage& lent = shared->invocations.at(0).regions.at(0);
    EXPECT_TRUE(inside(lent.bytes));
    EXPECT_EQ(lent.owner, file);

    const auto copied = load_vela_tflite("model.tflite", FileBytes(all), {});
    const RegionImage& copy = copied->invocations.at(0).regions.at(0);
    EXPECT_FALSE(inside(copy.bytes));
    EXPECT_TRUE(std::ranges::equal(copy.bytes, lent.bytes));
    file.reset();
    EXPECT_TRUE(std::ranges::equal(lent.bytes, spec.weights));  // still alive: the region owns it
}

TEST(Tflite, CpuOperatorsAndSharedScratch) {
    ModelSpec spec;
    spec.cpu_operator = true;
    spec.op_inputs = {0, 1, 2, 2, 4};  // fast scratch is the arena itself (U55)
    const auto model = load_vela_tflite("model.tflite", build_model(spec), {});
    EXPECT_EQ(model->cpu_operators, 1);
    EXPECT_EQ(model->invocations.at(0).regions.size(), 2u);
}

TEST(Tflite, WithoutAPlanFeatureMapsHaveNoRegion) {
    ModelSpec spec;
    spec.plan = {0, 1, 6, -1, -1, 0, -1, -1, 16};
    const auto model = load_vela_tflite("model.tflite", build_model(spec), {});
    EXPECT_EQ(model->inputs.at(0).region, -1);
    EXPECT_EQ(model->outputs.at(0).region, 1);
    EXPECT_EQ(model->outputs.at(0).offset, 16u);
}

TEST(Tflite, BrokenReferences) {
    ModelSpec few_inputs;
    few_inputs.op_inputs = {0, 1, 2};
    EXPECT_THAT(tflite_error(few_inputs), HasSubstr("has 3"));

    ModelSpec bad_tensor;
    bad_tensor.op_inputs = {0, 1, 2, 3, 17};
    const std::string e = tflite_error(bad_tensor);
    EXPECT_THAT(e, HasSubstr("model.tflite: file@0x"));
    EXPECT_THAT(e, HasSubstr("subgraphs[0].operators[0].inputs[4]"));
    EXPECT_THAT(e, HasSubstr("tensor index 17"));

    ModelSpec size_mismatch;
    size_mismatch.weights_shape = 4096;
    EXPECT_THAT(tflite_error(size_mismatch), HasSubstr("buffer holds 8 bytes but the tensor's shape needs 4096"));

    ModelSpec huge_tensor;
    huge_tensor.input_shape = {1 << 20, 1 << 20, 8};
    const std::string huge = tflite_error(huge_tensor);
    EXPECT_THAT(huge, HasSubstr("subgraphs[0].operators[0].inputs[4]"));
    EXPECT_THAT(huge, HasSubstr("tensor is larger than"));

    ModelSpec negative_dimension;
    negative_dimension.input_shape = {1, -4, 4, 2};
    EXPECT_THAT(tflite_error(negative_dimension), HasSubstr("negative dimension -4"));

    ModelSpec plan_count;
    plan_count.plan = {0, 1, 5, 0, 0, 0, 0, 0};
    EXPECT_THAT(tflite_error(plan_count), HasSubstr("plans 5 tensors but subgraph 0 has 6"));

    ModelSpec plan_short;
    plan_short.plan = {0, 1, 6, 0, 0};
    EXPECT_THAT(tflite_error(plan_short), HasSubstr("OfflineMemoryAllocation"));

    ModelSpec plan_below;
    plan_below.plan = {0, 1, 6, -1, -1, 96, 96, 0, 128};
    EXPECT_THAT(tflite_error(plan_below), HasSubstr("below the scratch area"));
    // The error points at the input's (tensor 4's) entry of the plan: 3 header words, then one per tensor.
    const Bytes below_file = build_model(plan_below);
    const Bytes below_plan = plan_bytes(plan_below.plan);
    const auto plan_at = std::search(below_file.begin(), below_file.end(), below_plan.begin(), below_plan.end());
    ASSERT_NE(plan_at, below_file.end());
    try {
        load_vela_tflite("model.tflite", below_file, {});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, static_cast<uint64_t>(plan_at - below_file.begin()) + 12 + 4 * 4) << e.what();
    }

    ModelSpec bad_payload;
    bad_payload.payload = {'C', 'O', 'P', '1', 2, 0, 0, 1};
    EXPECT_THAT(tflite_error(bad_payload), HasSubstr("COMMAND_STREAM.length"));
}

TEST(Tflite, NpuOverride) {
    const Bytes file = build_model({});
    EXPECT_EQ(load_vela_tflite("m.tflite", file, {.npu = "ethos-u55-128"})->config.name, "ethos-u55-128");
    EXPECT_THAT(error_of([&] { load_vela_tflite("m.tflite", file, {.npu = "ethos-u55-256"}); }),
                HasSubstr("disagrees"));
    EXPECT_THAT(error_of([&] { load_vela_tflite("m.tflite", file, {.npu = "npu"}); }), HasSubstr("unknown NPU"));
}

uint32_t read_u32(const Bytes& b, size_t at) {
    return b[at] | b[at + 1] << 8 | b[at + 2] << 16 | static_cast<uint32_t>(b[at + 3]) << 24;
}

TEST(Tflite, CorruptedCorpusModel) {
    if (!have_vectors()) GTEST_SKIP() << "no Vela corpus at " << vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    const auto path = (vectors_dir() / "hello_world_int8" / "ethos-u55-128" / "model_vela.tflite").string();
    const Bytes good = read_bytes(path);
    const auto error = [&](const Bytes& bytes) { return error_of([&] { load_vela_tflite(path, bytes, {}); }); };

    Bytes root = good;  // root table offset far outside the file
    root[3] = 0x7F;
    std::string e = error(root);
    EXPECT_THAT(e, HasSubstr(path));
    EXPECT_THAT(e, HasSubstr("not a complete TFLite model"));

    Bytes vtable = good;  // the root table's vtable offset pointing outside the file
    const uint32_t table = read_u32(good, 0);
    vtable[table + 3] = 0x40;
    EXPECT_THAT(error(vtable), HasSubstr("not a complete TFLite model"));

    // Cut short, as by an interrupted copy: the file and its size, in a user's terms.
    const Bytes truncated(good.begin(), good.begin() + 1000);
    EXPECT_EQ(error(truncated), path + ": not a complete TFLite model: its 1000 bytes end before, or do not hold, the "
                                       "parts its header points to (a truncated or damaged file: copy or export it again)");

    Bytes identifier = good;
    identifier[4] = 'X';
    EXPECT_THAT(error(identifier), HasSubstr("TFL3"));
    // Without its identifier the file is no longer recognised.
    EXPECT_THAT(error_of([&] { load_model(write_temp("m.tflite", identifier), {}); }), HasSubstr("not a model"));

    EXPECT_EQ(load_model(path, {.npu = "ethos-u55-128"})->config.name, "ethos-u55-128");
    EXPECT_THAT(error_of([&] { load_model(path, {.npu = "ethos-u85-256"}); }), HasSubstr("ethos-u55-128"));
}

}  // namespace
}  // namespace ethosu::test
