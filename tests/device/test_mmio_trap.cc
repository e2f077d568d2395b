// The MMIO trap: every load and store to a window reaches the device's callbacks, in order, with
// its size, and the program goes on as if the window were memory. The device here is plain memory
// that records its accesses, so an instruction on the window must give exactly what it gives on
// ordinary memory; the x86-64 decoder is also checked on hand-assembled bytes.

#include "frontend/device/mmio_trap.h"
#include "tests/address_sanitizer.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace ethosu {
namespace {

struct Access {
    bool write;
    uint64_t offset;
    unsigned size;
    uint64_t value;
    bool operator==(const Access&) const = default;
};

void PrintTo(const Access& a, std::ostream* os) {
    *os << (a.write ? "write " : "read ") << a.size << " bytes at 0x" << std::hex << a.offset << " = 0x" << a.value;
}

Access write_of(uint64_t offset, unsigned size, uint64_t value) { return {true, offset, size, value}; }
Access read_of(uint64_t offset, unsigned size, uint64_t value) { return {false, offset, size, value}; }

// A device that is memory, and records each access as the trap reports it.
class RecordingMemory {
public:
    explicit RecordingMemory(size_t bytes = 4096)
        : contents_(bytes),
          trap_(bytes, [this](uint64_t offset, unsigned size) { return read(offset, size); },
                [this](uint64_t offset, unsigned size, uint64_t value) { write(offset, size, value); }) {}

    template <typename T>
    volatile T* at(uint64_t offset) {
        return reinterpret_cast<volatile T*>(static_cast<volatile uint8_t*>(trap_.base()) + offset);
    }
    template <typename T>
    void fill(uint64_t offset, T value) {
        std::memcpy(&contents_[offset], &value, sizeof value);
    }
    template <typename T>
    T contents(uint64_t offset) const {
        T value;
        std::memcpy(&value, &contents_[offset], sizeof value);
        return value;
    }

    const MmioTrap& trap() const { return trap_; }
    std::vector<Access> log;

private:
    uint64_t read(uint64_t offset, unsigned size) {
        uint64_t value = 0;
        std::memcpy(&value, &contents_[offset], size);
        log.push_back(read_of(offset, size, value));
        return value;
    }
    void write(uint64_t offset, unsigned size, uint64_t value) {
        std::memcpy(&contents_[offset], &value, size);
        log.push_back(write_of(offset, size, value));
    }

