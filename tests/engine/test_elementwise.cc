// U55/U65 elementwise ops on hand-built streams against TFLite's reference integer kernels.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "emulator/engine/executor.h"
#include "emulator/isa/builder.h"
#include "tests/engine/tflite_integer_math.h"
#include "tests/engine/tflite_kernel_ops.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;
using namespace tflite_reference;

constexpr uint64_t kSramBase = 0x1000'0000;
constexpr uint32_t kIfmOffset = 0x000, kOfmOffset = 0x200;
constexpr int kDepth = 256;  // one element per int8 value

struct Quant {
    float scale;
    int32_t zero_point;
};

// An int8 SUB with a constant operand, as TFLite has it: first - second, one of them the
// scalar constant. Vela puts the constant in IFM2; when it is the first operand the operand
// order is reversed (ORDER_A).
struct SubWithConstant {
    Quant first, second, out;
    bool constant_first;
    int8_t constant;
};

// TFLite's int8 SUB (left shift 20, multipliers from the float scales) on one element pair.
int8_t tflite_sub(const SubWithConstant& op, int8_t first, int8_t second) {
    const double twice_max = 2 * static_cast<double>(std::max(op.first.scale, op.second.scale));
    const auto m1 = tflite_quantize_multiplier(static_cast<double>(op.first.scale) / twice_max);
    const auto m2 = tflite_quantize_multiplier(static_cast<double>(op.second.scale) / twice_max);
    const auto mo = tflite_quantize_multiplier(twice_max / ((1 << 20) * static_cast<double>(op.out.scale)));
    const int32_t a = tflite_multiply((first - op.first.zero_point) * (1 << 20), m1.multiplier, m1.shift);
    const int32_t b = tflite_multiply((second - op.second.zero_point) * (1 << 20), m2.multiplier, m2.shift);
    const int32_t r = tflite_multiply(a - b, mo.multiplier, mo.shift) + op.out.zero_point;
    return static_cast<int8_t>(std::clamp(r, -128, 127));
}

uint64_t u16(int32_t v) { return static_cast<uint16_t>(v); }

// The stream Vela 5.1 writes for the op: the operand with the smaller rescale gets the 32-bit
// OPA_SCALE; the scale mode names it by its place in the operation (OPA first, OPB second).
std::vector<uint32_t> sub_stream(const SubWithConstant& op) {
    const Quant& ifm = op.constant_first ? op.second : op.first;
    const Quant& ifm2 = op.constant_first ? op.first : op.second;
    const double twice_max = 2 * static_cast<double>(std::max(ifm.scale, ifm2.scale));
    const double ifm_rescale = ifm.scale * double(1 << 20) / twice_max;
    const double ifm2_rescale = ifm2.scale * double(1 << 20) / twice_max;
    const bool scale_ifm2 = ifm2_rescale < ifm_rescale;
    const QuantizedScale opa = quantize_scale(scale_ifm2 ? ifm2_rescale : ifm_rescale, false);
    const QuantizedScale ofm = quantize_scale(twice_max / (op.out.scale * double(1 << 20)), false);
    const bool scaled_is_first = scale_ifm2 == op.constant_first;
    constexpr int kOpa32 = 1, kOpb32 = 2;

    CommandStreamBuilder b(Generation::U55);
    b.emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, 1}})
        .emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, kIfmOffset}})
        .emit(Cmd::SET_IFM_BASE1).emit(Cmd::SET_IFM_BASE2).emit(Cmd::SET_IFM_BASE3)
        .emit(Cmd::SET_IFM_HEIGHT0_M1).emit(Cmd::SET_IFM_HEIGHT1_M1).emit(Cmd::SET_IFM_WIDTH0_M1)
        .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, kDepth - 1}})
        .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, kDepth}})
        .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, kDepth}})
        .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_IFM_ZERO_POINT, {{Field::SET_IFM_ZERO_POINT__zero_point, u16(ifm.zero_point)}})
        .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1},
                                       {Field::SET_IFM_PRECISION__scale_mode,
                                        static_cast<uint64_t>(scaled_is_first ? kOpa32 : kOpb32)}})
        .emit(Cmd::SET_IFM_UPSCALE)
        .emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, 1}})
        .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, kOfmOffset}})
        .emit(Cmd::SET_OFM_BASE1).emit(Cmd::SET_OFM_BASE2).emit(Cmd::SET_OFM_BASE3)
        .emit(Cmd::SET_OFM_HEIGHT_M1).emit(Cmd::SET_OFM_WIDTH_M1)
        .emit(Cmd::SET_OFM_HEIGHT0_M1).emit(Cmd::SET_OFM_HEIGHT1_M1).emit(Cmd::SET_OFM_WIDTH0_M1)
        .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, kDepth - 1}})
        .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, kDepth}})
        .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, kDepth}})
        .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_OFM_ZERO_POINT, {{Field::SET_OFM_ZERO_POINT__zero_point, u16(op.out.zero_point)}})
        .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                       {Field::SET_OFM_PRECISION__scale_mode, 1}})
        .emit(Cmd::SET_OPA_SCALE, {{Field::SET_OPA_SCALE__scale, opa.scale},
                                   {Field::SET_OPA_SCALE__shift, static_cast<uint64_t>(opa.shift)}})
        .emit(Cmd::SET_OPB_SCALE)
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, ofm.scale},
                                   {Field::SET_OFM_SCALE__shift, static_cast<uint64_t>(ofm.shift)}})
        .emit(Cmd::SET_ACTIVATION)
        .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, u16(-128)}})
        .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, 127}})
        .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, 1}})
        .emit(Cmd::SET_IFM2_ZERO_POINT, {{Field::SET_IFM2_ZERO_POINT__zero_point, u16(ifm2.zero_point)}})
        .emit(Cmd::SET_IFM2_SCALAR, {{Field::SET_IFM2_SCALAR__scalar, u16(op.constant)}})
        .emit(Cmd::SET_IFM2_BROADCAST, {{Field::SET_IFM2_BROADCAST__broadcast_constant, 1},
                                        {Field::SET_IFM2_BROADCAST__operand_order, op.constant_first ? 1u : 0u}})
        .emit(Cmd::SET_OFM_BLK_HEIGHT_M1).emit(Cmd::SET_OFM_BLK_WIDTH_M1)
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, 63}})
        .emit(Cmd::SET_IFM_IB_END, {{Field::SET_IFM_IB_END__ib_end, 8}})
        .emit(Cmd::SET_AB_START, {{Field::SET_AB_START__ab_start, 20}})
        .emit(Cmd::SET_ACC_FORMAT)
        .emit(Cmd::SET_BLOCKDEP)
        .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 2}})  // SUB
        .emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0xFFFF}});
    return b.words();
}

