// check's output comparison against a plain loop over typed elements, and its tolerance rules;
// the manifest's declaration-driven validation on documents built here; run's .npy output at
// numpy's dimension limit.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <cstring>
#include <limits>
#include <random>

#include "frontend/cli/check.h"
#include "frontend/cli/tensor_files.h"
#include "frontend/loaders/npy.h"

namespace ethosu {
namespace {

using json = nlohmann::ordered_json;

// The figures compare_output must give, from typed arrays.
template <typename T>
std::pair<uint64_t, double> plain_differences(const std::vector<T>& a, const std::vector<T>& b) {
    uint64_t differing = 0;
    double max_diff = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::memcmp(&a[i], &b[i], sizeof(T)) == 0) continue;
        ++differing;
        const double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
        max_diff = std::max(max_diff, std::isnan(d) ? INFINITY : d);
    }
    return {differing, max_diff};
}

template <typename T>
std::span<const uint8_t> bytes_of(const std::vector<T>& v) {
    return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(T)};
}

template <typename T>
void check_type(ElementType type) {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int64_t> value(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<T> a(257), b;
        for (auto& x : a) x = static_cast<T>(value(rng));
        b = a;
        for (int changes = trial; changes > 0; --changes) b[rng() % b.size()] = static_cast<T>(value(rng));
        const auto [differing, max_diff] = plain_differences(a, b);
        const OutputComparison c = compare_output(bytes_of(a), bytes_of(b), type, {});
        EXPECT_EQ(c.elements, a.size());
        EXPECT_EQ(c.differing, differing);
        EXPECT_EQ(c.max_abs_diff, max_diff);
        EXPECT_EQ(c.pass, differing == 0);
    }
}

TEST(CompareOutput, IntegerTypesAgainstAPlainLoop) {
    check_type<int8_t>(ElementType::Int8);
    check_type<uint8_t>(ElementType::UInt8);
    check_type<int16_t>(ElementType::Int16);
    check_type<uint16_t>(ElementType::UInt16);
    check_type<int32_t>(ElementType::Int32);
}

TEST(CompareOutput, FirstDifferencesInOrderWithBothValues) {
    std::vector<int8_t> a(100, 3), b(100, 3);
    const std::vector<size_t> changed = {2, 17, 18, 40, 41, 77, 99};
    for (const size_t i : changed) b[i] = static_cast<int8_t>(-static_cast<int>(i));
    const OutputComparison c = compare_output(bytes_of(a), bytes_of(b), ElementType::Int8, {});
    ASSERT_EQ(c.first_differences.size(), OutputComparison::kFirstDifferences);
    for (size_t k = 0; k < c.first_differences.size(); ++k) {
        EXPECT_EQ(c.first_differences[k].element, changed[k]);
        EXPECT_EQ(c.first_differences[k].got, 3);
        EXPECT_EQ(c.first_differences[k].expected, -static_cast<double>(changed[k]));
    }
}

TEST(CompareOutput, CoordinatesAreRowMajor) {
    EXPECT_EQ(element_coordinates(0, {1, 4, 4, 8}), "[0,0,0,0]");
    EXPECT_EQ(element_coordinates(8 * 4 + 3, {1, 4, 4, 8}), "[0,1,0,3]");
    EXPECT_EQ(element_coordinates(127, {1, 4, 4, 8}), "[0,3,3,7]");
    EXPECT_EQ(element_coordinates(128, {1, 4, 4, 8}), "[128]");  // past the end: the flat index
    EXPECT_EQ(element_coordinates(5, {}), "[5]");
}

TEST(CheckSummary, AnEntryResultRoundTripsThroughJson) {
    EntryResult r;
    r.name = "kws/u55-128";
    r.status = EntryResult::Status::Fail;
    r.cycles = 59629;
    r.seconds = 0.25;
    r.problems = {"output 0: 1 of 12 elements differ"};
    OutputComparison c;
    c.index = 1;
    c.elements = 12;
    c.differing = 1;
    c.max_abs_diff = INFINITY;  // a NaN against a number
    c.first_differences = {{7, NAN, 2.5}};
    r.outputs.push_back(c);
    r.figures.push_back({{"AXI0 memory", "Sram"}, "Dram", false});
    const json written = entry_result_json(r);
    const EntryResult back = entry_result_from_json(json::parse(written.dump()), "s.json", "entries[0]");
    EXPECT_EQ(entry_result_json(back).dump(), written.dump());
    EXPECT_TRUE(std::isinf(back.outputs[0].max_abs_diff));
    EXPECT_THROW(entry_result_from_json(json{{"name", "x"}}, "s.json", "entries[0]"), UsageError);
}

TEST(CheckShards, EveryNameInOneShardTheSameOnEveryRun) {
    // FNV-1a's values are fixed: a shard assignment that changed between builds would run some
    // entries twice and others never across a CI matrix.
    EXPECT_EQ(shard_of("", 7), 14695981039346656037ull % 7 + 1);
    size_t counts[4] = {};
    for (int i = 0; i < 400; ++i) {
        const size_t shard = shard_of(fmt::format("model{}", i), 4);
        ASSERT_GE(shard, 1u);
        ASSERT_LE(shard, 4u);
        ++counts[shard - 1];
        EXPECT_EQ(shard_of(fmt::format("model{}", i), 4), shard);
    }
    for (const size_t n : counts) EXPECT_GT(n, 60u);  // none starved
}

TEST(Manifest, DefaultEntryNames) {
    EXPECT_EQ(default_entry_name("../../../../shared/vectors/person_detect/ethos-u55-128/model_vela.tflite"),
              "person_detect/ethos-u55-128/model_vela");
    EXPECT_EQ(default_entry_name("model.bin"), "model");
    EXPECT_EQ(default_entry_name("./kws/kws_vela.tflite"), "kws/kws_vela");
    EXPECT_EQ(default_entry_name("/abs/a/b/c/d.tflite"), "b/c/d");
}

