// U85 kernel-op cost: exact-cycle micro tests (derivation in each comment) on ops written as
// command streams and decoded, and roofline tests.
//
// Memory, unless a test says otherwise: Ethos_U85_SYS_DRAM_Mid with Sram_Only, every region in
// SRAM: 16 B beats x 2 ports = 32 B/cycle, latency 32, 64 B bursts (4 words), 8 outstanding
// reads and writes per port. Channel limits there: in flight min(read buffer / 4,
// 8 x 2 x 0.8 = 12.8) bursts, rate 64 x in flight / 32 x 0.8, so 20.48 B/cycle for the IFM,
// IFM-stream and write channels and 6.4 B/cycle for scales (16-word buffer: 4 bursts).

#include <gtest/gtest.h>

#include <string>

#include "emulator/engine/timing/op_cost.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/decoder.h"
#include "emulator/isa/error.h"
#include "tests/timing/timing_test_util.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;
using timing_test::cost_context;

constexpr auto kSram = static_cast<size_t>(MemoryKind::Sram);
constexpr auto kDram = static_cast<size_t>(MemoryKind::Dram);

// NPU_SET_ACC_FORMAT.microblock codes.
enum Microblock : uint64_t { kU1x1 = 0, kU1x2 = 1, kU1x4 = 2, kU2x2 = 3, kU2x4 = 4, kU4x4 = 5 };

uint64_t precision_code(int bits) { return bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3; }

// A U85 kernel op as a command stream: every register is written (zero unless set here), so
// the decoder runs strict and the op is exactly what the test states.
class U85Program {
public:
    U85Program() {
        for (const isa::CommandDesc& c : b_.generation().commands)
            if (c.name.starts_with("NPU_SET_")) b_.emit(c.id);
    }

