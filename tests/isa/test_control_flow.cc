// follow_stream on its own (U85 NPU_OP_BRANCH): the executed trace of forward jumps, IFs and loops
// decided by the result-flag callback, the blocks handed to the visitor, where the walk stops,
// and the faults (targets outside the stream or inside a command, loops past the limits) with
// their kinds. Streams of control commands only, so no register needs a value.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/isa/builder.h"
#include "emulator/isa/control_flow.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;

constexpr uint64_t kAlways = 0, kRfTrue = 1;

// A stream of KERNEL_WAITs, BRANCHes and a STOP, with each branch's target patched in afterwards.
struct ControlStream {
    CommandStreamBuilder b{Generation::U85};
    std::vector<std::pair<size_t, uint32_t>> targets;  // (word of the BRANCH, target byte offset)

    uint32_t here() const { return static_cast<uint32_t>(b.words().size() * 4); }
    uint32_t wait() {
        const uint32_t at = here();
        b.emit(Cmd::OP_KERNEL_WAIT);
        return at;
    }
    uint32_t branch(uint64_t condition, uint32_t target) {
        const uint32_t at = here();
        targets.emplace_back(b.words().size(), target);
        b.emit(Cmd::OP_BRANCH, {{Field::OP_BRANCH__branch_cond, condition}});
        return at;
    }
    uint32_t stop() {
        const uint32_t at = here();
        b.emit(Cmd::OP_STOP);
        return at;
    }
    std::vector<uint32_t> words() const {
        std::vector<uint32_t> w = b.words();
        for (const auto& [at, target] : targets) w[at + 1] = target;
        return w;
    }
};

// find_npu_config returns by value: the config is kept, not a reference into a temporary.
const NpuConfig& u85() {
    static const NpuConfig config = *find_npu_config("ethos-u85-256");
    return config;
}

std::vector<uint32_t> offsets(const DecodedStream& s) {
    std::vector<uint32_t> out;
    for (const auto& op : s.ops) out.push_back(op.offset);
    return out;
}

auto never_called = [](const DecodedOp&) -> bool {
    ADD_FAILURE() << "no RF_TRUE branch here";
    return false;
};

TEST(ControlFlow, AnAlwaysBranchSkipsTheCommandsBetween) {
    ControlStream s;
    const uint32_t first = s.wait();
    // The branch is two words (8 bytes); the skipped wait follows it.
    const uint32_t jump = s.branch(kAlways, s.here() + 8 + 4);
    s.wait();
    const uint32_t landing = s.wait();
    const uint32_t end = s.stop();
    std::vector<uint32_t> visited;
    const DecodedStream trace = follow_stream(
        u85(), s.words(), "flow.bin", [&](const DecodedOp& op, std::span<const DecodedOp>) { visited.push_back(op.offset); },
        never_called);
    EXPECT_EQ(offsets(trace), (std::vector<uint32_t>{first, jump, landing, end}));
    EXPECT_EQ(visited, offsets(trace));
    EXPECT_EQ(trace.command_count, 4u);
    for (size_t i = 0; i < trace.ops.size(); ++i) EXPECT_EQ(trace.ops[i].index, static_cast<int>(i));
}

TEST(ControlFlow, AnRfTrueBranchIsTakenWhenTheCallbackSaysSo) {
    for (const bool flag : {false, true}) {
        SCOPED_TRACE(flag);
        ControlStream s;
        const uint32_t branch = s.branch(kRfTrue, s.here() + 8 + 4);  // over one wait
        const uint32_t skipped = s.wait();
        const uint32_t landing = s.stop();
        int asked = 0;
        const DecodedStream trace = follow_stream(
            u85(), s.words(), "flow.bin", [](const DecodedOp&, std::span<const DecodedOp>) {},
            [&](const DecodedOp& op) {
                ++asked;
                EXPECT_EQ(op.offset, branch);
                return flag;
            });
        EXPECT_EQ(asked, 1);
        const std::vector<uint32_t> expected =
            flag ? std::vector<uint32_t>{branch, landing} : std::vector<uint32_t>{branch, skipped, landing};
        EXPECT_EQ(offsets(trace), expected);
    }
}

