#include "traces/layer_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "traces/debug_db.h"

namespace ethosu {

std::string bound_by(const TracedRun& run, const PerLayerRow& row) {
    int busiest = -1;
    for (int m = 0; m < kMemoryKinds; ++m) {
        if (row.access_cycles[m] > row.npu_cycles && (busiest < 0 || row.access_cycles[m] > row.access_cycles[busiest]))
            busiest = m;
    }
    if (busiest < 0) return "compute";
    const auto kind = static_cast<MemoryKind>(busiest);
    const int port = memory_port(run.memory, kind);
    return port < 0 ? std::string(memory_kind_name(kind)) : fmt::format("AXI{} {}", port, memory_kind_name(kind));
}

namespace {
// Our descriptions carry a mode ("pool.average"); the type is the kind.
std::string operator_type(const PerLayerRow& row) { return row.op.substr(0, row.op.find('.')); }
}  // namespace

std::vector<OperatorTypeTime> time_by_operator_type(const std::vector<PerLayerRow>& rows) {
    std::map<std::string, OperatorTypeTime> by_type;
    for (const PerLayerRow& row : rows) {
        if (row.op_cycles == 0) continue;
        OperatorTypeTime& t = by_type[operator_type(row)];
        t.type = operator_type(row);
        t.cycles += row.op_cycles;
        ++t.layers;
    }
    std::vector<OperatorTypeTime> out;
    for (auto& [type, t] : by_type) out.push_back(t);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.cycles > b.cycles; });
    return out;
}

std::string layer_summary_text(const TracedRun& run, const std::vector<PerLayerRow>& rows, size_t top) {
    const int64_t total = std::accumulate(rows.begin(), rows.end(), int64_t{0},
                                          [](int64_t sum, const PerLayerRow& r) { return sum + r.op_cycles; });
    auto share = [&](int64_t cycles) { return total ? 100.0 * double(cycles) / double(total) : 0.0; };
    std::vector<size_t> order(rows.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows[a].op_cycles > rows[b].op_cycles; });
    const bool have_vela = std::any_of(rows.begin(), rows.end(), [](const PerLayerRow& r) { return r.vela != nullptr; });

    std::string out = fmt::format("top {} layers by cycles (of {} layers; cycles include the commands, DMA waits "
                                  "and stalls before each):\n",
                                  std::min(top, rows.size()), rows.size());
    out += fmt::format("  {:>4}  {:<40} {:<18} {:>10} {:>6} {:>12} {:>6}", "#", "layer", "operator", "cycles", "share",
                       "MACs", "util");
    if (have_vela) out += fmt::format(" {:>10} {:>6}", "Vela", "ours/V");
    out += "  bound by\n";
    for (size_t k = 0; k < std::min(top, order.size()); ++k) {
        const PerLayerRow& row = rows[order[k]];
        if (row.op_cycles == 0) break;
        std::string name = short_layer_name(row.name);
        if (name.size() > 40) name = "..." + name.substr(name.size() - 37);
        const double util = 100.0 * double(row.macs) / (double(row.op_cycles) * run.npu.macs);
        out += fmt::format("  {:>4}  {:<40} {:<18} {:>10} {:>5.1f}% {:>12} {:>5.1f}%", order[k], name, row.op,
                           row.op_cycles, share(row.op_cycles), row.macs, util);
        if (have_vela) {
            if (row.vela && row.vela->op_cycles > 0)
                out += fmt::format(" {:>10} {:>6.2f}", row.vela->op_cycles, double(row.op_cycles) / row.vela->op_cycles);
            else
                out += fmt::format(" {:>10} {:>6}", "-", "-");
        }
        out += fmt::format("  {}\n", bound_by(run, row));
    }
    out += "time by operator type:\n";
    for (const OperatorTypeTime& t : time_by_operator_type(rows))
        out += fmt::format("  {:<24} {:>10} cycles {:>5.1f}%  ({} layer{})\n", t.type, t.cycles, share(t.cycles), t.layers,
                           t.layers == 1 ? "" : "s");
    return out;
}

}  // namespace ethosu
