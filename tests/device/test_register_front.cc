// The register interface, driven the way Arm's core driver drives the hardware: soft reset,
// PROT check, AXI limits, configuration check against the COP header, QBASE/QSIZE/QCONFIG,
// BASEP/REGIONCFG, CMD run, wait for the interrupt, clear it, check STATUS. Offsets are the
// hardware's (Arm's register headers), written here independently of our description.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/builder.h"
#include "frontend/runner/run_model.h"
#include "frontend/device/ethosu_emu.h"
#include "tests/corpus_index.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

// U55/U65 offsets; U85 moves the PMU block up by 0x1000.
constexpr uint32_t ID = 0x000, STATUS = 0x004, CMD = 0x008, RESET = 0x00C, QBASE = 0x010, QREAD = 0x018,
                   QCONFIG = 0x01C, QSIZE = 0x020, PROT = 0x024, CONFIG = 0x028, REGIONCFG = 0x03C,
                   AXI_LIMIT0 = 0x040, BASEP = 0x080;
constexpr uint32_t PMCR = 0x180, PMCNTENSET = 0x184, PMCNTENCLR = 0x188, PMOVSSET = 0x18C, PMOVSCLR = 0x190,
                   PMINTSET = 0x194, PMCCNTR = 0x1A0, PMEVCNTR = 0x300, PMEVTYPER = 0x380;
// STATUS bits.
constexpr uint32_t kRunning = 1, kIrqRaised = 2, kBusStatus = 4, kResetStatus = 8, kParseError = 16, kEndReached = 32,
                   kPmuIrq = 64;

struct HostBuffer {
    std::vector<uint8_t> bytes;
    uint64_t npu_address;
};

// A driver on the C API, following the core driver's sequence.
class HostDriver {
public:
    explicit HostDriver(const char* npu, const char* memory_mode = nullptr) {
        ethosu_emu_options o{npu, nullptr, memory_mode, /*secure=*/1, /*privileged=*/1};
        const char* error = nullptr;
        if (ethosu_emu_create(&o, &emu_, &error) != 0) throw std::runtime_error(error);
        ethosu_emu_set_irq_handler(emu_, [](void* self) { static_cast<HostDriver*>(self)->irq_handler(); }, this);
        pmu_ = std::string(npu).starts_with("ethos-u85") ? 0x1000 : 0;
    }
    ~HostDriver() { ethosu_emu_destroy(emu_); }

    uint32_t rd(uint32_t off) { return ethosu_emu_read32(emu_, off); }
    void wr(uint32_t off, uint32_t v) { ethosu_emu_write32(emu_, off, v); }

    // Maps a buffer at the next free 4 KB-aligned NPU address (all below 4 GB: U55 has 32-bit QBASE/BASEP).
    uint64_t map(HostBuffer& b) {
        b.npu_address = next_;
        EXPECT_EQ(ethosu_emu_map(emu_, next_, b.bytes.data(), b.bytes.size()), 0);
        next_ += (b.bytes.size() + 0xFFF) / 0x1000 * 0x1000 + 0x1000;
        return b.npu_address;
    }

    bool soft_reset() {
        wr(RESET, 1 /*pending_CPL privileged*/ | 0 /*pending_CSL secure*/);
        for (int i = 0; i < 100000 && (rd(STATUS) & kResetStatus); ++i) {
        }
        if (rd(STATUS) & kResetStatus) return false;
        return (rd(PROT) & 3u) == 1u;  // active_CPL privileged, active_CSL secure
    }

    void axi_init() {
        // max_beats 64 B, memtype 0, 32 outstanding reads, 16 writes, as the core driver's defaults.
        for (uint32_t i = 0; i < 4; ++i) wr(AXI_LIMIT0 + 4 * i, (31u << 16) | (15u << 24));
    }

    // The core driver's optimizer-config check: product, MACs and command-stream version must
    // match; the hardware's architecture must be the optimizer's major and at least its minor.
    bool config_matches(uint32_t cop_config, uint32_t cop_id) {
        const uint32_t cfg = rd(CONFIG), id = rd(ID);
        if (cfg != cop_config &&
            ((cfg >> 28) != (cop_config >> 28) || (cfg & 0xF) != (cop_config & 0xF) ||
             ((cfg >> 4) & 0xF) != ((cop_config >> 4) & 0xF)))
            return false;
        return (id >> 28) == (cop_id >> 28) && ((id >> 20) & 0xFF) >= ((cop_id >> 20) & 0xFF);
    }

    void start(uint64_t qbase, uint32_t qsize, const std::vector<uint64_t>& basep, uint32_t regioncfg) {
        wr(QBASE, static_cast<uint32_t>(qbase));
        wr(QBASE + 4, static_cast<uint32_t>(qbase >> 32));
        wr(QSIZE, qsize);
        wr(QCONFIG, 2);
        for (size_t i = 0; i < basep.size(); ++i) {
            wr(BASEP + 8 * static_cast<uint32_t>(i), static_cast<uint32_t>(basep[i]));
            wr(BASEP + 8 * static_cast<uint32_t>(i) + 4, static_cast<uint32_t>(basep[i] >> 32));
        }
        wr(REGIONCFG, regioncfg);
        wr(CMD, (rd(CMD) & 0xC) | 1);
    }

