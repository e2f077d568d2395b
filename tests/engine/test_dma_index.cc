// U85 DMA index mode, programmed as Vela 5.1 lowers GATHER and SCATTER (values [N, K, C],
// int32 or int64 indices [N, W]), against plain reference loops; out-of-range indices and index
// arrays; the decoded record; the DMA's cost with its index reads.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/engine/timing/timing_model.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;

constexpr uint64_t kValuesAddress = 0x1000'0000, kOutAddress = 0x2000'0000, kIndexAddress = 0x3000'0000;
constexpr uint64_t kBufferBytes = 0x800;
constexpr uint8_t kUntouched = 0xA5;
constexpr int kValuesRegion = 1, kOutRegion = 2, kIndexRegion = 3;

// A GATHER/SCATTER as the model states it. Elements are int16 (2 bytes) so a row is 2 * C bytes.
struct IndexOp {
    int n = 1, k = 5, c = 3, w = 4;
    bool int64_indices = false;
    std::vector<int64_t> indices;  // [N, W]
    int row_bytes() const { return 2 * c; }
};

// The registers Vela's GenerateDMA writes for one HLCDMA, as lowered by its HLC generator
// (GenerateHLCDMACommands): sizes (size1, size0), strides per side (stride1, stride0).
struct Programmed {
    bool gather = true;
    uint64_t src = 0, dst = 0;
    uint64_t length = 0;
    int size0 = 1, size1 = 1;
    int64_t src_stride0 = 0, src_stride1 = 0, dst_stride0 = 0, dst_stride1 = 0;
    uint64_t index_skip1 = 0;
    uint32_t index_max = 0;
};

uint64_t forty_bits(int64_t value) { return static_cast<uint64_t>(value) & ((1ull << 40) - 1); }

// GATHER: output[n, w] = values[n, indices[n, w]]. int32 indices: sizes (N, W), natural strides;
// int64: 3D with sizes (W, N), the values' row stride on stride0, the output's on stride1, and 4
// bytes skipped after each plane's one index (the high half of the int64).
// SCATTER (the values_in copy done): out[n, indices[n, w]] = input[n, w], the sides swapped.
Programmed vela_programming(const IndexOp& op, bool gather) {
    Programmed p;
    p.gather = gather;
    p.src = 0;
    p.dst = 0;
    p.length = static_cast<uint64_t>(op.row_bytes());
    p.index_max = static_cast<uint32_t>(op.k - 1);
    const int64_t row = op.row_bytes();
    const int64_t table_plane = row * op.k, list_plane = row * op.w;  // [N, K, C] and [N, W, C]
    const int64_t src_plane = gather ? table_plane : list_plane;
    const int64_t dst_plane = gather ? list_plane : table_plane;
    if (op.int64_indices) {
        p.size0 = op.n;
        p.size1 = op.w;
        p.index_skip1 = 4;
        // The indexed side steps rows on stride0; the listed side steps W on stride1.
        if (gather) {
            p.src_stride0 = row, p.src_stride1 = 0, p.dst_stride0 = 0, p.dst_stride1 = row;
        } else {
            p.src_stride0 = 0, p.src_stride1 = row, p.dst_stride0 = row, p.dst_stride1 = 0;
        }
    } else {
        p.size0 = op.w;
        p.size1 = op.n;
        p.src_stride0 = row, p.src_stride1 = src_plane, p.dst_stride0 = row, p.dst_stride1 = dst_plane;
    }
    return p;
}

