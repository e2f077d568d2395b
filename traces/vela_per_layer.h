#pragma once
// Vela's per-layer report (`<model>_per-layer.csv`, written with --verbose-performance): one row
// per scheduled Vela op, with Vela's estimate of its cycles, access cycles and MACs. We read it to
// line our kernel ops up with Vela's rows when no debug database names them, and to show Vela's
// figures beside ours. Both of Vela's layouts are read: the C++ core's (Vela 5, "Original
// Operator", "Target") and the Python core's (Vela 3/4, "TFLite_operator", no "Target").

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/engine/timing/system_config.h"

namespace ethosu {

struct VelaLayer {
    std::string original_operator;  // the source-graph operator
    std::string op;                 // Vela's scheduled operator ("NNG Operator")
    std::string target;             // "NPU" or "CPU"
    int64_t op_cycles = 0;
    int64_t npu_cycles = 0;
    std::array<int64_t, kMemoryKinds> access_cycles{};  // by MemoryKind
    int64_t macs = 0;
    std::string name;  // the layer's output tensor
};

class VelaPerLayer {
public:
    // Throws ethosu::Error (file, byte offset of the row, column) for malformed CSV, a missing
    // column or a field that is not a number.
    static VelaPerLayer parse(std::string_view text, const std::string& source);
    static VelaPerLayer load(const std::string& path, uint64_t max_bytes);
    // The largest report a model with this many command-stream bytes may come with: the debug
    // database's bound.
    static uint64_t max_file_bytes(uint64_t command_stream_bytes);

    const std::string& source() const { return source_; }
    const std::vector<VelaLayer>& layers() const { return layers_; }

private:
    std::string source_;
    std::vector<VelaLayer> layers_;
};

// Where Vela writes the per-layer report of a model it compiled: `<dir>/<stem>_per-layer.csv` for
// `<dir>/<stem>_vela.tflite`; nullopt for a model not named that way.
std::optional<std::string> vela_per_layer_path(const std::string& model_path);

// Vela's per-layer report for a model: the file given, else the one beside the model if it
// exists, else none. Both the CLI and the Python module line their CSV rows up through it.
std::optional<VelaPerLayer> find_vela_per_layer(const std::string& model_path, const std::string& given_path,
                                                uint64_t command_stream_bytes);

// A kernel op as the alignment sees it: our description ("conv", "pool.average", ...) and MACs.
struct KernelOpSummary {
    std::string description;
    int64_t macs = 0;
};

// Which of Vela's rows each kernel op (in run order) belongs to, from what the stream carries: the
// order, each op's kind and its MACs. Rows keep the stream's order; each row with cycles takes one
// or more consecutive ops of a kind its operator lowers to, whose MACs add up to the row's; a row
// without cycles (an activation fused into the op before, a CPU op) takes none unless nothing
// else fits (U85 chains put a chained op's cycles on another row). nullopt when no such
// assignment exists (another compilation, a row whose MACs Vela counts otherwise, ops Vela
// interleaved across rows).
std::optional<std::vector<size_t>> align_with_vela(const std::vector<KernelOpSummary>& ops,
                                                   const std::vector<VelaLayer>& layers);

// The memory system Vela compiled a model for, from the summary it writes beside it
// (`<dir>/<stem>_summary_<system config>.csv` for `<dir>/<stem>_vela.tflite`): its system_config
// and memory_mode columns. nullopt when there is no such file (or more than one); a malformed one
// is an ethosu::Error naming it.
struct VelaCompiledSystem {
    std::string system_config, memory_mode;
    std::string source;  // the summary's path
};
std::optional<VelaCompiledSystem> find_vela_compiled_system(const std::string& model_path);

}  // namespace ethosu
