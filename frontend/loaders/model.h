#pragma once
// What every loader produces: the NPU work of a model (one or more command streams with
// the region images they address) and its input/output tensors. Loaders treat their
// input as hostile: every malformed file ends in ethosu::Error naming file, offset, field.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emulator/isa/error.h"
#include "emulator/isa/npu_config.h"
#include "emulator/memory/address_space.h"

namespace ethosu {

namespace tflite {
struct BuiltinOptionsUnion;  // vela_tflite.fbs's BuiltinOptions, as flatc's object API unpacks it
}  // namespace tflite

enum class ModelFormat : uint8_t { VelaTflite, VelaNpz, ExecuTorchBin, ExecuTorchProgram, RawCommandStream };
std::string_view model_format_name(ModelFormat f);

enum class ElementType : uint8_t { Int8, UInt8, Int16, UInt16, Int32, Int64, Float32, Bool, Int4, Other };
std::string_view element_type_name(ElementType t);
int element_size(ElementType t);  // bytes; 0 for Other and Int4 (packed two to a byte)

// Whether two shapes lay out the same elements in the same row-major order: equal but for
// dimensions of 1. Vela's raw .npz and ExecuTorch's vela_bin_stream pad shapes to six dimensions
// with ones, and a 28x28 array holds a 1x28x28x1 tensor's bytes.
bool same_element_order(std::span<const int64_t> a, std::span<const int64_t> b);

struct TensorInfo {
    std::string name;
    std::vector<int64_t> shape;
    ElementType type = ElementType::Other;
    int region = -1;      // base-pointer index holding the tensor, -1 if unknown
    uint64_t offset = 0;  // byte offset inside that region
    uint64_t size_bytes = 0;
    std::vector<float> scale;  // quantization, empty if none
    std::vector<int64_t> zero_point;
    bool is_variable = false;  // state kept between invocations (an LSTM's), which TFLM resets at allocation
    ErrorLocation where{};     // its definition in the model file: errors about the tensor point there
};

// The COP1/COP2 driver payload, split into its parts.
struct CommandStream {
    std::string payload_kind;             // "COP1", "COP2" or "raw"
    std::optional<uint32_t> config_word;  // CONFIG the compiler targeted (absent for raw)
    uint64_t config_word_offset = 0;      // its byte offset in the source file
    std::optional<uint32_t> id_word;
    std::vector<uint32_t> words;  // the register command stream
    uint64_t file_offset = 0;     // byte offset of words[0] in the source file
};

// One region (base pointer) the command stream addresses.
struct RegionImage {
    int index = -1;                   // BASEP index
    RegionRole role = RegionRole::Scratch;
    uint64_t size = 0;                // bytes the region spans
    std::span<const uint8_t> bytes;   // initial contents; empty for scratch areas (zero-filled)
    std::shared_ptr<const void> owner;  // keeps `bytes` alive: the mapped model file, or a copy
    bool file_mapped = false;           // `bytes` lie in the mapped model file (see FileBytes)
    ErrorLocation where{};              // where the file defines its size: errors about the region point there
};

// One NPU invocation: a command stream and its regions (for .tflite: one "ethos-u" op).
struct NpuInvocation {
    CommandStream stream;
    std::vector<RegionImage> regions;
    std::vector<TensorInfo> inputs;   // feature maps read by this invocation
    std::vector<TensorInfo> outputs;  // feature maps written by it
};

// A .tflite's subgraph 0 as the file describes it, for running its operators in order: the
// ethos-u ones on the NPU (by their invocation), the others on the host.
struct GraphOperator {
    int32_t builtin_code = 0;  // TFLite BuiltinOperator (32: CUSTOM)
    std::string custom_code;
    int invocation = -1;  // index in LoadedModel::invocations for an ethos-u operator
    std::vector<int32_t> inputs, outputs;  // tensor indices; -1 is an omitted optional input
    // Its builtin options table as the file gives it (TFLite's BuiltinOptions union, unpacked),
    // null where it has none: each CPU kernel reads its own (frontend/graph/operator_options.h).
    std::shared_ptr<const tflite::BuiltinOptionsUnion> builtin_options{};
};

struct GraphTensor {
    TensorInfo info;             // placement (region, offset) unused: the graph runs on host buffers
    bool constant = false;       // has a buffer of data in the file
    std::vector<uint8_t> data;   // a constant's bytes, copied only where a CPU operator reads it
};

struct ModelGraph {
    std::vector<GraphTensor> tensors;  // by TFLite tensor index
    std::vector<GraphOperator> operators;
    std::vector<int32_t> inputs, outputs;
};

// The memory system a file says its streams were compiled for, where it says so: Vela's
// --system-config and --memory-mode as an ExecuTorch program's Ethos-U delegates record them
// (their "compile_flags" compile spec). A Vela .tflite, .npz or raw stream records neither: its
// fast scratch tells nothing either, since Vela leaves it out under Dedicated_Sram too when no
// tensor is cached (40 of the corpus's 62 u65-256 models).
struct CompiledFor {
    std::string system_config, memory_mode;  // empty: not recorded
    std::string source;                      // where they were read, for messages
};

struct LoadedModel {
    std::string path;
    ModelFormat format = ModelFormat::VelaTflite;
    CompiledFor compiled_for;
    NpuConfig config{};  // resolved: COP header, or --npu override
    std::vector<NpuInvocation> invocations;
    std::vector<TensorInfo> inputs;   // model inputs in model order
    std::vector<TensorInfo> outputs;  // model outputs in model order
    int cpu_operators = 0;            // operators left on the CPU (.tflite only)
    std::optional<ModelGraph> graph;  // .tflite only: subgraph 0's operators and tensors
    // Made for the NPU: it holds NPU operators, or a compiler for it wrote it (every Vela, Python
    // and Regor, describes its .tflite as "Vela Optimised", even one left wholly on the CPU). False
    // for a .tflite no NPU compiler has seen.
    bool compiled_for_npu = true;
};

// `where` (a region's or tensor's definition in the model file), or for one made in code (a
// test's, the bundled example's) the model file, naming `name`.
ErrorLocation definition_site(const LoadedModel& model, const ErrorLocation& where, const std::string& name);

// The bytes of all its command streams, which bound the size of its side files (Vela's debug
// database and per-layer report).
uint64_t command_stream_bytes(const LoadedModel& model);

// A model file's bytes as a loader reads them. With an owner (a file loaded by path is mapped,
// not read), region images point into the bytes instead of copying them: a model's weights are
// in memory once. Without one (a caller's buffer) they are copied.
struct FileBytes {
    FileBytes(std::span<const uint8_t> b, std::shared_ptr<const void> o = nullptr, bool mapped = false)
        : bytes(b), owner(std::move(o)), file_mapped(mapped) {}
    FileBytes(const std::vector<uint8_t>& b) : bytes(b) {}
    std::span<const uint8_t> bytes;
    std::shared_ptr<const void> owner;
    // The bytes are a read-only private mapping of the file: pages dropped from it are read back
    // from the file (MemoryMap's file_mapped).
    bool file_mapped = false;
};

// Maps a file read-only. Throws ethosu::Error naming the file when it cannot.
FileBytes map_file(const std::string& path);

// For a program that maps model files (the CLI): a file shrunk by someone else while mapped
// would end the process with SIGBUS; after this call it ends it with status 1 and one line on
// stderr, "<message_prefix>FILE: file@0x..: model file: the file shrank ...". Installs a
// process-wide SIGBUS handler; SIGBUS elsewhere keeps its default action.
void report_shrunk_mapped_files(std::string_view message_prefix);

// Command streams longer than this are refused before anything is copied or decoded. The
// corpus's longest (MobileNetV2 on ethos-u85-1024) is 8.9 Ki words; 4 Mi words leaves room for
// models 400 times larger, while a 71 KB deflated .npz cannot unpack 16 Mi words.
constexpr uint64_t kDefaultMaxStreamWords = uint64_t{1} << 22;

struct LoadOptions {
    std::optional<std::string> npu;  // Vela config name; overrides the COP header
    uint64_t max_stream_words = kDefaultMaxStreamWords;  // raised with the CLI's --max-stream-words
};

// Detects the format from the content (TFL3 identifier, zip magic, ExecuTorch block name, ET12)
// and loads; a saved COP1/COP2 payload loads as a command stream. Anything else is read as bare
// command-stream words only with options.npu, and is otherwise an Error saying it is not a model.
std::unique_ptr<LoadedModel> load_model(const std::string& path, const LoadOptions& options);

// Loaders by format, for tests and fuzzers: data is the whole file, path names it in errors.
std::unique_ptr<LoadedModel> load_vela_tflite(const std::string& path, const FileBytes& data,
                                              const LoadOptions& options);
std::unique_ptr<LoadedModel> load_vela_npz(const std::string& path, const FileBytes& data,
                                           const LoadOptions& options);
std::unique_ptr<LoadedModel> load_executorch_bin(const std::string& path, const FileBytes& data,
                                                 const LoadOptions& options);
// An ExecuTorch .pte: each Ethos-U delegate's vela_bin_stream is one invocation.
std::unique_ptr<LoadedModel> load_executorch_program(const std::string& path, const FileBytes& data,
                                                     const LoadOptions& options);
std::unique_ptr<LoadedModel> load_raw_command_stream(const std::string& path, const FileBytes& data,
                                                     const LoadOptions& options);

// Parses a COP1/COP2 driver payload (the bytes of a command-stream tensor or cmd_data).
// base_offset is where payload[0] sits in the file, for error offsets. A stream of more than
// max_stream_words is refused before it is copied.
CommandStream parse_driver_payload(const std::string& path, const uint8_t* payload, size_t size, uint64_t base_offset,
                                   uint64_t max_stream_words = kDefaultMaxStreamWords);

// Resolves the NPU configuration: the override if given (an error if it disagrees with the
// COP header's product or MACs), else the header's CONFIG word.
NpuConfig resolve_npu_config(const std::string& path, const CommandStream& stream, const LoadOptions& options);

}  // namespace ethosu
