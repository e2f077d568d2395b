// The register front over a program's whole life, driven the way the real clients drive it:
// Arm's core driver (ethos-u-core-driver / Zephyr hal_ethos_u) under TensorFlow Lite Micro's
// Ethos-U kernel and ExecuTorch's Arm backend. The driver's register sequences are written here
// from what its sources do (ethosu_driver.c: power requests, a soft reset on the first request
// after power was released and after a fault; ethosu_device_u55_u65.c / _u85.c: soft reset, AXI
// set-up, QBASE/QSIZE/QCONFIG/BASEP/REGIONCFG then CMD, the interrupt handler's clear_irq;
// ethosu_pmu.c: PMCR, PMCNTENSET/CLR, PMEVTYPER), against the memory-mapped block and through
// the glue (address remap, semaphore), as the unchanged driver runs on a host. Offsets are the
// hardware's, written here independently of our description.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>

#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/builder.h"
#include "frontend/runner/run_model.h"
#include "frontend/device/ethosu_emu.h"
#include "tests/config_test_name.h"
#include "tests/corpus_index.h"

namespace fs = std::filesystem;

// What the glue calls and provides, as the driver's sources declare them.
struct ethosu_driver;
extern "C" {
void ethosu_irq_handler(ethosu_driver* drv);
uint64_t ethosu_address_remap(uint64_t address, int index);
void* ethosu_semaphore_create(void);
void ethosu_semaphore_destroy(void* sem);
int ethosu_semaphore_take(void* sem, uint64_t timeout);
int ethosu_semaphore_give(void* sem);
void arm_ethos_io_memcpy(void* dst, const void* src, size_t size);
}

namespace {

constexpr uint32_t STATUS = 0x004, CMD = 0x008, RESET = 0x00C, QBASE = 0x010, QCONFIG = 0x01C, QSIZE = 0x020,
                   PROT = 0x024, REGIONCFG = 0x03C, AXI_LIMIT0 = 0x040, MEM_ATTR0 = 0x040, AXI_SRAM = 0x050,
                   AXI_EXT = 0x054, BASEP = 0x080;
constexpr uint32_t PMCR = 0x180, PMCNTENSET = 0x184, PMCNTENCLR = 0x188, PMOVSCLR = 0x190, PMCCNTR = 0x1A0, PMCCNTR_CFG = 0x1A8, PMEVCNTR = 0x300,
                   PMEVTYPER = 0x380;
constexpr uint32_t kNpuIdle = 32, kNpuActive = 35;  // PMU event numbers (Arm's pmu_ethosu.h)
constexpr uint32_t kBusStatus = 4, kResetStatus = 8, kParseError = 16, kEndReached = 32, kWdFault = 128,
                   kEccFault = 256;
constexpr uint32_t kPowerClockMask = 0xC;
constexpr uint32_t kCycleCounter = 1u << 31;

enum JobState { kIdle, kJobRunning, kDone };
enum JobResult { kOk, kError, kTimeout };

}  // namespace

// One driver instance, the fields the sequences need.
struct ethosu_driver {
    volatile uint32_t* reg = nullptr;
    bool u85 = false;
    uint32_t pmu = 0;  // U85 moves the PMU block up by 0x1000
    void* semaphore = nullptr;
    uint64_t fast_memory = 0;
    int power_requests = 0;
    volatile int state = kIdle;
    volatile int result = kOk;
    std::vector<uint32_t> events;  // PMU events the inference-begin callback programs
    int irqs = 0;

    uint32_t rd(uint32_t off) const { return reg[off / 4]; }
    void wr(uint32_t off, uint32_t v) { reg[off / 4] = v; }

