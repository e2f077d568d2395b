// The output stage's byte kernels (emulator/engine/output_bytes.cc) against scale_value channel by
// channel: every implementation the CPU runs (AVX-512, plain loops), DBL and NATURAL, signed and
// unsigned 8-bit clips, shifts across bit 31 (where DBL's nudge starts), pixels with a sum of 2^30
// and more, which must be reported outside the form, and the form's extremes.

#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <vector>

#include "emulator/engine/output_bytes.h"
#include "emulator/engine/output_stage.h"

namespace ethosu {
namespace {

constexpr int64_t kLimit = int64_t{1} << 30;

TEST(OutputBytes, EveryKernelEqualsScaleValuePerChannel) {
    std::cout << byte_scaling_kernels().size() << " implementations on this CPU\n";
    std::mt19937_64 rng(11);
    for (const RoundMode round : {RoundMode::DoubleSymmetric, RoundMode::Natural}) {
        for (const Range clip : {Range{-128, 127}, Range{0, 255}, Range{-100, 20}}) {
            for (const int channels : {1, 15, 16, 17, 37, 300}) {
                for (int trial = 0; trial < 40; ++trial) {
                    std::vector<int64_t> bias;
                    std::vector<uint32_t> scale;
                    std::vector<int32_t> shift;
                    for (int c = 0; c < channels; ++c) {
                        bias.push_back(static_cast<int64_t>(rng() % (2 * kLimit - 1)) - (kLimit - 1));
                        scale.push_back(static_cast<uint32_t>(rng() >> 33));
                        shift.push_back(static_cast<int32_t>(30 + rng() % 33));
                    }
                    if (trial % 8 == 0) scale[0] = 0;
                    const ByteScaling s = tabulate_byte_scaling(bias, scale, shift);
                    ASSERT_EQ(s.blocks, (channels + kByteScalingBlock - 1) / kByteScalingBlock);
                    // Padding channels' sums are zeros, as the fast path's are.
                    std::vector<int32_t> acc(static_cast<size_t>(s.blocks) * kByteScalingBlock, 0);
                    for (int c = 0; c < channels; ++c) {
                        const size_t i = static_cast<size_t>(c);
                        // Mostly below 2^30, sometimes not, sums near zero and past it.
                        const int magnitude_bits = static_cast<int>(rng() % (trial % 4 == 3 ? 32 : 31));
                        acc[i] = static_cast<int32_t>(static_cast<int64_t>(rng() % (uint64_t{1} << magnitude_bits)) *
                                                      (rng() & 1 ? 1 : -1));
                        if (trial % 5 == 4) acc[i] = static_cast<int32_t>(-bias[i] + static_cast<int64_t>(rng() % 5) - 2);
                    }
                    const int zero_point = static_cast<int>(rng() % 21) - 10;
                    for (size_t kernel = 0; kernel < byte_scaling_kernels().size(); ++kernel) {
                        for (int first_block = 0; first_block < s.blocks; first_block += 2) {
                            const int blocks = std::min(2, s.blocks - first_block);
                            // Blocks back to back, or each into its brick of an NHCWB16 OFM.
                            const int64_t step = trial % 2 ? kByteScalingBlock : 3 * kByteScalingBlock;
                            std::vector<uint8_t> out(static_cast<size_t>(blocks * step), 0xcd);
                            bool block_inside = true;
                            for (int c = first_block * kByteScalingBlock;
                                 c < std::min(channels, (first_block + blocks) * kByteScalingBlock); ++c) {
                                const size_t i = static_cast<size_t>(c);
                                const int64_t sum = int64_t{acc[i]} + bias[i];
                                block_inside &= sum > -kLimit && sum < kLimit;
                            }
                            const bool reported = byte_scaling_kernels()[kernel](
                                acc.data(), s, round == RoundMode::DoubleSymmetric, zero_point, clip, first_block,
                                blocks, out.data(), step);
                            ASSERT_EQ(reported, block_inside) << "kernel " << kernel << " channels " << channels;
                            if (!reported) continue;
                            for (int c = first_block * kByteScalingBlock;
                                 c < std::min(channels, (first_block + blocks) * kByteScalingBlock); ++c) {
                                const size_t i = static_cast<size_t>(c);
                                const int64_t expected =
                                    clamp(scale_value(acc[i] + bias[i], scale[i], shift[i], round) + zero_point, clip);
                                const int64_t block = c / kByteScalingBlock - first_block;
                                ASSERT_EQ(out[static_cast<size_t>(block * step + c % kByteScalingBlock)],
                                          static_cast<uint8_t>(expected))
                                    << "kernel " << kernel << " channel " << c << " of " << channels << " sum "
                                    << acc[i] + bias[i] << " scale " << scale[i] << " shift " << shift[i];
                            }
                            // Nothing between one block's bytes and the next's is touched.
                            for (int64_t i = 0; i < blocks * step; ++i) {
                                if (i % step >= kByteScalingBlock) {
                                    ASSERT_EQ(out[static_cast<size_t>(i)], 0xcd);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

// The largest products the form admits (scale 2^31 - 1, |sum| 2^30 - 1) at the smallest shift,
// where a scaled value comes nearest 2^31, and accumulators whose sums only just stay inside.
TEST(OutputBytes, ExtremesOfTheFormAreExact) {
    const int64_t top = kLimit - 1;
    const std::vector<int64_t> bias = {0, 0, top, -top, 5, -5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const std::vector<int32_t> acc = {static_cast<int32_t>(top), static_cast<int32_t>(-top), 0, 0,
                                      static_cast<int32_t>(top - 5), static_cast<int32_t>(5 - top), 1, -1,
                                      static_cast<int32_t>(top), static_cast<int32_t>(-top), 0, 0, 0, 0, 0, 0};
    std::vector<uint32_t> scale(16, (1u << 31) - 1);
    std::vector<int32_t> shift(16, 30);
    shift[8] = shift[9] = 31;
    shift[10] = 32;
    shift[11] = 62;
    const ByteScaling s = tabulate_byte_scaling(bias, scale, shift);
    ASSERT_EQ(s.blocks, 1);
    for (const RoundMode round : {RoundMode::DoubleSymmetric, RoundMode::Natural}) {
        for (const int zero_point : {-128, 0, 127}) {
            for (size_t kernel = 0; kernel < byte_scaling_kernels().size(); ++kernel) {
                std::vector<uint8_t> out(16, 0xcd);
                const Range clip{-128, 127};
                ASSERT_TRUE(byte_scaling_kernels()[kernel](acc.data(), s, round == RoundMode::DoubleSymmetric,
                                                            zero_point, clip, 0, 1, out.data(), 16));
                for (size_t c = 0; c < 16; ++c) {
                    const int64_t expected =
                        clamp(scale_value(acc[c] + bias[c], scale[c], shift[c], round) + zero_point, clip);
                    EXPECT_EQ(out[c], static_cast<uint8_t>(expected)) << "kernel " << kernel << " channel " << c;
                }
            }
        }
    }
}

TEST(OutputBytes, ChannelsOutsideTheFormLeaveNoTables) {
    const std::vector<int64_t> bias{0, kLimit};
    const std::vector<uint32_t> scale{1, 1};
    const std::vector<int32_t> shift{40, 40};
    EXPECT_EQ(tabulate_byte_scaling(bias, scale, shift).blocks, 0);  // a bias of 2^30
    EXPECT_EQ(tabulate_byte_scaling(std::vector<int64_t>{0}, std::vector<uint32_t>{1u << 31}, std::vector<int32_t>{40}).blocks, 0);
    // A shift below 30: a gain the int32 results may not hold.
    EXPECT_EQ(tabulate_byte_scaling(std::vector<int64_t>{0}, std::vector<uint32_t>{1}, std::vector<int32_t>{29}).blocks, 0);
    EXPECT_EQ(tabulate_byte_scaling(std::vector<int64_t>{0}, std::vector<uint32_t>{1}, std::vector<int32_t>{30}).blocks, 1);
    EXPECT_EQ(tabulate_byte_scaling(std::vector<int64_t>{0}, std::vector<uint32_t>{1}, std::vector<int32_t>{63}).blocks, 0);
    EXPECT_EQ(tabulate_byte_scaling(std::vector<int64_t>{-kLimit + 1}, std::vector<uint32_t>{(1u << 31) - 1},
                                    std::vector<int32_t>{62}).blocks,
              1);
}

}  // namespace
}  // namespace ethosu
