// The run pipeline (emulator/engine/pipeline.h) on hand-built streams: a timing-only run gives the
// full run's timing without touching memory; a session's runs (the replayed ones included) give
// run_stream's outcome and redo the work each time; each stage's errors arrive with their kind,
// in full and timing-only runs alike where they need no data.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/engine/pipeline.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;

constexpr uint64_t kSramBase = 0x1000'0000;
constexpr int kRegion = 1;
constexpr uint64_t kSramBytes = 0x400;

// `copies` DMAs of `length` bytes within region 1, from offset 0 to offset 0x200 + 0x40 * i (at most 0x40 bytes each).
void emit_copies(CommandStreamBuilder& b, int copies, uint64_t length) {
    b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, kRegion}})
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__region, kRegion}})
        .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, 0}})
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, length}});
    for (int i = 0; i < copies; ++i) {
        b.emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, 0x200 + 0x40 * static_cast<uint64_t>(i)}})
            .emit(Cmd::OP_DMA_START);
    }
}

std::vector<uint32_t> copy_stream(Generation g, int copies, uint64_t length) {
    CommandStreamBuilder b(g);
    emit_copies(b, copies, length);
    b.emit(Cmd::OP_DMA_WAIT, {{Field::OP_DMA_WAIT__k, 0}}).emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0}});
    return b.words();
}

struct Npu {
    explicit Npu(const char* name)
        : config(*find_npu_config(name)), system(make_memory_system(config, {})),
          timed{system, region_memories(system, {})}, space(map) {
        sram = map.allocate(kSramBase, kSramBytes, "sram");
        for (size_t i = 0; i < 0x100; ++i) sram[i] = static_cast<uint8_t>(i + 1);
        space.set_base(kRegion, kSramBase);
    }
    StreamOutcome run(const std::vector<uint32_t>& words, const PipelineOptions& options = {}) {
        return run_stream(config, words, "pipeline.bin", options.execute ? &space : nullptr, timed, options);
    }
    Error error(const std::vector<uint32_t>& words, const PipelineOptions& options = {}) {
        try {
            run(words, options);
        } catch (const Error& e) {
            return e;
        }
        ADD_FAILURE() << "expected an error";
        return Error({}, "none");
    }
    bool copied(int copies, uint64_t length) const {
        for (int i = 0; i < copies; ++i) {
            const auto dst = sram.subspan(0x200 + 0x40 * static_cast<size_t>(i), length);
            if (!std::equal(dst.begin(), dst.end(), sram.begin())) return false;
        }
        return true;
    }

    NpuConfig config;
    MemorySystem system;
    TimedMemory timed;
    MemoryMap map;
    AddressSpace space;
    std::span<uint8_t> sram;
};

void expect_same_timing(const TimingResult& a, const TimingResult& b) {
    EXPECT_EQ(a.totals.cycles, b.totals.cycles);
    EXPECT_EQ(a.totals.npu_active, b.totals.npu_active);
    EXPECT_EQ(a.totals.traffic.read, b.totals.traffic.read);
    EXPECT_EQ(a.totals.traffic.write, b.totals.traffic.write);
    ASSERT_EQ(a.ops.size(), b.ops.size());
    for (size_t i = 0; i < a.ops.size(); ++i) {
        EXPECT_EQ(a.ops[i].offset, b.ops[i].offset);
        EXPECT_EQ(a.ops[i].start, b.ops[i].start);
        EXPECT_EQ(a.ops[i].end, b.ops[i].end);
    }
}

TEST(Pipeline, TimingOnlyGivesTheFullRunsTimingWithoutTouchingMemory) {
    for (const char* name : {"ethos-u55-128", "ethos-u65-256", "ethos-u85-256"}) {
        SCOPED_TRACE(name);
        const auto words = copy_stream(find_npu_config(name)->generation, 3, 16);
        Npu timing_only(name);
        const StreamOutcome cycles = timing_only.run(words, {.execute = false});
        EXPECT_FALSE(timing_only.copied(1, 16));
        Npu full(name);
        const StreamOutcome run = full.run(words);
        EXPECT_TRUE(full.copied(3, 16));
        ASSERT_TRUE(cycles.timing && run.timing);
        EXPECT_GT(run.timing->totals.cycles, 0);
        expect_same_timing(*cycles.timing, *run.timing);
        EXPECT_EQ(cycles.stream.ops.size(), run.stream.ops.size());
        EXPECT_FALSE(full.run(words, {.timing = false}).timing);
    }
}

