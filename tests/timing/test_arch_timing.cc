// The per-configuration timing tables: parity across siblings (each row's micro-block and
// cores give its MACs per cycle, every NPU configuration has a row) and, per row, the output
// unit rate seen through an op that the output unit bounds.

#include <gtest/gtest.h>

#include <array>
#include <algorithm>
#include <cmath>
#include <vector>

#include "emulator/engine/timing/op_cost.h"
#include "tests/config_test_name.h"
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

// Every configuration has exactly one row, the one its lookup returns, and every row names some
// configuration.
TEST(ArchTiming, OneRowPerConfiguration) {
    std::vector<int> u55_uses(u55_timing_table().size()), u85_uses(u85_timing_table().size());
    for (const NpuConfig& npu : all_npu_configs()) {
        if (npu.traits().cost_model == CostModel::U85) {
            const auto r = static_cast<size_t>(&u85_timing(npu) - u85_timing_table().data());
            ++u85_uses.at(r);
            EXPECT_EQ(std::ranges::count(u85_timing_table(), npu.name, &U85TimingRow::config), 1) << npu.name;
        } else {
            const auto r = static_cast<size_t>(&u55_timing(npu) - u55_timing_table().data());
            ++u55_uses.at(r);
            EXPECT_EQ(std::ranges::count(u55_timing_table(), npu.name, &U55TimingRow::config), 1) << npu.name;
        }
    }
    for (size_t r = 0; r < u55_uses.size(); ++r) EXPECT_EQ(u55_uses[r], 1) << "U55/U65 row " << r;
    for (size_t r = 0; r < u85_uses.size(); ++r) EXPECT_EQ(u85_uses[r], 1) << "U85 row " << r;
}

