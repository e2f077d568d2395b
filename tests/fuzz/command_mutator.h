#pragma once
// Mutations of a command stream that work on commands rather than bytes (shared by the run-path
// fuzzers' custom mutators): a register field set to a boundary or random value, commands
// duplicated, dropped, swapped or inserted. A byte-level mutator mostly breaks some word's opcode
// and stops at the decoder; these keep streams decodable and reach the kernels and cost functions
// with the values that break them (0, all ones, the sign bit).

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "emulator/isa/description.h"

namespace ethosu::fuzz {

struct Command {
    const isa::CommandDesc* desc;
    uint64_t value;  // word0 | payload << 32
};

// The words split into commands; nullopt when they do not decode (left to byte-level mutators).
std::optional<std::vector<Command>> split_commands(const isa::GenerationDesc& gen, const std::vector<uint32_t>& words);
std::vector<uint32_t> join_commands(const std::vector<Command>& commands);

// 1 to 3 mutations. keep_size: only those that keep the stream's length (a field's value, a swap of
// two commands of the same length), for streams that sit inside a larger file.
void mutate_commands(const isa::GenerationDesc& gen, std::vector<Command>& commands, std::minstd_rand& rng,
                     bool keep_size);

// 0, 1, all ones, the largest positive and the sign bit alone of a `width`-bit field, or a random value.
uint64_t boundary_value(int width, std::minstd_rand& rng);

}  // namespace ethosu::fuzz