    // An NHWC (default) or NHCWB16 map h x w x c in region at base, contiguous, signed.
    U85Program& ifm(int h, int w, int c, int bits, int region, uint64_t base = 0) {
        b_.emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, region}})
            .emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, base}})
            .emit(Cmd::SET_IFM_HEIGHT0_M1, {{Field::SET_IFM_HEIGHT0_M1__height_m1, h - 1}})
            .emit(Cmd::SET_IFM_HEIGHT1_M1, {{Field::SET_IFM_HEIGHT1_M1__height_m1, h - 1}})
            .emit(Cmd::SET_IFM_WIDTH0_M1, {{Field::SET_IFM_WIDTH0_M1__width_m1, w - 1}})
            .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, c - 1}})
            .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, bits / 8}})
            .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, uint64_t(c) * bits / 8}})
            .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, uint64_t(w) * c * bits / 8}})
            .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1},
                                           {Field::SET_IFM_PRECISION__activation_precision, precision_code(bits)}});
        return *this;
    }
    U85Program& ifm_chained(int c, int bits) {
        b_.emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, c - 1}})
            .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1},
                                           {Field::SET_IFM_PRECISION__activation_precision, precision_code(bits)},
                                           {Field::SET_IFM_PRECISION__activation_storage, kChainedStorage}});
        return *this;
    }
    U85Program& ifm2(int h, int w, int c, int bits, int region, uint64_t base) {
        b_.emit(Cmd::SET_IFM2_REGION, {{Field::SET_IFM2_REGION__region, region}})
            .emit(Cmd::SET_IFM2_BASE0, {{Field::SET_IFM2_BASE0__addr, base}})
            .emit(Cmd::SET_IFM2_HEIGHT0_M1, {{Field::SET_IFM2_HEIGHT0_M1__height_m1, h - 1}})
            .emit(Cmd::SET_IFM2_HEIGHT1_M1, {{Field::SET_IFM2_HEIGHT1_M1__height_m1, h - 1}})
            .emit(Cmd::SET_IFM2_WIDTH0_M1, {{Field::SET_IFM2_WIDTH0_M1__width_m1, w - 1}})
            .emit(Cmd::SET_IFM2_STRIDE_C, {{Field::SET_IFM2_STRIDE_C__addr, bits / 8}})
            .emit(Cmd::SET_IFM2_STRIDE_X, {{Field::SET_IFM2_STRIDE_X__addr, uint64_t(c) * bits / 8}})
            .emit(Cmd::SET_IFM2_STRIDE_Y, {{Field::SET_IFM2_STRIDE_Y__addr, uint64_t(w) * c * bits / 8}})
            .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, 1},
                                            {Field::SET_IFM2_PRECISION__activation_precision, precision_code(bits)}});
        return *this;
    }
    U85Program& ofm(int h, int w, int c, int bits, int region, uint64_t base = 0, uint64_t storage = 0) {
        b_.emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, region}})
            .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, base}})
            .emit(Cmd::SET_OFM_HEIGHT_M1, {{Field::SET_OFM_HEIGHT_M1__height_m1, h - 1}})
            .emit(Cmd::SET_OFM_WIDTH_M1, {{Field::SET_OFM_WIDTH_M1__width_m1, w - 1}})
            .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, c - 1}})
            .emit(Cmd::SET_OFM_HEIGHT0_M1, {{Field::SET_OFM_HEIGHT0_M1__height_m1, h - 1}})
            .emit(Cmd::SET_OFM_HEIGHT1_M1, {{Field::SET_OFM_HEIGHT1_M1__height_m1, h - 1}})
            .emit(Cmd::SET_OFM_WIDTH0_M1, {{Field::SET_OFM_WIDTH0_M1__width_m1, w - 1}})
            .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, bits / 8}})
            .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, uint64_t(c) * bits / 8}})
            .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, uint64_t(w) * c * bits / 8}})
            .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                           {Field::SET_OFM_PRECISION__activation_precision, precision_code(bits)},
                                           {Field::SET_OFM_PRECISION__activation_storage, storage}});
        return *this;
    }
    // Kernel kw x kh with stride and symmetric padding.
    U85Program& kernel(int kw, int kh, int stride, int pad, bool part_kernel_first = false) {
        b_.emit(Cmd::SET_KERNEL_WIDTH_M1, {{Field::SET_KERNEL_WIDTH_M1__width_m1, kw - 1}})
            .emit(Cmd::SET_KERNEL_HEIGHT_M1, {{Field::SET_KERNEL_HEIGHT_M1__height_m1, kh - 1}})
            .emit(Cmd::SET_KERNEL_STRIDE, {{Field::SET_KERNEL_STRIDE__stride_x_lsb, uint64_t(stride - 1)},
                                           {Field::SET_KERNEL_STRIDE__stride_y_lsb, uint64_t(stride - 1)},
                                           {Field::SET_KERNEL_STRIDE__weight_order, part_kernel_first ? 1u : 0u}})
            .emit(Cmd::SET_IFM_PAD_TOP, {{Field::SET_IFM_PAD_TOP__pad, pad}})
            .emit(Cmd::SET_IFM_PAD_LEFT, {{Field::SET_IFM_PAD_LEFT__pad, pad}})
            .emit(Cmd::SET_IFM_PAD_BOTTOM, {{Field::SET_IFM_PAD_BOTTOM__pad, pad}})
            .emit(Cmd::SET_IFM_PAD_RIGHT, {{Field::SET_IFM_PAD_RIGHT__pad, pad}});
        return *this;
    }
    // Weight stream (decoder 0) and scales, back to back in region.
    U85Program& weights(int region, uint64_t weight_bytes, uint64_t scale_bytes) {
        b_.emit(Cmd::SET_WEIGHT_REGION, {{Field::SET_WEIGHT_REGION__region, region}})
            .emit(Cmd::SET_WEIGHT_BASE, {{Field::SET_WEIGHT_BASE__addr, 0}})
            .emit(Cmd::SET_WEIGHT_LENGTH, {{Field::SET_WEIGHT_LENGTH__length, weight_bytes}})
            .emit(Cmd::SET_SCALE_REGION, {{Field::SET_SCALE_REGION__region, region}})
            .emit(Cmd::SET_SCALE_BASE, {{Field::SET_SCALE_BASE__addr, weight_bytes}})
            .emit(Cmd::SET_SCALE_LENGTH, {{Field::SET_SCALE_LENGTH__length, scale_bytes}});
        return *this;
    }
    U85Program& block(int h, int w, int d, Microblock microblock) {
        b_.emit(Cmd::SET_OFM_BLK_HEIGHT_M1, {{Field::SET_OFM_BLK_HEIGHT_M1__height_m1, h - 1}})
            .emit(Cmd::SET_OFM_BLK_WIDTH_M1, {{Field::SET_OFM_BLK_WIDTH_M1__width_m1, w - 1}})
            .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, d - 1}})
            .emit(Cmd::SET_ACC_FORMAT, {{Field::SET_ACC_FORMAT__microblock, microblock}});
        return *this;
    }
    U85Program& emit(Cmd cmd, std::initializer_list<std::pair<Field, uint64_t>> fields = {}) {
        b_.emit(cmd, fields);
        return *this;
    }

    DecodedStream decode_all(const NpuConfig& npu) const {
        return decode_stream(npu, b_.words(), "u85_cost_test");
    }
    DecodedOp decode(const NpuConfig& npu) const { return decode_all(npu).ops.back(); }

    static constexpr uint64_t kChainedStorage = 2;  // ACTIVATION_STORAGE_CHAINED

