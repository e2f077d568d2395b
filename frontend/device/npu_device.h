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

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/description.h"
#include "emulator/isa/error.h"
#include "emulator/memory/address_space.h"
#include "frontend/device/bus_window.h"

namespace ethosu {

class MmioTrap;

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
    double clock_hz() const { return memory_.system.core_clock; }

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

    // A command stream (or DMA copy) the NPU ran to its end: what `run` reports of a stream, and
    // when the NPU started it.
    struct CompletedStream {
        uint64_t start = 0;  // NPU cycles since power-on when CMD started it
        uint64_t qbase = 0;  // QBASE and QSIZE at the start (a DMA copy: 0 and its stream's size)
        uint32_t qsize = 0;
        uint64_t hash = 0;  // FNV-1a of the command words: equal for identical streams
        DecodedStream stream;
        TimingResult timing;
        // The PMU's event types (PMEVTYPER) when it started, the counts the stream added to them and
        // to the cycle counter, and whether PMCR.cnt_en let them count.
        std::vector<uint32_t> pmu_events;
        PmuReading pmu;
        bool pmu_counting = false;
    };
    // Called for each stream as it reaches its end (not for a faulted one, one stopped or reset
    // before its end, nor one under way in a snapshot when it was restored), in order, with the device's lock held: it must not access the device. None
    // (the default): nothing of a stream is kept.
    void set_stream_observer(std::function<void(const CompletedStream&)> observer);

    // On: every run and DMA copy from now on is kept for write_trace; off: forgets them.
    void record_trace(bool on);
    // A Chrome/Perfetto trace of the kept runs and copies, one after the other (traces/README.md).
    void write_trace(const std::string& path);

    // What the last run did, for tools and tests, while no other thread drives the device.
    const TimingResult* last_timing() const { return last_timing_.get(); }
    const std::string& last_error() const { return last_error_; }
    // The same, safe while other threads drive it.
    uint64_t last_cycles() const;
    std::string last_error_text() const;
    const NpuConfig& config() const { return options_.npu; }
    size_t register_bytes() const { return regs_.size() * 4; }

private:
    struct Reg;  // offsets and field bits of the registers with behaviour, from the description
    // The command processor moves past the op at `offset` `moved_past` cycles into a run.
    struct Progress {
        uint64_t moved_past = 0;
        uint32_t offset = 0;
    };
    // A started stream: what it does when its cycles have passed.
    struct Run {
        uint64_t start = 0, done_at = 0;
        uint32_t status_bits = 0, channel = 0, qread = 0, history = 0;  // at the end
        bool faulted = false;
        // Where the command processor is: QREAD shows the first op it has not moved past.
        std::vector<Progress> progress;
        // PMU counts of the run, added when it ends: each event counter, the cycle counter.
        std::vector<uint64_t> event_counts;
        uint64_t cycle_count = 0;
        // Made only when someone keeps streams (an observer, record_trace).
        std::unique_ptr<CompletedStream> completed;
    };
    // Callbacks owed once the lock is released.
    struct Owed {
        int raises = 0;
        bool level_before = false;
    };
    class Access;  // the lock, and the callbacks owed when it is released

    // Every register to its reset value; keep_pmu (a soft reset) leaves the PMU's as they are.
    void reset_registers(bool keep_pmu);
    uint32_t& at(uint32_t offset) { return regs_[offset / 4]; }
    uint32_t at(uint32_t offset) const { return regs_[offset / 4]; }
    uint64_t read64(uint32_t offset) const;
    uint32_t read_word(uint32_t offset, Owed& owed);
    void write_word(uint32_t offset, uint32_t value, Owed& owed);
    uint32_t value_at(uint32_t offset) const;
    void start(Owed& owed);
    Run execute();
    Run run_on(const MemoryMap& memory, const std::string& source);
    Run fault_run(uint32_t bits, uint32_t channel, uint32_t qread, std::string message);
    void complete(Owed& owed);
    void advance_locked(uint64_t cycles, Owed& owed);
    bool end_stream_now(Owed& owed);
    bool running() const { return run_.has_value(); }
    uint64_t copy_with_dma(std::span<uint8_t> dst, std::span<const uint8_t> src, Owed& owed);
    // The STATUS fault bits and faulting channel of a run's error, by its kind: an access outside
    // mapped memory is a bus error on the channel that made it, a branch that leads nowhere the
    // U85's branch fault, anything else a command parse error.
    std::pair<uint32_t, uint32_t> fault_status(const Error& error) const;
    void raise_irq(Owed& owed);
    std::vector<uint32_t> pmu_event_types() const;
    std::pair<std::vector<uint64_t>, uint64_t> pmu_counts(const TimingResult& timing) const;
    void add_pmu_counts(const std::vector<uint64_t>& events, uint64_t cycles);
    bool keeps_streams() const { return tracing_ || observer_; }
    std::unique_ptr<CompletedStream> completed_stream(uint64_t qbase, std::span<const uint32_t> words,
                                                      DecodedStream stream, std::vector<uint64_t> counts,
                                                      uint64_t cycles) const;
    void finished(CompletedStream&& done);
    bool level_locked() const;

    Options options_;
    const isa::GenerationDesc& gen_;
    std::unique_ptr<Reg> reg_;
    MemorySystem memory_;
    MemoryMap map_;
    std::vector<uint32_t> regs_;     // the register file, one word per 4 bytes of the window
    std::vector<uint8_t> writable_;  // per word: the driver may write it
    std::vector<uint8_t> pmu_;       // per word: a PMU register, which a soft reset leaves alone
    uint64_t now_ = 0;
    std::optional<Run> run_;
    bool run_requested_ = false;     // Clock::Program: started, not yet run
    bool running_reported_ = false;  // Clock::Program: a STATUS read has shown it running
    std::function<void(bool)> irq_line_;
    std::function<void()> irq_handler_;
    std::unique_ptr<TimingResult> last_timing_;
    // Decoded weights kept from run to run, so that a network run again decodes them once; each
    // run checks them against the bytes in memory.
    WeightCache weights_;
    std::string last_error_;
    std::function<void(const CompletedStream&)> observer_;
    bool tracing_ = false;
    std::vector<DecodedStream> traced_streams_;
    std::vector<TimingResult> traced_timing_;
    // Host pointers handed out through unmapped_address, by their offset in kUnmappedWindow.
    std::vector<std::string> unmapped_;
    std::unique_ptr<MmioTrap> trap_;  // the memory-mapped block, made when first asked for
    std::unique_ptr<BusWindow> bus_;  // Options::bus
    // One lock over all of the above; never held while a callback runs.
    mutable std::mutex mutex_;
    std::condition_variable started_;  // run_concurrently: a stream was started, or stop
    int delivering_ = 0;               // accesses calling the interrupt's callbacks now
    std::condition_variable delivered_;
    std::thread completer_;
    bool stop_completing_ = false;
};

}  // namespace ethosu
