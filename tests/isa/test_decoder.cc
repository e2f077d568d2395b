// The decoder on hand-built streams: sticky registers, the frozen op record, hostile input.

#include <gtest/gtest.h>

#include <stdexcept>
#include <variant>

#include "emulator/isa/builder.h"
#include "emulator/isa/decoder.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;

// Every register a U55 pooling op reads, with recognisable values.
CommandStreamBuilder pooling_setup(Generation g) {
    CommandStreamBuilder b(g);
    b.emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, 1}})
        .emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, 0x100}})
        .emit(Cmd::SET_IFM_BASE1, {{Field::SET_IFM_BASE1__addr, 0x200}})
        .emit(Cmd::SET_IFM_BASE2, {{Field::SET_IFM_BASE2__addr, 0x300}})
        .emit(Cmd::SET_IFM_BASE3, {{Field::SET_IFM_BASE3__addr, 0x400}})
        .emit(Cmd::SET_IFM_WIDTH0_M1, {{Field::SET_IFM_WIDTH0_M1__width_m1, 15}})
        .emit(Cmd::SET_IFM_HEIGHT0_M1, {{Field::SET_IFM_HEIGHT0_M1__height_m1, 7}})
        .emit(Cmd::SET_IFM_HEIGHT1_M1, {{Field::SET_IFM_HEIGHT1_M1__height_m1, 3}})
        .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, 31}})
        .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, 32}})
        .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, 512}})
        .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, 16}})
        .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1}})
        .emit(Cmd::SET_IFM_ZERO_POINT, {{Field::SET_IFM_ZERO_POINT__zero_point, 0xFFEE}})  // -18
        .emit(Cmd::SET_IFM_UPSCALE)
        .emit(Cmd::SET_IFM_PAD_TOP, {{Field::SET_IFM_PAD_TOP__pad, 1}})
        .emit(Cmd::SET_IFM_PAD_LEFT, {{Field::SET_IFM_PAD_LEFT__pad, 2}})
        .emit(Cmd::SET_IFM_PAD_BOTTOM, {{Field::SET_IFM_PAD_BOTTOM__pad, 3}})
        .emit(Cmd::SET_IFM_PAD_RIGHT, {{Field::SET_IFM_PAD_RIGHT__pad, 4}})
        .emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, 1}})
        .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, 0x1000}})
        .emit(Cmd::SET_OFM_BASE1).emit(Cmd::SET_OFM_BASE2).emit(Cmd::SET_OFM_BASE3)
        .emit(Cmd::SET_OFM_WIDTH_M1, {{Field::SET_OFM_WIDTH_M1__width_m1, 7}})
        .emit(Cmd::SET_OFM_HEIGHT_M1, {{Field::SET_OFM_HEIGHT_M1__height_m1, 5}})
        .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, 31}})
        .emit(Cmd::SET_OFM_WIDTH0_M1, {{Field::SET_OFM_WIDTH0_M1__width_m1, 7}})
        .emit(Cmd::SET_OFM_HEIGHT0_M1, {{Field::SET_OFM_HEIGHT0_M1__height_m1, 5}})
        .emit(Cmd::SET_OFM_HEIGHT1_M1, {{Field::SET_OFM_HEIGHT1_M1__height_m1, 5}})
        .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, 32}})
        .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, 256}})
        .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, 16}})
        .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                       {Field::SET_OFM_PRECISION__scale_mode, 1},
                                       {Field::SET_OFM_PRECISION__round_mode, 2}})
        .emit(Cmd::SET_OFM_ZERO_POINT, {{Field::SET_OFM_ZERO_POINT__zero_point, 5}})
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1u << 30}, {Field::SET_OFM_SCALE__shift, 31}})
        .emit(Cmd::SET_KERNEL_WIDTH_M1, {{Field::SET_KERNEL_WIDTH_M1__width_m1, 2}})
        .emit(Cmd::SET_KERNEL_HEIGHT_M1, {{Field::SET_KERNEL_HEIGHT_M1__height_m1, 2}})
        .emit(Cmd::SET_KERNEL_STRIDE, {{Field::SET_KERNEL_STRIDE__stride_x_lsb, 0},
                                       {Field::SET_KERNEL_STRIDE__stride_x_msb, 1},  // stride 3
                                       {Field::SET_KERNEL_STRIDE__stride_y_lsb, 1}})  // stride 2
        .emit(Cmd::SET_ACTIVATION)
        .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, 0xFF80}})
        .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, 127}})
        .emit(Cmd::SET_ACC_FORMAT)
        .emit(Cmd::SET_OFM_BLK_WIDTH_M1, {{Field::SET_OFM_BLK_WIDTH_M1__width_m1, 7}})
        .emit(Cmd::SET_OFM_BLK_HEIGHT_M1, {{Field::SET_OFM_BLK_HEIGHT_M1__height_m1, 3}})
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, 31}})
        .emit(Cmd::SET_IFM_IB_END, {{Field::SET_IFM_IB_END__ib_end, 6}})
        .emit(Cmd::SET_AB_START, {{Field::SET_AB_START__ab_start, 6}})
        .emit(Cmd::SET_BLOCKDEP, {{Field::SET_BLOCKDEP__blockdep, 3}});
    return b;
}

