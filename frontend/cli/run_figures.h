#pragma once
// What `run`, `check` and `baseline` share: the --input files read as a run takes them, and a
// run's timing figures in the JSON layout `run --json` prints (and manifests hold as baselines).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "frontend/runner/run_model.h"
#include "frontend/loaders/model.h"

namespace ethosu {

// The input files in the model's input order, raw (each read up to the size of its tensor, a
// larger one refused by name) or .npy of the tensor's type and shape (tensor_files.h); files past
// the model's inputs are left for run_model to refuse.
std::vector<std::vector<uint8_t>> read_input_files(const LoadedModel& model, const std::vector<std::string>& files);

// {NAME: {"read_bytes", "write_bytes"}} for each memory with traffic.
nlohmann::ordered_json memories_json(const MemoryTraffic& traffic);
// {"memories": memories_json, "axi": [{"port": "AXI0", "memory", "read_beats", "write_beats",
//  "read_transactions", "write_transactions"}, AXI1]}; beats: the run's (TimingTotals::beats).
nlohmann::ordered_json traffic_json(const MemorySystem& memory, const MemoryTraffic& traffic, const PortBeats& beats);

// The run's totals over its streams: system config, memory mode, clock, cycles {total,
// npu_active, idle}, inference seconds, MACs and traffic_json.
nlohmann::ordered_json timing_json(const RunResult& result);
nlohmann::ordered_json timing_json(const MemorySystem& memory, std::span<const TimingResult> streams);

// One row per op of a timed stream, as `run --json` lists them: offset, kind, start and end
// cycle in the stream, a kernel op's compute cycles and MACs, the bytes each memory moved.
nlohmann::ordered_json ops_json(const DecodedStream& stream, const TimingResult& timing);

}  // namespace ethosu