    // ethosu_dev_axi_init: the driver's default limits (U55/U65 AXI_LIMIT0-3; U85 MEM_ATTR0-3
    // with 0, 1 on the SRAM port and 2, 3 on the external one, AXI_SRAM and AXI_EXT).
    void axi_init() {
        if (u85) {
            for (uint32_t i = 0; i < 4; ++i) wr(MEM_ATTR0 + 4 * i, i < 2 ? 0 : 1u << 2);
            wr(AXI_SRAM, 11u | 15u << 8 | 2u << 16);
            wr(AXI_EXT, 63u | 31u << 8 | 2u << 16);
        } else {
            for (uint32_t i = 0; i < 4; ++i) wr(AXI_LIMIT0 + 4 * i, 31u << 16 | 15u << 24);
        }
    }
    void set_clock_and_power(bool clock_q, bool power_q) {
        wr(CMD, (clock_q ? 4u : 0u) | (power_q ? 8u : 0u));  // both bits replaced
    }
    // ethosu_dev_soft_reset: privileged, secure.
    bool soft_reset() {
        wr(RESET, 1);
        for (int i = 0; i < 100000 && (rd(STATUS) & kResetStatus); ++i) {
        }
        if (rd(STATUS) & kResetStatus) return false;
        if ((rd(PROT) & 3u) != 1u) return false;
        axi_init();
        set_clock_and_power(power_requests == 0, power_requests == 0);
        return true;
    }
    bool request_power() { return power_requests++ != 0 || soft_reset(); }
    void release_power() {
        if (--power_requests == 0) set_clock_and_power(true, true);
    }

    // ethosu_invoke_async for one command stream: base address 2 becomes the fast memory.
    int invoke_async(const uint8_t* stream, uint32_t bytes, std::vector<uint64_t> bases) {
        if (state != kIdle) return -1;
        if (fast_memory && bases.size() > 2) bases[2] = fast_memory;
        if (!request_power()) return -1;
        state = kJobRunning;
        inference_begin();
        const uint64_t qbase = ethosu_address_remap(reinterpret_cast<uintptr_t>(stream), -1);
        wr(QBASE, static_cast<uint32_t>(qbase));
        wr(QBASE + 4, static_cast<uint32_t>(qbase >> 32));
        wr(QSIZE, bytes);
        wr(QCONFIG, 2);
        uint32_t regioncfg = 0;
        for (size_t i = 0; i < bases.size(); ++i) {
            const uint64_t a = ethosu_address_remap(bases[i], static_cast<int>(i));
            wr(BASEP + 8 * static_cast<uint32_t>(i), static_cast<uint32_t>(a));
            wr(BASEP + 8 * static_cast<uint32_t>(i) + 4, static_cast<uint32_t>(a >> 32));
            // NPU_REGIONCFG_n of the driver's configs: 0 on config 3, the arena on 0 (U55, U85)
            // or 2 (U65), the rest on 1.
            const uint32_t cfg = i == 0 ? 3u : i == 1 ? (u85 || !dedicated_arena ? 0u : 2u) : 1u;
            regioncfg |= cfg << (2 * i);
        }
        wr(REGIONCFG, regioncfg);
        wr(CMD, (rd(CMD) & kPowerClockMask) | 1u);
        return 0;
    }
    // ethosu_wait
    int wait(bool block) {
        if (state == kIdle) return -2;
        if (state == kJobRunning && !block) return 1;
        if (ethosu_semaphore_take(semaphore, UINT64_MAX) < 0) {
            result = kTimeout;
            if (state == kDone) ethosu_semaphore_take(semaphore, UINT64_MAX);
        }
        inference_end();
        release_power();
        int ret = 0;
        if (result != kOk) {
            soft_reset();
            ret = -1;
        }
        state = kIdle;
        result = kOk;
        return ret;
    }
    int invoke(const uint8_t* stream, uint32_t bytes, std::vector<uint64_t> bases) {
        return invoke_async(stream, bytes, std::move(bases)) < 0 ? -1 : wait(true);
    }

