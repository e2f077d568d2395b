#include "tests/fuzz/command_mutator.h"

#include <algorithm>

#include "emulator/isa/decoder.h"
#include "emulator/isa/error.h"

namespace ethosu::fuzz {
namespace {

Command random_command(const isa::GenerationDesc& gen, std::minstd_rand& rng) {
    const auto& desc = gen.commands[rng() % gen.commands.size()];
    uint64_t value = desc.base_word();
    for (const auto& field : desc.fields) value = field.insert(value, boundary_value(field.width(), rng));
    return {&desc, value};
}

void set_field(Command& c, std::minstd_rand& rng) {
    if (c.desc->fields.empty()) return;
    const auto& field = c.desc->fields[rng() % c.desc->fields.size()];
    c.value = field.insert(c.value, boundary_value(field.width(), rng));
}

void mutate_once(const isa::GenerationDesc& gen, std::vector<Command>& commands, std::minstd_rand& rng,
                 bool keep_size) {
    if (commands.empty()) {
        if (!keep_size) commands.push_back(random_command(gen, rng));
        return;
    }
    const size_t at = rng() % commands.size();
    const size_t other = rng() % commands.size();
    const auto position = commands.begin() + static_cast<ptrdiff_t>(at);
    switch (rng() % (keep_size ? 2 : 5)) {
        case 0: set_field(commands[at], rng); break;
        case 1:
            if (!keep_size || commands[at].desc->words() == commands[other].desc->words())
                std::swap(commands[at], commands[other]);
            break;
        case 2: commands.insert(position, commands[at]); break;
        case 3: commands.erase(position); break;
        default: commands.insert(position, random_command(gen, rng)); break;
    }
}

}  // namespace

uint64_t boundary_value(int width, std::minstd_rand& rng) {
    const uint64_t all_ones = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    switch (rng() % 6) {
        case 0: return 0;
        case 1: return 1;
        case 2: return all_ones;
        case 3: return all_ones >> 1;
        case 4: return (all_ones >> 1) + 1;
        default: return ((uint64_t{rng()} << 32) | rng()) & all_ones;
    }
}

std::optional<std::vector<Command>> split_commands(const isa::GenerationDesc& gen, const std::vector<uint32_t>& words) {
    std::vector<Command> commands;
    try {
        for_each_command(gen, words, "mutator", [&](const RawCommand& c) { commands.push_back({c.desc, c.value}); });
    } catch (const Error&) {
        return std::nullopt;
    }
    return commands;
}

std::vector<uint32_t> join_commands(const std::vector<Command>& commands) {
    std::vector<uint32_t> words;
    for (const Command& c : commands) {
        words.push_back(static_cast<uint32_t>(c.value));
        if (c.desc->words() == 2) words.push_back(static_cast<uint32_t>(c.value >> 32));
    }
    return words;
}

void mutate_commands(const isa::GenerationDesc& gen, std::vector<Command>& commands, std::minstd_rand& rng,
                     bool keep_size) {
    for (unsigned n = 1 + rng() % 3; n > 0; --n) mutate_once(gen, commands, rng, keep_size);
}

}  // namespace ethosu::fuzz