    // Waits for the interrupt; returns STATUS as the handler saw it.
    uint32_t wait() {
        irqs_ = 0;
        ethosu_emu_run_until_idle(emu_);
        EXPECT_EQ(irqs_, 1);
        return status_at_irq_;
    }
    static bool ok(uint32_t status) { return !(status & (kBusStatus | kParseError | 0x180u)) && (status & kEndReached); }

    void pmu_enable(const std::vector<uint32_t>& events) {
        wr(pmu_ + PMCR, 1 | 2 | 4);  // cnt_en, reset event and cycle counters
        for (size_t i = 0; i < events.size(); ++i) wr(pmu_ + PMEVTYPER + 4 * static_cast<uint32_t>(i), events[i]);
        wr(pmu_ + PMCNTENSET, (1u << 31) | ((1u << events.size()) - 1));
    }
    uint32_t pmu_counter(uint32_t n) { return rd(pmu_ + PMEVCNTR + 4 * n); }
    uint64_t pmu_cycles() { return rd(pmu_ + PMCCNTR) | (uint64_t{rd(pmu_ + PMCCNTR + 4)} << 32); }

    ethosu_emu* emu() { return emu_; }
    uint32_t status_at_irq() const { return status_at_irq_; }

private:
    void irq_handler() {
        ++irqs_;
        status_at_irq_ = rd(STATUS);
        wr(CMD, (rd(CMD) & 0xC) | 2);  // clear_irq
    }

    ethosu_emu* emu_ = nullptr;
    uint32_t pmu_ = 0;
    uint64_t next_ = 0x10000000;
    int irqs_ = 0;
    uint32_t status_at_irq_ = 0;
};

TEST(RegisterFront, ResetValuesMatchWhatVelaAndTheDriverExpect) {
    for (const char* name : {"ethos-u55-128", "ethos-u65-256", "ethos-u85-256"}) {
        HostDriver d(name);
        const NpuConfig npu = *find_npu_config(name);
        EXPECT_EQ(d.rd(ID), npu.hw_id_reset) << name;
        EXPECT_EQ(d.rd(CONFIG), npu.config_word) << name;
        EXPECT_TRUE(d.config_matches(npu.config_word, npu.id_word)) << name;
        EXPECT_EQ(d.rd(CMD), 0xCu) << name;
        EXPECT_EQ(d.rd(STATUS), 0u) << name;
        const uint32_t pmcr = d.rd((npu.generation == Generation::U85 ? 0x1000 : 0) + PMCR);
        EXPECT_EQ((pmcr >> 11) & 0x1F, npu.generation == Generation::U85 ? 8u : 4u) << name;
        EXPECT_TRUE(d.soft_reset()) << name;
        d.wr(ID, 0);  // read-only: ignored
        EXPECT_EQ(d.rd(ID), npu.hw_id_reset);
    }
    // Another product's COP header is refused by the check.
    HostDriver d("ethos-u55-128");
    EXPECT_FALSE(d.config_matches(find_npu_config("ethos-u65-256")->config_word, 0x10066001));
}