// Every field of every row is set: no rate left NaN, no count or size left -1, no block left
// empty, no flag left unset; a U85 row has IFM allocation units for each of its configuration's
// micro-blocks and none past them.
TEST(ArchTiming, EveryFieldOfEveryRowIsSet) {
    for (const U55TimingRow& row : u55_timing_table()) {
        SCOPED_TRACE(row.config);
        EXPECT_GT(row.shram_banks, 0);
        EXPECT_TRUE(block_set(row.ifm_ublock));
        EXPECT_GT(row.accumulator_delay.narrow, 0);
        EXPECT_GT(row.accumulator_delay.wide, 0);
        EXPECT_NE(row.pooling_by_ifm_width, RowFlag::Unset);
        EXPECT_NE(row.thin_block_wide_accumulator_stall, RowFlag::Unset);
        for (const OutputClass c : kOutputClasses) EXPECT_TRUE(rate_set(row.output_cycles[c])) << int(c);
        for (const ActivationClass c : kActivationClasses) EXPECT_TRUE(rate_set(row.activation_cycles[c])) << int(c);
    }
    for (const U85TimingRow& row : u85_timing_table()) {
        SCOPED_TRACE(row.config);
        const auto npu = find_npu_config(row.config);
        ASSERT_TRUE(npu);
        EXPECT_TRUE(block_set(row.ifm_ublock));
        for (const int bytes : {row.ifm_ram_bytes, row.ob_ram_bytes, row.cb_ram_bytes}) EXPECT_GT(bytes, 0);
        EXPECT_GT(row.accumulator_delay.narrow, 0);
        EXPECT_GT(row.accumulator_delay.wide, 0);
        for (size_t i = 0; i < row.ifm_alloc_units.size(); ++i) {
            const U85IfmAllocUnits& u = row.ifm_alloc_units[i];
            const bool listed = i < npu->offered_micro_blocks().size();
            for (const Block3& b : {u.up_to_128_bits, u.up_to_256_bits, u.wider})
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
    EXPECT_FALSE(block_set(unset.ifm_ublock));
    EXPECT_LT(unset.accumulator_delay.wide, 0);
    EXPECT_EQ(unset.pooling_by_ifm_width, RowFlag::Unset);
    const U85TimingRow unset85;
    EXPECT_FALSE(block_set(unset85.ifm_alloc_units[0].wider));
    EXPECT_LT(unset85.channel_read_buffers[U85ReadChannel::Scale], 0);
}

// Each micro-block keeps every MAC busy: on U85 its OFM elements x 8 IFM channels; on U55/U65
// its OFM elements x the row's IFM micro-block depth, per core.
TEST(ArchTiming, EveryMicroBlockFillsTheMacArray) {
    for (const NpuConfig& npu : all_npu_configs()) {
        for (const MicroBlockShape& u : npu.offered_micro_blocks()) {
            const int64_t elements = block_of(u).elements();
            if (npu.generation == Generation::U85) EXPECT_EQ(elements * 8, npu.macs) << npu.name;
            else EXPECT_EQ(elements * u55_timing(npu).ifm_ublock.depth * npu.cores, npu.macs) << npu.name;
        }
    }
}

// Siblings differ only where the hardware does: U55-256 and U65-256 share every number;
// U65-512 halves every per-element cost of U65-256 (two cores).
TEST(ArchTiming, SiblingParity) {
    const U55TimingRow& u55 = u55_timing(*find_npu_config("ethos-u55-256"));
    const U55TimingRow& u65 = u55_timing(*find_npu_config("ethos-u65-256"));
    const U55TimingRow& u65x2 = u55_timing(*find_npu_config("ethos-u65-512"));
    EXPECT_EQ(u55.ifm_ublock, u65.ifm_ublock);
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
class OutputRate : public ::testing::TestWithParam<std::string> {};
TEST_P(OutputRate, MulCostsTheRowsOutputRate) {
    const NpuConfig npu = *find_npu_config(GetParam());
    const MemorySystem memory = make_memory_system(npu, {"", "Sram_Only", {}});
    const U55TimingRow& row = u55_timing(npu);
    DecodedOp op = elementwise_add(64, 64, 64, 8, 1, 1, {16, 16, 64});
    op.kernel().elementwise().mode = ElementwiseMode::Mul;
    const OpCost c = u55_kernel_cost(op, cost_context(npu, memory));
    const double rate = std::max(row.output_cycles[OutputClass::Mul8Or40BitAcc], row.activation_cycles[ActivationClass::LutOrNone]);
    EXPECT_EQ(c.compute_cycles, static_cast<int64_t>(std::ceil(rate * 64 * 64 * 64)));
    EXPECT_GT(c.compute_cycles, c.issue_cycles);
}
INSTANTIATE_TEST_SUITE_P(U55U65, OutputRate, ::testing::ValuesIn(config_names(CostModel::U55)), ConfigTestName{});

// Per U85 row: the same MUL (in 16x16x64 blocks, the row's first micro-block) costs
// ceil(rate x elements) with rate = max(the row's 8-bit output entry, its full-rate activation
// entry); the issue limit stays below it.
class U85OutputRate : public ::testing::TestWithParam<std::string> {};
TEST_P(U85OutputRate, MulCostsTheRowsOutputRate) {
    const NpuConfig npu = *find_npu_config(GetParam());
    const MemorySystem memory = make_memory_system(npu, {"", "Sram_Only", {}});
    const U85TimingRow& row = u85_timing(npu);
    DecodedOp op = elementwise_add(64, 64, 64, 8, 1, 1, {16, 16, 64});
    op.kernel().elementwise().mode = ElementwiseMode::Mul;
    op.kernel().output.microblock = micro_block_code(npu.micro_blocks[0]).value();  // the configuration's first
    const OpCost c = u85_kernel_cost(op, cost_context(npu, memory));
    const double rate = std::max(row.output_cycles[U85OutputClass::Ofm8], row.activation_cycles[U85ActivationClass::FullRate]);
    EXPECT_EQ(c.compute_cycles, static_cast<int64_t>(std::ceil(rate * 64 * 64 * 64)));
    EXPECT_GT(c.compute_cycles, c.issue_cycles);
}
INSTANTIATE_TEST_SUITE_P(U85, U85OutputRate, ::testing::ValuesIn(config_names(CostModel::U85)), ConfigTestName{});

}  // namespace
}  // namespace ethosu
