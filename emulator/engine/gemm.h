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
    // Or, for gemm_u8, the weights as bytes, four consecutive k of every output channel in one
    // 32-bit lane, [k / 4][n_padded][4] (zeros past k and n), and each channel's sum of weights.
    std::vector<int8_t> quads;
    std::vector<int32_t> channel_sums;
};

// Packs for gemm_u8 (quads) where `bytes_operands` (an 8-bit IFM), gemm_u8 runs on this CPU, k
// is at most kGemmU8MaxK and every weight fits int8; else for gemm_int16 (pairs).
GemmWeights pack_gemm_weights(const int16_t* ohwi, int n, int k, bool bytes_operands);

// An 8-bit IFM's operands (|x - zero point| <= 255) times int8 weights, k of them, sum to less than
// 2^31 in magnitude: one int32 sum holds them whatever the zero point (int32_exact_terms' bound).
constexpr int kGemmU8MaxK = 32768;

// sums[r * w.n_padded + o] = sum over i in [0, w.k) of (rows[r][i] - offset) * weight(o, i), for
// the kGemmRows rows of unsigned bytes and the output channels [0, channels) rounded up to
// kGemmChannels; each row is readable up to w.k rounded up to 4 (the values there meet zero
// weights). An int8 IFM's bytes come offset to unsigned (x + 128, offset zero point + 128), so
// AVX-512 VNNI's VPDPBUSD takes four products an instruction where VPDPWSSD takes two: the raw
// sums and the offset's share (offset x the channel's weight sum) may wrap in int32, their
// difference, the exact sum, does not.
using GemmU8Kernel = void (*)(const uint8_t* const rows[kGemmRows], const GemmWeights& w, int channels,
                              int32_t offset, int32_t* sums);
// Every implementation of gemm_u8 this CPU runs, the one it uses first (AVX-512 VNNI, plain
// loops): tests compare them all. Conv.cc takes gemm_u8 only where the VNNI one runs.
std::span<const GemmU8Kernel> gemm_u8_kernels();
bool gemm_u8_is_fast();
void gemm_u8(const uint8_t* const rows[kGemmRows], const GemmWeights& w, int channels, int32_t offset, int32_t* sums);

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