// Corpus models through registers only: golden outputs, and PMU counters equal the run's.
TEST(RegisterFront, CoreDriverSequenceRunsCorpusModels) {
    const fs::path vectors = ETHOSU_VECTORS_DIR;
    if (!fs::exists(vectors / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors;
    struct Case {
        const char* model;
        const char* config;
    };
    for (const Case c : {Case{"person_detect", "ethos-u55-128"}, Case{"mlperftiny_kws_dscnn_int8", "ethos-u65-256"},
                         Case{"mlzoo_rnnoise_int8", "ethos-u55-256"}}) {
        SCOPED_TRACE(fmt::format("{} {}", c.model, c.config));
        const fs::path dir = vectors / c.model;
        const auto model = load_model((dir / c.config / "model_vela.tflite").string(), {});
        const NpuInvocation& inv = model->invocations.at(0);
        HostDriver d(c.config);
        ASSERT_TRUE(d.soft_reset());
        d.axi_init();
        ASSERT_TRUE(d.config_matches(*inv.stream.config_word, *inv.stream.id_word));

        HostBuffer stream{std::vector<uint8_t>(inv.stream.words.size() * 4), 0};
        std::memcpy(stream.bytes.data(), inv.stream.words.data(), stream.bytes.size());
        d.map(stream);
        std::vector<HostBuffer> regions(AddressSpace::kRegions);
        std::vector<uint64_t> basep(AddressSpace::kRegions, 0);
        for (const auto& r : inv.regions) {
            auto& b = regions[static_cast<size_t>(r.index)];
            b.bytes.assign(std::max<uint64_t>(r.size, 16), 0);
            std::copy(r.bytes.begin(), r.bytes.end(), b.bytes.begin());
            basep[static_cast<size_t>(r.index)] = d.map(b);
        }
        const Generation g = model->config.generation;
        const std::vector<uint32_t> events = {*pmu_event_id(g, "NPU_ACTIVE"), *pmu_event_id(g, "MAC_ACTIVE"),
                                              *pmu_event_id(g, "AXI0_RD_DATA_BEAT_RECEIVED"),
                                              *pmu_event_id(g, "AXI1_RD_DATA_BEAT_RECEIVED")};
        d.pmu_enable(events);
        // The core driver's REGIONCFG for Vela's memory modes: region 0 (constants) on AXI1 (config
        // 3), the arena on AXI0 (0) for Shared_Sram, on AXI1 (2) for Dedicated_Sram; the fast
        // scratch (region 2) on AXI0.
        const bool dedicated = g != Generation::U55;
        const uint32_t regioncfg = 3u | (dedicated ? 2u : 0u) << 2 | 1u << 4;
        // Two inferences on one device: the second reuses the weights the first decoded.
        for (const int seed : {1, 2}) {
            for (size_t k = 0; k < model->inputs.size(); ++k) {
                const auto& t = model->inputs[k];
                const auto in = read_file_bytes(dir / "golden" / fmt::format("seed{}.in{}.bin", seed, k));
                ASSERT_EQ(in.size(), t.size_bytes);
                std::memcpy(regions[static_cast<size_t>(t.region)].bytes.data() + t.offset, in.data(), in.size());
            }
            d.start(stream.npu_address, static_cast<uint32_t>(stream.bytes.size()), basep, regioncfg);
            EXPECT_TRUE(d.rd(STATUS) & kRunning);
            const uint32_t status = d.wait();
            ASSERT_TRUE(HostDriver::ok(status)) << fmt::format("STATUS 0x{:x}: {}", status, ethosu_emu_last_error(d.emu()));
            EXPECT_FALSE(d.rd(STATUS) & (kIrqRaised | kRunning));
            EXPECT_EQ(d.rd(QREAD), stream.bytes.size());
            for (size_t k = 0; k < model->outputs.size(); ++k) {
                const auto& t = model->outputs[k];
                const auto golden = read_file_bytes(dir / "golden" / fmt::format("seed{}.out{}.bin", seed, k));
                const uint8_t* out = regions[static_cast<size_t>(t.region)].bytes.data() + t.offset;
                EXPECT_TRUE(std::equal(golden.begin(), golden.end(), out)) << "output " << k;
            }
        }
        // The same model through run_model, with the memory system the registers described. The
        // PMU counts on over both inferences, which take the same time whatever the data.
        const RunResult reference = run_model(*model, {}, {.pipeline = {.execute = false}});
        const PmuReading expected = read_pmu(reference.memory, reference.timing, events);
        EXPECT_EQ(d.pmu_cycles(), 2 * expected.cycle_counter);
        EXPECT_EQ(ethosu_emu_last_cycles(d.emu()), static_cast<uint64_t>(reference.timing[0].totals.cycles));
        for (uint32_t n = 0; n < events.size(); ++n)
            EXPECT_EQ(d.pmu_counter(n), 2 * expected.counters[n]) << "counter " << n;
    }
}

// A small stream of our own: one 1D DMA of 64 bytes from region 0 to region 1, then STOP.
std::vector<uint8_t> dma_stream(uint64_t length, uint16_t stop_mask) {
    using isa::Cmd;
    using isa::Field;
    CommandStreamBuilder b(Generation::U55);
    b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, 0}})
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__region, 1}})
        .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, 0}})
        .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, 0}})
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, length}})
        .emit(Cmd::OP_DMA_START)
        .emit(Cmd::OP_DMA_WAIT, {{Field::OP_DMA_WAIT__k, 0}})
        .emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, stop_mask}});
    std::vector<uint8_t> bytes(b.words().size() * 4);
    std::memcpy(bytes.data(), b.words().data(), bytes.size());
    return bytes;
}

struct SmallRun : ::testing::Test {
    HostDriver d{"ethos-u55-64"};
    HostBuffer stream, src{std::vector<uint8_t>(256), 0}, dst{std::vector<uint8_t>(256), 0};
    void SetUp() override {
        ASSERT_TRUE(d.soft_reset());
        for (size_t i = 0; i < src.bytes.size(); ++i) src.bytes[i] = static_cast<uint8_t>(i * 7);
        d.map(src);
        d.map(dst);
    }
    uint32_t run(std::vector<uint8_t> words, std::vector<uint64_t> basep) {
        stream.bytes = std::move(words);
        d.map(stream);
        d.start(stream.npu_address, static_cast<uint32_t>(stream.bytes.size()), basep, 0);
        return d.wait();
    }
};

