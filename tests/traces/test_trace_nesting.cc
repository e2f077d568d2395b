// Every corpus model's trace on every configuration keeps the rule Chrome and Perfetto draw
// slices by: on one track, two slices either nest or are disjoint.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <future>
#include <thread>
#include <map>
#include <vector>

#include "frontend/graph/graph_runner.h"
#include "tests/config_test_name.h"
#include "tests/traces/trace_test_util.h"
#include "traces/chrome_trace.h"

namespace ethosu {
namespace {

using json = nlohmann::ordered_json;

// The first pair of slices on a track that overlap without one holding the other; empty if none.
std::string nesting_violation(const json& trace) {
    struct Slice {
        double start, end;
        std::string name;
    };
    std::map<int64_t, std::vector<Slice>> tracks;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const double ts = e["ts"];
        tracks[e["tid"].get<int64_t>()].push_back({ts, ts + e["dur"].get<double>(), e["name"]});
    }
    // Times come from cycles through a division: a slice ending where the next starts may be
    // off in the last bits.
    auto before = [](double a, double b) { return a < b - 1e-9 * std::max(1.0, std::abs(b)); };
    for (auto& [tid, slices] : tracks) {
        std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
            return a.start != b.start ? a.start < b.start : a.end > b.end;
        });
        std::vector<const Slice*> open;
        for (const Slice& s : slices) {
            while (!open.empty() && !before(s.start, open.back()->end)) open.pop_back();
            if (!open.empty() && before(open.back()->end, s.end))
                return "track " + std::to_string(tid) + ": " + open.back()->name + " [" +
                       std::to_string(open.back()->start) + ", " + std::to_string(open.back()->end) + ") and " +
                       s.name + " [" + std::to_string(s.start) + ", " + std::to_string(s.end) + ")";
            open.push_back(&s);
        }
    }
    return {};
}

TEST(TraceNesting, SlicesOverlappingWithoutNestingAreFound) {
    const json trace = {{"traceEvents",
                         {{{"name", "a"}, {"ph", "X"}, {"ts", 0.0}, {"dur", 2.0}, {"tid", 2}},
                          {{"name", "b"}, {"ph", "X"}, {"ts", 1.0}, {"dur", 2.0}, {"tid", 2}}}}};
    EXPECT_NE(nesting_violation(trace), "");
    const json nested = {{"traceEvents",
                          {{{"name", "a"}, {"ph", "X"}, {"ts", 0.0}, {"dur", 3.0}, {"tid", 2}},
                           {{"name", "b"}, {"ph", "X"}, {"ts", 1.0}, {"dur", 2.0}, {"tid", 2}},
                           {{"name", "c"}, {"ph", "X"}, {"ts", 3.0}, {"dur", 1.0}, {"tid", 2}},
                           {{"name", "d"}, {"ph", "X"}, {"ts", 1.0}, {"dur", 3.0}, {"tid", 3}}}}};
    EXPECT_EQ(nesting_violation(nested), "");
}

class CorpusTraceNesting : public testing::TestWithParam<std::string> {};

// Timing-only runs, the models of one configuration spread over the machine's cores.
TEST_P(CorpusTraceNesting, EveryModelsTraceNests) {
    if (!test::have_vectors()) GTEST_SKIP() << "no Vela corpus at " << test::vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    std::vector<std::filesystem::path> models;
    for (const auto& dir : std::filesystem::directory_iterator(test::vectors_dir())) {
        // neg_* are Vela's refusals and crashes, kept as a record: no NPU run to trace.
        const auto model = dir.path() / GetParam() / "model_vela.tflite";
        if (std::filesystem::exists(model) && !dir.path().filename().string().starts_with("neg_"))
            models.push_back(model);
    }
    std::sort(models.begin(), models.end());
    auto check = [](const std::filesystem::path& path) -> std::string {
        const auto model = load_model(path.string(), {});
        const RunResult result = run_whole_model(*model, {}, {.pipeline = {.execute = false}});
        const TracedRun traced{model->path, model->config, result.memory, result.streams, result.timing};
        const std::string violation = nesting_violation(chrome_trace(traced));
        return violation.empty() ? "" : path.string() + ": " + violation;
    };
    const size_t workers = std::max(1u, std::thread::hardware_concurrency());
    for (size_t first = 0; first < models.size(); first += workers) {
        std::vector<std::future<std::string>> running;
        for (size_t i = first; i < std::min(models.size(), first + workers); ++i)
            running.push_back(std::async(std::launch::async, check, models[i]));
        for (auto& r : running) EXPECT_EQ(r.get(), "");
    }
    EXPECT_GT(models.size(), 50u);
}

INSTANTIATE_TEST_SUITE_P(Configurations, CorpusTraceNesting,
                         testing::Values("ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u85-256",
                                         "ethos-u85-1024"),
                         ConfigTestName());

}  // namespace
}  // namespace ethosu
