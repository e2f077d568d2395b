// The timeline: command processing, kernel pipeline, DMA channel, waits and PMU windows, in
// exact cycles on hand-built op records (U55-128, Vela's default memory system: see
// test_u55_cost.cc). The command processor reads one 32-bit word per cycle.

#include <gtest/gtest.h>

#include <string>

#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/error.h"
#include "tests/timing/timing_test_util.h"

namespace ethosu {
namespace {

using namespace timing_test;

struct Timeline : ::testing::Test {
    NpuConfig npu = *find_npu_config("ethos-u55-128");
    MemorySystem memory = make_memory_system(npu, {});
    TimingModel model{npu, memory, region_memories(memory, {}), "test.bin"};
    DecodedStream stream;

    DecodedOp& add(DecodedOp op, uint32_t offset) {
        op.offset = offset;
        stream.ops.push_back(op);
        return stream.ops.back();
    }
    DecodedOp& add(OpKind kind, uint32_t offset) {
        return add(DecodedOp(kind), offset);
    }
    DecodedOp& dma(uint32_t offset, int src_region, int dst_region, uint64_t bytes) {
        DecodedOp& op = add(OpKind::DmaStart, offset);
        op.dma().src.region = src_region;
        op.dma().dst.region = dst_region;
        op.dma().length = bytes;
        return op;
    }
    // The ADD of test_u55_cost.cc: 3072 cycles, output-unit bound.
    DecodedOp add_op() const { return elementwise_add(8, 8, 32, 8, 1, 1, {8, 8, 32}); }
    // The stream on another configuration, with Vela's default memory system for it.
    TimingResult run_on(const char* config) const {
        const NpuConfig other = *find_npu_config(config);
        const MemorySystem other_memory = make_memory_system(other, {});
        return TimingModel(other, other_memory, region_memories(other_memory, {}), "test.bin").run(stream);
    }
};

// DMA 1000 bytes flash -> SRAM at offset 40: 11 command words, so it starts at 11. Its reads come
// in flash's 128-byte bursts: 1024 bytes. It takes max(1024 / 1 + 64 read latency, 1000 / 8 + 32
// write latency) = 1088 -> ends at 1099. DMA_WAIT 0 at 48 (2 more words, 13) holds the command
// processor until 1099. The ADD at 200 needs (204 - 52) / 4 = 38 words: starts at 1137, runs
// 3072 -> 4209. STOP: one word.
TEST_F(Timeline, DmaWaitHoldsTheNextKernelOp) {
    dma(40, 0, 1, 1000);
    add(OpKind::DmaWait, 48).wait().count = 0;
    add(add_op(), 200);
    add(OpKind::Stop, 204);
    const TimingResult r = model.run(stream);
    EXPECT_EQ(r.ops[0].start, 11);
    EXPECT_EQ(r.ops[0].end, 1099);
    EXPECT_EQ(r.ops[1].end, 1099);
    EXPECT_EQ(r.ops[2].start, 1137);
    EXPECT_EQ(r.ops[2].end, 4209);
    EXPECT_EQ(r.totals.cycles, 4209);
    EXPECT_EQ(r.totals.npu_active, 4209);
    EXPECT_EQ(r.totals.idle, 0);
    EXPECT_EQ(r.totals.command_words, 11 + 2 + 38 + 1);
}

// The same flash -> SRAM DMA on the Corstone-300 FVP as MLEK ran it, 900 bytes from address 40:
// its reads are whole AXI bursts, 64 bytes aligned (the core driver's AXI_LIMIT max_beats), so
// bytes 0-959, 15 bursts, at the timing adapter's 1.12 bytes a cycle (7 bursts of 64 bytes per
// 400 cycles): 960 / 1.12 = 857.1 -> 857, plus the 64-cycle read latency = 921, over the write
// side's 900 / 8 + 32 = 144. Starts at 11 (11 command words), ends at 932. Vela's flash (1.0
// bytes a cycle, 128-byte bursts, no split): 1024 bytes, 1024 / 1 + 64 = 1088, in 8 transactions.
TEST_F(Timeline, FlashDmaOnTheCorstone300FvpRunsAtItsTimingAdaptersBandwidth) {
    const MemorySystem fvp = make_memory_system(npu, {"Ethos_U55_High_End_Corstone300_FVP", "Shared_Sram", {}});
    dma(40, 0, 1, 900);
    const TimingResult on_fvp = TimingModel(npu, fvp, region_memories(fvp, {}), "test.bin").run(stream);
    EXPECT_EQ(on_fvp.ops[0].start, 11);
    EXPECT_EQ(on_fvp.ops[0].end, 932);
    EXPECT_EQ(on_fvp.totals.beats.read[1], 960 / 8);
    EXPECT_EQ(on_fvp.totals.beats.read_transactions[1], 960 / 64);
    const TimingResult on_vela = model.run(stream);
    EXPECT_EQ(on_vela.ops[0].end, 11 + 1088);
    EXPECT_EQ(on_vela.totals.beats.read_transactions[1], 1024 / 128);
}

// Without the wait the DMA runs under the ADD: the ADD starts after its 51 words (at 51, the
// command processor is not held) and the stream ends with the later of the two (51 + 3072).
TEST_F(Timeline, DmaOverlapsKernelWorkWithoutAWait) {
    dma(40, 0, 1, 1000);
    add(add_op(), 200);
    const TimingResult r = model.run(stream);
    EXPECT_EQ(r.ops[1].start, 51);
    EXPECT_EQ(r.totals.cycles, 51 + 3072);
    EXPECT_EQ(r.totals.dma_active, 1088);
}

// Kernel ops run one at a time; KERNEL_WAIT 0 holds the command processor until the last ends:
// ADD at 0 (1 word) runs 1..3073; ADD at 4 is queued at 2 and starts when the pipeline frees,
// 3073..6145; KERNEL_WAIT 0 at 8 waits until 6145; DMA at 12 then starts at 6146 (one more word).
// KERNEL_WAIT 1 instead waits for the older of the two only, until 3073: the DMA starts at 3074,
// under the second ADD, and takes 2 cycles more than alone (the SRAM it shares with it, as in
// TheCommandProcessorQueuesAKernelOpAndReadsOn).
TEST_F(Timeline, KernelOpsSerialiseAndKernelWaitHolds) {
    add(add_op(), 0);
    add(add_op(), 4);
    add(OpKind::KernelWait, 8).wait().count = 0;
    dma(12, 1, 1, 80);
    const TimingResult r = model.run(stream);
    EXPECT_EQ(r.ops[0].start, 1);
    EXPECT_EQ(r.ops[1].start, 3073);
    EXPECT_EQ(r.ops[1].end, 6145);
    EXPECT_EQ(r.ops[3].start, 6146);
    // 80 bytes SRAM -> SRAM, read as 96 (three 32-byte bursts): max(96 / 8 + 32, 80 / 8 + 32) = 44.
    EXPECT_EQ(r.ops[3].end, 6146 + 44);

    stream.ops[2].wait().count = 1;
    const TimingResult one = model.run(stream);
    EXPECT_EQ(one.ops[2].end, 3073);
    EXPECT_EQ(one.ops[3].start, 3074);
    EXPECT_EQ(one.ops[3].end, 3074 + 44 + 2);
    EXPECT_EQ(one.totals.cycles, 6145);
}

// Kernel ops and DMA share a memory's bandwidth. The ADD of add_op() with both operands in
// flash (region 0, 1 B/cycle) reads 4096 bytes there: it starts at 1 and is flash bound, 4096
// cycles -> 4097, taking the flash's whole read bandwidth. A DMA of 1000 bytes from flash,
// issued at 2 without a wait, gets no flash until then: its reads (1024 bytes: whole 128-byte
// bursts) run 4097..5121, plus the read latency of 64: it ends at 5185 (alone: at 2 + 1088).
TEST_F(Timeline, ADmaWaitsForAKernelOpSaturatingItsMemory) {
    add(elementwise_add(8, 8, 32, 8, 0, 1, {8, 8, 32}), 0);
    dma(4, 0, 1, 1000);
    const TimingResult r = model.run(stream);
    EXPECT_EQ(r.ops[0].end, 4097);
    EXPECT_EQ(r.ops[1].start, 4097);
    EXPECT_EQ(r.ops[1].end, 5185);
}

// The other way round: the DMA (issued at 1, 1024 bytes read) holds 1024 / 1088 of the flash
// until 1089; the ADD from 2 gets the rest, 1087 x 64 / 1088 = 63.94 cycles' worth, then the
// whole flash: its 4096 bytes are read by 1089 + 4096 - 63.94 = 5121.06 -> 5121 (alone: 4098).
TEST_F(Timeline, AKernelOpSharesItsMemoryWithADmaUnderWay) {
    dma(0, 0, 1, 1000);
    add(elementwise_add(8, 8, 32, 8, 0, 1, {8, 8, 32}), 4);
    const TimingResult r = model.run(stream);
    EXPECT_EQ(r.ops[0].end, 1089);
    EXPECT_EQ(r.ops[1].start, 2);
    EXPECT_EQ(r.ops[1].end, 5121);
}

// A wait for "at most 1 outstanding" does not wait for the newest DMA. The U55 holds one DMA:
// the first starts at 1, 192 cycles (a 128-byte flash burst + 64) -> 193; the command processor
// reaches the second at 2 and stalls until the first completes, then starts it, 193..385;
// DMA_WAIT 1 (one word) is reached at 194 and asks only for the first. A U65 holds two: its
// command processor does not stall at the second (which still waits for the channel), and
// reaches DMA_WAIT 1 one word later, satisfied when the first ends.
TEST_F(Timeline, DmaWaitCountLeavesTheNewestOutstanding) {
    dma(0, 0, 1, 100);
    dma(4, 0, 1, 100);
    add(OpKind::DmaWait, 8).wait().count = 1;
    const TimingResult r = model.run(stream);
    EXPECT_EQ(r.ops[0].end, 193);
    EXPECT_EQ(r.ops[1].release, 193);
    EXPECT_EQ(r.ops[1].end, 385);
    EXPECT_EQ(r.ops[2].issue, 194);
    EXPECT_EQ(r.ops[2].end, 194);

    const TimingResult u65 = run_on("ethos-u65-256");
    EXPECT_EQ(u65.ops[1].release, u65.ops[1].issue);
    EXPECT_EQ(u65.ops[1].start, u65.ops[0].end);
    EXPECT_EQ(u65.ops[2].issue, u65.ops[1].issue + 1);
    EXPECT_EQ(u65.ops[2].end, u65.ops[0].end);
}

// The command processor queues a kernel op behind the running one and reads on (U55: two kernel
// ops outstanding). ADD at 0 (1 word) runs 1..3073; the ADD at 4, reached at 2, is queued and
// starts when the pipeline frees, 3073..6145; the DMA at 8, reached at 3, starts there, under the
// first ADD: 80 bytes SRAM -> SRAM read as 96 (three 32-byte bursts), max(96 / 8 + 32, 80 / 8 +
// 32) = 44 alone; the ADD holds 1/6 of SRAM's read channel (4096 bytes in 3072 cycles at 8
// B/cycle), so the DMA's 12 cycles of reads take 14.4: 2 more, 49. The ADD at 12, reached at 4,
// finds two outstanding and stalls until the first ends (3073); it runs after the second,
// 6145..9217.
TEST_F(Timeline, TheCommandProcessorQueuesAKernelOpAndReadsOn) {
    add(add_op(), 0);
    add(add_op(), 4);
    dma(8, 1, 1, 80);
    add(add_op(), 12);
    const TimingResult r = model.run(stream);
    EXPECT_EQ(r.ops[0].start, 1);
    EXPECT_EQ(r.ops[1].release, 2);
    EXPECT_EQ(r.ops[1].start, 3073);
    EXPECT_EQ(r.ops[2].start, 3);
    EXPECT_EQ(r.ops[2].end, 49);
    EXPECT_EQ(r.ops[3].issue, 4);
    EXPECT_EQ(r.ops[3].release, 3073);
    EXPECT_EQ(r.ops[3].start, 6145);
    EXPECT_EQ(r.ops[3].end, 9217);
}

// PMU_MASK 0 (one word) stops counting at cycle 1; PMU_MASK 1 restarts it at cycle 2; the ADD
// then runs 3..3075 inside the window: CYCLE counts 1 + 3073, the AO/AXI events the ADD's.
TEST_F(Timeline, PmuCountsOnlyInsideItsWindows) {
    add(OpKind::PmuMask, 0).pmu().enable = false;
    add(OpKind::PmuMask, 4).pmu().enable = true;
    add(add_op(), 8);
    const TimingResult r = model.run(stream);
    ASSERT_EQ(r.pmu_windows.size(), 2u);
    EXPECT_EQ(r.pmu_windows[0], (std::pair<int64_t, int64_t>{0, 1}));
    EXPECT_EQ(r.pmu_windows[1], (std::pair<int64_t, int64_t>{2, 3075}));
    const auto g = npu.generation;
    const std::vector<uint32_t> events = {*pmu_event_id(g, "CYCLE"), *pmu_event_id(g, "AO_ACTIVE"),
                                          *pmu_event_id(g, "AXI0_RD_DATA_BEAT_RECEIVED"),
                                          *pmu_event_id(g, "AXI0_WR_DATA_BEAT_WRITTEN")};
    const PmuReading p = read_pmu(memory, {r}, events);
    EXPECT_EQ(p.cycle_counter, 1u + 3073u);
    EXPECT_EQ(p.counters[0], 1u + 3073u);
    EXPECT_EQ(p.counters[1], 3072u);
    EXPECT_EQ(p.counters[2], 4096u / 8);  // SRAM bytes read / 8-byte beats
    EXPECT_EQ(p.counters[3], 2048u / 8);
}

// Beats are counted per transfer: three SRAM -> SRAM DMAs of 12 bytes write 2 beats each (12
// bytes on an 8-byte bus), 6 in all, though their 36 bytes would fill 5; each reads a whole
// 32-byte SRAM burst, 4 beats. The run's totals (what run --json prints) and the PMU agree. A
// transaction is a burst of the memory (32 bytes, 4 beats): one per DMA each way.
TEST_F(Timeline, BeatsAreCountedPerTransferAndThePmuAgrees) {
    for (uint32_t i = 0; i < 3; ++i) dma(4 * i, 1, 1, 12);
    const TimingResult r = model.run(stream);
    EXPECT_EQ(r.totals.traffic.read[static_cast<size_t>(MemoryKind::Sram)], 3 * 32);
    EXPECT_EQ(r.totals.beats.read[0], 12);
    EXPECT_EQ(r.totals.beats.write[0], 6);
    EXPECT_EQ(r.totals.beats.read_transactions[0], 3);
    EXPECT_EQ(r.totals.beats.write_transactions[0], 3);
    const auto g = npu.generation;
    const std::vector<uint32_t> events = {*pmu_event_id(g, "AXI0_RD_DATA_BEAT_RECEIVED"),
                                          *pmu_event_id(g, "AXI0_WR_DATA_BEAT_WRITTEN"),
                                          *pmu_event_id(g, "AXI0_RD_TRANS_ACCEPTED"),
                                          *pmu_event_id(g, "AXI0_WR_TRANS_ACCEPTED")};
    const PmuReading p = read_pmu(memory, {r}, events);
    EXPECT_EQ(p.counters, (std::vector<uint64_t>{12, 6, 3, 3}));
}

// The model names its events by U55's numbers (pmu.cc); each generation's description gives every
// modelled number the same event: U65 by U55's name, U85 with AXI0/AXI1 called SRAM/EXT.
TEST(Pmu, ModelledEventsMeanTheSameOnEveryGeneration) {
    const std::vector<uint32_t> u55 = pmu_modelled_events(Generation::U55);
    EXPECT_EQ(u55.size(), 20u);
    EXPECT_EQ(pmu_modelled_events(Generation::U65), u55);
    const std::vector<uint32_t> u85 = pmu_modelled_events(Generation::U85);
    EXPECT_EQ(u85.size(), 16u);  // no 8/16-bit MAC and AO events
    for (const uint32_t e : u85) {
        std::string name(pmu_event_name(Generation::U55, e));
        for (const auto& [from, to] : {std::pair{"AXI0_", "SRAM_"}, std::pair{"AXI1_", "EXT_"}})
            if (name.starts_with(from)) name = to + name.substr(std::string_view(from).size());
        EXPECT_EQ(pmu_event_name(Generation::U85, e), name) << e;
    }
}

TEST(Pmu, EventTablesFollowTheDescription) {
    EXPECT_EQ(pmu_event_counters(Generation::U55), 4);
    EXPECT_EQ(pmu_event_counters(Generation::U85), 8);
    EXPECT_EQ(pmu_event_id(Generation::U55, "NPU_ACTIVE"), 35u);
    EXPECT_EQ(pmu_event_id(Generation::U55, "ETHOSU_PMU_NPU_ACTIVE"), 35u);  // the core driver's name
    EXPECT_EQ(pmu_event_id(Generation::U85, "ETHOSU_PMU_EXT_RD_DATA_BEAT_RECEIVED"), 386u);
    EXPECT_FALSE(pmu_event_id(Generation::U55, "ETHOSU_PMU_").has_value());
    EXPECT_EQ(pmu_event_name(Generation::U55, 386), "AXI1_RD_DATA_BEAT_RECEIVED");
    EXPECT_EQ(pmu_event_name(Generation::U85, 386), "EXT_RD_DATA_BEAT_RECEIVED");
    EXPECT_TRUE(pmu_event_modelled(Generation::U85, 386));
    EXPECT_FALSE(pmu_event_modelled(Generation::U55, *pmu_event_id(Generation::U55, "AXI_LATENCY_ANY")));
    EXPECT_FALSE(pmu_event_id(Generation::U55, "NO_SUCH_EVENT").has_value());
}

// A 3D DMA of 2^32 bytes x 65536 rows x 65536 planes moves 2^64 bytes: an Error naming it,
// not an int64 that overflowed.
TEST_F(Timeline, ADmaBeyondTheCostRangeIsAnError) {
    DecodedOp& op = dma(0x24, 1, 1, uint64_t{1} << 32);
    op.dma().dimensions = 3;
    op.dma().size0 = op.dma().size1 = 65536;
    expect_error_at([&] { model.run(stream); }, 0x24, "dma_start");
}

// Ops each within range whose sum is not: 2^12 ops of 2^52 bytes each take the timeline past
// 2^62, where it stops with an Error at the op that crossed it.
TEST_F(Timeline, ARunBeyondTheTimelineRangeIsAnError) {
    for (uint32_t i = 0; i < 4096; ++i) dma(4 * i, 1, 1, uint64_t{1} << 52);
    try {
        model.run(stream);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("2^62"), std::string::npos) << e.what();
        EXPECT_LT(*e.where().offset, 4u * 4096);
    }
}

}  // namespace
}  // namespace ethosu