TEST_F(SmallRun, StopMaskGoesToTheIrqHistoryAndCmdClearsIt) {
    const uint32_t status = run(dma_stream(64, 0x5), {src.npu_address, dst.npu_address});
    ASSERT_TRUE(HostDriver::ok(status)) << ethosu_emu_last_error(d.emu());
    EXPECT_TRUE(std::equal(src.bytes.begin(), src.bytes.begin() + 64, dst.bytes.begin()));
    EXPECT_EQ(d.rd(STATUS) >> 16, 0x5u);
    d.wr(CMD, (d.rd(CMD) & 0xC) | (0x4u << 16));  // clear_irq_history bit 2
    EXPECT_EQ(d.rd(STATUS) >> 16, 0x1u);
}

TEST_F(SmallRun, AnAddressOutsideEveryMappingIsABusError) {
    const uint32_t status = run(dma_stream(64, 1), {src.npu_address, 0xF0000000});
    EXPECT_TRUE(status & kBusStatus);
    EXPECT_FALSE(status & kEndReached);
    EXPECT_EQ((status >> 12) & 0xF, 9u);  // faulting channel: mem2mem write
    EXPECT_NE(std::string(ethosu_emu_last_error(d.emu())).find("DMA destination"), std::string::npos);
    // A faulted NPU does not start again until a soft reset.
    d.wr(CMD, (d.rd(CMD) & 0xC) | 1);
    EXPECT_FALSE(d.rd(STATUS) & kRunning);
    ASSERT_TRUE(d.soft_reset());
    EXPECT_EQ(d.rd(STATUS), 0u);
}

TEST_F(SmallRun, AnUnknownOpcodeIsACommandParseError) {
    auto words = dma_stream(64, 1);
    const uint32_t bad = 0x03FFu;  // cmd0 opcode 0x3FF: no such command
    std::memcpy(words.data() + 8, &bad, 4);
    const uint32_t status = run(words, {src.npu_address, dst.npu_address});
    EXPECT_TRUE(status & kParseError);
    EXPECT_EQ(d.rd(QREAD), 8u);  // the offending command
}

// A straight-line block (up to a BRANCH or STOP) is decoded before its first op runs: a POOL that
// reads registers no command wrote faults the run before the DMA ahead of it copies anything.
TEST_F(SmallRun, AMalformedOpFaultsItsBlockBeforeItRuns) {
    using isa::Cmd;
    using isa::Field;
    auto words = dma_stream(64, 1);
    words.resize(words.size() - 4);  // without its STOP
    CommandStreamBuilder tail(Generation::U55);
    tail.emit(Cmd::OP_POOL).emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 1}});
    const auto pool_offset = static_cast<uint32_t>(words.size());
    words.resize(words.size() + tail.words().size() * 4);
    std::memcpy(words.data() + pool_offset, tail.words().data(), tail.words().size() * 4);
    const uint32_t status = run(words, {src.npu_address, dst.npu_address});
    EXPECT_TRUE(status & kParseError);
    EXPECT_FALSE(status & (kBusStatus | kEndReached));
    EXPECT_EQ(d.rd(QREAD), pool_offset);
    EXPECT_TRUE(std::all_of(dst.bytes.begin(), dst.bytes.end(), [](uint8_t b) { return b == 0; }));
    EXPECT_NE(std::string(ethosu_emu_last_error(d.emu())).find("never wrote"), std::string::npos)
        << ethosu_emu_last_error(d.emu());
}

// U85: a BRANCH to an offset past the stream is a branch fault (STATUS bit 9), QREAD at the branch.
TEST(RegisterFront, ABranchOutsideTheStreamIsABranchFault) {
    using isa::Cmd;
    using isa::Field;
    HostDriver d{"ethos-u85-256"};
    ASSERT_TRUE(d.soft_reset());
    CommandStreamBuilder b(Generation::U85);
    b.emit(Cmd::OP_KERNEL_WAIT)
        .emit(Cmd::OP_BRANCH, {{Field::OP_BRANCH__branch_target, 0x1000}})
        .emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 1}});
    HostBuffer stream{std::vector<uint8_t>(b.words().size() * 4), 0};
    std::memcpy(stream.bytes.data(), b.words().data(), stream.bytes.size());
    d.map(stream);
    d.start(stream.npu_address, static_cast<uint32_t>(stream.bytes.size()), {}, 0);
    const uint32_t status = d.wait();
    EXPECT_TRUE(status & (1u << 9));
    EXPECT_FALSE(status & (kParseError | kEndReached));
    EXPECT_EQ(d.rd(QREAD), 4u);
    EXPECT_NE(std::string(ethosu_emu_last_error(d.emu())).find("past the end"), std::string::npos);
}

TEST_F(SmallRun, ACommandStreamOutsideMemoryIsABusErrorOnTheCommandChannel) {
    d.start(0xE0000000, 64, {}, 0);
    const uint32_t status = d.wait();
    EXPECT_TRUE(status & kBusStatus);
    EXPECT_EQ((status >> 12) & 0xF, 0u);
}

