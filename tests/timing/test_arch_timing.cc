// The per-configuration timing tables: parity across siblings (each row's micro-block and
// cores give its MACs per cycle, every NPU configuration has a row) and, per row, the output
// unit rate seen through an op that the output unit bounds.

#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "emulator/engine/timing/op_cost.h"
#include "tests/timing/timing_test_util.h"

namespace ethosu {
namespace {

using namespace timing_test;

TEST(ArchTiming, EveryConfigurationHasARowWithItsMacs) {
    for (const NpuConfig& npu : all_npu_configs()) {
        if (npu.generation == Generation::U85) {
            const U85TimingRow& row = u85_timing(npu);
            EXPECT_EQ(row.macs, npu.macs) << npu.name;
            ASSERT_GE(row.n_ofm_ublocks, 1) << npu.name;
            // Each micro-block shape keeps every MAC busy: OFM elements x 8 IFM channels x cores...
            for (int i = 0; i < row.n_ofm_ublocks; ++i)
                EXPECT_EQ(row.ofm_ublocks[static_cast<size_t>(i)].elements() * 8, npu.macs) << npu.name << " ublock " << i;
        } else {
            const U55TimingRow& row = u55_timing(npu);
            EXPECT_EQ(row.macs, npu.macs) << npu.name;
            EXPECT_EQ(row.cores, npu.cores) << npu.name;
            // ... and on U55/U65 the micro-block times the 8-deep IFM micro-block, per core.
            EXPECT_EQ(row.ofm_ublock.elements() * row.ifm_ublock.depth * row.cores, npu.macs) << npu.name;
        }
    }
}

// Siblings differ only where the hardware does: U55-256 and U65-256 share every number;
// U65-512 halves every per-element cost of U65-256 (two cores).
TEST(ArchTiming, SiblingParity) {
    const U55TimingRow& u55 = u55_timing(*find_npu_config("ethos-u55-256"));
    const U55TimingRow& u65 = u55_timing(*find_npu_config("ethos-u65-256"));
    const U55TimingRow& u65x2 = u55_timing(*find_npu_config("ethos-u65-512"));
    EXPECT_EQ(u55.output_cycles, u65.output_cycles);
    EXPECT_EQ(u55.activation_cycles, u65.activation_cycles);
    EXPECT_EQ(u55.ofm_ublock, u65.ofm_ublock);
    for (size_t i = 0; i < u65.output_cycles.size(); ++i) EXPECT_EQ(u65x2.output_cycles[i] * 2, u65.output_cycles[i]);
    for (size_t i = 0; i < 2; ++i) EXPECT_EQ(u65x2.activation_cycles[i] * 2, u65.activation_cycles[i]);
}

// Per row: an elementwise MUL of 64x64x64 int8 in SRAM with no activation is output-unit
// bound, so it costs exactly ceil(rate x elements), rate = max(the row's Mul8 entry, its
// no-activation entry).
class OutputRate : public ::testing::TestWithParam<const char*> {};
TEST_P(OutputRate, MulCostsTheRowsOutputRate) {
    const NpuConfig npu = *find_npu_config(GetParam());
    const MemorySystem memory = make_memory_system(npu, {"", "Sram_Only", {}});
    const U55TimingRow& row = u55_timing(npu);
    DecodedOp op = elementwise_add(64, 64, 64, 8, 1, 1, {16, 16, 64});
    op.elementwise.mode = ElementwiseMode::Mul;
    const OpCost c = u55_kernel_cost(op, cost_context(npu, memory));
    const double rate = std::max(row.output_cycles[static_cast<size_t>(OutputClass::Mul8Or40BitAcc)],
                                 row.activation_cycles[static_cast<size_t>(ActivationClass::LutOrNone)]);
    EXPECT_EQ(c.compute_cycles, static_cast<int64_t>(std::ceil(rate * 64 * 64 * 64)));
    EXPECT_GT(c.compute_cycles, c.issue_cycles);
}
INSTANTIATE_TEST_SUITE_P(U55U65, OutputRate,
                         ::testing::Values("ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256",
                                           "ethos-u65-256", "ethos-u65-512"));

// Per U85 row: the same MUL (in 16x16x64 blocks, the row's first micro-block) costs
// ceil(rate x elements) with rate = max(the row's 8-bit output entry, its full-rate activation
// entry); the issue limit stays below it.
class U85OutputRate : public ::testing::TestWithParam<const char*> {};
TEST_P(U85OutputRate, MulCostsTheRowsOutputRate) {
    const NpuConfig npu = *find_npu_config(GetParam());
    const MemorySystem memory = make_memory_system(npu, {"", "Sram_Only", {}});
    const U85TimingRow& row = u85_timing(npu);
    DecodedOp op = elementwise_add(64, 64, 64, 8, 1, 1, {16, 16, 64});
    op.elementwise.mode = ElementwiseMode::Mul;
    // NPU_SET_ACC_FORMAT.microblock codes U1X1, U1X2, U1X4, U2X2, U2X4, U4X4.
    const std::array<std::pair<int, int>, 6> codes = {{{1, 1}, {1, 2}, {1, 4}, {2, 2}, {2, 4}, {4, 4}}};
    const Block3& ublock = row.ofm_ublocks[0];
    for (size_t i = 0; i < codes.size(); ++i)
        if (codes[i] == std::pair{ublock.height, ublock.width}) op.output.microblock = static_cast<int>(i);
    const OpCost c = u85_kernel_cost(op, cost_context(npu, memory));
    const double rate = std::max(row.output_cycles[static_cast<size_t>(U85OutputClass::Ofm8)],
                                 row.activation_cycles[static_cast<size_t>(U85ActivationClass::FullRate)]);
    EXPECT_EQ(c.compute_cycles, static_cast<int64_t>(std::ceil(rate * 64 * 64 * 64)));
    EXPECT_GT(c.compute_cycles, c.issue_cycles);
}
INSTANTIATE_TEST_SUITE_P(U85, U85OutputRate,
                         ::testing::Values("ethos-u85-128", "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024",
                                           "ethos-u85-2048"));

}  // namespace
}  // namespace ethosu