CommandStreamBuilder index_stream(const Programmed& p) {
    CommandStreamBuilder b(Generation::U85);
    const uint64_t stride_mode = p.size1 > 1 ? 2 : p.size0 > 1 ? 1 : 0;
    b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, kValuesRegion},
                                      {Field::SET_DMA0_SRC_REGION__stride_mode, stride_mode},
                                      {Field::SET_DMA0_SRC_REGION__idx_mode, p.gather ? 1u : 0u}})
        .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, p.src}})
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__region, kOutRegion},
                                         {Field::SET_DMA0_DST_REGION__idx_mode, p.gather ? 0u : 1u}})
        .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, p.dst}})
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, p.length}})
        .emit(Cmd::SET_DMA0_SIZE0, {{Field::SET_DMA0_SIZE0__size, static_cast<uint64_t>(p.size0)}})
        .emit(Cmd::SET_DMA0_SRC_STRIDE0, {{Field::SET_DMA0_SRC_STRIDE0__addr, forty_bits(p.src_stride0)}})
        .emit(Cmd::SET_DMA0_DST_STRIDE0, {{Field::SET_DMA0_DST_STRIDE0__addr, forty_bits(p.dst_stride0)}});
    if (stride_mode == 2) {
        b.emit(Cmd::SET_DMA0_SIZE1, {{Field::SET_DMA0_SIZE1__size, static_cast<uint64_t>(p.size1)}})
            .emit(Cmd::SET_DMA0_SRC_STRIDE1, {{Field::SET_DMA0_SRC_STRIDE1__addr, forty_bits(p.src_stride1)}})
            .emit(Cmd::SET_DMA0_DST_STRIDE1, {{Field::SET_DMA0_DST_STRIDE1__addr, forty_bits(p.dst_stride1)}});
    }
    b.emit(Cmd::SET_DMA0_IDX_REGION, {{Field::SET_DMA0_IDX_REGION__region, kIndexRegion}})
        .emit(Cmd::SET_DMA0_IDX_MAX, {{Field::SET_DMA0_IDX_MAX__idx_max, p.index_max}})
        .emit(Cmd::SET_DMA0_IDX, {{Field::SET_DMA0_IDX__addr, 0}});
    if (stride_mode == 2) b.emit(Cmd::SET_DMA0_IDX_SKIP1, {{Field::SET_DMA0_IDX_SKIP1__addr, p.index_skip1}});
    b.emit(Cmd::OP_DMA_START).emit(Cmd::OP_STOP);
    return b;
}

struct Machine {
    Machine() : config(*find_npu_config("ethos-u85-256")), space(map) {
        values = map.allocate(kValuesAddress, kBufferBytes, "values");
        out = map.allocate(kOutAddress, kBufferBytes, "out");
        index = map.allocate(kIndexAddress, 0x100, "indices");
        for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>(i * 13 + 1);
        std::fill(out.begin(), out.end(), kUntouched);
        space.set_base(kValuesRegion, kValuesAddress);
        space.set_base(kOutRegion, kOutAddress);
        space.set_base(kIndexRegion, kIndexAddress);
    }
    void store_indices(const IndexOp& op) {
        const size_t bytes = op.int64_indices ? 8 : 4;
        for (size_t i = 0; i < op.indices.size(); ++i) std::memcpy(index.data() + i * bytes, &op.indices[i], bytes);
    }
    void run(const CommandStreamBuilder& b) {
        Executor executor(config, space, "index.bin");
        executor.run(b.words());
    }

    NpuConfig config;
    MemoryMap map;
    AddressSpace space;
    std::span<uint8_t> values, out, index;
};

// The reference: whole rows of 2 * C bytes moved by the model's definition.
std::vector<uint8_t> reference(const IndexOp& op, bool gather, std::span<const uint8_t> src, std::vector<uint8_t> dst) {
    const size_t row = static_cast<size_t>(op.row_bytes());
    for (int n = 0; n < op.n; ++n)
        for (int w = 0; w < op.w; ++w) {
            const auto k = static_cast<size_t>(op.indices[static_cast<size_t>(n * op.w + w)]);
            const size_t listed = (static_cast<size_t>(n * op.w + w)) * row;
            const size_t tabled = (static_cast<size_t>(n * op.k) + k) * row;
            const size_t from = gather ? tabled : listed, to = gather ? listed : tabled;
            std::memcpy(dst.data() + to, src.data() + from, row);
        }
    return dst;
}

