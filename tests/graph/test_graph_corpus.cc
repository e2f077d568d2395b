// End to end: every corpus model with CPU operators and a TFLM golden (status "ok"), in
// ../shared/vectors (5 configurations, Vela 5.1), ../shared/vectors-vela (4 configurations, Vela
// 3.10.0 and 4.1.0) and ../shared/vectors-vela-u85 (Vela 4.5.0 and 5.1.0 for U85), runs through the graph runner to the golden on both seeds (every input
// and output golden/meta.json lists) when all its CPU operators are implemented; the others must
// be refused when the graph is checked, naming an operator, and are listed. Timing-only runs of the same models give the full runs' cycles.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/graph/graph_runner.h"
#include "tests/graph/golden.h"

namespace ethosu {
namespace {

namespace fs = std::filesystem;

const fs::path kVectors = ETHOSU_VECTORS_DIR;
const fs::path kVectorsVela = ETHOSU_VECTORS_VELA_DIR;
const fs::path kVectorsVelaU85 = ETHOSU_VECTORS_VELA_U85_DIR;

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
    for (const fs::path& corpus : {kVectorsVela, kVectorsVelaU85}) {
        if (!fs::exists(corpus / "index.csv")) continue;
        for (auto& row : read_index_rows(corpus / "index.csv"))
            if (row["fully_npu"] == "False" && row["ok"] == "True")
                out.push_back({row["model"], corpus / row["vela"] / row["model"] / row["config"] / "model_vela.tflite"});
    }
    return out;
}

TEST(GraphCorpus, ModelsWithCpuOperatorsRunToTheGolden) {
    if (!fs::exists(kVectors / "index.csv")) GTEST_SKIP() << "no Vela corpus at " << kVectors << " (ETHOSU_VECTORS_DIR)";
    int bit_exact = 0;
    std::map<std::string, int> exact_configs;  // model -> configurations bit-exact on both seeds
    std::set<std::string> refused;
    for (const auto& [model, tflite] : models_with_cpu_operators()) {
        SCOPED_TRACE(tflite.string());
        const Golden golden = read_golden(kVectors / model);
        if (golden.status != "ok") continue;
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
        bool all_seeds = true;
        for (const GoldenSeed& seed : golden.seeds) {
            ASSERT_FALSE(seed.inputs.empty());
            const RunResult full = run_graph(*loaded, seed.inputs);
            EXPECT_EQ(full.outputs, seed.outputs) << seed.name;
            all_seeds = all_seeds && full.outputs == seed.outputs;
            bit_exact += full.outputs == seed.outputs;
            RunOptions no_data;
            no_data.pipeline.execute = false;
            const RunResult timing_only = run_graph(*loaded, {}, no_data);
            ASSERT_EQ(timing_only.timing.size(), full.timing.size());
            for (size_t s = 0; s < full.timing.size(); ++s)
                EXPECT_EQ(timing_only.timing[s].totals.cycles, full.timing[s].totals.cycles);
            EXPECT_EQ(timing_only.cpu_operators.size(), full.cpu_operators.size());
        }
        exact_configs[model] += all_seeds;
    }
    for (const auto& [m, n] : exact_configs) std::printf("bit-exact with CPU operators: %s on %d configurations\n", m.c_str(), n);
    for (const auto& m : refused) std::printf("out of reach: %s\n", m.c_str());
    std::printf("%d runs bit-exact\n", bit_exact);
    // Arm's four KWS models (QUANTIZE in, DEQUANTIZE out) on 5 + 2 x 4 configurations,
    // keyword_scrambled_8bit (SVDF, SOFTMAX) on all 13, seanet_transpose_conv0 (TRANSPOSE_CONV
    // int16) on U55/U65 (3 + 2 x 4) and conv_k3s1_same_batch2_8x8x8to8 (CONV_2D with batch 2,
    // Vela 3.10/4.1: 2 x 4), 2 seeds each; with the U85 corpus (when present) the KWS models and
    // keyword_scrambled_8bit on 8 more configurations each (its streams 1-4 on U85-512 read
    // WEIGHT1_LENGTH 0 with no WEIGHT1_BASE ever written).
    const int u85_runs = fs::exists(kVectorsVelaU85 / "index.csv") ? 5 * 8 * 2 : 0;
    EXPECT_GE(bit_exact, (4 * 13 + 13 + 11 + 8) * 2 + u85_runs);
}

}  // namespace
}  // namespace ethosu
