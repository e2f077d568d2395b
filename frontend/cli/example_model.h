#pragma once
// The bundled example: a small network written by the project's own command-stream
// builder, so the README's first command needs no outside data.

#include <cstdint>
#include <span>
#include <vector>

namespace ethosu {

inline constexpr const char* kExampleDescription =
    "ethos-u55-128: 2x2 average pool 16x16x16 -> 8x8x16 int8, then ADD with a broadcast scalar";

// The COP1 driver payload (header + command stream) of the example.
std::vector<uint8_t> build_example_payload();

// The example as an ExecuTorch vela_bin_stream: payload, scratch size, the input
// (16x16x16 int8 at scratch offset 0) and the output (8x8x16 int8 at 0x1400).
std::vector<uint8_t> build_example_model();

// Wraps a command stream in a COP1 driver payload as Vela writes it.
std::vector<uint8_t> make_cop1_payload(uint32_t config_word, uint32_t id_word, std::span<const uint32_t> stream);

}  // namespace ethosu
