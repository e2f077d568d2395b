#pragma once
// `sweep`: one model timed over a grid of memory systems. Each axis is a vela.ini key (a
// System_Config key such as core_clock or OffChipFlash_read_latency, a Memory_Mode key such as
// const_mem_area) or a whole section (system_config, memory_mode), with values or, for number
// keys, factors on the base system's value. Every point is a copy of the base MemorySystem with
// the axes' keys set in axis order, timed as `run --timing-only` times it.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frontend/loaders/model.h"
#include "frontend/runner/run_model.h"

namespace ethosu {

struct SweepAxis {
    std::string key;                  // "system_config", "memory_mode" or a vela.ini key
    bool scale = false;               // values are factors on the base value
    std::vector<std::string> values;  // as given
};

// "KEY=V1,V2,...": option is "--vary" or "--scale". Throws UsageError naming the option and the
// key, and for an unknown key the valid ones.
SweepAxis parse_sweep_axis(const std::string& option, const std::string& text);

struct SweepPoint {
    std::vector<std::string> parameters;  // per axis: the value the point takes (scaled: the result)
    MemorySystem memory;
};

// The grid's points, the first axis outermost: the base system is `base` as a run chooses it
// (choose_system), the sections of a system_config / memory_mode axis replacing its own.
std::vector<SweepPoint> sweep_points(const LoadedModel& model, const SystemSelection& base,
                                     const std::vector<SweepAxis>& axes);

// Busy cycles of one resource over the run, from the timing model's per-op figures: the MAC and
// output pipeline's compute cycles, or a memory's access cycles (bytes over its bandwidth, or
// longer where its bursts or latency make them so).
struct SweepResource {
    std::string name;  // "compute" or "<Memory> (AXI<n>)"
    int64_t cycles = 0;
};

struct SweepResult {
    SweepPoint point;
    int64_t cycles = 0;
    int64_t npu_active = 0;
    double seconds = 0;
    std::vector<SweepResource> resources;  // compute, then each memory with traffic
    const SweepResource& busiest() const;
};

// Times every point (in parallel on `jobs` threads; results in point order).
std::vector<SweepResult> run_sweep(const LoadedModel& model, std::vector<SweepPoint> points, const WorkLimits& limits,
                                   int jobs);

// The outputs: the table `sweep` prints, CSV, JSON ("format": "ethosu-emu-sweep") and a
// self-contained SVG of cycles (inference time where an axis sets the clock) against the first axis,
// one line per value of the others; HTML
// wraps that SVG and the table in one page.
std::string sweep_table(const std::vector<SweepAxis>& axes, const std::vector<SweepResult>& results);
std::string sweep_csv(const std::vector<SweepAxis>& axes, const std::vector<SweepResult>& results);
nlohmann::ordered_json sweep_json(const LoadedModel& model, const std::vector<SweepAxis>& axes,
                                  const std::vector<SweepResult>& results);
std::string sweep_svg(const std::string& title, const std::vector<SweepAxis>& axes,
                      const std::vector<SweepResult>& results);
std::string sweep_html(const std::string& title, const std::vector<SweepAxis>& axes,
                       const std::vector<SweepResult>& results);

inline constexpr int kSweepFormatVersion = 1;

}  // namespace ethosu
