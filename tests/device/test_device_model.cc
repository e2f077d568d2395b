// The device model API (ethosu_device.h) driven as a system simulator drives a device: register
// accesses of every size as events, memory mapped in, time the host advances, the interrupt as a
// level. A corpus model's stream runs through the registers alone: STATUS, QREAD and the cycle
// counter show it running until its cycles have passed, the interrupt rises at the predicted
// time, and the outputs and PMU counts are those of the emulator's own run. A snapshot taken
// mid-stream, restored onto another device, ends the same way. Offsets are the hardware's,
// written here independently of our description.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <vector>

#include "emulator/engine/timing/pmu.h"
#include "frontend/device/ethosu_device.h"
#include "frontend/runner/run_model.h"
#include "tests/corpus_index.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

constexpr uint32_t STATUS = 0x004, CMD = 0x008, RESET = 0x00C, QBASE = 0x010, QREAD = 0x018, QSIZE = 0x020,
                   REGIONCFG = 0x03C, MEM_ATTR0 = 0x040, BASEP = 0x080;
constexpr uint32_t PMCR = 0x180, PMCNTENSET = 0x184, PMCNTENCLR = 0x188, PMCCNTR = 0x1A0, PMEVCNTR = 0x300,
                   PMEVTYPER = 0x380;
constexpr uint32_t kRunning = 1, kIrqRaised = 2, kBusStatus = 4, kEndReached = 32;
constexpr uint32_t kCycleCounter = 1u << 31;

// The host side: its clock, the interrupt line it watches, the memory it maps in, or serves as a
// bus (16 MB slots from 0x10000000, RAM that reads 0 past what a slot holds; nothing else).
struct Host {
    static constexpr uint64_t kFirstSlot = 0x10000000, kSlotBytes = 0x1000000;
    uint64_t irq_raised_at = 0;
    int raises = 0, lowers = 0;
    ethosu_device* device = nullptr;
    std::vector<std::vector<uint8_t>> memories;
    bool bus = false;
    int bus_reads = 0, bus_writes = 0;
    uint64_t failing_slot = UINT64_MAX;  // a slot whose reads are bus errors

    // The slot and offset of [address, address + size), or nullptr outside every slot.
    std::vector<uint8_t>* slot(uint64_t address, size_t size, uint64_t& offset) {
        if (address < kFirstSlot) return nullptr;
        const uint64_t index = (address - kFirstSlot) / kSlotBytes;
        offset = (address - kFirstSlot) % kSlotBytes;
        if (index >= memories.size() || index == failing_slot || offset + size > kSlotBytes) return nullptr;
        return &memories[index];
    }
    static int mem_read(void* user, uint64_t address, void* data, size_t size) {
        Host& h = *static_cast<Host*>(user);
        ++h.bus_reads;
        uint64_t offset = 0;
        const std::vector<uint8_t>* m = h.slot(address, size, offset);
        if (!m) return 1;
        std::memset(data, 0, size);
        if (offset < m->size()) std::memcpy(data, m->data() + offset, std::min<uint64_t>(size, m->size() - offset));
        return 0;
    }
    static int mem_write(void* user, uint64_t address, const void* data, size_t size) {
        Host& h = *static_cast<Host*>(user);
        ++h.bus_writes;
        uint64_t offset = 0;
        std::vector<uint8_t>* m = h.slot(address, size, offset);
        if (!m || offset + size > m->size()) return 1;
        std::memcpy(m->data() + offset, data, size);
        return 0;
    }

    static void irq(void* user, int level) {
        Host& h = *static_cast<Host*>(user);
        if (level) {
            ++h.raises;
            h.irq_raised_at = ethosu_device_now(h.device);
            // The callback may access the device: it reads STATUS as an interrupt handler would.
            uint64_t status = 0;
            EXPECT_EQ(ethosu_device_read(h.device, STATUS, 4, &status), 0);
            EXPECT_TRUE(status & kIrqRaised);
        } else {
            ++h.lowers;
        }
    }

    explicit Host(const char* npu, bool serve_bus = false) : bus(serve_bus) {
        const ethosu_device_options options{ETHOSU_DEVICE_API_VERSION, npu, nullptr, nullptr, nullptr, 1, 1};
        const ethosu_device_host host{this, &Host::irq, bus ? &Host::mem_read : nullptr, bus ? &Host::mem_write : nullptr};
        char error[256];
        if (ethosu_device_create(&options, &host, &device, error, sizeof error) != 0) throw std::runtime_error(error);
    }
    ~Host() { ethosu_device_destroy(device); }