private:
    CommandStreamBuilder b_{Generation::U85};
};

struct Npu {
    NpuConfig npu;
    MemorySystem memory;
    explicit Npu(const char* name, const char* memory_mode = "Sram_Only", const char* system = "")
        : npu(*find_npu_config(name)), memory(make_memory_system(npu, {system, memory_mode, {}})) {}
    OpCost cost(const DecodedOp& op) const { return u85_kernel_cost(op, cost_context(npu, memory)); }
};

// ADD int8 8x8x32 + 8x8x32 -> 8x8x32 in SRAM, block 8x8x32, micro-block 1x2x16, U85-256:
//   output unit: 8-bit OFM 0.25 cycles/element x 2048 = 512.
//   IFM block (= OFM block) fetch: 2048 bytes, pixel stride 32 = block depth, so full 64 B
//     bursts: 32 + 2048 / 32 = 96. OFM block write: depth 32 > 16 -> 16 B bursts, 2048 bytes
//     cost 8192: 32 + 8192 / 32 = 288.
//   issue limit: ceil((288 / 2048 + 0.25) / 4 x 2048) = 200 < 512.
//   traffic: 2048 + 2048 read on the IFM-stream channel, 8192 written; the write channel at
//     20.48 B/cycle needs 8192 / 20.48 = 400 cycles, more than 12288 / 32 = 384 for SRAM.
TEST(U85Cost, ElementwiseAddIsOutputUnitBound) {
    const Npu s("ethos-u85-256");
    const DecodedOp op = U85Program()
                             .ifm(8, 8, 32, 8, 1, 0)
                             .ifm2(8, 8, 32, 8, 1, 2048)
                             .ofm(8, 8, 32, 8, 1, 4096)
                             .block(8, 8, 32, kU1x2)
                             .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 1}})
                             .decode(s.npu);
    const OpCost c = s.cost(op);
    EXPECT_EQ(c.output_cycles, 512);
    EXPECT_EQ(c.issue_cycles, 200);
    EXPECT_EQ(c.compute_cycles, 512);
    EXPECT_EQ(c.traffic.read[kSram], 4096);
    EXPECT_EQ(c.traffic.write[kSram], 8192);
    EXPECT_NEAR(c.access_cycles[kSram], 400, 1);  // the rate is not exact in floating point
    EXPECT_EQ(c.macs, 0);
}

// The ADD above with its OFM transposed or reversed (Vela's activation rates): the output unit
// runs at half rate (0.5 cycles/element on U85-256, 0.5 x 2048 = 1024) when H and W trade
// places (WHC, WCH, CWH) or W is reversed; the other modes keep the full 0.25 (512). The
// issue limit at half rate: ceil((288 / 2048 + 0.5) / 4 x 2048) = 328, still below.
TEST(U85Cost, TransposeSwappingHeightAndWidthOrReversingWidthHalvesTheOutputRate) {
    const Npu s("ethos-u85-256");
    struct Case {
        uint64_t transpose, reverse;
        int64_t output_cycles;
    };
    for (const Case& k : {Case{1, 0, 1024}, Case{3, 0, 1024}, Case{7, 0, 1024}, Case{0, 2, 1024}, Case{2, 0, 512},
                          Case{6, 0, 512}, Case{0, 1, 512}, Case{0, 3, 512}}) {
        const DecodedOp op =
            U85Program()
                .ifm(8, 8, 32, 8, 1, 0)
                .ifm2(8, 8, 32, 8, 1, 2048)
                .ofm(8, 8, 32, 8, 1, 4096)
                .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                               {Field::SET_OFM_PRECISION__activation_transpose, k.transpose},
                                               {Field::SET_OFM_PRECISION__activation_reverse, k.reverse}})
                .block(8, 8, 32, kU1x2)
                .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 1}})
                .decode(s.npu);
        const OpCost c = s.cost(op);
        EXPECT_EQ(c.output_cycles, k.output_cycles) << "transpose " << k.transpose << " reverse " << k.reverse;
        EXPECT_EQ(c.compute_cycles, k.output_cycles) << "transpose " << k.transpose << " reverse " << k.reverse;
    }
}

