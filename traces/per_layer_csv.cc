#include "traces/per_layer_csv.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <optional>

#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// Vela's percentage: 100 when the whole is zero.
double percentage(double part, double whole) { return whole == 0 ? 100.0 : part * 100.0 / whole; }

// A DMA's access cycles on a memory: the bytes it moves there over the memory's bandwidth, as
// the timing model counts them for kernel ops.
int64_t access_cycles(const MemorySystem& memory, const MemoryTraffic& traffic, int m) {
    const int64_t bytes = traffic.read[m] + traffic.write[m];
    return bytes ? static_cast<int64_t>(double(bytes) / memory.bytes_per_cycle(static_cast<MemoryKind>(m))) : 0;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace

const std::vector<std::string>& per_layer_header() {
    static const std::vector<std::string> header = {
        "Original Operator", "NNG Operator",  "Target",    "Staging Usage",  "Peak% (Staging)", "Op Cycles",
        "Network% (cycles)", "NPU",           "SRAM AC",   "DRAM AC",        "OnFlash AC",      "OffFlash AC",
        "MAC Count",         "Network% (MAC)", "Util% (MAC)", "Name"};
    return header;
}

std::vector<PerLayerRow> per_layer_rows(const TracedRun& run) {
    run.check_debug_db();
    std::vector<PerLayerRow> rows;
    std::map<const VelaOp*, size_t> row_of;
    if (run.debug_db) {
        for (const VelaOp& vela : run.debug_db->ops()) {
            row_of[&vela] = rows.size();
            rows.push_back({vela.original_operator, vela.op, vela.op == "Passthrough" ? "CPU" : "NPU", 0, 0,
                            {}, 0, vela.name});
        }
    }
    // Each kernel op's share of the timeline runs from the end of the previous kernel op (or
    // the start of the run) to its own end: the commands, DMA waits and stalls before it count
    // as its cost. The last one also takes whatever runs after it, so the shares sum to the run.
    // A DMA counts towards the next kernel op: Vela issues a layer's weight and LUT transfers
    // before the layer, and so does its per-layer report.
    const auto starts = run.stream_starts();
    int64_t accounted_to = 0;
    std::array<int64_t, kMemoryKinds> dma_access{};
    std::optional<size_t> last;  // the row of the latest kernel op
    for (size_t s = 0; s < run.timing.size(); ++s) {
        const auto& timed = run.timing[s].ops;
        for (size_t i = 0; i < timed.size(); ++i) {
            const OpTiming& t = timed[i];
            if (t.unit == Unit::Dma) {
                for (int m = 0; m < kMemoryKinds; ++m) dma_access[m] += access_cycles(run.memory, t.cost.traffic, m);
                continue;
            }
            if (t.unit != Unit::Kernel) continue;
            const DecodedOp& op = run.streams.at(s).ops.at(i);
            if (run.debug_db) {
                last = row_of.at(run.debug_db->op_at(s, op.offset));
            } else {
                const std::string description = op_description(op);
                last = rows.size();
                rows.push_back({description, description, "NPU", 0, 0, {}, 0, op_label(run, s, op)});
            }
            PerLayerRow& row = rows[*last];
            const int64_t end = starts[s] + t.end;
            row.op_cycles += end - accounted_to;
            accounted_to = end;
            row.npu_cycles += t.cost.compute_cycles;
            for (int m = 0; m < kMemoryKinds; ++m) row.access_cycles[m] += t.access_cycles[m] + dma_access[m];
            dma_access = {};
            row.macs += t.cost.macs;
        }
    }
    if (last) {
        rows[*last].op_cycles += run.total_cycles() - accounted_to;
        for (int m = 0; m < kMemoryKinds; ++m) rows[*last].access_cycles[m] += dma_access[m];
    }
    return rows;
}

std::string per_layer_csv(const TracedRun& run) {
    const auto rows = per_layer_rows(run);
    int64_t total_cycles = 0, total_macs = 0;
    for (const auto& r : rows) {
        total_cycles += r.op_cycles;
        total_macs += r.macs;
    }
    std::string out;
    const auto& header = per_layer_header();
    for (size_t i = 0; i < header.size(); ++i) {
        if (i) out += ',';
        out += csv_field(header[i]);
    }
    out += '\n';
    const double macs_per_cycle = run.npu.macs;
    for (const auto& r : rows) {
        const auto ac = [&](MemoryKind k) { return r.access_cycles[static_cast<size_t>(k)]; };
        out += fmt::format("{},{},{},,,{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r.original_operator),
                           csv_field(r.op), r.target, r.op_cycles, percentage(double(r.op_cycles), double(total_cycles)),
                           r.npu_cycles, ac(MemoryKind::Sram), ac(MemoryKind::Dram), ac(MemoryKind::OnChipFlash),
                           ac(MemoryKind::OffChipFlash), r.macs, percentage(double(r.macs), double(total_macs)),
                           percentage(double(r.macs), double(r.op_cycles) * macs_per_cycle), csv_field(r.name));
    }
    return out;
}

void write_per_layer_csv(const TracedRun& run, const std::string& path) {
    const std::string text = per_layer_csv(run);
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw Error({path, std::nullopt, "--per-layer"}, "cannot write file");
}

}  // namespace ethosu