void expect_reference(const IndexOp& op, bool gather) {
    Machine m;
    m.store_indices(op);
    const std::vector<uint8_t> before(m.out.begin(), m.out.end());
    m.run(index_stream(vela_programming(op, gather)));
    const auto expected = reference(op, gather, m.values, before);
    for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(m.out[i], expected[i]) << "output byte " << i;
    EXPECT_NE(expected, before);
}

TEST(DmaIndex, GatherInt32IndicesOneBatch) {
    expect_reference({.n = 1, .k = 5, .c = 3, .w = 4, .indices = {4, 0, 2, 2}}, true);
}

TEST(DmaIndex, GatherInt32IndicesTwoBatchesIn3D) {
    expect_reference({.n = 2, .k = 5, .c = 3, .w = 4, .indices = {4, 0, 2, 2, 1, 3, 0, 4}}, true);
}

TEST(DmaIndex, GatherInt64IndicesSkipsTheirHighHalves) {
    expect_reference({.n = 1, .k = 6, .c = 5, .w = 3, .int64_indices = true, .indices = {5, 1, 3}}, true);
}

TEST(DmaIndex, GatherOfOneIndexIn1DStepsSourceStride0) {
    expect_reference({.n = 1, .k = 4, .c = 7, .w = 1, .indices = {3}}, true);
}

// Duplicate indices: the later row wins, as the rows are written in order.
TEST(DmaIndex, ScatterInt32IndicesTwoBatches) {
    expect_reference({.n = 2, .k = 6, .c = 2, .w = 3, .indices = {5, 0, 5, 2, 4, 1}}, false);
}

TEST(DmaIndex, ScatterInt64Indices) {
    expect_reference({.n = 1, .k = 5, .c = 4, .w = 3, .int64_indices = true, .indices = {4, 2, 0}}, false);
}

TEST(DmaIndex, DecodedRecordHoldsTheIndexArray) {
    const IndexOp op{.n = 2, .k = 5, .c = 3, .w = 4, .indices = {}};
    const auto b = index_stream(vela_programming(op, true));
    const auto stream = decode_stream(*find_npu_config("ethos-u85-256"), b.words(), "index.bin");
    const Dma& d = stream.ops.at(0).dma();
    EXPECT_TRUE(d.gather);
    EXPECT_FALSE(d.scatter);
    EXPECT_EQ(d.index.region, kIndexRegion);
    EXPECT_EQ(d.index.length, 2u * 4u * 4u);  // N * W int32
    EXPECT_EQ(d.index_max, 4u);
    EXPECT_EQ(d.src_stride0, 6);
    EXPECT_EQ(d.src_stride1, 30);
}

void expect_index_error(const IndexOp& op, bool gather, const std::string& needle) {
    Machine m;
    m.store_indices(op);
    const std::vector<uint8_t> before(m.out.begin(), m.out.end());
    const auto b = index_stream(vela_programming(op, gather));
    try {
        m.run(b);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "index.bin");
        EXPECT_EQ(e.where().offset, b.words().size() * 4 - 8);  // DMA_START, before STOP
        EXPECT_EQ(e.where().field, "NPU_OP_DMA_START");
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(DmaIndex, IndexAboveIdxMaxIsAnErrorNamingIt) {
    expect_index_error({.n = 1, .k = 5, .c = 3, .w = 4, .indices = {0, 1, 5, 2}}, true, "gather index 5 (plane 0, row 2");
    expect_index_error({.n = 1, .k = 5, .c = 3, .w = 2, .indices = {1, 1000000}}, false, "scatter index 1000000");
}

TEST(DmaIndex, NegativeIndexIsAnError) {
    expect_index_error({.n = 1, .k = 5, .c = 3, .w = 2, .indices = {-1, 0}}, true, "gather index -1");
}

TEST(DmaIndex, IndexArrayOutsideItsRegionIsAnError) {
    // 0x100 bytes of indices hold 64 int32: a gather of 65 rows reads past them.
    IndexOp op{.n = 1, .k = 2, .c = 1, .w = 65, .indices = std::vector<int64_t>(64, 0)};
    Machine m;
    m.store_indices(op);
    const auto b = index_stream(vela_programming(op, true));
    try {
        m.run(b);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, b.words().size() * 4 - 8);
        EXPECT_NE(std::string(e.what()).find("DMA index"), std::string::npos) << e.what();
    }
}

