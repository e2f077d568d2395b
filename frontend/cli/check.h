#pragma once
// `ethosu-emu check`: runs the entries of a manifest (or one model given on the command line) in
// parallel, compares each run's outputs with the expected files (exactly or within the entry's
// tolerance) and its NPU figures with the baseline (within the drift), and reports a summary
// table (text; Markdown, JUnit XML and a JSON summary on request). `--shard K/N` runs one shard
// of the entries; `--merge` combines the shards' JSON summaries. `ethosu-emu baseline` writes
// such manifests.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "frontend/cli/manifest.h"
#include "frontend/loaders/model.h"

namespace ethosu {

// An element that differs from the expected one: its index in the flat output, both values.
struct ElementDifference {
    uint64_t element = 0;
    double got = 0, expected = 0;
};

// How one output compares with its expected file.
struct OutputComparison {
    static constexpr size_t kFirstDifferences = 5;  // enough to see a pattern, short enough to read

    size_t index = 0;
    uint64_t elements = 0;
    uint64_t differing = 0;   // elements not equal to the expected ones
    double max_abs_diff = 0;  // the largest |difference| among them
    std::vector<ElementDifference> first_differences;  // the first kFirstDifferences of them
    std::string size_mismatch;  // non-empty: the sizes differ and nothing else was compared
    bool pass = false;
};

// Element by element, as values of `type` (integers signed or not, float32; others as bytes).
OutputComparison compare_output(std::span<const uint8_t> actual, std::span<const uint8_t> expected, ElementType type,
                                const OutputExpectation& expectation);

struct FigureComparison {
    Figure baseline;
    nlohmann::ordered_json actual;
    bool pass = false;
};

struct EntryResult {
    enum class Status { Pass, Fail, Error, Skipped };
    std::string name;  // the manifest entry's
    Status status = Status::Pass;
    std::vector<std::string> problems;  // each failed comparison or the error, in words with figures
    std::vector<OutputComparison> outputs;
    std::vector<FigureComparison> figures;
    std::optional<int64_t> cycles;
    double seconds = 0;  // wall time of the entry's run and comparison
};

// "[0,3,1,7]": the coordinates of element `index` of a tensor of `shape` (row-major), or "[17]"
// without a shape.
std::string element_coordinates(uint64_t index, const std::vector<int64_t>& shape);

// The entry the shard `index` of `count` (1-based) runs: a hash of its name, so an entry stays
// in its shard whatever else the manifest holds.
size_t shard_of(const std::string& entry_name, size_t count);

// The JSON summary `check --json` writes and `check --merge` reads (docs/schemas/check-summary.schema.json).
inline constexpr std::string_view kCheckSummaryFormat = "ethosu-emu-check-summary";
inline constexpr int kCheckSummaryVersion = 1;
nlohmann::ordered_json entry_result_json(const EntryResult& result);
// Throws UsageError naming `label` and the key for a document that is not such a summary.
EntryResult entry_result_from_json(const nlohmann::ordered_json& entry, const std::string& label, const std::string& at);

// The check command's and the baseline command's options, registered on `app`.
class CheckCommands {
public:
    explicit CheckCommands(CLI::App& app);
    ~CheckCommands();
    // Whether the parsed command line chose one of them.
    bool selected() const;
    // Runs the chosen one: 0 when every entry passes (baseline: was written), 1 when one fails.
    // Throws UsageError for a manifest or command line that cannot be used, Error otherwise.
    int run() const;

    struct Options;

private:
    std::unique_ptr<Options> options_;  // CLI11 writes into it: at a fixed address
    CLI::App* check_ = nullptr;
    CLI::App* baseline_ = nullptr;
};

}  // namespace ethosu
