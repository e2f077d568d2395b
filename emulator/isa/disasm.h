#pragma once
// Table-driven disassembly: every command's name, parameter, payload and fields, printed
// in the layout of Vela's register-command-stream listing so the two can be diffed.

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emulator/isa/decoder.h"

namespace ethosu {

struct DisassembledField {
    std::string_view name;
    std::string text;    // as Vela prints it: enum as TYPE_VALUE, addresses in hex
    int64_t value = 0;   // the number (sign-extended where the field is signed)
    std::string_view enum_value;  // the enum value's name, empty for plain numbers
};

struct DisassembledCommand {
    uint32_t offset = 0;
    std::string_view name;
    uint16_t param = 0;
    uint16_t code = 0;  // opcode | control bits
    std::optional<uint32_t> payload;
    std::vector<DisassembledField> fields;
    // Control flow, filled by disassemble_stream: where a BRANCH leads (and why it cannot), and
    // which branches lead to this command.
    std::string branch_note;
    std::vector<uint32_t> branched_from;
};

DisassembledCommand disassemble(const isa::GenerationDesc& gen, const RawCommand& command);

// "0x000004: 00001000 0000 4000 - NPU_SET_IFM_BASE0                  0, addr = 0x1000"
// Branches and their targets get a comment after the fields ("  ; -> 0x000040",
// "  ; <- branch from 0x000080"); other lines are exactly Vela's layout.
std::string format_listing_line(const DisassembledCommand& command);

// Hands each command to visit in stream order, its branch notes filled in, keeping none.
void disassemble_stream(Generation generation, std::span<const uint32_t> words, const std::string& source,
                        const std::function<void(const DisassembledCommand&)>& visit);
std::vector<DisassembledCommand> disassemble_stream(Generation generation, std::span<const uint32_t> words,
                                                    const std::string& source);

}  // namespace ethosu
