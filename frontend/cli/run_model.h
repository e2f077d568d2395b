#pragma once
// Runs a loaded model's NPU work: maps its regions, places the inputs, executes every
// command stream, times it, and returns the outputs and the timeline.

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/engine/timing/timing_model.h"
#include "emulator/isa/decoder.h"
#include "frontend/loaders/model.h"

namespace ethosu {

struct RunOptions {
    bool execute = true;  // false: timing only; no data is computed and no outputs are produced
    SystemSelection system;
    bool timing = true;   // false: outputs only, no cycle estimate (RunResult::timing stays empty)
    // Decoded weights kept across runs of the same model (weights decode once per model);
    // nullptr: each run decodes them afresh.
    WeightCache* weight_cache = nullptr;
};

struct RunResult {
    std::vector<std::vector<uint8_t>> outputs;  // raw bytes, model output order (empty when timing only)
    std::vector<DecodedStream> streams;         // what was executed (branches followed)
    MemorySystem memory;                        // the system the streams were timed on
    std::vector<TimingResult> timing;           // one per stream
};

// inputs: raw bytes per model input (empty vector = zeros), each freed once placed in the
// model's memory so that it is not held through the run. Throws ethosu::Error.
RunResult run_model(const LoadedModel& model, std::vector<std::vector<uint8_t>> inputs, const RunOptions& options = {});

}  // namespace ethosu
