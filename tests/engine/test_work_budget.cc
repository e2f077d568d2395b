// Work and buffer limits: op_work against plain products, WorkBudget's errors and run totals,
// and, over the Vela corpus, the margin the default limits leave (its figures are written in
// work_budget.h).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/engine/work_budget.h"
#include "emulator/isa/decoder.h"
#include "emulator/isa/error.h"
#include "frontend/loaders/model.h"

namespace ethosu {
namespace {

DecodedOp kernel_op(OpKind kind, int h, int w, int c, int kernel_h, int kernel_w, int ifm_depth) {
    DecodedOp op(kind);
    op.offset = 0x40;
    op.kernel().ofm.height = h;
    op.kernel().ofm.width = w;
    op.kernel().ofm.depth = c;
    op.kernel().kernel.height = kernel_h;
    op.kernel().kernel.width = kernel_w;
    op.kernel().ifm.depth = ifm_depth;
    return op;
}

TEST(OpWork, EachKindAgainstItsProduct) {
    EXPECT_EQ(op_work(kernel_op(OpKind::Conv, 7, 5, 3, 3, 2, 11)), uint64_t{7} * 5 * 3 * 3 * 2 * 11);
    EXPECT_EQ(op_work(kernel_op(OpKind::Depthwise, 7, 5, 3, 3, 2, 11)), uint64_t{7} * 5 * 3 * 3 * 2);
    EXPECT_EQ(op_work(kernel_op(OpKind::Pool, 7, 5, 3, 3, 2, 11)), uint64_t{7} * 5 * 3 * 3 * 2);
    EXPECT_EQ(op_work(kernel_op(OpKind::Elementwise, 7, 5, 3, 3, 2, 11)), uint64_t{7} * 5 * 3);
    EXPECT_EQ(op_work(kernel_op(OpKind::Resize, 7, 5, 3, 3, 2, 11)), uint64_t{7} * 5 * 3);
    EXPECT_EQ(op_work(DecodedOp(OpKind::KernelWait)), 0u);
    // Dilation 2: a 5-wide kernel register holds 3 taps.
    DecodedOp dilated = kernel_op(OpKind::Pool, 1, 1, 1, 1, 5, 1);
    dilated.kernel().kernel.dilation_x = 2;
    EXPECT_EQ(op_work(dilated), 3u);

    DecodedOp dma(OpKind::DmaStart);
    dma.dma().length = 100;
    dma.dma().size0 = 3;
    dma.dma().size1 = 5;
    EXPECT_EQ(op_work(dma), 100u);  // 1D: LEN bytes
    dma.dma().dimensions = 3;
    EXPECT_EQ(op_work(dma), 1500u);
}

TEST(OpWork, SaturatesPastSixtyFourBits) {
    EXPECT_EQ(op_work(kernel_op(OpKind::Conv, 65536, 65536, 65536, 65536, 65536, 65536)), UINT64_MAX);
}

TEST(WorkBudget, AnOpAboveTheLimitIsRefusedWithItsFigures) {
    WorkBudget budget({.max_op_work = 7 * 5 * 3 * 6 - 1}, "model.npz");
    try {
        budget.charge(kernel_op(OpKind::Pool, 7, 5, 3, 3, 2, 11));
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "model.npz");
        EXPECT_EQ(e.where().offset, 0x40u);
        EXPECT_EQ(e.where().field, "pool");
        EXPECT_NE(std::string(e.what()).find("OFM 7x5x3 x 3x2 taps = 630"), std::string::npos) << e.what();
    }
    WorkBudget at_limit({.max_op_work = 7 * 5 * 3 * 6}, "model.npz");
    EXPECT_NO_THROW(at_limit.charge(kernel_op(OpKind::Pool, 7, 5, 3, 3, 2, 11)));
}

// The run's total: the op that takes it past the limit is named; a new run starts from 0.
TEST(WorkBudget, TheRunTotalIsBoundedAndStartsAgainPerRun) {
    const DecodedOp op = kernel_op(OpKind::Elementwise, 10, 10, 1, 1, 1, 1);  // 100
    WorkBudget budget({.max_run_work = 250}, "model.npz");
    budget.charge(op);
    budget.charge(op);
    try {
        budget.charge(op);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("the run's work reaches 300"), std::string::npos) << e.what();
    }
    budget.start_run();
    EXPECT_NO_THROW(budget.charge(op));
}

TEST(WorkBudget, BuffersAboveTheLimitAreRefused) {
    const WorkBudget budget({.max_allocation_bytes = 1000}, "model.npz");
    const DecodedOp op = kernel_op(OpKind::Conv, 1, 1, 1, 1, 1, 1);
    EXPECT_NO_THROW(budget.check_allocation(op, 1000, "chained OFM"));
    EXPECT_THROW(budget.check_allocation(op, 1001, "chained OFM"), Error);
}

