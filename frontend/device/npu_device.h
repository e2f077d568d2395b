#pragma once
// The NPU as its drivers see it: the memory-mapped register interface of one Ethos-U
// configuration, over host memory mapped into the NPU's address space. Registers come from the
// generation's description (offsets, reset values, access types); writes have the hardware's
// effects (soft reset, run, IRQ clear, PMU control), and a run executes the command stream at
// QBASE on the functional engine and the timing model, then raises the interrupt.
//
// Two ways to drive it: read()/write() calls, or a register block in host memory with the
// hardware layout that a driver accesses as volatile memory; sync() is the point where the
// emulator observes what was written to the block (see ethosu_emu.h).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/description.h"
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

    explicit NpuDevice(Options options);
    ~NpuDevice();

    // Maps host memory at an NPU address. Throws std::invalid_argument on overlap.
    void map(uint64_t npu_address, std::span<uint8_t> host, std::string name);
    // The NPU address of a host pointer inside a mapping; nullopt if unmapped.
    std::optional<uint64_t> npu_address(const void* host) const;

    uint32_t read(uint32_t offset);
    void write(uint32_t offset, uint32_t value);

    // Called when the NPU raises its interrupt (end of a command stream, a fault, a PMU overflow).
    void set_irq_handler(std::function<void()> handler) { irq_handler_ = std::move(handler); }
    bool irq_pending() const;

    // Executes the command stream started by CMD.transition_to_running_state, if any. Returns
    // whether one ran.
    bool run_until_idle();

    // Memory-mapped mode: the register block and the observation point.
    std::span<uint32_t> register_block() { return block_; }
    void sync();

    // What the last run did, for tools and tests.
    const TimingResult* last_timing() const { return last_timing_.get(); }
    const std::string& last_error() const { return last_error_; }
    const NpuConfig& config() const { return options_.npu; }

private:
    struct Reg;  // offsets of the registers with behaviour, resolved from the description

    void reset();
    uint32_t& at(uint32_t offset) { return regs_[offset / 4]; }
    uint64_t read64(uint32_t offset) const;
    void execute();
    void raise_irq();
    void count_pmu(const TimingResult& timing);
    void publish();

    Options options_;
    const isa::GenerationDesc& gen_;
    std::unique_ptr<Reg> reg_;
    MemorySystem memory_;
    MemoryMap map_;
    std::vector<uint32_t> regs_;     // the register file, one word per 4 bytes of the block
    std::vector<uint32_t> block_;    // memory-mapped view the driver writes
    std::vector<uint32_t> shadow_;   // block_ as last published, to find the driver's writes
    std::vector<uint8_t> writable_;  // per word: the driver may write it
    bool run_requested_ = false;
    std::function<void()> irq_handler_;
    std::unique_ptr<TimingResult> last_timing_;
    // Decoded weights kept from run to run, so that a network run again decodes them once; each
    // run checks them against the bytes in memory.
    WeightCache weights_;
    std::string last_error_;
};

}  // namespace ethosu
