// U85 NPU_OP_BRANCH on hand-built streams: a forward branch skipping work, an IF (RF_TRUE then
// ALWAYS, as Vela 5.1 emits it) on both outcomes of COND_STATUS, a loop run N times, the cycles
// of each against derivations, the disassembler's targets, and hostile branches.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/engine/timing/timing_model.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/control_flow.h"
#include "emulator/isa/disasm.h"
#include "emulator/isa/error.h"
#include "frontend/runner/run_model.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;

constexpr uint64_t kSramBase = 0x1000'0000, kOutBase = 0x2000'0000;
constexpr int kSramRegion = 1, kOutRegion = 2;
constexpr uint64_t kModeAdd = 1, kModeShr = 8;
constexpr uint64_t kBroadcastScalar = 8;
constexpr uint64_t kRfTrue = 1, kAlways = 0;
constexpr uint64_t kMicroblock1x2 = 1;  // one of U85-256's (the timing model checks)

// A 1x1x1 int8 elementwise op on SRAM: OFM = IFM <mode> scalar, unit scales.
void emit_scalar_op(CommandStreamBuilder& b, uint64_t mode, uint64_t ifm, uint64_t ofm, int32_t scalar) {
    b.emit(Cmd::SET_IFM_SCALE, {{Field::SET_IFM_SCALE__scale, 1}})
        .emit(Cmd::SET_IFM2_SCALE, {{Field::SET_IFM2_SCALE__scale, 1}})
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}})
        .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1}})
        .emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, kSramRegion}})
        .emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, ifm}})
        .emit(Cmd::SET_IFM_BASE1).emit(Cmd::SET_IFM_BASE2).emit(Cmd::SET_IFM_BASE3)
        .emit(Cmd::SET_IFM_HEIGHT0_M1).emit(Cmd::SET_IFM_HEIGHT1_M1).emit(Cmd::SET_IFM_WIDTH0_M1)
        .emit(Cmd::SET_IFM_DEPTH_M1)
        .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, 1}})
        .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, 1}})
        .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_IFM_ZERO_POINT)
        .emit(Cmd::SET_IFM_BROADCAST)
        .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                       {Field::SET_OFM_PRECISION__scale_mode, 1}})
        .emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, kSramRegion}})
        .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, ofm}})
        .emit(Cmd::SET_OFM_BASE1).emit(Cmd::SET_OFM_BASE2).emit(Cmd::SET_OFM_BASE3)
        .emit(Cmd::SET_OFM_HEIGHT_M1).emit(Cmd::SET_OFM_WIDTH_M1)
        .emit(Cmd::SET_OFM_HEIGHT0_M1).emit(Cmd::SET_OFM_HEIGHT1_M1).emit(Cmd::SET_OFM_WIDTH0_M1)
        .emit(Cmd::SET_OFM_DEPTH_M1)
        .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, 1}})
        .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, 1}})
        .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_OFM_ZERO_POINT)
        .emit(Cmd::SET_ACTIVATION)
        .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, 0xFF80}})  // -128
        .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, 127}})
        .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, 1}})
        .emit(Cmd::SET_IFM2_ZERO_POINT)
        .emit(Cmd::SET_IFM2_BROADCAST, {{Field::SET_IFM2_BROADCAST__broadcast_mode, kBroadcastScalar}})
        .emit(Cmd::SET_OP_SCALAR, {{Field::SET_OP_SCALAR__scalar, static_cast<uint32_t>(scalar)}})
        .emit(Cmd::SET_OFM_BLK_HEIGHT_M1).emit(Cmd::SET_OFM_BLK_WIDTH_M1).emit(Cmd::SET_OFM_BLK_DEPTH_M1)
        .emit(Cmd::SET_ACC_FORMAT, {{Field::SET_ACC_FORMAT__microblock, kMicroblock1x2}})
        .emit(Cmd::SET_BLOCKDEP)
        .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, mode}});
}

// A 1D copy of `length` bytes from SRAM offset src to the output region at dst.
void emit_copy(CommandStreamBuilder& b, uint64_t src, uint64_t dst, uint64_t length) {
    b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, kSramRegion}})
        .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, src}})
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__region, kOutRegion}})
        .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, dst}})
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, length}})
        .emit(Cmd::OP_DMA_START);
}

// Branches are emitted with target 0 and pointed at their labels once the stream is complete.
struct Program {
    CommandStreamBuilder b{Generation::U85};
    std::vector<std::pair<size_t, std::string>> branches;  // (word of the BRANCH, label)
    std::map<std::string, uint32_t> labels;