TEST(Decoder, FreezesEverythingAPoolingOpReads) {
    auto b = pooling_setup(Generation::U55);
    b.emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 1}});
    b.emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0xFFFF}});
    const auto out = decode_stream(*find_npu_config("ethos-u55-128"), b.words(), "pool");
    ASSERT_EQ(out.ops.size(), 2u);
    const DecodedOp& op = out.ops[0];
    EXPECT_EQ(op.kind, OpKind::Pool);
    EXPECT_EQ(op.kernel().pool(), PoolMode::Average);
    EXPECT_EQ(op.offset, (b.words().size() - 2) * 4);
    EXPECT_EQ(op.kernel().ifm.tile_base, (std::array<uint64_t, 4>{0x100, 0x200, 0x300, 0x400}));
    EXPECT_EQ(op.kernel().ifm.width0, 16);
    EXPECT_EQ(op.kernel().ifm.height0, 8);
    EXPECT_EQ(op.kernel().ifm.height1, 4);
    EXPECT_EQ(op.kernel().ifm.depth, 32);
    EXPECT_EQ(op.kernel().ifm.zero_point, -18);
    EXPECT_TRUE(op.kernel().ifm.precision.is_signed);
    EXPECT_EQ(op.kernel().ofm.width, 8);
    EXPECT_EQ(op.kernel().ofm.height, 6);
    EXPECT_EQ(op.kernel().kernel.stride_x, 3);
    EXPECT_EQ(op.kernel().kernel.stride_y, 2);
    EXPECT_EQ(op.kernel().kernel.padding.top, 1);
    EXPECT_EQ(op.kernel().kernel.padding.right, 4);
    EXPECT_FALSE(op.kernel().output.per_channel_scale);
    EXPECT_EQ(op.kernel().output.global_scale.scale, 1u << 30);
    EXPECT_EQ(op.kernel().output.global_scale.shift, 31);
    EXPECT_EQ(op.kernel().output.round, RoundMode::Natural);
    EXPECT_EQ(op.kernel().output.clip_min, -128);
    EXPECT_EQ(op.kernel().block.blockdep, 3);
    EXPECT_EQ(out.ops[1].kind, OpKind::Stop);
    EXPECT_EQ(out.ops[1].signal().mask, 0xFFFFu);
    EXPECT_TRUE(out.warnings.empty());
}

