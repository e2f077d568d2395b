#include "frontend/device/mmio_trap.h"

#include "frontend/device/fault_windows.h"

#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace ethosu {
namespace {

uint64_t truncate_to(uint64_t value, unsigned bytes) {
    return bytes >= 8 ? value : value & ((uint64_t{1} << (8 * bytes)) - 1);
}

uint64_t sign_extend_from(uint64_t value, unsigned bytes) {
    const unsigned shift = 64 - 8 * bytes;
    return static_cast<uint64_t>(static_cast<int64_t>(value << shift) >> shift);
}

// ---- x86-64 decoding ---------------------------------------------------------------------------

constexpr size_t kMaxX86InstructionLength = 15;

// An instruction's bytes read in order; reading past the end marks an overrun (and reads 0, which
// no prefix loop mistakes for a prefix).
class InstructionBytes {
public:
    InstructionBytes(const uint8_t* bytes, size_t n) : bytes_(bytes), n_(std::min(n, kMaxX86InstructionLength)) {}

    uint8_t next() {
        if (position_ == n_) {
            overrun_ = true;
            return 0;
        }
        return bytes_[position_++];
    }
    // A little-endian displacement or immediate, sign-extended.
    uint64_t next_signed(unsigned count) {
        uint64_t value = 0;
        for (unsigned i = 0; i < count; ++i) value |= uint64_t{next()} << (8 * i);
        return sign_extend_from(value, count);
    }
    void skip(unsigned count) {
        for (unsigned i = 0; i < count; ++i) next();
    }

    size_t position() const { return position_; }
    bool overrun() const { return overrun_; }
    // An overrun at 15 bytes is no instruction at all; before that, more bytes may complete it.
    DecodeStatus overrun_status() const {
        return n_ == kMaxX86InstructionLength ? DecodeStatus::Unsupported : DecodeStatus::Truncated;
    }

private:
    const uint8_t* bytes_;
    size_t n_;
    size_t position_ = 0;
    bool overrun_ = false;
};

struct Prefixes {
    bool operand_16 = false;
    bool rex_present = false;
    bool rex_w = false;
    bool rex_r = false;