    uint32_t here() const { return static_cast<uint32_t>(b.words().size() * 4); }
    void label(const std::string& name) { labels[name] = here(); }
    void branch(uint64_t condition, const std::string& to) {
        branches.emplace_back(b.words().size(), to);
        b.emit(Cmd::OP_BRANCH, {{Field::OP_BRANCH__branch_cond, condition}});
    }
    // Vela drains the NPU before every branch.
    void drain() { b.emit(Cmd::OP_KERNEL_WAIT).emit(Cmd::OP_DMA_WAIT); }
    std::vector<uint32_t> words() const {
        std::vector<uint32_t> w = b.words();
        for (const auto& [at, to] : branches) w[at + 1] = labels.at(to);
        return w;
    }
};

struct Machine {
    Machine() : config(*find_npu_config("ethos-u85-256")), space(map) {
        sram = map.allocate(kSramBase, 0x100, "sram");
        out = map.allocate(kOutBase, 0x100, "out");
        for (size_t i = 0; i < sram.size(); ++i) sram[i] = static_cast<uint8_t>(i);
        std::fill(out.begin(), out.end(), 0);
        space.set_base(kSramRegion, kSramBase);
        space.set_base(kOutRegion, kOutBase);
    }
    DecodedStream run(const std::vector<uint32_t>& words, const FollowOptions& options = {}) {
        Executor executor(config, space, "branch.bin");
        return executor.run(words, options);
    }
    TimingResult time(const DecodedStream& trace) const {
        const MemorySystem memory = make_memory_system(config, {});
        return TimingModel(config, memory, region_memories(memory, {}), "test.bin").run(trace);
    }

    NpuConfig config;
    MemoryMap map;
    AddressSpace space;
    std::span<uint8_t> sram, out;
};

int8_t at(std::span<const uint8_t> bytes, uint64_t offset) { return static_cast<int8_t>(bytes[offset]); }

// DMA (9 command words: SRC_REGION, SRC and DST (two each), DST_REGION, LEN (two), DMA_START)
// issues at cycle 9 and runs D cycles; DMA_WAIT holds the command processor until 9 + D; the
// BRANCH's two words take it to 9 + D + 2; the skipped DMA costs nothing and STOP's word ends the
// stream at D + 12, after 9 + 1 + 2 + 1 = 13 command words.
TEST(Branch, ForwardBranchSkipsAnOp) {
    Program p;
    emit_copy(p.b, 0x10, 0x00, 16);
    p.b.emit(Cmd::OP_DMA_WAIT);
    p.branch(kAlways, "end");
    emit_copy(p.b, 0x40, 0x20, 16);  // skipped
    p.label("end");
    p.b.emit(Cmd::OP_STOP);

    Machine m;
    const DecodedStream trace = m.run(p.words());
    for (int i = 0; i < 16; ++i) EXPECT_EQ(m.out[static_cast<size_t>(i)], 0x10 + i);
    for (int i = 0x20; i < 0x30; ++i) EXPECT_EQ(m.out[static_cast<size_t>(i)], 0) << "the skipped DMA ran";
    ASSERT_EQ(trace.ops.size(), 4u);  // DMA, DMA_WAIT, BRANCH, STOP
    EXPECT_EQ(trace.ops[3].offset, p.labels.at("end"));

    const TimingResult t = m.time(trace);
    const MemorySystem memory = make_memory_system(m.config, {});
    const CostContext ctx{m.config, memory, region_memories(memory, {}), "test.bin"};
    const int64_t dma = u85_dma_cycles(DecodedOp{}, ctx, ctx.memory_of(kSramRegion), ctx.memory_of(kOutRegion), 16);
    EXPECT_EQ(t.ops[0].start, 9);
    EXPECT_EQ(t.ops[0].end, 9 + dma);
    EXPECT_EQ(t.totals.command_words, 13);
    EXPECT_EQ(t.totals.cycles, dma + 12);
}

// IF as Vela emits it: the condition op, a drain, BRANCH RF_TRUE -> then, BRANCH ALWAYS -> else;
// the then-block ends with BRANCH ALWAYS -> end. The condition is a 1-element ADD of the input
// and 0, so COND_STATUS.result_flag is the input's bit 0.
Program if_program() {
    Program p;
    emit_scalar_op(p.b, kModeAdd, 0x80, 0x81, 0);
    p.drain();
    p.branch(kRfTrue, "then");
    p.branch(kAlways, "else");
    p.label("then");
    emit_copy(p.b, 0x10, 0x00, 8);
    p.drain();
    p.branch(kAlways, "end");
    p.label("else");
    emit_copy(p.b, 0x20, 0x00, 8);
    p.label("end");
    p.b.emit(Cmd::OP_STOP);
    return p;
}

