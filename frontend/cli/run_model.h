#pragma once
// Runs a loaded model's NPU work: maps its regions, places the inputs, executes every
// command stream, and returns the outputs.

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/isa/decoder.h"
#include "frontend/loaders/model.h"

namespace ethosu {

struct RunResult {
    std::vector<std::vector<uint8_t>> outputs;  // raw bytes, model output order
    std::vector<DecodedStream> streams;         // what was executed
};

// inputs: raw bytes per model input (empty vector = zeros). Throws ethosu::Error.
RunResult run_model(const LoadedModel& model, const std::vector<std::vector<uint8_t>>& inputs);

}  // namespace ethosu
