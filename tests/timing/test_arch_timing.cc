// The per-configuration timing tables: parity across siblings (each row's micro-block and
// cores give its MACs per cycle, every NPU configuration has a row) and, per row, the output
// unit rate seen through an op that the output unit bounds.

#include <gtest/gtest.h>

#include <array>
#include <algorithm>
#include <cmath>
#include <vector>

#include "emulator/engine/timing/op_cost.h"
#include "tests/timing/timing_test_util.h"

namespace ethosu {
namespace {

using namespace timing_test;

constexpr std::array kOutputClasses = {OutputClass::Elementwise32Unary, OutputClass::Elementwise32Binary,
                                       OutputClass::Mul32,        OutputClass::Mul8Or40BitAcc,
                                       OutputClass::SimpleAddSub, OutputClass::AddSub,
                                       OutputClass::MaxPool,      OutputClass::Other};
constexpr std::array kActivationClasses = {ActivationClass::LutOrNone, ActivationClass::Relu, ActivationClass::Other};
constexpr std::array kU85ReadChannels = {U85ReadChannel::Mem2Mem, U85ReadChannel::IfmStream, U85ReadChannel::Weight,
                                         U85ReadChannel::FastWeight, U85ReadChannel::Ifm, U85ReadChannel::Scale};
constexpr std::array kU85OutputClasses = {U85OutputClass::Ofm8,  U85OutputClass::Ofm16,     U85OutputClass::Ofm32,
                                          U85OutputClass::Ofm64, U85OutputClass::Chained32, U85OutputClass::Binary32};
constexpr std::array kU85ActivationClasses = {U85ActivationClass::FullRate, U85ActivationClass::HalfRate};

// A rate the initialiser set: not the NaN a row starts with, and not negative.
bool rate_set(double cycles) { return cycles >= 0; }
bool block_set(const Block3& b) { return b.height > 0 && b.width > 0 && b.depth > 0; }

// Every configuration has exactly one row, the one its lookup returns, and every row is some
// configuration's.
TEST(ArchTiming, OneRowPerConfiguration) {
    std::vector<int> u55_uses(u55_timing_table().size()), u85_uses(u85_timing_table().size());
    for (const NpuConfig& npu : all_npu_configs()) {
        if (npu.traits().cost_model == CostModel::U85) {
            const auto r = static_cast<size_t>(&u85_timing(npu) - u85_timing_table().data());
            ++u85_uses.at(r);
            EXPECT_EQ(std::ranges::count(u85_timing_table(), npu.macs, &U85TimingRow::macs), 1) << npu.name;
        } else {
            const auto r = static_cast<size_t>(&u55_timing(npu) - u55_timing_table().data());
            ++u55_uses.at(r);
            EXPECT_EQ(std::ranges::count_if(u55_timing_table(),
                                            [&](const U55TimingRow& row) {
                                                return row.generation == npu.generation && row.macs == npu.macs;
                                            }),
                      1)
                << npu.name;
        }
    }
    for (size_t r = 0; r < u55_uses.size(); ++r) EXPECT_EQ(u55_uses[r], 1) << "U55/U65 row " << r;
    for (size_t r = 0; r < u85_uses.size(); ++r) EXPECT_EQ(u85_uses[r], 1) << "U85 row " << r;
}

// Every field of every row is set: no rate left NaN, no count or size left -1, no block left
// empty; a U85 row's micro-blocks past its count are the unset ones (the count matches the list).
TEST(ArchTiming, EveryFieldOfEveryRowIsSet) {
    for (const U55TimingRow& row : u55_timing_table()) {
        SCOPED_TRACE(row.macs);
        EXPECT_GT(row.macs, 0);
        EXPECT_GT(row.cores, 0);
        EXPECT_GT(row.shram_banks, 0);
        EXPECT_TRUE(block_set(row.ofm_ublock));
        EXPECT_TRUE(block_set(row.ifm_ublock));
        for (const OutputClass c : kOutputClasses) EXPECT_TRUE(rate_set(row.output_cycles[c])) << int(c);
        for (const ActivationClass c : kActivationClasses) EXPECT_TRUE(rate_set(row.activation_cycles[c])) << int(c);
    }
    for (const U85TimingRow& row : u85_timing_table()) {
        SCOPED_TRACE(row.macs);
        EXPECT_GT(row.macs, 0);
        EXPECT_GT(row.cores, 0);
        EXPECT_TRUE(block_set(row.ifm_ublock));
        for (const int bytes : {row.ifm_ram_bytes, row.acc_ram_bytes, row.ob_ram_bytes, row.cb_ram_bytes}) EXPECT_GT(bytes, 0);
        EXPECT_GE(row.axi_sram_log2, 0);
        EXPECT_GE(row.axi_ext_log2, 0);
        ASSERT_GE(row.n_micro_blocks, 1);
        ASSERT_LE(row.n_micro_blocks, static_cast<int>(row.micro_blocks.size()));
        for (size_t i = 0; i < row.micro_blocks.size(); ++i) {
            const U85MicroBlock& u = row.micro_blocks[i];
            const bool listed = i < static_cast<size_t>(row.n_micro_blocks);
            for (const Block3& b : {u.ofm, u.ifm_alloc_up_to_128_bits, u.ifm_alloc_up_to_256_bits, u.ifm_alloc_wider})
                EXPECT_EQ(block_set(b), listed) << "micro-block " << i;
        }
        for (const U85ReadChannel c : kU85ReadChannels) EXPECT_GT(row.channel_read_buffers[c], 0) << int(c);
        for (const U85OutputClass c : kU85OutputClasses) EXPECT_TRUE(rate_set(row.output_cycles[c])) << int(c);
        for (const U85ActivationClass c : kU85ActivationClasses) EXPECT_TRUE(rate_set(row.activation_cycles[c])) << int(c);
    }
}

// The unset values are what the checks above catch.
TEST(ArchTiming, UnsetFieldsAreDetected) {
    const U55TimingRow unset;
    EXPECT_FALSE(rate_set(unset.output_cycles[OutputClass::Other]));
    EXPECT_FALSE(rate_set(unset.activation_cycles[ActivationClass::Relu]));
    EXPECT_FALSE(block_set(unset.ofm_ublock));
    EXPECT_LT(unset.macs, 0);
    const U85TimingRow unset85;
    EXPECT_FALSE(block_set(unset85.micro_blocks[0].ifm_alloc_wider));
    EXPECT_LT(unset85.channel_read_buffers[U85ReadChannel::Scale], 0);
}

TEST(ArchTiming, EveryConfigurationHasARowWithItsMacs) {
    for (const NpuConfig& npu : all_npu_configs()) {
        if (npu.generation == Generation::U85) {
            const U85TimingRow& row = u85_timing(npu);
            EXPECT_EQ(row.macs, npu.macs) << npu.name;
            ASSERT_GE(row.n_micro_blocks, 1) << npu.name;
            // Each micro-block shape keeps every MAC busy: OFM elements x 8 IFM channels x cores...
            for (int i = 0; i < row.n_micro_blocks; ++i)
                EXPECT_EQ(row.micro_blocks[static_cast<size_t>(i)].ofm.elements() * 8, npu.macs) << npu.name << " ublock " << i;
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
    EXPECT_EQ(u55.ofm_ublock, u65.ofm_ublock);
    for (const OutputClass c : kOutputClasses) {
        EXPECT_EQ(u55.output_cycles[c], u65.output_cycles[c]);
        EXPECT_EQ(u65x2.output_cycles[c] * 2, u65.output_cycles[c]);
    }
    for (const ActivationClass c : kActivationClasses) {
        EXPECT_EQ(u55.activation_cycles[c], u65.activation_cycles[c]);
        EXPECT_EQ(u65x2.activation_cycles[c] * 2, u65.activation_cycles[c]);
    }
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
    const double rate = std::max(row.output_cycles[OutputClass::Mul8Or40BitAcc], row.activation_cycles[ActivationClass::LutOrNone]);
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
    const Block3& ublock = row.micro_blocks[0].ofm;
    for (size_t i = 0; i < codes.size(); ++i)
        if (codes[i] == std::pair{ublock.height, ublock.width}) op.output.microblock = static_cast<int>(i);
    const OpCost c = u85_kernel_cost(op, cost_context(npu, memory));
    const double rate = std::max(row.output_cycles[U85OutputClass::Ofm8], row.activation_cycles[U85ActivationClass::FullRate]);
    EXPECT_EQ(c.compute_cycles, static_cast<int64_t>(std::ceil(rate * 64 * 64 * 64)));
    EXPECT_GT(c.compute_cycles, c.issue_cycles);
}
INSTANTIATE_TEST_SUITE_P(U85, U85OutputRate,
                         ::testing::Values("ethos-u85-128", "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024",
                                           "ethos-u85-2048"));

}  // namespace
}  // namespace ethosu
