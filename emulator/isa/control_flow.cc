#include "emulator/isa/control_flow.h"

#include <fmt/format.h>

#include <functional>
#include <iterator>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "emulator/isa/description.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// One straight-line run of commands: from its entry up to and including a BRANCH or STOP, or to
// the end of the stream. Its ops are kept once, in the trace, where its first execution put them.
struct Block {
    size_t first = 0;       // position of its first op in the trace
    size_t count = 0;       // ops in the block
    size_t end = 0;         // index of the command after the block
    uint64_t commands = 0;  // commands in the block
    Decoder::State exit;    // the registers after its last command
};

bool ends_block(OpKind kind) { return kind == OpKind::Branch || kind == OpKind::Stop; }

// A block is known by where it starts and the registers it starts with. Hashed, not ordered: a
// loop looks its block up once per iteration, and ordering compares the 130 registers one by one.
using BlockKey = std::pair<size_t, Decoder::State>;
struct BlockKeyHash {
    size_t operator()(const BlockKey& key) const {
        const auto bytes = [](const auto& array) {
            return std::string_view(reinterpret_cast<const char*>(array.data()), sizeof(array));
        };
        const std::hash<std::string_view> hash;
        size_t h = hash(bytes(key.second.registers));
        h = h * 31 + hash(bytes(key.second.written));
        return h * 31 + key.first;
    }
};

}  // namespace

DecodedStream follow_stream(const NpuConfig& config, std::span<const uint32_t> words, const std::string& source,
                            const OpVisitor& visit, const ResultFlag& result_flag, const FollowOptions& options) {
    // Every command and where it starts: a branch may only land on a command's first word.
    std::vector<RawCommand> commands;
    for_each_command(isa::describe(config.generation), words, source,
                     [&](const RawCommand& c) { commands.push_back(c); });
    std::vector<int64_t> command_at(words.size(), -1);  // word index -> command index
    for (size_t i = 0; i < commands.size(); ++i) command_at[commands[i].offset / 4] = static_cast<int64_t>(i);

    DecodedStream trace;
    trace.generation = config.generation;
    // Decodes the block entered at command `entry` with `state`, its ops into `ops`.
    auto decode_block = [&](size_t entry, const Decoder::State& state, std::vector<DecodedOp>& ops) {
        Block block;
        Decoder decoder(config, source, options.decode);
        decoder.enter(commands[entry].offset, state);
        size_t at = entry;
        while (at < commands.size()) {
            DecodedOp op;
            const bool is_op = decoder.apply(commands[at++], op);
            if (!is_op) continue;
            const OpKind kind = op.kind;
            ops.push_back(std::move(op));
            if (ends_block(kind)) break;
        }
        block.count = ops.size();
        block.end = at;
        block.commands = at - entry;
        block.exit = decoder.state();
        const auto& warnings = decoder.warnings();
        trace.warnings.insert(trace.warnings.end(), warnings.begin(), warnings.end());
        return block;
    };

    std::unordered_map<BlockKey, Block, BlockKeyHash> blocks;
    Decoder::State state;  // a fresh decoder's: nothing written
    size_t pc = 0;
    uint64_t executed = 0;
    std::optional<uint32_t> last_jump;  // offset of the branch that last jumped, for the runaway report
    std::vector<DecodedOp> decoded;
    while (pc < commands.size()) {
        auto key = std::make_pair(pc, state);
        auto found = blocks.find(key);
        const bool fresh = found == blocks.end();
        decoded.clear();
        if (fresh) found = blocks.emplace(std::move(key), decode_block(pc, state, decoded)).first;
        Block& block = found->second;
        executed += block.commands;
        if (executed > options.max_commands || trace.ops.size() + block.count > options.max_ops) {
            const uint32_t offset = last_jump ? *last_jump : commands[pc].offset;
            const std::string limit = executed > options.max_commands
                                          ? fmt::format("{} commands", options.max_commands)
                                          : fmt::format("{} ops", options.max_ops);
            throw Error({source, offset, last_jump ? "NPU_OP_BRANCH" : std::string(commands[pc].desc->name), OffsetKind::Command},
                        fmt::format("the stream is still running after {} (the limit): a branch loop that never "
                                    "ends? It last jumped from here to 0x{:x}",
                                    limit, commands[pc].offset),
                        ErrorKind::LimitExceeded);
        }
        trace.command_count += static_cast<uint32_t>(block.commands);
        // This execution's ops: the decoded ones moved in, or a copy of the block's first execution.
        const size_t first = trace.ops.size();
        if (fresh) {
            block.first = first;
            if (trace.ops.empty()) trace.ops = std::move(decoded);
            else trace.ops.insert(trace.ops.end(), std::make_move_iterator(decoded.begin()),
                                  std::make_move_iterator(decoded.end()));
        } else {
            // push_back copies an element of the same vector safely, and grows it geometrically.
            for (size_t i = 0; i < block.count; ++i) trace.ops.push_back(trace.ops[block.first + i]);
        }
        const std::span<const DecodedOp> executing(trace.ops.data() + first, block.count);
        for (size_t i = first; i < trace.ops.size(); ++i) trace.ops[i].index = static_cast<int>(i);
        for (const DecodedOp& op : executing) visit(op, executing);
        if (executing.empty() || executing.back().kind != OpKind::Branch) break;  // STOP or the end

        const DecodedOp& branch = executing.back();
        const uint32_t target = branch.branch().target;
        const char* fault = target % 4 != 0                   ? "not word aligned"
                            : target / 4 >= words.size()        ? "past the end of the stream"
                            : command_at[target / 4] < 0 ? "inside a command, not at its first word"
                                                         : nullptr;
        if (fault) {
            throw Error({source, branch.offset, "NPU_OP_BRANCH.branch_target", OffsetKind::Command},
                        fmt::format("branch target 0x{:x} is {} (the stream has {} bytes)", target, fault,
                                    words.size() * 4),
                        ErrorKind::BranchFault);
        }
        const bool taken = branch.branch().condition == BranchCondition::Always || result_flag(branch);
        state = block.exit;
        if (taken) {
            pc = static_cast<size_t>(command_at[target / 4]);
            last_jump = branch.offset;
        } else {
            pc = block.end;
        }
    }
    return trace;
}

}  // namespace ethosu
