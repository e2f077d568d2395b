// NPU_OP_DMA_START on hand-built streams: 1D, 2D and 3D transfers with U65 skips against a
// plain reference copy, LUT loads into SHRAM, and the transfers the hardware does not define.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;

constexpr uint64_t kSrcAddress = 0x1000'0000;
constexpr uint64_t kDstAddress = 0x2000'0000;
constexpr uint64_t kBufferBytes = 0x1000;
constexpr uint8_t kUntouched = 0xA5;

// A U65 transfer as a programmer states it: LEN-byte rows, SIZE0 rows, SIZE1 planes; the skips
// apply to the sides whose stride mode is 2D/3D.
struct Transfer {
    uint64_t src_offset = 0, dst_offset = 0;
    uint64_t length = 0;
    int src_dims = 1, dst_dims = 1;
    int size0 = 1, size1 = 1;
    int64_t skip0 = 0, skip1 = 0;
};

uint64_t forty_bits(int64_t value) { return static_cast<uint64_t>(value) & ((1ull << 40) - 1); }

CommandStreamBuilder dma_stream(Generation g, const Transfer& t) {
    CommandStreamBuilder b(g);
    b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, 1},
                                      {Field::SET_DMA0_SRC_REGION__stride_mode, static_cast<uint64_t>(t.src_dims - 1)}})
        .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, t.src_offset}})
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__region, 2},
                                         {Field::SET_DMA0_DST_REGION__stride_mode, static_cast<uint64_t>(t.dst_dims - 1)}})
        .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, t.dst_offset}})
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, t.length}});
    if (std::max(t.src_dims, t.dst_dims) >= 2) {
        b.emit(Cmd::SET_DMA0_SIZE0, {{Field::SET_DMA0_SIZE0__size, static_cast<uint64_t>(t.size0)}})
            .emit(Cmd::SET_DMA0_SKIP0, {{Field::SET_DMA0_SKIP0__addr, forty_bits(t.skip0)}});
    }
    if (std::max(t.src_dims, t.dst_dims) >= 3) {
        b.emit(Cmd::SET_DMA0_SIZE1, {{Field::SET_DMA0_SIZE1__size, static_cast<uint64_t>(t.size1)}})
            .emit(Cmd::SET_DMA0_SKIP1, {{Field::SET_DMA0_SKIP1__addr, forty_bits(t.skip1)}});
    }
    b.emit(Cmd::OP_DMA_START).emit(Cmd::OP_STOP);
    return b;
}

// Offset of byte b of row r in plane p on one side: rows follow each other with SKIP0 bytes
// between them, planes with SKIP1 bytes after each plane's SIZE0 * LEN bytes.
uint64_t side_offset(const Transfer& t, bool strided, int p, int r, uint64_t b) {
    const int64_t len = static_cast<int64_t>(t.length);
    const int64_t row_step = strided ? len + t.skip0 : len;
    const int64_t plane_step = len * t.size0 + (strided ? t.skip1 : 0);
    return static_cast<uint64_t>(p * plane_step + r * row_step + static_cast<int64_t>(b));
}

std::vector<uint8_t> reference_copy(const Transfer& t, const std::vector<uint8_t>& src, std::vector<uint8_t> dst) {
    const int planes = std::max(t.src_dims, t.dst_dims) >= 3 ? t.size1 : 1;
    const int rows = std::max(t.src_dims, t.dst_dims) >= 2 ? t.size0 : 1;
    for (int p = 0; p < planes; ++p)
        for (int r = 0; r < rows; ++r)
            for (uint64_t b = 0; b < t.length; ++b)
                dst.at(t.dst_offset + side_offset(t, t.dst_dims > 1, p, r, b)) =
                    src.at(t.src_offset + side_offset(t, t.src_dims > 1, p, r, b));
    return dst;
}

// Source and destination in separate buffers (regions 1 and 2), so an access past either
// buffer is outside every mapping.
struct Machine {
    explicit Machine(const char* config_name) : config(*find_npu_config(config_name)), space(map) {
        src = map.allocate(kSrcAddress, kBufferBytes, "src");
        dst = map.allocate(kDstAddress, kBufferBytes, "dst");
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + i / 251);
        std::fill(dst.begin(), dst.end(), kUntouched);
        space.set_base(1, kSrcAddress);
        space.set_base(2, kDstAddress);
    }

    Executor run(const CommandStreamBuilder& b) {
        const auto stream = decode_stream(config, b.words(), "dma.bin");
        Executor executor(config, space, "dma.bin");
        executor.run(stream);
        return executor;
    }

    NpuConfig config;
    MemoryMap map;
    AddressSpace space;
    std::span<uint8_t> src, dst;
};

void expect_reference_copy(const char* config_name, const Transfer& t) {
    Machine m(config_name);
    const std::vector<uint8_t> src(m.src.begin(), m.src.end());
    const std::vector<uint8_t> before(m.dst.begin(), m.dst.end());
    m.run(dma_stream(m.config.generation, t));
    const auto expected = reference_copy(t, src, before);
    for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(m.dst[i], expected[i]) << "destination byte " << i;
    EXPECT_NE(expected, before) << "the transfer copied nothing";
}

