// U85 elementwise ops on hand-built streams, on every U85 configuration: ADD with IFM/IFM2 input
// scales and dbl_rnd against TFLite's reference ADD, IFM2 as a broadcast tensor or as OP_SCALAR,
// and chaining (an OFM kept in a chain buffer and read back by the next op).

#include <gtest/gtest.h>

#include <algorithm>

#include "emulator/engine/executor.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/error.h"
#include "tests/config_test_name.h"
#include "tests/engine/stream_helpers.h"
#include "tests/engine/tflite_math.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;
using namespace tflite_math;

constexpr uint64_t kSramBase = 0x1000'0000;
constexpr uint32_t kIfmOffset = 0x000, kIfm2Offset = 0x100, kOfmOffset = 0x200;
constexpr int kDepth = 256;  // one element per int8 value
constexpr int kBroadcastC = 4, kBroadcastScalar = 8;
constexpr int kStorageChained = 2;
constexpr int kAddLeftShift = 20;  // TFLite's int8 ADD; Vela's dbl_rnd

struct Quant {
    float scale;
    int32_t zero_point;
};

struct AddOp {
    Quant ifm, ifm2, out;
    int8_t ifm2_value;
};

// TFLite's int8 ADD on one element pair.
int8_t tflite_add(const AddOp& op, int8_t x, int8_t y) {
    const double twice_max = 2 * static_cast<double>(std::max(op.ifm.scale, op.ifm2.scale));
    const auto m1 = quantize_multiplier(static_cast<double>(op.ifm.scale) / twice_max);
    const auto m2 = quantize_multiplier(static_cast<double>(op.ifm2.scale) / twice_max);
    const auto mo = quantize_multiplier(twice_max / ((1 << kAddLeftShift) * static_cast<double>(op.out.scale)));
    const int32_t a = multiply((x - op.ifm.zero_point) * (1 << kAddLeftShift), m1.multiplier, m1.shift);
    const int32_t b = multiply((y - op.ifm2.zero_point) * (1 << kAddLeftShift), m2.multiplier, m2.shift);
    const int32_t r = multiply(a + b, mo.multiplier, mo.shift) + op.out.zero_point;
    return static_cast<int8_t>(std::clamp(r, -128, 127));
}

using test_streams::u16;

// A scale register's fields for multiplier * 2^(shift - 31), shift taken as Vela programs it
// with dbl_rnd extra fraction bits kept.
struct ScaleFields {
    uint64_t scale, shift;
};
ScaleFields scale_fields(double value, int double_round) {
    const auto m = quantize_multiplier(value);
    return {static_cast<uint64_t>(m.multiplier), static_cast<uint64_t>(31 - m.shift - double_round)};
}

// ACC_FORMAT.microblock Vela 5.1 programs for elementwise ops: the first micro-block of the
// configuration's table (ethos_u85.cpp; add_8x8x32 in ../shared/vectors: U1X2 on ethos-u85-256,
// U2X2 on -1024).
uint64_t elementwise_microblock(const NpuConfig& config) {
    return static_cast<uint64_t>(micro_block_code(config.micro_blocks[0]).value());
}

// IFM (1x1x256 int8) + IFM2, OFM int8 at kOfmOffset or, with chain_ofm, in chain buffer 0;
// with chained_ifm the IFM is chain buffer 0.
struct AddStream {
    AddOp op;
    int ifm2_broadcast = kBroadcastC;  // C: one element in memory; SCALAR: OP_SCALAR
    bool chained_ifm = false, chain_ofm = false;
};