// Each op holds the body of its family only: asking for another family's body, or a kernel op for
// another kind's parts, is a logic error, not a read of fields the op never had.
TEST(Decoder, AnOpHoldsTheBodyOfItsFamilyOnly) {
    auto b = pooling_setup(Generation::U55);
    b.emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 1}});
    b.emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0xFFFF}});
    const auto out = decode_stream(*find_npu_config("ethos-u55-128"), b.words(), "pool");
    ASSERT_EQ(out.ops.size(), 2u);
    const DecodedOp& pool = out.ops[0];
    EXPECT_NO_THROW(pool.kernel().pool());
    EXPECT_THROW(pool.kernel().elementwise(), std::logic_error);
    EXPECT_THROW(pool.kernel().resize(), std::logic_error);
    EXPECT_FALSE(pool.kernel().ifm2_is_scalar());
    EXPECT_THROW(pool.dma(), std::logic_error);
    EXPECT_THROW(pool.signal(), std::logic_error);
    const DecodedOp& stop = out.ops[1];
    EXPECT_NO_THROW(stop.signal());
    EXPECT_THROW(stop.kernel(), std::logic_error);
    EXPECT_THROW(stop.wait(), std::logic_error);
    EXPECT_THROW(stop.branch(), std::logic_error);

    // The body follows the kind: one alternative per family shape, the kind's parts for kernel ops.
    for (size_t k = 0; k < kOpKindCount; ++k) {
        const OpKind kind = static_cast<OpKind>(k);
        const DecodedOp op(kind);
        EXPECT_EQ(std::holds_alternative<KernelOp>(op.body), is_kernel_op(kind)) << op_kind_name(kind);
        EXPECT_EQ(std::holds_alternative<Dma>(op.body), kind == OpKind::DmaStart) << op_kind_name(kind);
        EXPECT_EQ(std::holds_alternative<WaitOp>(op.body), kind == OpKind::DmaWait || kind == OpKind::KernelWait);
        EXPECT_EQ(std::holds_alternative<SignalOp>(op.body), kind == OpKind::Stop || kind == OpKind::Irq);
        EXPECT_EQ(std::holds_alternative<PmuOp>(op.body), kind == OpKind::PmuMask);
        EXPECT_EQ(std::holds_alternative<BranchOp>(op.body), kind == OpKind::Branch);
        if (!is_kernel_op(kind)) continue;
        const KernelKindParts& parts = op.kernel().parts;
        EXPECT_EQ(std::holds_alternative<PoolMode>(parts), kind == OpKind::Pool);
        EXPECT_EQ(std::holds_alternative<Elementwise>(parts), kind == OpKind::Elementwise);
        EXPECT_EQ(std::holds_alternative<Resize>(parts), kind == OpKind::Resize);
    }
}

// U85 RESIZE: the scale, offsets and steps, and the IFM area from the kernel registers.
TEST(Decoder, FreezesAResizeWithItsIfmAreaFromTheKernelRegisters) {
    CommandStreamBuilder b(Generation::U85);
    for (const isa::CommandDesc& c : b.generation().commands)
        if (c.name.starts_with("NPU_SET_")) b.emit(c.id);
    b.emit(Cmd::SET_RESIZE_X_SCALE_N_M1, {{Field::SET_RESIZE_X_SCALE_N_M1__resize_x_scale_n_m1, 9}})
        .emit(Cmd::SET_RESIZE_Y_SCALE_N_M1, {{Field::SET_RESIZE_Y_SCALE_N_M1__resize_y_scale_n_m1, 2047}})
        .emit(Cmd::SET_RESIZE_X_OFFSET, {{Field::SET_RESIZE_X_OFFSET__resize_x_offset, 0xFFE}})  // -2
        .emit(Cmd::SET_RESIZE_Y_OFFSET, {{Field::SET_RESIZE_Y_OFFSET__resize_y_offset, 5}})
        .emit(Cmd::SET_RESIZE_X, {{Field::SET_RESIZE_X__one_step_int, 1},
                                  {Field::SET_RESIZE_X__blk_step_int, 4},
                                  {Field::SET_RESIZE_X__one_step_mod, 6},
                                  {Field::SET_RESIZE_X__blk_step_mod, 8}})
        .emit(Cmd::SET_KERNEL_HEIGHT_M1, {{Field::SET_KERNEL_HEIGHT_M1__height_m1, 3}})
        .emit(Cmd::SET_KERNEL_WIDTH_M1, {{Field::SET_KERNEL_WIDTH_M1__width_m1, 6}})
        .emit(Cmd::OP_RESIZE, {{Field::OP_RESIZE__resize_mode, 2}});
    const auto out = decode_stream(*find_npu_config("ethos-u85-256"), b.words(), "resize");
    ASSERT_EQ(out.ops.size(), 1u);
    const DecodedOp& op = out.ops[0];
    EXPECT_EQ(op.kind, OpKind::Resize);
    EXPECT_EQ(op.kernel().resize().mode, ResizeMode::Nearest);
    EXPECT_EQ(op.kernel().resize().x_scale_n, 10);
    EXPECT_EQ(op.kernel().resize().y_scale_n, 2048);
    EXPECT_EQ(op.kernel().resize().x_offset, -2);
    EXPECT_EQ(op.kernel().resize().y_offset, 5);
    EXPECT_EQ(op.kernel().resize().x_step, (std::array<int, 4>{1, 4, 6, 8}));
    EXPECT_EQ(op.kernel().ifm.height, 4);
    EXPECT_EQ(op.kernel().ifm.width, 7);
    EXPECT_EQ(op.kernel().kernel.upscale, UpscaleMode::None);
}

