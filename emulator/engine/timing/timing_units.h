#pragma once
// The NPU's units on the timeline, each with its own state and an issue function: the command
// processor reads the stream and hands ops to the kernel pipeline and the DMA channel, which time
// them when they are issued. An op's timing depends only on the ops before it in the stream, so
// it is final once issued; TimingReplay drives the units op by op.

#include <cstdint>
#include <optional>
#include <vector>

#include "emulator/engine/timing/channel_share.h"
#include "emulator/engine/timing/op_cost.h"
#include "emulator/engine/timing/timing_result.h"
#include "emulator/isa/decoded_op.h"

namespace ethosu {

// The ops a unit has taken, by when each completes (in issue order).
class OutstandingOps {
public:
    void add(int64_t end) { ends_.push_back(end); }
    // When, seen from `at`, at most n of them are outstanding: once all but the newest n have completed.
    int64_t until_at_most(int64_t n, int64_t at) const;

private:
    std::vector<int64_t> ends_;
};

// Reads the stream one 32-bit word per cycle and issues each op once it has read it; a full unit
// queue or a wait holds it.
class CommandProcessor {
public:
    explicit CommandProcessor(const NpuTraits& traits) : traits_(traits) {}

    // The words it reads up to and including op: the register writes before it and the op's own
    // (BRANCH is a cmd1, two words). After a branch, taken or not, reading resumes at the block the
    // decoder entered.
    int64_t words_to(const DecodedOp& op) const;
    // Reads those words; returns when it began.
    int64_t fetch(const DecodedOp& op);
    // Holds until `queue` has room for one more op under the generation's outstanding-work limit.
    void issue_into(const OutstandingOps& queue, Unit unit);
    // Holds until at most op.wait().count of `queue`'s ops are outstanding (DMA_WAIT, KERNEL_WAIT).
    void wait_for(const OutstandingOps& queue, const DecodedOp& op);

    int64_t now() const { return now_; }
    int64_t words_read() const { return words_read_; }

private:
    const NpuTraits& traits_;
    int64_t now_ = 0;
    int64_t words_read_ = 0;
    uint64_t next_word_offset_ = 0;
    bool after_branch_ = false;
};

// Runs kernel ops one at a time, in order, for max(compute, access) cycles; OFM-depth slices of one
// operation and ops reading the chaining buffer overlap the op before.
class KernelPipeline {
public:
    explicit KernelPipeline(const CostContext& ctx);

    // Times a kernel op the command processor releases at `at`, sharing the memory channels with
    // the DMA's `dma` uses: fills t's cost, precisions, access cycles, start and end.
    void issue(const DecodedOp& op, int64_t at, const ChannelUses& dma, OpTiming& t);

    int64_t free_at() const { return free_at_; }
    const ChannelUses& uses() const { return uses_; }
    const OutstandingOps& outstanding() const { return outstanding_; }

private:
    // Per memory, the busier AXI channel's bytes over the bandwidth, at least the cost's own figure;
    // returns the largest.
    int64_t access_cycles(const DecodedOp& op, OpTiming& t) const;
    // When op may start given the op before it: with its producer when it reads the chaining buffer,
    // under the previous slice's drain when it continues it.
    int64_t earliest_start(const DecodedOp& op, int64_t at, bool slice) const;

    const CostContext& ctx_;
    OpCost (*cost_)(const DecodedOp&, const CostContext&);
    int64_t free_at_ = 0;
    const DecodedOp* previous_ = nullptr;
    int64_t previous_drain_ = 0;  // the end of the previous op a next slice may run under
    int64_t previous_start_ = 0;
    ChannelUses uses_;
    OutstandingOps outstanding_;
};

// What a DMA moves: from one memory to another, or (to = nullopt) a LUT load into SHRAM / LUT RAM,
// whose only external side is the read; read_bytes are the source's whole bursts.
struct DmaTransfer {
    MemoryKind from = MemoryKind::Sram;
    std::optional<MemoryKind> to;
    int64_t read_bytes = 0, bytes = 0;
    std::optional<DmaIndexRead> index;
};

// Runs DMA transfers one at a time, in order, concurrently with the kernel pipeline.
class DmaChannel {
public:
    explicit DmaChannel(const CostContext& ctx) : ctx_(ctx) {}

    // Times a DMA_START the command processor releases at `at`, sharing the memory channels with
    // the kernel pipeline's `kernel` uses: fills t's traffic, access cycles, start and end.
    void issue(const DecodedOp& op, int64_t at, const ChannelUses& kernel, OpTiming& t);

    int64_t free_at() const { return free_at_; }
    const ChannelUses& uses() const { return uses_; }
    const OutstandingOps& outstanding() const { return outstanding_; }

private:
    // What the op moves, its bytes added to traffic.
    DmaTransfer transfer(const DecodedOp& op, MemoryTraffic& traffic) const;

    const CostContext& ctx_;
    int64_t free_at_ = 0;
    ChannelUses uses_;
    OutstandingOps outstanding_;
};

}  // namespace ethosu
