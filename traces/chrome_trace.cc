#include "traces/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

namespace ethosu {
namespace {

using json = nlohmann::ordered_json;

constexpr int kPid = 1;

enum Track : int { CommandTrack = 1, KernelTrack, MacTrack, WeightDecoderTrack, OutputTrack, DmaTrack, StreamTrack };

// A track whose ops overlap (U85's chained ops run in step with their producer; a pipelined
// slice starts before the previous one drains) spreads them over lanes, each a track of its own
// that viewers draw under it: slices on one track must nest or be disjoint, and these do neither.
constexpr int kLaneTidStride = 16;

constexpr std::pair<Track, const char*> kTracks[] = {
    {CommandTrack, "command processor"}, {KernelTrack, "kernel ops"},     {MacTrack, "MAC array"},
    {WeightDecoderTrack, "weight decoder"}, {OutputTrack, "output stage"}, {DmaTrack, "DMA"},
};

class TraceWriter {
public:
    explicit TraceWriter(const TracedRun& run) : run_(run), us_per_cycle_(1e6 / run.memory.system.core_clock) {}

    json write() {
        metadata_events();
        const auto starts = run_.trace_starts();
        if (run_.timeline) stream_events(starts);
        for (size_t s = 0; s < run_.timing.size(); ++s) {
            const auto& timed = run_.timing[s].ops;
            int64_t released = 0;  // where the command processor was before each op
            for (size_t i = 0; i < timed.size(); ++i) {
                op_events(s, starts[s], run_.streams.at(s).ops.at(i), timed[i], released);
                released = timed[i].release;
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
        for (const auto& [track, name] : kTracks) name_lane(track, 0);
    }

    static std::string track_name(Track track) {
        for (const auto& [t, name] : kTracks) {
            if (t == track) return name;
        }
        return "command streams";
    }

    void name_lane(Track track, size_t lane) {
        const int tid = int(track) + kLaneTidStride * int(lane);
        const std::string name = lane == 0   ? track_name(track)
                                 : lane == 1 ? track_name(track) + " (overlapping)"
                                             : fmt::format("{} (overlapping {})", track_name(track), lane);
        events_.push_back({{"name", "thread_name"}, {"ph", "M"}, {"ts", 0}, {"pid", kPid}, {"tid", tid},
                           {"args", {{"name", name}}}});
        events_.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"ts", 0}, {"pid", kPid}, {"tid", tid},
                           {"args", {{"sort_index", track == StreamTrack ? 0 : int(track) * kLaneTidStride + int(lane)}}}});
    }

    // The first lane of the track free at start (ops arrive in the order their unit starts them).
    int lane_tid(Track track, int64_t start, int64_t end) {
        std::vector<int64_t>& ends = lane_ends_[track];
        size_t lane = 0;
        while (lane < ends.size() && ends[lane] > start) ++lane;
        if (lane == ends.size()) {
            ends.push_back(end);
            if (lane > 0) name_lane(track, lane);
        }
        ends[lane] = end;
        return int(track) + kLaneTidStride * int(lane);
    }

    // A firmware's streams, each a slice from its start to its end on a track of its own.
    void stream_events(const std::vector<int64_t>& starts) {
        name_lane(StreamTrack, 0);
        for (size_t s = 0; s < run_.timing.size(); ++s) {
            const TimingTotals& totals = run_.timing[s].totals;
            complete(StreamTrack, run_.timeline->labels.at(s), "stream", starts[s], starts[s] + totals.cycles,
                     {{"stream", s}, {"start_cycle", starts[s]}, {"cycles", totals.cycles}, {"macs", totals.macs}});
        }
    }

    void complete(Track track, const std::string& name, const char* category, int64_t start, int64_t end, json args) {
        const double ts = us(start);
        events_.push_back({{"name", name}, {"cat", category}, {"ph", "X"}, {"ts", ts}, {"dur", us(end) - ts},
                           {"pid", kPid}, {"tid", lane_tid(track, start, end)}, {"args", std::move(args)}});
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
                args["layer"] = vela->display_name();
            }
        }
        return args;
    }

    void op_events(size_t stream, int64_t base, const DecodedOp& op, const OpTiming& t, int64_t released) {
        const std::string name = op_label(run_, stream, op);
        complete(CommandTrack, name, "command", base + released, base + t.release,
                 {{"stream", stream}, {"offset", op.offset}, {"kind", op_description(op)},
                  {"words", t.issue - released}, {"stall_cycles", t.release - t.issue}});

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
            args["src_region"] = op.dma().src.region;
            args["dst_region"] = op.dma().dst.region;
            args["dst_internal"] = op.dma().dst.internal;
            args["read_bytes"] = per_memory(t.cost.traffic.read);
            args["write_bytes"] = per_memory(t.cost.traffic.write);
            complete(DmaTrack, name, "dma", base + t.start, base + t.end, std::move(args));
        }
    }

    std::string counter_name(int memory) const {
        const auto kind = static_cast<MemoryKind>(memory);
        const int port = memory_port(run_.memory, kind);
        return port < 0 ? fmt::format("{} bytes/cycle", memory_kind_name(kind))
                        : fmt::format("AXI{} {} bytes/cycle", port, memory_kind_name(kind));
    }

    void bandwidth_counters(const std::vector<int64_t>& starts) {
        const Bandwidth bandwidth = bandwidth_over_time(run_, starts);
        for (const BandwidthStep& step : bandwidth.steps) {
            for (int m = 0; m < kMemoryKinds; ++m) {
                if (!bandwidth.used[m]) continue;
                events_.push_back({{"name", counter_name(m)}, {"cat", "bandwidth"}, {"ph", "C"}, {"ts", us(step.cycle)},
                                   {"pid", kPid}, {"tid", 0}, {"args", {{"read", step.read[m]}, {"write", step.write[m]}}}});
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
    std::map<Track, std::vector<int64_t>> lane_ends_;  // per track, where each lane's last op ends
};

}  // namespace

json chrome_trace(const TracedRun& run) { return TraceWriter(run).write(); }

void write_chrome_trace(const TracedRun& run, const std::string& path) {
    write_trace_file(path, chrome_trace(run).dump() + "\n", "--trace");
}

}  // namespace ethosu
