#include "emulator/isa/disasm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "emulator/isa/description.h"

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

void disassemble_stream(Generation generation, std::span<const uint32_t> words, const std::string& source,
                        const std::function<void(const DisassembledCommand&)>& visit) {
    const auto& gen = isa::describe(generation);
    // A first pass finds where commands start and where branches lead, so that the second can
    // annotate each command as it is printed: memory in the branches, not in the commands.
    std::vector<bool> command_starts(words.size());
    std::vector<std::pair<uint32_t, uint32_t>> branches;  // (target, branch offset)
    for_each_command(gen, words, source, [&](const RawCommand& c) {
        command_starts[c.offset / 4] = true;
        if (c.desc->id == isa::Cmd::OP_BRANCH) branches.emplace_back(c.payload(), c.offset);
    });
    std::sort(branches.begin(), branches.end());
    const auto on_command = [&](uint32_t target) {
        return target % 4 == 0 && target / 4 < words.size() && command_starts[target / 4];
    };
    for_each_command(gen, words, source, [&](const RawCommand& c) {
        DisassembledCommand out = disassemble(gen, c);
        if (c.desc->id == isa::Cmd::OP_BRANCH) {
            const uint32_t target = c.payload();
            out.branch_note = fmt::format("-> {:#08x}{}", target,
                                          on_command(target)           ? ""
                                          : target >= words.size() * 4 ? " (past the end of the stream)"
                                                                       : " (not the start of a command)");
        }
        for (auto it = std::lower_bound(branches.begin(), branches.end(), std::pair{c.offset, uint32_t{0}});
             it != branches.end() && it->first == c.offset; ++it)
            out.branched_from.push_back(it->second);
        visit(out);
    });
}

std::vector<DisassembledCommand> disassemble_stream(Generation generation, std::span<const uint32_t> words,
                                                    const std::string& source) {
    std::vector<DisassembledCommand> out;
    disassemble_stream(generation, words, source, [&](const DisassembledCommand& c) { out.push_back(c); });
    return out;
}

}  // namespace ethosu
