// End to end: every corpus model with CPU operators and a TFLM golden (status "ok"), in
// ../shared/vectors (5 configurations, Vela 5.1) and ../shared/vectors-vela (4 configurations,
// Vela 3.10.0 and 4.1.0), runs through the graph runner to the golden on both seeds when all its
// CPU operators are implemented; the others must be refused when the graph is checked, naming an
// operator, and are listed. Timing-only runs of the same models give the full runs' cycles.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/graph/graph_runner.h"
#include "tests/corpus_index.h"

namespace ethosu {
namespace {

namespace fs = std::filesystem;

const fs::path kVectors = ETHOSU_VECTORS_DIR;
const fs::path kVectorsVela = ETHOSU_VECTORS_VELA_DIR;

struct CompiledModel {
    std::string model;
    fs::path tflite;
};

// The compiled models whose index row has CPU operators.
std::vector<CompiledModel> models_with_cpu_operators() {
    std::vector<CompiledModel> out;
    if (fs::exists(kVectors / "index.csv"))
        for (auto& row : read_index_rows(kVectors / "index.csv"))
            if (row["fully_npu"] == "False" && row["tflite_ok"] == "True")
                out.push_back({row["model"], kVectors / row["model"] / row["config"] / "model_vela.tflite"});
    if (fs::exists(kVectorsVela / "index.csv"))
        for (auto& row : read_index_rows(kVectorsVela / "index.csv"))
            if (row["fully_npu"] == "False" && row["ok"] == "True")
                out.push_back({row["model"], kVectorsVela / row["vela"] / row["model"] / row["config"] / "model_vela.tflite"});
    return out;
}

bool golden_ok(const std::string& model) {
    std::ifstream meta(kVectors / model / "golden" / "meta.json");
    if (!meta) return false;
    return nlohmann::json::parse(meta).value("status", "") == "ok";
}

TEST(GraphCorpus, ModelsWithCpuOperatorsRunToTheGolden) {
    if (!fs::exists(kVectors / "index.csv")) GTEST_SKIP() << "no Vela corpus at " << kVectors << " (ETHOSU_VECTORS_DIR)";
    int bit_exact = 0;
    std::map<std::string, int> exact_configs;  // model -> configurations bit-exact on both seeds
    std::set<std::string> refused;
    for (const auto& [model, tflite] : models_with_cpu_operators()) {
        SCOPED_TRACE(tflite.string());
        if (!golden_ok(model)) continue;
        const auto loaded = load_model(tflite.string(), {});
        ASSERT_TRUE(runs_as_graph(*loaded));
        try {
            check_graph(*loaded);
        } catch (const Error& e) {
            // Refused up front, naming the operator.
            EXPECT_NE(std::string(e.what()).find("operators["), std::string::npos) << e.what();
            refused.insert(tflite.parent_path().lexically_relative(kVectors.parent_path()).string() +
                           ": " + e.where().field + ": " + e.reason());
            continue;
        }
        for (const std::string seed : {"seed1", "seed2"}) {
            const auto input = read_file_bytes(kVectors / model / "golden" / (seed + ".in0.bin"));
            const auto golden = read_file_bytes(kVectors / model / "golden" / (seed + ".out0.bin"));
            ASSERT_FALSE(input.empty());
            const RunResult full = run_graph(*loaded, {input});
            ASSERT_EQ(full.outputs.size(), 1u);
            EXPECT_EQ(full.outputs[0], golden) << seed;
            bit_exact += full.outputs[0] == golden;
            RunOptions no_data;
            no_data.execute = false;
            const RunResult timing_only = run_graph(*loaded, {}, no_data);
            ASSERT_EQ(timing_only.timing.size(), full.timing.size());
            for (size_t s = 0; s < full.timing.size(); ++s)
                EXPECT_EQ(timing_only.timing[s].totals.cycles, full.timing[s].totals.cycles);
            EXPECT_EQ(timing_only.cpu_operators.size(), full.cpu_operators.size());
        }
        ++exact_configs[model];
    }
    for (const auto& [m, n] : exact_configs) std::printf("bit-exact with CPU operators: %s on %d configurations\n", m.c_str(), n);
    for (const auto& m : refused) std::printf("out of reach: %s\n", m.c_str());
    std::printf("%d runs bit-exact\n", bit_exact);
    // Arm's four KWS models (QUANTIZE in, DEQUANTIZE out) on 5 + 2 x 4 configurations and
    // keyword_scrambled_8bit (SVDF, SOFTMAX) on all 13, 2 seeds each.
    EXPECT_GE(bit_exact, (4 * 13 + 13) * 2);
}

}  // namespace
}  // namespace ethosu
