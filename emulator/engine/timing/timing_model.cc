#include "emulator/engine/timing/timing_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>

#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// Adds [start, end) to a sorted list of disjoint busy intervals' total length, tracked as a
// sweep: ops arrive in stream order but units overlap, so intervals are merged at the end.
int64_t union_length(std::vector<std::pair<int64_t, int64_t>> intervals) {
    std::sort(intervals.begin(), intervals.end());
    int64_t total = 0, covered_to = INT64_MIN;
    for (const auto& [s, e] : intervals) {
        const int64_t from = std::max(s, covered_to);
        if (e > from) total += e - from;
        covered_to = std::max(covered_to, e);
    }
    return total;
}

int64_t dma_bytes(const CostContext& ctx, const DecodedOp& op) {
    const Dma& d = op.dma;
    const int64_t rows = d.dimensions >= 2 ? d.size0 : 1;
    const int64_t planes = d.dimensions >= 3 ? d.size1 : 1;
    return cost_product(ctx, op, "bytes moved", {static_cast<int64_t>(d.length), rows, planes});
}

// U55/U65 DMA: read_bytes (the source's whole bursts) are read, bytes written; to = nullopt: a
// LUT load into SHRAM, whose only external side is the read. These generations have no index mode.
int64_t u55_dma_cycles(const DecodedOp& op, const CostContext& ctx, MemoryKind from, std::optional<MemoryKind> to,
                       int64_t read_bytes, int64_t bytes, std::optional<DmaIndexRead>) {
    if (to) return dma_cycles(ctx, op, from, *to, read_bytes, bytes);
    return cost_figure(ctx, op, "read cycles", double(read_bytes) / ctx.memory.bytes_per_cycle(from)) +
           ctx.memory.timing(from).read_latency;
}

// U85 DMA: its cost still reads the bytes moved, not their bursts (no anchor measures U85).
int64_t u85_dma(const DecodedOp& op, const CostContext& ctx, MemoryKind from, std::optional<MemoryKind> to,
                int64_t /*read_bytes*/, int64_t bytes, std::optional<DmaIndexRead> index) {
    return u85_dma_cycles(op, ctx, from, to, bytes, index);
}

// The cost functions of each CostModel, in its order: a generation's traits name its row.
struct CostFunctions {
    OpCost (*kernel)(const DecodedOp&, const CostContext&);
    int64_t (*dma)(const DecodedOp&, const CostContext&, MemoryKind from, std::optional<MemoryKind> to,
                   int64_t read_bytes, int64_t bytes, std::optional<DmaIndexRead> index);
};
constexpr CostFunctions kCostModels[] = {
    {u55_kernel_cost, u55_dma_cycles},  // CostModel::U55
    {u85_kernel_cost, u85_dma},         // CostModel::U85
};

const CostFunctions& cost_functions(const NpuConfig& npu) {
    return kCostModels[static_cast<size_t>(npu.traits().cost_model)];
}

// The indices an index-mode DMA reads: one int32 per row (the skips between planes are not read).
int64_t index_bytes(const CostContext& ctx, const DecodedOp& op) {
    const Dma& d = op.dma;
    const int64_t rows = d.dimensions >= 2 ? d.size0 : 1;
    const int64_t planes = d.dimensions >= 3 ? d.size1 : 1;
    return cost_product(ctx, op, "index bytes", {rows, planes, static_cast<int64_t>(kDmaIndexBytes)});
}

// The timeline's running figures stay below 2^62: each op adds at most a few figures of at most
// kMaxCostFigure (2^53) to them, so they cannot overflow before the next check.
void check_timeline(const std::string& source, const DecodedOp& op, std::initializer_list<int64_t> figures) {
    constexpr int64_t kMaxTimeline = int64_t{1} << 62;
    for (const int64_t f : figures) {
        if (f > kMaxTimeline) {
            throw Error({source, op.offset, std::string(op_kind_name(op.kind)), OffsetKind::Command},
                        fmt::format("the run's cycles or traffic reach {} here, beyond the timing model's range of 2^62",
                                    f),
                        ErrorKind::LimitExceeded);
        }
    }
}

