#pragma once
// The timing model: replays a decoded command stream on a timeline of the NPU's units. It
// reads DecodedOp records and the memory each region lives in; it never reads data, so it gives
// the same cycles with or without functional execution.
//
// Units (timing_units.h): the command processor reads the stream one 32-bit word per cycle; kernel ops run one
// at a time on the MAC/output pipeline for max(compute, per-memory access) cycles; DMA runs on
// its own channel, concurrently. The command processor queues kernel ops and DMAs and reads on
// (up to NpuTraits::max_outstanding_kernel_ops / max_outstanding_dmas not completed; at one
// more it stalls until the oldest completes); DMA_WAIT and KERNEL_WAIT hold it until at most k
// DMAs / n kernel ops are outstanding.
//
// Branches (U85): the model replays the ops as executed (follow_stream's trace, which repeats a
// loop's ops per iteration), so it takes the branches the executor took. A BRANCH costs its two
// command words; the command processor then reads on from the block it entered.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator/engine/timing/op_cost.h"
#include "emulator/engine/timing/timing_result.h"
#include "emulator/engine/timing/timing_units.h"
#include "emulator/isa/decoder.h"

namespace ethosu {

class TimingModel {
public:
    // region_memory: the memory behind each BASEP region (see region_memories()); source: the file
    // (or label) of the stream, named in errors.
    TimingModel(const NpuConfig& npu, MemorySystem memory, std::array<MemoryKind, AddressSpace::kRegions> region_memory,
                std::string source);

    // The whole stream at once: a TimingReplay advanced to its end. Throws ethosu::Error naming
    // source and the op's command offset for an op whose cost is beyond the model's range.
    TimingResult run(const DecodedStream& stream) const;

    const MemorySystem& memory() const { return memory_; }
    const NpuConfig& npu() const { return npu_; }
    const CostContext& cost_context() const { return ctx_; }

private:
    NpuConfig npu_;
    MemorySystem memory_;
    CostContext ctx_;
};

// A stream's replay that a host advances: it issues the ops as the command processor reaches
// them (an op's timing is then final) and reports each unit's completions as events. Advancing in
// any steps to the end gives what TimingModel::run gives. The model and the stream must outlive
// it; after an Error (an op beyond the model's range) it cannot go on.
class TimingReplay {
public:
    TimingReplay(const TimingModel& model, const DecodedStream& stream);

    // The cycle the host has advanced to.
    int64_t now() const { return now_; }
    // The next cycle after now() at which the command processor issues an op or a unit completes
    // one (or the command processor comes free); nullopt when the stream is issued and every unit
    // is idle.
    std::optional<int64_t> next_event() const;
    // Moves the clock to `cycle` (never back), issuing every op the command processor reaches by then.
    void advance_to(int64_t cycle);
    // Advances to next_event(); false when there is none.
    bool advance_to_next_event();
    // Whether every op to STOP (or the end of the stream) is issued; totals are then complete.
    bool issued_all() const;

    // The ops issued so far, with their final timing, and the totals of those ops (cycles,
    // npu_active, idle and the last PMU window once issued_all()).
    const TimingResult& result() const { return result_; }
    // The whole stream's result: advances to the end first.
    TimingResult finish() &&;

private:
    void issue_next();
    void issue(const DecodedOp& op, OpTiming& t);
    void account(const DecodedOp& op, const OpTiming& t);
    void close();

    const TimingModel& model_;
    const DecodedStream& stream_;
    CommandProcessor command_;
    KernelPipeline kernel_;
    DmaChannel dma_;
    size_t next_op_ = 0;
    bool stopped_ = false;
    int64_t now_ = 0;
    std::vector<int64_t> pending_;  // cycles after now() at which an issued op completes or releases
    bool pmu_counting_ = true;
    int64_t pmu_window_start_ = 0;
    std::vector<std::pair<int64_t, int64_t>> busy_;  // each unit's busy spans, merged at the end
    TimingResult result_;
};

// The memory behind each region given the roles a loader assigned (index -> role); regions
// without a role default to Vela's layout: 0 constant data, 1 arena, 2 arena cache, others arena.
std::array<MemoryKind, AddressSpace::kRegions> region_memories(const MemorySystem& memory,
                                                                const std::vector<std::pair<int, RegionRole>>& roles);

// AXI beats on each port for one op's traffic: each memory's bytes on its port, rounded up to whole
// beats; a transaction per AXI burst of that memory (MemoryTiming::axi_burst_bytes).
PortBeats port_beats(const MemorySystem& memory, const MemoryTraffic& traffic);

}  // namespace ethosu