// 1x1 CONV 16x16x128 -> 16x16x64 int8, depth first, block 8x16x32, micro-block 2x2x8, U85-256:
//   IFM block: depth 64 (depth first, 8-deep micro-block), 8 x 16 -> 8x16x64.
//   micro-blocks per block 4x8x4 (WH 32, depth 4); per 64-deep IFM slice:
//     max(weight decode 32 x 8 / 8 = 32, 64 / 8 x 32 = 256) x 1 kernel step x 4 = 1024;
//     128 / 64 = 2 slices -> 2048 per block. OFM blocks: (8 x 8 x 8 micro-blocks) / 128 = 4.
//   output unit: 0.25 x 4096 = 1024 per block (scale fetch 10 x 32 x 32 / 256 = 40 is less).
//   IFM block fetch: 8x16x64 of a 128-deep map (pixel stride 128 != 64: 64 B bursts of one
//     pixel's 64 channels, still full) 32 + 8192 / 32 = 288. OFM block write 4096 bytes at 16 B
//     bursts: 32 + 16384 / 32 = 544. Skew 256.
//   issue (256 + 2048 + 1024) / 4 = 832. MAC bound: 2048 x 4 = 8192, then the last block's
//     output 1024 and write 544 (drain 1568) after the first fetch 288 (fill): 10048.
//   MACs 16 x 16 x 64 x 128 = 2097152 = 8192 cycles at 256 per cycle.
TEST(U85Cost, PointwiseConvIsMacBound) {
    const Npu s("ethos-u85-256");
    const DecodedOp op = U85Program()
                             .ifm(16, 16, 128, 8, 1)
                             .ofm(16, 16, 64, 8, 1, 32768)
                             .kernel(1, 1, 1, 0)
                             .weights(1, 128 * 64, 64 * 10)
                             .block(8, 16, 32, kU2x2)
                             .emit(Cmd::OP_CONV)
                             .decode(s.npu);
    const OpCost c = s.cost(op);
    EXPECT_EQ(c.macs, 2097152);
    EXPECT_EQ(c.issue_cycles, 832);
    EXPECT_EQ(c.mac_cycles, 2048 * 4 + 1024);
    EXPECT_EQ(c.output_cycles, 1024 * 4 + 2048);
    EXPECT_EQ(c.fill_cycles, 288);
    EXPECT_EQ(c.drain_cycles, 544 + 1024);
    EXPECT_EQ(c.compute_cycles, 10048);
    // IFM: 8 x 16 pixels x 128 channels per block x 4 blocks; weights and scales again for each
    // of the 2 blocks in height and width; OFM 16384 bytes at 16 B bursts.
    EXPECT_EQ(c.traffic.read[kSram], 8 * 16 * 128 * 4 + 2 * (128 * 64 + 64 * 10));
    EXPECT_EQ(c.traffic.write[kSram], 16384 * 4);
}

// 3x3 CONV, part-kernel first, 8x8x16 -> 8x8x16 int8, padding 1, block 8x8x16, micro-block
// 1x4x8, U85-256:
//   IFM block depth 16 (part kernel); its allocation unit for 16 x 8 = 128 bits with the 1x4x8
//     micro-block is 1x4 -> IFM block (8 - 1) + 3 = 10 rows, 10 columns rounded to 12: 10x12x16.
//   micro-blocks per block 8x2x2 (WH 16, depth 2); 9 kernel elements in ceil(9 / 4) = 3 steps:
//     max(32, 4 x 16 = 64) x 3 x 2 x ceil(16 / 8) = 768; one OFM block.
//   output unit 0.25 x 1024 = 256; fetch: the 8x8x16 IFM is contiguous, 32 + 1024 / 32 = 64;
//     write 1024 bytes in 64 B bursts (depth 16, contiguous): 64. One block: no skew.
//   issue (768 + 256) / 4 = 256. MAC bound: 64 + 768 + 256 + 64 = 1152. MACs 9 x 1024 x 16.
TEST(U85Cost, PartKernelConvDerivesItsIfmBlock) {
    const Npu s("ethos-u85-256");
    const DecodedOp op = U85Program()
                             .ifm(8, 8, 16, 8, 1)
                             .ofm(8, 8, 16, 8, 1, 4096)
                             .kernel(3, 3, 1, 1, true)
                             .weights(1, 9 * 16 * 16, 16 * 10)
                             .block(8, 8, 16, kU1x4)
                             .emit(Cmd::OP_CONV)
                             .decode(s.npu);
    const OpCost c = s.cost(op);
    EXPECT_EQ(c.issue_cycles, 256);
    EXPECT_EQ(c.mac_cycles, 768 + 256);
    EXPECT_EQ(c.compute_cycles, 1152);
    EXPECT_EQ(c.macs, 9 * 1024 * 16);
}

