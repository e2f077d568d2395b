// The CONV fast path's GEMMs (emulator/engine/gemm.cc) against a plain loop over OHWI weights:
// every implementation the CPU runs (int16: AVX-512 VNNI, AVX2, plain loops; bytes: AVX-512 VNNI,
// plain loops), and which weights gemm_u8 takes.

#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "emulator/engine/gemm.h"

namespace ethosu {
namespace {

struct GemmCase {
    int n, k;
    int operand_limit;  // |IFM operand| (int8: 255 after the zero point, int16: 32768, int4 weights: 8)
    int weight_limit;   // |weight|: 9-bit, or int4
};

// Checks k sub-ranges [first, last) (even bounds, or last = k) against the plain loop.
void check(const GemmCase& c, std::mt19937& rng) {
    std::uniform_int_distribution<int> operand(-c.operand_limit, c.operand_limit - 1);
    std::uniform_int_distribution<int> weight(-c.weight_limit, c.weight_limit);
    std::vector<int16_t> ohwi(static_cast<size_t>(c.n) * c.k);
    for (auto& v : ohwi) v = static_cast<int16_t>(weight(rng));
    const GemmWeights w = pack_gemm_weights(ohwi.data(), c.n, c.k, false);
    ASSERT_EQ(w.n_padded % kGemmChannels, 0);
    // Rows readable to k rounded up to even; the element past k holds garbage the zero weight cancels.
    std::vector<std::vector<int16_t>> rows(kGemmRows, std::vector<int16_t>(static_cast<size_t>(c.k) + 1));
    for (auto& row : rows)
        for (auto& v : row) v = static_cast<int16_t>(operand(rng));
    const int16_t* pointers[kGemmRows];
    for (int r = 0; r < kGemmRows; ++r) pointers[r] = rows[static_cast<size_t>(r)].data();
    for (int first = 0; first < c.k; first += 6) {
        for (int last : {first + 2, (first + c.k) / 4 * 2, c.k}) {
            if (last <= first || last > c.k) continue;
            for (int channels : {c.n, (c.n + 1) / 2}) {
                for (size_t kernel = 0; kernel < gemm_int16_kernels().size(); ++kernel) {
                    std::vector<int32_t> sums(static_cast<size_t>(kGemmRows) * w.n_padded, -1);
                    gemm_int16_kernels()[kernel](pointers, w, first, last, channels, sums.data());
                    for (int r = 0; r < kGemmRows; ++r)
                        for (int o = 0; o < channels; ++o) {
                            int64_t expected = 0;
                            for (int i = first; i < last; ++i)
                                expected += int64_t{rows[static_cast<size_t>(r)][static_cast<size_t>(i)]} *
                                            ohwi[static_cast<size_t>(o) * c.k + i];
                            ASSERT_EQ(sums[static_cast<size_t>(r) * w.n_padded + o], expected)
                                << "kernel " << kernel << ", n " << c.n << " k " << c.k << " [" << first << ", "
                                << last << ") row " << r << " channel " << o;
                        }
                }
            }
        }
    }
}

TEST(Gemm, EqualsPlainLoopsForInt8Int16AndInt4Operands) {
    std::cout << gemm_int16_kernels().size() << " implementations on this CPU\n";
    std::mt19937 rng(7);
    const GemmCase cases[] = {
        {1, 1, 255, 256},     {3, 2, 255, 256},   {16, 16, 255, 256}, {17, 33, 255, 256}, {40, 9, 255, 256},
        {192, 32, 255, 256},  {24, 144, 255, 256}, {5, 1153, 255, 256},  // int8 IFMs, 9-bit weights
        {33, 240, 32768, 256}, {16, 7, 32768, 256}, {8, 255, 32768, 255},  // int16 IFMs: at most 255 products
        {20, 27, 128, 8},                                                  // int4 weights
    };
    for (const GemmCase& c : cases) check(c, rng);
}

// The largest products an int32 sum of the fast path meets: -32768 x -256, 240 of them.
TEST(Gemm, ExtremeOperandsStayExact) {
    const int n = 18, k = 240;
    std::vector<int16_t> ohwi(static_cast<size_t>(n) * k, -256);
    const GemmWeights w = pack_gemm_weights(ohwi.data(), n, k, false);
    std::vector<int16_t> row(k, -32768);
    const int16_t* rows[kGemmRows] = {row.data(), row.data(), row.data(), row.data()};
    for (const GemmKernel kernel : gemm_int16_kernels()) {
        std::vector<int32_t> sums(static_cast<size_t>(kGemmRows) * w.n_padded);
        kernel(rows, w, 0, k, n, sums.data());
        for (int o = 0; o < n; ++o) EXPECT_EQ(sums[static_cast<size_t>(o)], 240 * 32768 * 256);
    }
}

// gemm_u8: unsigned byte operands less an offset, int8 weights, over the whole k.
TEST(GemmU8, EqualsPlainLoops) {
    std::cout << gemm_u8_kernels().size() << " implementations on this CPU\n";
    std::mt19937 rng(9);
    std::uniform_int_distribution<int> byte(0, 255), weight(-128, 127);
    for (const auto& [n, k] : std::vector<std::pair<int, int>>{{1, 1}, {3, 2}, {16, 16}, {17, 33}, {40, 9},
                                                               {192, 32}, {24, 144}, {5, 1153}, {33, 7}}) {
        std::vector<int16_t> ohwi(static_cast<size_t>(n) * k);
        for (auto& v : ohwi) v = static_cast<int16_t>(weight(rng));
        GemmWeights w;
        w.k = k;
        w.n = n;
        w.n_padded = (n + kGemmChannels - 1) / kGemmChannels * kGemmChannels;
        // Packed as pack_gemm_weights does on a VNNI CPU, whatever this one is.
        w.quads.assign(static_cast<size_t>((k + 3) / 4) * w.n_padded * 4, 0);
        w.channel_sums.assign(static_cast<size_t>(w.n_padded), 0);
        for (int o = 0; o < n; ++o)
            for (int i = 0; i < k; ++i) {
                const int16_t v = ohwi[static_cast<size_t>(o) * k + i];
                w.quads[(static_cast<size_t>(i / 4) * w.n_padded + o) * 4 + i % 4] = static_cast<int8_t>(v);
                w.channel_sums[static_cast<size_t>(o)] += v;
            }
        if (gemm_u8_is_fast()) {
            const GemmWeights packed = pack_gemm_weights(ohwi.data(), n, k, true);
            EXPECT_EQ(packed.quads, w.quads);
            EXPECT_EQ(packed.channel_sums, w.channel_sums);
            EXPECT_TRUE(packed.pairs.empty());
        }
        // Rows readable to k rounded up to 4; the bytes past k meet zero weights.
        std::vector<std::vector<uint8_t>> rows(kGemmRows, std::vector<uint8_t>(static_cast<size_t>(k) + 3));
        for (auto& row : rows)
            for (auto& v : row) v = static_cast<uint8_t>(byte(rng));
        const uint8_t* pointers[kGemmRows];
        for (int r = 0; r < kGemmRows; ++r) pointers[r] = rows[static_cast<size_t>(r)].data();
        for (const int32_t offset : {0, 128, 255, byte(rng)}) {
            for (const int channels : {n, (n + 1) / 2}) {
                for (size_t kernel = 0; kernel < gemm_u8_kernels().size(); ++kernel) {
                    std::vector<int32_t> sums(static_cast<size_t>(kGemmRows) * w.n_padded, -1);
                    gemm_u8_kernels()[kernel](pointers, w, channels, offset, sums.data());
                    for (int r = 0; r < kGemmRows; ++r)
                        for (int o = 0; o < channels; ++o) {
                            int64_t expected = 0;
                            for (int i = 0; i < k; ++i)
                                expected += (int64_t{rows[static_cast<size_t>(r)][static_cast<size_t>(i)]} - offset) *
                                            ohwi[static_cast<size_t>(o) * k + i];
                            ASSERT_EQ(sums[static_cast<size_t>(r) * w.n_padded + o], expected)
                                << "kernel " << kernel << ", n " << n << " k " << k << " offset " << offset << " row "
                                << r << " channel " << o;
                        }
                }
            }
        }
    }
}

// The largest sums gemm_u8 meets, kGemmU8MaxK products of 255 x -128 less an offset of 0, and of
// 0 x 127 less 255: the raw sums and the offset's share wrap in int32, their difference does not.
TEST(GemmU8, LongestSumsStayExact) {
    const int n = 16, k = kGemmU8MaxK;
    for (const auto& [value, weight, offset] : std::vector<std::tuple<uint8_t, int8_t, int32_t>>{{255, -128, 0}, {0, 127, 255}}) {
        std::vector<int16_t> ohwi(static_cast<size_t>(n) * k, weight);
        GemmWeights w;
        w.k = k, w.n = n, w.n_padded = n;
        w.quads.assign(static_cast<size_t>(k) * n, weight);
        w.channel_sums.assign(static_cast<size_t>(n), int32_t{weight} * k);
        std::vector<uint8_t> row(static_cast<size_t>(k), value);
        const uint8_t* rows[kGemmRows] = {row.data(), row.data(), row.data(), row.data()};
        for (const GemmU8Kernel kernel : gemm_u8_kernels()) {
            std::vector<int32_t> sums(static_cast<size_t>(kGemmRows) * n);
            kernel(rows, w, n, offset, sums.data());
            for (int o = 0; o < n; ++o) EXPECT_EQ(sums[static_cast<size_t>(o)], int64_t{k} * (value - offset) * weight);
        }
    }
}

// Weights gemm_u8 does not take: a 16-bit IFM's, one past int8, more than kGemmU8MaxK of them.
TEST(GemmU8, PacksOnlyInt8WeightsOfByteOperands) {
    std::vector<int16_t> small(64, 5), wide = small;
    wide[17] = 128;
    EXPECT_TRUE(pack_gemm_weights(small.data(), 2, 32, false).quads.empty());
    EXPECT_TRUE(pack_gemm_weights(wide.data(), 2, 32, true).quads.empty());
    EXPECT_FALSE(pack_gemm_weights(wide.data(), 2, 32, true).pairs.empty());
    std::vector<int16_t> longest(static_cast<size_t>(kGemmU8MaxK) + 1, 1);
    EXPECT_TRUE(pack_gemm_weights(longest.data(), 1, kGemmU8MaxK + 1, true).quads.empty());
    EXPECT_EQ(pack_gemm_weights(small.data(), 2, 32, true).quads.empty(), !gemm_u8_is_fast());
}

}  // namespace
}  // namespace ethosu
