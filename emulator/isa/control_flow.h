#pragma once
// Following a command stream the way the NPU's command processor does, branches included
// (U85 NPU_OP_BRANCH). A branch target is a byte offset in the stream; RF_TRUE branches depend
// on COND_STATUS, which the data decides, so the path is only known while running. The stream
// is cut into straight-line blocks (from an entry offset up to a BRANCH, STOP or the end), each
// decoded once per entry offset and incoming register state into immutable DecodedOp records;
// the sticky registers carry across a branch as on the hardware.

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "emulator/isa/decoder.h"

namespace ethosu {

struct FollowOptions {
    DecodeOptions decode;
    // Commands executed before the run is stopped as a loop that never ends (the largest corpus
    // stream has about 5000).
    uint64_t max_commands = uint64_t{1} << 22;
    // Ops in the executed trace (a record of under 1 KB each), so that a tight loop cannot
    // exhaust memory before max_commands stops it.
    uint64_t max_ops = uint64_t{1} << 17;
};

// Called for every op executed, in order, before the walk decides what comes next, with the
// straight-line block it belongs to as executed this time (op is one of its elements): what will
// run next unless a branch intervenes, for a visitor that prepares ahead.
using OpVisitor = std::function<void(const DecodedOp& op, std::span<const DecodedOp> block)>;
// Decides an RF_TRUE branch: COND_STATUS.result_flag as the ops executed before it left it.
using ResultFlag = std::function<bool(const DecodedOp& branch)>;

// Runs the stream from offset 0 to its first executed STOP (or its end). Returns the executed ops
// in order, a loop's ops once per iteration, each with its position in that trace as index;
// command_count is the commands executed.
// Throws ethosu::Error naming source, offset and field for a command the decoder refuses, a taken
// or reached branch whose target is outside the stream or not on a command boundary, and a run
// past options.max_commands or options.max_ops (naming the branch that last jumped).
DecodedStream follow_stream(const NpuConfig& config, std::span<const uint32_t> words, const std::string& source,
                            const OpVisitor& visit, const ResultFlag& result_flag, const FollowOptions& options = {});

}  // namespace ethosu
