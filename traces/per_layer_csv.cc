#include "traces/per_layer_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

namespace ethosu {
namespace {

// Vela's percentage: 100 when the whole is zero.
double percentage(double part, double whole) { return whole == 0 ? 100.0 : part * 100.0 / whole; }

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
        "MAC Count",         "Network% (MAC)", "Util% (MAC)", "Name",     "Alignment"};
    return header;
}

std::vector<PerLayerRow> per_layer_rows(const TracedRun& run) {
    run.check_debug_db();
    struct KernelOp {
        size_t stream, index;
    };
    std::vector<KernelOp> kernel_ops;
    std::vector<KernelOpSummary> summaries;
    for (size_t s = 0; s < run.timing.size(); ++s) {
        for (size_t i = 0; i < run.timing[s].ops.size(); ++i) {
            if (run.timing[s].ops[i].unit != Unit::Kernel) continue;
            kernel_ops.push_back({s, i});
            summaries.push_back({op_description(run.streams.at(s).ops.at(i)), run.timing[s].ops[i].cost.macs});
        }
    }

    // The rows, and the row of each kernel op.
    std::vector<PerLayerRow> rows;
    std::vector<size_t> row_of(kernel_ops.size());
    const auto* vela_layers = run.vela_per_layer ? &run.vela_per_layer->layers() : nullptr;
    const auto aligned = vela_layers && !run.debug_db ? align_with_vela(summaries, *vela_layers) : std::nullopt;
    if (run.debug_db) {
        std::map<const VelaOp*, size_t> index;
        const auto& ops = run.debug_db->ops();
        // The report and the database list the same ops in the same order when they come from
        // one compilation: Vela's figures go beside ours only then.
        const bool same_rows = vela_layers && vela_layers->size() == ops.size() &&
                               std::equal(ops.begin(), ops.end(), vela_layers->begin(),
                                          [](const VelaOp& op, const VelaLayer& layer) { return op.name == layer.name; });
        for (size_t r = 0; r < ops.size(); ++r) {
            const VelaOp& vela = ops[r];
            index[&vela] = r;
            rows.push_back({.original_operator = vela.original_operator, .op = vela.op,
                            .target = vela.op == "Passthrough" ? "CPU" : "NPU", .name = vela.display_name(),
                            .traffic = {}, .alignment = std::string(kAlignmentDebugDb),
                            .vela = same_rows ? &(*vela_layers)[r] : nullptr});
        }
        for (size_t k = 0; k < kernel_ops.size(); ++k) {
            const auto [s, i] = kernel_ops[k];
            row_of[k] = index.at(run.debug_db->op_at(s, run.streams.at(s).ops.at(i).offset));
        }
    } else if (aligned) {
        for (const VelaLayer& layer : *vela_layers) {
            rows.push_back({.original_operator = layer.original_operator, .op = layer.op, .target = layer.target,
                            .name = layer.name, .traffic = {}, .alignment = std::string(kAlignmentVelaReport), .vela = &layer});
        }
        row_of = *aligned;
    } else {
        const std::string_view alignment = vela_layers ? kAlignmentUnaligned : kAlignmentNone;
        for (size_t k = 0; k < kernel_ops.size(); ++k) {
            const auto [s, i] = kernel_ops[k];
            const DecodedOp& op = run.streams.at(s).ops.at(i);
            row_of[k] = rows.size();
            rows.push_back({.original_operator = summaries[k].description, .op = summaries[k].description,
                            .target = "NPU", .name = op_label(run, s, op), .traffic = {}, .alignment = std::string(alignment)});
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
    MemoryTraffic dma_traffic;
    auto add_traffic = [](MemoryTraffic& to, const MemoryTraffic& from) {
        for (int m = 0; m < kMemoryKinds; ++m) {
            to.read[m] += from.read[m];
            to.write[m] += from.write[m];
        }
    };
    size_t next_kernel = 0;
    std::optional<size_t> last;  // the row of the latest kernel op
    for (size_t s = 0; s < run.timing.size(); ++s) {
        for (const OpTiming& t : run.timing[s].ops) {
            if (t.unit == Unit::Dma) {
                for (int m = 0; m < kMemoryKinds; ++m) dma_access[m] += t.access_cycles[m];
                add_traffic(dma_traffic, t.cost.traffic);
                continue;
            }
            if (t.unit != Unit::Kernel) continue;
            last = row_of[next_kernel++];
            PerLayerRow& row = rows[*last];
            const int64_t end = starts[s] + t.end;
            row.op_cycles += end - accounted_to;
            accounted_to = end;
            row.npu_cycles += t.cost.compute_cycles;
            for (int m = 0; m < kMemoryKinds; ++m) row.access_cycles[m] += t.access_cycles[m] + dma_access[m];
            add_traffic(row.traffic, t.cost.traffic);
            add_traffic(row.traffic, dma_traffic);
            dma_access = {};
            dma_traffic = {};
            row.macs += t.cost.macs;
        }
    }
    if (last) {
        rows[*last].op_cycles += run.total_cycles() - accounted_to;
        for (int m = 0; m < kMemoryKinds; ++m) rows[*last].access_cycles[m] += dma_access[m];
        add_traffic(rows[*last].traffic, dma_traffic);
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
        out += fmt::format("{},{},{},,,{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r.original_operator),
                           csv_field(r.op), r.target, r.op_cycles, percentage(double(r.op_cycles), double(total_cycles)),
                           r.npu_cycles, ac(MemoryKind::Sram), ac(MemoryKind::Dram), ac(MemoryKind::OnChipFlash),
                           ac(MemoryKind::OffChipFlash), r.macs, percentage(double(r.macs), double(total_macs)),
                           percentage(double(r.macs), double(r.op_cycles) * macs_per_cycle), csv_field(r.name), r.alignment);
    }
    return out;
}

void write_per_layer_csv(const TracedRun& run, const std::string& path) {
    write_trace_file(path, per_layer_csv(run), "--per-layer");
}

}  // namespace ethosu