TEST(Branch, IfTakesEitherBlockOnTheResultFlag) {
    const Program p = if_program();

    for (const int input : {6, 7, -3}) {
        SCOPED_TRACE(input);
        Machine m;
        m.sram[0x80] = static_cast<uint8_t>(input);
        const DecodedStream trace = m.run(p.words());
        const bool odd = (input & 1) != 0;
        const uint8_t first = odd ? 0x10 : 0x20;
        for (int i = 0; i < 8; ++i) EXPECT_EQ(m.out[static_cast<size_t>(i)], first + i);
        // then: ADD, 2 waits, BRANCH, DMA, 2 waits, BRANCH, STOP; else: ADD, 2 waits, 2 BRANCHes, DMA, STOP.
        EXPECT_EQ(trace.ops.size(), odd ? 9u : 7u);
        const TimingResult t = m.time(trace);
        EXPECT_EQ(t.ops.size(), trace.ops.size());
        // Every command word on the path is read once; the other block's are not.
        const int64_t to_then = p.labels.at("then") / 4, then_words = (p.labels.at("else") - p.labels.at("then")) / 4;
        const int64_t else_words = (p.labels.at("end") - p.labels.at("else")) / 4;
        EXPECT_EQ(t.totals.command_words, odd ? to_then - 2 + then_words + 1 : to_then + else_words + 1);
    }
}

// A counting loop: ADD 1 to sram[0x90], SHR sram[0x91] by 1, drain, BRANCH RF_TRUE back, STOP.
Program loop_program() {
    Program p;
    p.label("loop");
    emit_scalar_op(p.b, kModeAdd, 0x90, 0x90, 1);
    emit_scalar_op(p.b, kModeShr, 0x91, 0x91, 1);
    p.drain();
    p.branch(kRfTrue, "loop");
    p.label("stop");
    p.b.emit(Cmd::OP_STOP);
    return p;
}

// A loop run N times: the body adds 1 to a counter and shifts a mask right by one; the mask
// starts as N one bits, so the SHR's 1-element OFM is odd (result_flag set) after iterations
// 1..N-1 and 0 after the N-th, when BRANCH RF_TRUE falls through to STOP. The body is the whole
// stream before STOP, entered at 0 every time and drained before its branch, so every iteration
// reads the same words and lasts the same P cycles: N iterations take N * P + 1 (STOP) cycles,
// and N * (STOP offset / 4) + 1 command words.
TEST(Branch, LoopRunsNTimes) {
    const Program p = loop_program();
    const int64_t body_words = p.labels.at("stop") / 4;

    int64_t period = 0;
    for (const int n : {1, 2, 5, 7}) {
        SCOPED_TRACE(n);
        Machine m;
        m.sram[0x90] = 0;
        m.sram[0x91] = static_cast<uint8_t>((1 << n) - 1);
        const DecodedStream trace = m.run(p.words());
        EXPECT_EQ(at(m.sram, 0x90), n);
        EXPECT_EQ(at(m.sram, 0x91), 0);
        EXPECT_EQ(trace.ops.size(), 5u * static_cast<size_t>(n) + 1);
        const TimingResult t = m.time(trace);
        EXPECT_EQ(t.totals.command_words, n * body_words + 1);
        if (n == 1) period = t.totals.cycles - 1;
        EXPECT_EQ(t.totals.cycles, n * period + 1);
    }
    EXPECT_GT(period, body_words);  // the drains wait for the kernel ops
}

