// Runs every fully-NPU model of ../shared/vectors on every configuration, with both golden inputs,
// and compares the outputs with TFLite Micro's reference outputs, byte for byte. Outputs only: the
// cycle estimate is the timing tests' business.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/config_test_name.h"
#include "tests/corpus_index.h"
#include "tests/resident_pages.h"

#include <cstring>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "emulator/isa/error.h"
#include "frontend/runner/run_model.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

// Models whose Vela 5.1 lowering is not bit-exact with TFLM: the elements (output 0, element
// index) that differ, each by one LSB. int16 SUB: TFLM computes the input/output multipliers in
// float, Vela in double (TFLM 1477640064 / 1397416448 vs Vela 1477640047 / 1397416498).
struct KnownDifference {
    std::string model;
    int seed;
    std::set<size_t> elements;
};
const KnownDifference kKnownDifferences[] = {
    {"sub_8x8x32_i16", 1, {1118}},
    {"sub_8x8x32_i16", 2, {361, 782, 889}},
};

const std::set<size_t>* known_difference(const std::string& model, int seed) {
    for (const auto& k : kKnownDifferences)
        if (k.model == model && k.seed == seed) return &k.elements;
    return nullptr;
}

// Models not yet bit-exact, with what is known. The test fails if one of them starts passing,
// so this list only shrinks.
struct NotYetBitExact {
    std::string model;
    std::set<std::string> configs;
    std::string reason;
};
const std::vector<NotYetBitExact> kNotYetBitExact = {};

const NotYetBitExact* not_yet_bit_exact(const std::string& model, const std::string& config) {
    for (const auto& k : kNotYetBitExact)
        if (k.model == model && k.configs.count(config)) return &k;
    return nullptr;
}

// Compares element-wise; returns a description of the first mismatches, empty if equal
// (apart from the documented known differences).
std::string compare(const std::vector<uint8_t>& ours, const std::vector<uint8_t>& golden, int elem_size,
                    const std::set<size_t>* allowed) {
    if (ours.size() != golden.size()) return fmt::format("size {} vs golden {}", ours.size(), golden.size());
    std::string report;
    int shown = 0;
    size_t mismatches = 0;
    for (size_t i = 0; i < ours.size() / elem_size; ++i) {
        int64_t a = 0, b = 0;
        std::memcpy(&a, &ours[i * elem_size], elem_size);
        std::memcpy(&b, &golden[i * elem_size], elem_size);
        if (a == b) continue;
        const int64_t diff = (a - b) << (64 - 8 * elem_size) >> (64 - 8 * elem_size);
        if (allowed && allowed->count(i) && (diff == 1 || diff == -1)) continue;
        ++mismatches;
        if (shown++ < 5) report += fmt::format(" [{}] {} vs {};", i, a, b);
    }
    return mismatches ? fmt::format("{} mismatching elements:{}", mismatches, report) : std::string{};
}

// A timing-only run of the model gives the full run's timeline, op by op.
std::string timing_only_differs(const LoadedModel& model, const RunResult& full) {
    const RunResult timing_only = run_model(model, {}, {.pipeline = {.execute = false}});
    if (full.timing.empty() || full.timing.size() != timing_only.timing.size())
        return fmt::format("{} streams timed in the full run, {} timing only", full.timing.size(), timing_only.timing.size());
    for (size_t s = 0; s < full.timing.size(); ++s) {
        const auto& a = full.timing[s];
        const auto& b = timing_only.timing.at(s);
        if (a.ops.size() != b.ops.size()) return fmt::format("stream {}: {} ops timed, {} timing only", s, a.ops.size(), b.ops.size());
        for (size_t i = 0; i < a.ops.size(); ++i)
            if (a.ops[i].end != b.ops[i].end)
                return fmt::format("stream {} op {} ends at {} in the full run, {} timing only", s, i, a.ops[i].end,
                                   b.ops[i].end);
        if (a.totals.cycles != b.totals.cycles)
            return fmt::format("stream {}: {} cycles, {} timing only", s, a.totals.cycles, b.totals.cycles);
    }
    return {};
}

