#pragma once
// run's --pmu: the events named on the command line, and the counts as run prints them (the ML
// embedded evaluation kit's profiler layout and the JSON block).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emulator/engine/timing/pmu.h"

namespace ethosu {

// --pmu NAME,...: the events' numbers (Arm's names, or the core driver's ETHOSU_PMU_*); throws
// ethosu::Error naming --pmu when more events than the configuration's counters are asked for,
// or an event it lacks or the model does not count (listing the modelled ones).
std::vector<uint32_t> pmu_events(const NpuConfig& npu, const std::vector<std::string>& names);

// The PMU counts as the ML embedded evaluation kit's profiler prints them after an inference (its
// ethosu_profiler.c names an event "NPU " and the event without "NPU_"; its Profiler.cc prints
// "NPU <name> <unit>: <count>", then the NPU's active, idle and total cycles), so that scripts
// parsing FVP logs read ours: (name, unit, count) per line.
struct ProfilerLine {
    std::string name, unit;
    uint64_t count;
};
std::vector<ProfilerLine> mlek_profile(const MemorySystem& memory, const std::vector<TimingResult>& timing,
                                       const NpuConfig& npu, const std::vector<uint32_t>& events,
                                       const PmuReading& reading);

// The profiler's lines under the keys MLEK's log parsers give them: npu_active_cycles,
// npu_axi0_rd_data_beat_received, ...
nlohmann::ordered_json profile_json(const std::vector<ProfilerLine>& lines);

// {"cycle_counter", "event_counters": [{"counter", "event", "id", "count"}]}.
nlohmann::ordered_json pmu_json(const NpuConfig& npu, const std::vector<uint32_t>& events, const PmuReading& reading);

}  // namespace ethosu