// Runs the op on every int8 value of the tensor operand; compares with TFLite.
void expect_sub_matches_tflite(const SubWithConstant& op) {
    const auto config = *find_npu_config("ethos-u55-128");
    MemoryMap map;
    auto sram = map.allocate(kSramBase, 0x400, "sram", MemoryKind::Sram);
    AddressSpace space(map);
    space.set_base(1, kSramBase);
    for (int i = 0; i < kDepth; ++i) sram[kIfmOffset + i] = static_cast<uint8_t>(i);
    const auto stream = decode_stream(config, sub_stream(op), "sub");
    Executor(config, space, "sub").run(stream);
    for (int i = 0; i < kDepth; ++i) {
        const auto x = static_cast<int8_t>(i);
        const int8_t expected = op.constant_first ? tflite_sub(op, op.constant, x) : tflite_sub(op, x, op.constant);
        ASSERT_EQ(static_cast<int8_t>(sram[kOfmOffset + i]), expected) << "tensor operand " << int{x};
    }
}

// rnnoise's GRU gate "1 - sigmoid(x)": the constant comes first and has the larger scale, so
// the IFM (second operand) carries the 32-bit scale: OPB_32 with ORDER_A.
TEST(Elementwise, SubConstantMinusTensorScalesTheIfmAsOperandB) {
    expect_sub_matches_tflite({.first = {0.007874016f, 0}, .second = {0.00390625f, -128},
                               .out = {0.0039214622f, -128}, .constant_first = true, .constant = 127});
}

// The constant comes first with the smaller scale: IFM2 carries it, OPA_32 with ORDER_A.
TEST(Elementwise, SubConstantMinusTensorScalesTheScalarAsOperandA) {
    expect_sub_matches_tflite({.first = {0.002f, 3}, .second = {0.05f, -7}, .out = {0.04f, 10},
                               .constant_first = true, .constant = -90});
}

// Tensor minus constant: IFM is the first operand (ORDER_B); whichever has the smaller scale
// is scaled, OPA_32 for the IFM, OPB_32 for the scalar.
TEST(Elementwise, SubTensorMinusConstantScalesEitherOperand) {
    expect_sub_matches_tflite({.first = {0.00390625f, -128}, .second = {0.007874016f, 0},
                               .out = {0.0078f, 0}, .constant_first = false, .constant = 127});
    expect_sub_matches_tflite({.first = {0.05f, -7}, .second = {0.002f, 3}, .out = {0.04f, 10},
                               .constant_first = false, .constant = -90});
}

}  // namespace
}  // namespace ethosu
