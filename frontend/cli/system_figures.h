#pragma once
// What `ethosu-emu system` reports of the NPU over a whole firmware run: every command stream the
// firmware ran to its end (NpuDevice::CompletedStream, in order), as `run` reports a model's
// streams: a trace of the firmware's timeline, the per-layer CSV, the HTML report (a table of the
// inferences, then each distinct stream once) and a versioned JSON document.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frontend/device/completed_stream.h"

namespace ethosu {

// "format_version" of the JSON document; raised whenever a field changes meaning or goes away.
inline constexpr int kSystemJsonVersion = 1;

// The files to write (an empty name writes nothing, "-" as the JSON file is stdout), and the PMU
// events the JSON counts for each inference besides the firmware's own counters (run's --pmu).
struct SystemFigures {
    std::string trace_file, per_layer_file, report_file, json_file;
    std::vector<std::string> pmu;

    bool any() const {
        return !trace_file.empty() || !per_layer_file.empty() || !report_file.empty() || !json_file.empty();
    }
};

// A stream's identity, for the JSON and the report: "stream 0123456789abcdef" (its hash).
std::string stream_name(const NpuDevice::CompletedStream& stream);

// The JSON document: {"format": "ethosu-emu system", "format_version", "firmware", "npu",
// "exit_status", "totals" (run --json's timing figures over every inference), "inferences": [{
// "index", "start_cycle", "start_seconds", "stream": {"hash", "qbase", "qsize", "first_inference"},
// the stream's timing figures (cycles, inference_seconds, macs, traffic), "pmu" (the firmware's
// counters: their events, the counts the stream gave them, "counting"), with pmu_events
// "requested_pmu" (run --json's "pmu" for the stream), "ops"}]}.
nlohmann::ordered_json system_json(const std::string& firmware, const NpuConfig& npu, const MemorySystem& memory,
                                   const std::vector<NpuDevice::CompletedStream>& streams, int exit_status,
                                   const std::vector<uint32_t>& pmu_events = {});

// Writes the files asked for; throws ethosu::Error naming a file it cannot write, or --pmu for an
// event the configuration does not count (pmu_events, which run_system asks before the firmware
// runs).
void write_system_figures(const SystemFigures& figures, const std::string& firmware, const NpuConfig& npu,
                          const MemorySystem& memory, const std::vector<NpuDevice::CompletedStream>& streams,
                          int exit_status);

}  // namespace ethosu
