// What a run refuses without looking at data, a timing-only run and the device model refuse too,
// at the same place: the checks live where every path passes (the decoder, check_op: the work
// budget, Shram's LUT bookkeeping and validate()).

#include <gtest/gtest.h>

#include "emulator/isa/error.h"
#include "frontend/runner/run_model.h"
#include "tests/device/run_modes.h"
#include "tests/engine/kernel_harness.h"

namespace ethosu::kernel_test {
namespace {

using isa::Cmd;
using isa::Field;


// The rig's stream as a model: its SRAM and LUT images as regions.
LoadedModel model_of(Rig& rig) {
    LoadedModel model;
    model.path = "checks.bin";
    model.config = rig.config();
    NpuInvocation inv;
    inv.stream.words = rig.stream().words();
    CommandStreamBuilder stop(rig.config().generation);
    stop.emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0xFFFF}});
    inv.stream.words.insert(inv.stream.words.end(), stop.words().begin(), stop.words().end());
    inv.regions = {{kSramRegion, RegionRole::Scratch, rig.sram().size(), rig.sram(), {}},
                   {kLutRegion, RegionRole::Weights, rig.lut_bytes().size(), rig.lut_bytes(), {}}};
    model.invocations.push_back(std::move(inv));
    return model;
}

void expect_same_refusal(const LoadedModel& model, uint32_t offset, const std::string& field) {
    std::string run_message;
    for (const test_modes::Mode mode : test_modes::kModes) {
        SCOPED_TRACE(test_modes::mode_name(mode));
        const auto refusal = test_modes::run_in_mode(model, mode);
        if (!refusal) {
            ADD_FAILURE() << "the stream was accepted";
            continue;
        }
        if (mode == test_modes::Mode::Device) {
            EXPECT_TRUE(test_modes::same_place_and_reason(refusal->message, run_message))
                << refusal->message << "\n  the full run's: " << run_message;
            continue;
        }
        EXPECT_EQ(refusal->offset, offset) << refusal->message;
        EXPECT_EQ(refusal->field, field) << refusal->message;
        run_message = refusal->message;
    }
}

TEST(RunChecks, ATableWithoutItsLutIsRefusedByEveryRun) {
    for (const char* config : {"ethos-u55-128", "ethos-u65-512"}) {
        SCOPED_TRACE(config);
        Rig rig(config);
        rig.emit_lut_dma(rig.add_lut(std::vector<uint8_t>(256, 7)), 1, 256);  // slot 1; the op reads slot 2
        const uint32_t op = emit_lut_pool(rig, 2).offset;
        expect_same_refusal(model_of(rig), op, "pool");
    }
}

TEST(RunChecks, ALutLoadPastShramIsRefusedByEveryRun) {
    Rig rig("ethos-u65-512");
    const uint32_t dma = rig.emit_lut_dma(rig.add_lut(std::vector<uint8_t>(256, 7)), 0, 256);
    rig.stream().emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, 0x17800}});  // 94 KB: past a core's 48 KB
    const uint32_t second = rig.next_offset();
    rig.stream().emit(Cmd::OP_DMA_START);
    (void)dma;
    expect_same_refusal(model_of(rig), second, "NPU_SET_DMA0_DST");
}

TEST(RunChecks, ANeverWrittenRegisterIsRefusedByEveryRun) {
    Rig rig("ethos-u55-128");
    const uint32_t op = emit_lut_pool(rig, 0).offset;
    // The same op again after a stream that never wrote OFM_SCALE: only a fresh stream shows it.
    std::vector<uint32_t> words;
    for_each_command(isa::describe(rig.config().generation), rig.stream().words(), "checks", [&](const RawCommand& c) {
        if (c.desc->id == Cmd::SET_OFM_SCALE) return;
        const auto first = rig.stream().words().begin() + c.offset / 4;
        words.insert(words.end(), first, first + static_cast<ptrdiff_t>(c.desc->words()));
    });
    LoadedModel model = model_of(rig);
    model.invocations[0].stream.words = words;
    expect_same_refusal(model, op - 8, "NPU_SET_OFM_SCALE");
}

// A U85 1x1 MAX pool of a 4x6x32 int8 IFM with every register written (the rig's strict decode),
// its OFM written as `ofm_precision` and `block` say; returns the offset of its NPU_OP_POOL.
struct OfmOrder {
    uint64_t transpose = 0, reverse = 0, storage = 0;
    DataFormat format = DataFormat::NHWC;
    int block_depth = 16;
};
uint32_t emit_u85_pool(Rig& rig, const OfmOrder& order) {
    constexpr Precision kInt8{true, 8};
    for (const isa::CommandDesc& c : rig.stream().generation().commands)
        if (c.name.starts_with("NPU_SET_")) rig.stream().emit(c.id);
    const Placement ifm = rig.place(random_tensor(4, 6, 32, kInt8, 9), {});
    const Placement ofm = rig.reserve(32, 6, 32, kInt8, {order.format});  // room for any order of 4x6x32
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, true);
    rig.emit_kernel(1, 1, 1, 1, 1, 1, false);
    rig.emit_padding(0, 0, 0, 0);
    rig.emit_activation(0, -128, 127);
    rig.stream()
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}})
        .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                       {Field::SET_OFM_PRECISION__activation_format, order.format == DataFormat::NHCWB16},
                                       {Field::SET_OFM_PRECISION__scale_mode, 1},
                                       {Field::SET_OFM_PRECISION__activation_reverse, order.reverse},
                                       {Field::SET_OFM_PRECISION__activation_transpose, order.transpose},
                                       {Field::SET_OFM_PRECISION__activation_storage, order.storage}})
        .emit(Cmd::SET_OFM_BLK_HEIGHT_M1, {{Field::SET_OFM_BLK_HEIGHT_M1__height_m1, 15}})
        .emit(Cmd::SET_OFM_BLK_WIDTH_M1, {{Field::SET_OFM_BLK_WIDTH_M1__width_m1, 15}})
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, order.block_depth - 1}});
    const uint32_t at = rig.next_offset();
    rig.stream().emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 0}});
    return at;
}

// U85 OFM orders and storage the engine does not model: every run refuses them, not only the
// runs that compute data.
TEST(RunChecks, Tile3x1StorageIsRefusedByEveryRun) {
    Rig rig("ethos-u85-256");
    const uint32_t op = emit_u85_pool(rig, {.storage = 1});
    expect_same_refusal(model_of(rig), op, "activation_storage");
}

TEST(RunChecks, ReverseWithTransposeIsRefusedByEveryRun) {
    Rig rig("ethos-u85-256");
    const uint32_t op = emit_u85_pool(rig, {.transpose = 1, .reverse = 2});
    expect_same_refusal(model_of(rig), op, "NPU_SET_OFM_PRECISION.activation_reverse");
}

TEST(RunChecks, ChannelReverseIntoBricksIsRefusedByEveryRun) {
    Rig rig("ethos-u85-256");
    const uint32_t op = emit_u85_pool(rig, {.reverse = 3, .format = DataFormat::NHCWB16});
    expect_same_refusal(model_of(rig), op, "NPU_SET_OFM_PRECISION.activation_reverse");
}

TEST(RunChecks, HcwBlockDepthOf256IsRefusedByEveryRun) {
    // HCW stores the computed depth as the width, at most 128 per block.
    Rig rig("ethos-u85-256");
    const uint32_t op = emit_u85_pool(rig, {.transpose = 2, .block_depth = 256});
    expect_same_refusal(model_of(rig), op, "NPU_SET_OFM_BLK_DEPTH_M1.depth_m1");
}

}  // namespace
}  // namespace ethosu::kernel_test
