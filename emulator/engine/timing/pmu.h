#pragma once
// The performance monitor's event counts for a timed stream, as the PMU's event counters would
// hold them after the run. Events are the generation's pmu_event values (emulator/isa/desc);
// those the timing model gives a meaning to are counted, the others read zero (listed by
// pmu_event_modelled). Counting follows the PMU windows (NPU_OP_PMU_MASK).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/engine/timing/timing_model.h"

namespace ethosu {

// Event counters per generation, as many as the description's PMEVCNTR registers (4 on U55/U65,
// 8 on U85).
int pmu_event_counters(Generation g);

// The event's number by its name (e.g. "NPU_ACTIVE", or the core driver's "ETHOSU_PMU_NPU_ACTIVE");
// nullopt if this generation lacks it.
std::optional<uint32_t> pmu_event_id(Generation g, std::string_view name);
std::string_view pmu_event_name(Generation g, uint32_t event);  // empty if unknown
// Whether the model counts the event (else it reads zero).
bool pmu_event_modelled(Generation g, uint32_t event);
// Every event the model counts on this generation, by number.
std::vector<uint32_t> pmu_modelled_events(Generation g);

struct PmuReading {
    uint64_t cycle_counter = 0;     // PMCCNTR: cycles in the PMU windows
    std::vector<uint64_t> counters;  // PMEVCNTR, one per requested event
};

// Counts the events over every stream of a run: inside the PMU windows when honour_pmu_mask
// (PMCR.mask_en), else over the whole run.
PmuReading read_pmu(const MemorySystem& memory, const std::vector<TimingResult>& streams,
                    const std::vector<uint32_t>& events, bool honour_pmu_mask = true);

}  // namespace ethosu
