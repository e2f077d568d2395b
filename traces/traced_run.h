#pragma once
// What a trace reads of a finished run: the decoded streams, their timing results, the NPU and
// memory system they were timed on, and optionally Vela's debug database for operator names.
// Traces are written from this after the run; the timing model knows nothing about them.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/engine/timing/timing_model.h"
#include "emulator/isa/decoder.h"
#include "traces/debug_db.h"
#include "traces/vela_per_layer.h"

namespace ethosu {

// A firmware's streams on the NPU's clock: the cycle since power-on each started at, and a
// label for each (a trace gives them a track of their own).
struct StreamTimeline {
    std::vector<int64_t> starts;
    std::vector<std::string> labels;
};

// An operator of the model the host ran (a graph run's CPU operators): no cycle model, so no cycles.
struct HostOperator {
    size_t index = 0;   // in the model's subgraph 0
    std::string name;   // TFLite builtin name, e.g. "QUANTIZE"
    uint64_t elements = 0;  // of its output
};

struct TracedRun {
    std::string model;  // path, as given
    const NpuConfig& npu;
    const MemorySystem& memory;
    const std::vector<DecodedStream>& streams;
    const std::vector<TimingResult>& timing;  // one per stream, same order
    const DebugDatabase* debug_db = nullptr;
    const VelaPerLayer* vela_per_layer = nullptr;  // Vela's per-layer report, to line rows up with and compare
    // Set, a trace places the streams where it says; the per-layer rows and the report count them
    // back to back either way (the NPU's busy time).
    const StreamTimeline* timeline = nullptr;
    const std::vector<HostOperator>* host_operators = nullptr;  // a graph run's CPU operators, in graph order
    // Set when the run's memory system is not the one the model was compiled for: a sentence saying so.
    std::string system_mismatch{};

    // Streams run one after the other: the cycle each starts at on the run's timeline, and the
    // run's total (the sum of the streams' cycles, as `run` reports it).
    std::vector<int64_t> stream_starts() const;
    int64_t total_cycles() const;
    // Where a trace places each stream: the timeline's starts, else stream_starts().
    std::vector<int64_t> trace_starts() const;

    // Throws ethosu::Error naming the debug database unless its queue lists exactly the run's
    // kernel ops (a database from another compilation would put names on the wrong ops).
    void check_debug_db() const;
};

// Our description of an op: its kind, with the pooling, elementwise or resize mode
// ("conv", "pool.average", "elementwise.add", "dma_start").
std::string op_description(const DecodedOp& op);

// The label of an op in traces: with a debug database and an entry in its queue,
// "<original operator> <layer name>"; otherwise "<description> @0x<offset>".
std::string op_label(const TracedRun& run, size_t stream, const DecodedOp& op);

// The AXI port a memory is reached through, as the port-beat accounting assigns it: the first
// port behind which it sits; -1 when neither.
int memory_port(const MemorySystem& memory, MemoryKind kind);

// The bytes per NPU cycle each memory carries over the run's timeline: each kernel op and DMA is
// taken to move its bytes evenly over its duration; a step per op start and end holds the sum of
// the rates of the ops running from that cycle on (zero after the last).
struct BandwidthStep {
    int64_t cycle = 0;
    std::array<double, kMemoryKinds> read{}, write{};  // by MemoryKind
};
struct Bandwidth {
    std::array<bool, kMemoryKinds> used{};  // the memories any op moves bytes on
    std::vector<BandwidthStep> steps;
};
// starts: where each stream starts (stream_starts() or trace_starts()).
Bandwidth bandwidth_over_time(const TracedRun& run, const std::vector<int64_t>& starts);

// The bandwidth a memory can carry: each channel's rate capped at the memory's bytes per cycle
// (AXI's read and write channels each carry it), what the ops ask for above it carried forward to
// the following steps, as a memory serves a backlog. The last step runs to `end`; bytes still
// waiting there are in carried_past_end (read and write, by MemoryKind). Spreading each op's bytes
// evenly over its duration overstates overlapping ops' peaks; the integral is kept.
struct CappedBandwidth {
    Bandwidth bandwidth;
    std::array<double, kMemoryKinds> read_past_end{}, write_past_end{};
};
CappedBandwidth capped_at_peak(const Bandwidth& bandwidth, const MemorySystem& memory, int64_t end);

// Writes a trace file whole; throws ethosu::Error naming the file and the option that asked for it.
void write_trace_file(const std::string& path, const std::string& text, std::string_view option);

}  // namespace ethosu