    unsigned operand_size() const { return rex_w ? 8 : operand_16 ? 2 : 4; }
};

// Reads the prefixes and returns the opcode byte after them. A REX counts only right before the
// opcode: a legacy prefix after it cancels it, as the processor does.
uint8_t read_prefixes(InstructionBytes& bytes, Prefixes& prefixes) {
    for (;;) {
        const uint8_t byte = bytes.next();
        if ((byte & 0xF0) == 0x40) {
            prefixes.rex_present = true;
            prefixes.rex_w = byte & 8;
            prefixes.rex_r = byte & 4;
            continue;
        }
        if (byte != 0x66 && byte != 0x67) return byte;  // 67 changes the address's width only
        prefixes.operand_16 |= byte == 0x66;
        prefixes.rex_present = prefixes.rex_w = prefixes.rex_r = false;
    }
}

// What ModRM.reg holds for an opcode.
enum class RegField : uint8_t { Register, MustBeZero, AluOperation };

// What an opcode decides before its ModRM: the access's fields, the immediate's width, ModRM.reg.
struct OpcodeForm {
    X86Access access;
    unsigned immediate_bytes = 0;
    RegField reg_field = RegField::Register;
};

OpcodeForm load(unsigned size, unsigned register_width, bool sign_extend = false) {
    OpcodeForm form;
    form.access.operation = X86Access::Operation::Load;
    form.access.size = size;
    form.access.register_width = register_width;
    form.access.sign_extend = sign_extend;
    return form;
}

OpcodeForm store(unsigned size, unsigned immediate_bytes = 0) {
    OpcodeForm form;
    form.access.operation = X86Access::Operation::Store;
    form.access.size = form.access.register_width = size;
    form.immediate_bytes = immediate_bytes;
    form.reg_field = immediate_bytes ? RegField::MustBeZero : RegField::Register;
    return form;
}

OpcodeForm arithmetic(unsigned size, unsigned immediate_bytes, RegField reg_field) {
    OpcodeForm form;
    form.access.operation = X86Access::Operation::Arithmetic;
    form.access.size = form.access.register_width = size;
    form.immediate_bytes = immediate_bytes;
    form.reg_field = reg_field;
    return form;
}

// TEST: an AND that sets the flags only.
OpcodeForm test(unsigned size, unsigned immediate_bytes) {
    OpcodeForm form = arithmetic(size, immediate_bytes, immediate_bytes ? RegField::MustBeZero : RegField::Register);
    form.access.alu = X86Access::Alu::And;
    form.access.writes_result = false;
    return form;
}

// 00-3B in the ALU group's r/m forms: bit 0 a full operand (else a byte), bit 1 the register is
// the destination; bits 5:3 the operation, 7 being CMP.
std::optional<OpcodeForm> alu_register_form(uint8_t opcode, unsigned operand_size) {
    if (opcode >= 0x40 || (opcode & 7) > 3) return std::nullopt;
    OpcodeForm form = arithmetic(opcode & 1 ? operand_size : 1, 0, RegField::Register);
    const unsigned operation = opcode >> 3;
    form.access.alu = operation == 7 ? X86Access::Alu::Sub : static_cast<X86Access::Alu>(operation);
    form.access.writes_result = operation != 7;
    form.access.memory_is_destination = !(opcode & 2);
    return form;
}

std::optional<OpcodeForm> two_byte_form(uint8_t opcode, unsigned operand_size) {
    switch (opcode) {
    case 0xB6: return load(1, operand_size);  // MOVZX
    case 0xB7: return load(2, operand_size);
    case 0xBE: return load(1, operand_size, true);  // MOVSX
    case 0xBF: return load(2, operand_size, true);
    default: return std::nullopt;
    }
}

std::optional<OpcodeForm> opcode_form(uint8_t opcode, InstructionBytes& bytes, const Prefixes& prefixes) {
    const unsigned size = prefixes.operand_size();
    const unsigned immediate = std::min(size, 4u);  // a 64-bit operation takes a sign-extended imm32
    switch (opcode) {
    case 0x88: return store(1);
    case 0x89: return store(size);
    case 0x8A: return load(1, 1);
    case 0x8B: return load(size, size);
    case 0x63: return load(std::min(size, 4u), size, true);  // MOVSXD
    case 0xC6: return store(1, 1);
    case 0xC7: return store(size, immediate);
    case 0x80: return arithmetic(1, 1, RegField::AluOperation);
    case 0x81: return arithmetic(size, immediate, RegField::AluOperation);
    case 0x83: return arithmetic(size, 1, RegField::AluOperation);
    case 0x84: return test(1, 0);
    case 0x85: return test(size, 0);
    case 0xF6: return test(1, 1);
    case 0xF7: return test(size, immediate);
    case 0x0F: return two_byte_form(bytes.next(), size);
    default: return alu_register_form(opcode, size);
    }
}

// Reads ModRM and the addressing bytes after it (SIB, displacement); returns ModRM.reg, or nothing
// when the operand is a register. The address itself comes from the fault, so only the length
// matters here. rm and SIB.base are compared without REX.B: R12 takes a SIB and R13 a
// displacement like RSP and RBP.
std::optional<unsigned> read_memory_operand(InstructionBytes& bytes) {
    const uint8_t modrm = bytes.next();
    const unsigned mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3) return std::nullopt;
    unsigned displacement = mod == 1 ? 1 : mod == 2 ? 4 : 0;
    if (rm == 4) {
        const unsigned sib_base = bytes.next() & 7;
        if (mod == 0 && sib_base == 5) displacement = 4;  // no base: disp32
    } else if (mod == 0 && rm == 5) {
        displacement = 4;  // RIP-relative
    }
    bytes.skip(displacement);
    return (modrm >> 3) & 7;
}

// ModRM.reg as the opcode reads it; false when the instruction is not one the trap emulates.
bool apply_reg_field(unsigned reg, RegField field, const Prefixes& prefixes, X86Access& access) {
    switch (field) {
    case RegField::Register:
        access.register_number = reg | (prefixes.rex_r ? 8 : 0);
        // Without REX, byte registers 4-7 are AH, CH, DH, BH; with it, SPL, BPL, SIL, DIL.
        access.high_byte_register = access.register_width == 1 && !prefixes.rex_present && reg >= 4;
        if (access.high_byte_register) access.register_number -= 4;
        return true;
    case RegField::MustBeZero: return reg == 0;
    case RegField::AluOperation:
        access.alu = reg == 7 ? X86Access::Alu::Sub : static_cast<X86Access::Alu>(reg);
        access.writes_result = reg != 7;  // CMP
        return true;
    }
    return false;
}

