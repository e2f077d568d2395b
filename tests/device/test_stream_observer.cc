// NpuDevice's stream observer, as `ethosu-emu system` uses it: a corpus stream started twice
// through the registers on the host's clock, with idle time between; the observer gets one record
// per inference, at the cycle CMD started it, with the ops, cycles, AXI traffic and PMU counts of
// `run --timing-only` on the same stream, and one hash for the two. A faulted stream and one reset
// before its end give no record. Offsets are the hardware's, written here independently of our
// description.

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "emulator/engine/timing/pmu.h"
#include "frontend/device/completed_stream.h"
#include "frontend/runner/run_model.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

constexpr uint32_t CMD = 0x008, QBASE = 0x010, QSIZE = 0x020, REGIONCFG = 0x03C, BASEP = 0x080;
constexpr uint32_t PMCR = 0x180, PMCNTENSET = 0x184, PMEVTYPER = 0x380;
constexpr uint64_t kStreamAddress = 0x10000000, kRegionStride = 0x1000000;

class StreamObserver : public ::testing::Test {
protected:
    void SetUp() override {
        const fs::path model_file =
            fs::path(ETHOSU_VECTORS_DIR) / "person_detect" / "ethos-u55-128" / "model_vela.tflite";
        if (!fs::exists(model_file)) GTEST_SKIP() << "test vectors not found at " << ETHOSU_VECTORS_DIR;
        model_ = load_model(model_file.string(), {});
        SystemSelection system;
        system.memory_mode = "Shared_Sram";  // the arena on AXI0, the constants on AXI1: REGIONCFG 3 below
        NpuDevice::Options options;
        options.npu = model_->config;
        options.system = system;
        options.clock = NpuDevice::Clock::Host;
        device_ = std::make_unique<NpuDevice>(std::move(options));
        // The stream and each region in memory of their own.
        const NpuInvocation& inv = model_->invocations.at(0);
        stream_.resize(inv.stream.words.size() * 4);
        std::memcpy(stream_.data(), inv.stream.words.data(), stream_.size());
        device_->map(kStreamAddress, stream_, "stream");
        regions_.reserve(inv.regions.size());
        for (const auto& r : inv.regions) {
            auto& bytes = regions_.emplace_back(std::max<uint64_t>(r.size, 16), 0);
            std::copy(r.bytes.begin(), r.bytes.end(), bytes.begin());
            const uint64_t address = kStreamAddress + kRegionStride * (regions_.size());
            device_->map(address, bytes, "region");
            basep_.emplace_back(r.index, address);
        }
        // What `run --timing-only` gives for the stream on the same memory system.
        expected_ = run_model(*model_, {}, {.system = system, .pipeline = {.execute = false}});
        const Generation g = model_->config.generation;
        events_ = {*pmu_event_id(g, "NPU_ACTIVE"), *pmu_event_id(g, "MAC_ACTIVE"),
                   *pmu_event_id(g, "AXI0_RD_DATA_BEAT_RECEIVED")};
    }

    void enable_pmu() {
        device_->write(PMCR, 1 | 2 | 4);
        for (size_t i = 0; i < events_.size(); ++i)
            device_->write(PMEVTYPER + 4 * static_cast<uint32_t>(i), events_[i]);
        device_->write(PMCNTENSET, (1u << 31) | ((1u << events_.size()) - 1));
    }

    void start(uint32_t qsize) {
        device_->write(QBASE, 8, kStreamAddress);
        device_->write(QSIZE, qsize);
        for (const auto& [index, address] : basep_)
            device_->write(BASEP + 8 * static_cast<uint32_t>(index), 8, address);
        device_->write(REGIONCFG, 3);
        device_->write(CMD, 1);
    }
    void start() { start(static_cast<uint32_t>(stream_.size())); }

    // The stream runs to its end and the driver clears the interrupt.
    void finish() {
        device_->advance(device_->cycles_to_next_event().value_or(0));
        device_->write(CMD, 2);
    }

