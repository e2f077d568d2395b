#include "frontend/cli/pmu_report.h"

#include <fmt/format.h>

#include <cctype>

#include "emulator/isa/error.h"

namespace ethosu {

std::vector<uint32_t> pmu_events(const NpuConfig& npu, const std::vector<std::string>& names) {
    const int counters = pmu_event_counters(npu.generation);
    if (static_cast<int>(names.size()) > counters) {
        throw Error({"--pmu", std::nullopt, {}},
                    fmt::format("{} events requested; {} has {} event counters", names.size(), npu.name, counters));
    }
    std::vector<uint32_t> events;
    for (const auto& name : names) {
        const auto id = pmu_event_id(npu.generation, name);
        if (!id || !pmu_event_modelled(npu.generation, *id)) {
            std::string valid;
            for (const uint32_t e : pmu_modelled_events(npu.generation))
                valid += (valid.empty() ? "" : ", ") + std::string(pmu_event_name(npu.generation, e));
            throw Error({"--pmu", std::nullopt, name},
                        fmt::format("{} on {}; modelled events: {}", id ? "not modelled" : "no such event", npu.name, valid));
        }
        events.push_back(*id);
    }
    return events;
}

std::vector<ProfilerLine> mlek_profile(const MemorySystem& memory, const std::vector<TimingResult>& timing,
                                       const NpuConfig& npu, const std::vector<uint32_t>& events,
                                       const PmuReading& reading) {
    const uint32_t active = *pmu_event_id(npu.generation, "NPU_ACTIVE");
    const uint32_t idle = *pmu_event_id(npu.generation, "NPU_IDLE");
    std::vector<ProfilerLine> lines;
    for (size_t i = 0; i < events.size(); ++i) {
        if (events[i] == active || events[i] == idle) continue;  // among the closing lines
        std::string_view name = pmu_event_name(npu.generation, events[i]);
        if (name.starts_with("NPU_")) name.remove_prefix(4);
        const char* unit = name.find("BEAT") != std::string_view::npos    ? "beats"
                           : name.find("TRANS") != std::string_view::npos ? "transactions"
                                                                         : "cycles";
        lines.push_back({fmt::format("NPU {}", name), unit, reading.counters[i]});
    }
    const PmuReading activity = read_pmu(memory, timing, {active, idle});
    lines.push_back({"NPU ACTIVE", "cycles", activity.counters[0]});
    lines.push_back({"NPU IDLE", "cycles", activity.counters[1]});
    lines.push_back({"NPU TOTAL", "cycles", reading.cycle_counter});
    return lines;
}

nlohmann::ordered_json profile_json(const std::vector<ProfilerLine>& lines) {
    nlohmann::ordered_json profile = nlohmann::ordered_json::object();
    for (const auto& line : lines) {
        std::string key = line.name + (line.unit == "cycles" ? "_cycles" : "");
        for (char& c : key) c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        profile[key] = line.count;
    }
    return profile;
}

nlohmann::ordered_json pmu_json(const NpuConfig& npu, const std::vector<uint32_t>& events, const PmuReading& reading) {
    nlohmann::ordered_json counters = nlohmann::ordered_json::array();
    for (size_t i = 0; i < events.size(); ++i) {
        counters.push_back({{"counter", i}, {"event", pmu_event_name(npu.generation, events[i])}, {"id", events[i]},
                            {"count", reading.counters[i]}});
    }
    return {{"cycle_counter", reading.cycle_counter}, {"event_counters", counters}};
}

}  // namespace ethosu
