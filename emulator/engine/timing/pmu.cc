#include "emulator/engine/timing/pmu.h"

#include <algorithm>
#include <cmath>

#include "emulator/isa/description.h"

namespace ethosu {
namespace {

// The events the model counts, by U55's names in the description. Every generation gives them
// the same numbers (U85 names the AXI0 events SRAM_* and the AXI1 events EXT_*, and lacks the
// 8/16-bit MAC and AO events): tests/timing/test_timeline.cc checks it.
constexpr uint32_t event(isa::u55::pmu_event e) { return static_cast<uint32_t>(e); }
using U55Event = isa::u55::pmu_event;
enum Event : uint32_t {
    kCycle = event(U55Event::CYCLE),
    kNpuIdle = event(U55Event::NPU_IDLE),
    kNpuActive = event(U55Event::NPU_ACTIVE),
    kMacActive = event(U55Event::MAC_ACTIVE),
    kMacActive8 = event(U55Event::MAC_ACTIVE_8BIT),
    kMacActive16 = event(U55Event::MAC_ACTIVE_16BIT),
    kAoActive = event(U55Event::AO_ACTIVE),
    kAoActive8 = event(U55Event::AO_ACTIVE_8BIT),
    kAoActive16 = event(U55Event::AO_ACTIVE_16BIT),
    kWdActive = event(U55Event::WD_ACTIVE),
    kAxi0ReadAccepted = event(U55Event::AXI0_RD_TRANS_ACCEPTED),
    kAxi0ReadCompleted = event(U55Event::AXI0_RD_TRANS_COMPLETED),
    kAxi0ReadBeats = event(U55Event::AXI0_RD_DATA_BEAT_RECEIVED),
    kAxi0WriteAccepted = event(U55Event::AXI0_WR_TRANS_ACCEPTED),
    kAxi0WriteBeats = event(U55Event::AXI0_WR_DATA_BEAT_WRITTEN),
    kAxi1ReadAccepted = event(U55Event::AXI1_RD_TRANS_ACCEPTED),
    kAxi1ReadCompleted = event(U55Event::AXI1_RD_TRANS_COMPLETED),
    kAxi1ReadBeats = event(U55Event::AXI1_RD_DATA_BEAT_RECEIVED),
    kAxi1WriteAccepted = event(U55Event::AXI1_WR_TRANS_ACCEPTED),
    kAxi1WriteBeats = event(U55Event::AXI1_WR_DATA_BEAT_WRITTEN),
};

constexpr uint32_t kModelled[] = {kCycle, kNpuIdle, kNpuActive, kMacActive, kMacActive8, kMacActive16,
                                  kAoActive, kAoActive8, kAoActive16, kWdActive, kAxi0ReadAccepted,
                                  kAxi0ReadCompleted, kAxi0ReadBeats, kAxi0WriteAccepted, kAxi0WriteBeats,
                                  kAxi1ReadAccepted, kAxi1ReadCompleted, kAxi1ReadBeats, kAxi1WriteAccepted,
                                  kAxi1WriteBeats};

const isa::EnumDesc* event_enum(Generation g) {
    for (const auto& e : isa::describe(g).enums)
        if (e.name == "pmu_event") return &e;
    return nullptr;
}

// The share of [start, end) inside the windows; an instant op counts whole if inside one.
double window_share(int64_t start, int64_t end, const std::vector<std::pair<int64_t, int64_t>>& windows) {
    if (end <= start) {
        for (const auto& [b, e] : windows)
            if (start >= b && start < e) return 1.0;
        return 0.0;
    }
    int64_t inside = 0;
    for (const auto& [b, e] : windows) inside += std::max<int64_t>(0, std::min(end, e) - std::max(start, b));
    return double(inside) / double(end - start);
}

}  // namespace

int pmu_event_counters(Generation g) { return isa::describe(g).reg(isa::Reg::PMEVCNTR)->count; }

std::optional<uint32_t> pmu_event_id(Generation g, std::string_view name) {
    // Arm's core driver (hal_ethos_u's pmu_ethosu.h) names each event ETHOSU_PMU_<register name>.
    if (name.starts_with("ETHOSU_PMU_")) name.remove_prefix(std::string_view("ETHOSU_PMU_").size());
    if (const auto* e = event_enum(g))
        for (const auto& v : e->values)
            if (v.name == name) return v.value;
    return std::nullopt;
}

std::string_view pmu_event_name(Generation g, uint32_t event) {
    const auto* e = event_enum(g);
    return e ? e->value_name(event) : std::string_view{};
}

bool pmu_event_modelled(Generation g, uint32_t event) {
    return !pmu_event_name(g, event).empty() && std::find(std::begin(kModelled), std::end(kModelled), event) != std::end(kModelled);
}

std::vector<uint32_t> pmu_modelled_events(Generation g) {
    std::vector<uint32_t> events;
    for (uint32_t e : kModelled)
        if (pmu_event_modelled(g, e)) events.push_back(e);
    return events;
}

PmuReading read_pmu(const MemorySystem& memory, const std::vector<TimingResult>& streams,
                    const std::vector<uint32_t>& events, bool honour_pmu_mask) {
    std::vector<double> counts(events.size(), 0.0);
    PmuReading reading;
    auto add = [&](uint32_t event, double value) {
        for (size_t i = 0; i < events.size(); ++i)
            if (events[i] == event) counts[i] += value;
    };
    for (const TimingResult& stream : streams) {
        const std::vector<std::pair<int64_t, int64_t>> whole_run{{0, stream.totals.cycles}};
        const auto& windows = honour_pmu_mask ? stream.pmu_windows : whole_run;
        int64_t window_cycles = 0, active_cycles = 0;
        for (const auto& [b, e] : windows) {
            window_cycles += e - b;
            active_cycles += std::max<int64_t>(0, std::min(e, stream.totals.cycles) - b);
        }
        reading.cycle_counter += static_cast<uint64_t>(window_cycles);
        add(kCycle, double(window_cycles));
        add(kNpuActive, double(active_cycles));
        add(kNpuIdle, double(window_cycles - active_cycles));
        for (const OpTiming& op : stream.ops) {
            const double share = window_share(op.start, op.end, windows);
            if (share == 0.0) continue;
            const int64_t duration = op.end - op.start;
            if (op.unit == Unit::Kernel) {
                const double mac = double(std::min(op.cost.mac_cycles, duration)) * share;
                const double ao = double(std::min(op.cost.output_cycles, duration)) * share;
                add(kMacActive, mac);
                add(op.ifm_bits == 16 ? kMacActive16 : kMacActive8, op.ifm_bits <= 16 ? mac : 0.0);
                add(kAoActive, ao);
                add(op.ofm_bits == 16 ? kAoActive16 : kAoActive8, op.ofm_bits <= 16 ? ao : 0.0);
                add(kWdActive, double(std::min(op.cost.weight_decode_cycles, duration)) * share);
            }
            const PortBeats beats = port_beats(memory, op.cost.traffic);
            add(kAxi0ReadBeats, double(beats.read[0]) * share);
            add(kAxi0WriteBeats, double(beats.write[0]) * share);
            add(kAxi1ReadBeats, double(beats.read[1]) * share);
            add(kAxi1WriteBeats, double(beats.write[1]) * share);
            // Reads complete as they are accepted: a run ends with none outstanding.
            add(kAxi0ReadAccepted, double(beats.read_transactions[0]) * share);
            add(kAxi0ReadCompleted, double(beats.read_transactions[0]) * share);
            add(kAxi1ReadAccepted, double(beats.read_transactions[1]) * share);
            add(kAxi1ReadCompleted, double(beats.read_transactions[1]) * share);
            add(kAxi0WriteAccepted, double(beats.write_transactions[0]) * share);
            add(kAxi1WriteAccepted, double(beats.write_transactions[1]) * share);
        }
    }
    reading.counters.reserve(counts.size());
    for (double c : counts) reading.counters.push_back(static_cast<uint64_t>(std::llround(c)));
    return reading;
}

}  // namespace ethosu
