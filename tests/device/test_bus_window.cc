// The bus window: NPU memory served from a system simulator's bus through page faults. The bus
// here is a guest's RAM in a vector that logs every call, so the tests see what reaches the bus
// (which pages are fetched, which bytes written back) and what stays in the guest's memory.

#include "frontend/device/bus_window.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <csignal>
#include <cstring>
#include <mutex>
#include <ostream>
#include <span>
#include <thread>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/decoder.h"
#include "frontend/device/mmio_trap.h"
#include "tests/address_sanitizer.h"

namespace ethosu {

void PrintTo(const BusFault& fault, std::ostream* os) {
    *os << (fault.write ? "write" : "read") << " fault at 0x" << std::hex << fault.address;
}

namespace {

const auto kPage = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));  // the window's page

struct BusCall {
    bool write;
    uint64_t address;
    size_t size;
    bool operator==(const BusCall&) const = default;
};

void PrintTo(const BusCall& call, std::ostream* os) {
    *os << (call.write ? "write " : "read ") << call.size << " bytes at 0x" << std::hex << call.address;
}

BusCall read_of(uint64_t address, size_t size = kPage) { return {false, address, size}; }
BusCall write_of(uint64_t address, size_t size) { return {true, address, size}; }

// A guest's RAM at [ram_base, ram_base + bytes) on a bus that errs everywhere else and in the
// ranges a test makes fail. The window serialises its calls; the lock is for the test thread.
class GuestBus {
public:
    GuestBus(uint64_t ram_base, size_t bytes) : ram_base_(ram_base), ram_(bytes) {
        for (size_t i = 0; i < bytes; ++i) ram_[i] = static_cast<uint8_t>(i * 13 + i / 4093);
    }

    BusCallbacks callbacks() { return {&GuestBus::read, &GuestBus::write, this}; }

    uint8_t& at(uint64_t address) { return ram_.at(address - ram_base_); }
    std::span<uint8_t> bytes(uint64_t address, size_t size) {
        return std::span(ram_).subspan(address - ram_base_, size);
    }

    void fail_reads(uint64_t address, uint64_t size) { failing_reads_ = {address, address + size}; }
    void fail_writes(uint64_t address, uint64_t size) { failing_writes_ = {address, address + size}; }

    std::vector<BusCall> calls() {
        std::lock_guard lock(mutex_);
        return calls_;
    }
    void clear_calls() {
        std::lock_guard lock(mutex_);
        calls_.clear();
    }

private:
    struct Range {
        uint64_t first = 0, end = 0;
        bool overlaps(uint64_t address, size_t size) const { return address < end && first < address + size; }
    };

    bool in_ram(uint64_t address, size_t size) const {
        return address >= ram_base_ && address - ram_base_ + size <= ram_.size();
    }
    int access(bool is_write, uint64_t address, size_t size, const Range& failing) {
        std::lock_guard lock(mutex_);
        calls_.push_back({is_write, address, size});
        return in_ram(address, size) && !failing.overlaps(address, size) ? 0 : 1;
    }
    static int read(void* user, uint64_t address, void* data, size_t size) {
        auto& bus = *static_cast<GuestBus*>(user);
        const int status = bus.access(false, address, size, bus.failing_reads_);
        if (status == 0) std::memcpy(data, &bus.at(address), size);
        return status;
    }
    static int write(void* user, uint64_t address, const void* data, size_t size) {
        auto& bus = *static_cast<GuestBus*>(user);
        const int status = bus.access(true, address, size, bus.failing_writes_);
        if (status == 0) std::memcpy(&bus.at(address), data, size);
        return status;
    }

    uint64_t ram_base_;
    std::vector<uint8_t> ram_;
    Range failing_reads_, failing_writes_;
    std::mutex mutex_;
    std::vector<BusCall> calls_;
};

constexpr uint64_t kRam = 0x6000'0000;
const size_t kRamBytes = 64 * kPage;

// A guest bus and a 32-bit window on it.
class BusWindowTest : public testing::Test {
protected:
    volatile uint8_t& npu(uint64_t address) { return window.base()[address]; }

    GuestBus bus{kRam, kRamBytes};
    BusWindow window{32, bus.callbacks()};
};

// ---- fetching and writing back ------------------------------------------------------------------