void emit_add(CommandStreamBuilder& b, const AddStream& s, const NpuConfig& config) {
    const AddOp& op = s.op;
    const double twice_max = 2 * static_cast<double>(std::max(op.ifm.scale, op.ifm2.scale));
    const ScaleFields ifm = scale_fields(op.ifm.scale / twice_max, kAddLeftShift);
    const ScaleFields ifm2 = scale_fields(op.ifm2.scale / twice_max, kAddLeftShift);
    const ScaleFields ofm = scale_fields(twice_max / ((1 << kAddLeftShift) * double(op.out.scale)), 0);
    const uint64_t depth_m1 = kDepth - 1;
    b.emit(Cmd::SET_IFM_SCALE, {{Field::SET_IFM_SCALE__scale, ifm.scale}, {Field::SET_IFM_SCALE__shift, ifm.shift},
                                {Field::SET_IFM_SCALE__dbl_rnd, kAddLeftShift}})
        .emit(Cmd::SET_IFM2_SCALE, {{Field::SET_IFM2_SCALE__scale, ifm2.scale}, {Field::SET_IFM2_SCALE__shift, ifm2.shift},
                                    {Field::SET_IFM2_SCALE__dbl_rnd, kAddLeftShift}})
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, ofm.scale}, {Field::SET_OFM_SCALE__shift, ofm.shift}})
        .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1},
                                       {Field::SET_IFM_PRECISION__activation_storage,
                                        s.chained_ifm ? uint64_t{kStorageChained} : 0}})
        .emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, s.chained_ifm ? 0u : 1u}})
        .emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, kIfmOffset}})
        .emit(Cmd::SET_IFM_BASE1).emit(Cmd::SET_IFM_BASE2).emit(Cmd::SET_IFM_BASE3)
        .emit(Cmd::SET_IFM_HEIGHT0_M1).emit(Cmd::SET_IFM_HEIGHT1_M1).emit(Cmd::SET_IFM_WIDTH0_M1)
        .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, depth_m1}})
        .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, kDepth}})
        .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, kDepth}})
        .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_IFM_ZERO_POINT, {{Field::SET_IFM_ZERO_POINT__zero_point, u16(op.ifm.zero_point)}})
        .emit(Cmd::SET_IFM_BROADCAST)
        .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                       {Field::SET_OFM_PRECISION__scale_mode, 1},
                                       {Field::SET_OFM_PRECISION__activation_storage,
                                        s.chain_ofm ? uint64_t{kStorageChained} : 0}})
        .emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, s.chain_ofm ? 0u : 1u}})
        .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, kOfmOffset}})
        .emit(Cmd::SET_OFM_BASE1).emit(Cmd::SET_OFM_BASE2).emit(Cmd::SET_OFM_BASE3)
        .emit(Cmd::SET_OFM_HEIGHT_M1).emit(Cmd::SET_OFM_WIDTH_M1)
        .emit(Cmd::SET_OFM_HEIGHT0_M1).emit(Cmd::SET_OFM_HEIGHT1_M1).emit(Cmd::SET_OFM_WIDTH0_M1)
        .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, depth_m1}})
        .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, kDepth}})
        .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, kDepth}})
        .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_OFM_ZERO_POINT, {{Field::SET_OFM_ZERO_POINT__zero_point, u16(op.out.zero_point)}})
        .emit(Cmd::SET_ACTIVATION)
        .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, u16(-128)}})
        .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, 127}})
        .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, 1}})
        .emit(Cmd::SET_IFM2_ZERO_POINT, {{Field::SET_IFM2_ZERO_POINT__zero_point, u16(op.ifm2.zero_point)}})
        .emit(Cmd::SET_IFM2_BROADCAST, {{Field::SET_IFM2_BROADCAST__broadcast_mode, static_cast<uint64_t>(s.ifm2_broadcast)}});
    if (s.ifm2_broadcast == kBroadcastScalar) {
        b.emit(Cmd::SET_OP_SCALAR, {{Field::SET_OP_SCALAR__scalar, static_cast<uint32_t>(int32_t{op.ifm2_value})}});
    } else {
        b.emit(Cmd::SET_IFM2_REGION, {{Field::SET_IFM2_REGION__region, 1}})
            .emit(Cmd::SET_IFM2_BASE0, {{Field::SET_IFM2_BASE0__addr, kIfm2Offset}})
            .emit(Cmd::SET_IFM2_BASE1).emit(Cmd::SET_IFM2_BASE2).emit(Cmd::SET_IFM2_BASE3)
            .emit(Cmd::SET_IFM2_HEIGHT0_M1).emit(Cmd::SET_IFM2_HEIGHT1_M1).emit(Cmd::SET_IFM2_WIDTH0_M1)
            .emit(Cmd::SET_IFM2_STRIDE_X, {{Field::SET_IFM2_STRIDE_X__addr, 1}})
            .emit(Cmd::SET_IFM2_STRIDE_Y, {{Field::SET_IFM2_STRIDE_Y__addr, 1}})
            .emit(Cmd::SET_IFM2_STRIDE_C, {{Field::SET_IFM2_STRIDE_C__addr, 1}});
    }
    b.emit(Cmd::SET_OFM_BLK_HEIGHT_M1).emit(Cmd::SET_OFM_BLK_WIDTH_M1)
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, 63}})
        .emit(Cmd::SET_ACC_FORMAT, {{Field::SET_ACC_FORMAT__microblock, elementwise_microblock(config)}})
        .emit(Cmd::SET_BLOCKDEP)
        .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 1}});  // ADD
}

