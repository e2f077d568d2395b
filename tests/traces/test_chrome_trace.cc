// The Chrome/Perfetto trace: the Trace Event Format rules a viewer relies on, and that the
// trace accounts for the run's cycles, ops and bytes.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "emulator/isa/error.h"
#include "tests/traces/trace_test_util.h"
#include "traces/chrome_trace.h"

namespace ethosu {
namespace {

using json = nlohmann::ordered_json;
using test::TimedRun;

// Two microsecond values computed from the same cycle count may differ in the last bits.
bool same_time(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}); }

// Checks the Trace Event Format (JSON object form) as Perfetto and chrome://tracing read it;
// returns the first rule broken, or an empty string.
std::string trace_format_violation(const json& trace) {
    if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
        return "no traceEvents array";
    if (!trace.contains("displayTimeUnit") || (trace["displayTimeUnit"] != "ns" && trace["displayTimeUnit"] != "ms"))
        return "displayTimeUnit is not \"ns\" or \"ms\"";
    if (!trace.contains("metadata") || !trace["metadata"].is_object()) return "no metadata object";
    const auto& version = trace["metadata"]["ethosu_emu_trace_version"];
    if (!version.is_number_integer()) return "metadata has no integer ethosu_emu_trace_version";

    std::set<int64_t> named_threads;
    std::map<int64_t, std::pair<double, double>> last_slice;  // tid -> (ts, end) of the previous X event
    std::map<std::string, double> last_counter;               // counter name -> ts
    for (size_t i = 0; i < trace["traceEvents"].size(); ++i) {
        const json& e = trace["traceEvents"][i];
        const std::string where = "event " + std::to_string(i) + ": ";
        if (!e.is_object()) return where + "not an object";
        if (!e.contains("name") || !e["name"].is_string()) return where + "no name";
        if (!e.contains("ph") || !e["ph"].is_string()) return where + "no ph";
        if (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0) return where + "no ts >= 0";
        if (!e.contains("pid") || !e["pid"].is_number_integer()) return where + "no integer pid";
        if (!e.contains("tid") || !e["tid"].is_number_integer()) return where + "no integer tid";
        if (e.contains("args") && !e["args"].is_object()) return where + "args is not an object";
        const std::string ph = e["ph"];
        const double ts = e["ts"];
        const int64_t tid = e["tid"];
        if (ph == "M") {
            static const std::set<std::string> kinds = {"process_name", "process_sort_index", "thread_name",
                                                        "thread_sort_index"};
            if (!kinds.contains(e["name"].get<std::string>())) return where + "unknown metadata event";
            if (!e.contains("args") || e["args"].empty()) return where + "metadata event without args";
            if (e["name"] == "thread_name") named_threads.insert(tid);
        } else if (ph == "X") {
            if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) return where + "no dur >= 0";
            const double end = ts + e["dur"].get<double>();
            // Complete events on one thread must not overlap partially; ours never nest either.
            if (auto it = last_slice.find(tid); it != last_slice.end()) {
                if (ts < it->second.first) return where + "ts goes back on its track";
                if (ts < it->second.second && !same_time(ts, it->second.second))
                    return where + "overlaps the previous event on its track";
            }
            last_slice[tid] = {ts, end};
        } else if (ph == "C") {
            if (!e.contains("args") || !e["args"].is_object() || e["args"].empty()) return where + "counter without args";
            for (const auto& [key, value] : e["args"].items()) {
                if (!value.is_number() || !std::isfinite(value.get<double>())) return where + "counter " + key + " not numeric";
            }
            const std::string name = e["name"];
            if (auto it = last_counter.find(name); it != last_counter.end() && ts <= it->second)
                return where + "counter ts not increasing";
            last_counter[name] = ts;
        } else {
            return where + "phase " + ph + " is not one this trace writes";
        }
    }
    for (const auto& [tid, slice] : last_slice) {
        if (!named_threads.contains(tid)) return "track " + std::to_string(tid) + " has no thread_name";
    }
    return {};
}

std::vector<json> events_of(const json& trace, const std::string& category) {
    std::vector<json> out;
    for (const auto& e : trace["traceEvents"]) {
        if (e.value("cat", "") == category) out.push_back(e);
    }
    return out;
}

