// The bus window's own cost (frontend/device/bus_window.h) on a bus that is plain memory, as a
// system simulator's RAM is at best: 4 MB of pages fetched on first touch, then written back and
// dropped by flush, or dropped by discard. Each benchmark times one phase only (manual time).

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "frontend/device/bus_window.h"

namespace ethosu {
namespace {

constexpr uint64_t kTouchedBytes = uint64_t{4} << 20;
constexpr uint64_t kGuestAddress = 0x4000'0000;

// The guest's RAM at kGuestAddress.
class MemoryBus {
public:
    BusCallbacks callbacks() { return {&MemoryBus::read, &MemoryBus::write, this}; }

private:
    static int read(void* user, uint64_t address, void* data, size_t size) {
        std::memcpy(data, &static_cast<MemoryBus*>(user)->ram_[address - kGuestAddress], size);
        return 0;
    }
    static int write(void* user, uint64_t address, const void* data, size_t size) {
        std::memcpy(&static_cast<MemoryBus*>(user)->ram_[address - kGuestAddress], data, size);
        return 0;
    }

    std::vector<uint8_t> ram_ = std::vector<uint8_t>(kTouchedBytes, 0x5A);
};

// How a run touches the 4 MB: one load or one store per page, or a store to every byte. Each run
// stores another value, so that every store changes the guest's bytes and flush writes them back.
enum Touch : int64_t { kReadPerPage, kWritePerPage, kWriteAll };

void touch(BusWindow& window, Touch how, uint8_t value) {
    volatile uint8_t* bytes = window.base() + kGuestAddress;
    if (how == kWriteAll) {
        std::memset(window.base() + kGuestAddress, value, kTouchedBytes);
        return;
    }
    for (uint64_t at = 0; at < kTouchedBytes; at += window.page_bytes()) {
        if (how == kReadPerPage) {
            const uint8_t byte = bytes[at];  // DoNotOptimize on the window itself would store too
            benchmark::DoNotOptimize(byte);
        } else {
            bytes[at] = value;
        }
    }
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void set_rate(benchmark::State& state) {
    state.counters["MB/s"] = benchmark::Counter(static_cast<double>(state.iterations() * kTouchedBytes) / 1e6,
                                                benchmark::Counter::kIsRate);
}

// args: address bits, Touch. Times the touches (the faults and fetches); the pages are then discarded.
void BM_BusWindowFetch(benchmark::State& state) {
    MemoryBus bus;
    BusWindow window(static_cast<unsigned>(state.range(0)), bus.callbacks());
    uint8_t value = 0;
    for (auto _ : state) {
        const auto start = Clock::now();
        touch(window, static_cast<Touch>(state.range(1)), ++value);
        state.SetIterationTime(seconds_since(start));
        window.discard();
    }
    set_rate(state);
}

// args: address bits, Touch. Times flush after the touches: the diff, mem_write, the drop.
void BM_BusWindowFlush(benchmark::State& state) {
    MemoryBus bus;
    BusWindow window(static_cast<unsigned>(state.range(0)), bus.callbacks());
    uint8_t value = 0;
    for (auto _ : state) {
        touch(window, static_cast<Touch>(state.range(1)), ++value);
        const auto start = Clock::now();
        window.flush();
        state.SetIterationTime(seconds_since(start));
    }
    set_rate(state);
    state.counters["writes"] = static_cast<double>(window.counters().writes) / static_cast<double>(state.iterations());
}

// The floor a bus of plain memory sets: copying the 4 MB once.
void BM_Memcpy4MB(benchmark::State& state) {
    std::vector<uint8_t> from(kTouchedBytes, 0x5A), to(kTouchedBytes);
    for (auto _ : state) {
        std::memcpy(to.data(), from.data(), kTouchedBytes);
        benchmark::DoNotOptimize(to.data());
    }
    set_rate(state);
}

BENCHMARK(BM_BusWindowFetch)
    ->ArgsProduct({{32, 40}, {kReadPerPage, kWritePerPage, kWriteAll}})
    ->ArgNames({"bits", "touch"})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BusWindowFlush)
    ->ArgsProduct({{32, 40}, {kReadPerPage, kWritePerPage, kWriteAll}})
    ->ArgNames({"bits", "touch"})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Memcpy4MB)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ethosu