    std::vector<uint8_t> contents_;
    MmioTrap trap_;
};

// The core driver's PMU sequence that a memory block cannot see: enabling counters that a clear
// has just disabled writes PMCNTENSET with the value it already holds.
TEST(MmioTrap, EveryWriteOfTheSameValueIsSeen) {
    RecordingMemory device;
    constexpr uint64_t kPmcntenset = 0x184, kPmcntenclr = 0x188;
    *device.at<uint32_t>(kPmcntenset) = 0x8000000F;
    *device.at<uint32_t>(kPmcntenclr) = 0x8000000F;
    *device.at<uint32_t>(kPmcntenset) = 0x8000000F;
    *device.at<uint32_t>(kPmcntenset) = 0x8000000F;
    EXPECT_EQ(device.log, (std::vector{write_of(kPmcntenset, 4, 0x8000000F), write_of(kPmcntenclr, 4, 0x8000000F),
                                       write_of(kPmcntenset, 4, 0x8000000F), write_of(kPmcntenset, 4, 0x8000000F)}));
}

TEST(MmioTrap, AccessesArriveInProgramOrder) {
    RecordingMemory device;
    device.fill<uint32_t>(0x4, 0x20);
    *device.at<uint32_t>(0x10) = 5;
    const uint32_t status = *device.at<uint32_t>(0x4);
    *device.at<uint32_t>(0x8) = status | 1;
    const uint32_t again = *device.at<uint32_t>(0x4);
    EXPECT_EQ(status, 0x20u);
    EXPECT_EQ(again, 0x20u);
    EXPECT_EQ(device.log, (std::vector{write_of(0x10, 4, 5), read_of(0x4, 4, 0x20), write_of(0x8, 4, 0x21),
                                       read_of(0x4, 4, 0x20)}));
}

TEST(MmioTrap, EachWidthAtItsOffset) {
    RecordingMemory device;
    *device.at<uint8_t>(0x21) = 0xA5;
    *device.at<uint16_t>(0x32) = 0xBEEF;
    *device.at<uint32_t>(0x44) = 0xDEADBEEF;
    *device.at<uint64_t>(0x58) = 0x0123456789ABCDEF;
    EXPECT_EQ(device.log, (std::vector{write_of(0x21, 1, 0xA5), write_of(0x32, 2, 0xBEEF),
                                       write_of(0x44, 4, 0xDEADBEEF), write_of(0x58, 8, 0x0123456789ABCDEF)}));
    EXPECT_EQ(device.contents<uint64_t>(0x58), 0x0123456789ABCDEFu);

    device.log.clear();
    EXPECT_EQ(*device.at<uint8_t>(0x21), 0xA5);
    EXPECT_EQ(*device.at<uint16_t>(0x32), 0xBEEF);
    EXPECT_EQ(*device.at<uint32_t>(0x44), 0xDEADBEEFu);
    EXPECT_EQ(*device.at<uint64_t>(0x58), 0x0123456789ABCDEFu);
    EXPECT_EQ(device.log, (std::vector{read_of(0x21, 1, 0xA5), read_of(0x32, 2, 0xBEEF), read_of(0x44, 4, 0xDEADBEEF),
                                       read_of(0x58, 8, 0x0123456789ABCDEF)}));

    // Loads into wider variables: the extension the type asks for (MOVSX, MOVZX, MOVSXD).
    const int64_t signed_byte = *device.at<int8_t>(0x21);
    const int64_t signed_half = *device.at<int16_t>(0x32);
    const int64_t signed_word = *device.at<int32_t>(0x44);
    const uint64_t unsigned_half = *device.at<uint16_t>(0x32);
    EXPECT_EQ(signed_byte, int8_t(0xA5));
    EXPECT_EQ(signed_half, int16_t(0xBEEF));
    EXPECT_EQ(signed_word, int32_t(0xDEADBEEF));
    EXPECT_EQ(unsigned_half, 0xBEEFu);
}

// The instruction tests' registers: a fill that shows which bits a load leaves, a stored pattern.
// Each asm sets its register itself: a register variable's value is only guaranteed as an asm
// operand, and at -O0 the code before the asm may use that register.
constexpr uint64_t kFill = 0xAAAAAAAAAAAAAAAA;
constexpr uint64_t kPattern = 0x0123456789ABCDEF;

#if defined(__x86_64__)

// Every general register but RSP and RBP (the frame pointer in the sanitizer build) as a load's
// destination and a store's source, at each width: bits the load does not write keep the fill.
#define ETHOSU_EACH_REGISTER(X)                                                                       \
    X("rax") X("rbx") X("rcx") X("rdx") X("rsi") X("rdi") X("r8") X("r9") X("r10") X("r11") X("r12") \
        X("r13") X("r14") X("r15")

TEST(MmioTrap, LoadsIntoEveryRegister) {
    RecordingMemory device;
    device.fill<uint64_t>(0x100, 0x0123456789ABCDEF);
    volatile uint64_t* word = device.at<uint64_t>(0x100);
#define ETHOSU_LOAD_INTO(REG)                                                                   \
    {                                                                                           \
        register uint64_t value asm(REG);                                                       \
        uint64_t got[4];                                                                        \
        asm volatile("movq %2, %q0\n\tmovb %1, %b0" : "=&r"(value) : "m"(*word), "r"(kFill)); \
        got[0] = value;                                                                         \
        asm volatile("movq %2, %q0\n\tmovw %1, %w0" : "=&r"(value) : "m"(*word), "r"(kFill)); \
        got[1] = value;                                                                         \
        asm volatile("movq %2, %q0\n\tmovl %1, %k0" : "=&r"(value) : "m"(*word), "r"(kFill)); \
        got[2] = value;                                                                         \
        asm volatile("movq %1, %q0" : "=r"(value) : "m"(*word));                                \
        got[3] = value;                                                                         \
        EXPECT_EQ(got[0], 0xAAAAAAAAAAAAAAEFu) << REG;                                          \
        EXPECT_EQ(got[1], 0xAAAAAAAAAAAACDEFu) << REG;                                          \
        EXPECT_EQ(got[2], 0x89ABCDEFu) << REG;                                                  \
        EXPECT_EQ(got[3], 0x0123456789ABCDEFu) << REG;                                          \
    }
    ETHOSU_EACH_REGISTER(ETHOSU_LOAD_INTO)
#undef ETHOSU_LOAD_INTO
    uint64_t ax;  // AH: a byte register only without REX
    asm volatile("movq %2, %%rax\n\tmovb %1, %%ah" : "=&a"(ax) : "m"(*word), "r"(kFill));
    EXPECT_EQ(ax, 0xAAAAAAAAAAAAEFAAu);
    EXPECT_EQ(device.log.size(), 14u * 4 + 1);
}

TEST(MmioTrap, StoresFromEveryRegister) {
    RecordingMemory device;
    volatile uint64_t* word = device.at<uint64_t>(0x100);
#define ETHOSU_STORE_FROM(REG)                                                                       \
    {                                                                                                \
        register uint64_t value asm(REG);                                                            \
        device.log.clear();                                                                          \
        asm volatile("movq %2, %q0\n\tmovb %b0, %1" : "=&r"(value), "=m"(*word) : "r"(kPattern));   \
        asm volatile("movq %2, %q0\n\tmovw %w0, %1" : "=&r"(value), "=m"(*word) : "r"(kPattern));   \
        asm volatile("movq %2, %q0\n\tmovl %k0, %1" : "=&r"(value), "=m"(*word) : "r"(kPattern));   \
        asm volatile("movq %2, %q0\n\tmovq %q0, %1" : "=&r"(value), "=m"(*word) : "r"(kPattern));   \
        EXPECT_EQ(device.log, (std::vector{write_of(0x100, 1, 0xEF), write_of(0x100, 2, 0xCDEF),      \
                                           write_of(0x100, 4, 0x89ABCDEF), write_of(0x100, 8, kPattern)})) \
            << REG;                                                                                  \
    }
    ETHOSU_EACH_REGISTER(ETHOSU_STORE_FROM)
#undef ETHOSU_STORE_FROM
    device.log.clear();
    asm volatile("movq $0x1234, %%rax\n\tmovb %%ah, %0" : "=m"(*word) : : "rax");
    EXPECT_EQ(device.log, std::vector{write_of(0x100, 1, 0x12)});
}

// Addressing forms whose length differs: R12 as a base takes a SIB byte, R13 a displacement even
// when it is 0, an index register a SIB, a large offset a disp32.
TEST(MmioTrap, EveryAddressingForm) {
    RecordingMemory device;
    device.fill<uint32_t>(0x0, 0x11);
    device.fill<uint32_t>(0xC, 0x22);
    device.fill<uint32_t>(0x104, 0x33);
    volatile uint8_t* window = device.at<uint8_t>(0);
    uint32_t a = 0, b = 0, c = 0, d = 0;
    asm volatile("movq %1, %%r12\n\tmovl (%%r12), %0" : "=r"(a) : "r"(window) : "r12", "memory");
    asm volatile("movq %1, %%r13\n\tmovl (%%r13), %0" : "=r"(b) : "r"(window) : "r13", "memory");
    asm volatile("movq %1, %%r12\n\tmovq $3, %%r9\n\tmovl (%%r12,%%r9,4), %0"
                 : "=r"(c)
                 : "r"(window)
                 : "r9", "r12", "memory");
    asm volatile("movq %1, %%r13\n\tmovl 0x104(%%r13), %0" : "=r"(d) : "r"(window) : "r13", "memory");
    asm volatile("movq %0, %%r12\n\tmovq $3, %%r9\n\tmovl $0x44, 0x104(%%r12,%%r9,1)"
                 :
                 : "r"(window)
                 : "r9", "r12", "memory");
    EXPECT_EQ(a, 0x11u);
    EXPECT_EQ(b, 0x11u);
    EXPECT_EQ(c, 0x22u);
    EXPECT_EQ(d, 0x33u);
    EXPECT_EQ(device.log.back(), write_of(0x107, 4, 0x44));
}

TEST(MmioTrap, StoresOfImmediates) {
    RecordingMemory device;
    volatile uint64_t* word = device.at<uint64_t>(0x80);
    asm volatile("movb $0x12, %0" : "=m"(*word));
    asm volatile("movw $0x1234, %0" : "=m"(*word));
    asm volatile("movl $0x12345678, %0" : "=m"(*word));
    asm volatile("movq $-2, %0" : "=m"(*word));  // imm32, sign-extended
    EXPECT_EQ(device.log, (std::vector{write_of(0x80, 1, 0x12), write_of(0x80, 2, 0x1234),
                                       write_of(0x80, 4, 0x12345678), write_of(0x80, 8, 0xFFFFFFFFFFFFFFFE)}));
}

// ---- arithmetic on the window: what Clang emits for `reg->X.word |= 1` or `reg->X.word == 0` ----

struct Outcome {
    uint64_t reg;
    bool carry, zero, sign, overflow, parity;
    bool operator==(const Outcome&) const = default;
};

void PrintTo(const Outcome& o, std::ostream* os) {
    *os << "reg 0x" << std::hex << o.reg << " CF " << o.carry << " ZF " << o.zero << " SF " << o.sign << " OF "
        << o.overflow << " PF " << o.parity;
}

using Instruction = Outcome (*)(volatile uint64_t* memory, uint64_t reg, bool carry);

#define ETHOSU_INSTRUCTION(TEXT)                                                                          \
    [](volatile uint64_t* memory, uint64_t reg, bool carry) {                                            \
        Outcome o{};                                                                                     \
        uint32_t carry_in = carry;                                                                       \
        asm volatile("btl $0, %k[carry]\n\t" TEXT                                                        \
                     : [reg] "+r"(reg), [mem] "+m"(*memory), "=@ccc"(o.carry), "=@ccz"(o.zero),         \
                       "=@ccs"(o.sign), "=@cco"(o.overflow), "=@ccp"(o.parity)                           \
                     : [carry] "r"(carry_in));                                                           \
        o.reg = reg;                                                                                     \
        return o;                                                                                        \
    }

struct ArithmeticCase {
    const char* text;
    Instruction run;
    bool writes_memory;
    unsigned size;
};

const ArithmeticCase kArithmetic[] = {
    {"orl $1, mem", ETHOSU_INSTRUCTION("orl $1, %[mem]"), true, 4},
    {"andl $~4, mem", ETHOSU_INSTRUCTION("andl $~4, %[mem]"), true, 4},
    {"addl $-1, mem", ETHOSU_INSTRUCTION("addl $-1, %[mem]"), true, 4},
    {"addl reg, mem", ETHOSU_INSTRUCTION("addl %k[reg], %[mem]"), true, 4},
    {"subq reg, mem", ETHOSU_INSTRUCTION("subq %q[reg], %[mem]"), true, 8},
    {"xorw reg, mem", ETHOSU_INSTRUCTION("xorw %w[reg], %[mem]"), true, 2},
    {"adcl reg, mem", ETHOSU_INSTRUCTION("adcl %k[reg], %[mem]"), true, 4},
    {"sbbb $7, mem", ETHOSU_INSTRUCTION("sbbb $7, %[mem]"), true, 1},
    {"orw $0x8000, mem", ETHOSU_INSTRUCTION("orw $0x8000, %[mem]"), true, 2},
    {"addq $0x7fffffff, mem", ETHOSU_INSTRUCTION("addq $0x7fffffff, %[mem]"), true, 8},
    {"cmpl $0, mem", ETHOSU_INSTRUCTION("cmpl $0, %[mem]"), false, 4},
    {"cmpl reg, mem", ETHOSU_INSTRUCTION("cmpl %k[reg], %[mem]"), false, 4},
    {"cmpq mem, reg", ETHOSU_INSTRUCTION("cmpq %[mem], %q[reg]"), false, 8},
    {"testb $4, mem", ETHOSU_INSTRUCTION("testb $4, %[mem]"), false, 1},
    {"testl reg, mem", ETHOSU_INSTRUCTION("testl %k[reg], %[mem]"), false, 4},
    {"addl mem, reg", ETHOSU_INSTRUCTION("addl %[mem], %k[reg]"), false, 4},
    {"sbbw mem, reg", ETHOSU_INSTRUCTION("sbbw %[mem], %w[reg]"), false, 2},
    {"andb mem, reg", ETHOSU_INSTRUCTION("andb %[mem], %b[reg]"), false, 1},
};

struct Operands {
    uint64_t memory, reg;
    bool carry;
};

const Operands kOperands[] = {
    {0, 0, false},
    {0x7FFFFFFF, 1, false},
    {0x80000000, 0x80000000, true},
    {0xFFFFFFFFFFFFFFFF, 0x7FFFFFFFFFFFFFFF, true},
    {0x00000000DEAD00FF, 0xFFFF0000FFFF0001, false},
};

TEST(MmioTrap, ArithmeticOnTheWindowMatchesMemory) {
    RecordingMemory device;
    for (const ArithmeticCase& instruction : kArithmetic) {
        for (const Operands& operands : kOperands) {
            volatile uint64_t memory = operands.memory;
            const Outcome expected = instruction.run(&memory, operands.reg, operands.carry);
            device.fill<uint64_t>(0x40, operands.memory);
            device.log.clear();
            const Outcome got = instruction.run(device.at<uint64_t>(0x40), operands.reg, operands.carry);

            SCOPED_TRACE(testing::Message() << instruction.text << " with memory 0x" << std::hex << operands.memory
                                            << ", reg 0x" << operands.reg << ", carry " << operands.carry);
            EXPECT_EQ(got, expected);
            EXPECT_EQ(device.contents<uint64_t>(0x40), memory);
            const uint64_t mask = instruction.size == 8 ? ~uint64_t{0} : (uint64_t{1} << 8 * instruction.size) - 1;
            std::vector expected_log{read_of(0x40, instruction.size, operands.memory & mask)};
            if (instruction.writes_memory) expected_log.push_back(write_of(0x40, instruction.size, memory & mask));
            EXPECT_EQ(device.log, expected_log);
        }
    }
}

#elif defined(__aarch64__)

// Every general register but X29 (the frame pointer) and X30 (the link register) as a load's
// destination and a store's source, at each width and extension.
#define ETHOSU_EACH_REGISTER(X)                                                                                 \
    X("x0") X("x1") X("x2") X("x3") X("x4") X("x5") X("x6") X("x7") X("x8") X("x9") X("x10") X("x11") X("x12") \
        X("x13") X("x14") X("x15") X("x16") X("x17") X("x18") X("x19") X("x20") X("x21") X("x22") X("x23")      \
            X("x24") X("x25") X("x26") X("x27") X("x28")

TEST(MmioTrap, LoadsIntoEveryRegister) {
    RecordingMemory device;
    device.fill<uint64_t>(0x100, 0x0123456789ABCDEF);
    device.fill<uint64_t>(0x108, 0xFEDCBA9876543210);
    volatile uint8_t* word = device.at<uint8_t>(0x100);
#define ETHOSU_LOAD_INTO(REG)                                                                   \
    {                                                                                           \
        register uint64_t value asm(REG);                                        \
        uint64_t got[6];                                                                        \
        asm volatile("ldrb %w0, [%1]" : "=r"(value) : "r"(word) : "memory");                    \
        got[0] = value;                                                                         \
        asm volatile("ldrh %w0, [%1, #2]" : "=r"(value) : "r"(word) : "memory");                \
        got[1] = value;                                                                         \
        asm volatile("ldr %w0, [%1]" : "=r"(value) : "r"(word) : "memory");                     \
        got[2] = value;                                                                         \
        asm volatile("ldr %x0, [%1]" : "=r"(value) : "r"(word) : "memory");                     \
        got[3] = value;                                                                         \
        asm volatile("ldrsb %x0, [%1, #8]" : "=r"(value) : "r"(word) : "memory");               \
        got[4] = value;                                                                         \
        asm volatile("ldrsw %x0, [%1, #12]" : "=r"(value) : "r"(word) : "memory");              \
        got[5] = value;                                                                         \
        EXPECT_EQ(got[0], 0xEFu) << REG;                                                        \
        EXPECT_EQ(got[1], 0x89ABu) << REG;                                                      \
        EXPECT_EQ(got[2], 0x89ABCDEFu) << REG;                                                  \
        EXPECT_EQ(got[3], 0x0123456789ABCDEFu) << REG;                                          \
        EXPECT_EQ(got[4], 0x10u) << REG;                                                        \
        EXPECT_EQ(got[5], 0xFFFFFFFFFEDCBA98u) << REG;                                          \
    }
    ETHOSU_EACH_REGISTER(ETHOSU_LOAD_INTO)
#undef ETHOSU_LOAD_INTO
    EXPECT_EQ(device.log.size(), 29u * 6);
}

TEST(MmioTrap, StoresFromEveryRegister) {
    RecordingMemory device;
    volatile uint8_t* word = device.at<uint8_t>(0x100);
#define ETHOSU_STORE_FROM(REG)                                                                         \
    {                                                                                                  \
        register uint64_t value asm(REG);                                                              \
        device.log.clear();                                                                            \
        asm volatile("mov %x0, %2\n\tstrb %w0, [%1]" : "=&r"(value) : "r"(word), "r"(kPattern) : "memory"); \
        asm volatile("mov %x0, %2\n\tstrh %w0, [%1]" : "=&r"(value) : "r"(word), "r"(kPattern) : "memory"); \
        asm volatile("mov %x0, %2\n\tstr %w0, [%1]" : "=&r"(value) : "r"(word), "r"(kPattern) : "memory");  \
        asm volatile("mov %x0, %2\n\tstr %x0, [%1]" : "=&r"(value) : "r"(word), "r"(kPattern) : "memory");  \
        EXPECT_EQ(device.log, (std::vector{write_of(0x100, 1, 0xEF), write_of(0x100, 2, 0xCDEF),        \
                                           write_of(0x100, 4, 0x89ABCDEF), write_of(0x100, 8, kPattern)})) \
            << REG;                                                                                    \
    }
    ETHOSU_EACH_REGISTER(ETHOSU_STORE_FROM)
#undef ETHOSU_STORE_FROM
    device.log.clear();
    asm volatile("str wzr, [%0]" : : "r"(word) : "memory");
    EXPECT_EQ(device.log, std::vector{write_of(0x100, 4, 0)});
}

// Pre- and post-index move the base register; register offsets extend and scale the index; a
// pair is two accesses in address order.
TEST(MmioTrap, EveryAddressingForm) {
    RecordingMemory device;
    for (uint32_t i = 0; i < 64; ++i) device.fill<uint32_t>(4 * i, 0x1000 + i);
    volatile uint8_t* window = device.at<uint8_t>(0);
    volatile uint8_t* cursor = window + 0x10;
    uint64_t a = 0, b = 0;

    asm volatile("ldr %w0, [%1, #4]!" : "=r"(a), "+r"(cursor) : : "memory");
    EXPECT_EQ(a, 0x1005u);
    EXPECT_EQ(cursor, window + 0x14);
    asm volatile("ldr %w0, [%1], #-8" : "=r"(a), "+r"(cursor) : : "memory");
    EXPECT_EQ(a, 0x1005u);
    EXPECT_EQ(cursor, window + 0xC);
    asm volatile("ldur %w0, [%1, #-4]" : "=r"(a) : "r"(cursor) : "memory");
    EXPECT_EQ(a, 0x1002u);

    asm volatile("ldr %w0, [%1, %2, lsl #2]" : "=r"(a) : "r"(window), "r"(uint64_t{7}) : "memory");
    EXPECT_EQ(a, 0x1007u);
    asm volatile("ldr %x0, [%1, %w2, uxtw #3]" : "=r"(a) : "r"(window), "r"(uint32_t{2}) : "memory");
    EXPECT_EQ(a, 0x0000100500001004u);
    asm volatile("ldrb %w0, [%1, %w2, sxtw]" : "=r"(a) : "r"(window + 0x11), "r"(int32_t{-1}) : "memory");
    EXPECT_EQ(a, 0x04u);

    asm volatile("ldp %w0, %w1, [%2, #8]" : "=r"(a), "=r"(b) : "r"(window) : "memory");
    EXPECT_EQ(a, 0x1002u);
    EXPECT_EQ(b, 0x1003u);
    asm volatile("ldpsw %0, %1, [%2]" : "=r"(a), "=r"(b) : "r"(window + 0x20) : "memory");
    EXPECT_EQ(a, 0x1008u);

    cursor = window + 0x40;
    device.log.clear();
    asm volatile("stp %x1, %x2, [%0, #-16]!" : "+r"(cursor) : "r"(uint64_t{1}), "r"(uint64_t{2}) : "memory");
    EXPECT_EQ(cursor, window + 0x30);
    EXPECT_EQ(device.log, (std::vector{write_of(0x30, 8, 1), write_of(0x38, 8, 2)}));
    asm volatile("stp %w1, wzr, [%0], #8" : "+r"(cursor) : "r"(uint32_t{3}) : "memory");
    EXPECT_EQ(cursor, window + 0x38);
    EXPECT_EQ(device.log.back(), write_of(0x34, 4, 0));
}

#endif

// ---- several traps, threads, re-entrancy ---------------------------------------------------------

TEST(MmioTrap, TwoTrapsAtOnce) {
    RecordingMemory first, second(3 * 4096);
    *first.at<uint32_t>(0x10) = 1;
    *second.at<uint32_t>(0x2010) = 2;
    *first.at<uint32_t>(0x14) = 3;
    EXPECT_EQ(second.trap().size(), 3u * 4096);
    EXPECT_EQ(first.log, (std::vector{write_of(0x10, 4, 1), write_of(0x14, 4, 3)}));
    EXPECT_EQ(second.log, std::vector{write_of(0x2010, 4, 2)});
}

TEST(MmioTrap, AnAccessFromAnotherThread) {
    RecordingMemory device;
    std::thread([&] { *device.at<uint32_t>(0x8) = 7; }).join();
    EXPECT_EQ(device.log, std::vector{write_of(0x8, 4, 7)});
}

TEST(MmioTrap, AtMostKMaxTrapsAtOnce) {
    std::vector<std::unique_ptr<RecordingMemory>> traps;
    for (int i = 0; i < MmioTrap::kMaxTraps; ++i) traps.push_back(std::make_unique<RecordingMemory>());
    EXPECT_THROW(RecordingMemory(), std::length_error);
    traps.pop_back();
    EXPECT_NO_THROW(RecordingMemory());
}

// A device whose callbacks call back into it (a lock, an allocation) and access a second trap's
// window: the handler is re-entered for that nested fault.
class Owner {
public:
    Owner()
        : trap_(4096, [this](uint64_t offset, unsigned) { return on_read(offset); },
                [this](uint64_t offset, unsigned, uint64_t value) { on_write(offset, value); }) {}

