#include "emulator/isa/disasm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace ethosu {
namespace {

std::string enum_text(const isa::EnumDesc& e, std::string_view value) {
    std::string text;
    for (char c : e.name) text += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    text += '_';
    text += value;
    return text;
}

}  // namespace

DisassembledCommand disassemble(const isa::GenerationDesc& gen, const RawCommand& command) {
    (void)gen;
    DisassembledCommand out;
    out.offset = command.offset;
    out.name = command.desc->name;
    out.param = command.param();
    out.code = static_cast<uint16_t>(command.value & 0xFFFF);
    if (command.desc->kind == isa::CmdKind::Cmd1) out.payload = command.payload();
    for (const auto& f : command.desc->fields) {
        DisassembledField field;
        field.name = f.name;
        const uint64_t raw = f.extract(command.value);
        field.value = f.extract_signed(command.value);
        if (f.enumeration) {
            field.enum_value = f.enumeration->value_name(raw);
            field.text = field.enum_value.empty() ? "****" : enum_text(*f.enumeration, field.enum_value);
        } else if (f.hex) {
            field.text = fmt::format("0x{:x}", raw);
        } else {
            field.text = fmt::format("{}", field.value);
        }
        out.fields.push_back(std::move(field));
    }
    return out;
}

std::string format_listing_line(const DisassembledCommand& c) {
    const std::string payload = c.payload ? fmt::format("{:08x}", *c.payload) : std::string(8, ' ');
    std::string line = fmt::format("{:#08x}: {} {:04x} {:04x} - {:30} {:5}", c.offset, payload, c.param, c.code,
                                   c.name, c.param);
    for (const auto& f : c.fields) line += fmt::format(", {} = {}", f.name, f.text);
    if (!c.branch_note.empty()) line += "  ; " + c.branch_note;
    for (uint32_t from : c.branched_from) line += fmt::format("  ; <- branch from {:#08x}", from);
    return line;
}

std::vector<DisassembledCommand> disassemble_stream(Generation generation, std::span<const uint32_t> words,
                                                    const std::string& source) {
    const auto& gen = isa::describe(generation);
    std::vector<DisassembledCommand> out;
    std::vector<std::pair<size_t, uint32_t>> branches;  // (index in out, target)
    for_each_command(gen, words, source, [&](const RawCommand& c) {
        if (c.desc->id == isa::Cmd::OP_BRANCH) branches.emplace_back(out.size(), c.payload());
        out.push_back(disassemble(gen, c));
    });
    for (const auto& [at, target] : branches) {
        auto landing = std::lower_bound(out.begin(), out.end(), target,
                                        [](const DisassembledCommand& c, uint32_t t) { return c.offset < t; });
        const bool on_command = landing != out.end() && landing->offset == target;
        out[at].branch_note = fmt::format("-> {:#08x}{}", target,
                                          on_command                   ? ""
                                          : target >= words.size() * 4 ? " (past the end of the stream)"
                                                                       : " (not the start of a command)");
        if (on_command) landing->branched_from.push_back(out[at].offset);
    }
    return out;
}

}  // namespace ethosu