// follow_stream hands each op the block it runs in, as this execution put it in the trace: the
// visitor can look ahead to the BRANCH (or STOP) that ends it, and a loop's second pass is a
// block of its own, decoded once but recorded at its own place in the trace.
TEST(Branch, EachOpIsVisitedWithTheBlockItRunsIn) {
    const Program p = loop_program();
    const NpuConfig config = *find_npu_config("ethos-u85-256");
    int taken = 0;
    std::vector<std::pair<size_t, size_t>> blocks;  // (trace index of the block's first op, its size)
    std::vector<OpKind> visited;
    const auto visit = [&](const DecodedOp& op, std::span<const DecodedOp> block) {
        ASSERT_FALSE(block.empty());
        ASSERT_TRUE(&op >= block.data() && &op < block.data() + block.size());
        if (&op == block.data()) blocks.emplace_back(static_cast<size_t>(op.index), block.size());
        EXPECT_EQ(op.index, blocks.back().first + static_cast<size_t>(&op - block.data()));
        visited.push_back(op.kind);
    };
    const DecodedStream trace =
        follow_stream(config, p.words(), "loop.bin", visit, [&](const DecodedOp&) { return ++taken < 3; });
    // Three passes of ADD, SHR, KERNEL_WAIT, DMA_WAIT, BRANCH, then STOP on its own.
    const std::vector<std::pair<size_t, size_t>> expected = {{0, 5}, {5, 5}, {10, 5}, {15, 1}};
    EXPECT_EQ(blocks, expected);
    ASSERT_EQ(trace.ops.size(), 16u);
    for (size_t i = 0; i < trace.ops.size(); ++i) {
        EXPECT_EQ(trace.ops[i].index, static_cast<int>(i));
        EXPECT_EQ(trace.ops[i].kind, visited[i]);
        if (i < 15) {
            EXPECT_EQ(trace.ops[i].offset, trace.ops[i % 5].offset);  // each pass runs the same commands
        }
    }
    EXPECT_EQ(trace.ops[4].kind, OpKind::Branch);
    EXPECT_EQ(trace.ops[15].kind, OpKind::Stop);
}

// A model whose NPU work is one stream over two 0x100-byte scratch regions (1 and 2).
LoadedModel model_of(const std::vector<uint32_t>& words) {
    LoadedModel model;
    model.path = "branch.tflite";
    model.config = *find_npu_config("ethos-u85-256");
    NpuInvocation inv;
    inv.stream.words = words;
    inv.regions = {{kSramRegion, RegionRole::Scratch, 0x100, {}, {}}, {kOutRegion, RegionRole::Scratch, 0x100, {}, {}}};
    model.invocations.push_back(std::move(inv));
    return model;
}

// run_model executes the IF (zero-filled scratch: the condition is even, the else-block runs)
// and times what ran; a timing-only run cannot know the condition and says so at the branch.
// ALWAYS branches need no data: timing-only and full runs agree on them.
TEST(Branch, RunModelFollowsBranchesAndTimingOnlyRunsRefuseRfTrue) {
    const Program p = if_program();
    const LoadedModel model = model_of(p.words());
    RunOptions timing_only;
    timing_only.pipeline.execute = false;
    const RunResult full = run_model(model, {});
    ASSERT_EQ(full.streams.at(0).ops.size(), 7u);
    EXPECT_EQ(full.timing.at(0).ops.size(), 7u);
    try {
        run_model(model, {}, timing_only);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, p.branches[0].first * 4);
        EXPECT_EQ(e.where().field, "NPU_OP_BRANCH.branch_cond");
    }

    Program skip;
    emit_copy(skip.b, 0x10, 0x00, 16);
    skip.branch(kAlways, "end");
    emit_copy(skip.b, 0x40, 0x20, 16);
    skip.label("end");
    skip.b.emit(Cmd::OP_STOP);
    const LoadedModel always = model_of(skip.words());
    const RunResult executed = run_model(always, {});
    const RunResult timed = run_model(always, {}, timing_only);
    EXPECT_EQ(timed.streams.at(0).ops.size(), 3u);
    EXPECT_EQ(timed.timing.at(0).totals.cycles, executed.timing.at(0).totals.cycles);
}

// RF_TRUE after a kernel op whose OFM is not one element reads an unpredictable flag.
TEST(Branch, ResultFlagAfterALargerOfmIsRefused) {
    Program p;
    emit_scalar_op(p.b, kModeAdd, 0x80, 0x81, 0);
    p.b.emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, 3}})
        .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, 3}})
        .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, kModeAdd}});
    const uint32_t branch_offset = p.here();
    p.label("end");
    p.branch(kRfTrue, "end");
    p.b.emit(Cmd::OP_STOP);
    Machine m;
    try {
        m.run(p.words());
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, branch_offset);
        EXPECT_EQ(e.where().field, "NPU_OP_BRANCH.branch_cond");
        EXPECT_NE(std::string(e.what()).find("4 elements"), std::string::npos) << e.what();
    }
}

// Before any kernel op COND_STATUS holds its reset value 0: RF_TRUE falls through.
TEST(Branch, ResultFlagStartsClear) {
    Program p;
    p.branch(kRfTrue, "skip");
    emit_copy(p.b, 0x10, 0x00, 4);
    p.label("skip");
    p.b.emit(Cmd::OP_STOP);
    Machine m;
    m.run(p.words());
    EXPECT_EQ(m.out[0], 0x10);
}