    volatile uint32_t* reg(uint64_t offset) {
        return reinterpret_cast<volatile uint32_t*>(static_cast<volatile uint8_t*>(trap_.base()) + offset);
    }
    std::string history() {
        std::lock_guard lock(mutex_);
        return history_;
    }
    RecordingMemory& mirror() { return mirror_; }

private:
    uint64_t on_read(uint64_t offset) {
        std::lock_guard lock(mutex_);
        history_ += "r" + std::to_string(offset) + " ";
        return *mirror_.at<uint32_t>(offset);
    }
    void on_write(uint64_t offset, uint64_t value) {
        std::lock_guard lock(mutex_);
        history_ += "w" + std::to_string(offset) + "=" + std::to_string(value) + " ";
        *mirror_.at<uint32_t>(offset) = static_cast<uint32_t>(value);
    }

    std::mutex mutex_;
    std::string history_;
    RecordingMemory mirror_;
    MmioTrap trap_;
};

TEST(MmioTrap, CallbacksMayCallIntoTheirOwnerAndAnotherTrap) {
    Owner owner;
    *owner.reg(0x20) = 9;
    EXPECT_EQ(*owner.reg(0x20), 9u);
    EXPECT_EQ(owner.history(), "w32=9 r32 ");
    EXPECT_EQ(owner.mirror().log, (std::vector{write_of(0x20, 4, 9), read_of(0x20, 4, 9)}));
}

// ---- what the trap refuses ----------------------------------------------------------------------

TEST(MmioTrapDeathTest, AFaultOutsideEveryTrapStillKills) {
    RecordingMemory device;  // the handler is installed
    void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page, MAP_FAILED);
    auto fault = [&] { *static_cast<volatile uint32_t*>(page) = 1; };
    if (kAddressSanitizer) {
        EXPECT_DEATH(fault(), "SEGV");  // the sanitizer's handler was there first and reports it
    } else {
        EXPECT_EXIT(fault(), testing::KilledBySignal(SIGSEGV), "");
    }
    munmap(page, 4096);
}

