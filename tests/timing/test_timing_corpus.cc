// The timing model on the corpus: total cycles against Vela 5.1's own estimate (index.csv,
// from each model's summary) for every fully-NPU model, and timing-only runs equal full runs.
// Vela's estimator is not ground truth; the bar is agreement within 25% for 90% of models per
// configuration; the test prints the outliers with their ratios.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "frontend/runner/run_model.h"
#include "tests/config_test_name.h"
#include "tests/corpus_index.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

class TimingCorpus : public ::testing::TestWithParam<const char*> {};

TEST_P(TimingCorpus, TotalCyclesAgreeWithVelasEstimate) {
    const fs::path vectors = ETHOSU_VECTORS_DIR;
    if (!fs::exists(vectors / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors;
    const std::string config = GetParam();
    int within = 0, total = 0;
    std::string outliers;
    for (const auto& row : fully_npu_entries(vectors, config)) {
        const auto model = load_model((vectors / row.model / config / "model_vela.tflite").string(), {});
        const RunResult r = run_model(*model, {}, {.pipeline = {.execute = false}});
        const double ratio = double(r.timing.at(0).totals.cycles) / double(row.vela_total_cycles);
        ++total;
        if (std::abs(ratio - 1.0) <= 0.25) ++within;
        else outliers += fmt::format(" {} {:.2f};", row.model, ratio);
    }
    ASSERT_GT(total, 0);
    std::cout << "[ timing ] " << config << ": " << within << " of " << total
              << " models within 25% of Vela's estimate; outliers:" << outliers << "\n";
    EXPECT_GE(within, 0.9 * total) << "outliers:" << outliers;
}

INSTANTIATE_TEST_SUITE_P(U55U65, TimingCorpus, ::testing::Values("ethos-u55-128", "ethos-u55-256", "ethos-u65-256"),
                         ConfigTestName{});
INSTANTIATE_TEST_SUITE_P(U85, TimingCorpus, ::testing::Values("ethos-u85-256", "ethos-u85-1024"), ConfigTestName{});

// Timing reads decoded ops only: a full bit-exact run gives the same timeline as timing only.
TEST(TimingCorpus, TimingOnlyEqualsFullRun) {
    const fs::path vectors = ETHOSU_VECTORS_DIR;
    if (!fs::exists(vectors / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors;
    for (const char* name : {"person_detect", "mlperftiny_kws_dscnn_int8", "conv_k3s2_same_15x23x24to48"}) {
        const auto model = load_model((vectors / name / "ethos-u55-128" / "model_vela.tflite").string(), {});
        const RunResult full = run_model(*model, {});
        const RunResult timing_only = run_model(*model, {}, {.pipeline = {.execute = false}});
        ASSERT_FALSE(full.outputs.empty());
        EXPECT_TRUE(timing_only.outputs.empty());
        const auto& a = full.timing.at(0);
        const auto& b = timing_only.timing.at(0);
        EXPECT_EQ(a.totals.cycles, b.totals.cycles) << name;
        ASSERT_EQ(a.ops.size(), b.ops.size()) << name;
        for (size_t i = 0; i < a.ops.size(); ++i) EXPECT_EQ(a.ops[i].end, b.ops[i].end) << name << " op " << i;
    }
}

}  // namespace
}  // namespace ethosu
