#include "traces/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "emulator/isa/error.h"

namespace ethosu {
namespace {

using json = nlohmann::ordered_json;

constexpr int kPid = 1;

enum Track : int { CommandTrack = 1, KernelTrack, MacTrack, WeightDecoderTrack, OutputTrack, DmaTrack };

constexpr std::pair<Track, const char*> kTracks[] = {
    {CommandTrack, "command processor"}, {KernelTrack, "kernel ops"},     {MacTrack, "MAC array"},
    {WeightDecoderTrack, "weight decoder"}, {OutputTrack, "output stage"}, {DmaTrack, "DMA"},
};

class TraceWriter {
public:
    explicit TraceWriter(const TracedRun& run) : run_(run), us_per_cycle_(1e6 / run.memory.system.core_clock) {}

    json write() {
        metadata_events();
        const auto starts = run_.stream_starts();
        for (size_t s = 0; s < run_.timing.size(); ++s) {
            const auto& timed = run_.timing[s].ops;
            int64_t released = 0;  // where the command processor was before each op
            for (size_t i = 0; i < timed.size(); ++i) {
                op_events(s, starts[s], run_.streams.at(s).ops.at(i), timed[i], released);
                released = command_release(timed[i]);
            }
        }
        bandwidth_counters(starts);
        return {{"traceEvents", std::move(events_)}, {"displayTimeUnit", "ns"}, {"metadata", metadata()}};
    }

private:
    double us(int64_t cycle) const { return double(cycle) * us_per_cycle_; }

    void metadata_events() {
        auto meta = [&](const char* name, int tid, json args) {
            events_.push_back({{"name", name}, {"ph", "M"}, {"ts", 0}, {"pid", kPid}, {"tid", tid}, {"args", args}});
        };
        meta("process_name", 0, {{"name", fmt::format("NPU {}", run_.npu.name)}});
        for (const auto& [tid, name] : kTracks) {
            meta("thread_name", tid, {{"name", name}});
            meta("thread_sort_index", tid, {{"sort_index", int(tid)}});
        }
    }

    void complete(Track track, const std::string& name, const char* category, int64_t start, int64_t end, json args) {
        const double ts = us(start);
        events_.push_back({{"name", name}, {"cat", category}, {"ph", "X"}, {"ts", ts}, {"dur", us(end) - ts},
                           {"pid", kPid}, {"tid", int(track)}, {"args", std::move(args)}});
    }

    json per_memory(const std::array<int64_t, kMemoryKinds>& values) const {
        json out = json::object();
        for (int m = 0; m < kMemoryKinds; ++m) {
            if (values[m]) out[std::string(memory_kind_name(static_cast<MemoryKind>(m)))] = values[m];
        }
        return out;
    }

    json op_args(size_t stream, const DecodedOp& op, const OpTiming& t) const {
        json args = {{"stream", stream}, {"offset", op.offset}, {"kind", op_description(op)},
                     {"start_cycle", t.start}, {"cycles", t.end - t.start}};
        if (run_.debug_db) {
            if (const VelaOp* vela = run_.debug_db->op_at(stream, op.offset)) {
                args["vela_id"] = vela->id;
                args["vela_operator"] = vela->op;
                args["original_operator"] = vela->original_operator;
                args["layer"] = vela->name;
            }
        }
        return args;
    }

    void op_events(size_t stream, int64_t base, const DecodedOp& op, const OpTiming& t, int64_t released) {
        const std::string name = op_label(run_, stream, op);
        const int64_t release = command_release(t);
        complete(CommandTrack, name, "command", base + released, base + release,
                 {{"stream", stream}, {"offset", op.offset}, {"kind", op_description(op)},
                  {"words", t.issue - released}, {"stall_cycles", release - t.issue}});

        if (t.unit == Unit::Kernel) {
            const int64_t duration = t.end - t.start;
            json args = op_args(stream, op, t);
            args["compute_cycles"] = t.cost.compute_cycles;
            args["mac_cycles"] = t.cost.mac_cycles;
            args["output_cycles"] = t.cost.output_cycles;
            args["weight_decode_cycles"] = t.cost.weight_decode_cycles;
            args["issue_cycles"] = t.cost.issue_cycles;
            args["macs"] = t.cost.macs;
            args["read_bytes"] = per_memory(t.cost.traffic.read);
            args["write_bytes"] = per_memory(t.cost.traffic.write);
            args["access_cycles"] = per_memory(t.access_cycles);
            complete(KernelTrack, name, "kernel", base + t.start, base + t.end, std::move(args));
            // The model gives each unit's busy cycles within the op, not when they fall: drawn
            // from the op's start.
            auto unit = [&](Track track, int64_t busy, const char* category) {
                if (busy <= 0) return;
                const int64_t shown = std::min(busy, duration);
                complete(track, name, category, base + t.start, base + t.start + shown,
                         {{"offset", op.offset}, {"busy_cycles", busy}, {"op_cycles", duration}});
            };
            unit(MacTrack, t.cost.mac_cycles, "mac");
            unit(WeightDecoderTrack, t.cost.weight_decode_cycles, "weight_decoder");
            unit(OutputTrack, t.cost.output_cycles, "output");
        } else if (t.unit == Unit::Dma) {
            json args = op_args(stream, op, t);
            args["src_region"] = op.dma.src.region;
            args["dst_region"] = op.dma.dst.region;
            args["dst_internal"] = op.dma.dst.internal;
            args["read_bytes"] = per_memory(t.cost.traffic.read);
            args["write_bytes"] = per_memory(t.cost.traffic.write);
            complete(DmaTrack, name, "dma", base + t.start, base + t.end, std::move(args));
        }
    }