// A driver that accesses the registers as memory: writes land in the block and take effect at
// sync, where the run happens and the handler's clear_irq is observed.
TEST(RegisterFront, MemoryMappedBlockIsObservedAtSync) {
    ethosu_emu_options o{"ethos-u55-64", nullptr, nullptr, 1, 1};
    ethosu_emu* emu = nullptr;
    ASSERT_EQ(ethosu_emu_create(&o, &emu, nullptr), 0);
    volatile uint32_t* regs = ethosu_emu_register_block(emu);
    ASSERT_GE(ethosu_emu_register_block_size(emu), 0x400u);
    EXPECT_EQ(regs[CONFIG / 4], find_npu_config("ethos-u55-64")->config_word);
    std::vector<uint8_t> src(256, 0x5A), dst(256, 0), words = dma_stream(128, 1);
    ASSERT_EQ(ethosu_emu_map(emu, 0x1000, src.data(), src.size()), 0);
    ASSERT_EQ(ethosu_emu_map(emu, 0x2000, dst.data(), dst.size()), 0);
    ASSERT_EQ(ethosu_emu_map(emu, 0x3000, words.data(), words.size()), 0);
    EXPECT_EQ(ethosu_emu_npu_address(emu, dst.data() + 5), 0x2005u);
    struct Ctx {
        volatile uint32_t* regs;
        uint32_t status = 0;
    } ctx{regs};
    ethosu_emu_set_irq_handler(emu, [](void* p) {
        auto* c = static_cast<Ctx*>(p);
        c->status = c->regs[STATUS / 4];
        c->regs[CMD / 4] = (c->regs[CMD / 4] & 0xC) | 2;
    }, &ctx);
    regs[QBASE / 4] = 0x3000;
    regs[QSIZE / 4] = static_cast<uint32_t>(words.size());
    regs[BASEP / 4] = 0x1000;
    regs[(BASEP + 8) / 4] = 0x2000;
    regs[CMD / 4] = (regs[CMD / 4] & 0xC) | 1;
    EXPECT_EQ(dst[0], 0);  // nothing happens before the sync point
    ethosu_emu_sync(emu);
    EXPECT_TRUE(ctx.status & kEndReached);
    EXPECT_TRUE(ctx.status & kIrqRaised);
    EXPECT_FALSE(regs[STATUS / 4] & kIrqRaised);  // cleared by the handler's write, observed in sync
    EXPECT_EQ(dst[127], 0x5A);
    EXPECT_EQ(dst[128], 0);
    ethosu_emu_destroy(emu);
}

// Writes take effect in order: a soft reset restores the reset values, and the same value
// written again afterwards applies again.
TEST_F(SmallRun, ASoftResetRestoresResetValuesAndTheSameWriteAppliesAgain) {
    d.wr(QBASE, 0x1230);
    d.wr(QSIZE, 64);
    ASSERT_TRUE(d.soft_reset());
    EXPECT_EQ(d.rd(QBASE), 0u);
    EXPECT_EQ(d.rd(QSIZE), 0u);
    d.wr(QBASE, 0x1230);
    EXPECT_EQ(d.rd(QBASE), 0x1230u);
}

// A driver polling STATUS instead of taking the interrupt sees the run progress.
TEST_F(SmallRun, StatusShowsARunningStreamThenItsEndToAPollingDriver) {
    stream.bytes = dma_stream(64, 1);
    d.map(stream);
    d.start(stream.npu_address, static_cast<uint32_t>(stream.bytes.size()), {src.npu_address, dst.npu_address}, 0);
    EXPECT_EQ(d.rd(STATUS) & (kRunning | kEndReached), kRunning);
    uint32_t status = kRunning;
    for (int polls = 0; polls < 10 && (status & kRunning); ++polls) status = d.rd(STATUS);
    EXPECT_EQ(status & (kRunning | kEndReached), kEndReached);
    EXPECT_TRUE(d.status_at_irq() & kIrqRaised);  // the interrupt came, and its handler cleared it
    EXPECT_TRUE(std::equal(src.bytes.begin(), src.bytes.begin() + 64, dst.bytes.begin()));
}

// PMU: counters enabled, disabled and reset between runs count exactly the enabled runs.
TEST_F(SmallRun, PmuCountersFollowEnableDisableAndResetBetweenRuns) {
    const uint32_t npu_active = *pmu_event_id(Generation::U55, "NPU_ACTIVE");
    d.pmu_enable({npu_active});
    ASSERT_TRUE(HostDriver::ok(run(dma_stream(64, 1), {src.npu_address, dst.npu_address})));
    const uint32_t one_run = d.pmu_counter(0);
    const uint64_t one_run_cycles = d.pmu_cycles();
    ASSERT_GT(one_run, 0u);
    d.wr(PMCNTENCLR, 1);  // event counter 0 off, the cycle counter on
    ASSERT_TRUE(HostDriver::ok(run(dma_stream(64, 1), {src.npu_address, dst.npu_address})));
    EXPECT_EQ(d.pmu_counter(0), one_run);
    EXPECT_EQ(d.pmu_cycles(), 2 * one_run_cycles);
    d.wr(PMCR, 0);  // the PMU off: nothing counts
    ASSERT_TRUE(HostDriver::ok(run(dma_stream(64, 1), {src.npu_address, dst.npu_address})));
    EXPECT_EQ(d.pmu_cycles(), 2 * one_run_cycles);
    d.wr(PMCR, 1 | 2 | 4);  // on again, both resets
    EXPECT_EQ(d.pmu_counter(0), 0u);
    EXPECT_EQ(d.pmu_cycles(), 0u);
    d.wr(PMCNTENSET, 1);
    ASSERT_TRUE(HostDriver::ok(run(dma_stream(64, 1), {src.npu_address, dst.npu_address})));
    EXPECT_EQ(d.pmu_counter(0), one_run);
}

