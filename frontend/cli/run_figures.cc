#include "frontend/cli/run_figures.h"

#include <fmt/format.h>

#include "frontend/cli/tensor_files.h"

namespace ethosu {

using json = nlohmann::ordered_json;

std::vector<std::vector<uint8_t>> read_input_files(const LoadedModel& model, const std::vector<std::string>& files) {
    std::vector<std::vector<uint8_t>> inputs(files.size());
    for (size_t i = 0; i < files.size() && i < model.inputs.size(); ++i)
        inputs[i] = read_tensor_file(files[i], model.inputs[i], i);
    return inputs;
}

json memories_json(const MemoryTraffic& traffic) {
    json per_memory = json::object();
    for (int m = 0; m < kMemoryKinds; ++m) {
        if (traffic.read[m] == 0 && traffic.write[m] == 0) continue;
        per_memory[std::string(memory_kind_name(static_cast<MemoryKind>(m)))] = {{"read_bytes", traffic.read[m]},
                                                                                 {"write_bytes", traffic.write[m]}};
    }
    return per_memory;
}

json traffic_json(const MemorySystem& memory, const MemoryTraffic& traffic, const PortBeats& beats) {
    json ports = json::array();
    for (size_t p = 0; p < 2; ++p) {
        ports.push_back({{"port", fmt::format("AXI{}", p)},
                         {"memory", memory_kind_name(memory.port_memory(static_cast<int>(p)))},
                         {"read_beats", beats.read[p]},
                         {"write_beats", beats.write[p]},
                         {"read_transactions", beats.read_transactions[p]},
                         {"write_transactions", beats.write_transactions[p]}});
    }
    return {{"memories", memories_json(traffic)}, {"axi", ports}};
}

json timing_json(const RunResult& result) { return timing_json(result.memory, result.timing); }

json timing_json(const MemorySystem& memory, std::span<const TimingResult> streams) {
    TimingTotals sum;
    MemoryTraffic traffic;
    PortBeats beats;
    for (const auto& t : streams) {
        beats += t.totals.beats;
        sum.cycles += t.totals.cycles;
        sum.npu_active += t.totals.npu_active;
        sum.idle += t.totals.idle;
        sum.macs += t.totals.macs;
        for (int m = 0; m < kMemoryKinds; ++m) {
            traffic.read[m] += t.totals.traffic.read[m];
            traffic.write[m] += t.totals.traffic.write[m];
        }
    }
    const auto& sys = memory.system;
    json out = {{"total", sum.cycles}, {"npu_active", sum.npu_active}, {"idle", sum.idle}};
    return {{"system_config", sys.name},
            {"memory_mode", memory.mode.name},
            {"core_clock_hz", sys.core_clock},
            {"cycles", out},
            {"inference_seconds", double(sum.cycles) / sys.core_clock},
            {"macs", sum.macs},
            {"traffic", traffic_json(memory, traffic, beats)}};
}

json ops_json(const DecodedStream& stream, const TimingResult& timing) {
    json ops = json::array();
    for (size_t i = 0; i < timing.ops.size(); ++i) {
        const OpTiming& t = timing.ops[i];
        const DecodedOp& decoded = stream.ops.at(i);
        json op = {{"offset", decoded.offset}, {"kind", op_kind_name(decoded.kind)}, {"start", t.start}, {"end", t.end}};
        if (t.unit == Unit::Kernel) {
            op["compute_cycles"] = t.cost.compute_cycles;
            op["macs"] = t.cost.macs;
        }
        if (t.unit != Unit::Command) op["traffic"] = memories_json(t.cost.traffic);
        ops.push_back(op);
    }
    return ops;
}

}  // namespace ethosu