// 3x3 DEPTHWISE 8x8x32 int8, padding 1, block 8x8x32, micro-block 1x2x16, U85-256:
//   IFM block depth = OFM block depth 32 (256 bits: allocation unit 1x2x2 x 128 bits = 32
//     channels) -> 10x10x32.
//   micro-blocks 8x4x2 (WH 32, depth 2); ceil(9 / 4) = 3 steps:
//     max(weight decode 32 x 16 / 8 = 64, 4 x 32 x 1) x 3 x 2 = 768.
//   output 0.25 x 2048 = 512; fetch 2048 contiguous bytes: 96; write 2048 at 16 B bursts: 288.
//   issue (768 + 512) / 4 = 320. MAC bound: 96 + 768 + 512 + 288 = 1664. MACs 9 x 2048.
TEST(U85Cost, DepthwiseConv) {
    const Npu s("ethos-u85-256");
    const DecodedOp op = U85Program()
                             .ifm(8, 8, 32, 8, 1)
                             .ofm(8, 8, 32, 8, 1, 4096)
                             .kernel(3, 3, 1, 1)
                             .weights(1, 9 * 32, 32 * 10)
                             .block(8, 8, 32, kU1x2)
                             .emit(Cmd::OP_DEPTHWISE)
                             .decode(s.npu);
    const OpCost c = s.cost(op);
    EXPECT_EQ(c.issue_cycles, 320);
    EXPECT_EQ(c.compute_cycles, 1664);
    EXPECT_EQ(c.macs, 9 * 2048);
    // One IFM fetch covers all channels of a depthwise op: 8 x 8 x 32 bytes, read once.
    EXPECT_EQ(c.traffic.read[kSram], 2048 + 9 * 32 + 32 * 10);
}

// MAXPOOL 2x2 stride 2, 16x16x16 -> 8x8x16 int8, block 8x8x16, micro-block 1x2x16, U85-256:
//   micro-blocks 8x4x1 = 32; one step of max(4, 4 elements) x 32 x 8 / 2 = 512.
//   output 0.25 x 1024 = 256; IFM block 16x16x16 (4096 contiguous bytes): 32 + 128 = 160;
//   write 1024 contiguous bytes: 32 + 32 = 64. issue (512 + 256) / 4 = 192.
//   MAC bound: 160 + 512 + 256 + 64 = 992. MACs 4 x 1024.
TEST(U85Cost, MaxPool) {
    const Npu s("ethos-u85-256");
    const DecodedOp op = U85Program()
                             .ifm(16, 16, 16, 8, 1)
                             .ofm(8, 8, 16, 8, 1, 4096)
                             .kernel(2, 2, 2, 0)
                             .block(8, 8, 16, kU1x2)
                             .emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 0}})
                             .decode(s.npu);
    const OpCost c = s.cost(op);
    EXPECT_EQ(c.issue_cycles, 192);
    EXPECT_EQ(c.compute_cycles, 992);
    EXPECT_EQ(c.macs, 4096);
}

// A 32-bit ADD into the chaining buffer: the output unit runs at the chained 32-bit rate 0.5
// (U85-256), and the OFM costs no memory traffic and no write-back.
//   output 0.5 x 8 x 8 x 16 = 512. IFM block fetch: 1024 elements x 4 bytes; Vela compares the
//   64-byte pixel stride with the 16-channel block depth, so bursts are one pixel (64 B):
//   32 + 4096 / 32 = 160. issue ceil((160 / 1024 + 0.5) / 4 x 1024) = 168 < 512.
//   traffic: each IFM 1024 (Vela counts whole-op traffic in elements), nothing written.
TEST(U85Cost, ChainedOutputHasNoMemoryTraffic) {
    const Npu s("ethos-u85-256");
    const DecodedOp op = U85Program()
                             .ifm(8, 8, 16, 32, 1, 0)
                             .ifm2(8, 8, 16, 32, 1, 4096)
                             .ofm(8, 8, 16, 32, 1, 0, U85Program::kChainedStorage)
                             .block(8, 8, 16, kU1x2)
                             .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 1}})
                             .decode(s.npu);
    ASSERT_EQ(op.kernel().ofm.storage, Storage::Chained);
    const OpCost c = s.cost(op);
    EXPECT_EQ(c.output_cycles, 512);
    EXPECT_EQ(c.issue_cycles, 168);
    EXPECT_EQ(c.compute_cycles, 512);
    EXPECT_EQ(c.traffic.read[kSram], 2048);
    EXPECT_EQ(c.traffic.write[kSram], 0);
}