TEST(Decoder, RegistersAreSticky) {
    auto b = pooling_setup(Generation::U55);
    b.emit(Cmd::OP_POOL);
    b.emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, 0x180}});
    b.emit(Cmd::OP_POOL);
    const auto out = decode_stream(*find_npu_config("ethos-u55-128"), b.words(), "sticky");
    ASSERT_EQ(out.ops.size(), 2u);
    EXPECT_EQ(out.ops[0].kernel().ifm.tile_base[0], 0x100u);
    EXPECT_EQ(out.ops[1].kernel().ifm.tile_base[0], 0x180u);
    EXPECT_EQ(out.ops[1].kernel().ifm.depth, 32);  // unchanged registers carry over
}

TEST(Decoder, RefusesRegistersNeverWrittenNamingTheRegisterAndOffset) {
    CommandStreamBuilder b(Generation::U55);
    b.emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, 1}});
    b.emit(Cmd::OP_POOL);
    try {
        decode_stream(*find_npu_config("ethos-u55-128"), b.words(), "unset.bin");
        FAIL() << "an op reading never-written registers was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, 4u);
        EXPECT_EQ(e.where().field, "NPU_SET_IFM_DEPTH_M1");  // the first register the op reads unwritten
        EXPECT_NE(e.reason().find("NPU_OP_POOL reads registers the stream never wrote"), std::string::npos) << e.what();
    }
    // Lenient: a warning with the command offset, and the registers read as 0.
    const auto out = decode_stream(*find_npu_config("ethos-u55-128"), b.words(), "unset.bin", {.lenient = true});
    ASSERT_EQ(out.ops.size(), 1u);
    EXPECT_FALSE(out.ops[0].unset_registers.empty());
    EXPECT_EQ(out.ops[0].kernel().ifm.tile_base[0], 0u);
    EXPECT_EQ(out.ops[0].kernel().ofm.width, 1);
    ASSERT_EQ(out.warnings.size(), 1u);
    EXPECT_NE(out.warnings[0].find("unset.bin: cmd@0x4"), std::string::npos) << out.warnings[0];
    EXPECT_NE(out.warnings[0].find("NPU_SET_IFM_BASE0"), std::string::npos);
}

TEST(Decoder, RejectsUnknownOpcodesNamingTheOffset) {
    const std::vector<uint32_t> words{0x0001010F, 0x00000004};  // SET_IFM_REGION, then opcode 4
    try {
        decode_stream(*find_npu_config("ethos-u55-128"), words, "bad.bin");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "bad.bin");
        EXPECT_EQ(e.where().offset, 4u);
        EXPECT_EQ(e.where().field, "opcode");
    }
    // NPU_OP_RESIZE exists on U85 only.
    EXPECT_THROW(decode_stream(*find_npu_config("ethos-u65-256"), std::vector<uint32_t>{0x00000007}, "resize.bin"), Error);
    EXPECT_NO_THROW(decode_stream(*find_npu_config("ethos-u85-256"), std::vector<uint32_t>{0x00000007}, "resize.bin",
                                  {.lenient = true}));
}