TEST(CompareOutput, Float32AndNaN) {
    const std::vector<float> a = {1.0f, 2.0f, NAN, 4.0f}, b = {1.0f, 2.5f, NAN, 4.0f};
    // The same NaN bits compare equal; a NaN against a number is infinitely far off.
    OutputComparison c = compare_output(bytes_of(a), bytes_of(b), ElementType::Float32, {});
    EXPECT_EQ(c.differing, 1u);
    EXPECT_EQ(c.max_abs_diff, 0.5);
    const std::vector<float> d = {1.0f, 2.0f, 3.0f, 4.0f};
    c = compare_output(bytes_of(a), bytes_of(d), ElementType::Float32, {.max_abs_diff = 1e30});
    EXPECT_TRUE(std::isinf(c.max_abs_diff));
    EXPECT_FALSE(c.pass);
}

TEST(CompareOutput, EachGivenLimitHolds) {
    const std::vector<int8_t> a = {0, 10, 20, 30}, b = {1, 10, 22, 30};  // 2 differ, max 2
    const auto pass = [&](OutputExpectation e) { return compare_output(bytes_of(a), bytes_of(b), ElementType::Int8, e).pass; };
    EXPECT_FALSE(pass({}));
    EXPECT_TRUE(pass({.max_abs_diff = 2}));
    EXPECT_FALSE(pass({.max_abs_diff = 1}));
    EXPECT_TRUE(pass({.max_differing = 2}));
    EXPECT_FALSE(pass({.max_differing = 1}));
    EXPECT_TRUE(pass({.max_abs_diff = 2, .max_differing = 2}));
    EXPECT_FALSE(pass({.max_abs_diff = 2, .max_differing = 1}));
    const std::vector<int8_t> shorter = {0, 10, 20};
    const OutputComparison c = compare_output(bytes_of(a), bytes_of(shorter), ElementType::Int8, {.max_differing = 9});
    EXPECT_FALSE(c.pass);
    EXPECT_EQ(c.size_mismatch, "4 bytes, the expected file has 3");
}

json manifest_with(const json& baseline) {
    return {{"format", "ethosu-emu-manifest"},
            {"version", 1},
            {"entries", json::array({{{"model", "/proc/self/exe"}, {"baseline", baseline}}})}};
}

TEST(Manifest, BaselineFiguresOfARunAndOfAManifestLineUp) {
    const json timing = {{"cycles", {{"total", 1000}, {"npu_active", 990}, {"idle", 10}}},
                         {"traffic",
                          {{"memories", {{"Sram", {{"read_bytes", 64}, {"write_bytes", 32}}}}},
                           {"axi", json::array({{{"port", "AXI0"}, {"memory", "Sram"}, {"read_beats", 4}, {"write_beats", 2}}})}}}};
    json baseline = baseline_json(timing);
    baseline["drift_percent"] = 5;
    const Manifest m = parse_manifest(manifest_with(baseline), "m.json", {});
    const auto from_manifest = baseline_figures(m.entries.at(0).baseline->figures);
    const auto from_run = baseline_figures(baseline_json(timing));
    ASSERT_EQ(from_manifest.size(), from_run.size());
    for (size_t i = 0; i < from_run.size(); ++i) {
        EXPECT_EQ(from_manifest[i].name, from_run[i].name);
        EXPECT_EQ(from_manifest[i].value, from_run[i].value);
    }
    EXPECT_EQ(m.entries[0].baseline->drift_percent, 5);
    EXPECT_EQ(from_run.front().name, "cycles");
    EXPECT_EQ(from_run.front().value, 1000);
}

TEST(Manifest, RefusalsNameTheEntryAndKey) {
    const auto refusal = [](const json& document) -> std::string {
        try {
            parse_manifest(document, "m.json", {});
        } catch (const UsageError& e) {
            return e.what();
        }
        return "accepted";
    };
    EXPECT_EQ(refusal(manifest_with({{"cycles", 1}, {"drift_percent", -1}})),
              "m.json: entries[0].baseline.drift_percent: must be a non-negative number, not -1");
    EXPECT_EQ(refusal(manifest_with({{"cycles", 1}, {"traffic", {{"axi", json::array({{{"port", "AXI2"}, {"memory", "Sram"},
                                                                                        {"read_beats", 0}, {"write_beats", 0}}})}}}})),
              "m.json: entries[0].baseline.traffic.axi[0].port: \"AXI2\": the ports are AXI0 and AXI1");
    EXPECT_EQ(refusal(manifest_with({{"cycles", json::array()}})),
              "m.json: entries[0].baseline.cycles: must be a non-negative integer, not a list");
}

// An output of more dimensions than numpy takes is refused as an .npy, naming the file; at the
// limit it is written (a hostile model's shape must not give a file numpy cannot read).
TEST(TensorFiles, AnNpyOutputOfMoreDimensionsThanNumpyTakesIsRefused) {
    TensorInfo t;
    t.name = "deep";
    t.type = ElementType::Int8;
    t.shape.assign(kMaxNpyDimensions, 1);
    const std::vector<uint8_t> byte = {7};
    const std::string path = (std::filesystem::temp_directory_path() / "ethosu_emu_deep.npy").string();
    EXPECT_NO_THROW(write_tensor_file(path, t, byte));
    t.shape.push_back(1);
    try {
        write_tensor_file(path, t, byte);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("ethosu_emu_deep.npy"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("has 33 dimensions; numpy takes at most 32"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace ethosu