// The consumer of a chained map reads its IFM from the chaining buffer: only IFM2 is fetched.
TEST(U85Cost, ChainedInputHasNoMemoryTraffic) {
    const Npu s("ethos-u85-256");
    const DecodedOp op = U85Program()
                             .ifm_chained(16, 32)
                             .ifm2(8, 8, 16, 32, 1, 4096)
                             .ofm(8, 8, 16, 8, 1, 8192)
                             .block(8, 8, 16, kU1x2)
                             .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 0}})
                             .decode(s.npu);
    ASSERT_EQ(op.kernel().ifm.storage, Storage::Chained);
    const OpCost c = s.cost(op);
    EXPECT_EQ(c.traffic.read[kSram], 1024);  // IFM2's elements only
}

// RESIZE 4x4x16 -> 8x8x16 int8 (bilinear), block 2x8x16, micro-block 1x2x16, U85-256:
//   output unit 0.25 x 1024 = 256. IFM block: the 1x4 IFM part an OFM block maps to, plus the
//   next row (the next column is past the edge): 2x4x16, 128 contiguous bytes, 32 + 4 = 36;
//   OFM block write 256 contiguous bytes: 32 + 8 = 40.
//   issue ceil((40 / 256 + 0.25) / 4 x 1024) = 104 < 256.
//   traffic: the IFM once (256), the OFM once (1024).
TEST(U85Cost, ResizeIsPricedLikeAStreamingOp) {
    const Npu s("ethos-u85-256");
    const DecodedOp op = U85Program()
                             .ifm(4, 4, 16, 8, 1)
                             .ofm(8, 8, 16, 8, 1, 4096)
                             .kernel(4, 4, 1, 0)  // the IFM area the resize reads
                             .block(2, 8, 16, kU1x2)
                             .emit(Cmd::OP_RESIZE)
                             .decode(s.npu);
    const OpCost c = s.cost(op);
    EXPECT_EQ(c.issue_cycles, 104);
    EXPECT_EQ(c.compute_cycles, 256);
    EXPECT_EQ(c.traffic.read[kSram], 256);
    EXPECT_EQ(c.traffic.write[kSram], 1024);
}

// Scales read from DRAM go through the scale channel's 16-word read buffer: DRAM bursts are
// 128 B (8 words), so 2 in flight against 500 cycles of latency: 128 x 2 / 500 x 0.8 = 0.4096
// B/cycle. (Dedicated_Sram_384KB: region 0, the constant data, in DRAM; region 2 in SRAM.)
// 1x1 CONV 24x16x16 -> 24x16x64 in 8x16x64 blocks: 3 blocks in height, so the 640 scale bytes
// are read 3 times: 1920 / 0.4096 = 4687 cycles; the 1024 weight bytes x 3 through the weight
// channel (128 words: 16 bursts, 128 x 16 / 500 x 0.8 = 3.2768 B/cycle) take 937; all DRAM
// bytes at 12 B/cycle 416.
TEST(U85Cost, ScaleChannelLimitsDramScaleReads) {
    const Npu s("ethos-u85-256", "Dedicated_Sram_384KB");
    const DecodedOp op = U85Program()
                             .ifm(24, 16, 16, 8, 2)
                             .ofm(24, 16, 64, 8, 2, 8192)
                             .kernel(1, 1, 1, 0)
                             .weights(0, 16 * 64, 64 * 10)
                             .block(8, 16, 64, kU2x2)
                             .emit(Cmd::OP_CONV)
                             .decode(s.npu);
    const OpCost c = s.cost(op);
    EXPECT_EQ(c.traffic.read[kDram], 3 * (16 * 64 + 64 * 10));
    EXPECT_EQ(c.access_cycles[kDram], 4687);
}

// A micro-block the configuration does not have is refused, naming the field.
TEST(U85Cost, UnknownMicroblockIsAnError) {
    const Npu s("ethos-u85-256");
    const DecodedOp op = U85Program()
                             .ifm(8, 8, 16, 8, 1)
                             .ofm(8, 8, 16, 8, 1, 4096)
                             .kernel(1, 1, 1, 0)
                             .weights(1, 256, 160)
                             .block(8, 8, 16, kU4x4)
                             .emit(Cmd::OP_CONV)
                             .decode(s.npu);
    try {
        s.cost(op);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().field, "NPU_SET_ACC_FORMAT.microblock");
        EXPECT_EQ(e.where().offset, op.offset);
    }
}