TEST(Decoder, RejectsOperationParametersOutsideTheirEnum) {
    const std::vector<uint32_t> words{0x00000005 | (3u << 16), 0x00000006 | (12u << 16)};  // POOL 3, ELEMENTWISE 12
    EXPECT_NO_THROW(
        decode_stream(*find_npu_config("ethos-u85-256"), std::span(words).first(1), "pool.bin", {.lenient = true}));
    try {
        decode_stream(*find_npu_config("ethos-u55-128"), words, "pool.bin");  // U55 has no pooling mode 3
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, 0u);
        EXPECT_EQ(e.where().field, "NPU_OP_POOL.pooling_mode");
    }
    try {
        decode_stream(*find_npu_config("ethos-u85-256"), words, "ew.bin", {.lenient = true});
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, 4u);
        EXPECT_EQ(e.where().field, "NPU_OP_ELEMENTWISE.elementwise_mode");
    }
}

TEST(Decoder, RejectsACmd1CutOffAtTheEnd) {
    const std::vector<uint32_t> words{0x0001010F, 0x00004000};  // NPU_SET_IFM_BASE0 without payload
    try {
        decode_stream(*find_npu_config("ethos-u65-256"), words, "cut.bin");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, 4u);
        EXPECT_EQ(e.where().field, "NPU_SET_IFM_BASE0");
    }
}

TEST(Decoder, FortyBitAddressesOnU65AndU85) {
    CommandStreamBuilder b(Generation::U85);
    b.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, 0}})
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__region, 2}})
        .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, 0x12'0000'0040ull}})
        .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, 0x80}})
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, 256}})
        .emit(Cmd::OP_DMA_START);
    const auto out = decode_stream(*find_npu_config("ethos-u85-256"), b.words(), "dma");
    ASSERT_EQ(out.ops.size(), 1u);
    EXPECT_EQ(out.ops[0].dma().src.address, 0x12'0000'0040ull);
    EXPECT_EQ(out.ops[0].dma().dst.region, 2);
    EXPECT_EQ(out.ops[0].dma().length, 256u);
    EXPECT_EQ(out.ops[0].dma().dimensions, 1);
}

