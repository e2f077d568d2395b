#pragma once
// What the timing model reports: each op's place on the timeline, the run's totals, AXI beats per
// port and the PMU's counting windows.

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "emulator/engine/timing/op_cost.h"

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

}  // namespace ethosu
