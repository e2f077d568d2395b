#pragma once
// The run as one self-contained HTML page to look at offline: a timeline with the NPU's units and
// DMA as lanes and the bandwidth of each memory's AXI port, the per-layer table beside Vela's
// figures (when the run has Vela's per-layer report or debug database), MAC utilisation and
// traffic per layer. Drawn as inline SVG from the same data as the Chrome trace and the per-layer
// CSV; no script, style or font is fetched. See traces/README.md.

#include <string>
#include <vector>

#include "traces/traced_run.h"

namespace ethosu {

// One inference of a firmware run (a command stream the firmware started): when, for how long,
// and which of the report's streams it ran (a firmware that runs one network N times is reported
// once, with N rows here).
struct InferenceRow {
    int64_t start = 0;  // NPU cycles since power-on
    int64_t cycles = 0;
    int64_t macs = 0;
    size_t stream = 0;  // index into the report's TracedRun::streams
    std::string label;
};

// In <meta name="generator">, "ethosu-emu <version>; report format <n>"; raised whenever a
// section or table column changes meaning or goes away.
inline constexpr int kHtmlReportVersion = 1;

// With inferences, a firmware run's report: a table of them first (or that there were none), then
// the sections of the distinct streams they ran (run), back to back.
std::string html_report(const TracedRun& run, const std::vector<InferenceRow>* inferences = nullptr);

// Writes html_report(run, inferences) to path; throws ethosu::Error naming the file when it cannot.
void write_html_report(const TracedRun& run, const std::string& path,
                       const std::vector<InferenceRow>* inferences = nullptr);

}  // namespace ethosu
