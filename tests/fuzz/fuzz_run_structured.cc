// The run path (see run_harness.h) with a mutator of our own that works on commands rather than
// bytes: it sets a register field to a boundary or random value, duplicates, drops or swaps
// commands, or inserts a command of the generation with random fields. A byte-level mutator
// mostly breaks the opcode of some word and stops at the decoder; these keep streams decodable
// and reach the kernels and cost functions with the values that break them (0, all ones, the
// sign bit). One input in four still goes to libFuzzer's own mutators.

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "emulator/isa/decoder.h"
#include "emulator/isa/error.h"
#include "tests/fuzz/run_harness.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using ethosu::RawCommand;

// The stream split into commands, each a 64-bit value (word0 | payload << 32) with its description.
struct Command {
    const ethosu::isa::CommandDesc* desc;
    uint64_t value;
};

bool split(const ethosu::isa::GenerationDesc& gen, const std::vector<uint32_t>& words, std::vector<Command>& out) {
    try {
        ethosu::for_each_command(gen, words, "mutator",
                                 [&](const RawCommand& c) { out.push_back({c.desc, c.value}); });
        return true;
    } catch (const ethosu::Error&) {
        return false;  // not decodable: left to the byte-level mutators
    }
}

uint64_t boundary_value(const ethosu::isa::FieldDesc& field, std::minstd_rand& rng) {
    const int width = field.width();
    const uint64_t all_ones = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    switch (rng() % 6) {
        case 0: return 0;
        case 1: return 1;
        case 2: return all_ones;
        case 3: return all_ones >> 1;  // the largest positive value of a signed field
        case 4: return (all_ones >> 1) + 1;  // the sign bit alone
        default: return ((uint64_t{rng()} << 32) | rng()) & all_ones;
    }
}

Command random_command(const ethosu::isa::GenerationDesc& gen, std::minstd_rand& rng) {
    const auto& desc = gen.commands[rng() % gen.commands.size()];
    uint64_t value = desc.base_word();
    for (const auto& field : desc.fields) value = field.insert(value, boundary_value(field, rng));
    return {&desc, value};
}

void mutate(const ethosu::isa::GenerationDesc& gen, std::vector<Command>& commands, std::minstd_rand& rng) {
    const size_t at = commands.empty() ? 0 : rng() % commands.size();
    switch (commands.empty() ? 4 : rng() % 5) {
        case 0: {  // one field of one command
            Command& c = commands[at];
            if (c.desc->fields.empty()) break;
            const auto& field = c.desc->fields[rng() % c.desc->fields.size()];
            c.value = field.insert(c.value, boundary_value(field, rng));
            break;
        }
        case 1: commands.insert(commands.begin() + static_cast<ptrdiff_t>(at), commands[at]); break;
        case 2: commands.erase(commands.begin() + static_cast<ptrdiff_t>(at)); break;
        case 3: std::swap(commands[at], commands[rng() % commands.size()]); break;
        default:
            commands.insert(commands.begin() + static_cast<ptrdiff_t>(at), random_command(gen, rng));
            break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    ethosu::fuzz::seed_empty_corpus(*argc, *argv);
    return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
    std::minstd_rand rng(seed);
    if (size < 5 || rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
    const auto configs = ethosu::all_npu_configs();
    const auto& gen = ethosu::isa::describe(configs[data[0] % configs.size()].generation);
    std::vector<uint32_t> words((size - 1) / 4);
    std::memcpy(words.data(), data + 1, words.size() * 4);
    std::vector<Command> commands;
    if (!split(gen, words, commands)) return LLVMFuzzerMutate(data, size, max_size);
    for (unsigned n = 1 + rng() % 3; n > 0; --n) mutate(gen, commands, rng);
    words.clear();
    for (const Command& c : commands) {
        words.push_back(static_cast<uint32_t>(c.value));
        if (c.desc->words() == 2) words.push_back(static_cast<uint32_t>(c.value >> 32));
    }
    const size_t bytes = std::min(words.size() * 4, (max_size - 1) / 4 * 4);
    std::memcpy(data + 1, words.data(), bytes);
    return 1 + bytes;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ethosu::fuzz::run_example_with_stream(data, size);
    return 0;
}
