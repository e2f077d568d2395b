#include "emulator/isa/builder.h"

#include <fmt/format.h>

#include <stdexcept>

namespace ethosu {

uint64_t encode_command(const isa::GenerationDesc& gen, isa::Cmd cmd,
                        std::initializer_list<std::pair<isa::Field, uint64_t>> fields) {
    const isa::CommandDesc* desc = gen.command(cmd);
    if (!desc) throw std::invalid_argument(fmt::format("{} has no such command", gen.name));
    uint64_t value = desc->base_word();
    for (const auto& [field, v] : fields) {
        const isa::FieldDesc* f = gen.field(field);
        if (!f || f->command != cmd) {
            throw std::invalid_argument(fmt::format("{}: field not part of {}", gen.name, desc->name));
        }
        if (!f->fits(v)) {
            throw std::invalid_argument(fmt::format("{}.{}: value {} wider than {} bits", desc->name, f->name, v,
                                                    f->width()));
        }
        value = f->insert(value, v);
    }
    return value;
}

CommandStreamBuilder::CommandStreamBuilder(Generation generation) : gen_(isa::describe(generation)) {}

CommandStreamBuilder& CommandStreamBuilder::emit(isa::Cmd cmd,
                                                 std::initializer_list<std::pair<isa::Field, uint64_t>> fields) {
    const uint64_t value = encode_command(gen_, cmd, fields);
    words_.push_back(static_cast<uint32_t>(value));
    if (gen_.command(cmd)->kind == isa::CmdKind::Cmd1) words_.push_back(static_cast<uint32_t>(value >> 32));
    return *this;
}

}  // namespace ethosu