TEST_F(BusWindowTest, ReservesTheWholeAddressRange) {
    EXPECT_EQ(window.bytes(), uint64_t{1} << 32);
    constexpr uint64_t kTop = uint64_t{1} << 40;
    GuestBus high(kTop - 16 * kPage, 16 * kPage);
    BusWindow forty_bits(40, high.callbacks());
    EXPECT_EQ(forty_bits.bytes(), kTop);
    EXPECT_EQ(forty_bits.page_bytes(), kPage);
    EXPECT_EQ(forty_bits.base()[kTop - 1], high.at(kTop - 1));
    EXPECT_EQ(high.calls(), std::vector{read_of(kTop - kPage)});
    EXPECT_THROW(BusWindow(41, bus.callbacks()), std::invalid_argument);
    EXPECT_THROW(BusWindow(32, {}), std::invalid_argument);
}

TEST_F(BusWindowTest, EachPageIsFetchedOncePerRun) {
    for (int pass = 0; pass < 3; ++pass)
        for (uint64_t offset = 0; offset < 3 * kPage; offset += 61)
            ASSERT_EQ(npu(kRam + offset), bus.at(kRam + offset));
    npu(kRam + 5) = 1;
    npu(kRam + kPage + 7) = 2;
    EXPECT_EQ(bus.calls(), (std::vector{read_of(kRam), read_of(kRam + kPage), read_of(kRam + 2 * kPage)}));
    const BusCounters counters = window.counters();
    EXPECT_EQ(counters.pages_fetched, 3u);
    EXPECT_EQ(counters.bytes_fetched, 3 * kPage);
    EXPECT_EQ(counters.writes, 0u) << "nothing is written back before flush";
}

TEST_F(BusWindowTest, OnlyChangedBytesAreWrittenBack) {
    const uint64_t page = kRam + 4 * kPage;
    for (uint64_t i = 10; i < 20; ++i) npu(page + i) = static_cast<uint8_t>(~bus.at(page + i));
    npu(page + 30) = bus.at(page + 30);  // written, but with the value it held
    // A write that runs over a page boundary is one write-back.
    for (uint64_t i = kPage - 3; i < kPage + 5; ++i) npu(page + i) = static_cast<uint8_t>(~bus.at(page + i));
    // Another bus master changes neighbouring bytes between the fetch and the flush.
    bus.at(page + 20) = 0x5A;
    bus.at(page + 9) = 0xA5;
    bus.at(page + 100) = 0x77;
    bus.at(page + kPage + 5) = 0x66;
    bus.clear_calls();

    window.flush();
    EXPECT_EQ(bus.calls(), (std::vector{write_of(page + 10, 10), write_of(page + kPage - 3, 8)}));
    EXPECT_EQ(bus.at(page + 20), 0x5A);
    EXPECT_EQ(bus.at(page + 9), 0xA5);
    EXPECT_EQ(bus.at(page + 100), 0x77);
    EXPECT_EQ(bus.at(page + kPage + 5), 0x66);
    const BusCounters counters = window.counters();
    EXPECT_EQ(counters.writes, 2u);
    EXPECT_EQ(counters.bytes_written_back, 18u);
    EXPECT_EQ(counters.pages_written_back, 2u);
}

// With a merge gap, changes that close go back as one write whose unchanged bytes carry the values
// they were fetched with; changes further apart stay separate.
TEST(BusWindowMerge, ChangesAGapApartGoBackAsOneWrite) {
    GuestBus bus{kRam, 4 * kPage};
    BusCallbacks callbacks = bus.callbacks();
    callbacks.merge_gap = 16;
    BusWindow window{32, callbacks};
    uint8_t* npu = window.base();
    const uint8_t before = bus.at(kRam + 12);
    npu[kRam + 2] = static_cast<uint8_t>(~bus.at(kRam + 2));
    npu[kRam + 18] = static_cast<uint8_t>(~bus.at(kRam + 18));  // 15 unchanged bytes apart: merged
    npu[kRam + 40] = static_cast<uint8_t>(~bus.at(kRam + 40));  // 21 apart: a write of its own
    bus.clear_calls();
    window.flush();
    EXPECT_EQ(bus.calls(), (std::vector{write_of(kRam + 2, 17), write_of(kRam + 40, 1)}));
    EXPECT_EQ(bus.at(kRam + 12), before);
    EXPECT_EQ(window.counters().bytes_written_back, 18u);
}

