#pragma once
// The machine-readable description of one NPU generation, as generated from
// emulator/isa/desc/<generation>.toml: commands and their fields, enums, registers.
// The decoder, disassembler, command-stream builder and register front all read it.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "emulator/isa/isa_generated.h"
#include "emulator/isa/npu_config.h"
#include "emulator/isa/op_kind.h"

namespace ethosu::isa {

enum class CmdKind : uint8_t { Cmd0, Cmd1 };  // one word, or a word plus a 32-bit payload
enum class Access : uint8_t { RW, RO, WO };

struct EnumValue {
    std::string_view name;
    uint32_t value;
};

struct EnumDesc {
    std::string_view name;
    std::span<const EnumValue> values;
    // What each value means to the engine, from the description's [meaning.<enum>] table: the
    // engine enum's name (decoded_op.h) and its enumerator per value, in `values` order. Empty
    // where the description gives no meaning.
    std::string_view meaning_type;
    std::span<const uint8_t> meaning;

    // The value's name, or empty if the value is not one of the enum's.
    std::string_view value_name(uint64_t value) const;
    // The engine enumerator `value` means; value must be one of the enum's.
    uint8_t meaning_of(uint64_t value) const;
};

struct BitRange {
    uint8_t lo;
    uint8_t width;
};

// A command field. Bits index the 64-bit command value word0 | payload << 32; a split
// field (a 40-bit address, stride lsb/msb) has two ranges, the first the least significant.
struct FieldDesc {
    Field id;
    Cmd command;  // the command whose parameter/payload holds the field
    std::string_view name;
    std::array<BitRange, 2> parts;
    uint8_t part_count;
    const EnumDesc* enumeration;  // nullptr for plain numbers
    bool is_signed;
    bool hex;
    bool reads_signed;      // the NPU reads it as two's complement though Arm's header types it unsigned
    bool stored_minus_one;  // a `*_m1` field (Arm's naming) holds the value minus one

    int width() const;
    uint64_t extract(uint64_t command) const;           // raw, zero-extended
    int64_t extract_signed(uint64_t command) const;     // sign-extended when is_signed
    // What the field means to the NPU as a number: sign-extended when is_signed or reads_signed,
    // plus one when stored_minus_one.
    int64_t value(uint64_t command) const;
    uint64_t insert(uint64_t command, uint64_t value) const;  // value truncated to width
    bool fits(uint64_t value) const;
};

struct CommandDesc {
    Cmd id;
    std::string_view name;
    CmdKind kind;
    uint16_t opcode;
    std::span<const FieldDesc> fields;
    std::optional<OpKind> op;  // an NPU_OP_*: the op it freezes into; a register write: none

    int words() const { return kind == CmdKind::Cmd0 ? 1 : 2; }
    // The first word with opcode and control bits set, parameter zero.
    uint32_t base_word() const;
};

struct RegisterFieldDesc {
    RegField id;
    std::string_view name;
    uint8_t lo;
    uint8_t width;
};

struct RegisterDesc {
    Reg id;
    std::string_view name;
    uint32_t offset;
    uint16_t count;        // array length (BASEP[8], PMEVCNTR[4], ...)
    uint8_t width_bits;    // 32 or 64 (64-bit registers occupy two consecutive words)
    uint32_t reset;
    Access access;
    std::span<const RegisterFieldDesc> fields;

    uint32_t bytes() const { return count * (width_bits / 8); }
};

struct GenerationDesc {
    Generation generation{};
    std::string_view name;
    std::string_view arch;
    int product = 0;
    int address_bits = 32;
    std::span<const CommandDesc> commands;
    std::span<const RegisterDesc> registers;
    std::span<const EnumDesc> enums;

    const CommandDesc* find(CmdKind kind, uint16_t opcode) const;
    const CommandDesc* command(Cmd id) const;  // nullptr if this generation lacks it
    const FieldDesc* field(Field id) const;    // nullptr if this generation lacks it
    const RegisterDesc* register_at(uint32_t offset) const;  // the register covering offset
    const RegisterDesc* reg(Reg id) const;             // nullptr if this generation lacks it
    const RegisterFieldDesc* reg_field(RegField id) const;  // nullptr if this generation lacks it

    void index();  // builds the lookup tables; called once by the generated code

private:
    std::array<int16_t, 1024> cmd0_{};
    std::array<int16_t, 1024> cmd1_{};
    std::array<int16_t, kCmdCount> by_cmd_{};
    std::array<const FieldDesc*, kFieldCount> by_field_{};
    std::array<const RegisterDesc*, kRegCount> by_reg_{};
    std::array<const RegisterFieldDesc*, kRegFieldCount> by_reg_field_{};
};

const GenerationDesc& describe(Generation g);

// Generated, one per description.
const GenerationDesc& generation_u55();
const GenerationDesc& generation_u65();
const GenerationDesc& generation_u85();

}  // namespace ethosu::isa