// When the command processor, at `command`, sees at most `n` of a unit's ops outstanding
// (`ends`: when each op issued so far completes, in order): once all but the newest n have.
// A wait asks for it; so does issuing into a unit's queue, with n one less than the ops it holds.
int64_t until_at_most_outstanding(const std::vector<int64_t>& ends, int64_t n, int64_t command) {
    const int64_t must_finish = static_cast<int64_t>(ends.size()) - n;
    return must_finish > 0 ? std::max(command, ends[static_cast<size_t>(must_finish - 1)]) : command;
}

// One unit's use of a memory channel (read or write data, AXI keeps them apart): over
// [start, end) it takes `share` of the channel's bandwidth. A kernel op's block traversal and a
// DMA's transfer spread their traffic over their whole span.
struct ChannelUse {
    int64_t start = 0, end = 0;
    double share = 0;
};
using ChannelUses = std::array<std::array<std::vector<ChannelUse>, 2>, kMemoryKinds>;  // [memory][read, write]

// When a transfer needing `busy` cycles of a channel's full bandwidth from `start` has had them,
// given the other unit's use of the channel (`uses`, sorted: each unit runs its ops in order).
// The kernel pipeline and the DMA share each AXI port: a DMA on flash under a convolution
// streaming its weights from flash gets what the convolution leaves, and the other way round,
// so that the port never carries more than its peak (issue 17: person_detect's flash at 198%).
// `first` (when given) is set to when the transfer first gets bandwidth.
int64_t shared_transfer_end(const std::vector<ChannelUse>& uses, int64_t start, double busy, int64_t* first = nullptr) {
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

// The cycles each channel of each memory is busy with `traffic` at full bandwidth.
std::array<std::array<double, 2>, kMemoryKinds> channel_busy(const MemorySystem& memory, const MemoryTraffic& traffic) {
    std::array<std::array<double, 2>, kMemoryKinds> busy{};
    for (int m = 0; m < kMemoryKinds; ++m) {
        const double bandwidth = memory.bytes_per_cycle(static_cast<MemoryKind>(m));
        busy[m] = {double(traffic.read[m]) / bandwidth, double(traffic.write[m]) / bandwidth};
    }
    return busy;
}

// When a unit's transfers from `start` are done, sharing the channels with `others`; `first`
// (when given) is set to when every channel has begun to move them.
int64_t shared_end(const ChannelUses& others, int64_t start, const std::array<std::array<double, 2>, kMemoryKinds>& busy,
                   int64_t* first = nullptr) {
    int64_t end = start;
    if (first) *first = start;
    for (int m = 0; m < kMemoryKinds; ++m) {
        for (int channel = 0; channel < 2; ++channel) {
            if (busy[m][channel] == 0) continue;
            int64_t begun = start;
            end = std::max(end, shared_transfer_end(others[m][channel], start, busy[m][channel], &begun));
            if (first) *first = std::max(*first, begun);
        }
    }
    return end;
}

// Records a unit's use of the channels over [start, end).
void record_use(ChannelUses& uses, int64_t start, int64_t end, const std::array<std::array<double, 2>, kMemoryKinds>& busy) {
    if (end <= start) return;
    for (int m = 0; m < kMemoryKinds; ++m)
        for (int channel = 0; channel < 2; ++channel)
            if (busy[m][channel] > 0) uses[m][channel].push_back({start, end, busy[m][channel] / double(end - start)});
}

// Whether b continues a: slices of one operation's OFM depth (Vela slices an op's OFM depth to
// stream its weights). Same kind, IFM and kernel; weight streams; an OFM of the same rows and
// columns that starts at a later channel of the same pixel.
bool depth_slice_of(const DecodedOp& a, const DecodedOp& b) {
    const auto in_memory = [](const FeatureMap& fm) { return fm.storage == Storage::Tile2x2 || fm.storage == Storage::Tile3x1; };
    if (a.kind != b.kind || b.weights.empty() || !in_memory(a.ifm) || !in_memory(b.ifm) || !in_memory(a.ofm) ||
        !in_memory(b.ofm) || a.ifm.region != b.ifm.region || a.ifm.tile_base != b.ifm.tile_base ||
        a.kernel.width != b.kernel.width || a.kernel.height != b.kernel.height || a.ofm.region != b.ofm.region ||
        a.ofm.height != b.ofm.height || a.ofm.width != b.ofm.width || a.ofm.format != b.ofm.format) {
        return false;
    }
    const int64_t channel_offset = static_cast<int64_t>(b.ofm.tile_base[0]) - static_cast<int64_t>(a.ofm.tile_base[0]);
    const int64_t pixel_bytes = b.ofm.format == DataFormat::NHCWB16 ? b.ofm.stride_y : b.ofm.stride_x;
    return channel_offset > 0 && channel_offset < pixel_bytes;
}

}  // namespace

