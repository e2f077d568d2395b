#include "emulator/engine/timing/channel_share.h"

#include <algorithm>

namespace ethosu {

int64_t shared_transfer_end(const std::vector<ChannelUse>& uses, int64_t start, double busy, int64_t* first) {
    double t = double(start), left = busy;
    if (first) *first = start;
    auto it = std::lower_bound(uses.begin(), uses.end(), start,
                               [](const ChannelUse& u, int64_t at) { return u.end <= at; });
    for (; it != uses.end() && left > 0; ++it) {
        if (double(it->start) > t) {  // the channel is this transfer's alone until the use starts
            const double alone = double(it->start) - t;
            if (alone >= left) break;
            left -= alone;
            t = double(it->start);
        }
        const double rate = std::max(0.0, 1.0 - it->share);
        const double span = double(it->end) - t;
        if (first && rate <= 0 && double(*first) >= t) *first = it->end;  // saturated: nothing yet
        if (rate * span >= left) {
            t += left / std::max(rate, 1e-9);
            left = 0;
            break;
        }
        left -= rate * span;
        t = double(it->end);
    }
    return static_cast<int64_t>(t + left);  // truncated, as cost_figure truncates
}

ChannelBusy channel_busy(const MemorySystem& memory, const MemoryTraffic& traffic) {
    ChannelBusy busy{};
    for (int m = 0; m < kMemoryKinds; ++m) {
        const double bandwidth = memory.bytes_per_cycle(static_cast<MemoryKind>(m));
        busy[m] = {double(traffic.read[m]) / bandwidth, double(traffic.write[m]) / bandwidth};
    }
    return busy;
}

int64_t ChannelUses::shared_end(int64_t start, const ChannelBusy& busy, int64_t* first) const {
    int64_t end = start;
    if (first) *first = start;
    for (int m = 0; m < kMemoryKinds; ++m) {
        for (int channel = 0; channel < 2; ++channel) {
            if (busy[m][channel] == 0) continue;
            int64_t begun = start;
            end = std::max(end, shared_transfer_end(uses_[m][channel], start, busy[m][channel], &begun));
            if (first) *first = std::max(*first, begun);
        }
    }
    return end;
}

void ChannelUses::record(int64_t start, int64_t end, const ChannelBusy& busy) {
    if (end <= start) return;
    for (int m = 0; m < kMemoryKinds; ++m)
        for (int channel = 0; channel < 2; ++channel)
            if (busy[m][channel] > 0) uses_[m][channel].push_back({start, end, busy[m][channel] / double(end - start)});
}

}  // namespace ethosu