TEST(ControlFlow, ALoopRunsItsBodyOncePerTakenBackEdge) {
    for (const int passes : {1, 2, 5}) {
        SCOPED_TRACE(passes);
        ControlStream s;
        const uint32_t body = s.wait();
        const uint32_t back = s.branch(kRfTrue, body);
        const uint32_t end = s.stop();
        int taken = 0;
        // The visitor sees each pass's block: the body up to and including the branch.
        std::vector<size_t> block_sizes;
        const DecodedStream trace = follow_stream(
            u85(), s.words(), "flow.bin",
            [&](const DecodedOp& op, std::span<const DecodedOp> block) {
                if (op.offset == body) block_sizes.push_back(block.size());
            },
            [&](const DecodedOp&) { return ++taken < passes; });
        std::vector<uint32_t> expected;
        for (int i = 0; i < passes; ++i) expected.insert(expected.end(), {body, back});
        expected.push_back(end);
        EXPECT_EQ(offsets(trace), expected);
        EXPECT_EQ(block_sizes, std::vector<size_t>(static_cast<size_t>(passes), 2));
        EXPECT_EQ(trace.command_count, static_cast<uint32_t>(2 * passes + 1));
    }
}

// The stream is split into commands up front (branch targets must land on one), but an op is
// decoded only when reached.
TEST(ControlFlow, TheWalkEndsAtTheFirstStopAndDecodesNothingAfterIt) {
    ControlStream s;
    s.wait();
    s.stop();
    s.b.emit(Cmd::OP_ELEMENTWISE);  // reads registers no command wrote: refused where decoded
    const DecodedStream trace = follow_stream(u85(), s.words(), "flow.bin",
                                              [](const DecodedOp&, std::span<const DecodedOp>) {}, never_called);
    EXPECT_EQ(trace.ops.size(), 2u);
    EXPECT_THROW(decode_stream(u85(), s.words(), "flow.bin"), Error);  // a linear decode reaches it
}

Error follow_error(const std::vector<uint32_t>& words, const FollowOptions& options = {}) {
    try {
        follow_stream(u85(), words, "flow.bin", [](const DecodedOp&, std::span<const DecodedOp>) {},
                      [](const DecodedOp&) { return true; }, options);
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "expected an error";
    return Error({}, "none");
}

TEST(ControlFlow, ABranchThatLeadsNowhereIsABranchFault) {
    ControlStream s;
    s.b.emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, 0}});  // a cmd1: its payload word is at 4
    const uint32_t branch = s.branch(kAlways, 0);
    s.stop();
    for (const auto& [target, needle] : std::vector<std::pair<uint32_t, std::string>>{
             {0x6, "not word aligned"}, {0x1000, "past the end"}, {4, "inside a command"}}) {
        SCOPED_TRACE(needle);
        s.targets[0].second = target;
        const Error e = follow_error(s.words());
        EXPECT_EQ(e.kind(), ErrorKind::BranchFault);
        EXPECT_EQ(e.where().offset, branch);
        EXPECT_EQ(e.where().field, "NPU_OP_BRANCH.branch_target");
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(ControlFlow, ALoopPastTheLimitsIsALimitExceeded) {
    ControlStream s;
    s.wait();
    s.branch(kAlways, 0);
    s.stop();
    const Error commands = follow_error(s.words(), {.decode = {}, .max_commands = 1000});
    EXPECT_EQ(commands.kind(), ErrorKind::LimitExceeded);
    EXPECT_NE(std::string(commands.what()).find("after 1000 commands"), std::string::npos) << commands.what();
    const Error ops = follow_error(s.words(), {.decode = {}, .max_commands = 1000, .max_ops = 100});
    EXPECT_EQ(ops.kind(), ErrorKind::LimitExceeded);
    EXPECT_NE(std::string(ops.what()).find("after 100 ops"), std::string::npos) << ops.what();
}

TEST(ControlFlow, AnUnknownOpcodeOnThePathIsMalformed) {
    ControlStream s;
    s.wait();
    std::vector<uint32_t> words = s.words();
    words.push_back(0xFFFF'FFFFu);
    const Error e = follow_error(words);
    EXPECT_EQ(e.kind(), ErrorKind::Malformed);
    EXPECT_EQ(e.where().offset, 4u);
    EXPECT_EQ(e.where().field, "opcode");
}

}  // namespace
}  // namespace ethosu
