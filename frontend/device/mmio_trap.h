#pragma once
// Every load and store a host program makes to a device's register window, as an exact event, the
// way a hypervisor traps MMIO: the window is address space reserved with no access; the SIGSEGV an
// access raises is caught, the faulting instruction decoded and emulated against the device's
// callbacks (a load's result lands in its destination register, flags where the instruction sets
// them), and the program resumes after the instruction. So a driver that writes `reg->X.word = v`
// is seen at every write, in order, with its size, even when v is the value the register holds.
//
// Contract:
// - Callbacks run on the accessing thread, inside the SIGSEGV handler, synchronously with the
//   access: they may do what the accessing code could do at that point (allocate, lock a mutex
//   the accessor does not hold, call into the device) and may access another trap's window (a
//   nested fault, handled the same way). They must not throw: the handler is noexcept, so an
//   exception ends in std::terminate. A fault of their own (a bug) goes to the previous handler.
// - An access outside every window goes to the SIGSEGV action that was installed before the
//   first trap (a handler is called; the default action kills the process as the fault would
//   have). A handler installed later must chain to ours for the traps to work. The handler is the
//   one BusWindow uses too (fault_windows.h).
// - An instruction the decoder does not know (SIMD, string, XCHG and LOCK forms, x86's absolute
//   moffs MOV, AArch64's exclusives and atomics), or an access past the window's end, prints the
//   instruction's address and bytes on stderr and aborts: never a silent guess. On x86-64 the
//   offset is the fault's address, so an access that starts below the window and ends inside it
//   would be taken to start at the window (AArch64 computes the start from the registers).
// - A trap must not be destroyed while another thread may access its window.
// - At most kMaxTraps windows live at once, traps and bus windows together (fault_windows.h).
//
// Hosts: Linux on x86-64 and on AArch64. macOS would need its own signal context layout
// (uc_mcontext->__ss, and on Apple silicon the program counter through the arm_thread_state64
// accessors), a handler for SIGBUS as well as SIGSEGV (a protected page faults with SIGBUS there),
// and care with debuggers, which take EXC_BAD_ACCESS first; the decoders would serve as they are.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "frontend/device/fault_windows.h"

namespace ethosu {

class MmioTrap final : public FaultWindow {
public:
    // Both noexcept by contract (see above). size is 1, 2, 4 or 8; a read's result is truncated to
    // size bytes, then extended as the instruction says.
    using ReadCallback = std::function<uint64_t(uint64_t offset, unsigned size)>;
    using WriteCallback = std::function<void(uint64_t offset, unsigned size, uint64_t value)>;

    static constexpr int kMaxTraps = kMaxFaultWindows;

    // Reserves window_bytes (rounded up to whole pages); throws std::system_error when the
    // reservation or the handler's installation fails, std::length_error when kMaxTraps live.
    MmioTrap(size_t window_bytes, ReadCallback read, WriteCallback write);
    ~MmioTrap();
    MmioTrap(const MmioTrap&) = delete;
    MmioTrap& operator=(const MmioTrap&) = delete;

    volatile void* base() const { return base_; }
    size_t size() const { return size_; }

