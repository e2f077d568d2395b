#pragma once
// The timing model: replays a decoded command stream on a timeline of the NPU's units. It
// reads DecodedOp records and the memory each region lives in; it never reads data, so it gives
// the same cycles with or without functional execution.
//
// Units: the command processor reads the stream one 32-bit word per cycle; kernel ops run one
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
#include <string>
#include <vector>

#include "emulator/engine/timing/op_cost.h"
#include "emulator/isa/decoder.h"

namespace ethosu {

enum class Unit : uint8_t { Command, Kernel, Dma };

// AXI beats and transactions on each port. The PMU counts beats per transfer, so a run's beats are
// the sum of its ops' beats (each op's bytes per memory rounded up to whole beats), not its total
// bytes divided by the beat size.
struct PortBeats {
    std::array<int64_t, 2> read{}, write{};  // AXI0, AXI1
    std::array<int64_t, 2> read_transactions{}, write_transactions{};
    PortBeats& operator+=(const PortBeats& other);
};

struct OpTiming {
    uint32_t offset = 0;  // command-stream byte offset of the NPU_OP_*
    OpKind kind = OpKind::Stop;
    Unit unit = Unit::Command;
    int64_t issue = 0;    // when the command processor reached the op
    int64_t release = 0;  // when it moved past it (a full queue or a wait holds it)
    int64_t start = 0;    // when its unit started it
    int64_t end = 0;
    OpCost cost;          // kernel ops: compute cycles and traffic; DMA: traffic
    int ifm_bits = 0, ofm_bits = 0;  // kernel ops: activation precisions
    // Bytes / bandwidth per memory: kernel ops the busier of reads and writes (separate AXI
    // channels), at least the cost function's figure; DMA reads and writes together.
    std::array<int64_t, kMemoryKinds> access_cycles{};
};

struct TimingTotals {
    int64_t cycles = 0;      // from the first command to the end of the last unit
    int64_t npu_active = 0;  // cycles with any unit busy
    int64_t idle = 0;
    int64_t macs = 0;
    int64_t mac_active = 0;  // MAC array busy cycles
    int64_t output_active = 0;
    int64_t weight_decode_active = 0;
    int64_t dma_active = 0;
    int64_t command_words = 0;
    MemoryTraffic traffic;   // bytes per memory, kernel ops and DMA
    PortBeats beats;         // the sum of the ops' beats (port_beats of each op's traffic)
};

struct TimingResult {
    std::vector<OpTiming> ops;  // one per DecodedOp, in stream order
    TimingTotals totals;
    // When the PMU counts: from the start (the driver enabled it) until an NPU_OP_PMU_MASK
    // disables it, and again from a PMU_MASK that enables it. [begin, end) in cycles.
    std::vector<std::pair<int64_t, int64_t>> pmu_windows;
};

class TimingModel {
public:
    // region_memory: the memory behind each BASEP region (see region_memories()); source: the file
    // (or label) of the stream, named in errors.
    TimingModel(const NpuConfig& npu, MemorySystem memory, std::array<MemoryKind, AddressSpace::kRegions> region_memory,
                std::string source);

    // Throws ethosu::Error naming source and the op's command offset for an op whose cost is
    // beyond the model's range.
    TimingResult run(const DecodedStream& stream) const;

    const MemorySystem& memory() const { return memory_; }
    const NpuConfig& npu() const { return npu_; }

private:
    OpCost kernel_cost(const DecodedOp& op) const;

    NpuConfig npu_;
    MemorySystem memory_;
    CostContext ctx_;
};

// The memory behind each region given the roles a loader assigned (index -> role); regions
// without a role default to Vela's layout: 0 constant data, 1 arena, 2 arena cache, others arena.
std::array<MemoryKind, AddressSpace::kRegions> region_memories(const MemorySystem& memory,
                                                                const std::vector<std::pair<int, RegionRole>>& roles);

// AXI beats on each port for one op's traffic: each memory's bytes on its port, rounded up to whole
// beats; a transaction per AXI burst of that memory (MemoryTiming::axi_burst_bytes).
PortBeats port_beats(const MemorySystem& memory, const MemoryTraffic& traffic);

}  // namespace ethosu