TEST(DmaIndex, GatherAndScatterTogetherAreRefused) {
    CommandStreamBuilder b(Generation::U85);
    b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__idx_mode, 1}})
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__idx_mode, 1}})
        .emit(Cmd::SET_DMA0_SRC).emit(Cmd::SET_DMA0_DST).emit(Cmd::SET_DMA0_LEN)
        .emit(Cmd::SET_DMA0_SRC_STRIDE0).emit(Cmd::SET_DMA0_DST_STRIDE0)
        .emit(Cmd::SET_DMA0_IDX_REGION).emit(Cmd::SET_DMA0_IDX).emit(Cmd::SET_DMA0_IDX_MAX);
    const uint32_t dma = static_cast<uint32_t>(b.words().size() * 4);
    b.emit(Cmd::OP_DMA_START);
    try {
        Machine().run(b);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, dma);
        EXPECT_EQ(e.where().field, "NPU_SET_DMA0_DST_REGION.idx_mode");
    }
}

// Cost, DRAM_Mid with Dedicated_Sram_384KB (the derivation of test_u85_cost.cc's DmaChannels):
// DRAM reads on the memory-to-memory channel run at 2.6624 B/cycle with 500 cycles latency, SRAM
// writes at 20.48 B/cycle with 32. A 1024-byte gather into SRAM whose 256 index bytes are in DRAM:
// indices 256 / 2.6624 + 500 = 596, then rows 1024 / 2.6624 + 500 = 884, so reads take 1480;
// writes 1024 / 20.48 + 32 = 82; the transfer takes 1480 (a plain copy: 884).
TEST(DmaIndex, CostAddsTheIndexReadsBeforeTheRows) {
    const NpuConfig npu = *find_npu_config("ethos-u85-256");
    const MemorySystem memory = make_memory_system(npu, {"", "Dedicated_Sram_384KB", {}});
    const CostContext ctx{npu, memory, {}, "test.bin"};
    EXPECT_EQ(u85_dma_cycles(DecodedOp{}, ctx, MemoryKind::Dram, MemoryKind::Sram, 1024, DmaIndexRead{MemoryKind::Dram, 256}), 1480);
    EXPECT_EQ(u85_dma_cycles(DecodedOp{}, ctx, MemoryKind::Dram, MemoryKind::Sram, 1024), 884);
}

// On the timeline the gather of GatherInt32IndicesTwoBatchesIn3D moves 8 rows of 6 bytes and
// reads 8 int32 indices: 48 + 32 bytes read, 48 written, for the cost of that transfer.
TEST(DmaIndex, TimelineCountsTheIndexTraffic) {
    const NpuConfig npu = *find_npu_config("ethos-u85-256");
    const MemorySystem memory = make_memory_system(npu, {});
    const auto regions = region_memories(memory, {});
    const IndexOp op{.n = 2, .k = 5, .c = 3, .w = 4, .indices = {}};
    const auto b = index_stream(vela_programming(op, true));
    const auto stream = decode_stream(npu, b.words(), "index.bin");
    const TimingResult r = TimingModel(npu, memory, regions, "test.bin").run(stream);
    const CostContext ctx{npu, memory, regions, "test.bin"};
    const MemoryKind src = ctx.memory_of(kValuesRegion), dst = ctx.memory_of(kOutRegion),
                     idx = ctx.memory_of(kIndexRegion);
    const OpTiming& t = r.ops.at(0);
    int64_t read = 0, written = 0;
    for (int m = 0; m < kMemoryKinds; ++m) read += t.cost.traffic.read[m], written += t.cost.traffic.write[m];
    EXPECT_EQ(read, 48 + 32);
    EXPECT_EQ(written, 48);
    EXPECT_EQ(t.end - t.start, u85_dma_cycles(DecodedOp{}, ctx, src, dst, 48, DmaIndexRead{idx, 32}));
}

}  // namespace
}  // namespace ethosu