// A 1x1 CONV of 65536 x 65536 x 65536 from 65536 channels in 1x1x1 blocks has 2^80 MACs: an
// Error naming the op, not a figure that overflowed (Release builds printed ~3e14 cycles).
TEST(U85Cost, AnOpBeyondTheCostRangeIsAnError) {
    const Npu s("ethos-u85-256");
    DecodedOp op = timing_test::conv_1x1(65536, 65536, 65536, 65536, {1, 1, 1});
    op.kernel().output.microblock = MicroBlock::U1x2;
    op.offset = 0x40;
    timing_test::expect_error_at([&] { s.cost(op); }, 0x40, "conv");
}

// DMA on U85 (Vela's memory-to-memory model), DRAM_Mid with Dedicated_Sram_384KB:
//   DRAM reads on the memory-to-memory channel (104-word buffer: 13 bursts of 128 B) run at
//   128 x 13 / 500 x 0.8 = 2.6624 B/cycle. A 2048-byte LUT load: read 2048 / 2.6624 + 500 =
//   1269, written into the LUT RAM at one byte per cycle: 2048. A 1024-byte copy to SRAM: read
//   384 + 500 = 884; SRAM writes (8 x 2 x 0.8 = 12.8 bursts of 64 B against latency 32) at
//   20.48 B/cycle: 50 + 32 = 82.
TEST(U85Cost, DmaChannels) {
    const Npu s("ethos-u85-256", "Dedicated_Sram_384KB");
    const CostContext ctx = cost_context(s.npu, s.memory);
    EXPECT_EQ(u85_dma_cycles(DecodedOp{}, ctx, MemoryKind::Dram, std::nullopt, 2048), 2048);
    EXPECT_EQ(u85_dma_cycles(DecodedOp{}, ctx, MemoryKind::Dram, MemoryKind::Sram, 1024), 884);
}

// Two OFM-depth slices of one 1x1 conv (16x16x128 -> channels 0-31 and 32-63 of a 16x16x64 OFM,
// the same IFM, block 16x16x32): with BLOCKDEP 1 the second starts under the first's drain (its
// last block's output and write-back) and its own first IFM fetch is hidden; with BLOCKDEP 0 it
// waits for the first to end. Both slices are compute bound in SRAM.
TEST(U85Timeline, DepthSlicesOverlapFillAndDrain) {
    for (const int blockdep : {0, 1}) {
        const Npu s("ethos-u85-256");
        U85Program p;
        p.ifm(16, 16, 128, 8, 1).kernel(1, 1, 1, 0).weights(1, 128 * 32, 32 * 10).block(16, 16, 32, kU2x2);
        p.ofm(16, 16, 32, 8, 1, 32768).emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, 64}});
        p.emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, 16 * 64}}).emit(Cmd::OP_CONV);
        p.emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, 32768 + 32}})
            .emit(Cmd::SET_BLOCKDEP, {{Field::SET_BLOCKDEP__blockdep, uint64_t(blockdep)}})
            .emit(Cmd::OP_CONV);
        const DecodedStream stream = p.decode_all(s.npu);
        ASSERT_EQ(stream.ops.size(), 2u);
        const OpCost first = s.cost(stream.ops[0]), second = s.cost(stream.ops[1]);
        const TimingResult r = TimingModel(s.npu, s.memory, region_memories(s.memory, {}), "test.bin").run(stream);
        const OpTiming &a = r.ops[0], &b = r.ops[1];
        EXPECT_EQ(a.end - a.start, first.compute_cycles);
        if (blockdep == 0) {
            EXPECT_EQ(b.start, a.end);
            EXPECT_EQ(b.end - b.start, second.compute_cycles);
        } else {
            EXPECT_EQ(b.start, a.end - first.drain_cycles);
            EXPECT_EQ(b.end - b.start, second.compute_cycles - second.fill_cycles);
        }
    }
}

// An op reading the chaining buffer runs in step with its producer: a MUL consuming a chained
// ADD's output starts as soon as the command processor issues it, while the ADD still runs.
TEST(U85Timeline, ChainedConsumerRunsWithItsProducer) {
    const Npu s("ethos-u85-256");
    U85Program p;
    p.ifm(16, 16, 32, 8, 1, 0).ifm2(16, 16, 32, 8, 1, 8192).block(8, 16, 32, kU1x2);
    p.ofm(16, 16, 32, 32, 1, 0, U85Program::kChainedStorage)
        .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 1}});
    p.ifm_chained(32, 32).ifm2(16, 16, 32, 32, 1, 16384).ofm(16, 16, 32, 8, 1, 65536);
    p.emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 0}});
    const DecodedStream stream = p.decode_all(s.npu);
    ASSERT_EQ(stream.ops.size(), 2u);
    const TimingResult r = TimingModel(s.npu, s.memory, region_memories(s.memory, {}), "test.bin").run(stream);
    EXPECT_EQ(r.ops[1].start, r.ops[1].issue);
    EXPECT_LT(r.ops[1].start, r.ops[0].end);
    EXPECT_GE(r.ops[1].end, r.ops[0].end);
}

