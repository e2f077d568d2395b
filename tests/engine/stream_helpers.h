#pragma once
// What the engine tests share to build and run command streams: register field codes and a run
// on the test memory (SRAM, weights and LUT tables at fixed regions).

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/decoder.h"
#include "emulator/memory/address_space.h"

namespace ethosu::test_streams {

inline constexpr int kSramRegion = 1;
inline constexpr int kWeightRegion = 2;
inline constexpr int kLutRegion = 3;
inline constexpr uint64_t kSramAddress = 0x1000'0000, kWeightAddress = 0x2000'0000, kLutAddress = 0x3000'0000;

inline uint64_t precision_code(const Precision& p) { return p.bits == 8 ? 0 : p.bits == 16 ? 1 : p.bits == 32 ? 2 : 3; }
inline uint64_t format_code(DataFormat f) { return f == DataFormat::NHCWB16 ? 1 : 0; }
inline uint64_t round_code(RoundMode r) { return r == RoundMode::Truncate ? 1 : r == RoundMode::Natural ? 2 : 0; }
inline uint64_t u16(int64_t v) { return static_cast<uint16_t>(v); }
inline uint64_t align16(uint64_t v) { return (v + 15) / 16 * 16; }

// Appends bytes to a memory image at the next 16-byte boundary; returns where they start.
inline uint64_t append_aligned(std::vector<uint8_t>& image, const std::vector<uint8_t>& bytes) {
    const uint64_t at = align16(image.size());
    image.resize(at);
    image.insert(image.end(), bytes.begin(), bytes.end());
    return at;
}

// Runs the stream, with a STOP appended, on an Executor over the test memory (with `limits`); the
// weight and LUT images are mapped when not empty.
inline void run_on_test_memory(const NpuConfig& config, const CommandStreamBuilder& stream, std::vector<uint8_t>& sram,
                               std::vector<uint8_t>& weights, std::vector<uint8_t>& luts, const std::string& source,
                               const WorkLimits& limits = {}) {
    CommandStreamBuilder stop(config.generation);
    stop.emit(isa::Cmd::OP_STOP, {{isa::Field::OP_STOP__mask, 0xFFFF}});
    std::vector<uint32_t> words = stream.words();
    words.insert(words.end(), stop.words().begin(), stop.words().end());
    MemoryMap map;
    AddressSpace space(map);
    map.map(kSramAddress, sram, "sram");
    space.set_base(kSramRegion, kSramAddress);
    if (!weights.empty()) map.map(kWeightAddress, weights, "weights");
    space.set_base(kWeightRegion, kWeightAddress);
    if (!luts.empty()) map.map(kLutAddress, luts, "luts");
    space.set_base(kLutRegion, kLutAddress);
    const DecodedStream decoded = decode_stream(config, words, source);
    Executor(config, space, source, nullptr, limits).run(decoded);
}

}  // namespace ethosu::test_streams
