#pragma once
// The run as a Chrome / Perfetto Trace Event JSON file: one track per NPU unit with a complete
// event per op, and one bandwidth counter per memory. See traces/README.md for every field.

#include <nlohmann/json.hpp>
#include <string>

#include "traces/traced_run.h"

namespace ethosu {

// metadata.ethosu_emu_trace_version; raised whenever a field changes meaning or goes away.
inline constexpr int kChromeTraceVersion = 1;

nlohmann::ordered_json chrome_trace(const TracedRun& run);

// Writes chrome_trace(run) to path; throws ethosu::Error naming the file when it cannot.
void write_chrome_trace(const TracedRun& run, const std::string& path);

}  // namespace ethosu
