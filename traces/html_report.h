#pragma once
// The run as one self-contained HTML page to look at offline: a timeline with the NPU's units and
// DMA as lanes and the bandwidth of each memory's AXI port, the per-layer table beside Vela's
// figures (when the run has Vela's per-layer report or debug database), MAC utilisation and
// traffic per layer. Drawn as inline SVG from the same data as the Chrome trace and the per-layer
// CSV; no script, style or font is fetched. See traces/README.md.

#include <string>

#include "traces/traced_run.h"

namespace ethosu {

// In <meta name="generator">, "ethosu-emu <version>; report format <n>"; raised whenever a
// section or table column changes meaning or goes away.
inline constexpr int kHtmlReportVersion = 1;

std::string html_report(const TracedRun& run);

// Writes html_report(run) to path; throws ethosu::Error naming the file when it cannot.
void write_html_report(const TracedRun& run, const std::string& path);

}  // namespace ethosu