TEST(Dma, OneDimensionalCopyOnU55AndU65) {
    for (const char* config : {"ethos-u55-128", "ethos-u65-256"}) {
        SCOPED_TRACE(config);
        expect_reference_copy(config, {.src_offset = 0x30, .dst_offset = 0x110, .length = 0x230});
    }
}

// A 1-D transfer (stride mode D1 on both sides) reads neither SIZE0 nor SIZE1: Vela 4.5 writes
// no SIZE0 before its U85 DMAs, 5.1 writes SIZE0 1 (regor MLBEDSW-11589), and a SIZE0 left over
// from a 2-D transfer must not repeat the row. Each form copies LEN bytes once.
TEST(Dma, OneDimensionalCopyReadsNoSizeRegisters) {
    const Transfer t{.src_offset = 0x40, .dst_offset = 0x80, .length = 0x120};
    for (const char* config : {"ethos-u65-256", "ethos-u85-256"})
        for (const std::optional<uint64_t> size0 : {std::optional<uint64_t>{}, std::optional<uint64_t>{1}, std::optional<uint64_t>{7}}) {
            SCOPED_TRACE(fmt::format("{}, SIZE0 {}", config, size0 ? std::to_string(*size0) : "never written"));
            Machine m(config);
            const std::vector<uint8_t> src(m.src.begin(), m.src.end());
            const std::vector<uint8_t> before(m.dst.begin(), m.dst.end());
            // Stride modes left at D1 (0); U85 has none on the destination side.
            CommandStreamBuilder b(m.config.generation);
            if (size0) b.emit(Cmd::SET_DMA0_SIZE0, {{Field::SET_DMA0_SIZE0__size, *size0}});
            b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, 1}})
                .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, t.src_offset}})
                .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__region, 2}})
                .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, t.dst_offset}})
                .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, t.length}})
                .emit(Cmd::OP_DMA_START)
                .emit(Cmd::OP_STOP);
            const auto stream = decode_stream(m.config, b.words(), "dma.bin");
            EXPECT_TRUE(stream.ops.at(0).unset_registers.empty());
            Executor executor(m.config, m.space, "dma.bin");
            executor.run(stream);
            const auto expected = reference_copy(t, src, before);
            EXPECT_TRUE(std::equal(expected.begin(), expected.end(), m.dst.begin()));
        }
}

// What Vela emits for U65: a contiguous source, a strided destination.
TEST(Dma, U65TwoDimensionalWriteSkipsAfterEachRow) {
    expect_reference_copy("ethos-u65-256",
                          {.src_offset = 0x40, .dst_offset = 0x8, .length = 48, .dst_dims = 2, .size0 = 5, .skip0 = 80});
}

TEST(Dma, U65ThreeDimensionalWriteSkipsAfterRowsAndPlanes) {
    expect_reference_copy("ethos-u65-256", {.src_offset = 0x10, .dst_offset = 0x20, .length = 32, .dst_dims = 3,
                                            .size0 = 3, .size1 = 4, .skip0 = 16, .skip1 = 96});
}

TEST(Dma, U65StridedReadGathersRowsIntoAContiguousDestination) {
    expect_reference_copy("ethos-u65-256", {.src_offset = 0x100, .dst_offset = 0, .length = 24, .src_dims = 3,
                                            .size0 = 4, .size1 = 2, .skip0 = 40, .skip1 = 8});
}

TEST(Dma, U65BothSidesStrided) {
    expect_reference_copy("ethos-u65-256", {.src_offset = 0, .dst_offset = 0x80, .length = 16, .src_dims = 2,
                                            .dst_dims = 2, .size0 = 7, .skip0 = 112});
}

// The skips are 40-bit two's complement, like the addresses they step: -2 * LEN walks the
// destination rows backwards.
TEST(Dma, U65NegativeSkipWalksBackwards) {
    expect_reference_copy("ethos-u65-256", {.src_offset = 0, .dst_offset = 0x400, .length = 64, .dst_dims = 2,
                                            .size0 = 6, .skip0 = -128});
}

TEST(Dma, DecodedRecordHoldsRowAndPlaneStrides) {
    const Transfer t{.length = 32, .src_dims = 1, .dst_dims = 3, .size0 = 3, .size1 = 2, .skip0 = 16, .skip1 = 100};
    const auto stream = decode_stream(*find_npu_config("ethos-u65-256"), dma_stream(Generation::U65, t).words(),
                                      "dma.bin");
    const Dma& d = stream.ops.at(0).dma();
    EXPECT_EQ(d.dimensions, 3);
    EXPECT_EQ(d.length, 32u);
    EXPECT_EQ(d.size0, 3);
    EXPECT_EQ(d.size1, 2);
    EXPECT_EQ(d.src_stride0, 32);
    EXPECT_EQ(d.src_stride1, 96);
    EXPECT_EQ(d.dst_stride0, 48);
    EXPECT_EQ(d.dst_stride1, 196);
}

