#pragma once
// ethosu-emu's C++ API to load a model and run it, as `ethosu-emu run` does: a Vela-compiled
// .tflite or .npz, an ExecuTorch .pte or a raw command stream, from a file or from bytes, on the
// NPU and memory system chosen; outputs bit-exact with the NPU, cycles, per-op figures and PMU
// counts. Installed with the CMake package (find_package(ethosu_emu COMPONENTS model_runner),
// target ethosu_emu::model_runner); this header includes nothing of the emulator's.

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ethosu_emu {

// Everything the emulator refuses: a malformed or unsupported model, an option it cannot take,
// a file it cannot read, an input of the wrong size. what() is "file: file@0x..: field: reason"
// (cmd@0x.. for a command-stream offset).
class Error : public std::runtime_error {
public:
    Error(const std::string& what, std::string file, std::optional<uint64_t> offset, std::string field,
          std::string reason, std::string kind);

    const std::string& file() const { return file_; }              // the file (or option) at fault
    const std::optional<uint64_t>& offset() const { return offset_; }  // byte offset in it, if known
    const std::string& field() const { return field_; }            // the field, command or option
    const std::string& reason() const { return reason_; }
    // "malformed", "unsupported", "out_of_bounds", "limit_exceeded", "branch_fault", "io" or "usage".
    const std::string& kind() const { return kind_; }

private:
    std::string file_;
    std::optional<uint64_t> offset_;
    std::string field_, reason_, kind_;
};

// The NPU and memory system, by Vela's names, as the CLI's options of the same names.
struct ModelOptions {
    std::string npu{};          // --npu, e.g. "ethos-u55-128"; empty: the model's
    std::string system_config{};  // --system-config; empty: the model's, else Vela's default
    std::string memory_mode{};  // --memory-mode; likewise
    std::vector<std::string> config_files{};  // --config: vela.ini files with more sections
    bool lenient = false;       // --lenient: registers never written read as 0
};

struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    std::string type;  // "int8", "uint8", "int16", "int32", "float32", ...
    uint64_t size_bytes = 0;
};

// One NPU op of the run, as `run --json` lists it: start and end on its stream's timeline.
struct OpFigures {
    size_t stream = 0;
    size_t index = 0;
    uint32_t offset = 0;  // byte offset of the op's command in its stream
    std::string kind;     // "conv", "depthwise", "dma_start", ...
    int64_t start = 0, end = 0;
    int64_t compute_cycles = 0;  // kernel ops; 0 for the others
    int64_t macs = 0;
};

struct PmuCount {
    std::string event;  // Arm's name, e.g. "NPU_ACTIVE"
    uint64_t count = 0;
};

struct RunResult {
    std::vector<std::vector<uint8_t>> outputs;  // raw bytes per model output, model order
    int64_t npu_cycles = 0;
    int64_t macs = 0;
    std::vector<OpFigures> ops;
    uint64_t pmu_cycle_counter = 0;
    std::vector<PmuCount> pmu;  // every event the model counts
    std::string system_config, memory_mode;  // what the run was timed on
};

class ModelRunner {
public:
    // Loads a model file, or a model held in memory (name stands for it in errors). Throws Error.
    static ModelRunner load_file(const std::string& path, const ModelOptions& options = {});
    static ModelRunner load_bytes(std::vector<uint8_t> bytes, const std::string& name,
                                  const ModelOptions& options = {});

    ModelRunner(ModelRunner&&) noexcept;
    ModelRunner& operator=(ModelRunner&&) noexcept;
    ~ModelRunner();

    const std::string& npu() const;  // the resolved NPU configuration
    const std::vector<Tensor>& inputs() const;
    const std::vector<Tensor>& outputs() const;

    // One inference: raw bytes per model input (an empty vector: zeros; each other one exactly
    // the tensor's size_bytes). Every run starts from the model's initial memory. Throws Error.
    RunResult run(const std::vector<std::vector<uint8_t>>& inputs) const;

private:
    struct Impl;
    explicit ModelRunner(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace ethosu_emu
