#pragma once
// How the kernel pipeline and the DMA channel share each memory's AXI channels: each unit's
// transfer takes what the other unit's ops leave of the bandwidth, so that no port carries more
// than its peak (a DMA on flash under a convolution streaming its weights from flash gets what the
// convolution leaves, and the other way round).

#include <array>
#include <cstdint>
#include <vector>

#include "emulator/engine/timing/op_cost.h"

namespace ethosu {

// One unit's use of a memory channel (read or write data, AXI keeps them apart): over
// [start, end) it takes `share` of the channel's bandwidth. A kernel op's block traversal and a
// DMA's transfer spread their traffic over their whole span.
struct ChannelUse {
    int64_t start = 0, end = 0;
    double share = 0;
};

// Cycles of each memory's read and write channel at full bandwidth: [memory][read, write].
using ChannelBusy = std::array<std::array<double, 2>, kMemoryKinds>;

// One unit's uses of every channel, in the order its ops ran.
class ChannelUses {
public:
    // When a unit's transfers needing `busy` from `start` are done, sharing the channels with these
    // uses; `first` (when given) is set to when every channel has begun to move them.
    int64_t shared_end(int64_t start, const ChannelBusy& busy, int64_t* first = nullptr) const;
    // Records a use of the channels over [start, end).
    void record(int64_t start, int64_t end, const ChannelBusy& busy);

private:
    std::array<std::array<std::vector<ChannelUse>, 2>, kMemoryKinds> uses_;  // [memory][read, write]
};

// The cycles each channel of each memory is busy with `traffic` at full bandwidth.
ChannelBusy channel_busy(const MemorySystem& memory, const MemoryTraffic& traffic);

// When a transfer needing `busy` cycles of a channel's full bandwidth from `start` has had them,
// given the other unit's use of the channel (`uses`, sorted: each unit runs its ops in order).
// `first` (when given) is set to when the transfer first gets bandwidth.
int64_t shared_transfer_end(const std::vector<ChannelUse>& uses, int64_t start, double busy, int64_t* first = nullptr);

}  // namespace ethosu
