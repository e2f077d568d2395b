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

}  // namespace

TimingModel::TimingModel(const NpuConfig& npu, MemorySystem memory,
                         std::array<MemoryKind, AddressSpace::kRegions> region_memory, std::string source)
    : npu_(npu), memory_(std::move(memory)), ctx_{npu_, memory_, region_memory, std::move(source)} {}

TimingResult TimingModel::run(const DecodedStream& stream) const {
    return TimingReplay(*this, stream).finish();
}

TimingReplay::TimingReplay(const TimingModel& model, const DecodedStream& stream)
    : model_(model), stream_(stream), command_(model.npu().traits()), kernel_(model.cost_context()),
      dma_(model.cost_context()) {
    result_.ops.reserve(stream.ops.size());
    if (issued_all()) close();
}

bool TimingReplay::issued_all() const { return stopped_ || next_op_ >= stream_.ops.size(); }

std::optional<int64_t> TimingReplay::next_event() const {
    std::optional<int64_t> next;
    if (!issued_all()) next = command_.now() + command_.words_to(stream_.ops[next_op_]);
    for (const int64_t cycle : pending_)
        if (!next || cycle < *next) next = cycle;
    return next;
}

void TimingReplay::advance_to(int64_t cycle) {
    while (!issued_all() && command_.now() + command_.words_to(stream_.ops[next_op_]) <= cycle) issue_next();
    now_ = std::max(now_, cycle);
    std::erase_if(pending_, [&](int64_t c) { return c <= now_; });
}

bool TimingReplay::advance_to_next_event() {
    const std::optional<int64_t> next = next_event();
    if (next) advance_to(*next);
    return next.has_value();
}

TimingResult TimingReplay::finish() && {
    while (advance_to_next_event()) {
    }
    return std::move(result_);
}

void TimingReplay::issue_next() {
    const DecodedOp& op = stream_.ops[next_op_++];
    OpTiming t;
    t.offset = op.offset;
    t.kind = op.kind;
    const int64_t fetch_began = command_.fetch(op);
    busy_.emplace_back(fetch_began, command_.now());
    t.issue = t.release = t.start = t.end = command_.now();
    issue(op, t);
    if (t.end > t.start) busy_.emplace_back(t.start, t.end);
    account(op, t);
    for (const int64_t cycle : {t.release, t.end})
        if (cycle > now_) pending_.push_back(cycle);
    result_.ops.push_back(t);
    stopped_ = op.kind == OpKind::Stop;
    if (issued_all()) close();
}

// Hands the op to its unit: the command processor releases it once the unit's queue has room.
void TimingReplay::issue(const DecodedOp& op, OpTiming& t) {
    if (is_kernel_op(op.kind)) {
        t.unit = Unit::Kernel;
        command_.issue_into(kernel_.outstanding(), Unit::Kernel);
        t.release = command_.now();
        kernel_.issue(op, t.release, dma_.uses(), t);
    } else if (op.kind == OpKind::DmaStart) {
        t.unit = Unit::Dma;
        command_.issue_into(dma_.outstanding(), Unit::Dma);
        t.release = command_.now();
        dma_.issue(op, t.release, kernel_.uses(), t);
    } else if (op.kind == OpKind::DmaWait || op.kind == OpKind::KernelWait) {
        command_.wait_for(op.kind == OpKind::DmaWait ? dma_.outstanding() : kernel_.outstanding(), op);
        t.end = t.release = command_.now();
    } else if (op.kind == OpKind::PmuMask && op.pmu().enable != pmu_counting_) {
        if (pmu_counting_) result_.pmu_windows.emplace_back(pmu_window_start_, command_.now());
        else pmu_window_start_ = command_.now();
        pmu_counting_ = op.pmu().enable;
    }
}

// Adds the op to the totals, which stay within the timeline's range.
void TimingReplay::account(const DecodedOp& op, const OpTiming& t) {
    TimingTotals& totals = result_.totals;
    const int64_t duration = t.end - t.start;
    if (t.unit == Unit::Kernel) {
        totals.macs += t.cost.macs;
        totals.mac_active += std::min(t.cost.mac_cycles, duration);
        totals.output_active += std::min(t.cost.output_cycles, duration);
        totals.weight_decode_active += std::min(t.cost.weight_decode_cycles, duration);
    } else if (t.unit == Unit::Dma) {
        totals.dma_active += duration;
    }
    totals.command_words = command_.words_read();
    for (int m = 0; m < kMemoryKinds; ++m) {
        totals.traffic.read[m] += t.cost.traffic.read[m];
        totals.traffic.write[m] += t.cost.traffic.write[m];
    }
    totals.beats += port_beats(model_.memory(), t.cost.traffic);
    const std::string& source = model_.cost_context().source;
    check_timeline(source, op, {command_.now(), kernel_.free_at(), dma_.free_at(), totals.macs, totals.mac_active,
                                totals.output_active, totals.weight_decode_active, totals.dma_active,
                                totals.command_words});
    for (int m = 0; m < kMemoryKinds; ++m) check_timeline(source, op, {totals.traffic.read[m], totals.traffic.write[m]});
}

// The run's figures once every op is issued.
void TimingReplay::close() {
    TimingTotals& totals = result_.totals;
    totals.cycles = std::max({command_.now(), kernel_.free_at(), dma_.free_at()});
    if (pmu_counting_) result_.pmu_windows.emplace_back(pmu_window_start_, totals.cycles);
    totals.npu_active = union_length(std::move(busy_));
    totals.idle = totals.cycles - totals.npu_active;
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
