#pragma once
// Encodes commands from the description: the project's own way to write command streams
// (table tests, hand-built vectors, the bundled default model).

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "emulator/isa/description.h"

namespace ethosu {

class CommandStreamBuilder {
public:
    explicit CommandStreamBuilder(Generation generation);

    // Appends cmd with the given field values (unlisted fields are 0). Throws
    // std::invalid_argument for a command or field the generation lacks, or a value too wide.
    CommandStreamBuilder& emit(isa::Cmd cmd, std::initializer_list<std::pair<isa::Field, uint64_t>> fields = {});

    const std::vector<uint32_t>& words() const { return words_; }
    const isa::GenerationDesc& generation() const { return gen_; }

private:
    const isa::GenerationDesc& gen_;
    std::vector<uint32_t> words_;
};

// Encodes one command to its 64-bit value (word0 | payload << 32).
uint64_t encode_command(const isa::GenerationDesc& gen, isa::Cmd cmd,
                        std::initializer_list<std::pair<isa::Field, uint64_t>> fields);

}  // namespace ethosu
