#include "emulator/engine/pipeline.h"

#include <algorithm>

#include "emulator/isa/control_flow.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

TimingResult time_stream(const NpuConfig& config, const DecodedStream& stream, const std::string& source,
                         const TimedMemory& timed) {
    return TimingModel(config, timed.system, timed.regions, source).run(stream);
}

// A timing-only run: the stream followed without data, making the checks a full run makes on the
// way (check_op) and the LUT bookkeeping of its DMAs.
DecodedStream follow_without_data(const NpuConfig& config, std::span<const uint32_t> words, const std::string& source,
                                  const PipelineOptions& options) {
    auto no_data = [&](const DecodedOp& branch) -> bool {
        throw Error({source, branch.offset, "NPU_OP_BRANCH.branch_cond", OffsetKind::Command},
                    "an RF_TRUE branch depends on the data: a timing-only run cannot follow it",
                    ErrorKind::Unsupported);
    };
    WorkBudget budget(options.limits, source);
    Shram shram(config);
    auto check = [&](const DecodedOp& op, std::span<const DecodedOp>) {
        check_op(op, config, budget, shram, source);
        if (op.kind == OpKind::DmaStart && op.dma().dst.internal) shram.load(op.dma());
    };
    return follow_stream(config, words, source, check, no_data, budget.follow_options({.decode = options.decode}));
}

}  // namespace

StreamOutcome run_stream(const NpuConfig& config, std::span<const uint32_t> words, const std::string& source,
                         const AddressSpace* memory, const TimedMemory& timed, const PipelineOptions& options) {
    StreamOutcome outcome;
    if (!options.execute) {
        outcome.stream = follow_without_data(config, words, source, options);
    } else {
        // Gone before the timing model runs: its scratch and decoded weights are not needed then.
        Executor executor(config, *memory, source, options.weight_cache, options.limits);
        outcome.stream = executor.run(words, {.decode = options.decode});
    }
    if (options.timing) outcome.timing = time_stream(config, outcome.stream, source, timed);
    return outcome;
}

StreamSession::StreamSession(const NpuConfig& config, std::span<const uint32_t> words, std::string source,
                             const AddressSpace& memory, const TimedMemory& timed, bool timing)
    : config_(config), words_(words), source_(std::move(source)), timed_(timed), timing_(timing),
      executor_(config, memory, source_, &weights_) {}

const StreamOutcome& StreamSession::run() {
    executor_.reset();
    if (replay_) {
        executor_.run(last_.stream);
        return last_;
    }
    last_.stream = executor_.run(words_);
    // Without branches the path never changes: later runs replay these ops, and their timing,
    // which reads only the ops, is this one's.
    replay_ = std::ranges::none_of(last_.stream.ops, [](const DecodedOp& op) { return op.kind == OpKind::Branch; });
    if (timing_) last_.timing = time_stream(config_, last_.stream, source_, timed_);
    return last_;
}

}  // namespace ethosu