TimingModel::TimingModel(const NpuConfig& npu, MemorySystem memory,
                         std::array<MemoryKind, AddressSpace::kRegions> region_memory, std::string source)
    : npu_(npu), memory_(std::move(memory)), ctx_{npu_, memory_, region_memory, std::move(source)} {}

OpCost TimingModel::kernel_cost(const DecodedOp& op) const {
    return cost_functions(npu_).kernel(op, ctx_);
}

TimingResult TimingModel::run(const DecodedStream& stream) const {
    TimingResult result;
    TimingTotals& totals = result.totals;
    int64_t command = 0, kernel_free = 0, dma_free = 0;
    const DecodedOp* previous_kernel = nullptr;
    int64_t previous_drain = 0;  // the end of the previous kernel op a next slice may run under
    int64_t previous_start = 0;  // when the previous kernel op started
    uint64_t next_word_offset = 0;
    bool after_branch = false;  // the command processor resumes where the branch led
    bool pmu_counting = true;
    int64_t pmu_window_start = 0;
    std::vector<int64_t> kernel_ends, dma_ends;
    ChannelUses kernel_uses, dma_uses;  // see shared_transfer_end
    std::vector<std::pair<int64_t, int64_t>> busy;
    result.ops.reserve(stream.ops.size());

    for (const DecodedOp& op : stream.ops) {
        OpTiming t;
        t.offset = op.offset;
        t.kind = op.kind;
        // The register writes before the op, and the op word itself, one word per cycle. After a
        // branch (taken or not) reading resumes at the block the decoder entered; BRANCH is a
        // cmd1, two words.
        const uint64_t from = after_branch ? op.fetch_start : std::min<uint64_t>(next_word_offset, op.offset);
        const int64_t words = static_cast<int64_t>((op.offset + 4 - std::min<uint64_t>(from, op.offset)) / 4) +
                              (op.kind == OpKind::Branch ? 1 : 0);
        next_word_offset = op.offset + 4;
        after_branch = op.kind == OpKind::Branch;
        busy.emplace_back(command, command + words);
        command += words;
        totals.command_words += words;
        t.issue = t.release = command;
        t.start = t.end = command;

        if (is_kernel_op(op.kind)) {
            t.unit = Unit::Kernel;
            command = t.release =
                until_at_most_outstanding(kernel_ends, npu_.traits().max_outstanding_kernel_ops - 1, command);
            t.cost = kernel_cost(op);
            t.ifm_bits = op.ifm.precision.bits;
            t.ofm_bits = op.ofm.precision.bits;
            int64_t access = 0;
            for (int m = 0; m < kMemoryKinds; ++m) {
                const auto kind = static_cast<MemoryKind>(m);
                // AXI's read and write data channels are separate, each with the port's bandwidth.
                const int64_t busiest = std::max(t.cost.traffic.read[m], t.cost.traffic.write[m]);
                if (busiest == 0) continue;
                t.access_cycles[m] = std::max(cost_figure(ctx_, op, "access cycles", double(busiest) / memory_.bytes_per_cycle(kind)),
                                              t.cost.access_cycles[m]);
                access = std::max(access, t.access_cycles[m]);
            }
            // Slices of one operation pipeline when BLOCKDEP lets the next start early: it fetches
            // its first IFM block while the previous writes its last OFM block (Vela counts that
            // fill and drain once per operation). Only compute time hides; memory time does not.
            const bool slice = previous_kernel && op.block.blockdep > 0 && depth_slice_of(*previous_kernel, op);
            const int64_t slack = std::max<int64_t>(t.cost.compute_cycles - access, 0);
            const int64_t hidden_fill = slice ? std::min(slack, t.cost.fill_cycles) : 0;
            // An op reading the chaining buffer (U85) runs block by block in step with the op that
            // fills it, so it starts with its producer; it still ends after it.
            const bool chained =
                op.ifm.storage == Storage::Chained || (op.has_ifm2 && op.ifm2.storage == Storage::Chained);
            t.start = chained ? std::max(command, previous_start)
                              : std::max(command, kernel_free - (slice ? previous_drain : 0));
            previous_start = t.start;
            // Its traffic shares each channel with the DMA's.
            const auto busy_cycles = channel_busy(memory_, t.cost.traffic);
            t.end = std::max({t.start + std::max(t.cost.compute_cycles - hidden_fill, access),
                              shared_end(dma_uses, t.start, busy_cycles), kernel_free});  // in order
            const int64_t duration = t.end - t.start;
            record_use(kernel_uses, t.start, t.end, busy_cycles);
            previous_kernel = &op;
            previous_drain = std::min(slack, t.cost.drain_cycles);
            kernel_free = t.end;
            kernel_ends.push_back(t.end);
            totals.macs += t.cost.macs;
            totals.mac_active += std::min(t.cost.mac_cycles, duration);
            totals.output_active += std::min(t.cost.output_cycles, duration);
            totals.weight_decode_active += std::min(t.cost.weight_decode_cycles, duration);
        } else if (op.kind == OpKind::DmaStart) {
            t.unit = Unit::Dma;
            command = t.release = until_at_most_outstanding(dma_ends, npu_.traits().max_outstanding_dmas - 1, command);
            const Dma& d = op.dma;
            const int64_t bytes = dma_bytes(ctx_, op);
            const MemoryKind from = ctx_.memory_of(d.src.region);
            // A 1D transfer's reads come in the source memory's aligned bursts (the rows of 2D and
            // 3D transfers are counted as their bytes).
            const int64_t read_bytes =
                d.dimensions == 1 ? burst_aligned_bytes(ctx_, op, d.src.address, static_cast<uint64_t>(bytes),
                                                        memory_.timing(from).axi_burst_bytes())
                                  : bytes;
            t.cost.traffic.add_read(from, read_bytes);
            std::optional<DmaIndexRead> index;
            if (d.gather || d.scatter) {
                index = DmaIndexRead{ctx_.memory_of(d.index.region), index_bytes(ctx_, op)};
                t.cost.traffic.add_read(index->memory, index->bytes);
            }
            std::optional<MemoryKind> to;  // none: a LUT load into SHRAM / LUT RAM, only the read side is external
            if (!d.dst.internal) {
                to = ctx_.memory_of(d.dst.region);
                t.cost.traffic.add_write(*to, bytes);
            }
            // Its access cycles per memory, as the per-layer report counts them: the bytes read
            // and written there together over the memory's bandwidth.
            for (int m = 0; m < kMemoryKinds; ++m) {
                const int64_t moved = t.cost.traffic.read[m] + t.cost.traffic.write[m];
                if (moved == 0) continue;
                t.access_cycles[m] = cost_figure(ctx_, op, "access cycles",
                                                 double(moved) / memory_.bytes_per_cycle(static_cast<MemoryKind>(m)));
            }
            const int64_t duration = cost_functions(npu_).dma(op, ctx_, from, to, read_bytes, bytes, index);
            t.start = std::max(command, dma_free);
            const auto busy_cycles = channel_busy(memory_, t.cost.traffic);
            // Latencies and the slower side set its duration alone; sharing the channels with the
            // kernel ops stretches it by what they take.
            int64_t alone = t.start;
            for (const auto& channels : busy_cycles)
                for (const double b : channels) alone = std::max(alone, t.start + static_cast<int64_t>(b));
            int64_t begun = t.start;
            t.end = t.start + duration + (shared_end(kernel_uses, t.start, busy_cycles, &begun) - alone);
            t.start = begun;  // a DMA whose port a kernel op saturates waits for it
            record_use(dma_uses, t.start, t.end, busy_cycles);
            dma_free = t.end;
            dma_ends.push_back(t.end);
            totals.dma_active += t.end - t.start;
        } else if (op.kind == OpKind::DmaWait || op.kind == OpKind::KernelWait) {
            const auto& ends = op.kind == OpKind::DmaWait ? dma_ends : kernel_ends;
            command = until_at_most_outstanding(ends, op.wait_count, command);
            t.end = t.release = command;
        } else if (op.kind == OpKind::PmuMask && op.pmu_enable != pmu_counting) {
            if (pmu_counting) result.pmu_windows.emplace_back(pmu_window_start, command);
            else pmu_window_start = command;
            pmu_counting = op.pmu_enable;
        }
        if (t.end > t.start) busy.emplace_back(t.start, t.end);
        for (int m = 0; m < kMemoryKinds; ++m) {
            totals.traffic.read[m] += t.cost.traffic.read[m];
            totals.traffic.write[m] += t.cost.traffic.write[m];
        }
        totals.beats += port_beats(memory_, t.cost.traffic);
        check_timeline(ctx_.source, op, {command, kernel_free, dma_free, totals.macs, totals.mac_active, totals.output_active,
                            totals.weight_decode_active, totals.dma_active, totals.command_words});
        for (int m = 0; m < kMemoryKinds; ++m) check_timeline(ctx_.source, op, {totals.traffic.read[m], totals.traffic.write[m]});
        result.ops.push_back(t);
        if (op.kind == OpKind::Stop) break;
    }
    totals.cycles = std::max({command, kernel_free, dma_free});
    if (pmu_counting) result.pmu_windows.emplace_back(pmu_window_start, totals.cycles);
    totals.npu_active = union_length(std::move(busy));
    totals.idle = totals.cycles - totals.npu_active;
    return result;
}