TEST(Dma, TransferLeavingItsRegionNamesTheOpAndOffset) {
    Machine m("ethos-u65-256");
    // The fourth row starts at 0xF00 + 3 * 0x60 = 0x1020, past the 4 KB destination.
    const Transfer t{.dst_offset = 0xF00, .length = 0x40, .dst_dims = 2, .size0 = 4, .skip0 = 0x20};
    const auto b = dma_stream(Generation::U65, t);
    const uint32_t op_offset = static_cast<uint32_t>(b.words().size() * 4 - 8);  // DMA_START, then STOP
    try {
        m.run(b);
        FAIL() << "a DMA past its region was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "dma.bin");
        EXPECT_EQ(e.where().offset, op_offset);
        EXPECT_EQ(e.where().field, "NPU_OP_DMA_START");
        EXPECT_NE(e.reason().find("DMA destination accesses region 2 bytes [0x1020, 0x1060)"), std::string::npos)
            << e.what();
    }
}

TEST(Dma, LutLoadsWriteShramSlots) {
    for (const char* config : {"ethos-u55-128", "ethos-u65-256"}) {
        SCOPED_TRACE(config);
        Machine m(config);
        Shram probe(m.config);
        const int slot = 3;
        CommandStreamBuilder b(m.config.generation);
        // Internal mode: the region field is a core mask on U65; Vela writes 3 on both.
        b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, 1}})
            .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, 0x200}})
            .emit(Cmd::SET_DMA0_DST_REGION,
                  {{Field::SET_DMA0_DST_REGION__region, 3}, {Field::SET_DMA0_DST_REGION__region_mode, 1}})
            .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, probe.lut_base() + slot * Shram::kLutSlotBytes}})
            .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, Shram::kLutSlotBytes}})
            .emit(Cmd::OP_DMA_START)
            .emit(Cmd::OP_STOP);
        Executor executor = m.run(b);
        const auto lut = executor.shram().lut(slot);
        for (int i = 0; i < Shram::kLutSlotBytes; ++i) ASSERT_EQ(lut[static_cast<size_t>(i)], m.src[0x200 + i]) << i;
        EXPECT_TRUE(std::all_of(m.dst.begin(), m.dst.end(), [](uint8_t v) { return v == kUntouched; }));
    }
}

TEST(Dma, LutLoadPastShramIsRefused) {
    Machine m("ethos-u65-256");
    const Shram probe(m.config);
    CommandStreamBuilder b(Generation::U65);
    b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, 1}})
        .emit(Cmd::SET_DMA0_SRC)
        .emit(Cmd::SET_DMA0_DST_REGION,
              {{Field::SET_DMA0_DST_REGION__region, 3}, {Field::SET_DMA0_DST_REGION__region_mode, 1}})
        .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, probe.lut_base() + Shram::kLutBytes - 16}})
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, 32}})
        .emit(Cmd::OP_DMA_START);
    try {
        m.run(b);
        FAIL() << "a LUT load past SHRAM was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, b.words().size() * 4 - 4);
        EXPECT_NE(e.reason().find("internal memory"), std::string::npos) << e.what();
    }
}

// U55 defines only D1: a 2D stride mode is a malformed stream, reported at the DMA_START.
TEST(Dma, U55RefusesStrideModesItLacks) {
    CommandStreamBuilder b(Generation::U55);
    b.emit(Cmd::SET_DMA0_SRC_REGION)
        .emit(Cmd::SET_DMA0_SRC)
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__stride_mode, 1}})
        .emit(Cmd::SET_DMA0_DST)
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, 16}})
        .emit(Cmd::OP_DMA_START);
    try {
        decode_stream(*find_npu_config("ethos-u55-256"), b.words(), "u55.bin");
        FAIL() << "U55 accepted a 2D DMA";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, b.words().size() * 4 - 4);
        EXPECT_EQ(e.where().field, "NPU_SET_DMA0_DST_REGION.stride_mode");
        EXPECT_NE(e.reason().find("value 1 is not a valid dma_stride_mode"), std::string::npos) << e.what();
    }
}

TEST(Dma, U65RefusesUndefinedTransfers) {
    auto refused_field = [](const Transfer& t) -> std::string {
        Machine m("ethos-u65-256");
        try {
            m.run(dma_stream(Generation::U65, t));
        } catch (const Error& e) {
            return e.where().field;
        }
        return "accepted";
    };
    // Both sides strided with different dimension counts: the documentation says nothing.
    EXPECT_EQ(refused_field({.length = 16, .src_dims = 2, .dst_dims = 3, .size0 = 2, .size1 = 2}),
              "NPU_SET_DMA0_DST_REGION.stride_mode");
    // Stride mode 3 does not exist.
    EXPECT_EQ(refused_field({.length = 16, .src_dims = 4, .size0 = 2, .size1 = 2}),
              "NPU_SET_DMA0_SRC_REGION.stride_mode");
    EXPECT_EQ(refused_field({.length = 16, .dst_dims = 2, .size0 = 0}), "NPU_SET_DMA0_SIZE0");
    EXPECT_EQ(refused_field({.length = 16, .dst_dims = 3, .size0 = 2, .size1 = 0}), "NPU_SET_DMA0_SIZE1");
}

}  // namespace
}  // namespace ethosu
