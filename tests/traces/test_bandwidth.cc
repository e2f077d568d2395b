// The report's bandwidth lanes: never above what a memory's channel carries, every byte still drawn.

#include <gtest/gtest.h>

#include <filesystem>

#include "frontend/graph/graph_runner.h"
#include "tests/config_test_name.h"
#include "tests/traces/trace_test_util.h"
#include "traces/traced_run.h"

namespace ethosu {
namespace {

class CorpusBandwidth : public testing::TestWithParam<std::string> {};

TEST_P(CorpusBandwidth, LanesStayUnderThePeakAndKeepTheirBytes) {
    if (!test::have_vectors()) GTEST_SKIP() << "no Vela corpus at " << test::vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    int over_before = 0, models = 0;
    for (const auto& dir : std::filesystem::directory_iterator(test::vectors_dir())) {
        const auto path = dir.path() / GetParam() / "model_vela.tflite";
        if (!std::filesystem::exists(path) || dir.path().filename().string().starts_with("neg_")) continue;
        SCOPED_TRACE(path.string());
        ++models;
        const auto model = load_model(path.string(), {});
        const RunResult result = run_whole_model(*model, {}, {.pipeline = {.execute = false}});
        const TracedRun run{model->path, model->config, result.memory, result.streams, result.timing};
        const int64_t end = run.total_cycles();
        const Bandwidth even = bandwidth_over_time(run, run.stream_starts());
        const CappedBandwidth capped = capped_at_peak(even, run.memory, end);
        ASSERT_EQ(capped.bandwidth.steps.size(), even.steps.size());
        for (int m = 0; m < kMemoryKinds; ++m) {
            if (!even.used[m]) continue;
            const double capacity = run.memory.bytes_per_cycle(static_cast<MemoryKind>(m));
            double read = 0, read_even = 0, write = 0, write_even = 0;
            bool over = false;
            for (size_t k = 0; k < even.steps.size(); ++k) {
                const int64_t next = k + 1 < even.steps.size() ? even.steps[k + 1].cycle : end;
                const double cycles = double(std::max<int64_t>(next - even.steps[k].cycle, 0));
                const BandwidthStep& c = capped.bandwidth.steps[k];
                if (cycles > 0) {
                    EXPECT_LE(c.read[m], capacity * (1 + 1e-12)) << "at cycle " << c.cycle;
                    EXPECT_LE(c.write[m], capacity * (1 + 1e-12)) << "at cycle " << c.cycle;
                }
                over = over || std::max(even.steps[k].read[m], even.steps[k].write[m]) > capacity * 1.001;
                read += c.read[m] * cycles;
                write += c.write[m] * cycles;
                read_even += even.steps[k].read[m] * cycles;
                write_even += even.steps[k].write[m] * cycles;
            }
            over_before += over;
            EXPECT_NEAR(read + capped.read_past_end[m], read_even, 1e-6 * read_even + 1e-6);
            EXPECT_NEAR(write + capped.write_past_end[m], write_even, 1e-6 * write_even + 1e-6);
        }
    }
    EXPECT_GT(models, 50);
    RecordProperty("memories_over_the_peak_when_spread_evenly", over_before);
}

INSTANTIATE_TEST_SUITE_P(Configurations, CorpusBandwidth,
                         testing::Values("ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u85-256",
                                         "ethos-u85-1024"),
                         ConfigTestName());

}  // namespace
}  // namespace ethosu