TEST_F(BusWindowTest, AWriteToAPageNotFetchedFetchesItFirst) {
    const uint64_t address = kRam + 9 * kPage + 5;
    npu(address) = 0xEE;
    bus.at(address + 1) = 0x11;  // the guest writes next to it meanwhile
    EXPECT_EQ(npu(address - 1), bus.at(address - 1)) << "the rest of the page is the guest's";
    window.flush();
    EXPECT_EQ(bus.calls(), (std::vector{read_of(kRam + 9 * kPage), write_of(address, 1)}));
    EXPECT_EQ(bus.at(address), 0xEE);
    EXPECT_EQ(bus.at(address + 1), 0x11);
}

TEST_F(BusWindowTest, PagesOnlyReadWriteNothingBack) {
    for (uint64_t offset = 0; offset < 8 * kPage; offset += kPage) ASSERT_EQ(npu(kRam + offset), bus.at(kRam + offset));
    window.flush();
    EXPECT_EQ(bus.calls().size(), 8u);
    EXPECT_EQ(window.counters().writes, 0u);
}

TEST_F(BusWindowTest, AfterAFlushTheNextRunFetchesAgain) {
    npu(kRam + 3) = 0x42;
    window.flush();
    bus.at(kRam + 3) = 0x43;  // the guest changes it between runs
    EXPECT_EQ(npu(kRam + 3), 0x43);
    EXPECT_EQ(bus.calls(), (std::vector{read_of(kRam), write_of(kRam + 3, 1), read_of(kRam)}));
    EXPECT_EQ(window.counters().pages_fetched, 2u);
}

TEST_F(BusWindowTest, DiscardWritesNothingBack) {
    const uint8_t before = bus.at(kRam + 3);
    npu(kRam + 3) = static_cast<uint8_t>(~before);
    window.discard();
    EXPECT_EQ(bus.at(kRam + 3), before);
    EXPECT_EQ(npu(kRam + 3), before);
    EXPECT_EQ(bus.calls(), (std::vector{read_of(kRam), read_of(kRam)}));
}

// ---- bus errors ---------------------------------------------------------------------------------

TEST_F(BusWindowTest, AFailingReadGivesZerosAndTheFault) {
    const uint64_t page = kRam + 2 * kPage;
    bus.fail_reads(page + 0x800, 4);  // part of the page: the page is read whole, so all of it fails
    EXPECT_EQ(window.fault(), std::nullopt);
    EXPECT_EQ(npu(page + 0x10), 0);
    EXPECT_EQ(npu(page + 0x900), 0);
    EXPECT_EQ(window.fault(), (BusFault{page + 0x10, false}));
    EXPECT_EQ(npu(0x10), 0);  // outside the guest's RAM: a later failure does not replace the first
    EXPECT_EQ(window.fault(), (BusFault{page + 0x10, false}));

    // What the run changed on the zero-filled page is still written back.
    npu(page + 0x20) = 7;
    window.flush();
    EXPECT_EQ(bus.calls().back(), write_of(page + 0x20, 1));
    EXPECT_EQ(bus.at(page + 0x20), 7);
    window.clear_fault();
    EXPECT_EQ(window.fault(), std::nullopt);
}

TEST_F(BusWindowTest, AFailingWriteBackIsRecordedAndTheOthersStillHappen) {
    bus.fail_writes(kRam + kPage, kPage);
    npu(kRam + kPage + 8) = static_cast<uint8_t>(~bus.at(kRam + kPage + 8));
    npu(kRam + 3 * kPage) = static_cast<uint8_t>(~bus.at(kRam + 3 * kPage));
    window.flush();
    EXPECT_EQ(window.fault(), (BusFault{kRam + kPage + 8, true}));
    const std::vector<BusCall> calls = bus.calls();
    EXPECT_EQ(std::vector(calls.end() - 2, calls.end()),
              (std::vector{write_of(kRam + kPage + 8, 1), write_of(kRam + 3 * kPage, 1)}));
    EXPECT_EQ(npu(kRam + 3 * kPage), bus.at(kRam + 3 * kPage));
}

// ---- threads ------------------------------------------------------------------------------------