    bool contains(uintptr_t address) const override;
    // The emulation of one access at address (inside the window) by the instruction at context's
    // program counter; called by the signal handler.
    void on_fault(uintptr_t address, void* signal_context) noexcept override;

private:
    void* base_ = nullptr;
    size_t size_ = 0;
    ReadCallback read_;
    WriteCallback write_;
    int slot_ = -1;
};

// The decoders are pure functions of the instruction's bytes, built on every host so that both
// are unit-tested anywhere; only the signal glue is per host.

enum class DecodeStatus : uint8_t {
    Ok,
    Truncated,    // the bytes end inside the instruction
    Unsupported,  // not an instruction the trap emulates
};

// An x86-64 instruction with one memory operand, among those compilers emit for volatile
// accesses: MOV (88, 89, 8A, 8B, C6 /0, C7 /0), MOVZX/MOVSX (0F B6, B7, BE, BF), MOVSXD (63), and
// the forms that fold an access into arithmetic, as Clang does for `reg->X.word |= 1` or
// `reg->X.word == 0`: ADD, OR, ADC, SBB, AND, SUB, XOR, CMP (00-3B, 80, 81, 83) and TEST (84, 85,
// F6 /0, F7 /0). Prefixes: 66 (16-bit operand), 67 (32-bit address), REX.
struct X86Access {
    enum class Operation : uint8_t {
        Load,        // register <- memory, extended to register_width
        Store,       // memory <- register or immediate
        Arithmetic,  // one ALU operation with flags; see memory_is_destination, writes_result
    };
    // In the ALU group's opcode order (opcode bits 5:3, ModRM.reg of 80/81/83); CMP is Sub and
    // TEST is And without writes_result.
    enum class Alu : uint8_t { Add, Or, Adc, Sbb, And, Sub, Xor };

    unsigned length = 0;  // bytes of the whole instruction, prefixes to immediate
    Operation operation = Operation::Load;
    unsigned size = 0;               // bytes read or written in memory: 1, 2, 4 or 8
    unsigned register_number = 0;    // ModRM.reg with REX.R: 0 RAX, 1 RCX, ... 15 R15
    bool high_byte_register = false;  // AH, CH, DH, BH: register_number 0-3, bits 15:8
    unsigned register_width = 0;     // bytes of the register operand
    bool sign_extend = false;        // a load into a wider register: MOVSX, MOVSXD
    std::optional<uint64_t> immediate;  // the source instead of the register, sign-extended
    Alu alu = Alu::Add;
    bool memory_is_destination = true;  // ALU: memory op= source; else register op= memory
    bool writes_result = true;          // false for CMP and TEST (flags only)
};

struct X86Decoded {
    DecodeStatus status = DecodeStatus::Unsupported;
    X86Access access;
};

// The instruction at bytes[0..n); n beyond 15 (the architecture's longest) is not read.
X86Decoded decode_x86_access(const uint8_t* bytes, size_t n);

// An AArch64 load or store of general registers: LDR/STR (B, H, W, X; LDRSB, LDRSH, LDRSW) with
// an unsigned scaled, unscaled (LDUR/STUR, LDTR/STTR), pre- or post-indexed immediate, or a
// register offset (LSL, UXTW, SXTW, SXTX); LDP/STP (W, X, LDPSW; LDNP/STNP) with offset, pre- or
// post-index. Not exclusives, acquire/release, atomics, SIMD&FP registers.
struct Arm64Access {
    enum class Indexing : uint8_t { Offset, PreIndex, PostIndex };

    bool load = true;
    unsigned size = 0;            // bytes per register: 1, 2, 4 or 8
    unsigned register_count = 1;  // 2 for a pair
    unsigned rt = 0, rt2 = 0;     // 31 is the zero register
    unsigned register_width = 0;  // 4 (W) or 8 (X)
    bool sign_extend = false;
    unsigned base = 0;  // Rn; 31 is SP
    Indexing indexing = Indexing::Offset;
    int64_t immediate = 0;  // the byte offset, scaled; the base's update with pre- and post-index
    std::optional<unsigned> index_register;  // Rm of the register-offset form (31 is the zero register)
    unsigned index_extend = 0;               // its option: 2 UXTW, 3 LSL, 6 SXTW, 7 SXTX
    unsigned index_shift = 0;
};

struct Arm64Decoded {
    DecodeStatus status = DecodeStatus::Unsupported;
    Arm64Access access;
};

Arm64Decoded decode_arm64_access(uint32_t instruction);

// The address the access starts at, given Rn's (or SP's) value and Rm's.
uint64_t arm64_address(const Arm64Access& access, uint64_t base_value, uint64_t index_value);

}  // namespace ethosu
