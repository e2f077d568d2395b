#pragma once
// A check manifest: the models to run, their inputs, the outputs each run must reproduce (exactly
// or within a tolerance) and the NPU figures it must hold to (within a drift). JSON:
//   {"format": "ethosu-emu-manifest", "version": 1, "comment": ..., "entries": [ENTRY, ...]}
// Every object's keys are declared once in manifest.cc; a key not declared there is refused with
// the list of the valid ones. Relative paths resolve against the manifest's folder.

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "emulator/engine/timing/system_config.h"
#include "emulator/isa/error.h"

namespace ethosu {

inline constexpr std::string_view kManifestFormat = "ethosu-emu-manifest";
inline constexpr int kManifestVersion = 1;

// A manifest or command line that cannot be used as given (exit status 2), as opposed to a model
// that is refused or a check that fails (1).
class UsageError : public Error {
public:
    UsageError(ErrorLocation where, const std::string& what) : Error(std::move(where), what, ErrorKind::Usage) {}
};

struct OutputExpectation {
    std::string file{};  // empty: the output is not compared
    // Limits on the elements that differ: the largest |difference| and how many may differ. With
    // neither, the output must equal the file byte for byte; each one given is a limit of its own.
    std::optional<double> max_abs_diff{};
    std::optional<uint64_t> max_differing{};
};

// A layer's NPU cycles in a baseline: what a failed cycle figure is explained by.
struct LayerCycles {
    std::string name;
    int64_t cycles = 0;
};

struct Baseline {
    double drift_percent = 0;  // each figure may differ from its baseline by this share of it
    // Figures below their baseline pass whatever the drift: fewer cycles, fewer bytes moved.
    bool allow_faster = false;
    // {"cycles": NPU cycles, "traffic": as `run --json` reports it}: see baseline_figures.
    nlohmann::ordered_json figures;
    std::vector<LayerCycles> layers;  // per layer of the run's per-layer table, in its order
};

struct ManifestEntry {
    std::string name;                 // unique in the manifest; default: default_entry_name(model)
    std::string model;                // resolved path
    std::string npu;                  // empty: the model's own configuration
    SystemSelection system;           // config files resolved
    std::vector<std::string> inputs;  // resolved paths, in the model's input order
    std::vector<OutputExpectation> outputs;  // files resolved, in the model's output order
    std::optional<Baseline> baseline;
    std::string skip;  // non-empty: why the entry is not run (reported as skipped)
    // A model with no NPU operator (a .tflite Vela never compiled) is refused unless this is set:
    // it would run on the host's kernels alone and prove nothing about the NPU.
    bool allow_cpu_only = false;
};

struct Manifest {
    std::string label;                // the manifest's path as given, for errors
    nlohmann::ordered_json document;  // as read, for `baseline` to rewrite
    std::vector<ManifestEntry> entries;
};

// Reads and validates a manifest file (up to 64 MiB). Throws UsageError naming the manifest, the
// entry index and the key: unreadable or malformed JSON, wrong format or version, unknown keys,
// values of the wrong type or sign, duplicate names, files that do not exist.
Manifest read_manifest(const std::string& path);

// Validates a manifest document already in memory; `label` names it in errors.
Manifest parse_manifest(nlohmann::ordered_json document, const std::string& label,
                        const std::filesystem::path& folder);

// A manifest document with no entries yet.
nlohmann::ordered_json empty_manifest_document();

// Writes the document, two-space indented. Throws Error when the file cannot be written.
void write_manifest(const nlohmann::ordered_json& document, const std::string& path);

// `path` as a manifest in `folder` should name it: relative to the folder, else absolute.
std::string path_in_manifest(const std::filesystem::path& path, const std::filesystem::path& folder);

// The baseline figures of a run: {"cycles": total NPU cycles, "traffic": as in `timing`}, from
// timing_json (run_figures.h).
nlohmann::ordered_json baseline_json(const nlohmann::ordered_json& timing);

// A manifest entry's name when none is given: the model's path as the manifest writes it, less
// leading "../" and "./" parts and the extension, at most its last three parts
// ("person_detect/ethos-u55-128/model_vela").
std::string default_entry_name(const std::string& model_as_written);

// One figure of a baseline or a run: "cycles", "Sram read bytes", "AXI0 memory", "AXI0 read
// beats", ...: numbers, but the port's memory is a name.
struct Figure {
    std::string name;
    nlohmann::ordered_json value;
};

// The figures of a baseline_json (a manifest's baseline, or a run's), in a
// fixed order: cycles, each memory's read and write bytes, each AXI port's memory and beats.
std::vector<Figure> baseline_figures(const nlohmann::ordered_json& figures);

}  // namespace ethosu
