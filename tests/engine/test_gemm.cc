// The CONV fast path's GEMM (emulator/engine/gemm.cc) against a plain loop over OHWI weights:
// every implementation the CPU runs (AVX-512 VNNI, AVX2, plain loops).

#include <gtest/gtest.h>

#include <iostream>
#include <random>
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
    const GemmWeights w = pack_gemm_weights(ohwi.data(), c.n, c.k);
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
    const GemmWeights w = pack_gemm_weights(ohwi.data(), n, k);
    std::vector<int16_t> row(k, -32768);
    const int16_t* rows[kGemmRows] = {row.data(), row.data(), row.data(), row.data()};
    for (const GemmKernel kernel : gemm_int16_kernels()) {
        std::vector<int32_t> sums(static_cast<size_t>(kGemmRows) * w.n_padded);
        kernel(rows, w, 0, k, n, sums.data());
        for (int o = 0; o < n; ++o) EXPECT_EQ(sums[static_cast<size_t>(o)], 240 * 32768 * 256);
    }
}

}  // namespace
}  // namespace ethosu