    // The port a memory is reached through, as the port-beat accounting assigns it: the first
    // port behind which it sits; -1 when neither.
    int port_of(MemoryKind kind) const {
        for (int port = 0; port < 2; ++port) {
            if (run_.memory.port_memory(port) == kind) return port;
        }
        return -1;
    }

    std::string counter_name(int memory) const {
        const auto kind = static_cast<MemoryKind>(memory);
        const int port = port_of(kind);
        return port < 0 ? fmt::format("{} bytes/cycle", memory_kind_name(kind))
                        : fmt::format("AXI{} {} bytes/cycle", port, memory_kind_name(kind));
    }

    // Each kernel op and DMA moves its bytes evenly over its duration; a counter per memory
    // gives the sum of the rates of the ops running, stepping at every op start and end.
    void bandwidth_counters(const std::vector<int64_t>& starts) {
        struct Flow {
            int64_t start, end;
            const MemoryTraffic* traffic;
        };
        std::vector<Flow> flows;
        std::array<bool, kMemoryKinds> used{};
        for (size_t s = 0; s < run_.timing.size(); ++s) {
            for (const OpTiming& t : run_.timing[s].ops) {
                if (t.unit == Unit::Command || t.end <= t.start) continue;
                flows.push_back({starts[s] + t.start, starts[s] + t.end, &t.cost.traffic});
                for (int m = 0; m < kMemoryKinds; ++m) used[m] = used[m] || t.cost.traffic.read[m] || t.cost.traffic.write[m];
            }
        }
        std::vector<int64_t> steps;
        for (const auto& f : flows) {
            steps.push_back(f.start);
            steps.push_back(f.end);
        }
        std::sort(steps.begin(), steps.end());
        steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
        for (const int64_t at : steps) {
            std::array<double, kMemoryKinds> read{}, write{};
            for (const auto& f : flows) {
                if (f.start > at || f.end <= at) continue;
                const double cycles = double(f.end - f.start);
                for (int m = 0; m < kMemoryKinds; ++m) {
                    read[m] += double(f.traffic->read[m]) / cycles;
                    write[m] += double(f.traffic->write[m]) / cycles;
                }
            }
            for (int m = 0; m < kMemoryKinds; ++m) {
                if (!used[m]) continue;
                events_.push_back({{"name", counter_name(m)}, {"cat", "bandwidth"}, {"ph", "C"}, {"ts", us(at)},
                                   {"pid", kPid}, {"tid", 0}, {"args", {{"read", read[m]}, {"write", write[m]}}}});
            }
        }
    }

    json metadata() const {
        const MemorySystem& memory = run_.memory;
        json ports = json::array();
        for (int port = 0; port < 2; ++port) {
            const MemoryKind kind = memory.port_memory(port);
            ports.push_back({{"port", fmt::format("AXI{}", port)},
                             {"memory", memory_kind_name(kind)},
                             {"bytes_per_cycle", memory.bytes_per_cycle(kind)}});
        }
        return {{"ethosu_emu_trace_version", kChromeTraceVersion},
                {"model", run_.model},
                {"npu", run_.npu.name},
                {"macs_per_cycle", run_.npu.macs},
                {"system_config", memory.system.name},
                {"memory_mode", memory.mode.name},
                {"memory_mode_ports", {{"const", fmt::format("AXI{}", memory.mode.const_port)},
                                       {"arena", fmt::format("AXI{}", memory.mode.arena_port)},
                                       {"cache", fmt::format("AXI{}", memory.mode.cache_port)}}},
                {"arena_cache_size", memory.mode.arena_cache_size},
                {"core_clock_hz", memory.system.core_clock},
                {"axi_bytes_per_beat", memory.axi_bytes},
                {"axi_ports", ports},
                {"streams", run_.streams.size()},
                {"total_cycles", run_.total_cycles()},
                {"debug_db", run_.debug_db ? json(run_.debug_db->source()) : json(nullptr)}};
    }

    const TracedRun& run_;
    const double us_per_cycle_;
    json events_ = json::array();
};

}  // namespace

json chrome_trace(const TracedRun& run) { return TraceWriter(run).write(); }

void write_chrome_trace(const TracedRun& run, const std::string& path) {
    std::ofstream out(path);
    out << chrome_trace(run).dump() << "\n";
    if (!out) throw Error({path, std::nullopt, "--trace"}, "cannot write file");
}

}  // namespace ethosu
