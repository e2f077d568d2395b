// sweep's grid: axes parsed from --vary / --scale, refusals that name the option, the key and the
// valid keys, and the points derived from the bundled example's memory system in grid order.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "frontend/cli/example_model.h"
#include "frontend/cli/manifest.h"
#include "frontend/cli/sweep.h"
#include "tests/loaders/loader_test_util.h"

namespace ethosu {
namespace {

std::string usage_error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const UsageError& e) {
        return e.what();
    }
    return "no usage error";
}

TEST(SweepAxes, ParsedFromKeyAndValues) {
    const struct {
        std::string option, text, key;
        bool scale;
        std::vector<std::string> values;
    } cases[] = {
        {"--vary", "core_clock=400e6,500e6,600e6", "core_clock", false, {"400e6", "500e6", "600e6"}},
        {"--vary", "OffChipFlash_read_latency=32", "OffChipFlash_read_latency", false, {"32"}},
        {"--vary", "axi0_port=Sram,Dram", "axi0_port", false, {"Sram", "Dram"}},
        {"--vary", "memory_mode=Shared_Sram,Sram_Only", "memory_mode", false, {"Shared_Sram", "Sram_Only"}},
        {"--vary", "system_config=A", "system_config", false, {"A"}},
        {"--vary", "arena_cache_size=0,262144", "arena_cache_size", false, {"0", "262144"}},
        {"--scale", "OffChipFlash_clock_scale=0.5,1,2", "OffChipFlash_clock_scale", true, {"0.5", "1", "2"}},
    };
    for (const auto& c : cases) {
        const SweepAxis axis = parse_sweep_axis(c.option, c.text);
        EXPECT_EQ(axis.key, c.key) << c.text;
        EXPECT_EQ(axis.scale, c.scale) << c.text;
        EXPECT_EQ(axis.values, c.values) << c.text;
    }
}

TEST(SweepAxes, RefusalsNameOptionKeyAndValidKeys) {
    const struct {
        std::string option, text, error;
    } cases[] = {
        {"--vary", "core_clock", "--vary: core_clock: expected KEY=V1,V2"},
        {"--vary", "=1,2", "expected KEY=V1,V2"},
        {"--vary", "OffChipFlash.read_latency=32", "--vary: OffChipFlash.read_latency: not a sweep axis; valid: "
                                                   "system_config, memory_mode, core_clock, axi0_port"},
        {"--vary", "core_clock=1,,2", "--vary: core_clock: an empty value"},
        {"--vary", "core_clock=1,1", "--vary: core_clock: '1' given twice"},
        {"--scale", "Sram_read_latency=2,-1", "--scale: Sram_read_latency: factor '-1' is not a positive number"},
        {"--scale", "Sram_read_latency=fast", "factor 'fast' is not a positive number"},
        {"--scale", "memory_mode=2", "--scale: memory_mode: names a section"},
    };
    for (const auto& c : cases) {
        const std::string error = usage_error_of([&] { parse_sweep_axis(c.option, c.text); });
        EXPECT_NE(error.find(c.error), std::string::npos) << c.text << ": " << error;
    }
    const std::string unknown = usage_error_of([] { parse_sweep_axis("--vary", "flash=1"); });
    EXPECT_NE(unknown.find("OffChipFlash_read_latency"), std::string::npos);
    EXPECT_NE(unknown.find("arena_cache_size"), std::string::npos);
}

class SweepPoints : public ::testing::Test {
protected:
    void SetUp() override { model = load_model(test::write_temp("sweep_example.bin", build_example_model()), {}); }
    std::unique_ptr<LoadedModel> model;
};

TEST_F(SweepPoints, FirstAxisOutermostEachPointAVariantOfTheBase) {
    const std::vector<SweepAxis> axes = {parse_sweep_axis("--scale", "OffChipFlash_clock_scale=1,2"),
                                         parse_sweep_axis("--vary", "memory_mode=Shared_Sram,Sram_Only,Dedicated_Sram")};
    const auto points = sweep_points(*model, {}, axes);
    ASSERT_EQ(points.size(), 6u);
    const std::vector<std::vector<std::string>> expected = {
        {"0.125", "Shared_Sram"}, {"0.125", "Sram_Only"}, {"0.125", "Dedicated_Sram"},
        {"0.25", "Shared_Sram"},  {"0.25", "Sram_Only"},  {"0.25", "Dedicated_Sram"},
    };
    for (size_t i = 0; i < points.size(); ++i) {
        EXPECT_EQ(points[i].parameters, expected[i]) << i;
        EXPECT_EQ(points[i].memory.mode.name, expected[i][1]);
        EXPECT_EQ(points[i].memory.system.name, "Ethos_U55_High_End_Embedded");
        EXPECT_EQ(points[i].memory.system.core_clock, 500e6);
    }
    EXPECT_EQ(points[4].memory.mode.const_port, 0);  // Sram_Only
}

TEST_F(SweepPoints, RefusedGrids) {
    EXPECT_NE(usage_error_of([&] {
                  sweep_points(*model, {}, {parse_sweep_axis("--vary", "core_clock=1"), parse_sweep_axis("--scale", "core_clock=2")});
              }).find("core_clock: is an axis twice"),
              std::string::npos);
    EXPECT_NE(usage_error_of([&] { sweep_points(*model, {}, {parse_sweep_axis("--vary", "axi1_port=Flash")}); })
                  .find("--vary: axi1_port: 'Flash' is not a memory; valid: Sram, Dram, OnChipFlash, OffChipFlash"),
              std::string::npos);
    std::string many = "core_clock=";
    for (int i = 1; i <= 101; ++i) many += fmt::format("{}{}e6", i == 1 ? "" : ",", i);
    const SweepAxis axis = parse_sweep_axis("--vary", many);
    std::vector<SweepAxis> axes{axis, parse_sweep_axis("--vary", many.replace(0, 10, "Sram_read_latency")),
                                parse_sweep_axis("--vary", "Sram_write_latency=1,2")};
    EXPECT_NE(usage_error_of([&] { sweep_points(*model, {}, axes); }).find("more than 10000 points"), std::string::npos);
}

// A faster SRAM never makes the example, whose data is all in SRAM, slower; the results come back
// in grid order whatever thread timed them.
TEST_F(SweepPoints, TimedInGridOrder) {
    const std::vector<SweepAxis> axes = {parse_sweep_axis("--scale", "Sram_clock_scale=0.25,0.5,1,2,4")};
    const auto results = run_sweep(*model, sweep_points(*model, {}, axes), {}, 2);
    ASSERT_EQ(results.size(), 5u);
    for (size_t i = 1; i < results.size(); ++i) {
        EXPECT_EQ(results[i].point.parameters[0], system_key_value(results[i].point.memory, "Sram_clock_scale"));
        EXPECT_LE(results[i].cycles, results[i - 1].cycles) << i;
    }
    EXPECT_GT(results[0].cycles, results[4].cycles);
}

}  // namespace
}  // namespace ethosu
