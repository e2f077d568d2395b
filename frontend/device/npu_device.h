#pragma once
// The NPU as a device: the register interface of one Ethos-U configuration, driven by register
// accesses, each an event that takes effect in the order it is made; over memory mapped in by
// the host; in time the host gives it. Registers come from the generation's description
// (offsets, reset values, access types, field bits).
//
// Time is NPU cycles since power-on (now()). CMD.transition_to_running_state starts the command
// stream at QBASE: it runs on the functional engine and the timing model, and the NPU is then
// busy for the stream's cycles: STATUS, QREAD and PMCCNTR show it running until they have
// passed; then STATUS, QREAD and the PMU show it done and the interrupt is raised. Who moves time:
//  - Clock::Host (a system simulator): advance(); cycles_to_next_event() says when the NPU will
//    next change. A register read never moves time.
//  - Clock::Program (a host program driving the NPU, such as Arm's core driver on the glue): the
//    program's waits do. run_until_idle() (the driver waiting for its interrupt), a STATUS read
//    while running that follows another (a polling driver), or, with run_concurrently(true), the
//    device's own thread, which completes a started stream as soon as it is started.
//
// The interrupt is a level (irq_level()): high while STATUS.irq_raised or pmu_irq_raised is set.
// set_irq_line() is told of each change; set_irq_handler() is called at each raise (the end of a
// stream, a fault, a PMU overflow) even when the level was high already, as a driver's handler
// expects. Both are called without the device's lock held, so they may access the registers.
//
// The memory-mapped block (register_block()) is the register window of a driver that accesses
// the NPU as volatile memory: every load and store to it traps into read() and write() (MmioTrap),
// so it is exact as the calls are, same-value writes included.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emulator/engine/timing/system_selection.h"
#include "emulator/isa/npu_config.h"
#include "frontend/device/bus_callbacks.h"

namespace ethosu {

struct TimingResult;

class NpuDevice {
public:
    enum class Clock : uint8_t { Program, Host };

    struct Options {
        NpuConfig npu;
        SystemSelection system;  // for the timing model (cycles, PMU)
        bool secure = true;      // PROT after reset: the security and privilege the driver asks for
        bool privileged = true;
        Clock clock = Clock::Program;
        // A system simulator's bus: the NPU's memory outside the host buffers map() maps in is
        // served by these callbacks (BusWindow: pages fetched once per stream, the bytes it
        // changed written back when it has run). None: only mapped memory exists.
        std::optional<BusCallbacks> bus;
        // The longest command queue (QSIZE) a run takes, as the CLI's --max-stream-words default
        // (400 times MobileNetV2's): a longer one is a work limit's cmd_parse_error, not 4 GB read.
        uint64_t max_queue_bytes = uint64_t{16} << 20;
    };

    // The address handed to the NPU for a host pointer no mapping holds (unmapped_address): the
    // last page below 4 GB, which map() refuses, so that a run touching it is a bus error.
    static constexpr uint64_t kUnmappedWindow = 0xFFFFF000u;

    explicit NpuDevice(Options options);
    ~NpuDevice();

    // Maps host memory at an NPU address. Throws std::invalid_argument on overlap.
    void map(uint64_t npu_address, std::span<uint8_t> host, std::string name);
    // The NPU address of a host pointer inside a mapping; nullopt if unmapped.
    std::optional<uint64_t> npu_address(const void* host) const;
    // For a driver handing the NPU a host pointer that no mapping holds (index: the base
    // address, -1 the command stream): an address in kUnmappedWindow. The run that uses it is a
    // bus error whose message names the pointer.
    uint64_t unmapped_address(const void* host, int index);

    // Register accesses at hardware offsets, of 1, 2, 4 or 8 bytes, naturally aligned. A narrow
    // write merges its bytes into the register's value and then acts as a write of the whole
    // word (the APB byte strobes); an 8-byte access is two word accesses, the lower first. An
    // access at no register reads 0 and writes nothing; a misaligned one or of another size
    // reads 0 and writes nothing (returns false).
    bool read(uint32_t offset, unsigned size, uint64_t& value);
    bool write(uint32_t offset, unsigned size, uint64_t value);
    uint32_t read(uint32_t offset);
    void write(uint32_t offset, uint32_t value);
    // What a read would return, without its effects (no time passes, no run completes).
    uint32_t peek(uint32_t offset) const;
    // Power-on reset: every register to its reset value, a started stream abandoned, the
    // interrupt lowered, time kept.
    void power_on_reset();

    // Time (NPU cycles). advance() completes a stream whose cycles have passed.
    uint64_t now() const;
    std::optional<uint64_t> cycles_to_next_event() const;
    void advance(uint64_t cycles);
    double clock_hz() const;

    void set_irq_line(std::function<void(bool level)> line);
    void set_irq_handler(std::function<void()> handler);
    bool irq_level() const;

    // Clock::Program: completes a started stream now. Returns whether one was running.
    bool run_until_idle();

    // The memory-mapped block (see above) and its size; sync() completes a started stream as
    // run_until_idle() does (a driver's wait).
    std::span<uint32_t> register_block();
    void sync() { run_until_idle(); }
    // Clock::Program: on, a thread of the device completes each stream as soon as it starts and
    // calls the interrupt handler from there, as a hardware interrupt preempts; off: only the
    // program's waits do (the default).
    void run_concurrently(bool on);

    // The device's state (registers, time, a started stream's completion, PMU) as bytes, and
    // back. A snapshot restores only onto a device of the same NPU configuration.
    std::vector<uint8_t> save() const;
    void restore(std::span<const uint8_t> state);

    // Copies src to dst with the NPU's DMA (a one-transfer command stream), timed on the memory
    // system with both sides in the memory of the arena (Vela's memory mode: SRAM with
    // Shared_Sram, DRAM with Dedicated_Sram). Counts in the PMU and in last_timing() like a run.
    // Returns the cycles; throws ethosu::Error while a stream runs.
    uint64_t dma_copy(std::span<uint8_t> dst, std::span<const uint8_t> src);

    // A command stream (or DMA copy) the NPU ran to its end (completed_stream.h).
    struct CompletedStream;
    // Called for each stream as it reaches its end (not for a faulted one, one stopped or reset
    // before its end, nor one under way in a snapshot when it was restored), in order, with the device's lock held: it must not access the device. None
    // (the default): nothing of a stream is kept.
    void set_stream_observer(std::function<void(const CompletedStream&)> observer);

    // On: every run and DMA copy from now on is kept for write_trace; off: forgets them.
    void record_trace(bool on);
    // A Chrome/Perfetto trace of the kept runs and copies, one after the other (traces/README.md).
    void write_trace(const std::string& path);

    // What the last run did, for tools and tests, while no other thread drives the device.
    const TimingResult* last_timing() const;
    const std::string& last_error() const;
    // The same, safe while other threads drive it.
    uint64_t last_cycles() const;
    std::string last_error_text() const;
    const NpuConfig& config() const;
    size_t register_bytes() const;

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ethosu