// Counters past their width wrap, set their overflow bit and, where PMINTSET enables it, raise
// the PMU interrupt; PMOVSCLR clears the bit.
TEST_F(SmallRun, PmuCountersPastOverflowWrapAndRaiseThePmuInterrupt) {
    d.pmu_enable({*pmu_event_id(Generation::U55, "NPU_ACTIVE")});
    ASSERT_TRUE(HostDriver::ok(run(dma_stream(64, 1), {src.npu_address, dst.npu_address})));
    const uint32_t per_run = d.pmu_counter(0);
    const uint64_t cycles_per_run = d.pmu_cycles();
    d.wr(PMEVCNTR, 0xFFFFFFFFu - per_run / 2);
    const uint64_t cycle_limit = (uint64_t{1} << 48) - 1;
    d.wr(PMCCNTR, static_cast<uint32_t>(cycle_limit - cycles_per_run / 2));
    d.wr(PMCCNTR + 4, static_cast<uint32_t>((cycle_limit - cycles_per_run / 2) >> 32));
    d.wr(PMINTSET, 1);
    const uint32_t status = run(dma_stream(64, 1), {src.npu_address, dst.npu_address});
    EXPECT_TRUE(status & kPmuIrq);
    EXPECT_EQ(d.pmu_counter(0), per_run - per_run / 2 - 1);
    EXPECT_EQ(d.pmu_cycles(), cycles_per_run - cycles_per_run / 2 - 1);
    EXPECT_EQ(d.rd(PMOVSSET), 1u | 1u << 31);
    d.wr(PMOVSCLR, 1u << 31);
    EXPECT_EQ(d.rd(PMOVSSET), 1u);
}

// Sequences no driver should make get the hardware's answer (fault bits) or nothing, never a crash.
TEST_F(SmallRun, HostileSequencesFaultOrDoNothing) {
    // QSIZE 0: the stream ends before its NPU_OP_STOP.
    d.start(src.npu_address, 0, {}, 0);
    uint32_t status = d.wait();
    EXPECT_TRUE(status & kParseError);
    EXPECT_NE(std::string(ethosu_emu_last_error(d.emu())).find("QSIZE is 0"), std::string::npos);
    ASSERT_TRUE(d.soft_reset());
    // A soft reset while a stream is started: it never runs, no interrupt.
    stream.bytes = dma_stream(64, 1);
    d.map(stream);
    d.start(stream.npu_address, static_cast<uint32_t>(stream.bytes.size()), {src.npu_address, dst.npu_address}, 0);
    ASSERT_TRUE(d.soft_reset());
    EXPECT_EQ(ethosu_emu_run_until_idle(d.emu()), 0);
    EXPECT_EQ(d.rd(STATUS), 0u);
    EXPECT_EQ(dst.bytes[0], 0);
    // CMD before the queue is programmed: QBASE 0 is outside memory.
    d.wr(QSIZE, 64);
    d.wr(CMD, 0xC | 1);
    EXPECT_TRUE(d.wait() & kBusStatus);
    // Random writes over the whole block, runs started among them.
    std::mt19937 rng(14);
    const size_t bytes = ethosu_emu_register_block_size(d.emu());
    for (int i = 0; i < 20000; ++i) {
        const uint32_t offset = static_cast<uint32_t>(rng() % (bytes + 64)) & ~3u;
        d.wr(offset, rng() % 4 == 0 ? static_cast<uint32_t>(rng() % 64) : static_cast<uint32_t>(rng()));
        if (i % 97 == 0) d.wr(CMD, 1);
        if (i % 13 == 0) ethosu_emu_run_until_idle(d.emu());
        if (i % 31 == 0) d.rd(STATUS);
    }
    ASSERT_TRUE(d.soft_reset());
    EXPECT_TRUE(HostDriver::ok(run(dma_stream(64, 1), {src.npu_address, dst.npu_address})));
}