    std::unique_ptr<LoadedModel> model_;
    std::unique_ptr<NpuDevice> device_;
    std::vector<uint8_t> stream_;
    std::vector<std::vector<uint8_t>> regions_;
    std::vector<std::pair<int, uint64_t>> basep_;
    RunResult expected_;
    std::vector<uint32_t> events_;
};

TEST_F(StreamObserver, EachInferenceIsRecordedAtItsStartWithRunsFigures) {
    std::vector<NpuDevice::CompletedStream> records;
    device_->set_stream_observer([&](const NpuDevice::CompletedStream& s) { records.push_back(s); });
    enable_pmu();
    device_->advance(1000);  // the firmware's start-up
    start();
    const uint64_t first_start = device_->now();
    EXPECT_TRUE(records.empty()) << "recorded before the stream's cycles passed";
    finish();
    device_->advance(12345);  // the CPU's work between inferences
    const uint64_t second_start = device_->now();
    start();
    finish();

    ASSERT_EQ(records.size(), 2u);
    const TimingResult& want = expected_.timing.at(0);
    const PmuReading want_pmu = read_pmu(expected_.memory, expected_.timing, events_);
    EXPECT_EQ(records[0].start, first_start);
    EXPECT_EQ(records[1].start, second_start);
    EXPECT_EQ(second_start, first_start + static_cast<uint64_t>(want.totals.cycles) + 12345);
    EXPECT_EQ(records[0].hash, records[1].hash);
    EXPECT_NE(records[0].hash, 0u);
    for (const auto& r : records) {
        EXPECT_EQ(r.qbase, kStreamAddress);
        EXPECT_EQ(r.qsize, stream_.size());
        EXPECT_EQ(r.timing.totals.cycles, want.totals.cycles);
        EXPECT_EQ(r.timing.totals.npu_active, want.totals.npu_active);
        EXPECT_EQ(r.timing.totals.macs, want.totals.macs);
        for (int p = 0; p < 2; ++p) {
            EXPECT_EQ(r.timing.totals.beats.read[p], want.totals.beats.read[p]) << "AXI" << p;
            EXPECT_EQ(r.timing.totals.beats.write[p], want.totals.beats.write[p]) << "AXI" << p;
        }
        for (int m = 0; m < kMemoryKinds; ++m) {
            EXPECT_EQ(r.timing.totals.traffic.read[m], want.totals.traffic.read[m]);
            EXPECT_EQ(r.timing.totals.traffic.write[m], want.totals.traffic.write[m]);
        }
        ASSERT_EQ(r.stream.ops.size(), expected_.streams.at(0).ops.size());
        ASSERT_EQ(r.timing.ops.size(), want.ops.size());
        for (size_t i = 0; i < want.ops.size(); ++i) {
            EXPECT_EQ(r.stream.ops[i].offset, expected_.streams.at(0).ops[i].offset) << "op " << i;
            EXPECT_EQ(r.timing.ops[i].start, want.ops[i].start) << "op " << i;
            EXPECT_EQ(r.timing.ops[i].end, want.ops[i].end) << "op " << i;
        }
        EXPECT_TRUE(r.pmu_counting);
        EXPECT_EQ(std::vector<uint32_t>(r.pmu_events.begin(), r.pmu_events.begin() + 3), events_);
        EXPECT_EQ(r.pmu.cycle_counter, want_pmu.cycle_counter);
        for (size_t i = 0; i < events_.size(); ++i)
            EXPECT_EQ(r.pmu.counters.at(i), want_pmu.counters[i]) << "counter " << i;
    }
}

TEST_F(StreamObserver, AFaultedOrAbandonedStreamIsNotRecorded) {
    std::vector<NpuDevice::CompletedStream> records;
    device_->set_stream_observer([&](const NpuDevice::CompletedStream& s) { records.push_back(s); });
    start(0);  // an empty queue: a command parse error at once
    device_->advance(10);
    EXPECT_TRUE(records.empty());
    device_->power_on_reset();
    start();
    device_->advance(10);
    device_->power_on_reset();  // before the stream's end
    device_->advance(expected_.timing.at(0).totals.cycles);
    EXPECT_TRUE(records.empty());
    start();
    finish();
    EXPECT_EQ(records.size(), 1u);
}

}  // namespace
}  // namespace ethosu
