// The DEPTHWISE fast path's kernel (emulator/engine/depthwise.cc) against a plain loop over
// [channel][tap] weights: every implementation the CPU runs (AVX2, plain loops).

#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <vector>

#include "emulator/engine/depthwise.h"

namespace ethosu {
namespace {

struct DepthwiseCase {
    int channels, taps;
    int operand_limit;  // |IFM operand| (int8: 255 after the zero point, int16: 32768, int4 weights: 8)
    int weight_limit;   // |weight|: 9-bit, or int4
};

int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }

// Checks tap sub-ranges [first, last) (even bounds, or last = taps) against the plain loop, with
// every fourth tap a padding tap (a row of zeros, as conv.cc passes).
void check(const DepthwiseCase& c, std::mt19937& rng) {
    std::uniform_int_distribution<int> operand(-c.operand_limit, c.operand_limit - 1);
    std::uniform_int_distribution<int> weight(-c.weight_limit, c.weight_limit);
    std::vector<int16_t> channel_taps(static_cast<size_t>(c.channels) * c.taps);
    for (auto& v : channel_taps) v = static_cast<int16_t>(weight(rng));
    const DepthwiseWeights w = pack_depthwise_weights(channel_taps.data(), c.channels, c.taps);
    ASSERT_EQ(w.channels_padded % kDepthwiseChannels, 0);
    // Pixels readable to the channels rounded up; the values past them are garbage the kernel
    // may fold into sums that are not checked.
    const size_t readable = static_cast<size_t>(round_up(c.channels, kDepthwiseChannels));
    const int pixel_count = (c.taps + 1) / 2 * 2;
    std::vector<std::vector<int16_t>> rows(static_cast<size_t>(pixel_count), std::vector<int16_t>(readable));
    for (auto& row : rows)
        for (auto& v : row) v = static_cast<int16_t>(operand(rng));
    const std::vector<int16_t> zeros(readable, 0);
    std::vector<const int16_t*> pixels;
    for (int t = 0; t < pixel_count; ++t) pixels.push_back(t % 4 == 3 ? zeros.data() : rows[static_cast<size_t>(t)].data());
    for (int first = 0; first < c.taps; first += 2) {
        for (int last : {first + 2, (first + c.taps) / 4 * 2, c.taps}) {
            if (last <= first || last > c.taps) continue;
            for (int channels : {c.channels, (c.channels + 1) / 2}) {
                for (size_t kernel = 0; kernel < depthwise_int16_kernels().size(); ++kernel) {
                    std::vector<int32_t> sums(static_cast<size_t>(w.channels_padded), -1);
                    depthwise_int16_kernels()[kernel](pixels.data(), w, first, last, channels, sums.data());
                    for (int ch = 0; ch < channels; ++ch) {
                        int64_t expected = 0;
                        for (int t = first; t < last; ++t)
                            expected += int64_t{pixels[static_cast<size_t>(t)][ch]} *
                                        channel_taps[static_cast<size_t>(ch) * c.taps + t];
                        ASSERT_EQ(sums[static_cast<size_t>(ch)], expected)
                            << "kernel " << kernel << ", channels " << c.channels << " taps " << c.taps << " ["
                            << first << ", " << last << ") channel " << ch;
                    }
                }
            }
        }
    }
}

TEST(Depthwise, EqualsPlainLoopsForInt8Int16AndInt4Operands) {
    std::cout << depthwise_int16_kernels().size() << " implementations on this CPU\n";
    std::mt19937 rng(11);
    const DepthwiseCase cases[] = {
        {1, 1, 255, 256},    {3, 9, 255, 256},     {16, 9, 255, 256},  {17, 4, 255, 256},  {40, 25, 255, 256},
        {144, 9, 255, 256},  {5, 64, 255, 256},                        // int8 IFMs, 9-bit weights
        {33, 9, 32768, 256}, {16, 7, 32768, 256}, {8, 240, 32768, 255},  // int16 IFMs: at most 255 products
        {20, 9, 128, 8},                                                  // int4 weights
    };
    for (const DepthwiseCase& c : cases) check(c, rng);
}

// The largest products an int32 sum of the fast path meets: -32768 x -256, 240 of them.
TEST(Depthwise, ExtremeOperandsStayExact) {
    const int channels = 18, taps = 240;
    std::vector<int16_t> channel_taps(static_cast<size_t>(channels) * taps, -256);
    const DepthwiseWeights w = pack_depthwise_weights(channel_taps.data(), channels, taps);
    std::vector<int16_t> row(static_cast<size_t>(w.channels_padded), -32768);
    const std::vector<const int16_t*> pixels(taps, row.data());
    for (const DepthwiseKernel kernel : depthwise_int16_kernels()) {
        std::vector<int32_t> sums(static_cast<size_t>(w.channels_padded));
        kernel(pixels.data(), w, 0, taps, channels, sums.data());
        for (int c = 0; c < channels; ++c) EXPECT_EQ(sums[static_cast<size_t>(c)], 240 * 32768 * 256);
    }
}

}  // namespace
}  // namespace ethosu