// The memory-mapped block, as the core driver uses it over many inferences: every inference
// after power was released begins with a soft reset and writes the same QBASE, QSIZE, BASEP and
// PMU set-up as before; each takes effect, and a write-one-to-clear word written with the mask
// it shows is seen.
TEST(RegisterFront, MemoryMappedBlockAppliesEveryWriteInOrderAcrossSoftResets) {
    ethosu_emu_options o{"ethos-u55-64", nullptr, nullptr, 1, 1};
    ethosu_emu* emu = nullptr;
    ASSERT_EQ(ethosu_emu_create(&o, &emu, nullptr), 0);
    volatile uint32_t* regs = ethosu_emu_register_block(emu);
    std::vector<uint8_t> src(256, 0x5A), dst(256, 0), words = dma_stream(128, 1);
    ASSERT_EQ(ethosu_emu_map(emu, 0x1000, src.data(), src.size()), 0);
    ASSERT_EQ(ethosu_emu_map(emu, 0x2000, dst.data(), dst.size()), 0);
    ASSERT_EQ(ethosu_emu_map(emu, 0x3000, words.data(), words.size()), 0);
    int irqs = 0;
    ethosu_emu_set_irq_handler(emu, [](void* p) { ++*static_cast<int*>(p); }, &irqs);
    auto clear_irq = [&] { regs[CMD / 4] = (regs[CMD / 4] & 0xC) | 2; };
    const uint32_t npu_active = *pmu_event_id(Generation::U55, "NPU_ACTIVE");
    uint32_t first_count = 0;
    for (int i = 0; i < 5; ++i) {
        SCOPED_TRACE(i);
        regs[RESET / 4] = 1;
        regs[PMCR / 4] = 1;
        regs[PMEVTYPER / 4] = npu_active;
        regs[PMCNTENSET / 4] = 1;
        regs[PMCR / 4] = regs[PMCR / 4] | 2;
        regs[QBASE / 4] = 0x3000;
        regs[QSIZE / 4] = static_cast<uint32_t>(words.size());
        regs[BASEP / 4] = 0x1000;
        regs[(BASEP + 8) / 4] = 0x2000;
        regs[CMD / 4] = (regs[CMD / 4] & 0xC) | 1;
        std::fill(dst.begin(), dst.end(), 0);
        ethosu_emu_sync(emu);
        ASSERT_EQ(irqs, i + 1) << ethosu_emu_last_error(emu);
        EXPECT_TRUE(regs[STATUS / 4] & kEndReached) << ethosu_emu_last_error(emu);
        EXPECT_EQ(dst[127], 0x5A);
        if (i == 0) first_count = regs[PMEVCNTR / 4];
        EXPECT_EQ(regs[PMEVCNTR / 4], first_count);
        EXPECT_GT(first_count, 0u);
        clear_irq();
    }
    // Counter 0 off through PMCNTENCLR with the very mask PMCNTENSET shows: no more counting.
    regs[PMCNTENCLR / 4] = regs[PMCNTENSET / 4];
    regs[CMD / 4] = (regs[CMD / 4] & 0xC) | 1;
    ethosu_emu_sync(emu);
    EXPECT_EQ(regs[PMCNTENSET / 4], 0u);
    EXPECT_EQ(regs[PMEVCNTR / 4], first_count);
    ethosu_emu_destroy(emu);
}

// With the NPU running concurrently, a driver that only polls STATUS in the block sees the run
// complete without ever calling into the emulator.
TEST(RegisterFront, AConcurrentNpuCompletesARunWhileTheDriverPolls) {
    ethosu_emu_options o{"ethos-u55-64", nullptr, nullptr, 1, 1};
    ethosu_emu* emu = nullptr;
    ASSERT_EQ(ethosu_emu_create(&o, &emu, nullptr), 0);
    ethosu_emu_run_concurrently(emu, 1);
    volatile uint32_t* regs = ethosu_emu_register_block(emu);
    std::vector<uint8_t> src(256, 0x33), dst(256, 0), words = dma_stream(128, 1);
    ASSERT_EQ(ethosu_emu_map(emu, 0x1000, src.data(), src.size()), 0);
    ASSERT_EQ(ethosu_emu_map(emu, 0x2000, dst.data(), dst.size()), 0);
    ASSERT_EQ(ethosu_emu_map(emu, 0x3000, words.data(), words.size()), 0);
    regs[QBASE / 4] = 0x3000;
    regs[QSIZE / 4] = static_cast<uint32_t>(words.size());
    regs[BASEP / 4] = 0x1000;
    regs[(BASEP + 8) / 4] = 0x2000;
    regs[CMD / 4] = (regs[CMD / 4] & 0xC) | 1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!(regs[STATUS / 4] & kIrqRaised) && std::chrono::steady_clock::now() < deadline) {
    }
    EXPECT_EQ(regs[STATUS / 4] & (kIrqRaised | kEndReached | kRunning), kIrqRaised | kEndReached);
    EXPECT_EQ(dst[127], 0x33);
    ethosu_emu_destroy(emu);
}

