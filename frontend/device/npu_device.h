#pragma once
// The NPU as its drivers see it: the memory-mapped register interface of one Ethos-U
// configuration, over host memory mapped into the NPU's address space. Registers come from the
// generation's description (offsets, reset values, access types, field bits); writes have the
// hardware's effects in the order they are made (soft reset, run, IRQ clear, PMU control), and a
// run executes the command stream at QBASE on the functional engine and the timing model, then
// raises the interrupt.
//
// Two ways to drive it: read()/write() calls, or a register block in host memory with the
// hardware layout that a driver accesses as volatile memory; sync() is the point where the
// emulator observes what was written to the block (see ethosu_emu.h). With run_concurrently()
// a thread of the device's own observes the block continuously, as the hardware would, so a
// driver that polls STATUS or a flag its interrupt handler sets sees the run complete.

#include <atomic>
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

namespace ethosu {

class NpuDevice {
public:
    struct Options {
        NpuConfig npu;
        SystemSelection system;  // for the timing model (cycles, PMU)
        bool secure = true;      // PROT after reset: the security and privilege the driver asks for
        bool privileged = true;
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

    uint32_t read(uint32_t offset);
    void write(uint32_t offset, uint32_t value);

    // Called when the NPU raises its interrupt (end of a command stream, a fault, a PMU overflow).
    void set_irq_handler(std::function<void()> handler);
    bool irq_pending() const;

    // Executes the command stream started by CMD.transition_to_running_state, if any. Returns
    // whether one ran.
    bool run_until_idle();

    // Memory-mapped mode: the register block and the observation point.
    std::span<uint32_t> register_block() { return block_; }
    void sync();
    // On: a thread observes the register block (sync) continuously and runs a started stream at
    // once, calling the interrupt handler from that thread. Off (the default): only sync() does.
    void run_concurrently(bool on);

    // Copies src to dst with the NPU's DMA (a one-transfer command stream), timed on the memory
    // system with both sides in the memory of the arena (Vela's memory mode: SRAM with
    // Shared_Sram, DRAM with Dedicated_Sram). Counts in the PMU and in last_timing() like a run.
    // Returns the cycles; throws ethosu::Error while a stream runs.
    uint64_t dma_copy(std::span<uint8_t> dst, std::span<const uint8_t> src);

    // On: every run and DMA copy from now on is kept for write_trace; off: forgets them.
    void record_trace(bool on);
    // A Chrome/Perfetto trace of the kept runs and copies, one after the other (traces/README.md).
    void write_trace(const std::string& path);

    // What the last run did, for tools and tests.
    const TimingResult* last_timing() const { return last_timing_.get(); }
    const std::string& last_error() const { return last_error_; }
    const NpuConfig& config() const { return options_.npu; }

private:
    struct Reg;  // offsets and field bits of the registers with behaviour, from the description

    void reset();
    uint32_t& at(uint32_t offset) { return regs_[offset / 4]; }
    uint64_t read64(uint32_t offset) const;
    void execute();
    uint64_t copy_with_dma(std::span<uint8_t> dst, std::span<const uint8_t> src);
    void fault(uint32_t bits, uint32_t channel, uint32_t qread, std::string message);
    // The STATUS fault bits and faulting channel of a run's error, by its kind: an access outside
    // mapped memory is a bus error on the channel that made it, a branch that leads nowhere the
    // U85's branch fault, anything else a command parse error.
    std::pair<uint32_t, uint32_t> fault_status(const Error& error) const;
    void raise_irq();
    void count_pmu(const TimingResult& timing);
    uint32_t block_value(uint32_t offset);
    void publish();
    void sync_locked();
    void finished(const DecodedStream& stream);

    Options options_;
    const isa::GenerationDesc& gen_;
    std::unique_ptr<Reg> reg_;
    MemorySystem memory_;
    MemoryMap map_;
    std::vector<uint32_t> regs_;         // the register file, one word per 4 bytes of the block
    std::vector<uint32_t> block_;        // memory-mapped view the driver writes
    std::vector<uint32_t> shadow_;       // block_ as last published, to find the driver's writes
    std::vector<uint8_t> writable_;      // per word: the driver may write it
    std::vector<uint8_t> driver_value_;  // per word: holds what the driver wrote (not reset, not counted)
    bool run_requested_ = false;
    bool running_reported_ = false;  // a STATUS read has shown the started run as running
    std::function<void()> irq_handler_;
    std::unique_ptr<TimingResult> last_timing_;
    // Decoded weights kept from run to run, so that a network run again decodes them once; each
    // run checks them against the bytes in memory.
    WeightCache weights_;
    std::string last_error_;
    bool tracing_ = false;
    std::vector<DecodedStream> traced_streams_;
    std::vector<TimingResult> traced_timing_;
    // Host pointers handed out through unmapped_address, by their offset in kUnmappedWindow.
    std::vector<std::string> unmapped_;
    // One lock over all of the above: calls, sync and the concurrent observer. Recursive, as the
    // interrupt handler it calls accesses the registers again.
    mutable std::recursive_mutex mutex_;
    std::thread observer_;
    std::atomic<bool> stop_observing_{false};
};

}  // namespace ethosu