    // The application's ethosu_inference_begin/end with the PMU API (as the ML embedded
    // evaluation kit's and TFLM's examples use it): enable, events, counters on, reset; at the
    // end, read, then disable.
    std::vector<uint32_t> counts;
    uint64_t cycles = 0;
    // Arm's evaluation kit's profiler instead (ethosu_profiler.c): ethosu_pmu_init sets the events,
    // clears the overflow flags, enables the PMU (ETHOSU_PMU_Enable requests power, so the soft
    // reset comes before the set-up, and power stays requested), disables the counters and resets
    // them; per inference the counters are reset when profiling starts, disabled and enabled in
    // the begin callback, disabled in the end callback, and read after the inference.
    bool eval_kit_profiler = false;
    uint32_t counter_mask() const { return kCycleCounter | ((1u << events.size()) - 1); }
    void profiler_init() {
        for (size_t i = 0; i < events.size(); ++i) wr(pmu + PMEVTYPER + 4 * static_cast<uint32_t>(i), events[i]);
        wr(pmu + PMOVSCLR, counter_mask());  // ETHOSU_PMU_Set_CNTR_OVS
        request_power();
        wr(pmu + PMCR, rd(pmu + PMCR) | 1);  // ETHOSU_PMU_Enable
        wr(pmu + PMCNTENCLR, counter_mask());
        profiler_start();
    }
    void profiler_start() {
        wr(pmu + PMCR, rd(pmu + PMCR) | 2);  // ETHOSU_PMU_EVCNTR_ALL_Reset
        wr(pmu + PMCR, rd(pmu + PMCR) | 4);  // ETHOSU_PMU_CYCCNT_Reset
    }
    void profiler_read() {
        counts.clear();
        for (size_t i = 0; i < events.size(); ++i) counts.push_back(rd(pmu + PMEVCNTR + 4 * static_cast<uint32_t>(i)));
        cycles = rd(pmu + PMCCNTR) | uint64_t{rd(pmu + PMCCNTR + 4)} << 32;
    }
    void inference_begin() {
        if (eval_kit_profiler) {
            wr(pmu + PMCNTENCLR, counter_mask());
            wr(pmu + PMCNTENSET, counter_mask());
            return;
        }
        if (events.empty()) return;
        ++power_requests;  // ETHOSU_PMU_Enable requests power
        wr(pmu + PMCR, 1);
        // The cycle counter from NPU_ACTIVE to NPU_IDLE, as TFLM's Ethos-U example programs it.
        wr(pmu + PMCCNTR_CFG, (rd(pmu + PMCCNTR_CFG) & ~0x3FF0000u) | kNpuIdle << 16);
        wr(pmu + PMCCNTR_CFG, (rd(pmu + PMCCNTR_CFG) & ~0x3FFu) | kNpuActive);
        for (size_t i = 0; i < events.size(); ++i) wr(pmu + PMEVTYPER + 4 * static_cast<uint32_t>(i), events[i]);
        wr(pmu + PMCNTENSET, kCycleCounter | ((1u << events.size()) - 1));
        wr(pmu + PMCR, rd(pmu + PMCR) | 2);  // ETHOSU_PMU_EVCNTR_ALL_Reset
        wr(pmu + PMCR, rd(pmu + PMCR) | 4);  // ETHOSU_PMU_CYCCNT_Reset
    }
    void inference_end() {
        if (eval_kit_profiler) {
            wr(pmu + PMCNTENCLR, counter_mask());
            return;
        }
        if (events.empty()) return;
        counts.clear();
        for (size_t i = 0; i < events.size(); ++i) counts.push_back(rd(pmu + PMEVCNTR + 4 * static_cast<uint32_t>(i)));
        cycles = rd(pmu + PMCCNTR) | uint64_t{rd(pmu + PMCCNTR + 4)} << 32;
        wr(pmu + PMCR, 0);  // ETHOSU_PMU_Disable
        release_power();
    }

    bool dedicated_arena = false;  // U65: the driver's config puts the arena behind AXI1
};

// ethosu_dev_handle_interrupt and ethosu_irq_handler.
extern "C" void ethosu_irq_handler(ethosu_driver* drv) {
    ++drv->irqs;
    drv->wr(CMD, (drv->rd(CMD) & kPowerClockMask) | 2u);
    const uint32_t s = drv->rd(STATUS);
    const bool ok = !(s & (kBusStatus | kParseError | kWdFault | kEccFault)) && (s & kEndReached);
    if (drv->result == kTimeout) return;
    drv->result = ok ? kOk : kError;
    drv->state = kDone;
    ethosu_semaphore_give(drv->semaphore);
}