// The registers an op reads decide what the decoder consults: a U55/U65 pool in PER_CHANNEL mode
// has no scale stream and no OFM_SCALE (Vela 2.x-4.x MAX pools write none), a 32-bit OFM without a
// TABLE activation no OFM_ZERO_POINT (Vela 3.x/4.x softmax writes stale ones there).
TEST(Decoder, RegistersAnOpDoesNotReadAreNeverConsulted) {
    // The pooling set-up without one register, then the given commands.
    auto with_only = [](Cmd skipped, auto&& configure) {
        const isa::GenerationDesc& gen = isa::describe(Generation::U55);
        const CommandStreamBuilder full = pooling_setup(Generation::U55);
        std::vector<uint32_t> words;
        for_each_command(gen, full.words(), "setup", [&](const RawCommand& c) {
            if (c.desc->id == skipped) return;
            const auto first = full.words().begin() + c.offset / 4;
            words.insert(words.end(), first, first + static_cast<ptrdiff_t>(c.desc->words()));
        });
        CommandStreamBuilder tail(Generation::U55);
        configure(tail);
        words.insert(words.end(), tail.words().begin(), tail.words().end());
        return decode_stream(*find_npu_config("ethos-u55-128"), words, "op");
    };
    const auto max_pool = with_only(Cmd::SET_OFM_SCALE, [](CommandStreamBuilder& b) {
        b.emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1}})  // PER_CHANNEL
            .emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 0}});
    });
    EXPECT_TRUE(max_pool.ops.at(0).unset_registers.empty());
    EXPECT_EQ(max_pool.ops[0].kernel().output.global_scale.scale, 1u);
    EXPECT_EQ(max_pool.ops[0].kernel().output.global_scale.shift, 0);

    const auto int32_sum = with_only(Cmd::SET_OFM_ZERO_POINT, [](CommandStreamBuilder& b) {
        b.emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                        {Field::SET_OFM_PRECISION__activation_precision, 2},  // B32
                                        {Field::SET_OFM_PRECISION__scale_mode, 1}})
            .emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 2}});
    });
    EXPECT_TRUE(int32_sum.ops.at(0).unset_registers.empty());
    EXPECT_EQ(int32_sum.ops[0].kernel().ofm.zero_point, 0);

    // A TABLE activation indexes its LUT with the zero-pointed 8-bit value: the register is read.
    try {
        with_only(Cmd::SET_OFM_ZERO_POINT, [](CommandStreamBuilder& b) {
            b.emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                            {Field::SET_OFM_PRECISION__activation_precision, 2},
                                            {Field::SET_OFM_PRECISION__scale_mode, 1}})
                .emit(Cmd::SET_ACTIVATION, {{Field::SET_ACTIVATION__activation_function, 16}})
                .emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 2}});
        });
        FAIL() << "a TABLE activation on a 32-bit OFM did not read OFM_ZERO_POINT";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("NPU_SET_OFM_ZERO_POINT"), std::string::npos) << e.what();
    }
}

// The hostile corpus' 64-bit IFMs on U55/U65 reached the kernels' int64 arithmetic and overflowed.
TEST(Decoder, RefusesPrecisionsTheGenerationLacks) {
    for (const char* config : {"ethos-u55-128", "ethos-u65-256"}) {
        auto b = pooling_setup(find_npu_config(config)->generation);
        b.emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1},
                                        {Field::SET_IFM_PRECISION__activation_precision, 3}});  // B64
        const uint32_t op = static_cast<uint32_t>(b.words().size() * 4);
        b.emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 2}});
        try {
            decode_stream(*find_npu_config(config), b.words(), "b64.bin");
            ADD_FAILURE() << config << ": a 64-bit IFM was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.where().offset, op);
            EXPECT_EQ(e.where().field, "NPU_SET_IFM_PRECISION.activation_precision");
        }
    }
}

// Pooling takes IFMs of at most 32 bits: a 64-bit IFM into a U85 REDUCE_SUM would overflow the
// kernel's int64 sum. 32 bits (REDUCE_SUM's widest) still decodes.
TEST(Decoder, RefusesSixtyFourBitIfmsOfPools) {
    for (const int precision : {2, 3}) {  // B32, B64
        CommandStreamBuilder b(Generation::U85);
        b.emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1},
                                        {Field::SET_IFM_PRECISION__activation_precision, precision}});
        const uint32_t op = static_cast<uint32_t>(b.words().size() * 4);
        b.emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 2}});  // REDUCE_SUM
        try {
            decode_stream(*find_npu_config("ethos-u85-256"), b.words(), "wide.bin");
            EXPECT_EQ(precision, 2) << "a 64-bit IFM was accepted";
        } catch (const Error& e) {
            if (precision == 2) {
                // A 32-bit IFM passes this check; any refusal must be about another register.
                EXPECT_NE(e.where().field, "NPU_SET_IFM_PRECISION.activation_precision") << e.what();
                continue;
            }
            EXPECT_EQ(e.where().offset, op);
            EXPECT_EQ(e.where().field, "NPU_SET_IFM_PRECISION.activation_precision");
            EXPECT_NE(std::string(e.what()).find("at most 32 bits"), std::string::npos) << e.what();
        }
    }
}