X86Decoded decode_from(InstructionBytes& bytes) {
    Prefixes prefixes;
    const uint8_t opcode = read_prefixes(bytes, prefixes);
    const std::optional<OpcodeForm> form = opcode_form(opcode, bytes, prefixes);
    if (!form) return {};
    X86Access access = form->access;
    const std::optional<unsigned> reg = read_memory_operand(bytes);
    if (!reg || !apply_reg_field(*reg, form->reg_field, prefixes, access)) return {};
    if (form->immediate_bytes) access.immediate = bytes.next_signed(form->immediate_bytes);
    access.length = static_cast<unsigned>(bytes.position());
    return {DecodeStatus::Ok, access};
}

}  // namespace

X86Decoded decode_x86_access(const uint8_t* data, size_t n) {
    InstructionBytes bytes(data, n);
    const X86Decoded decoded = decode_from(bytes);
    // Bytes past the end read as 0 and may have decoded into anything.
    if (bytes.overrun()) return {bytes.overrun_status(), {}};
    return decoded;
}

namespace {

// ---- AArch64 decoding --------------------------------------------------------------------------

uint32_t bits(uint32_t word, unsigned high, unsigned low) { return (word >> low) & ((1u << (high - low + 1)) - 1); }

int64_t signed_bits(uint32_t word, unsigned high, unsigned low) {
    const unsigned width = high - low + 1;
    return static_cast<int64_t>(uint64_t{bits(word, high, low)} << (64 - width)) >> (64 - width);
}

// The two bits both classes encode their indexing in: 01 post-index, 11 pre-index, else none.
Arm64Access::Indexing indexing(uint32_t field) {
    if (field == 1) return Arm64Access::Indexing::PostIndex;
    return field == 3 ? Arm64Access::Indexing::PreIndex : Arm64Access::Indexing::Offset;
}

// Load/store register: size 31:30, opc 23:22 (00 store, 01 load, 10 load signed to X, 11 load
// signed to W); the addressing form in 25:24, 21 and 11:10.
Arm64Decoded decode_single(uint32_t word) {
    Arm64Access access;
    const unsigned size_log2 = bits(word, 31, 30), opc = bits(word, 23, 22);
    access.size = 1u << size_log2;
    access.rt = bits(word, 4, 0);
    access.base = bits(word, 9, 5);
    access.load = opc != 0;
    access.sign_extend = opc >= 2;
    if (opc == 2 && access.size == 8) return {};  // PRFM
    if (opc == 3 && access.size >= 4) return {};
    access.register_width = opc == 3 ? 4 : opc == 2 || access.size == 8 ? 8 : 4;

    if (bits(word, 25, 24) == 1) {
        access.immediate = int64_t{bits(word, 21, 10)} << size_log2;
    } else if (bits(word, 21, 21) == 0) {
        access.immediate = signed_bits(word, 20, 12);
        access.indexing = indexing(bits(word, 11, 10));  // 00 LDUR, 10 LDTR
    } else {
        const unsigned option = bits(word, 15, 13);
        if (bits(word, 11, 10) != 2 || (option & 2) == 0) return {};  // atomics, or no such extend
        access.index_register = bits(word, 20, 16);
        access.index_extend = option;
        access.index_shift = bits(word, 12, 12) ? size_log2 : 0;
    }
    return {DecodeStatus::Ok, access};
}

// Load/store pair: opc 31:30 (00 W, 01 LDPSW, 10 X), the indexing in 24:23 (00 non-temporal),
// L 22, imm7 21:15 scaled, Rt2 14:10.
Arm64Decoded decode_pair(uint32_t word) {
    Arm64Access access;
    const unsigned opc = bits(word, 31, 30);
    access.load = bits(word, 22, 22);
    if (opc == 3 || (opc == 1 && !access.load)) return {};  // STGP
    access.size = access.register_width = opc == 2 ? 8 : 4;
    if (opc == 1) {
        access.sign_extend = true;
        access.register_width = 8;
    }
    access.register_count = 2;
    access.rt = bits(word, 4, 0);
    access.rt2 = bits(word, 14, 10);
    access.base = bits(word, 9, 5);
    access.immediate = signed_bits(word, 21, 15) * access.size;
    access.indexing = indexing(bits(word, 24, 23));  // 00 LDNP/STNP
    return {DecodeStatus::Ok, access};
}

uint64_t extend_index(uint64_t value, unsigned option) {
    switch (option) {
    case 2: return static_cast<uint32_t>(value);                                    // UXTW
    case 6: return static_cast<uint64_t>(int64_t{static_cast<int32_t>(value)});  // SXTW
    default: return value;                                                          // LSL, SXTX
    }
}

}  // namespace

