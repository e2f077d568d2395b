// Parallel kernels are deterministic: corpus models give the same outputs and cycle counts
// whatever the number of worker threads.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "frontend/runner/run_model.h"
#include "tests/corpus_index.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

RunResult run_with_threads(int threads, const LoadedModel& model, const std::vector<std::vector<uint8_t>>& inputs) {
    tbb::task_arena arena(threads);
    RunResult result;
    arena.execute([&] { result = run_model(model, inputs); });
    return result;
}

struct ModelRun {
    const char* model;
    const char* config = "ethos-u55-128";
};

class Threads : public ::testing::TestWithParam<ModelRun> {};

TEST_P(Threads, OutputsAndCyclesDoNotDependOnTheThreadCount) {
    const fs::path dir = fs::path(ETHOSU_VECTORS_DIR) / GetParam().model;
    const fs::path model_path = dir / GetParam().config / "model_vela.tflite";
    if (!fs::exists(model_path)) GTEST_SKIP() << "test vectors not found at " << model_path;
    const auto model = load_model(model_path.string(), {});
    std::vector<std::vector<uint8_t>> inputs;
    for (size_t k = 0; k < model->inputs.size(); ++k)
        inputs.push_back(read_file_bytes(dir / "golden" / fmt::format("seed1.in{}.bin", k)));

    const RunResult one = run_with_threads(1, *model, inputs);
    ASSERT_FALSE(one.outputs.empty());
    for (const int threads : {2, 3, 8}) {
        const RunResult many = run_with_threads(threads, *model, inputs);
        EXPECT_EQ(many.outputs, one.outputs) << threads << " threads";
        ASSERT_EQ(many.timing.size(), one.timing.size());
        for (size_t s = 0; s < one.timing.size(); ++s)
            EXPECT_EQ(many.timing[s].totals.cycles, one.timing[s].totals.cycles) << threads << " threads";
    }
}

// Models with CONV, DEPTHWISE, pooling and elementwise ops of several shapes, 8- and 16-bit;
// U55/U65 and U85 elementwise are separate kernels.
INSTANTIATE_TEST_SUITE_P(Corpus, Threads,
                         ::testing::Values(ModelRun{"coral_tf2_mobilenet_v2_224_ptq"}, ModelRun{"person_detect"},
                                           ModelRun{"mlperftiny_kws_dscnn_int8"}, ModelRun{"mlperftiny_vww_96_int8"},
                                           ModelRun{"conv_k3s1_same_12x12x16to24_i16"},
                                           ModelRun{"dw_k3s1_same_12x12x16_i16"},
                                           ModelRun{"maxpool_k2s2_valid_16x16x16_i16"}, ModelRun{"add_8x8x32_i16"},
                                           ModelRun{"add_8x8x32_i16", "ethos-u85-256"},
                                           ModelRun{"mul_8x8x32_i16", "ethos-u85-256"},
                                           ModelRun{"maxpool_k2s2_valid_16x16x16_i16", "ethos-u85-256"}),
                         [](const ::testing::TestParamInfo<ModelRun>& info) {
                             std::string name = std::string(info.param.model) + "_" + info.param.config;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

}  // namespace
}  // namespace ethosu