void expect_branch_error(const std::vector<uint32_t>& words, uint32_t offset, const std::string& field,
                         const std::string& needle, const FollowOptions& options = {}) {
    Machine m;
    try {
        m.run(words, options);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "branch.bin");
        EXPECT_EQ(e.where().offset, offset);
        EXPECT_EQ(e.where().field, field);
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(Branch, TargetsOutsideTheStreamOrInsideACommandAreRefused) {
    Program p;
    emit_copy(p.b, 0x10, 0x00, 4);  // SET_DMA0_SRC is a cmd1 at 4: its payload word is at 8
    p.branch(kAlways, "target");
    p.b.emit(Cmd::OP_STOP);
    const uint32_t at = static_cast<uint32_t>(p.branches[0].first * 4);
    for (const auto& [target, needle] : std::vector<std::pair<uint32_t, std::string>>{
             {0x6, "not word aligned"}, {0x1000, "past the end"}, {8, "inside a command"}}) {
        SCOPED_TRACE(needle);
        p.labels["target"] = target;
        expect_branch_error(p.words(), at, "NPU_OP_BRANCH.branch_target", needle);
    }
}

TEST(Branch, ALoopThatNeverEndsIsStoppedAtTheLimit) {
    Program p;
    p.label("spin");
    p.b.emit(Cmd::OP_KERNEL_WAIT);
    p.branch(kAlways, "spin");
    p.b.emit(Cmd::OP_STOP);
    // Two commands and two ops per iteration: the 501st iteration passes 1000 commands; the 51st
    // passes 100 ops.
    expect_branch_error(p.words(), 4, "NPU_OP_BRANCH", "after 1000 commands", {.decode = {}, .max_commands = 1000});
    expect_branch_error(p.words(), 4, "NPU_OP_BRANCH", "after 100 ops",
                        {.decode = {}, .max_commands = 1000, .max_ops = 100});
    // With the default limits too.
    expect_branch_error(p.words(), 4, "NPU_OP_BRANCH", "the limit");
}

// The work limits stop a loop in full and timing-only runs alike, at the same op: a one-element
// ADD (work 1) per pass, and a run limit of 50 refuses its 51st pass; the command limit (its
// pass is 49 commands: the ADD's 46, KERNEL_WAIT and BRANCH, and from the second pass on the
// loop re-enters at the ADD's registers) stops it at the branch.
TEST(Branch, WorkLimitsStopALoopInFullAndTimingOnlyRunsAlike) {
    Program p;
    p.label("spin");
    emit_scalar_op(p.b, kModeAdd, 0x80, 0x81, 1);
    const uint32_t add_offset = p.here() - 4;
    p.b.emit(Cmd::OP_KERNEL_WAIT);
    p.branch(kAlways, "spin");
    p.b.emit(Cmd::OP_STOP);
    const LoadedModel model = model_of(p.words());
    for (const bool execute : {true, false}) {
        SCOPED_TRACE(execute ? "full run" : "timing only");
        try {
            run_model(model, {}, {.pipeline = {.execute = execute, .timing = true, .limits = {.max_run_work = 50}}});
            FAIL() << "expected an error";
        } catch (const Error& e) {
            EXPECT_EQ(e.where().offset, add_offset);
            EXPECT_NE(std::string(e.what()).find("the run's work reaches 51"), std::string::npos) << e.what();
        }
        try {
            run_model(model, {}, {.pipeline = {.execute = execute, .timing = true, .limits = {.max_commands = 1000}}});
            FAIL() << "expected an error";
        } catch (const Error& e) {
            EXPECT_EQ(e.where().field, "NPU_OP_BRANCH");
            EXPECT_NE(std::string(e.what()).find("after 1000 commands"), std::string::npos) << e.what();
        }
    }
}

TEST(Branch, DisassemblyShowsTargets) {
    Program p;
    p.branch(kAlways, "end");
    p.b.emit(Cmd::OP_KERNEL_WAIT);
    p.label("end");
    p.b.emit(Cmd::OP_STOP);
    std::vector<uint32_t> words = p.words();
    const auto listing = disassemble_stream(Generation::U85, words, "branch.bin");
    ASSERT_EQ(listing.size(), 3u);
    EXPECT_NE(format_listing_line(listing[0]).find("; -> 0x00000c"), std::string::npos) << format_listing_line(listing[0]);
    EXPECT_NE(format_listing_line(listing[2]).find("; <- branch from 0x000000"), std::string::npos);
    words[1] = 0xA;
    EXPECT_NE(format_listing_line(disassemble_stream(Generation::U85, words, "b")[0]).find("not the start of a command"),
              std::string::npos);
}

}  // namespace
}  // namespace ethosu
