// A firmware run's traces (what `ethosu-emu system` writes): the example's stream run three times
// at cycles a firmware chose, with idle time between. The trace places every op of stream k at
// its start plus the op's cycle in the stream, gives each stream a slice on a track of its own,
// keeps slices on every track nested or disjoint and the bandwidth at zero between streams; the
// report lists each inference, and says so when there is none.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "tests/traces/trace_test_util.h"
#include "traces/chrome_trace.h"
#include "traces/html_report.h"

namespace ethosu {
namespace {

using json = nlohmann::ordered_json;

struct FirmwareRun {
    test::TimedRun example = test::run_example();
    std::vector<DecodedStream> streams;
    std::vector<TimingResult> timing;
    StreamTimeline timeline;

    FirmwareRun() {
        const int64_t cycles = example.result.timing.at(0).totals.cycles;
        // Idle before the first and between the others: the CPU's work.
        for (const int64_t start : {int64_t{1000}, 1000 + cycles + 250, 1000 + 3 * cycles}) {
            streams.push_back(example.result.streams.at(0));
            timing.push_back(example.result.timing.at(0));
            timeline.starts.push_back(start);
            timeline.labels.push_back("inference " + std::to_string(timeline.labels.size()));
        }
    }
    TracedRun traced() const {
        return {example.model->path, example.model->config, example.result.memory, streams, timing, nullptr, nullptr,
                &timeline};
    }
    double us(int64_t cycles) const { return double(cycles) * 1e6 / example.result.memory.system.core_clock; }
};

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(a)); }

TEST(FirmwareRun, TheTracePlacesEachStreamAtItsStart) {
    const FirmwareRun run;
    const json trace = chrome_trace(run.traced());
    std::vector<json> streams, kernels;
    std::map<int64_t, std::vector<std::pair<double, double>>> tracks;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const double ts = e["ts"].get<double>();
        tracks[e["tid"].get<int64_t>()].push_back({ts, ts + e["dur"].get<double>()});
        if (e["cat"] == "stream") streams.push_back(e);
        if (e["cat"] == "kernel") kernels.push_back(e);
    }
    ASSERT_EQ(streams.size(), 3u);
    const auto& ops = run.timing[0].ops;
    std::vector<const OpTiming*> kernel_ops;
    for (const auto& op : ops)
        if (op.unit == Unit::Kernel) kernel_ops.push_back(&op);
    ASSERT_EQ(kernels.size(), 3 * kernel_ops.size());
    for (size_t s = 0; s < 3; ++s) {
        EXPECT_EQ(streams[s]["name"], run.timeline.labels[s]);
        EXPECT_TRUE(near(streams[s]["ts"].get<double>(), run.us(run.timeline.starts[s])));
        EXPECT_TRUE(near(streams[s]["dur"].get<double>(), run.us(run.timing[s].totals.cycles)));
        EXPECT_EQ(streams[s]["args"]["start_cycle"], run.timeline.starts[s]);
        for (size_t k = 0; k < kernel_ops.size(); ++k) {
            const json& e = kernels[s * kernel_ops.size() + k];
            EXPECT_TRUE(near(e["ts"].get<double>(), run.us(run.timeline.starts[s] + kernel_ops[k]->start))) << e.dump();
        }
    }
    // Slices on one track nest or are disjoint.
    for (auto& [tid, slices] : tracks) {
        // By start, the longer first at one start: an enclosing slice before those it holds.
        std::sort(slices.begin(), slices.end(),
                  [](auto& a, auto& b) { return a.first < b.first || (a.first == b.first && a.second > b.second); });
        std::vector<double> open;
        for (const auto& [begin, end] : slices) {
            while (!open.empty() && begin >= open.back() - 1e-9) open.pop_back();
            EXPECT_TRUE(open.empty() || end <= open.back() + 1e-9) << "track " << tid << " at " << begin;
            open.push_back(end);
        }
    }
    // Between the streams nothing moves.
    const double first_end = run.us(run.timeline.starts[0] + run.timing[0].totals.cycles);
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "C") continue;
        const double ts = e["ts"].get<double>();
        if (ts >= first_end - 1e-9 && ts < run.us(run.timeline.starts[1]) - 1e-9) {
            EXPECT_EQ(e["args"]["read"], 0.0) << e.dump();
            EXPECT_EQ(e["args"]["write"], 0.0) << e.dump();
        }
    }
}

TEST(FirmwareRun, TheReportListsEveryInference) {
    const FirmwareRun run;
    // The report shows the distinct stream once, after a row per inference.
    const std::vector<DecodedStream> one_stream = {run.streams[0]};
    const std::vector<TimingResult> one_timing = {run.timing[0]};
    const TracedRun distinct{run.example.model->path, run.example.model->config, run.example.result.memory, one_stream,
                             one_timing};
    std::vector<InferenceRow> rows;
    for (size_t s = 0; s < 3; ++s)
        rows.push_back({.start = run.timeline.starts[s], .cycles = run.timing[s].totals.cycles,
                        .macs = run.timing[s].totals.macs, .stream = 0, .label = "stream 0123456789abcdef"});
    const std::string html = html_report(distinct, &rows);
    size_t listed = 0;
    for (size_t at = html.find("<td class=\"t\">stream 0123456789abcdef</td>"); at != std::string::npos;
         at = html.find("<td class=\"t\">stream 0123456789abcdef</td>", at + 1))
        ++listed;
    EXPECT_EQ(listed, 3u);
    EXPECT_NE(html.find("<h2>Inferences</h2>"), std::string::npos);
    EXPECT_NE(html.find("<h2>The command stream, one inference</h2>"), std::string::npos);
    EXPECT_NE(html.find("<h2>Timeline</h2>"), std::string::npos);
    // 250 idle cycles before the second inference.
    EXPECT_NE(html.find("<td data-v=\"250\">250</td>"), std::string::npos);

    const std::vector<InferenceRow> none;
    const TracedRun empty{run.example.model->path, run.example.model->config, run.example.result.memory, {}, {}};
    const std::string nothing = html_report(empty, &none);
    EXPECT_NE(nothing.find("ran no command stream"), std::string::npos);
    EXPECT_EQ(nothing.find("<h2>Timeline</h2>"), std::string::npos);
    // A model's report has no inference table.
    EXPECT_EQ(html_report(distinct).find("<h2>Inferences</h2>"), std::string::npos);
}

}  // namespace
}  // namespace ethosu
