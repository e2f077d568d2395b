#pragma once
// The CONV fast path's inner product as a small GEMM: kGemmRows IFM rows (pixels or patches of
// int16 operands) times a CONV's weights, every output channel at once, in int32. Integer sums
// are exact in any order while no partial sum leaves int32, which the caller guarantees by the
// length of the k range (conv.cc: int32_exact_terms), so the result equals the plain loop's.

#include <cstdint>
#include <span>
#include <vector>

namespace ethosu {

constexpr int kGemmRows = 4;       // pixels computed together: each weight is loaded once for them
constexpr int kGemmChannels = 16;  // output channels the packed weights are padded to

// A CONV's weights (n output channels of k values each, OHWI) as the kernel reads them: for
// each pair of consecutive k, the pair of every output channel, [k / 2][n_padded][2]; zeros past
// k and n.
struct GemmWeights {
    int k = 0;
    int n = 0;
    int n_padded = 0;  // n rounded up to kGemmChannels
    std::vector<int16_t> pairs;
};

GemmWeights pack_gemm_weights(const int16_t* ohwi, int n, int k);

// sums[r * w.n_padded + o] = sum of rows[r][i] * weight(o, i) for i in [first, last), for the
// kGemmRows rows and the output channels [0, channels) rounded up to kGemmChannels (channels <=
// w.n). first is even, last is even or w.k; each row is readable up to `last` rounded up to even
// (the value there is multiplied by a zero weight).
void gemm_int16(const int16_t* const rows[kGemmRows], const GemmWeights& w, int first, int last, int channels,
                int32_t* sums);

// Every implementation of gemm_int16 this CPU runs, the one it uses first (AVX-512 VNNI, AVX2,
// plain loops): tests compare them all.
using GemmKernel = void (*)(const int16_t* const rows[kGemmRows], const GemmWeights& w, int first, int last,
                            int channels, int32_t* sums);
std::span<const GemmKernel> gemm_int16_kernels();

}  // namespace ethosu