// The same through the memory-mapped block, the NPU observing it on its own thread as well.
TEST(RegisterFront, RandomBlockWritesFaultOrDoNothing) {
    ethosu_emu_options o{"ethos-u85-256", nullptr, nullptr, 1, 1};
    ethosu_emu* emu = nullptr;
    ASSERT_EQ(ethosu_emu_create(&o, &emu, nullptr), 0);
    std::vector<uint8_t> memory(4096, 0x11);
    ASSERT_EQ(ethosu_emu_map(emu, 0, memory.data(), memory.size()), 0);
    int irqs = 0;
    ethosu_emu_set_irq_handler(emu, [](void* p) { ++*static_cast<int*>(p); }, &irqs);
    ethosu_emu_run_concurrently(emu, 1);
    volatile uint32_t* regs = ethosu_emu_register_block(emu);
    const size_t words = ethosu_emu_register_block_size(emu) / 4;
    std::mt19937 rng(15);
    for (int i = 0; i < 20000; ++i) {
        regs[rng() % words] = rng() % 3 == 0 ? static_cast<uint32_t>(rng() % 4096) : static_cast<uint32_t>(rng());
        if (i % 50 == 0) regs[CMD / 4] = 1;
        if (i % 7 == 0) ethosu_emu_sync(emu);
    }
    ethosu_emu_destroy(emu);  // stops the observer first
    EXPECT_GT(irqs, 0);
}

// Seed 001: an offloaded copy through the NPU's DMA costs NPU cycles and AXI traffic, counted by
// the PMU like a run; a longer one costs more; the bytes arrive.
TEST_F(SmallRun, ADmaCopyIsTimedAndCountedAsDmaTraffic) {
    const Generation g = Generation::U55;
    d.pmu_enable({*pmu_event_id(g, "AXI0_WR_DATA_BEAT_WRITTEN"), *pmu_event_id(g, "AXI0_RD_DATA_BEAT_RECEIVED"),
                  *pmu_event_id(g, "AXI1_RD_DATA_BEAT_RECEIVED")});
    ethosu_emu_trace(d.emu(), 1);
    std::vector<uint8_t> host(192);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>(i ^ 0x5A);
    uint64_t cycles = 0;
    ASSERT_EQ(ethosu_emu_dma_copy(d.emu(), dst.bytes.data(), host.data(), host.size(), &cycles), 0);
    EXPECT_TRUE(std::equal(host.begin(), host.end(), dst.bytes.begin()));
    EXPECT_GT(cycles, 0u);
    EXPECT_EQ(ethosu_emu_last_cycles(d.emu()), cycles);
    // Read and written in the arena's memory, SRAM on AXI0 (U55 Shared_Sram), in 8-byte beats.
    EXPECT_EQ(d.pmu_counter(0), host.size() / 8);
    EXPECT_EQ(d.pmu_counter(1), host.size() / 8);
    EXPECT_EQ(d.pmu_counter(2), 0u);
    uint64_t longer = 0;
    std::vector<uint8_t> big(8192, 1), big_dst(8192);
    ASSERT_EQ(ethosu_emu_dma_copy(d.emu(), big_dst.data(), big.data(), big.size(), &longer), 0);
    EXPECT_GT(longer, cycles);
    EXPECT_EQ(big_dst, big);
    const ethosu_emu_dma_totals totals = ethosu_emu_dma_copies(d.emu());
    EXPECT_EQ(totals.copies, 2u);
    EXPECT_EQ(totals.bytes, host.size() + big.size());
    EXPECT_EQ(totals.cycles, cycles + longer);
    EXPECT_EQ(ethosu_emu_dma_copy(d.emu(), nullptr, host.data(), 4, nullptr), -1);

    // Both copies in the device's trace, as DMA transfers one after the other.
    const fs::path trace = fs::temp_directory_path() / fmt::format("ethosu_dma_trace_{}.json", ::getpid());
    ASSERT_EQ(ethosu_emu_write_trace(d.emu(), trace.string().c_str()), 0) << ethosu_emu_last_error(d.emu());
    std::ifstream in(trace);
    const auto json = nlohmann::json::parse(in);
    fs::remove(trace);
    std::vector<uint64_t> dma_bytes;  // the bytes each DMA event read
    for (const auto& e : json.at("traceEvents")) {
        if (e.value("cat", "") != "dma") continue;
        uint64_t read = 0;
        for (const auto& [memory, bytes] : e.at("args").at("read_bytes").items()) read += bytes.get<uint64_t>();
        dma_bytes.push_back(read);
    }
    EXPECT_EQ(dma_bytes, (std::vector<uint64_t>{host.size(), big.size()}));
    EXPECT_EQ(ethosu_emu_write_trace(d.emu(), "/nonexistent/dir/trace.json"), -1);
    EXPECT_NE(std::string(ethosu_emu_last_error(d.emu())).find("cannot write"), std::string::npos);
}

TEST(RegisterFront, CreateRefusesUnknownConfigurations) {
    ethosu_emu_options o{"ethos-u55-100", nullptr, nullptr, 1, 1};
    ethosu_emu* emu = nullptr;
    const char* error = nullptr;
    EXPECT_EQ(ethosu_emu_create(&o, &emu, &error), -1);
    EXPECT_NE(std::string(error).find("ethos-u55-128"), std::string::npos);
    o = {"ethos-u55-128", "No_Such_System", nullptr, 1, 1};
    EXPECT_EQ(ethosu_emu_create(&o, &emu, &error), -1);
    EXPECT_NE(std::string(error).find("Ethos_U55_High_End_Embedded"), std::string::npos);
}

}  // namespace
}  // namespace ethosu
