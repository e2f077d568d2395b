// run's --pmu: the event names it takes and refuses, and the counts in the ML embedded evaluation
// kit's profiler layout, on the bundled example (a timed run of the project's own stream).

#include <gtest/gtest.h>

#include "frontend/cli/example_model.h"
#include "frontend/cli/pmu_report.h"
#include "frontend/runner/run_model.h"
#include "tests/loaders/loader_test_util.h"

namespace ethosu {
namespace {

using test::error_of;

TEST(PmuOption, TakesArmsAndTheCoreDriversNames) {
    const NpuConfig u55 = *find_npu_config("ethos-u55-128");
    EXPECT_EQ(pmu_events(u55, {"NPU_ACTIVE", "ETHOSU_PMU_AXI0_RD_DATA_BEAT_RECEIVED"}),
              (std::vector<uint32_t>{*pmu_event_id(u55.generation, "NPU_ACTIVE"),
                                     *pmu_event_id(u55.generation, "AXI0_RD_DATA_BEAT_RECEIVED")}));
    const NpuConfig u85 = *find_npu_config("ethos-u85-256");
    EXPECT_EQ(pmu_events(u85, {"EXT_RD_DATA_BEAT_RECEIVED"}).size(), 1u);
}

TEST(PmuOption, RefusesMoreEventsThanCountersNamingTheLimit) {
    const NpuConfig u55 = *find_npu_config("ethos-u55-128");
    const std::vector<std::string> five(5, "CYCLE");
    const std::string e = error_of([&] { pmu_events(u55, five); });
    EXPECT_NE(e.find("--pmu"), std::string::npos) << e;
    EXPECT_NE(e.find("5 events requested; ethos-u55-128 has 4 event counters"), std::string::npos) << e;
    // U85 has 8 counters: five events fit.
    EXPECT_EQ(pmu_events(*find_npu_config("ethos-u85-256"), five).size(), 5u);
}

TEST(PmuOption, RefusesUnknownAndUnmodelledEventsListingTheModelledOnes) {
    const NpuConfig u55 = *find_npu_config("ethos-u55-128");
    std::string e = error_of([&] { pmu_events(u55, {"NPU_ACTIV"}); });
    EXPECT_NE(e.find("no such event on ethos-u55-128"), std::string::npos) << e;
    std::string listed;
    for (const uint32_t event : pmu_modelled_events(u55.generation))
        listed += (listed.empty() ? "" : ", ") + std::string(pmu_event_name(u55.generation, event));
    EXPECT_NE(e.find("modelled events: " + listed), std::string::npos) << e;
    e = error_of([&] { pmu_events(u55, {"AXI_LATENCY_ANY"}); });  // the description's, not counted
    EXPECT_NE(e.find("not modelled on ethos-u55-128"), std::string::npos) << e;
    // An AXI0 name is U55's; U85 calls the event SRAM_*.
    e = error_of([&] { pmu_events(*find_npu_config("ethos-u85-256"), {"AXI0_RD_DATA_BEAT_RECEIVED"}); });
    EXPECT_NE(e.find("no such event"), std::string::npos) << e;
}

class PmuReport : public ::testing::Test {
protected:
    void SetUp() override {
        model = load_model(test::write_temp("pmu_example.bin", build_example_model()), {});
        result = run_model(*model, {});
    }
    std::unique_ptr<LoadedModel> model;
    RunResult result;
};

// Each requested event but NPU_ACTIVE/NPU_IDLE gets a line, named without NPU_ and with its unit;
// the active, idle and total cycles close the list, the total being the cycle counter.
TEST_F(PmuReport, FollowsTheProfilersLayout) {
    const NpuConfig& npu = model->config;
    const std::vector<uint32_t> events =
        pmu_events(npu, {"NPU_ACTIVE", "AXI0_RD_DATA_BEAT_RECEIVED", "AXI0_WR_TRANS_ACCEPTED", "MAC_ACTIVE"});
    const PmuReading reading = read_pmu(result.memory, result.timing, events);
    const std::vector<ProfilerLine> lines = mlek_profile(result.memory, result.timing, npu, events, reading);
    ASSERT_EQ(lines.size(), 6u);
    EXPECT_EQ(lines[0].name, "NPU AXI0_RD_DATA_BEAT_RECEIVED");
    EXPECT_EQ(lines[0].unit, "beats");
    EXPECT_EQ(lines[0].count, reading.counters[1]);
    EXPECT_EQ(lines[1].name, "NPU AXI0_WR_TRANS_ACCEPTED");
    EXPECT_EQ(lines[1].unit, "transactions");
    EXPECT_EQ(lines[2].name, "NPU MAC_ACTIVE");
    EXPECT_EQ(lines[2].unit, "cycles");
    EXPECT_EQ(lines[3].name, "NPU ACTIVE");
    EXPECT_EQ(lines[3].count, reading.counters[0]);
    EXPECT_GT(lines[3].count, 0u);
    EXPECT_EQ(lines[4].name, "NPU IDLE");
    EXPECT_EQ(lines[5].name, "NPU TOTAL");
    EXPECT_EQ(lines[5].count, reading.cycle_counter);
    const auto json = pmu_json(npu, events, reading);
    EXPECT_EQ(json["cycle_counter"], reading.cycle_counter);
    ASSERT_EQ(json["event_counters"].size(), 4u);
    EXPECT_EQ(json["event_counters"][2]["event"], "AXI0_WR_TRANS_ACCEPTED");
    EXPECT_EQ(json["event_counters"][2]["count"], reading.counters[2]);
}

}  // namespace
}  // namespace ethosu
