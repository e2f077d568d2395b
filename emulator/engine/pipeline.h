#pragma once
// One run of a command stream, the way every front end makes it (the CLI and the Python module
// through frontend/runner, ModelSession and the emulated Linux device, the register front): its
// commands decoded and checked a straight-line block at a time as the command processor reaches
// them (follow_stream), executed on the NPU's memory (or, timing only, followed without data),
// then timed. Each stage has its own layer (isa: decode and branches; engine: execute;
// engine/timing: time); this is the one place that puts them in order. Traces are written from
// the result by traces/.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "emulator/engine/executor.h"
#include "emulator/engine/timing/timing_model.h"
#include "emulator/isa/decoder.h"
#include "emulator/memory/address_space.h"

namespace ethosu {

// The memory the timing model prices a run's traffic on: the system (bandwidths, AXI ports) and
// the memory behind each BASEP region (region_memories()). Both must outlive the run or session.
struct TimedMemory {
    const MemorySystem& system;
    std::array<MemoryKind, AddressSpace::kRegions> regions;
};

struct PipelineOptions {
    // false: timing only. No data: the stream is followed through its unconditional branches
    // (an RF_TRUE branch depends on the data and is refused), with the checks a full run makes
    // that need none (work limits, LUT loads), so both refuse the same streams.
    bool execute = true;
    bool timing = true;  // false: no cycle estimate (StreamOutcome::timing stays empty)
    DecodeOptions decode{};  // lenient: ops may read never-written registers (as 0), with a warning
    WorkLimits limits{};
    // Decoded weights kept across runs (a model's weights decode once); nullptr: the run decodes
    // its own, a window at a time.
    WeightCache* weight_cache = nullptr;
};

struct StreamOutcome {
    DecodedStream stream;                // the ops run, in order, branches followed
    std::optional<TimingResult> timing;  // when timed
};

// One run of `words` (named `source` in errors). memory: the NPU's address space with its
// regions' bases set, run on when options.execute (nullptr for a timing-only run). Throws
// ethosu::Error, whose kind says what went wrong (ErrorKind).
StreamOutcome run_stream(const NpuConfig& config, std::span<const uint32_t> words, const std::string& source,
                         const AddressSpace* memory, const TimedMemory& timed, const PipelineOptions& options = {});

// One stream run many times on the same memory (ModelSession, a driver's network): each run starts
// on a reset NPU, with the executor's scratch and the decoded weights kept from the runs before.
// A stream without branches takes the same path every time, so after the first run its ops are
// replayed without decoding, its timing (which reads only the ops) is kept, and a run allocates
// nothing.
class StreamSession {
public:
    // config, words, memory and timed must outlive the session.
    StreamSession(const NpuConfig& config, std::span<const uint32_t> words, std::string source,
                  const AddressSpace& memory, const TimedMemory& timed, bool timing = true);
    StreamSession(const StreamSession&) = delete;
    StreamSession& operator=(const StreamSession&) = delete;

    // Runs the stream on the memory as it is now. Throws ethosu::Error as run_stream does.
    const StreamOutcome& run();
    const StreamOutcome& last() const { return last_; }

private:
    const NpuConfig& config_;
    std::span<const uint32_t> words_;
    std::string source_;
    TimedMemory timed_;
    bool timing_;
    WeightCache weights_{WeightCache::Lifetime::RunsOnOneMemory};
    Executor executor_;
    bool replay_ = false;
    StreamOutcome last_;
};

}  // namespace ethosu
