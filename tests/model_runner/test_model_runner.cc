// ethosu_emu::ModelRunner (ethosu_emu/model_runner.hpp) through its public header alone: a model
// from its file and from its bytes runs to its golden output with the same figures, and what it
// refuses comes as ethosu_emu::Error with the place and reason.

#include <ethosu_emu/model_runner.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

const std::filesystem::path kPersonDetect = std::filesystem::path(ETHOSU_VECTORS_DIR) / "person_detect";

std::vector<uint8_t> read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ModelRunnerCorpus : public testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(model_))
            GTEST_SKIP() << "corpus absent: " << model_ << " (ETHOSU_VECTORS_DIR)";
    }
    const std::filesystem::path model_ = kPersonDetect / "ethos-u55-128" / "model_vela.tflite";
};

TEST_F(ModelRunnerCorpus, FileAndBytesRunToTheGolden) {
    const auto from_file = ethosu_emu::ModelRunner::load_file(model_.string());
    const auto from_bytes = ethosu_emu::ModelRunner::load_bytes(read_file(model_), "person_detect");
    EXPECT_EQ(from_file.npu(), "ethos-u55-128");
    ASSERT_EQ(from_file.inputs().size(), 1u);
    EXPECT_EQ(from_file.inputs()[0].type, "int8");
    EXPECT_EQ(from_file.inputs()[0].shape, (std::vector<int64_t>{1, 96, 96, 1}));
    const std::vector<std::vector<uint8_t>> inputs{read_file(kPersonDetect / "golden" / "seed1.in0.bin")};
    const ethosu_emu::RunResult a = from_file.run(inputs);
    const ethosu_emu::RunResult b = from_bytes.run(inputs);
    ASSERT_EQ(a.outputs.size(), 1u);
    EXPECT_EQ(a.outputs[0], read_file(kPersonDetect / "golden" / "seed1.out0.bin"));
    EXPECT_EQ(b.outputs, a.outputs);
    EXPECT_EQ(b.npu_cycles, a.npu_cycles);
    EXPECT_GT(a.npu_cycles, 0);
    EXPECT_EQ(a.pmu_cycle_counter, static_cast<uint64_t>(a.npu_cycles));
    // A second run starts from the model's initial memory.
    EXPECT_EQ(from_file.run(inputs).outputs, a.outputs);
    int64_t kernel_macs = 0;
    for (const auto& op : a.ops) kernel_macs += op.macs;
    EXPECT_EQ(kernel_macs, a.macs);
}

TEST_F(ModelRunnerCorpus, RefusalsNameThePlace) {
    const auto model = ethosu_emu::ModelRunner::load_file(model_.string());
    try {
        model.run({std::vector<uint8_t>(10)});
        FAIL() << "a 10-byte input ran";
    } catch (const ethosu_emu::Error& e) {
        EXPECT_EQ(e.kind(), "usage");
        EXPECT_EQ(e.field(), "input 0");
        EXPECT_NE(std::string(e.what()).find("10 bytes given, the tensor holds 9216"), std::string::npos) << e.what();
    }
    std::vector<uint8_t> truncated = read_file(model_);
    truncated.resize(truncated.size() / 3);
    try {
        ethosu_emu::ModelRunner::load_bytes(truncated, "truncated.tflite");
        FAIL() << "a truncated model loaded";
    } catch (const ethosu_emu::Error& e) {
        EXPECT_EQ(e.file(), "truncated.tflite");
        EXPECT_EQ(e.kind(), "malformed");
        EXPECT_FALSE(e.reason().empty());
    }
    EXPECT_THROW(ethosu_emu::ModelRunner::load_file(model_.string(), {.npu = "ethos-u85-256"}), ethosu_emu::Error);
    EXPECT_THROW(ethosu_emu::ModelRunner::load_file(model_.string(), {.system_config = "No_Such_Config"}),
                 ethosu_emu::Error);
}

TEST(ModelRunner, MissingFileIsAnIoError) {
    try {
        ethosu_emu::ModelRunner::load_file("/nonexistent/model.tflite");
        FAIL() << "a missing file loaded";
    } catch (const ethosu_emu::Error& e) {
        EXPECT_EQ(e.kind(), "io");
        EXPECT_EQ(e.file(), "/nonexistent/model.tflite");
    }
}

TEST(ModelRunner, BytesThatAreNoModel) {
    EXPECT_THROW(ethosu_emu::ModelRunner::load_bytes({1, 2, 3}, "three bytes"), ethosu_emu::Error);
}

}  // namespace
