#include "frontend/cli/system_figures.h"

#include <fmt/format.h>

#include <iostream>
#include <map>

#include "frontend/cli/pmu_report.h"
#include "frontend/cli/run_figures.h"
#include "traces/chrome_trace.h"
#include "traces/html_report.h"
#include "traces/per_layer_csv.h"

namespace ethosu {

using json = nlohmann::ordered_json;

std::string stream_name(const NpuDevice::CompletedStream& stream) {
    return fmt::format("stream {:016x}", stream.hash);
}

json system_json(const std::string& firmware, const NpuConfig& npu, const MemorySystem& memory,
                 const std::vector<NpuDevice::CompletedStream>& streams, int exit_status,
                 const std::vector<uint32_t>& pmu_events) {
    std::vector<TimingResult> timing;
    for (const auto& s : streams) timing.push_back(s.timing);
    std::map<uint64_t, size_t> first_of;  // a stream's hash: the first inference that ran it
    json inferences = json::array();
    for (size_t i = 0; i < streams.size(); ++i) {
        const auto& s = streams[i];
        const size_t first = first_of.try_emplace(s.hash, i).first->second;
        json figures = timing_json(memory, std::span(&s.timing, 1));
        json record = {{"index", i},
                       {"start_cycle", s.start},
                       {"start_seconds", double(s.start) / memory.system.core_clock},
                       {"stream", {{"hash", fmt::format("{:016x}", s.hash)},
                                   {"qbase", s.qbase},
                                   {"qsize", s.qsize},
                                   {"first_inference", first}}}};
        for (const char* key : {"cycles", "inference_seconds", "macs", "traffic"}) record[key] = figures[key];
        json pmu = pmu_json(npu, s.pmu_events, s.pmu);
        pmu["counting"] = s.pmu_counting;
        record["pmu"] = pmu;
        if (!pmu_events.empty()) {
            const std::vector<TimingResult> one = {s.timing};
            const PmuReading reading = read_pmu(memory, one, pmu_events);
            json requested = pmu_json(npu, pmu_events, reading);
            requested["profile"] = profile_json(mlek_profile(memory, one, npu, pmu_events, reading));
            record["requested_pmu"] = requested;
        }
        record["ops"] = ops_json(s.stream, s.timing);
        inferences.push_back(std::move(record));
    }
    return {{"format", "ethosu-emu system"},
            {"format_version", kSystemJsonVersion},
            {"firmware", firmware},
            {"npu", npu.name},
            {"exit_status", exit_status},
            {"totals", timing_json(memory, timing)},
            {"inferences", inferences}};
}

void write_system_figures(const SystemFigures& files, const std::string& firmware, const NpuConfig& npu,
                          const MemorySystem& memory, const std::vector<NpuDevice::CompletedStream>& streams,
                          int exit_status) {
    if (!files.json_file.empty()) {
        const std::vector<uint32_t> events = pmu_events(npu, files.pmu);
        const std::string text = system_json(firmware, npu, memory, streams, exit_status, events).dump(2) + "\n";
        if (files.json_file == "-") std::cout << text << std::flush;
        else write_trace_file(files.json_file, text, "--json");
    }
    // The trace and the per-layer CSV: every stream, as `run` gives a model's several streams; the
    // trace at the cycles the firmware started them.
    std::vector<DecodedStream> decoded;
    std::vector<TimingResult> timing;
    StreamTimeline timeline;
    for (const auto& s : streams) {
        decoded.push_back(s.stream);
        timing.push_back(s.timing);
        timeline.starts.push_back(static_cast<int64_t>(s.start));
        timeline.labels.push_back(fmt::format("inference {}: {}", timeline.labels.size(), stream_name(s)));
    }
    const TracedRun whole{firmware, npu, memory, decoded, timing, nullptr, nullptr, &timeline};
    if (!files.trace_file.empty()) write_chrome_trace(whole, files.trace_file);
    if (!files.per_layer_file.empty()) write_per_layer_csv(whole, files.per_layer_file);
    if (files.report_file.empty()) return;
    // The report: a row per inference, then each distinct stream once.
    std::vector<DecodedStream> distinct_streams;
    std::vector<TimingResult> distinct_timing;
    std::map<uint64_t, size_t> index_of;
    std::vector<InferenceRow> rows;
    for (const auto& s : streams) {
        const auto [at, added] = index_of.try_emplace(s.hash, distinct_streams.size());
        if (added) {
            distinct_streams.push_back(s.stream);
            distinct_timing.push_back(s.timing);
        }
        rows.push_back({.start = static_cast<int64_t>(s.start), .cycles = s.timing.totals.cycles,
                        .macs = s.timing.totals.macs, .stream = at->second, .label = stream_name(s)});
    }
    const TracedRun distinct{firmware, npu, memory, distinct_streams, distinct_timing};
    write_html_report(distinct, files.report_file, &rows);
}

}  // namespace ethosu