TEST(MmioTrapDeathTest, AnInstructionItDoesNotKnowAborts) {
    RecordingMemory device;
    volatile uint32_t* word = device.at<uint32_t>(0x30);
    uint32_t value = 1;
#if defined(__x86_64__)
    EXPECT_DEATH(asm volatile("xchgl %0, %1" : "+r"(value), "+m"(*word)),
                 "not an instruction the trap emulates: the instruction at 0x[0-9a-f]+ "
                 ".bytes( 4[0-9a-f])? 87 [0-9a-f ]+. accessing 0x[0-9a-f]+, offset 0x30 of the trap window");
#elif defined(__aarch64__)
    EXPECT_DEATH(asm volatile("ldar %w0, [%1]" : "=r"(value) : "r"(word) : "memory"),
                 "not an instruction the trap emulates: the instruction at 0x[0-9a-f]+ "
                 ".bytes [0-9a-f]+ [0-9a-f]+ df 88. accessing 0x[0-9a-f]+, offset 0x30 of the trap window");
#endif
}

// An 8-byte store 4 bytes before the end: misaligned on purpose, which UBSan would report first.
__attribute__((no_sanitize("alignment"))) void store_past_the_end(RecordingMemory& device) {
    *device.at<uint64_t>(4092) = 1;
}

