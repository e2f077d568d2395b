// The timing model's units one at a time, and the replay that drives them, in exact cycles on
// hand-built op records (U55-128, Vela's default memory system; the figures are test_timeline.cc's:
// flash reads 1 byte a cycle with 64 cycles' latency in 128-byte bursts, SRAM writes 8 bytes a
// cycle with 32 cycles' latency; the 8x8x32 ADD takes 3072 cycles).

#include <gtest/gtest.h>

#include <vector>

#include "emulator/engine/timing/timing_model.h"
#include "tests/timing/timing_compare.h"
#include "tests/timing/timing_test_util.h"

namespace ethosu {
namespace {

using namespace timing_test;

struct Units : ::testing::Test {
    NpuConfig npu = *find_npu_config("ethos-u55-128");
    MemorySystem memory = make_memory_system(npu, {});
    CostContext ctx = cost_context(npu, memory);

    static DecodedOp op_at(OpKind kind, uint32_t offset) {
        DecodedOp op(kind);
        op.offset = offset;
        return op;
    }
    // 1000 bytes from flash (region 0) to SRAM (region 1): 1024 bytes read in whole bursts,
    // max(1024 / 1 + 64, 1000 / 8 + 32) = 1088 cycles.
    static DecodedOp flash_dma(uint32_t offset) {
        DecodedOp op = op_at(OpKind::DmaStart, offset);
        op.dma().src.region = 0;
        op.dma().dst.region = 1;
        op.dma().length = 1000;
        return op;
    }
    static DecodedOp add_op(uint32_t offset) {
        DecodedOp op = elementwise_add(8, 8, 32, 8, 1, 1, {8, 8, 32});
        op.offset = offset;
        return op;
    }
};

TEST(OutstandingOps, HoldsUntilAllButTheNewestNHaveCompleted) {
    OutstandingOps ops;
    EXPECT_EQ(ops.until_at_most(0, 5), 5);
    for (const int64_t end : {10, 20, 30}) ops.add(end);
    EXPECT_EQ(ops.until_at_most(3, 5), 5);
    EXPECT_EQ(ops.until_at_most(2, 5), 10);
    EXPECT_EQ(ops.until_at_most(1, 5), 20);
    EXPECT_EQ(ops.until_at_most(0, 25), 30);
    EXPECT_EQ(ops.until_at_most(0, 40), 40);  // never back in time
}

// One word a cycle from where it stopped reading; a BRANCH is two words, and the block it enters
// is read from its start.
TEST_F(Units, CommandProcessorReadsTheWordsUpToEachOp) {
    CommandProcessor cp(npu.traits());
    const DecodedOp dma = flash_dma(40), wait = op_at(OpKind::DmaWait, 48), branch = op_at(OpKind::Branch, 100);
    EXPECT_EQ(cp.words_to(dma), 11);
    EXPECT_EQ(cp.fetch(dma), 0);
    EXPECT_EQ(cp.now(), 11);
    EXPECT_EQ(cp.words_to(wait), 2);
    cp.fetch(wait);
    EXPECT_EQ(cp.words_to(branch), (104 - 52) / 4 + 1);
    cp.fetch(branch);
    DecodedOp entered = op_at(OpKind::Stop, 208);
    entered.fetch_start = 200;
    EXPECT_EQ(cp.words_to(entered), 3);
    EXPECT_EQ(cp.fetch(entered), 11 + 2 + 14);
    EXPECT_EQ(cp.now(), 11 + 2 + 14 + 3);
    EXPECT_EQ(cp.words_read(), cp.now());
}

// U55 keeps one DMA and two kernel ops outstanding: issuing one more waits for the oldest.
TEST_F(Units, CommandProcessorIssuesUpToTheOutstandingLimit) {
    CommandProcessor cp(npu.traits());
    cp.fetch(flash_dma(0));
    OutstandingOps dmas, kernels;
    cp.issue_into(dmas, Unit::Dma);
    EXPECT_EQ(cp.now(), 1);
    dmas.add(500);
    kernels.add(700);
    cp.issue_into(kernels, Unit::Kernel);
    EXPECT_EQ(cp.now(), 1);
    cp.issue_into(dmas, Unit::Dma);
    EXPECT_EQ(cp.now(), 500);
    DecodedOp wait = op_at(OpKind::KernelWait, 4);
    wait.wait().count = 0;
    cp.wait_for(kernels, wait);
    EXPECT_EQ(cp.now(), 700);
}

// Kernel ops run in order: the second starts when the first ends. One reading the chaining buffer
// runs alongside its producer: it starts when released, not when the producer ends.
TEST_F(Units, KernelPipelineRunsOpsInOrder) {
    KernelPipeline kernel(ctx);
    const ChannelUses no_dma;
    const DecodedOp first = add_op(0), second = add_op(4);
    OpTiming a, b;
    kernel.issue(first, 10, no_dma, a);
    EXPECT_EQ(a.start, 10);
    EXPECT_EQ(a.end, 10 + 3072);
    EXPECT_EQ(a.cost.compute_cycles, 3072);
    kernel.issue(second, 20, no_dma, b);
    EXPECT_EQ(b.start, 10 + 3072);
    EXPECT_EQ(b.end, 10 + 2 * 3072);
    EXPECT_EQ(kernel.free_at(), b.end);
    EXPECT_EQ(kernel.outstanding().until_at_most(1, 0), a.end);

    KernelPipeline chain(ctx);
    DecodedOp consumer = add_op(4);
    consumer.kernel().ifm.storage = Storage::Chained;
    OpTiming producer, chained;
    chain.issue(first, 10, no_dma, producer);
    chain.issue(consumer, 20, no_dma, chained);
    EXPECT_EQ(producer.end, 10 + 3072);
    EXPECT_EQ(chained.start, 20);
    EXPECT_EQ(chained.end, 20 + 3072);
}

// DMAs run in order; one whose source channel the kernel pipeline saturates starts when it frees,
// and still takes its own 1088 cycles.
TEST_F(Units, DmaChannelRunsTransfersInOrderAndSharesTheChannels) {
    DmaChannel dma(ctx);
    const ChannelUses no_kernel;
    const DecodedOp first = flash_dma(40), second = flash_dma(80);
    OpTiming a, b;
    dma.issue(first, 11, no_kernel, a);
    EXPECT_EQ(a.start, 11);
    EXPECT_EQ(a.end, 11 + 1088);
    EXPECT_EQ(a.cost.traffic.read[static_cast<size_t>(MemoryKind::OffChipFlash)], 1024);
    EXPECT_EQ(a.cost.traffic.write[static_cast<size_t>(MemoryKind::Sram)], 1000);
    dma.issue(second, 20, no_kernel, b);
    EXPECT_EQ(b.start, a.end);
    EXPECT_EQ(b.end, a.end + 1088);

    ChannelUses kernel;
    ChannelBusy flash_read{};
    flash_read[static_cast<size_t>(MemoryKind::OffChipFlash)][0] = 5000;
    kernel.record(0, 5000, flash_read);
    DmaChannel shared(ctx);
    OpTiming c;
    shared.issue(first, 11, kernel, c);
    EXPECT_EQ(c.start, 5000);
    EXPECT_EQ(c.end, 5000 + 1088);
}

// A channel half taken moves a transfer at half rate while the use lasts, at full rate after.
TEST(ChannelShare, ATransferGetsWhatTheOtherUnitLeaves) {
    const std::vector<ChannelUse> half = {{0, 100, 0.5}};
    EXPECT_EQ(shared_transfer_end(half, 0, 30), 60);
    EXPECT_EQ(shared_transfer_end(half, 0, 80), 130);
    EXPECT_EQ(shared_transfer_end(half, 200, 80), 280);
    int64_t first = 0;
    EXPECT_EQ(shared_transfer_end({{0, 100, 1.0}}, 10, 5, &first), 105);
    EXPECT_EQ(first, 100);
}

// test_timeline.cc's DMA, DMA_WAIT, ADD and STOP, one event at a time: the DMA issues at 11, the
// wait at 13 and holds the command processor until the DMA ends at 1099; the ADD issues at 1137,
// STOP at 1138, and the ADD ends at 4209.
TEST_F(Units, ReplayReportsEachIssueAndCompletion) {
    DecodedStream stream;
    stream.ops = {flash_dma(40), op_at(OpKind::DmaWait, 48), add_op(200), op_at(OpKind::Stop, 204)};
    const TimingModel model(npu, memory, region_memories(memory, {}), "test.bin");
    TimingReplay replay(model, stream);
    EXPECT_EQ(replay.now(), 0);
    EXPECT_EQ(replay.next_event(), 11);
    std::vector<int64_t> events;
    std::vector<size_t> issued;
    while (replay.advance_to_next_event()) {
        events.push_back(replay.now());
        issued.push_back(replay.result().ops.size());
    }
    EXPECT_EQ(events, (std::vector<int64_t>{11, 13, 1099, 1137, 1138, 4209}));
    EXPECT_EQ(issued, (std::vector<size_t>{1, 2, 2, 3, 4, 4}));
    expect_same_result(replay.result(), model.run(stream));

    TimingReplay halfway(model, stream);
    halfway.advance_to(1136);
    EXPECT_EQ(halfway.result().ops.size(), 2u);
    EXPECT_FALSE(halfway.issued_all());
    EXPECT_EQ(halfway.next_event(), 1137);
    halfway.advance_to(1000);  // the clock does not go back
    EXPECT_EQ(halfway.now(), 1136);
    expect_same_result(std::move(halfway).finish(), model.run(stream));
}

// The cost functions' errors name the file the model was given, from the cost function itself
// (a DMA's bytes) and from the timeline's range check.
TEST_F(Units, CostErrorsNameTheStreamsFile) {
    DecodedStream stream;
    DecodedOp huge = flash_dma(0x24);
    huge.dma().length = uint64_t{1} << 32;
    huge.dma().dimensions = 3;
    huge.dma().size0 = huge.dma().size1 = 65536;
    stream.ops = {huge};
    const TimingModel model(npu, memory, region_memories(memory, {}), "net.tflite");
    expect_error_at([&] { model.run(stream); }, 0x24, "dma_start");
    try {
        model.run(stream);
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "net.tflite");
    }
    stream.ops.clear();
    for (uint32_t i = 0; i < 4096; ++i) {
        DecodedOp big = flash_dma(4 * i);
        big.dma().src.region = 1;
        big.dma().length = uint64_t{1} << 52;
        stream.ops.push_back(big);
    }
    try {
        model.run(stream);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "net.tflite");
        EXPECT_NE(std::string(e.what()).find("2^62"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace ethosu
