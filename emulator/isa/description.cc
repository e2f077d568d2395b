#include "emulator/isa/description.h"

#include <stdexcept>
#include <string>

namespace ethosu::isa {
namespace {

constexpr uint64_t mask(int width) { return width >= 64 ? ~0ull : ((1ull << width) - 1); }
constexpr uint32_t kCmd1Control = 1u << 14;

}  // namespace

std::string_view EnumDesc::value_name(uint64_t value) const {
    for (const auto& v : values)
        if (v.value == value) return v.name;
    return {};
}

uint8_t EnumDesc::meaning_of(uint64_t value) const {
    if (meaning.empty()) throw std::logic_error(std::string(name) + " has no meaning in the description");
    for (size_t i = 0; i < values.size(); ++i)
        if (values[i].value == value) return meaning[i];
    throw std::logic_error(std::string(name) + ": meaning of a value the enum lacks");
}

int FieldDesc::width() const {
    int w = 0;
    for (int i = 0; i < part_count; ++i) w += parts[i].width;
    return w;
}

uint64_t FieldDesc::extract(uint64_t command) const {
    uint64_t value = 0;
    int shift = 0;
    for (int i = 0; i < part_count; ++i) {
        value |= ((command >> parts[i].lo) & mask(parts[i].width)) << shift;
        shift += parts[i].width;
    }
    return value;
}

int64_t FieldDesc::extract_signed(uint64_t command) const {
    const uint64_t raw = extract(command);
    const int w = width();
    if (!is_signed || w >= 64) return static_cast<int64_t>(raw);
    const uint64_t sign = 1ull << (w - 1);
    return static_cast<int64_t>((raw ^ sign) - sign);
}

int64_t FieldDesc::value(uint64_t command) const {
    const uint64_t raw = extract(command);
    const int w = width();
    const uint64_t sign = (is_signed || reads_signed) && w < 64 ? 1ull << (w - 1) : 0;
    return static_cast<int64_t>((raw ^ sign) - sign) + (stored_minus_one ? 1 : 0);
}

uint64_t FieldDesc::insert(uint64_t command, uint64_t value) const {
    int shift = 0;
    for (int i = 0; i < part_count; ++i) {
        const uint64_t m = mask(parts[i].width);
        command = (command & ~(m << parts[i].lo)) | (((value >> shift) & m) << parts[i].lo);
        shift += parts[i].width;
    }
    return command;
}

bool FieldDesc::fits(uint64_t value) const { return (value & ~mask(width())) == 0; }

uint32_t CommandDesc::base_word() const { return opcode | (kind == CmdKind::Cmd1 ? kCmd1Control : 0u); }

const CommandDesc* GenerationDesc::find(CmdKind kind, uint16_t opcode) const {
    if (opcode >= 1024) return nullptr;
    const int16_t i = kind == CmdKind::Cmd0 ? cmd0_[opcode] : cmd1_[opcode];
    return i < 0 ? nullptr : &commands[i];
}

const CommandDesc* GenerationDesc::command(Cmd id) const {
    const int16_t i = by_cmd_[static_cast<size_t>(id)];
    return i < 0 ? nullptr : &commands[i];
}

const FieldDesc* GenerationDesc::field(Field id) const { return by_field_[static_cast<size_t>(id)]; }

const RegisterDesc* GenerationDesc::register_at(uint32_t offset) const {
    for (const auto& r : registers)
        if (offset >= r.offset && offset < r.offset + r.bytes()) return &r;
    return nullptr;
}

const RegisterDesc* GenerationDesc::reg(Reg id) const { return by_reg_[static_cast<size_t>(id)]; }

const RegisterFieldDesc* GenerationDesc::reg_field(RegField id) const {
    return by_reg_field_[static_cast<size_t>(id)];
}

void GenerationDesc::index() {
    cmd0_.fill(-1);
    cmd1_.fill(-1);
    by_cmd_.fill(-1);
    by_field_.fill(nullptr);
    for (size_t i = 0; i < commands.size(); ++i) {
        const auto& c = commands[i];
        (c.kind == CmdKind::Cmd0 ? cmd0_ : cmd1_)[c.opcode] = static_cast<int16_t>(i);
        by_cmd_[static_cast<size_t>(c.id)] = static_cast<int16_t>(i);
        for (const auto& f : c.fields) by_field_[static_cast<size_t>(f.id)] = &f;
    }
    by_reg_.fill(nullptr);
    by_reg_field_.fill(nullptr);
    for (const auto& r : registers) {
        by_reg_[static_cast<size_t>(r.id)] = &r;
        for (const auto& f : r.fields) by_reg_field_[static_cast<size_t>(f.id)] = &f;
    }
}

const GenerationDesc& describe(Generation g) {
    switch (g) {
        case Generation::U55: return generation_u55();
        case Generation::U65: return generation_u65();
        case Generation::U85: return generation_u85();
    }
    return generation_u55();
}

}  // namespace ethosu::isa