TEST(MmioTrapDeathTest, AnAccessPastTheWindowsEndAborts) {
    RecordingMemory device;
    EXPECT_DEATH(store_past_the_end(device), "the access runs past the window's end");
}

// ---- the x86-64 decoder on bytes ----------------------------------------------------------------

X86Access decode(std::vector<uint8_t> bytes) {
    const X86Decoded decoded = decode_x86_access(bytes.data(), bytes.size());
    EXPECT_EQ(decoded.status, DecodeStatus::Ok);
    EXPECT_EQ(decoded.access.length, bytes.size()) << "every byte belongs to the instruction";
    return decoded.access;
}

DecodeStatus status_of(std::vector<uint8_t> bytes) { return decode_x86_access(bytes.data(), bytes.size()).status; }

using Operation = X86Access::Operation;
using Alu = X86Access::Alu;

TEST(DecodeX86Access, MovForms) {
    const X86Access load = decode({0x8B, 0x07});  // mov (%rdi),%eax
    EXPECT_EQ(load.operation, Operation::Load);
    EXPECT_EQ(load.size, 4u);
    EXPECT_EQ(load.register_width, 4u);
    EXPECT_EQ(load.register_number, 0u);
    EXPECT_FALSE(load.sign_extend);
    EXPECT_FALSE(load.immediate);

    const X86Access store = decode({0x89, 0xB0, 0xA0, 0x01, 0x00, 0x00});  // mov %esi,0x1a0(%rax)
    EXPECT_EQ(store.operation, Operation::Store);
    EXPECT_EQ(store.size, 4u);
    EXPECT_EQ(store.register_number, 6u);

    const X86Access byte_store = decode({0x44, 0x88, 0x07});  // mov %r8b,(%rdi)
    EXPECT_EQ(byte_store.size, 1u);
    EXPECT_EQ(byte_store.register_number, 8u);
    EXPECT_FALSE(byte_store.high_byte_register);

    const X86Access half_store = decode({0x66, 0x89, 0x07});  // mov %ax,(%rdi)
    EXPECT_EQ(half_store.size, 2u);

    const X86Access quad_load = decode({0x4C, 0x8B, 0x3C, 0x24});  // mov (%rsp),%r15
    EXPECT_EQ(quad_load.size, 8u);
    EXPECT_EQ(quad_load.register_number, 15u);
}