// Runs the fully-NPU models of one compiled corpus (its index.csv, filtered to `vela` where it holds
// several compilers) on `config` against the TFLM goldens of ../shared/vectors, both seeds; with
// `timed`, the first seed's run is timed too and must equal a timing-only run.
void check_corpus(const fs::path& corpus, const std::string& config, const std::string& vela, bool timed = false) {
    const fs::path vectors = ETHOSU_VECTORS_DIR;
    if (!fs::exists(vectors / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors;
    if (!fs::exists(corpus / "index.csv")) GTEST_SKIP() << "test vectors not found at " << corpus;
    const fs::path compiled = vela.empty() ? corpus : corpus / vela;
    const std::string label = vela.empty() ? config : fmt::format("Vela {} {}", vela, config);
    int passed = 0, no_golden = 0;
    std::vector<std::string> failures, known_failures;
    const auto entries = fully_npu_entries(corpus, config, vela);
    if (entries.empty()) ADD_FAILURE() << label << ": no fully-NPU model in " << corpus / "index.csv";
    for (const auto& [name, vela_cycles] : entries) {
        const fs::path golden = vectors / name / "golden";
        const auto meta = nlohmann::json::parse(std::ifstream(golden / "meta.json"));
        if (meta.value("status", "") != "ok") {
            ++no_golden;
            continue;
        }
        const fs::path model_path = compiled / name / config / "model_vela.tflite";
        try {
            const auto model = load_model(model_path.string(), {});
            for (int seed : {1, 2}) {
                std::vector<std::vector<uint8_t>> inputs;
                for (size_t k = 0; k < model->inputs.size(); ++k)
                    inputs.push_back(read_file_bytes(golden / fmt::format("seed{}.in{}.bin", seed, k)));
                const bool time_it = timed && seed == 1;
                const RunResult result =
                    run_model(*model, std::move(inputs), {.pipeline = {.execute = true, .timing = time_it}});
                if (time_it) {
                    const std::string differs = timing_only_differs(*model, result);
                    if (!differs.empty()) throw std::runtime_error(differs);
                }
                for (size_t k = 0; k < result.outputs.size(); ++k) {
                    const auto expected = read_file_bytes(golden / fmt::format("seed{}.out{}.bin", seed, k));
                    const int elem = std::max(1, element_size(model->outputs[k].type));
                    const std::string diff = compare(result.outputs[k], expected, elem,
                                                     k == 0 ? known_difference(name, seed) : nullptr);
                    if (!diff.empty()) throw std::runtime_error(fmt::format("seed {} output {}: {}", seed, k, diff));
                }
            }
            if (not_yet_bit_exact(name, config)) {
                ADD_FAILURE() << label << " " << name << " is bit-exact now: remove it from kNotYetBitExact";
            }
            ++passed;
        } catch (const std::exception& e) {
            if (const auto* known = not_yet_bit_exact(name, config)) {
                known_failures.push_back(name + " (" + known->reason + "): " + e.what());
            } else {
                failures.push_back(name + ": " + e.what());
            }
        }
    }
    for (const auto& f : failures) ADD_FAILURE() << label << " " << f;
    for (const auto& f : known_failures) std::cout << "[ not yet bit-exact ] " << label << " " << f << "\n";
    std::cout << "[ conformance ] " << label << ": " << passed << " models bit-exact, " << failures.size()
              << " failing, " << known_failures.size() << " known not yet bit-exact, " << no_golden
              << " without a TFLM golden\n";
}

class Conformance : public ::testing::TestWithParam<const char*> {};

TEST_P(Conformance, OutputsEqualTfliteMicroReference) { check_corpus(ETHOSU_VECTORS_DIR, GetParam(), {}); }

INSTANTIATE_TEST_SUITE_P(AllConfigs, Conformance,
                         ::testing::Values("ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u85-256",
                                           "ethos-u85-1024"),
                         ConfigTestName{});

// The same models compiled by Vela 3.10 and 4.1 (../shared/vectors-vela), whose streams use other
// idioms than 5.1's (PER_CHANNEL MAX pools without OFM_SCALE, stale zero points on int32 softmax
// steps, U65-512 LUTs per core), against the same goldens.
class OlderVelaConformance : public ::testing::TestWithParam<const char*> {};

TEST_P(OlderVelaConformance, OutputsEqualTfliteMicroReference) {
    for (const char* vela : {"3.10.0", "4.1.0"}) check_corpus(ETHOSU_VECTORS_VELA_DIR, GetParam(), vela);
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, OlderVelaConformance,
                         ::testing::Values("ethos-u55-64", "ethos-u55-128", "ethos-u65-256", "ethos-u65-512"),
                         ConfigTestName{});

// The same models compiled for U85 by Vela 4.5.0 (every size) and 5.1.0 (the sizes
// ../shared/vectors lacks), from ../shared/vectors-vela-u85: 4.5 writes a U85 AVERAGE pool's
// OFM_SCALE as 1/N, 5.1 as one; fast weights on U85-512 with WEIGHT1_LENGTH 0 and no WEIGHT1_BASE;
// 1-D DMAs without DMA0_SIZE0. Timing-only runs give the full runs' cycles.
class VelaU85Conformance : public ::testing::TestWithParam<VelaCompile> {};

TEST_P(VelaU85Conformance, OutputsEqualTfliteMicroReference) {
    check_corpus(ETHOSU_VECTORS_VELA_U85_DIR, GetParam().config, GetParam().version, true);
}

INSTANTIATE_TEST_SUITE_P(Vela45And51, VelaU85Conformance, ::testing::ValuesIn(kVelaU85Compiles),
                         [](const auto& info) { return vela_compile_name(info.param); });

// A run of its own reads each weight once, then hands the mapped file's pages back: after
// MobileNetV2 (3.4 MB of weights) few of them are still mapped in.
TEST(ModelMemory, ARunLeavesFewWeightPagesResident) {
    const fs::path vectors = ETHOSU_VECTORS_DIR;
    const fs::path dir = vectors / "coral_tf2_mobilenet_v2_224_ptq";
    if (!fs::exists(dir / "golden" / "seed1.in0.bin")) GTEST_SKIP() << "test vectors not found at " << vectors;
    const auto model = load_model((dir / "ethos-u55-128" / "model_vela.tflite").string(), {});
    const RegionImage& weights = model->invocations.at(0).regions.at(0);
    ASSERT_EQ(weights.role, RegionRole::Weights);
    ASSERT_TRUE(weights.file_mapped);
    const RunResult result =
        run_model(*model, {read_file_bytes(dir / "golden" / "seed1.in0.bin")}, {.pipeline = {.execute = true, .timing = false}});
    EXPECT_EQ(result.outputs.at(0), read_file_bytes(dir / "golden" / "seed1.out0.bin"));
    const auto resident = resident_pages(weights.bytes);
    if (!resident) GTEST_SKIP() << "/proc/self/pagemap cannot be read here";
    const size_t pages = (weights.bytes.size() + 4095) / 4096;
    EXPECT_LT(*resident * 10, pages) << *resident << " of " << pages << " weight pages still resident";
}

}  // namespace
}  // namespace ethosu