TEST(Pipeline, ASessionsRunsGiveRunStreamsOutcomeAndRedoTheWork) {
    Npu npu("ethos-u55-128");
    const auto words = copy_stream(Generation::U55, 2, 32);
    const StreamOutcome once = npu.run(words);
    StreamSession session(npu.config, words, "pipeline.bin", npu.space, npu.timed);
    for (int run = 0; run < 3; ++run) {  // the first decodes, the others replay
        SCOPED_TRACE(run);
        std::fill(npu.sram.begin() + 0x200, npu.sram.end(), uint8_t{0});
        const StreamOutcome& outcome = session.run();
        EXPECT_TRUE(npu.copied(2, 32));
        ASSERT_TRUE(outcome.timing);
        expect_same_timing(*outcome.timing, *once.timing);
        EXPECT_EQ(outcome.stream.ops.size(), once.stream.ops.size());
    }
}

TEST(Pipeline, AnAccessOutsideMappedMemoryIsOutOfBounds) {
    Npu npu("ethos-u55-128");
    const Error e = npu.error(copy_stream(Generation::U55, 1, kSramBytes));  // 0x200 + 0x400 is past the end
    EXPECT_EQ(e.kind(), ErrorKind::OutOfBounds);
    EXPECT_EQ(e.where().file, "pipeline.bin");
    // Timing only reads no memory.
    EXPECT_NO_THROW(npu.run(copy_stream(Generation::U55, 1, kSramBytes), {.execute = false}));
}

TEST(Pipeline, WorkPastTheLimitsIsLimitExceededInBothModes) {
    const auto words = copy_stream(Generation::U55, 1, 64);
    for (const bool execute : {true, false}) {
        SCOPED_TRACE(execute);
        Npu npu("ethos-u55-128");
        const Error e = npu.error(words, {.execute = execute, .limits = {.max_op_work = 32}});
        EXPECT_EQ(e.kind(), ErrorKind::LimitExceeded);
        EXPECT_EQ(e.where().field, "dma_start");
    }
}

TEST(Pipeline, AMalformedCommandIsMalformedInBothModes) {
    std::vector<uint32_t> words = copy_stream(Generation::U55, 1, 16);
    words.insert(words.begin(), 0xFFFF'FFFFu);
    for (const bool execute : {true, false}) {
        SCOPED_TRACE(execute);
        Npu npu("ethos-u55-128");
        const Error e = npu.error(words, {.execute = execute});
        EXPECT_EQ(e.kind(), ErrorKind::Malformed);
        EXPECT_EQ(e.where().offset, 0u);
    }
}

TEST(Pipeline, BranchesFaultInBothModesAndTimingOnlyRefusesRfTrue) {
    auto branch_stream = [](uint64_t condition, uint32_t target) {
        CommandStreamBuilder b(Generation::U85);
        b.emit(Cmd::OP_BRANCH, {{Field::OP_BRANCH__branch_cond, condition}}).emit(Cmd::OP_STOP);
        std::vector<uint32_t> words = b.words();
        words[1] = target;
        return words;
    };
    for (const bool execute : {true, false}) {
        SCOPED_TRACE(execute);
        Npu npu("ethos-u85-256");
        EXPECT_EQ(npu.error(branch_stream(0, 0x100), {.execute = execute}).kind(), ErrorKind::BranchFault);
    }
    Npu npu("ethos-u85-256");
    const Error e = npu.error(branch_stream(1, 8), {.execute = false});
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_EQ(e.where().field, "NPU_OP_BRANCH.branch_cond");
    EXPECT_NO_THROW(npu.run(branch_stream(1, 8)));  // a full run reads COND_STATUS: 0 at reset
}

}  // namespace
}  // namespace ethosu