// Roofline: a large 1x1 conv approaches MACs / (MACs per cycle): with a 16x16x64 block every
// micro-block step keeps all MACs busy, so only the first fetch and last write-back add. On the
// timeline too, with SRAM fast enough (SYS_DRAM_High: 4 SRAM ports) to stream the IFM, which
// every 64-deep OFM block slice reads again.
struct RooflineCase {
    const char* config;
    Microblock microblock;
};
class U85MacRoofline : public ::testing::TestWithParam<RooflineCase> {};
TEST_P(U85MacRoofline, LargePointwiseConvApproachesPeak) {
    const Npu s(GetParam().config, "Sram_Only", "Ethos_U85_SYS_DRAM_High");
    const DecodedOp op = U85Program()
                             .ifm(64, 64, 256, 8, 1)
                             .ofm(64, 64, 256, 8, 1, 1 << 20)
                             .kernel(1, 1, 1, 0)
                             .weights(1, 256 * 256, 256 * 10)
                             .block(16, 16, 64, GetParam().microblock)
                             .emit(Cmd::OP_CONV)
                             .decode(s.npu);
    const OpCost c = s.cost(op);
    const double ideal = double(c.macs) / s.npu.macs;
    EXPECT_EQ(c.macs, int64_t{64} * 64 * 256 * 256);
    EXPECT_GE(double(c.compute_cycles), ideal);
    EXPECT_LE(double(c.compute_cycles), 1.02 * ideal) << "ideal " << ideal;
    TimingModel model(s.npu, s.memory, region_memories(s.memory, {}), "test.bin");
    DecodedStream stream;
    stream.ops.push_back(op);
    const TimingResult r = model.run(stream);
    EXPECT_LE(double(r.ops[0].end - r.ops[0].start), 1.02 * ideal);
}
INSTANTIATE_TEST_SUITE_P(U85, U85MacRoofline,
                         ::testing::Values(RooflineCase{"ethos-u85-128", kU1x2}, RooflineCase{"ethos-u85-256", kU2x2},
                                           RooflineCase{"ethos-u85-512", kU2x2},
                                           RooflineCase{"ethos-u85-1024", kU2x2},
                                           RooflineCase{"ethos-u85-2048", kU2x2}),
                         [](const auto& info) {
                             std::string name = info.param.config;
                             for (char& ch : name)
                                 if (ch == '-') ch = '_';
                             return name;
                         });

// Roofline: an elementwise ADD whose operands sit in off-chip flash (region 0 under Shared_Sram
// on Ethos_U85_SYS_Flash_High: 16 B x 0.0625 = 1 B/cycle) takes bytes / bandwidth on the timeline:
// 2 x 64 x 64 x 64 bytes = 524288 cycles, several times its compute cycles.
TEST(U85Cost, ElementwiseFromFlashApproachesBandwidth) {
    for (const char* config : {"ethos-u85-256", "ethos-u85-1024"}) {
        const Npu s(config, "Shared_Sram", "Ethos_U85_SYS_Flash_High");
        const DecodedStream stream = U85Program()
                                         .ifm(64, 64, 64, 8, 0, 0)
                                         .ifm2(64, 64, 64, 8, 0, 64 * 64 * 64)
                                         .ofm(64, 64, 64, 8, 1, 0)
                                         .block(8, 8, 64, config == std::string("ethos-u85-256") ? kU1x2 : kU2x2)
                                         .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 1}})
                                         .decode_all(s.npu);
        const auto flash = MemoryKind::OffChipFlash;
        const OpCost c = s.cost(stream.ops.back());
        const double bytes = double(c.traffic.read[static_cast<size_t>(flash)]);
        EXPECT_EQ(bytes, 2.0 * 64 * 64 * 64) << config;
        const double bandwidth_cycles = bytes / s.memory.bytes_per_cycle(flash);
        EXPECT_GT(bandwidth_cycles, 2.0 * double(c.compute_cycles)) << config;  // bandwidth bound
        const TimingResult r = TimingModel(s.npu, s.memory, region_memories(s.memory, {}), "test.bin").run(stream);
        const OpTiming& t = r.ops.back();
        EXPECT_NEAR(double(t.end - t.start), bandwidth_cycles, 0.02 * bandwidth_cycles) << config;
    }
}

}  // namespace
}  // namespace ethosu