    uint64_t rd(uint32_t offset, unsigned size = 4) {
        uint64_t value = 0;
        EXPECT_EQ(ethosu_device_read(device, offset, size, &value), 0);
        return value;
    }
    void wr(uint32_t offset, uint64_t value, unsigned size = 4) { EXPECT_EQ(ethosu_device_write(device, offset, size, value), 0); }
    // Places a copy of bytes (at least size) in the next slot, mapped into the device unless the
    // host serves it as a bus; returns its NPU address.
    uint64_t map(const std::vector<uint8_t>& bytes, uint64_t size) {
        const uint64_t address = kFirstSlot + kSlotBytes * memories.size();
        memories.emplace_back(std::max<uint64_t>(size, 16), 0);
        std::copy(bytes.begin(), bytes.end(), memories.back().begin());
        if (!bus) {
            EXPECT_EQ(ethosu_device_map(device, address, memories.back().data(), memories.back().size()), 0);
        }
        return address;
    }
};

// A corpus model laid out in the host's memory, programmed as a driver programs a stream.
struct Program {
    std::unique_ptr<LoadedModel> model;
    fs::path dir;
    uint64_t stream_address = 0;
    uint32_t stream_bytes = 0;
    std::vector<uint64_t> basep;
    std::vector<size_t> region_memory;  // per region: its index in Host::memories

    Program(Host& host, const fs::path& dir_, const char* config) : dir(dir_) {
        model = load_model((dir / config / "model_vela.tflite").string(), {});
        const NpuInvocation& inv = model->invocations.at(0);
        std::vector<uint8_t> words(inv.stream.words.size() * 4);
        std::memcpy(words.data(), inv.stream.words.data(), words.size());
        stream_address = host.map(words, words.size());
        stream_bytes = static_cast<uint32_t>(words.size());
        basep.assign(8, 0);
        region_memory.assign(8, 0);
        for (const auto& r : inv.regions) {
            basep.at(static_cast<size_t>(r.index)) = host.map({r.bytes.begin(), r.bytes.end()}, r.size);
            region_memory.at(static_cast<size_t>(r.index)) = host.memories.size() - 1;
        }
    }
    void place_inputs(Host& host, int seed) {
        for (size_t k = 0; k < model->inputs.size(); ++k) {
            const auto& t = model->inputs[k];
            const auto in = read_file_bytes(dir / "golden" / fmt::format("seed{}.in{}.bin", seed, k));
            std::memcpy(host.memories[region_memory[static_cast<size_t>(t.region)]].data() + t.offset, in.data(), in.size());
        }
    }
    bool outputs_match(Host& host, int seed) {
        for (size_t k = 0; k < model->outputs.size(); ++k) {
            const auto& t = model->outputs[k];
            const auto golden = read_file_bytes(dir / "golden" / fmt::format("seed{}.out{}.bin", seed, k));
            const uint8_t* out = host.memories[region_memory[static_cast<size_t>(t.region)]].data() + t.offset;
            if (!std::equal(golden.begin(), golden.end(), out)) return false;
        }
        return true;
    }
    // U85 moves the PMU block up by 0x1000.
    uint32_t pmu() const { return model->config.generation == Generation::U85 ? 0x1000 : 0; }
    // QBASE, QSIZE, BASEP and REGIONCFG (constants on AXI1, the rest on AXI0; U85: MEM_ATTR 0 on
    // the SRAM port, 3 on the external one), then CMD.transition_to_running_state.
    void start(Host& host) {
        if (model->config.generation == Generation::U85) {
            host.wr(MEM_ATTR0, 0);
            host.wr(MEM_ATTR0 + 12, 1u << 2);
        }
        host.wr(QBASE, stream_address, 8);
        host.wr(QSIZE, stream_bytes);
        for (size_t i = 0; i < basep.size(); ++i) host.wr(BASEP + 8 * static_cast<uint32_t>(i), basep[i], 8);
        host.wr(REGIONCFG, 3);
        host.wr(CMD, 1);
    }
};

struct Case {
    const char* model;
    const char* config;
};