TEST(DecodeX86Access, ByteRegistersWithAndWithoutRex) {
    const X86Access ah = decode({0x8A, 0x27});  // mov (%rdi),%ah
    EXPECT_TRUE(ah.high_byte_register);
    EXPECT_EQ(ah.register_number, 0u);
    const X86Access spl = decode({0x40, 0x8A, 0x27});  // mov (%rdi),%spl
    EXPECT_FALSE(spl.high_byte_register);
    EXPECT_EQ(spl.register_number, 4u);
    const X86Access r12b = decode({0x44, 0x8A, 0x27});  // mov (%rdi),%r12b
    EXPECT_EQ(r12b.register_number, 12u);
}

TEST(DecodeX86Access, Extensions) {
    const X86Access movzbl = decode({0x0F, 0xB6, 0x47, 0x01});  // movzbl 1(%rdi),%eax
    EXPECT_EQ(movzbl.size, 1u);
    EXPECT_EQ(movzbl.register_width, 4u);
    EXPECT_FALSE(movzbl.sign_extend);
    const X86Access movswq = decode({0x48, 0x0F, 0xBF, 0x07});  // movswq (%rdi),%rax
    EXPECT_EQ(movswq.size, 2u);
    EXPECT_EQ(movswq.register_width, 8u);
    EXPECT_TRUE(movswq.sign_extend);
    const X86Access movsbw = decode({0x66, 0x0F, 0xBE, 0x07});  // movsbw (%rdi),%ax
    EXPECT_EQ(movsbw.size, 1u);
    EXPECT_EQ(movsbw.register_width, 2u);
    const X86Access movslq = decode({0x4C, 0x63, 0x0F});  // movslq (%rdi),%r9
    EXPECT_EQ(movslq.size, 4u);
    EXPECT_EQ(movslq.register_width, 8u);
    EXPECT_TRUE(movslq.sign_extend);
    EXPECT_EQ(movslq.register_number, 9u);
}

TEST(DecodeX86Access, Immediates) {
    const X86Access movl = decode({0xC7, 0x40, 0x08, 0x05, 0x00, 0x00, 0x00});  // movl $5,8(%rax)
    EXPECT_EQ(movl.operation, Operation::Store);
    EXPECT_EQ(movl.immediate, 5u);
    const X86Access movw = decode({0x66, 0xC7, 0x07, 0x34, 0x12});  // movw $0x1234,(%rdi)
    EXPECT_EQ(movw.size, 2u);
    EXPECT_EQ(movw.immediate, 0x1234u);
    const X86Access movq = decode({0x48, 0xC7, 0x07, 0xFE, 0xFF, 0xFF, 0xFF});  // movq $-2,(%rdi)
    EXPECT_EQ(movq.size, 8u);
    EXPECT_EQ(movq.immediate, 0xFFFFFFFFFFFFFFFEu);
    const X86Access movb = decode({0xC6, 0x04, 0x07, 0x12});  // movb $0x12,(%rdi,%rax,1)
    EXPECT_EQ(movb.size, 1u);
    EXPECT_EQ(movb.immediate, 0x12u);
}

// The lengths that depend on addressing: RIP-relative, SIB with and without base, R12/R13 as
// base, disp8/disp32, and a RIP-relative operand followed by an immediate.
TEST(DecodeX86Access, AddressingLengths) {
    decode({0x8B, 0x05, 0x78, 0x56, 0x34, 0x12});                                // mov 0x12345678(%rip),%eax
    decode({0xC7, 0x05, 0x78, 0x56, 0x34, 0x12, 0x01, 0x00, 0x00, 0x00});        // movl $1,0x12345678(%rip)
    decode({0x66, 0xC7, 0x05, 0x78, 0x56, 0x34, 0x12, 0x01, 0x00});              // movw $1,0x12345678(%rip)
    decode({0x8B, 0x04, 0x24});                                                  // mov (%rsp),%eax
    decode({0xC7, 0x44, 0x24, 0x08, 0x05, 0x00, 0x00, 0x00});                    // movl $5,8(%rsp)
    decode({0x42, 0x8B, 0x04, 0xA5, 0x00, 0x10, 0x00, 0x00});                    // mov 0x1000(,%r12,4),%eax
    decode({0x41, 0x8B, 0x04, 0x24});                                            // mov (%r12),%eax
    decode({0x41, 0x8B, 0x45, 0x00});                                            // mov 0(%r13),%eax
    decode({0x43, 0x8B, 0x44, 0x25, 0x00});                                      // mov 0(%r13,%r12,1),%eax
    decode({0x44, 0x8B, 0x8C, 0x24, 0x00, 0x01, 0x00, 0x00});                    // mov 0x100(%rsp),%r9d
    decode({0x8B, 0x87, 0x00, 0x01, 0x00, 0x00});                                // mov 0x100(%rdi),%eax
    decode({0x67, 0x8B, 0x07});                                                  // mov (%edi),%eax
    decode({0x81, 0x0D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00});        // orl $0x10000,0(%rip)
}

