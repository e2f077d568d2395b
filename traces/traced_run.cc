#include "traces/traced_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>

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

std::vector<int64_t> TracedRun::trace_starts() const {
    if (!timeline) return stream_starts();
    if (timeline->starts.size() != timing.size())
        throw std::logic_error("a stream timeline of another number of streams than the run's");
    return timeline->starts;
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
    case OpKind::Pool: return fmt::format("{}.{}", kind, pool_modes[static_cast<size_t>(op.kernel().pool())]);
    case OpKind::Elementwise:
        return fmt::format("{}.{}", kind, elementwise_modes[static_cast<size_t>(op.kernel().elementwise().mode)]);
    case OpKind::Resize: return fmt::format("{}.{}", kind, resize_modes[static_cast<size_t>(op.kernel().resize().mode)]);
    default: return std::string(kind);
    }
}

std::string op_label(const TracedRun& run, size_t stream, const DecodedOp& op) {
    if (run.debug_db) {
        if (const VelaOp* vela = run.debug_db->op_at(stream, op.offset))
            return fmt::format("{} {}", vela->original_operator, vela->short_name());
    }
    return fmt::format("{} @0x{:06x}", op_description(op), op.offset);
}

int memory_port(const MemorySystem& memory, MemoryKind kind) {
    for (int port = 0; port < 2; ++port) {
        if (memory.port_memory(port) == kind) return port;
    }
    return -1;
}

CappedBandwidth capped_at_peak(const Bandwidth& bandwidth, const MemorySystem& memory, int64_t end) {
    CappedBandwidth out{.bandwidth = bandwidth};
    auto& steps = out.bandwidth.steps;
    for (int m = 0; m < kMemoryKinds; ++m) {
        if (!bandwidth.used[m]) continue;
        const double capacity = memory.bytes_per_cycle(static_cast<MemoryKind>(m));
        double read_backlog = 0, write_backlog = 0;
        auto serve = [&](double& rate, double& backlog, double cycles) {
            const double wanted = backlog + rate * cycles;
            const double served = std::min(wanted, capacity * cycles);
            rate = served / cycles;
            backlog = wanted - served;
        };
        for (size_t k = 0; k < steps.size(); ++k) {
            const int64_t next = k + 1 < steps.size() ? steps[k + 1].cycle : std::max(end, steps[k].cycle);
            const double cycles = double(next - steps[k].cycle);
            if (cycles <= 0) continue;  // a step of no length moves nothing
            serve(steps[k].read[m], read_backlog, cycles);
            serve(steps[k].write[m], write_backlog, cycles);
        }
        out.read_past_end[m] = read_backlog;
        out.write_past_end[m] = write_backlog;
    }
    return out;
}

Bandwidth bandwidth_over_time(const TracedRun& run, const std::vector<int64_t>& starts) {
    // A sweep over the ops' starts and ends: each adds or removes its rate, so a run of many ops
    // (up to --max-commands) costs n log n, not n^2.
    struct Edge {
        int64_t cycle;
        int sign;  // +1 at the op's start, -1 at its end
        const OpTiming* op;
        double duration;
    };
    Bandwidth out;
    std::vector<Edge> edges;
    for (size_t s = 0; s < run.timing.size(); ++s) {
        for (const OpTiming& t : run.timing[s].ops) {
            if (t.unit == Unit::Command || t.end <= t.start) continue;
            const double duration = double(t.end - t.start);
            edges.push_back({starts[s] + t.start, +1, &t, duration});
            edges.push_back({starts[s] + t.end, -1, &t, duration});
            for (int m = 0; m < kMemoryKinds; ++m)
                out.used[m] = out.used[m] || t.cost.traffic.read[m] || t.cost.traffic.write[m];
        }
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.cycle < b.cycle; });
    BandwidthStep running;
    int64_t active = 0;
    for (size_t i = 0; i < edges.size();) {
        running.cycle = edges[i].cycle;
        for (; i < edges.size() && edges[i].cycle == running.cycle; ++i) {
            const Edge& e = edges[i];
            active += e.sign;
            for (int m = 0; m < kMemoryKinds; ++m) {
                running.read[m] += e.sign * double(e.op->cost.traffic.read[m]) / e.duration;
                running.write[m] += e.sign * double(e.op->cost.traffic.write[m]) / e.duration;
            }
        }
        // Nothing running moves nothing: no rounding left over from the sums.
        if (active == 0) running = {.cycle = running.cycle};
        out.steps.push_back(running);
    }
    return out;
}

void write_trace_file(const std::string& path, const std::string& text, std::string_view option) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw Error({path, std::nullopt, std::string(option)}, "cannot write file", ErrorKind::Io);
}

}  // namespace ethosu