Arm64Decoded decode_arm64_access(uint32_t word) {
    if (bits(word, 26, 26) || bits(word, 25, 25)) return {};  // SIMD&FP registers; not a load or store
    if (bits(word, 29, 27) == 0b111) return decode_single(word);
    if (bits(word, 29, 27) == 0b101) return decode_pair(word);
    return {};
}

uint64_t arm64_address(const Arm64Access& access, uint64_t base_value, uint64_t index_value) {
    if (access.index_register) {
        return base_value + (extend_index(index_value, access.index_extend) << access.index_shift);
    }
    return access.indexing == Arm64Access::Indexing::PostIndex ? base_value : base_value + access.immediate;
}

namespace {

// ---- what the trap refuses ----------------------------------------------------------------------

[[noreturn]] void abort_unemulated(const char* reason, uintptr_t pc, const uint8_t* bytes, size_t n,
                                   uintptr_t address, uintptr_t window) {
    SignalSafeMessage()
        .text("ethosu::MmioTrap: ")
        .text(reason)
        .text(": the instruction at ")
        .hex(pc)
        .text(" (bytes")
        .bytes(bytes, n)
        .text(") accessing ")
        .hex(address)
        .text(", offset ")
        .hex(address - window)
        .text(" of the trap window at ")
        .hex(window)
        .text("\n")
        .write_to_stderr();
    std::abort();
}

// ---- the host's registers ----------------------------------------------------------------------

#if defined(__x86_64__)

// glibc's gregs index of each register by its encoding number.
constexpr int kGregOfRegister[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                     REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

// RFLAGS' arithmetic flags: CF, PF, AF, ZF, SF (where LAHF puts them in AH) and OF.
constexpr uint64_t kCarryFlag = 0x1, kLahfFlags = 0xD5, kOverflowFlag = 0x800;
constexpr uint64_t kArithmeticFlags = kLahfFlags | kOverflowFlag;

uint64_t register_value(const gregset_t& gregs, const X86Access& access) {
    const auto value = static_cast<uint64_t>(gregs[kGregOfRegister[access.register_number]]);
    return access.high_byte_register ? value >> 8 : value;
}

// As the processor writes a register: a 32-bit result clears bits 63:32, an 8- or 16-bit one
// leaves the rest of the register as it was.
void set_register(gregset_t& gregs, const X86Access& access, uint64_t value) {
    greg_t& reg = gregs[kGregOfRegister[access.register_number]];
    const auto old = static_cast<uint64_t>(reg);
    uint64_t updated = truncate_to(value, access.register_width);
    if (access.high_byte_register) {
        updated = (old & ~uint64_t{0xFF00}) | (value & 0xFF) << 8;
    } else if (access.register_width < 4) {
        updated |= old & ~truncate_to(~uint64_t{0}, access.register_width);
    }
    reg = static_cast<greg_t>(updated);
}

struct AluOutcome {
    uint64_t result;
    uint64_t flags;  // kArithmeticFlags' bits
};

// The operation run on the host's own ALU at the operand's width, so the flags are exactly the
// instruction's (ADC and SBB take the interrupted code's carry).
template <typename T>
AluOutcome run_alu_as(X86Access::Alu alu, uint64_t destination, uint64_t source, bool carry) {
    T result = static_cast<T>(destination);
    const T operand = static_cast<T>(source);
    const uint32_t carry_in = carry;
    uint16_t ax = 0;  // LAHF's flags in AH, SETO's in AL
    switch (alu) {
#define ETHOSU_MMIO_ALU(NAME, MNEMONIC)                                                          \
    case X86Access::Alu::NAME:                                                                   \
        asm("btl $0, %[carry]\n\t" MNEMONIC " %[operand], %[result]\n\tlahf\n\tseto %%al" \
            : [result] "+r"(result), "=a"(ax)                                                    \
            : [operand] "r"(operand), [carry] "r"(carry_in)                                      \
            : "cc");                                                                             \
        break;
        ETHOSU_MMIO_ALU(Add, "add")
        ETHOSU_MMIO_ALU(Or, "or")
        ETHOSU_MMIO_ALU(Adc, "adc")
        ETHOSU_MMIO_ALU(Sbb, "sbb")
        ETHOSU_MMIO_ALU(And, "and")
        ETHOSU_MMIO_ALU(Sub, "sub")
        ETHOSU_MMIO_ALU(Xor, "xor")
#undef ETHOSU_MMIO_ALU
    }
    return {result, ((ax >> 8) & kLahfFlags) | ((ax & 1) ? kOverflowFlag : 0)};
}

AluOutcome run_alu(const X86Access& access, uint64_t destination, uint64_t source, bool carry) {
    switch (access.size) {
    case 1: return run_alu_as<uint8_t>(access.alu, destination, source, carry);
    case 2: return run_alu_as<uint16_t>(access.alu, destination, source, carry);
    case 4: return run_alu_as<uint32_t>(access.alu, destination, source, carry);
    default: return run_alu_as<uint64_t>(access.alu, destination, source, carry);
    }
}

// A store's or an ALU form's other operand.
uint64_t source_operand(const gregset_t& gregs, const X86Access& access) {
    return access.immediate ? *access.immediate : register_value(gregs, access);
}

// An ALU form on the value memory gave: sets the flags and a destination register; returns what
// to write when memory is the destination.
std::optional<uint64_t> run_arithmetic(gregset_t& gregs, const X86Access& access, uint64_t memory) {
    auto& flags = gregs[REG_EFL];
    const bool carry = flags & kCarryFlag;
    const AluOutcome outcome = access.memory_is_destination
                                   ? run_alu(access, memory, source_operand(gregs, access), carry)
                                   : run_alu(access, register_value(gregs, access), memory, carry);
    flags = static_cast<greg_t>((flags & ~kArithmeticFlags) | outcome.flags);
    if (!access.writes_result) return std::nullopt;
    if (access.memory_is_destination) return truncate_to(outcome.result, access.size);
    set_register(gregs, access, outcome.result);
    return std::nullopt;
}

// The instruction at pc, read no further than its page unless it continues past it: the next
// page may be unmapped.
struct FaultingInstruction {
    X86Decoded decoded;
    size_t bytes_read;
};

FaultingInstruction decode_faulting(const uint8_t* pc) {
    const size_t page_size = fault_page_size();
    const size_t to_page_end = page_size - reinterpret_cast<uintptr_t>(pc) % page_size;
    size_t n = std::min(kMaxX86InstructionLength, to_page_end);
    X86Decoded decoded = decode_x86_access(pc, n);
    if (decoded.status == DecodeStatus::Truncated) decoded = decode_x86_access(pc, n = kMaxX86InstructionLength);
    return {decoded, n};
}

#elif defined(__aarch64__)

// Rt and Rm: register 31 is the zero register.
uint64_t general_register(const mcontext_t& machine, unsigned n) { return n == 31 ? 0 : machine.regs[n]; }

// Rn: register 31 is SP.
uint64_t base_register(const mcontext_t& machine, unsigned n) { return n == 31 ? machine.sp : machine.regs[n]; }

void add_to_base_register(mcontext_t& machine, unsigned n, int64_t amount) {
    (n == 31 ? machine.sp : machine.regs[n]) += static_cast<uint64_t>(amount);
}

#endif

}  // namespace

MmioTrap::MmioTrap(size_t window_bytes, ReadCallback read, WriteCallback write)
    : read_(std::move(read)), write_(std::move(write)) {
    const size_t page_size = fault_page_size();
    size_ = (window_bytes + page_size - 1) / page_size * page_size;
    base_ = mmap(nullptr, size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base_ == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "MmioTrap: mmap of the window");
    try {
        slot_ = register_fault_window(*this);
    } catch (...) {
        munmap(base_, size_);
        throw;
    }
    if (slot_ < 0) {
        munmap(base_, size_);
        throw std::length_error("MmioTrap: more than kMaxTraps fault windows at once");
    }
}

MmioTrap::~MmioTrap() {
    unregister_fault_window(slot_);
    munmap(base_, size_);
}

bool MmioTrap::contains(uintptr_t address) const {
    return address - reinterpret_cast<uintptr_t>(base_) < size_;
}

#if defined(__x86_64__)

void MmioTrap::on_fault(uintptr_t address, void* signal_context) noexcept {
    auto& gregs = static_cast<ucontext_t*>(signal_context)->uc_mcontext.gregs;
    const auto* pc = reinterpret_cast<const uint8_t*>(gregs[REG_RIP]);
    const auto window = reinterpret_cast<uintptr_t>(base_);
    const uint64_t offset = address - window;
    const FaultingInstruction instruction = decode_faulting(pc);
    const X86Access& access = instruction.decoded.access;
    auto refuse = [&](const char* reason) {
        abort_unemulated(reason, gregs[REG_RIP], pc, instruction.bytes_read, address, window);
    };
    if (instruction.decoded.status != DecodeStatus::Ok) refuse("not an instruction the trap emulates");
    if (offset + access.size > size_) refuse("the access runs past the window's end");

    switch (access.operation) {
    case X86Access::Operation::Load: {
        const uint64_t value = truncate_to(read_(offset, access.size), access.size);
        set_register(gregs, access, access.sign_extend ? sign_extend_from(value, access.size) : value);
        break;
    }
    case X86Access::Operation::Store:
        write_(offset, access.size, truncate_to(source_operand(gregs, access), access.size));
        break;
    case X86Access::Operation::Arithmetic: {
        const uint64_t memory = truncate_to(read_(offset, access.size), access.size);
        if (const auto result = run_arithmetic(gregs, access, memory)) write_(offset, access.size, *result);
        break;
    }
    }
    gregs[REG_RIP] += access.length;
}

#elif defined(__aarch64__)

// The access's address comes from the registers, not the fault: a pair's fault may name its second
// word, and the decoded start is checked against the window.
void MmioTrap::on_fault(uintptr_t address, void* signal_context) noexcept {
    mcontext_t& machine = static_cast<ucontext_t*>(signal_context)->uc_mcontext;
    const auto* pc = reinterpret_cast<const uint8_t*>(machine.pc);
    uint32_t word;
    std::memcpy(&word, pc, sizeof word);
    const Arm64Decoded decoded = decode_arm64_access(word);
    const Arm64Access& access = decoded.access;
    const auto window = reinterpret_cast<uintptr_t>(base_);
    auto refuse = [&](const char* reason) { abort_unemulated(reason, machine.pc, pc, sizeof word, address, window); };
    if (decoded.status != DecodeStatus::Ok) refuse("not an instruction the trap emulates");
    const uint64_t index = access.index_register ? general_register(machine, *access.index_register) : 0;
    const uint64_t start = arm64_address(access, base_register(machine, access.base), index);
    if (!contains(start)) refuse("the access starts outside the window");
    if (start - window + access.size * access.register_count > size_) refuse("the access runs past the window's end");

    const unsigned registers[2] = {access.rt, access.rt2};
    for (unsigned i = 0; i < access.register_count; ++i) {
        const uint64_t offset = start - window + i * access.size;
        if (!access.load) {
            write_(offset, access.size, truncate_to(general_register(machine, registers[i]), access.size));
            continue;
        }
        const uint64_t value = truncate_to(read_(offset, access.size), access.size);
        const uint64_t extended = access.sign_extend ? sign_extend_from(value, access.size) : value;
        if (registers[i] != 31) machine.regs[registers[i]] = truncate_to(extended, access.register_width);
    }
    if (access.indexing != Arm64Access::Indexing::Offset) add_to_base_register(machine, access.base, access.immediate);
    machine.pc += sizeof word;
}

#else
#error "MmioTrap: no emulation for this host (Linux on x86-64 or AArch64)"
#endif

}  // namespace ethosu