class DeviceModel : public ::testing::TestWithParam<Case> {
protected:
    void SetUp() override {
        vectors_ = ETHOSU_VECTORS_DIR;
        if (!fs::exists(vectors_ / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors_;
    }
    fs::path vectors_;
};

// The emulator's own figures for the model, on the memory placement the registers give.
struct Expected {
    uint64_t cycles = 0;
    PmuReading pmu;
    std::vector<uint32_t> events;
};
Expected expected_for(const LoadedModel& model) {
    const Generation g = model.config.generation;
    Expected e;
    e.events = {*pmu_event_id(g, "NPU_ACTIVE"), *pmu_event_id(g, "MAC_ACTIVE")};
    SystemSelection placement;
    placement.memory_mode = "Shared_Sram";  // the arena on AXI0 / the SRAM port, the constants on AXI1
    const RunResult run = run_model(model, {}, {.system = placement, .pipeline = {.execute = false}});
    e.cycles = static_cast<uint64_t>(run.timing.at(0).totals.cycles);
    e.pmu = read_pmu(run.memory, run.timing, e.events);
    return e;
}

// A device of the case's configuration with the model laid out in its host's memory, and what
// the emulator's own run gives.
struct Bench {
    Bench(const Case& c, const fs::path& vectors, bool serve_bus = false)
        : host(c.config, serve_bus), program(host, vectors / c.model, c.config), pmu(program.pmu()),
          expected(expected_for(*program.model)) {}
    Host host;
    Program program;
    const uint32_t pmu;
    const Expected expected;
};

void enable_pmu(Host& host, uint32_t pmu, const std::vector<uint32_t>& events) {
    host.wr(pmu + PMCR, 1 | 2 | 4);
    for (size_t i = 0; i < events.size(); ++i) host.wr(pmu + PMEVTYPER + 4 * static_cast<uint32_t>(i), events[i]);
    host.wr(pmu + PMCNTENSET, kCycleCounter | ((1u << events.size()) - 1));
}

TEST_P(DeviceModel, StatusQreadAndTheInterruptFollowTheHostsTime) {
    const Case c = GetParam();
    Bench bench(c, vectors_);
    auto& [host, program, pmu, expected] = bench;
    enable_pmu(host, pmu, expected.events);
    program.place_inputs(host, 1);
    const uint64_t start = ethosu_device_now(host.device);
    program.start(host);

    // Running: nothing has passed yet.
    uint64_t next = 0;
    ASSERT_EQ(ethosu_device_next_event(host.device, &next), 1) << ethosu_device_last_error(host.device);
    EXPECT_EQ(next, expected.cycles);
    EXPECT_EQ(host.rd(STATUS) & (kRunning | kIrqRaised | kEndReached), kRunning);
    EXPECT_EQ(host.raises, 0);
    const uint64_t qread_at_start = host.rd(QREAD);
    EXPECT_LT(qread_at_start, program.stream_bytes);

    // Half way: still running, the command processor as far or further on (past the last op, it
    // waits for the units at the stream's end), the cycle counter at half.
    ethosu_device_advance(host.device, expected.cycles / 2);
    EXPECT_TRUE(host.rd(STATUS) & kRunning);
    EXPECT_EQ(host.raises, 0);
    EXPECT_GE(host.rd(QREAD), qread_at_start);
    EXPECT_LE(host.rd(QREAD), program.stream_bytes);
    EXPECT_EQ(host.rd(pmu + PMCCNTR, 8), expected.cycles / 2);
    ASSERT_EQ(ethosu_device_next_event(host.device, &next), 1);
    EXPECT_EQ(next, expected.cycles - expected.cycles / 2);
    EXPECT_EQ(ethosu_device_peek(host.device, STATUS) & kRunning, kRunning);

    // One cycle short of the end, then the end: the interrupt rises at the predicted time.
    ethosu_device_advance(host.device, next - 1);
    EXPECT_EQ(host.raises, 0);
    ethosu_device_advance(host.device, 1);
    EXPECT_EQ(host.raises, 1);
    EXPECT_EQ(host.irq_raised_at, start + expected.cycles);
    EXPECT_EQ(ethosu_device_next_event(host.device, &next), 0);
    const uint64_t status = host.rd(STATUS);
    EXPECT_EQ(status & (kRunning | kIrqRaised | kEndReached | kBusStatus), kIrqRaised | kEndReached);
    EXPECT_EQ(host.rd(QREAD), program.stream_bytes);
    EXPECT_TRUE(program.outputs_match(host, 1));
    EXPECT_EQ(ethosu_device_last_cycles(host.device), expected.cycles);
    EXPECT_EQ(host.rd(pmu + PMCCNTR, 8), expected.pmu.cycle_counter);
    for (uint32_t n = 0; n < expected.events.size(); ++n)
        EXPECT_EQ(host.rd(pmu + PMEVCNTR + 4 * n), expected.pmu.counters[n]) << "counter " << n;

    // clear_irq lowers the line.
    host.wr(CMD, 2);
    EXPECT_EQ(host.lowers, 1);
    EXPECT_EQ(ethosu_device_irq_level(host.device), 0);
}

// A snapshot mid-stream, restored onto a second device of the same configuration (with the same
// memory): both end at the same time with the same STATUS and PMU.
TEST_P(DeviceModel, ASnapshotMidStreamEndsTheSameWayOnAnotherDevice) {
    const Case c = GetParam();
    Bench bench(c, vectors_);
    auto& [first, program, pmu, expected] = bench;
    enable_pmu(first, pmu, expected.events);
    program.place_inputs(first, 2);
    program.start(first);
    ethosu_device_advance(first.device, expected.cycles / 3);
    size_t bytes = 0;
    ASSERT_EQ(ethosu_device_save(first.device, nullptr, 0, &bytes), -1);
    std::vector<uint8_t> state(bytes);
    ASSERT_EQ(ethosu_device_save(first.device, state.data(), state.size(), &bytes), 0);

    Host second(c.config);
    ASSERT_EQ(ethosu_device_restore(second.device, state.data(), state.size()), 0) << ethosu_device_last_error(second.device);
    EXPECT_EQ(ethosu_device_now(second.device), ethosu_device_now(first.device));
    for (Host* h : {&first, &second}) {
        uint64_t next = 0;
        ASSERT_EQ(ethosu_device_next_event(h->device, &next), 1);
        EXPECT_EQ(next, expected.cycles - expected.cycles / 3);
        EXPECT_TRUE(h->rd(STATUS) & kRunning);
        ethosu_device_advance(h->device, next);
        EXPECT_EQ(h->raises, 1);
        EXPECT_EQ(h->rd(STATUS) & (kRunning | kIrqRaised | kEndReached), kIrqRaised | kEndReached);
        EXPECT_EQ(h->rd(pmu + PMCCNTR, 8), expected.pmu.cycle_counter);
        EXPECT_EQ(h->rd(pmu + PMEVCNTR), expected.pmu.counters[0]);
    }
    EXPECT_TRUE(program.outputs_match(first, 2));
    // A snapshot of another configuration, or cut short, is refused, naming why.
    Host other(pmu ? "ethos-u85-1024" : c.config == std::string("ethos-u55-128") ? "ethos-u65-256" : "ethos-u55-128");
    EXPECT_EQ(ethosu_device_restore(other.device, state.data(), state.size()), -1);
    EXPECT_NE(std::string(ethosu_device_last_error(other.device)).find("another NPU configuration"), std::string::npos);
    EXPECT_EQ(ethosu_device_restore(second.device, state.data(), state.size() - 1), -1);
    EXPECT_NE(std::string(ethosu_device_last_error(second.device)).find("truncated"), std::string::npos);
}

// The host serves the memory as a bus: the stream, its weights and feature maps are fetched by
// page, the outputs written back, and a second inference fetches afresh; the figures are the
// mapped run's. A bus error on the arena faults the run.
TEST_P(DeviceModel, TheHostsBusServesTheStream) {
    const Case c = GetParam();
    Bench bench(c, vectors_, true);
    auto& [host, program, pmu, expected] = bench;
    for (int seed : {1, 2}) {
        SCOPED_TRACE(fmt::format("seed {}", seed));
        enable_pmu(host, pmu, expected.events);
        program.place_inputs(host, seed);
        const int reads_before = host.bus_reads;
        program.start(host);
        EXPECT_GT(host.bus_reads, reads_before) << ethosu_device_last_error(host.device);
        EXPECT_GT(host.bus_writes, 0);
        uint64_t next = 0;
        ASSERT_EQ(ethosu_device_next_event(host.device, &next), 1);
        EXPECT_EQ(next, expected.cycles);
        ethosu_device_advance(host.device, next);
        EXPECT_EQ(host.rd(STATUS) & (kRunning | kIrqRaised | kEndReached | kBusStatus), kIrqRaised | kEndReached)
            << ethosu_device_last_error(host.device);
        EXPECT_TRUE(program.outputs_match(host, seed));
        EXPECT_EQ(host.rd(pmu + PMCCNTR, 8), expected.pmu.cycle_counter);
        host.wr(CMD, 2);
    }
    host.failing_slot = program.region_memory[1];
    program.start(host);
    EXPECT_TRUE(host.rd(STATUS) & kBusStatus);
    EXPECT_NE(std::string(ethosu_device_last_error(host.device)).find("the bus refused a read"), std::string::npos)
        << ethosu_device_last_error(host.device);
}

INSTANTIATE_TEST_SUITE_P(Corpus, DeviceModel,
                         ::testing::Values(Case{"conv_k3s1_same_16x16x8to16_relu", "ethos-u55-128"},
                                           Case{"person_detect", "ethos-u65-256"},
                                           Case{"conv_k3s1_same_16x16x8to16_relu", "ethos-u85-256"}),
                         [](const auto& info) {
                             std::string name = std::string(info.param.model) + "_" + info.param.config;
                             for (char& ch : name)
                                 if (ch == '-') ch = '_';
                             return name;
                         });

// Accesses of every size: a narrow write merges into the register, a narrow write to a
// write-one-to-clear word clears only its bytes' bits, a 64-bit access is two words, a
// misaligned or odd-sized one is refused; peek has no effect; a power-on reset lowers the line.
TEST(DeviceModelAccess, EverySizeAndPeekAndReset) {
    Host host("ethos-u55-128");
    host.wr(QBASE, 0x11223344);
    host.wr(QBASE + 1, 0xAB, 1);
    EXPECT_EQ(host.rd(QBASE), 0x1122AB44u);
    host.wr(QBASE + 2, 0xCDEF, 2);
    EXPECT_EQ(host.rd(QBASE), 0xCDEFAB44u);
    EXPECT_EQ(host.rd(QBASE + 3, 1), 0xCDu);
    host.wr(QBASE, 0x0000000500000006ull, 8);
    EXPECT_EQ(host.rd(QBASE, 8), 0x0000000500000006ull);
    host.wr(PMCNTENSET, 0x80000003u);
    host.wr(PMCNTENCLR + 3, 0x80, 1);  // bit 31 only
    EXPECT_EQ(host.rd(PMCNTENSET), 3u);
    uint64_t value = 0;
    EXPECT_EQ(ethosu_device_read(host.device, QBASE + 1, 4, &value), -1);
    EXPECT_EQ(ethosu_device_write(host.device, QBASE, 3, 1), -1);
    EXPECT_EQ(ethosu_device_peek(host.device, PMCNTENCLR), 3u);  // reads as its SET twin

    // A run that faults at once (no memory behind QBASE) raises the interrupt at once.
    host.wr(QBASE, 0x7000000, 8);
    host.wr(QSIZE, 64);
    host.wr(CMD, 1);
    EXPECT_EQ(host.raises, 1);
    EXPECT_TRUE(host.rd(STATUS) & kBusStatus);
    EXPECT_NE(std::string(ethosu_device_last_error(host.device)).find("outside every mapped memory"), std::string::npos);
    // A queue past the longest a run takes (16 MiB) is refused, not read.
    ethosu_device_reset(host.device);
    host.wr(QBASE, 0x10000000, 8);
    host.wr(QSIZE, 0x40000000);
    host.wr(CMD, 1);
    EXPECT_TRUE(host.rd(STATUS) & 16u);  // cmd_parse_error
    EXPECT_NE(std::string(ethosu_device_last_error(host.device)).find("past the longest queue"), std::string::npos);
    host.lowers = 0;
    ethosu_device_reset(host.device);
    EXPECT_EQ(host.lowers, 1);
    EXPECT_EQ(host.rd(STATUS) & (kBusStatus | kIrqRaised), 0u);
    EXPECT_EQ(host.rd(QBASE), 0u);
    EXPECT_EQ(host.rd(PMCNTENSET), 0u);
    host.wr(PMCNTENSET, 5);
    host.wr(RESET, 0);  // a soft reset, as a driver makes, leaves the PMU alone
    EXPECT_EQ(host.rd(PMCNTENSET), 5u);
}

TEST(DeviceModelAccess, CreateRefusesAnotherVersionAndUnknownConfigurations) {
    ethosu_device* device = nullptr;
    char error[256] = "";
    ethosu_device_options options{ETHOSU_DEVICE_API_VERSION + 1, "ethos-u55-128", nullptr, nullptr, nullptr, 1, 1};
    EXPECT_EQ(ethosu_device_create(&options, nullptr, &device, error, sizeof error), -1);
    EXPECT_NE(std::string(error).find("version"), std::string::npos) << error;
    options.version = ETHOSU_DEVICE_API_VERSION;
    options.npu = "ethos-u99-1";
    EXPECT_EQ(ethosu_device_create(&options, nullptr, &device, error, sizeof error), -1);
    EXPECT_NE(std::string(error).find("unknown NPU configuration"), std::string::npos) << error;
    options.npu = "ethos-u55-128";
    options.system_config = "No_Such_System";
    EXPECT_EQ(ethosu_device_create(&options, nullptr, &device, error, sizeof error), -1);
    EXPECT_EQ(device, nullptr);
}

}  // namespace
}  // namespace ethosu