std::array<MemoryKind, AddressSpace::kRegions> region_memories(const MemorySystem& memory,
                                                                const std::vector<std::pair<int, RegionRole>>& roles) {
    std::array<MemoryKind, AddressSpace::kRegions> out{};
    for (int r = 0; r < AddressSpace::kRegions; ++r) {
        const RegionRole role = r == 0 ? RegionRole::Weights : r == 2 ? RegionRole::ScratchFast : RegionRole::Scratch;
        out[static_cast<size_t>(r)] = memory.port_memory(memory.port_for_role(role));
    }
    for (const auto& [index, role] : roles) {
        if (index >= 0 && index < AddressSpace::kRegions)
            out[static_cast<size_t>(index)] = memory.port_memory(memory.port_for_role(role));
    }
    return out;
}

PortBeats& PortBeats::operator+=(const PortBeats& other) {
    for (size_t p = 0; p < 2; ++p) {
        read[p] += other.read[p];
        write[p] += other.write[p];
        read_transactions[p] += other.read_transactions[p];
        write_transactions[p] += other.write_transactions[p];
    }
    return *this;
}

PortBeats port_beats(const MemorySystem& memory, const MemoryTraffic& traffic) {
    PortBeats beats;
    for (int m = 0; m < kMemoryKinds; ++m) {
        const auto kind = static_cast<MemoryKind>(m);
        // A memory behind neither port (unused by this system) carries no traffic.
        for (int port = 0; port < 2; ++port) {
            if (memory.port_memory(port) != kind) continue;
            const auto p = static_cast<size_t>(port);
            const int64_t read = div_round_up(traffic.read[m], memory.axi_bytes);
            const int64_t write = div_round_up(traffic.write[m], memory.axi_bytes);
            const int64_t burst_beats = std::max<int64_t>(1, memory.timing(kind).axi_burst_bytes() / memory.axi_bytes);
            beats.read[p] += read;
            beats.write[p] += write;
            beats.read_transactions[p] += div_round_up(read, burst_beats);
            beats.write_transactions[p] += div_round_up(write, burst_beats);
            break;
        }
    }
    return beats;
}

}  // namespace ethosu