class U85Elementwise : public ::testing::TestWithParam<std::string> {
protected:
    U85Elementwise() : config_(*find_npu_config(GetParam())), space_(map_) {
        sram_ = map_.allocate(kSramBase, 0x400, "sram");
        space_.set_base(1, kSramBase);
        for (int i = 0; i < kDepth; ++i) sram_[kIfmOffset + i] = static_cast<uint8_t>(i);
    }
    void run(const std::vector<AddStream>& ops) {
        CommandStreamBuilder b(Generation::U85);
        for (const auto& s : ops) emit_add(b, s, config_);
        b.emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0xFFFF}});
        const auto stream = decode_stream(config_, b.words(), "u85 add");
        ASSERT_TRUE(stream.warnings.empty()) << stream.warnings.front();
        Executor(config_, space_, "u85 add").run(stream);
    }
    int8_t ofm(int i) const { return static_cast<int8_t>(sram_[kOfmOffset + i]); }

    NpuConfig config_;
    MemoryMap map_;
    std::span<uint8_t> sram_;
    AddressSpace space_;
};

const AddOp kAdd{.ifm = {0.05f, -7}, .ifm2 = {0.002f, 3}, .out = {0.04f, 10}, .ifm2_value = -90};
const AddOp kAddLargerIfm2{.ifm = {0.00390625f, -128}, .ifm2 = {0.007874016f, 0}, .out = {0.0078f, 1}, .ifm2_value = 127};

TEST_P(U85Elementwise, AddWithBroadcastIfm2EqualsTfliteForEveryInput) {
    for (const AddOp& op : {kAdd, kAddLargerIfm2}) {
        sram_[kIfm2Offset] = static_cast<uint8_t>(op.ifm2_value);
        run({{.op = op}});
        for (int i = 0; i < kDepth; ++i)
            ASSERT_EQ(ofm(i), tflite_add(op, static_cast<int8_t>(i), op.ifm2_value)) << "IFM " << i;
    }
}

TEST_P(U85Elementwise, AddWithScalarIfm2EqualsTfliteForEveryInput) {
    for (const AddOp& op : {kAdd, kAddLargerIfm2}) {
        run({{.op = op, .ifm2_broadcast = kBroadcastScalar}});
        for (int i = 0; i < kDepth; ++i)
            ASSERT_EQ(ofm(i), tflite_add(op, static_cast<int8_t>(i), op.ifm2_value)) << "IFM " << i;
    }
}

// The first ADD chains its OFM; the second reads it as its IFM and adds again.
TEST_P(U85Elementwise, ChainedOfmFeedsTheNextOp) {
    const AddOp second{.ifm = kAdd.out, .ifm2 = {0.01f, 0}, .out = {0.05f, -3}, .ifm2_value = 25};
    run({{.op = kAdd, .ifm2_broadcast = kBroadcastScalar, .chain_ofm = true},
         {.op = second, .ifm2_broadcast = kBroadcastScalar, .chained_ifm = true}});
    for (int i = 0; i < kDepth; ++i) {
        const int8_t first = tflite_add(kAdd, static_cast<int8_t>(i), kAdd.ifm2_value);
        ASSERT_EQ(ofm(i), tflite_add(second, first, second.ifm2_value)) << "IFM " << i;
    }
}

TEST_P(U85Elementwise, ReadingAnEmptyChainBufferIsRefused) {
    EXPECT_THROW(run({{.op = kAdd, .ifm2_broadcast = kBroadcastScalar, .chained_ifm = true}}), Error);
}

INSTANTIATE_TEST_SUITE_P(EveryConfiguration, U85Elementwise, ::testing::ValuesIn(config_names(CostModel::U85)),
                         ConfigTestName{});

}  // namespace
}  // namespace ethosu
