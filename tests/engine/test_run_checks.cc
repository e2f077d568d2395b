// What a run refuses without looking at data, a timing-only run refuses too, at the same place:
// the checks live where both paths pass (the decoder, and Shram's LUT bookkeeping).

#include <gtest/gtest.h>

#include "emulator/isa/error.h"
#include "frontend/runner/run_model.h"
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
    inv.regions = {{kSramRegion, "scratch", rig.sram().size(), rig.sram(), {}},
                   {kLutRegion, "weights", rig.lut_bytes().size(), rig.lut_bytes(), {}}};
    model.invocations.push_back(std::move(inv));
    return model;
}

void expect_same_refusal(const LoadedModel& model, uint32_t offset, const std::string& field) {
    for (const bool execute : {true, false}) {
        SCOPED_TRACE(execute ? "full run" : "timing-only run");
        try {
            RunOptions options;
            options.pipeline.execute = execute;
            run_model(model, {}, options);
            ADD_FAILURE() << "the stream was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.where().offset, offset) << e.what();
            EXPECT_EQ(e.where().field, field) << e.what();
        }
    }
}

TEST(RunChecks, ATableWithoutItsLutIsRefusedByBothRuns) {
    for (const char* config : {"ethos-u55-128", "ethos-u65-512"}) {
        SCOPED_TRACE(config);
        Rig rig(config);
        rig.emit_lut_dma(rig.add_lut(std::vector<uint8_t>(256, 7)), 1, 256);  // slot 1; the op reads slot 2
        const uint32_t op = emit_lut_pool(rig, 2).offset;
        expect_same_refusal(model_of(rig), op, "pool");
    }
}

TEST(RunChecks, ALutLoadPastShramIsRefusedByBothRuns) {
    Rig rig("ethos-u65-512");
    const uint32_t dma = rig.emit_lut_dma(rig.add_lut(std::vector<uint8_t>(256, 7)), 0, 256);
    rig.stream().emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, 0x17800}});  // 94 KB: past a core's 48 KB
    const uint32_t second = rig.next_offset();
    rig.stream().emit(Cmd::OP_DMA_START);
    (void)dma;
    expect_same_refusal(model_of(rig), second, "NPU_SET_DMA0_DST");
}

TEST(RunChecks, ANeverWrittenRegisterIsRefusedByBothRuns) {
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

}  // namespace
}  // namespace ethosu::kernel_test
