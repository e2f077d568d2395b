#pragma once
// Field-by-field comparison of timing results: every figure a report prints comes from these.

#include <gtest/gtest.h>

#include "emulator/engine/timing/timing_result.h"

namespace ethosu::timing_test {

inline void expect_same_cost(const OpCost& a, const OpCost& b) {
    EXPECT_EQ(a.compute_cycles, b.compute_cycles);
    EXPECT_EQ(a.mac_cycles, b.mac_cycles);
    EXPECT_EQ(a.output_cycles, b.output_cycles);
    EXPECT_EQ(a.issue_cycles, b.issue_cycles);
    EXPECT_EQ(a.weight_decode_cycles, b.weight_decode_cycles);
    EXPECT_EQ(a.fill_cycles, b.fill_cycles);
    EXPECT_EQ(a.drain_cycles, b.drain_cycles);
    EXPECT_EQ(a.macs, b.macs);
    EXPECT_EQ(a.traffic.read, b.traffic.read);
    EXPECT_EQ(a.traffic.write, b.traffic.write);
    EXPECT_EQ(a.access_cycles, b.access_cycles);
}

inline void expect_same_op(const OpTiming& a, const OpTiming& b) {
    SCOPED_TRACE(testing::Message() << "op at offset " << b.offset);
    EXPECT_EQ(a.offset, b.offset);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.unit, b.unit);
    EXPECT_EQ(a.issue, b.issue);
    EXPECT_EQ(a.release, b.release);
    EXPECT_EQ(a.start, b.start);
    EXPECT_EQ(a.end, b.end);
    EXPECT_EQ(a.ifm_bits, b.ifm_bits);
    EXPECT_EQ(a.ofm_bits, b.ofm_bits);
    EXPECT_EQ(a.access_cycles, b.access_cycles);
    expect_same_cost(a.cost, b.cost);
}

inline void expect_same_totals(const TimingTotals& a, const TimingTotals& b) {
    EXPECT_EQ(a.cycles, b.cycles);
    EXPECT_EQ(a.npu_active, b.npu_active);
    EXPECT_EQ(a.idle, b.idle);
    EXPECT_EQ(a.macs, b.macs);
    EXPECT_EQ(a.mac_active, b.mac_active);
    EXPECT_EQ(a.output_active, b.output_active);
    EXPECT_EQ(a.weight_decode_active, b.weight_decode_active);
    EXPECT_EQ(a.dma_active, b.dma_active);
    EXPECT_EQ(a.command_words, b.command_words);
    EXPECT_EQ(a.traffic.read, b.traffic.read);
    EXPECT_EQ(a.traffic.write, b.traffic.write);
    EXPECT_EQ(a.beats.read, b.beats.read);
    EXPECT_EQ(a.beats.write, b.beats.write);
    EXPECT_EQ(a.beats.read_transactions, b.beats.read_transactions);
    EXPECT_EQ(a.beats.write_transactions, b.beats.write_transactions);
}

inline void expect_same_result(const TimingResult& a, const TimingResult& b) {
    ASSERT_EQ(a.ops.size(), b.ops.size());
    for (size_t i = 0; i < a.ops.size(); ++i) expect_same_op(a.ops[i], b.ops[i]);
    expect_same_totals(a.totals, b.totals);
    EXPECT_EQ(a.pmu_windows, b.pmu_windows);
}

}  // namespace ethosu::timing_test
