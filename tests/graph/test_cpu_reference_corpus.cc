// The CPU-only reference run: each corpus model's original, un-Vela'd model.tflite
// (../shared/vectors/<model>/model.tflite) runs entirely on the host's reference kernels and must
// equal its TensorFlow Lite Micro golden byte for byte on both seeds, every output. A model with
// operators not implemented yet is skipped naming them; one TFLM itself refused (golden status
// other than "ok") must be refused before it runs. The summary test prints how many pass.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/graph/builtin_operators.h"
#include "frontend/graph/cpu_operator.h"
#include "frontend/graph/graph_runner.h"
#include "tests/graph/golden.h"

namespace ethosu {
namespace {

namespace fs = std::filesystem;

const fs::path kVectors = ETHOSU_VECTORS_DIR;

// The corpus models with an original .tflite and a golden, by name.
std::vector<std::string> corpus_models() {
    std::vector<std::string> models;
    if (!fs::is_directory(kVectors)) return models;  // the summary test says so
    for (const auto& entry : fs::directory_iterator(kVectors))
        if (fs::exists(entry.path() / "model.tflite") && fs::exists(entry.path() / "golden" / "meta.json"))
            models.push_back(entry.path().filename().string());
    std::ranges::sort(models);
    return models;
}

// The builtins of the graph with no host kernel, by name.
std::set<std::string> missing_operators(const LoadedModel& model) {
    std::set<std::string> missing;
    for (const GraphOperator& op : model.graph->operators)
        if (op.invocation < 0 && !find_cpu_kernel(op.builtin_code)) missing.insert(builtin_operator_name(op.builtin_code));
    return missing;
}

enum class Outcome { BitExact, Differs, Missing, RefusedAsTflm };

// Runs both golden seeds of `model`; `why` says what is missing or what differs.
Outcome run_against_golden(const std::string& model, std::string& why) {
    const auto loaded = load_model((kVectors / model / "model.tflite").string(), {});
    if (const auto missing = missing_operators(*loaded); !missing.empty()) {
        why = fmt::format("{}", fmt::join(missing, ", "));
        return Outcome::Missing;
    }
    const Golden golden = read_golden(kVectors / model);
    if (golden.status != "ok") {
        // TFLM refused the model; the reference run must refuse it before running.
        try {
            check_graph(*loaded);
        } catch (const Error& e) {
            why = e.what();
            return Outcome::RefusedAsTflm;
        }
        why = "TFLM refused it, the reference run accepts it";
        return Outcome::Differs;
    }
    for (const GoldenSeed& seed : golden.seeds) {
        const RunResult r = run_graph(*loaded, seed.inputs);
        if (r.outputs.size() != seed.outputs.size()) {
            why = fmt::format("{}: {} outputs, the golden has {}", seed.name, r.outputs.size(), seed.outputs.size());
            return Outcome::Differs;
        }
        for (size_t k = 0; k < seed.outputs.size(); ++k) {
            const auto& expected = seed.outputs[k];
            if (r.outputs[k] != expected) {
                const auto first = std::ranges::mismatch(r.outputs[k], expected).in2 - expected.begin();
                why = fmt::format("{} output {} differs from the golden from byte {} of {}", seed.name, k, first, expected.size());
                return Outcome::Differs;
            }
        }
    }
    return Outcome::BitExact;
}

class OriginalModel : public ::testing::TestWithParam<std::string> {};

TEST_P(OriginalModel, RunsOnTheReferenceKernelsToTheGolden) {
    std::string why;
    switch (run_against_golden(GetParam(), why)) {
        case Outcome::BitExact: break;
        case Outcome::RefusedAsTflm: break;
        case Outcome::Missing: GTEST_SKIP() << "operators not implemented on the CPU: " << why;
        case Outcome::Differs: FAIL() << why;
    }
}

INSTANTIATE_TEST_SUITE_P(CpuReference, OriginalModel, ::testing::ValuesIn(corpus_models()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OriginalModel);

TEST(CpuReference, Summary) {
    const auto models = corpus_models();
    if (models.empty()) GTEST_SKIP() << "no corpus at " << kVectors << " (ETHOSU_VECTORS_DIR)";
    int exact = 0, refused = 0;
    std::vector<std::string> out_of_reach;
    for (const auto& model : models) {
        std::string why;
        switch (run_against_golden(model, why)) {
            case Outcome::BitExact: ++exact; break;
            case Outcome::RefusedAsTflm: ++refused; break;
            case Outcome::Missing: out_of_reach.push_back(model + " (" + why + ")"); break;
            case Outcome::Differs: ADD_FAILURE() << model << ": " << why; break;
        }
    }
    std::printf("CPU-only reference run: %d of %zu original models bit-exact on both seeds, %d refused as TFLM "
                "refuses them\n",
                exact, models.size(), refused);
    for (const auto& m : out_of_reach) std::printf("not implemented yet: %s\n", m.c_str());
    // Every model whose operators were all implemented when this was written.
    EXPECT_GE(exact, 63);
}

}  // namespace
}  // namespace ethosu