namespace ethosu {
namespace {

// An emulated NPU with a driver instance on it, attached through the glue.
struct Npu {
    ethosu_emu* emu = nullptr;
    ethosu_driver drv;

    explicit Npu(const std::string& config) {
        ethosu_emu_options o{config.c_str(), nullptr, nullptr, 1, 1};
        const char* error = nullptr;
        if (ethosu_emu_create(&o, &emu, &error) != 0) throw std::runtime_error(error);
        drv.reg = ethosu_emu_register_block(emu);
        drv.u85 = config.starts_with("ethos-u85");
        drv.pmu = drv.u85 ? 0x1000 : 0;
        drv.dedicated_arena = config.starts_with("ethos-u65");
        drv.semaphore = ethosu_semaphore_create();
        EXPECT_TRUE(drv.soft_reset());  // ethosu_init
        EXPECT_EQ(ethosu_emu_attach_core_driver(emu, &drv), 0);
    }
    ~Npu() {
        ethosu_emu_attach_core_driver(emu, nullptr);
        ethosu_semaphore_destroy(drv.semaphore);
        ethosu_emu_destroy(emu);
    }
};

// A corpus model laid out as a host program holds it: the command stream (16-byte aligned), the
// weights, the arena (scratch) and the fast scratch, each mapped into the NPU.
struct HostModel {
    std::unique_ptr<LoadedModel> model;
    fs::path dir;
    std::vector<uint32_t> stream;
    std::array<std::vector<uint8_t>, 3> regions;  // weights, scratch, fast scratch
    uint64_t expected_cycles = 0;
    std::vector<uint64_t> expected_counts;
    std::vector<uint32_t> events;