// The buffers sized from registers alone are checked when the op is charged (so timing-only runs
// check them too): each at exactly its plain size passes, one byte less is refused by name.
TEST(WorkBudget, RegisterSizedBuffersAreCheckedWhenTheOpIsCharged) {
    struct Case {
        const char* what;
        DecodedOp op;
        uint64_t bytes;
    };
    std::vector<Case> cases;
    DecodedOp chained = kernel_op(OpKind::Elementwise, 6, 5, 4, 1, 1, 4);
    chained.kernel().ofm.storage = Storage::Chained;
    chained.kernel().ofm.precision.bits = 16;
    cases.push_back({"chained OFM", chained, 6 * 5 * 4 * 2});
    // OFM 6x5, 3x3 kernel, stride 1, no padding: an upscaled IFM area of 8x7.
    DecodedOp upscaled = kernel_op(OpKind::Pool, 6, 5, 4, 3, 3, 9);
    upscaled.kernel().kernel.upscale = UpscaleMode::Nearest;
    upscaled.kernel().ifm.precision.bits = 8;
    cases.push_back({"upscaled IFM", upscaled, 8 * 7 * 4});  // a pool's IFM depth is its OFM's
    DecodedOp ifm2_weights = kernel_op(OpKind::Conv, 1, 1, 4, 1, 1, 9);
    ifm2_weights.kernel().weights_from_ifm2 = true;
    cases.push_back({"weights from IFM2", ifm2_weights, 4 * 9 * 8});
    cases.push_back({"IFM patch of a kernel", kernel_op(OpKind::Conv, 1, 1, 1, 3, 2, 9), 3 * 2 * 9 * 2});
    DecodedOp ifm2_accumulators = kernel_op(OpKind::Depthwise, 6, 5, 4, 1, 1, 4);
    ifm2_accumulators.kernel().output.acc_input = AccInput::Ifm2;
    cases.push_back({"accumulators loaded from IFM2", ifm2_accumulators, 6 * 5 * 4 * 8});
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        WorkBudget at_limit({.max_allocation_bytes = c.bytes}, "model.npz");
        EXPECT_NO_THROW(at_limit.charge(c.op));
        WorkBudget below({.max_allocation_bytes = c.bytes - 1}, "model.npz");
        try {
            below.charge(c.op);
            FAIL() << "expected an error";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(std::string("the ") + c.what + " needs " + std::to_string(c.bytes)),
                      std::string::npos)
                << e.what();
        }
    }
}

TEST(WorkBudget, FollowOptionsTakeTheLowerCommandLimit) {
    const WorkBudget budget({.max_commands = 500}, "model.npz");
    EXPECT_EQ(budget.follow_options({}).max_commands, 500u);
    EXPECT_EQ(budget.follow_options({.decode = {}, .max_commands = 100}).max_commands, 100u);
}

// Every stream of the corpus (Vela 5.1 in vectors/, 3.10 and 4.1 in vectors-vela/) against the
// default limits: its largest op, its whole work and its commands leave the margins
// work_budget.h states (at least 16, 8 and 16).
TEST(WorkBudget, DefaultLimitsLeaveAMarginOverTheCorpus) {
    const std::filesystem::path vectors = ETHOSU_VECTORS_DIR;
    if (!std::filesystem::exists(vectors)) GTEST_SKIP() << "corpus not found at " << vectors;
    uint64_t largest_op = 0, largest_run = 0, most_commands = 0, streams = 0;
    for (const auto& dir : {vectors, vectors.parent_path() / "vectors-vela"}) {
        if (!std::filesystem::exists(dir)) continue;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
            if (entry.path().filename() != "model_vela.tflite") continue;
            const auto model = load_model(entry.path().string(), {});
            for (const auto& inv : model->invocations) {
                const DecodedStream stream = decode_stream(model->config, inv.stream.words, entry.path().string());
                uint64_t run = 0;
                for (const DecodedOp& op : stream.ops) {
                    largest_op = std::max(largest_op, op_work(op));
                    run += op_work(op);
                }
                largest_run = std::max(largest_run, run);
                most_commands = std::max<uint64_t>(most_commands, stream.command_count);
                ++streams;
            }
        }
    }
    ASSERT_GT(streams, 0u);
    RecordProperty("largest_op_work", std::to_string(largest_op));
    RecordProperty("largest_run_work", std::to_string(largest_run));
    RecordProperty("most_commands", std::to_string(most_commands));
    std::printf("%llu streams: largest op work %llu, largest run work %llu, most commands %llu\n",
                static_cast<unsigned long long>(streams), static_cast<unsigned long long>(largest_op),
                static_cast<unsigned long long>(largest_run), static_cast<unsigned long long>(most_commands));
    const WorkLimits defaults;
    EXPECT_LE(largest_op * 16, defaults.max_op_work);
    EXPECT_LE(largest_run * 8, defaults.max_run_work);
    EXPECT_LE(most_commands * 16, defaults.max_commands);
}

}  // namespace
}  // namespace ethosu
