#pragma once
// Walks a register command stream as the NPU reads it: keeps the sticky register file
// (Vela drops writes whose value is unchanged) and freezes a DecodedOp at every NPU_OP_*.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "emulator/isa/decoded_op.h"

namespace ethosu {

namespace isa {  // description.h
struct CommandDesc;
struct GenerationDesc;
}  // namespace isa

// One command as read from the stream.
struct RawCommand {
    uint32_t offset = 0;  // byte offset in the stream
    const isa::CommandDesc* desc = nullptr;
    uint64_t value = 0;   // word0 | payload << 32

    uint16_t param() const { return static_cast<uint16_t>(value >> 16); }
    uint32_t payload() const { return static_cast<uint32_t>(value >> 32); }
};

// Calls visit for each command in order. Throws ethosu::Error naming source, byte offset and
// field for an opcode the generation does not define or a cmd1 cut off at the end.
void for_each_command(const isa::GenerationDesc& gen, std::span<const uint32_t> words, const std::string& source,
                      const std::function<void(const RawCommand&)>& visit);

struct DecodeOptions {
    // An op that reads a register the stream never wrote is an error naming the register and the
    // op's offset. Lenient: a warning instead, and the register reads 0 (Vela streams write every
    // register an op reads, all versions: see tests/engine/test_conformance.cc).
    bool lenient = false;
};

struct DecodedStream {
    Generation generation = Generation::U55;
    uint32_t command_count = 0;
    std::vector<DecodedOp> ops;
    std::vector<std::string> warnings;  // e.g. registers read before any write
};

class Decoder {
public:
    Decoder(const NpuConfig& config, std::string source, DecodeOptions options = {});

    // Applies one command; returns true and fills op when the command is an NPU_OP_*.
    bool apply(const RawCommand& command, DecodedOp& op);

    std::vector<std::string>& warnings() { return warnings_; }

    // The sticky register file: what a branch carries to the block it enters.
    struct State {
        std::array<uint64_t, isa::kCmdCount> registers{};
        std::array<bool, isa::kCmdCount> written{};
        bool operator==(const State&) const = default;
    };
    State state() const { return {registers_, written_}; }
    // Continues at `offset` (a branch target or fall-through) with the registers of `state`.
    void enter(uint32_t offset, const State& state);

private:
    struct OpDecoder;  // one decode_<kind> per op kind (decoder.cc)
    void freeze(const RawCommand& command, DecodedOp& op);
    void refuse_unset_registers(const RawCommand& command, const DecodedOp& op);
    void warn_undetermined_average_scale(const DecodedOp& op);

    NpuConfig config_;
    const isa::GenerationDesc& gen_;
    std::string source_;
    DecodeOptions options_;
    std::array<uint64_t, isa::kCmdCount> registers_{};
    std::array<bool, isa::kCmdCount> written_{};
    int op_index_ = 0;
    uint32_t fetch_start_ = 0;  // where the commands leading to the next op start
    std::vector<std::string> warnings_;
};

// The configuration matters beyond the generation: U85 reads one weight stream per decoder.
DecodedStream decode_stream(const NpuConfig& config, std::span<const uint32_t> words, const std::string& source,
                            const DecodeOptions& options = {});
// The same walk handing each op to visit instead of keeping it (the result's ops stay empty).
DecodedStream decode_stream(const NpuConfig& config, std::span<const uint32_t> words, const std::string& source,
                            const std::function<void(DecodedOp&)>& visit, const DecodeOptions& options = {});

}  // namespace ethosu