    HostModel(const fs::path& vectors, const std::string& name, const std::string& config) : dir(vectors / name) {
        model = load_model((dir / config / "model_vela.tflite").string(), {});
        const NpuInvocation& inv = model->invocations.at(0);
        stream = inv.stream.words;
        for (const auto& r : inv.regions) {
            if (r.index > 2) throw std::runtime_error("region past the fast scratch");
            auto& b = regions[static_cast<size_t>(r.index)];
            b.assign(std::max<uint64_t>(r.size, 16), 0);
            std::copy(r.bytes.begin(), r.bytes.end(), b.begin());
        }
        for (auto& b : regions)
            if (b.empty()) b.assign(16, 0);
        const Generation g = model->config.generation;
        events = {*pmu_event_id(g, "NPU_ACTIVE"), *pmu_event_id(g, "AXI0_RD_DATA_BEAT_RECEIVED"),
                  *pmu_event_id(g, "AXI1_RD_DATA_BEAT_RECEIVED"), *pmu_event_id(g, "AXI0_WR_DATA_BEAT_WRITTEN")};
    }
    // Maps every buffer at its own NPU address, below 4 GB.
    void map_into(ethosu_emu* emu, uint64_t base) {
        EXPECT_EQ(ethosu_emu_map(emu, base, stream.data(), stream.size() * 4), 0);
        for (size_t i = 0; i < regions.size(); ++i)
            EXPECT_EQ(ethosu_emu_map(emu, base + (i + 1) * 0x1000000, regions[i].data(), regions[i].size()), 0);
    }
    std::vector<uint8_t> golden(int seed, const char* kind, size_t k) const {
        return read_file_bytes(dir / "golden" / fmt::format("seed{}.{}{}.bin", seed, kind, k));
    }
    uint8_t* tensor(const TensorInfo& t) { return regions.at(static_cast<size_t>(t.region)).data() + t.offset; }
    void place_inputs(int seed) {
        for (size_t k = 0; k < model->inputs.size(); ++k) {
            const auto in = golden(seed, "in", k);
            std::memcpy(tensor(model->inputs[k]), in.data(), in.size());
        }
    }
    ::testing::AssertionResult outputs_match(int seed) {
        for (size_t k = 0; k < model->outputs.size(); ++k) {
            const auto g = golden(seed, "out", k);
            if (!std::equal(g.begin(), g.end(), tensor(model->outputs[k])))
                return ::testing::AssertionFailure() << "output " << k << " of seed " << seed;
        }
        return ::testing::AssertionSuccess();
    }
    const uint8_t* stream_bytes() const { return reinterpret_cast<const uint8_t*>(stream.data()); }
    uint32_t stream_size() const { return static_cast<uint32_t>(stream.size() * 4); }
    std::vector<uint64_t> bases() {
        std::vector<uint64_t> b;
        for (auto& r : regions) b.push_back(reinterpret_cast<uintptr_t>(r.data()));
        return b;
    }
};

constexpr int kInferences = 100;
const char* const kConfigs[] = {"ethos-u55-128", "ethos-u65-256", "ethos-u85-256"};
// Models with weights, feature maps in the arena and (U65/U85, Vela's default memory mode) the
// fast scratch.
const char* const kModels[] = {"conv_k3s1_same_16x16x8to16_relu", "fc_64to10"};

class CallPatterns : public ::testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        vectors_ = ETHOSU_VECTORS_DIR;
        if (!fs::exists(vectors_ / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors_;
    }
    HostModel model(const char* name) { return HostModel(vectors_, name, GetParam()); }
    fs::path vectors_;
};

// One inference's checks: outputs bit-exact, the same cycles as every other, PMU counts equal.
struct Checker {
    uint64_t cycles = 0;
    std::vector<uint32_t> counts;
    uint64_t pmu_cycles = 0;
    void check(HostModel& m, Npu& npu, int seed, int i) {
        SCOPED_TRACE(fmt::format("inference {}", i));
        ASSERT_TRUE(m.outputs_match(seed));
        const uint64_t c = ethosu_emu_last_cycles(npu.emu);
        if (!cycles) cycles = c, counts = npu.drv.counts, pmu_cycles = npu.drv.cycles;
        ASSERT_EQ(c, cycles);
        ASSERT_EQ(npu.drv.counts, counts);
        ASSERT_EQ(npu.drv.cycles, pmu_cycles);
    }
};

// TFLite Micro: reserve the driver, ethosu_invoke_v3 with the model's weights, the arena and the
// fast scratch (given to ethosu_init), release; power released after every inference, so every
// inference begins with a soft reset. The PMU programmed in the inference callbacks.
TEST_P(CallPatterns, TfliteMicroRunsManyInferencesWithPowerReleasedBetween) {
    for (const char* name : kModels) {
        SCOPED_TRACE(name);
        HostModel m = model(name);
        Npu npu(GetParam());
        m.map_into(npu.emu, 0x10000000);
        npu.drv.fast_memory = reinterpret_cast<uintptr_t>(m.regions[2].data());
        npu.drv.events = m.events;
        Checker checker;
        for (int i = 0; i < kInferences; ++i) {
            const int seed = 1 + i % 2;
            m.place_inputs(seed);
            ASSERT_EQ(npu.drv.invoke(m.stream_bytes(), m.stream_size(), m.bases()), 0)
                << ethosu_emu_last_error(npu.emu);
            checker.check(m, npu, seed, i);
            if (HasFatalFailure()) return;
        }
        EXPECT_EQ(npu.drv.irqs, kInferences);
        EXPECT_EQ(npu.drv.power_requests, 0);
        // The PMU saw each inference alone (reset in the begin callback): the run's own figures.
        const RunResult reference = run_model(*m.model, {}, {.pipeline = {.execute = false}});
        if (std::string(GetParam()) == "ethos-u55-128") {
            EXPECT_EQ(checker.cycles, static_cast<uint64_t>(reference.timing[0].totals.cycles));
            const PmuReading expected = read_pmu(reference.memory, reference.timing, m.events);
            EXPECT_EQ(checker.pmu_cycles, expected.cycle_counter);
            for (size_t n = 0; n < m.events.size(); ++n) EXPECT_EQ(checker.counts[n], expected.counters[n]);
        }
        EXPECT_GT(checker.counts.at(0), 0u);
    }
}

// Arm's evaluation kit's profiler on the core driver: every inference's cycle counter and event
// counts are those of a timing-only run of the stream (a same-value PMCNTENSET write after a
// PMCNTENCLR write takes effect like any other).
TEST_P(CallPatterns, EvaluationKitProfilerCountsEveryInference) {
    HostModel m = model(kModels[0]);
    Npu npu(GetParam());
    m.map_into(npu.emu, 0x10000000);
    npu.drv.fast_memory = reinterpret_cast<uintptr_t>(m.regions[2].data());
    npu.drv.events = m.events;
    npu.drv.eval_kit_profiler = true;
    npu.drv.profiler_init();
    // The driver's default region set-up puts U85's arena behind the SRAM port, as Vela's
    // Shared_Sram memory mode does (U55, U65: as their default memory modes do).
    SystemSelection placement;
    if (npu.drv.u85) placement.memory_mode = "Shared_Sram";
    const RunResult reference = run_model(*m.model, {}, {.system = placement, .pipeline = {.execute = false}});
    const PmuReading expected = read_pmu(reference.memory, reference.timing, m.events);
    for (int i = 0; i < kInferences; ++i) {
        SCOPED_TRACE(fmt::format("inference {}", i));
        const int seed = 1 + i % 2;
        m.place_inputs(seed);
        npu.drv.profiler_start();
        ASSERT_EQ(npu.drv.invoke(m.stream_bytes(), m.stream_size(), m.bases()), 0) << ethosu_emu_last_error(npu.emu);
        npu.drv.profiler_read();
        ASSERT_TRUE(m.outputs_match(seed));
        ASSERT_EQ(npu.drv.cycles, expected.cycle_counter);
        for (size_t n = 0; n < m.events.size(); ++n) ASSERT_EQ(npu.drv.counts.at(n), expected.counters[n]) << "event " << n;
    }
    EXPECT_GT(expected.cycle_counter, 0u);
}

// ExecuTorch's Cortex-M Arm backend: per call reserve, copy the inputs into the scratch with
// arm_ethos_io_memcpy, invoke with three base addresses (weights, scratch, fast scratch), copy
// the outputs out the same way, release. The copies go through the NPU's DMA (the override
// this project ships) and are counted.
TEST_P(CallPatterns, ExecuTorchBackendCopiesThroughTheDmaAndInvokesWithThreeBases) {
    HostModel m = model(kModels[0]);
    Npu npu(GetParam());
    m.map_into(npu.emu, 0x20000000);
    Checker checker;
    std::vector<std::vector<uint8_t>> host_outputs(m.model->outputs.size());
    size_t copied_bytes = 0;
    for (int i = 0; i < kInferences; ++i) {
        const int seed = 1 + i % 2;
        for (size_t k = 0; k < m.model->inputs.size(); ++k) {
            const auto in = m.golden(seed, "in", k);
            arm_ethos_io_memcpy(m.tensor(m.model->inputs[k]), in.data(), in.size());
            copied_bytes += in.size();
        }
        ASSERT_EQ(npu.drv.invoke(m.stream_bytes(), m.stream_size(), m.bases()), 0) << ethosu_emu_last_error(npu.emu);
        const uint64_t cycles = ethosu_emu_last_cycles(npu.emu);
        for (size_t k = 0; k < host_outputs.size(); ++k) {
            const auto& t = m.model->outputs[k];
            host_outputs[k].assign(t.size_bytes, 0);
            arm_ethos_io_memcpy(host_outputs[k].data(), m.tensor(t), t.size_bytes);
            copied_bytes += t.size_bytes;
            ASSERT_EQ(host_outputs[k], m.golden(seed, "out", k)) << "inference " << i;
        }
        if (!checker.cycles) checker.cycles = cycles;
        ASSERT_EQ(cycles, checker.cycles) << "inference " << i;
    }
    const ethosu_emu_dma_totals dma = ethosu_emu_dma_copies(npu.emu);
    EXPECT_EQ(dma.copies, kInferences * (m.model->inputs.size() + m.model->outputs.size()));
    EXPECT_EQ(dma.bytes, copied_bytes);
    EXPECT_GT(dma.cycles, dma.copies);  // each copy costs NPU cycles
    std::printf("%s: %llu DMA copies, %llu bytes, %llu NPU cycles (%llu per inference, the inference %llu)\n",
                GetParam(), static_cast<unsigned long long>(dma.copies), static_cast<unsigned long long>(dma.bytes),
                static_cast<unsigned long long>(dma.cycles), static_cast<unsigned long long>(dma.cycles / kInferences),
                static_cast<unsigned long long>(checker.cycles));
}

// ethosu_invoke_async, then the program polls ethosu_wait(drv, false) until the interrupt came.
TEST_P(CallPatterns, AsyncInvokeCompletesWhileTheProgramPolls) {
    HostModel m = model(kModels[1]);
    Npu npu(GetParam());
    m.map_into(npu.emu, 0x10000000);
    Checker checker;
    for (int i = 0; i < kInferences; ++i) {
        const int seed = 1 + i % 2;
        m.place_inputs(seed);
        ASSERT_EQ(npu.drv.invoke_async(m.stream_bytes(), m.stream_size(), m.bases()), 0);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        int polls = 0, r = 1;
        while ((r = npu.drv.wait(false)) == 1 && std::chrono::steady_clock::now() < deadline) ++polls;
        ASSERT_EQ(r, 0) << "inference " << i << " after " << polls << " polls: " << ethosu_emu_last_error(npu.emu);
        checker.check(m, npu, seed, i);
        if (HasFatalFailure()) return;
    }
}

// A fault (the arena's base address outside memory), the driver's recovery (soft reset), then
// good inferences, over and over.
TEST_P(CallPatterns, FaultsAreFollowedByRecoveryAndGoodInferences) {
    HostModel m = model(kModels[1]);
    Npu npu(GetParam());
    m.map_into(npu.emu, 0x10000000);
    std::vector<uint8_t> unmapped_arena(m.regions[1].size() + 64);
    Checker checker;
    int faults = 0;
    for (int i = 0; i < kInferences; ++i) {
        const int seed = 1 + i % 2;
        if (i % 10 == 3) {
            auto bases = m.bases();
            bases[1] = reinterpret_cast<uintptr_t>(unmapped_arena.data()) / 16 * 16 + 16;
            ASSERT_EQ(npu.drv.invoke(m.stream_bytes(), m.stream_size(), bases), -1);
            const std::string error = ethosu_emu_last_error(npu.emu);
            EXPECT_NE(error.find("base address 1) is in no buffer mapped with ethosu_emu_map"), std::string::npos)
                << error;
            ++faults;
            continue;
        }
        m.place_inputs(seed);
        ASSERT_EQ(npu.drv.invoke(m.stream_bytes(), m.stream_size(), m.bases()), 0) << ethosu_emu_last_error(npu.emu);
        checker.check(m, npu, seed, i);
        if (HasFatalFailure()) return;
    }
    EXPECT_EQ(faults, 10);
}

// Two NPUs in one process, each with its driver instance and its own model, invoked in turn.
TEST_P(CallPatterns, TwoNpusRunSideBySide) {
    HostModel a = model(kModels[0]), b = model(kModels[1]);
    Npu first(GetParam()), second(GetParam());
    a.map_into(first.emu, 0x10000000);
    b.map_into(second.emu, 0x10000000);  // the same NPU addresses, other host memory
    Checker check_a, check_b;
    for (int i = 0; i < kInferences; ++i) {
        const int seed = 1 + i % 2;
        a.place_inputs(seed);
        b.place_inputs(3 - seed);
        ASSERT_EQ(first.drv.invoke(a.stream_bytes(), a.stream_size(), a.bases()), 0) << ethosu_emu_last_error(first.emu);
        ASSERT_EQ(second.drv.invoke(b.stream_bytes(), b.stream_size(), b.bases()), 0)
            << ethosu_emu_last_error(second.emu);
        check_a.check(a, first, seed, i);
        check_b.check(b, second, 3 - seed, i);
        if (HasFatalFailure()) return;
    }
    EXPECT_EQ(first.drv.irqs, kInferences);
    EXPECT_EQ(second.drv.irqs, kInferences);
}

INSTANTIATE_TEST_SUITE_P(Generations, CallPatterns, ::testing::ValuesIn(kConfigs),
                         ConfigTestName());

}  // namespace
}  // namespace ethosu