// The rules every trace keeps, on any run.
void check_trace(const TimedRun& run) {
    const TracedRun traced = run.traced();
    const json trace = chrome_trace(traced);
    ASSERT_EQ(trace_format_violation(trace), "");
    // Round trip through text, as a viewer reads it.
    ASSERT_EQ(json::parse(trace.dump()), trace);

    const double clock = run.result.memory.system.core_clock;
    auto us = [&](int64_t cycles) { return double(cycles) * 1e6 / clock; };
    const auto& meta = trace["metadata"];
    EXPECT_EQ(meta["ethosu_emu_trace_version"], kChromeTraceVersion);
    EXPECT_EQ(meta["npu"], std::string(run.model->config.name));
    EXPECT_EQ(meta["system_config"], run.result.memory.system.name);
    EXPECT_EQ(meta["memory_mode"], run.result.memory.mode.name);
    EXPECT_EQ(meta["core_clock_hz"], clock);
    EXPECT_EQ(meta["total_cycles"], traced.total_cycles());

    // The last event ends where the run ends.
    double last_end = 0;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "X") last_end = std::max(last_end, e["ts"].get<double>() + e["dur"].get<double>());
        if (e["ph"] == "C") last_end = std::max(last_end, e["ts"].get<double>());
    }
    EXPECT_TRUE(same_time(last_end, us(traced.total_cycles()))) << last_end << " vs " << us(traced.total_cycles());

    // One kernel event per kernel op with the timing model's duration, and one command event
    // per op, back to back from the start of the run to the last op's hand-over.
    int64_t kernel_ops = 0, kernel_cycles = 0, ops = 0, dmas = 0;
    for (const auto& t : run.result.timing) {
        ops += static_cast<int64_t>(t.ops.size());
        for (const auto& op : t.ops) {
            if (op.unit == Unit::Kernel) {
                ++kernel_ops;
                kernel_cycles += op.end - op.start;
            }
            dmas += op.unit == Unit::Dma;
        }
    }
    const auto kernels = events_of(trace, "kernel");
    ASSERT_EQ(static_cast<int64_t>(kernels.size()), kernel_ops);
    double kernel_us = 0;
    int64_t kernel_cycles_in_args = 0;
    for (const auto& e : kernels) {
        kernel_us += e["dur"].get<double>();
        kernel_cycles_in_args += e["args"]["cycles"].get<int64_t>();
        EXPECT_TRUE(e["args"].contains("offset") && e["args"].contains("macs") && e["args"].contains("read_bytes"));
    }
    EXPECT_EQ(kernel_cycles_in_args, kernel_cycles);
    EXPECT_TRUE(same_time(kernel_us, us(kernel_cycles))) << kernel_us << " vs " << us(kernel_cycles);
    EXPECT_EQ(static_cast<int64_t>(events_of(trace, "dma").size()), dmas);

    const auto commands = events_of(trace, "command");
    ASSERT_EQ(static_cast<int64_t>(commands.size()), ops);
    double command_end = 0;
    for (const auto& e : commands) {
        EXPECT_TRUE(same_time(e["ts"].get<double>(), command_end)) << e.dump();
        command_end = e["ts"].get<double>() + e["dur"].get<double>();
    }

    // Each bandwidth counter, integrated over time, gives back the bytes moved on its memory.
    std::map<std::string, std::vector<json>> counters;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "C") counters[e["name"]].push_back(e);
    }
    MemoryTraffic total;
    for (const auto& t : run.result.timing) {
        for (int m = 0; m < kMemoryKinds; ++m) {
            total.read[m] += t.totals.traffic.read[m];
            total.write[m] += t.totals.traffic.write[m];
        }
    }
    size_t memories_with_traffic = 0;
    for (int m = 0; m < kMemoryKinds; ++m) {
        if (!total.read[m] && !total.write[m]) continue;
        ++memories_with_traffic;
        const std::string memory(memory_kind_name(static_cast<MemoryKind>(m)));
        const auto named = std::find_if(counters.begin(), counters.end(),
                                        [&](const auto& c) { return c.first.find(" " + memory + " ") != std::string::npos; });
        ASSERT_NE(named, counters.end()) << "no counter for " << memory;
        double read = 0, write = 0;
        const auto& steps = named->second;
        for (size_t i = 0; i + 1 < steps.size(); ++i) {
            const double cycles = (steps[i + 1]["ts"].get<double>() - steps[i]["ts"].get<double>()) * clock / 1e6;
            read += steps[i]["args"]["read"].get<double>() * cycles;
            write += steps[i]["args"]["write"].get<double>() * cycles;
        }
        EXPECT_NEAR(read, double(total.read[m]), 1e-6 * double(total.read[m]) + 1e-6) << memory;
        EXPECT_NEAR(write, double(total.write[m]), 1e-6 * double(total.write[m]) + 1e-6) << memory;
        EXPECT_EQ(steps.back()["args"]["read"], 0.0) << "the counter returns to zero after the last op";
    }
    EXPECT_EQ(counters.size(), memories_with_traffic);
}

TEST(ChromeTrace, ExampleFollowsTheFormatAndAccountsForTheRun) {
    const TimedRun run = test::run_example();
    check_trace(run);
    const json trace = chrome_trace(run.traced());
    EXPECT_EQ(trace["metadata"]["debug_db"], nullptr);
    // Without a debug database, ops are named by kind and offset.
    const auto kernels = events_of(trace, "kernel");
    ASSERT_EQ(kernels.size(), 2u);
    EXPECT_EQ(kernels[0]["name"], "pool.average @0x000100");
    EXPECT_EQ(kernels[1]["name"], "elementwise.add @0x000154");
}

// Every corpus compilation `run` takes (one NPU graph, no CPU operators) on the U55/U65
// configurations, with Vela's names from its debug database.
TEST(ChromeTrace, CorpusModelsFollowTheFormatAndCarryVelaNames) {
    if (!test::have_vectors()) GTEST_SKIP() << "no Vela corpus at " << test::vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    const int compilations = test::for_each_runnable_compilation([](const std::string&, const std::string&,
                                                                    const TimedRun& run) {
        check_trace(run);
        const json trace = chrome_trace(run.traced());
        EXPECT_EQ(trace["metadata"]["debug_db"], run.debug_db->source());
        std::set<std::string> layers;
        for (const auto& vela : run.debug_db->ops()) layers.insert(vela.original_operator + " " + vela.short_name());
        for (const auto& e : events_of(trace, "kernel")) {
            EXPECT_TRUE(layers.contains(e["name"].get<std::string>())) << e["name"];
            EXPECT_TRUE(e["args"].contains("vela_id"));
        }
    });
    EXPECT_GT(compilations, 150);
}

TEST(ChromeTrace, UnwritableFileIsAnErrorNamingIt) {
    const TimedRun run = test::run_example();
    const std::string path = (std::filesystem::temp_directory_path() / "no such dir" / "trace.json").string();
    try {
        write_chrome_trace(run.traced(), path);
        FAIL() << "expected ethosu::Error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, path);
    }
}

}  // namespace
}  // namespace ethosu