// Every thread reads the same pages and writes its own bytes, some in a page they all write and
// some in pages of its own, all starting at once: each page is still fetched once, and every
// thread's bytes reach the guest.
TEST_F(BusWindowTest, ConcurrentFaultsFromSeveralThreads) {
    constexpr int kThreads = 8;
    constexpr uint64_t kShared = kRam, kSharedPages = 4;
    const uint64_t kCommonWrites = kRam + 8 * kPage, kOwnPages = kRam + 16 * kPage;
    std::vector<uint8_t> expected(kRamBytes);
    std::copy(bus.bytes(kRam, kRamBytes).begin(), bus.bytes(kRam, kRamBytes).end(), expected.begin());
    const auto written_value = [](int thread, uint64_t i) { return static_cast<uint8_t>(0x80 + thread * 3 + i); };

    std::barrier start(kThreads);
    std::vector<std::thread> threads;
    std::vector<int> mismatches(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            for (uint64_t offset = (t * 37) % 64; offset < kSharedPages * kPage; offset += 64)
                mismatches[t] += npu(kShared + offset) != expected[kShared + offset - kRam];
            for (uint64_t i = 0; i < 16; ++i) npu(kCommonWrites + t * 16 + i) = written_value(t, i);
            for (uint64_t i = 0; i < kPage; i += 512) npu(kOwnPages + t * kPage + i) = written_value(t, i);
        });
    }
    for (auto& thread : threads) thread.join();
    window.flush();

    EXPECT_EQ(mismatches, std::vector<int>(kThreads));
    for (int t = 0; t < kThreads; ++t) {
        for (uint64_t i = 0; i < 16; ++i) expected[kCommonWrites - kRam + t * 16 + i] = written_value(t, i);
        for (uint64_t i = 0; i < kPage; i += 512) expected[kOwnPages - kRam + t * kPage + i] = written_value(t, i);
    }
    EXPECT_TRUE(std::ranges::equal(bus.bytes(kRam, kRamBytes), expected));
    std::vector<uint64_t> fetched;
    for (const BusCall& call : bus.calls())
        if (!call.write) fetched.push_back(call.address);
    std::ranges::sort(fetched);
    EXPECT_EQ(std::ranges::adjacent_find(fetched), fetched.end()) << "a page fetched twice";
    EXPECT_EQ(fetched.size(), kSharedPages + 1 + kThreads);
}

// ---- on the engine ------------------------------------------------------------------------------

TEST(MapBusWindow, MapsEveryGapAndKeepsTheHostBuffers) {
    GuestBus bus(kRam, kPage);
    BusWindow window(32, bus.callbacks());
    MemoryMap map;
    const auto low = map.allocate(0x1000, 0x1000, "low");
    map.allocate(0x8000'0000, 0x2000, "middle");
    map.allocate(0x1'0000'0000, 0x1000, "past the window");
    map_bus_window(map, window);

    const auto mapping = [&](uint64_t address) { return map.find(address, 1); };
    EXPECT_EQ(mapping(0)->bytes.data(), window.base());
    EXPECT_EQ(mapping(0)->bytes.size(), 0x1000u);
    EXPECT_EQ(mapping(0x1000)->bytes.data(), low.data());
    EXPECT_EQ(mapping(0x2000)->bytes.data(), window.base() + 0x2000);
    EXPECT_EQ(mapping(0x2000)->bytes.size(), 0x8000'0000u - 0x2000);
    EXPECT_EQ(mapping(0x7FFF'FFFF)->name, "bus");
    EXPECT_EQ(mapping(0x8000'1FFF)->name, "middle");
    EXPECT_EQ(mapping(0x8000'2000)->bytes.data(), window.base() + 0x8000'2000);
    EXPECT_EQ(mapping(0xFFFF'FFFF)->name, "bus");
    EXPECT_EQ(map.mappings().size(), 6u);
}

CommandStreamBuilder dma_copy(Generation generation, uint64_t length) {
    using isa::Cmd;
    using isa::Field;
    CommandStreamBuilder b(generation);
    b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, 1}})
        .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, 0}})
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__region, 2}})
        .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, 0}})
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, length}})
        .emit(Cmd::OP_DMA_START)
        .emit(Cmd::OP_STOP);
    return b;
}

// An NPU whose whole address space is the bus: a DMA from region 1 to region 2.
struct BusMachine {
    BusMachine(const char* config_name, unsigned address_bits, GuestBus& bus)
        : config(*find_npu_config(config_name)), window(address_bits, bus.callbacks()), space(map) {
        map_bus_window(map, window);
    }

