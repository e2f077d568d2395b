#pragma once
// NpuDevice::CompletedStream: what a stream observer (NpuDevice::set_stream_observer) is given of
// each command stream the NPU ran to its end. Apart from npu_device.h, whose users need not see
// the engine's decoded streams and timing results.

#include <cstdint>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/engine/timing/pmu.h"
#include "frontend/device/npu_device.h"

namespace ethosu {

// What `run` reports of a stream, and when the NPU started it.
struct NpuDevice::CompletedStream {
    uint64_t start = 0;  // NPU cycles since power-on when CMD started it
    uint64_t qbase = 0;  // QBASE and QSIZE at the start (a DMA copy: 0 and its stream's size)
    uint32_t qsize = 0;
    uint64_t hash = 0;  // FNV-1a of the command words: equal for identical streams
    DecodedStream stream;
    TimingResult timing;
    // The PMU's event types (PMEVTYPER) when it started, the counts the stream added to them and
    // to the cycle counter, and whether PMCR.cnt_en let them count.
    std::vector<uint32_t> pmu_events;
    PmuReading pmu;
    bool pmu_counting = false;
};

}  // namespace ethosu
