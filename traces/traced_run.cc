#include "traces/traced_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "emulator/isa/error.h"

namespace ethosu {

std::vector<int64_t> TracedRun::stream_starts() const {
    std::vector<int64_t> starts;
    int64_t at = 0;
    for (const auto& t : timing) {
        starts.push_back(at);
        at += t.totals.cycles;
    }
    return starts;
}

int64_t TracedRun::total_cycles() const {
    int64_t total = 0;
    for (const auto& t : timing) total += t.totals.cycles;
    return total;
}

void TracedRun::check_debug_db() const {
    if (!debug_db) return;
    std::set<std::pair<size_t, uint32_t>> kernel_ops;
    for (size_t s = 0; s < streams.size(); ++s) {
        for (const DecodedOp& op : streams[s].ops) {
            if (!is_kernel_op(op.kind)) continue;
            kernel_ops.insert({s, op.offset});
            if (!debug_db->op_at(s, op.offset)) {
                throw Error({debug_db->source(), std::nullopt, "queue"},
                            fmt::format("the {} op at offset 0x{:x} of command stream {} is not in the queue; the "
                                        "database is not from the compilation of {}",
                                        op_kind_name(op.kind), op.offset, s, model));
            }
        }
    }
    for (const auto& [stream, offset] : debug_db->queue_offsets()) {
        if (!kernel_ops.contains({stream, offset})) {
            throw Error({debug_db->source(), std::nullopt, "queue"},
                        fmt::format("offset 0x{:x} of command stream {} is not a kernel op of {}; the database is "
                                    "not from its compilation",
                                    offset, stream, model));
        }
    }
}

std::string op_description(const DecodedOp& op) {
    static constexpr std::string_view pool_modes[] = {"max", "average", "reduce_sum", "sum",
                                                      "none", "min", "argmax_x", "argmax_y"};
    static constexpr std::string_view elementwise_modes[] = {
        "mul", "add", "sub", "min", "max", "lrelu", "abs", "clz", "shr", "shl", "lsr",
        "div", "cmp_eq", "cmp_ne", "cmp_ge", "cmp_gt", "and", "or", "xor", "not", "and_not"};
    static constexpr std::string_view resize_modes[] = {"bilinear", "replicate", "nearest"};
    const std::string_view kind = op_kind_name(op.kind);
    switch (op.kind) {
    case OpKind::Pool: return fmt::format("{}.{}", kind, pool_modes[static_cast<size_t>(op.pool)]);
    case OpKind::Elementwise:
        return fmt::format("{}.{}", kind, elementwise_modes[static_cast<size_t>(op.elementwise.mode)]);
    case OpKind::Resize: return fmt::format("{}.{}", kind, resize_modes[static_cast<size_t>(op.resize.mode)]);
    default: return std::string(kind);
    }
}

std::string op_label(const TracedRun& run, size_t stream, const DecodedOp& op) {
    if (run.debug_db) {
        if (const VelaOp* vela = run.debug_db->op_at(stream, op.offset))
            return fmt::format("{} {}", vela->original_operator, vela->name);
    }
    return fmt::format("{} @0x{:06x}", op_description(op), op.offset);
}

int memory_port(const MemorySystem& memory, MemoryKind kind) {
    for (int port = 0; port < 2; ++port) {
        if (memory.port_memory(port) == kind) return port;
    }
    return -1;
}

Bandwidth bandwidth_over_time(const TracedRun& run) {
    struct Flow {
        int64_t start, end;
        const MemoryTraffic* traffic;
    };
    Bandwidth out;
    std::vector<Flow> flows;
    const auto starts = run.stream_starts();
    for (size_t s = 0; s < run.timing.size(); ++s) {
        for (const OpTiming& t : run.timing[s].ops) {
            if (t.unit == Unit::Command || t.end <= t.start) continue;
            flows.push_back({starts[s] + t.start, starts[s] + t.end, &t.cost.traffic});
            for (int m = 0; m < kMemoryKinds; ++m)
                out.used[m] = out.used[m] || t.cost.traffic.read[m] || t.cost.traffic.write[m];
        }
    }
    std::vector<int64_t> cycles;
    for (const auto& f : flows) {
        cycles.push_back(f.start);
        cycles.push_back(f.end);
    }
    std::sort(cycles.begin(), cycles.end());
    cycles.erase(std::unique(cycles.begin(), cycles.end()), cycles.end());
    for (const int64_t at : cycles) {
        BandwidthStep step{.cycle = at};
        for (const auto& f : flows) {
            if (f.start > at || f.end <= at) continue;
            const double duration = double(f.end - f.start);
            for (int m = 0; m < kMemoryKinds; ++m) {
                step.read[m] += double(f.traffic->read[m]) / duration;
                step.write[m] += double(f.traffic->write[m]) / duration;
            }
        }
        out.steps.push_back(step);
    }
    return out;
}

void write_trace_file(const std::string& path, const std::string& text, std::string_view option) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw Error({path, std::nullopt, std::string(option)}, "cannot write file");
}

int64_t command_release(const OpTiming& t) {
    if (t.unit == Unit::Kernel) return t.start;
    if (t.kind == OpKind::DmaWait || t.kind == OpKind::KernelWait) return t.end;
    return t.issue;
}

}  // namespace ethosu