// A REX counts only right before the opcode; REX.W outweighs 66.
TEST(DecodeX86Access, PrefixOrder) {
    EXPECT_EQ(decode({0x48, 0x66, 0x89, 0x07}).size, 2u);  // REX.W ignored: mov %ax,(%rdi)
    EXPECT_EQ(decode({0x66, 0x48, 0x89, 0x07}).size, 8u);  // mov %rax,(%rdi)
    EXPECT_EQ(decode({0x44, 0x66, 0x89, 0x07}).register_number, 0u);  // REX.R ignored too
}

TEST(DecodeX86Access, Arithmetic) {
    const X86Access orl = decode({0x83, 0x48, 0x08, 0x01});  // orl $1,8(%rax)
    EXPECT_EQ(orl.operation, Operation::Arithmetic);
    EXPECT_EQ(orl.alu, Alu::Or);
    EXPECT_TRUE(orl.writes_result);
    EXPECT_TRUE(orl.memory_is_destination);
    EXPECT_EQ(orl.immediate, 1u);

    const X86Access cmpl = decode({0x83, 0x7F, 0x04, 0xFF});  // cmpl $-1,4(%rdi)
    EXPECT_EQ(cmpl.alu, Alu::Sub);
    EXPECT_FALSE(cmpl.writes_result);
    EXPECT_EQ(cmpl.immediate, ~uint64_t{0});

    const X86Access orw = decode({0x66, 0x81, 0x0F, 0x00, 0x80});  // orw $0x8000,(%rdi)
    EXPECT_EQ(orw.size, 2u);
    EXPECT_EQ(orw.immediate, 0xFFFFFFFFFFFF8000u);

    const X86Access andl = decode({0x81, 0x27, 0xFB, 0xFF, 0xFF, 0xFF});  // andl $~4,(%rdi)
    EXPECT_EQ(andl.alu, Alu::And);

    const X86Access orb = decode({0x80, 0x0F, 0x01});  // orb $1,(%rdi)
    EXPECT_EQ(orb.size, 1u);

    const X86Access xorl = decode({0x31, 0x37});  // xor %esi,(%rdi)
    EXPECT_EQ(xorl.alu, Alu::Xor);
    EXPECT_TRUE(xorl.memory_is_destination);
    EXPECT_EQ(xorl.register_number, 6u);

    const X86Access addl = decode({0x03, 0x07});  // add (%rdi),%eax
    EXPECT_EQ(addl.alu, Alu::Add);
    EXPECT_FALSE(addl.memory_is_destination);
    EXPECT_TRUE(addl.writes_result);

    const X86Access cmp = decode({0x3B, 0x07});  // cmp (%rdi),%eax
    EXPECT_EQ(cmp.alu, Alu::Sub);
    EXPECT_FALSE(cmp.memory_is_destination);
    EXPECT_FALSE(cmp.writes_result);

    const X86Access sbbb = decode({0x1A, 0x27});  // sbb (%rdi),%ah
    EXPECT_EQ(sbbb.alu, Alu::Sbb);
    EXPECT_TRUE(sbbb.high_byte_register);
}

TEST(DecodeX86Access, Test) {
    const X86Access testl = decode({0x85, 0x07});  // test %eax,(%rdi)
    EXPECT_EQ(testl.alu, Alu::And);
    EXPECT_FALSE(testl.writes_result);
    const X86Access testb = decode({0xF6, 0x47, 0x02, 0x04});  // testb $4,2(%rdi)
    EXPECT_EQ(testb.size, 1u);
    EXPECT_EQ(testb.immediate, 4u);
    EXPECT_FALSE(testb.writes_result);
    EXPECT_EQ(decode({0xF7, 0x07, 0x00, 0x00, 0x01, 0x00}).size, 4u);  // testl $0x10000,(%rdi)
    EXPECT_EQ(decode({0x66, 0xF7, 0x07, 0x00, 0x01}).size, 2u);        // testw $0x100,(%rdi)
}

TEST(DecodeX86Access, TruncatedBytes) {
    EXPECT_EQ(status_of({0x8B}), DecodeStatus::Truncated);
    EXPECT_EQ(status_of({0x66}), DecodeStatus::Truncated);
    EXPECT_EQ(status_of({0x8B, 0x04}), DecodeStatus::Truncated);
    EXPECT_EQ(status_of({0xC7, 0x05, 0x78, 0x56, 0x34, 0x12, 0x01}), DecodeStatus::Truncated);
    EXPECT_EQ(status_of({}), DecodeStatus::Truncated);
}

TEST(DecodeX86Access, UnsupportedInstructions) {
    EXPECT_EQ(status_of({0x87, 0x07}), DecodeStatus::Unsupported);              // xchg %eax,(%rdi)
    EXPECT_EQ(status_of({0xF0, 0x0F, 0xC1, 0x07}), DecodeStatus::Unsupported);  // lock xadd
    EXPECT_EQ(status_of({0x0F, 0x10, 0x07}), DecodeStatus::Unsupported);        // movups (%rdi),%xmm0
    EXPECT_EQ(status_of({0x8B, 0xC7}), DecodeStatus::Unsupported);              // mov %edi,%eax: no memory
    EXPECT_EQ(status_of({0xC7, 0x47, 0x04, 0, 0, 0, 0}), DecodeStatus::Ok);
    EXPECT_EQ(status_of({0xC7, 0x4F, 0x04, 0, 0, 0, 0}), DecodeStatus::Unsupported);  // C7 /1
    EXPECT_EQ(status_of({0xF7, 0x1F}), DecodeStatus::Unsupported);                    // neg (%rdi)
    EXPECT_EQ(status_of({0xF3, 0xA5}), DecodeStatus::Unsupported);                    // rep movsl
    EXPECT_EQ(status_of(std::vector<uint8_t>(15, 0x66)), DecodeStatus::Unsupported);  // too long to be one
}


// ---- the AArch64 decoder on words (assembled by GNU as) -------------------------------------------

Arm64Access decode_arm64(uint32_t word) {
    const Arm64Decoded decoded = decode_arm64_access(word);
    EXPECT_EQ(decoded.status, DecodeStatus::Ok) << std::hex << word;
    return decoded.access;
}

using Indexing = Arm64Access::Indexing;