    void copy(uint64_t source, uint64_t destination, uint64_t length) {
        space.set_base(1, source);
        space.set_base(2, destination);
        const auto stream = decode_stream(config, dma_copy(config.generation, length).words(), "bus.bin");
        Executor(config, space, "bus.bin").run(stream);
        window.flush();
    }

    NpuConfig config;
    BusWindow window;
    MemoryMap map;
    AddressSpace space;
};

TEST(BusWindowEngine, ADmaRunsBetweenAddressesOnlyTheBusServes) {
    for (const auto& [config, bits] : {std::pair{"ethos-u55-128", 32u}, std::pair{"ethos-u65-256", 40u}}) {
        SCOPED_TRACE(config);
        GuestBus bus(kRam, kRamBytes);
        BusMachine npu(config, bits, bus);
        const uint64_t source = kRam + 0x123, destination = kRam + 20 * kPage + 0x456, length = 3 * kPage + 0x321;
        const std::vector<uint8_t> copied(bus.bytes(source, length).begin(), bus.bytes(source, length).end());
        const uint8_t before = bus.at(destination - 1), after = bus.at(destination + length);

        npu.copy(source, destination, length);
        EXPECT_TRUE(std::ranges::equal(bus.bytes(destination, length), copied));
        EXPECT_EQ(bus.at(destination - 1), before);
        EXPECT_EQ(bus.at(destination + length), after);
        const BusCounters counters = npu.window.counters();
        EXPECT_EQ(counters.pages_fetched, 8u) << "4 source and 4 destination pages";
        EXPECT_EQ(counters.pages_written_back, 4u);
        EXPECT_LE(counters.bytes_written_back, length);
        EXPECT_EQ(npu.window.fault(), std::nullopt);
    }
}

TEST(BusWindowEngine, ADmaReadingWhereTheBusFailsRecordsTheFault) {
    GuestBus bus(kRam, kRamBytes);
    BusMachine npu("ethos-u65-256", 40, bus);
    const uint64_t source = kRam + 5 * kPage, destination = kRam + 30 * kPage, length = 0x200;
    bus.fail_reads(source, kPage);
    npu.copy(source, destination, length);
    const std::optional<BusFault> fault = npu.window.fault();
    ASSERT_TRUE(fault.has_value());
    EXPECT_FALSE(fault->write);
    EXPECT_GE(fault->address, source);
    EXPECT_LT(fault->address, source + length);
    // The zeros the NPU was given were copied, and written back where they changed the guest.
    EXPECT_TRUE(std::ranges::all_of(bus.bytes(destination, length), [](uint8_t b) { return b == 0; }));
}

// ---- the shared handler -------------------------------------------------------------------------

TEST(BusWindowAndTrap, ShareTheFaultHandler) {
    GuestBus bus(kRam, kRamBytes);
    BusWindow window(32, bus.callbacks());
    uint32_t last_write = 0;
    MmioTrap trap(kPage, [](uint64_t, unsigned) { return uint64_t{0x1234}; },
                  [&](uint64_t, unsigned, uint64_t value) { last_write = static_cast<uint32_t>(value); });
    auto* reg = reinterpret_cast<volatile uint32_t*>(static_cast<volatile uint8_t*>(trap.base()) + 8);
    *reg = window.base()[kRam + 1];
    EXPECT_EQ(last_write, bus.at(kRam + 1));
    window.base()[kRam + 2] = static_cast<uint8_t>(*reg);
    window.flush();
    EXPECT_EQ(bus.at(kRam + 2), 0x34);
}

TEST(BusWindowDeathTest, AFaultOutsideEveryWindowStillKills) {
    GuestBus bus(kRam, kPage);
    BusWindow window(32, bus.callbacks());
    void* page = mmap(nullptr, kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page, MAP_FAILED);
    auto fault = [&] { *static_cast<volatile uint32_t*>(page) = 1; };
    if (kAddressSanitizer) {
        EXPECT_DEATH(fault(), "SEGV");  // the sanitizer's handler was there first and reports it
    } else {
        EXPECT_EXIT(fault(), testing::KilledBySignal(SIGSEGV), "");
    }
    munmap(page, kPage);
}

}  // namespace
}  // namespace ethosu
