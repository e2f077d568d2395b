#pragma once
// Runs a loaded model's NPU work: maps its regions, places the inputs, runs every
// command stream, times it, and returns the outputs and the timeline.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emulator/engine/pipeline.h"
#include "frontend/loaders/model.h"

namespace ethosu {

struct RunOptions {
    SystemSelection system{};
    // A memory system built in code (a variant of one, as sweep derives them); set, it replaces
    // `system`'s choice.
    std::optional<MemorySystem> memory{};
    // Per NPU stream: execute or timing only (no data is computed and no outputs are produced),
    // timed or not (RunResult::timing stays empty), decoding, work limits, a weight cache kept
    // across runs.
    PipelineOptions pipeline{};
};

// A graph operator run on the host (frontend/graph): no cycle model prices it.
struct CpuOperatorRun {
    size_t operator_index = 0;  // in subgraph 0
    std::string name;           // TFLite builtin name, e.g. "QUANTIZE"
    uint64_t elements = 0;      // of its output
};

struct RunResult {
    std::vector<std::vector<uint8_t>> outputs;  // raw bytes, model output order (empty when timing only)
    std::vector<DecodedStream> streams;         // what was executed (branches followed)
    MemorySystem memory;                        // the system the streams were timed on
    std::vector<TimingResult> timing;           // one per stream
    std::vector<size_t> stream_operators;       // per stream: its ethos-u operator's index in subgraph 0
    std::vector<CpuOperatorRun> cpu_operators;  // in graph order (graph runs only)
};

// Why a host buffer for tensor `info` (an input, output or intermediate the run copies or
// computes on the host) is refused: above limits.max_allocation_bytes. Empty when it is within.
std::string host_allocation_refusal(const TensorInfo& info, const WorkLimits& limits);

// The memory system runs of `model` use: each of the user's choices in `user`; where it names
// none, what the model records it was compiled for (CompiledFor), when that names a section this
// NPU may take (Vela's built-in ones and those of the user's --config files, as
// make_memory_system accepts them); else Vela's default for the NPU.
struct SystemChoice {
    SystemSelection selection;
    std::vector<std::string> followed;      // "--system-config X" / "--memory-mode Y" taken from the file
    std::vector<std::string> not_followed;  // a sentence for each recorded choice the run cannot take
};
SystemChoice choose_system(const LoadedModel& model, const SystemSelection& user);
// The memory system of model.config under choose_system.
MemorySystem model_memory_system(const LoadedModel& model, const SystemSelection& system);
// options.memory, else model_memory_system of options.system.
MemorySystem run_memory_system(const LoadedModel& model, const RunOptions& options);

// inputs: raw bytes per model input (empty vector = zeros), each freed once placed in the
// model's memory so that it is not held through the run. Throws ethosu::Error.
RunResult run_model(const LoadedModel& model, std::vector<std::vector<uint8_t>> inputs, const RunOptions& options = {});

// One NPU invocation of `model` on memory of its own (its regions mapped afresh, zeroed
// scratch): inputs[i] (empty = left as is) holds input_tensors[i]; returns the bytes of
// output_tensors (none when timing only). Appends its stream and timing to `result`, whose
// memory system it runs on.
std::vector<std::vector<uint8_t>> run_invocation(const LoadedModel& model, const NpuInvocation& inv,
                                                 const std::vector<TensorInfo>& input_tensors,
                                                 std::vector<std::vector<uint8_t>> inputs,
                                                 const std::vector<TensorInfo>& output_tensors,
                                                 const RunOptions& options, RunResult& result);

// A model set up once for many inferences (a benchmark loop, a driver's network): its regions
// mapped and its arena allocated once, its weights decoded once, the executor's scratch kept.
// Every inference starts from the model's initial memory on a reset NPU, so it gives what a
// fresh run_model gives. A stream without branches takes the same path every time: later
// inferences replay the ops the first one decoded and keep its timing, and allocate nothing.
class ModelSession {
public:
    // model must outlive the session. Throws ethosu::Error as run_model does.
    explicit ModelSession(const LoadedModel& model, const SystemSelection& system = {}, bool timing = true);
    ~ModelSession();
    ModelSession(const ModelSession&) = delete;
    ModelSession& operator=(const ModelSession&) = delete;

    // One inference. inputs: raw bytes per model input (empty vector = zeros).
    void run(const std::vector<std::vector<uint8_t>>& inputs);

    // Of the last inference: the outputs (model output order), the ops executed, their timing
    // (when the session times).
    const std::vector<std::vector<uint8_t>>& outputs() const { return outputs_; }
    const DecodedStream& stream() const { return stream_->last().stream; }
    const std::optional<TimingResult>& timing() const { return stream_->last().timing; }
    const MemorySystem& memory() const { return memory_; }

private:
    const LoadedModel& model_;
    const NpuInvocation& invocation_;
    MemorySystem memory_;
    TimedMemory timed_;
    MemoryMap map_;
    AddressSpace space_;
    std::vector<std::pair<std::span<uint8_t>, std::span<const uint8_t>>> writable_;  // region, initial bytes
    std::unique_ptr<StreamSession> stream_;
    std::vector<std::vector<uint8_t>> outputs_;
};

}  // namespace ethosu