// A 64-bit input with a zero point is refused, IFM and IFM2 alike, naming its zero-point
// register: a U85 ADD would subtract 32767 from an int64 IFM's INT64_MIN, a signed overflow. A
// zero point of 0, and the OFM's, still decode past this check.
TEST(Decoder, RefusesZeroPointsOfSixtyFourBitInputs) {
    struct Case {
        Cmd zero_point_command;
        Field zero_point;
        int value;
        const char* refused_field;  // nullptr: not refused for its zero point
    };
    const Case cases[] = {
        {Cmd::SET_IFM_ZERO_POINT, Field::SET_IFM_ZERO_POINT__zero_point, 32767, "NPU_SET_IFM_ZERO_POINT.zero_point"},
        {Cmd::SET_IFM2_ZERO_POINT, Field::SET_IFM2_ZERO_POINT__zero_point, 0xffff, "NPU_SET_IFM2_ZERO_POINT.zero_point"},
        {Cmd::SET_IFM_ZERO_POINT, Field::SET_IFM_ZERO_POINT__zero_point, 0, nullptr},
        {Cmd::SET_OFM_ZERO_POINT, Field::SET_OFM_ZERO_POINT__zero_point, 5, nullptr},
    };
    for (const Case& c : cases) {
        CommandStreamBuilder b(Generation::U85);
        // Signed B64 everywhere.
        b.emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1},
                                        {Field::SET_IFM_PRECISION__activation_precision, 3}});
        b.emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, 1},
                                         {Field::SET_IFM2_PRECISION__activation_precision, 3}});
        b.emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                        {Field::SET_OFM_PRECISION__activation_precision, 3}});
        for (const Cmd zero_point : {Cmd::SET_IFM_ZERO_POINT, Cmd::SET_IFM2_ZERO_POINT, Cmd::SET_OFM_ZERO_POINT})
            b.emit(zero_point, {});
        b.emit(c.zero_point_command, {{c.zero_point, c.value}});
        const uint32_t op = static_cast<uint32_t>(b.words().size() * 4);
        b.emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 1}});  // ADD
        try {
            decode_stream(*find_npu_config("ethos-u85-256"), b.words(), "zp64.bin");
            EXPECT_EQ(c.refused_field, nullptr) << "a 64-bit input with zero point " << c.value << " was accepted";
        } catch (const Error& e) {
            if (!c.refused_field) {
                EXPECT_EQ(std::string(e.what()).find("64-bit input"), std::string::npos) << e.what();
                continue;
            }
            EXPECT_EQ(e.where().offset, op);
            EXPECT_EQ(e.where().field, c.refused_field) << e.what();
        }
    }
}

// CONV and DEPTHWISE multiply 8- and 16-bit IFMs only: a 64-bit IFM into a U85 CONV would
// overflow the kernel's int64 sum.
TEST(Decoder, RefusesWideIfmsOfMacOps) {
    for (const char* config : {"ethos-u55-128", "ethos-u65-256", "ethos-u85-256"}) {
        const Generation generation = find_npu_config(config)->generation;
        for (const int precision : {2, 3}) {  // B32, B64
            if (precision == 3 && generation != Generation::U85) continue;  // refused as a precision U55/U65 lack
            for (const Cmd op_command : {Cmd::OP_CONV, Cmd::OP_DEPTHWISE}) {
                // The precision is checked before any other register the op reads.
                CommandStreamBuilder b(generation);
                b.emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1},
                                                {Field::SET_IFM_PRECISION__activation_precision, precision}});
                const uint32_t op = static_cast<uint32_t>(b.words().size() * 4);
                b.emit(op_command);
                try {
                    decode_stream(*find_npu_config(config), b.words(), "wide.bin");
                    ADD_FAILURE() << config << ": a " << (8 << precision) << "-bit IFM was accepted";
                } catch (const Error& e) {
                    EXPECT_EQ(e.where().offset, op);
                    EXPECT_EQ(e.where().field, "NPU_SET_IFM_PRECISION.activation_precision");
                    EXPECT_NE(std::string(e.what()).find("8- and 16-bit IFMs"), std::string::npos) << e.what();
                }
            }
        }
    }
}

}  // namespace
}  // namespace ethosu