TEST(DecodeArm64Access, UnsignedOffsets) {
    const Arm64Access ldr = decode_arm64(0xF9400443);  // ldr x3, [x2, #8]
    EXPECT_TRUE(ldr.load);
    EXPECT_EQ(ldr.size, 8u);
    EXPECT_EQ(ldr.rt, 3u);
    EXPECT_EQ(ldr.base, 2u);
    EXPECT_EQ(ldr.immediate, 8);
    EXPECT_EQ(ldr.indexing, Indexing::Offset);
    EXPECT_EQ(decode_arm64(0x397FFCA4).immediate, 4095);  // ldrb w4, [x5, #4095]
    const Arm64Access strh = decode_arm64(0x79000D6A);    // strh w10, [x11, #6]
    EXPECT_FALSE(strh.load);
    EXPECT_EQ(strh.size, 2u);
    EXPECT_EQ(strh.immediate, 6);
    const Arm64Access str = decode_arm64(0xB901A01F);  // str wzr, [x0, #416]
    EXPECT_EQ(str.rt, 31u);
    EXPECT_EQ(str.immediate, 416);
    EXPECT_EQ(decode_arm64(0xF9000BFE).base, 31u);  // str x30, [sp, #16]
}

TEST(DecodeArm64Access, Extensions) {
    const Arm64Access ldrb = decode_arm64(0x39400000);  // ldrb w0, [x0]
    EXPECT_FALSE(ldrb.sign_extend);
    EXPECT_EQ(ldrb.register_width, 4u);
    const Arm64Access ldrsb_x = decode_arm64(0x39800041);  // ldrsb x1, [x2]
    EXPECT_TRUE(ldrsb_x.sign_extend);
    EXPECT_EQ(ldrsb_x.register_width, 8u);
    const Arm64Access ldrsb_w = decode_arm64(0x39C00041);  // ldrsb w1, [x2]
    EXPECT_TRUE(ldrsb_w.sign_extend);
    EXPECT_EQ(ldrsb_w.register_width, 4u);
    const Arm64Access ldrsw = decode_arm64(0xB98004C5);  // ldrsw x5, [x6, #4]
    EXPECT_EQ(ldrsw.size, 4u);
    EXPECT_EQ(ldrsw.register_width, 8u);
    EXPECT_EQ(ldrsw.immediate, 4);
}

TEST(DecodeArm64Access, UnscaledAndIndexed) {
    const Arm64Access ldur = decode_arm64(0xB85FC020);  // ldur w0, [x1, #-4]
    EXPECT_EQ(ldur.immediate, -4);
    EXPECT_EQ(ldur.indexing, Indexing::Offset);
    const Arm64Access pre = decode_arm64(0xB8404C20);  // ldr w0, [x1, #4]!
    EXPECT_EQ(pre.indexing, Indexing::PreIndex);
    EXPECT_EQ(pre.immediate, 4);
    const Arm64Access post = decode_arm64(0xF85F8420);  // ldr x0, [x1], #-8
    EXPECT_EQ(post.indexing, Indexing::PostIndex);
    EXPECT_EQ(post.immediate, -8);
    EXPECT_EQ(decode_arm64(0xB8404820).indexing, Indexing::Offset);  // ldtr w0, [x1, #4]
    EXPECT_EQ(arm64_address(pre, 0x1000, 0), 0x1004u);
    EXPECT_EQ(arm64_address(post, 0x1000, 0), 0x1000u);
}

TEST(DecodeArm64Access, RegisterOffsets) {
    const Arm64Access lsl = decode_arm64(0xB8617802);  // ldr w2, [x0, x1, lsl #2]
    EXPECT_EQ(lsl.index_register, 1u);
    EXPECT_EQ(lsl.index_shift, 2u);
    EXPECT_EQ(arm64_address(lsl, 0x1000, 3), 0x100Cu);
    const Arm64Access sxtw = decode_arm64(0x3821C802);  // strb w2, [x0, w1, sxtw]
    EXPECT_EQ(arm64_address(sxtw, 0x1000, 0xFFFFFFFF), 0xFFFu);
    const Arm64Access uxtw = decode_arm64(0xF8615802);  // ldr x2, [x0, w1, uxtw #3]
    EXPECT_EQ(arm64_address(uxtw, 0x1000, 0xFFFFFFFF00000002), 0x1010u);
    const Arm64Access unshifted = decode_arm64(0x78616802);  // ldrh w2, [x0, x1]
    EXPECT_EQ(unshifted.index_shift, 0u);
}

TEST(DecodeArm64Access, Pairs) {
    const Arm64Access ldp = decode_arm64(0x29410440);  // ldp w0, w1, [x2, #8]
    EXPECT_EQ(ldp.register_count, 2u);
    EXPECT_EQ(ldp.size, 4u);
    EXPECT_EQ(ldp.rt, 0u);
    EXPECT_EQ(ldp.rt2, 1u);
    EXPECT_EQ(ldp.immediate, 8);
    const Arm64Access stp = decode_arm64(0xA9BF13E3);  // stp x3, x4, [sp, #-16]!
    EXPECT_FALSE(stp.load);
    EXPECT_EQ(stp.size, 8u);
    EXPECT_EQ(stp.base, 31u);
    EXPECT_EQ(stp.indexing, Indexing::PreIndex);
    EXPECT_EQ(stp.immediate, -16);
    EXPECT_EQ(decode_arm64(0xA8C118E5).indexing, Indexing::PostIndex);  // ldp x5, x6, [x7], #16
    const Arm64Access ldpsw = decode_arm64(0x697F2548);                  // ldpsw x8, x9, [x10, #-8]
    EXPECT_TRUE(ldpsw.sign_extend);
    EXPECT_EQ(ldpsw.register_width, 8u);
    EXPECT_EQ(ldpsw.immediate, -8);
    EXPECT_EQ(decode_arm64(0x28400440).indexing, Indexing::Offset);  // ldnp w0, w1, [x2]
}

TEST(DecodeArm64Access, UnsupportedInstructions) {
    for (const uint32_t word : {0xF9800000u,    // prfm pldl1keep, [x0]
                                0x885F7C20u,    // ldxr w0, [x1]
                                0x88DFFC20u,    // ldar w0, [x1]
                                0xB8200041u,    // ldadd w0, w1, [x2]
                                0x3DC00020u,    // ldr q0, [x1]
                                0xBD400020u,    // ldr s0, [x1]
                                0x18000040u,    // ldr w0, <literal>
                                0x69000440u,    // stgp x0, x1, [x2]
                                0xD503201Fu}) {  // nop
        EXPECT_EQ(decode_arm64_access(word).status, DecodeStatus::Unsupported) << std::hex << word;
    }
}

}  // namespace
}  // namespace ethosu
