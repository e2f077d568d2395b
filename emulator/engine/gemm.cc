#include "emulator/engine/gemm.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "emulator/engine/rounding.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ethosu {
namespace {

// Two consecutive int16 operands of a row as one 32-bit lane (the pair the weights hold).
int32_t operand_pair(const int16_t* row, int i) {
    int32_t pair;
    std::memcpy(&pair, row + i, sizeof pair);
    return pair;
}

// Plain loops, for any CPU.
void gemm_baseline(const int16_t* const rows[kGemmRows], const GemmWeights& w, int first, int last, int channels,
                   int32_t* sums) {
    const int pair_first = first / 2, pair_last = (last + 1) / 2;
    const int channels_padded = round_up(channels, kGemmChannels);
    for (int r = 0; r < kGemmRows; ++r) {
        int32_t* out = sums + static_cast<size_t>(r) * w.n_padded;
        std::memset(out, 0, sizeof(int32_t) * static_cast<size_t>(channels_padded));
        for (int p = pair_first; p < pair_last; ++p) {
            const int32_t x0 = rows[r][2 * p], x1 = rows[r][2 * p + 1];
            const int16_t* weights = w.pairs.data() + static_cast<size_t>(p) * w.n_padded * 2;
            for (int o = 0; o < channels_padded; ++o) out[o] += x0 * weights[2 * o] + x1 * weights[2 * o + 1];
        }
    }
}

int32_t operand_quad(const uint8_t* row, int i) {
    int32_t quad;
    std::memcpy(&quad, row + i, sizeof quad);
    return quad;
}

void gemm_u8_baseline(const uint8_t* const rows[kGemmRows], const GemmWeights& w, int channels, int32_t offset,
                      int32_t* sums) {
    const int channels_padded = round_up(channels, kGemmChannels);
    const int quads = (w.k + 3) / 4;
    for (int r = 0; r < kGemmRows; ++r) {
        int32_t* out = sums + static_cast<size_t>(r) * w.n_padded;
        for (int o = 0; o < channels_padded; ++o) {
            int64_t sum = 0;
            for (int i = 0; i < 4 * quads; ++i)
                sum += (int64_t{rows[r][i]} - offset) * w.quads[(static_cast<size_t>(i / 4) * w.n_padded + o) * 4 + i % 4];
            out[o] = static_cast<int32_t>(sum);
        }
    }
}

#if defined(__x86_64__)
// Two vectors of 16 channels for kGemmRows rows, 8 accumulators, as gemm_avx512_vnni; each
// VPDPBUSD adds four byte products into every lane. The offset's share is taken off at the end.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void gemm_u8_avx512_vnni(const uint8_t* const rows[kGemmRows],
                                                                             const GemmWeights& w, int channels,
                                                                             int32_t offset, int32_t* sums) {
    const int quads = (w.k + 3) / 4;
    const int channels_padded = round_up(channels, kGemmChannels);
    const size_t quad_stride = static_cast<size_t>(w.n_padded) * 4;
    const __m512i offsets = _mm512_set1_epi32(offset);
    for (int o = 0; o < channels_padded; o += 2 * kGemmChannels) {
        const bool two = o + kGemmChannels < channels_padded;
        __m512i acc[kGemmRows][2];
        for (auto& row : acc) row[0] = row[1] = _mm512_setzero_si512();
        const int8_t* weights = w.quads.data() + static_cast<size_t>(o) * 4;
        for (int q = 0; q < quads; ++q, weights += quad_stride) {
            const __m512i low = _mm512_loadu_si512(weights);
            const __m512i high = two ? _mm512_loadu_si512(weights + 64) : _mm512_setzero_si512();
            for (int r = 0; r < kGemmRows; ++r) {
                const __m512i x = _mm512_set1_epi32(operand_quad(rows[r], 4 * q));
                acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], x, low);
                acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], x, high);
            }
        }
        const __m512i share_low = _mm512_mullo_epi32(offsets, _mm512_loadu_si512(w.channel_sums.data() + o));
        const __m512i share_high =
            two ? _mm512_mullo_epi32(offsets, _mm512_loadu_si512(w.channel_sums.data() + o + 16)) : _mm512_setzero_si512();
        for (int r = 0; r < kGemmRows; ++r) {
            int32_t* out = sums + static_cast<size_t>(r) * w.n_padded + o;
            _mm512_storeu_si512(out, _mm512_sub_epi32(acc[r][0], share_low));
            if (two) _mm512_storeu_si512(out + 16, _mm512_sub_epi32(acc[r][1], share_high));
        }
    }
}
#endif

#if defined(__x86_64__)
// AVX2's VPMADDWD multiplies 16 int16 pairs and adds each pair into an int32 lane: 8 output
// channels x 2 operands an instruction, so no sum is ever reduced across lanes. Two vectors of
// channels for kGemmRows rows are 8 accumulators, which stay in registers along k.
__attribute__((target("avx2"))) void gemm_avx2(const int16_t* const rows[kGemmRows], const GemmWeights& w, int first,
                                               int last, int channels, int32_t* sums) {
    const int pair_first = first / 2, pair_last = (last + 1) / 2;
    const int channels_padded = round_up(channels, kGemmChannels);
    for (int o = 0; o < channels_padded; o += kGemmChannels) {
        __m256i acc[kGemmRows][2];
        for (auto& row : acc) row[0] = row[1] = _mm256_setzero_si256();
        const int16_t* weights = w.pairs.data() + (static_cast<size_t>(pair_first) * w.n_padded + o) * 2;
        for (int p = pair_first; p < pair_last; ++p, weights += static_cast<size_t>(w.n_padded) * 2) {
            const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(weights));
            const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(weights + 16));
            for (int r = 0; r < kGemmRows; ++r) {
                const __m256i x = _mm256_set1_epi32(operand_pair(rows[r], 2 * p));
                acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x, low));
                acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x, high));
            }
        }
        for (int r = 0; r < kGemmRows; ++r) {
            int32_t* out = sums + static_cast<size_t>(r) * w.n_padded + o;
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), acc[r][0]);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8), acc[r][1]);
        }
    }
}

// AVX-512 VNNI's VPDPWSSD multiplies and adds in one instruction, 16 channels x 2 products; two
// vectors of channels for kGemmRows rows are 8 accumulators, enough to cover its latency. A last
// block of 16 channels takes one vector.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void gemm_avx512_vnni(const int16_t* const rows[kGemmRows],
                                                                          const GemmWeights& w, int first, int last,
                                                                          int channels, int32_t* sums) {
    const int pair_first = first / 2, pair_last = (last + 1) / 2;
    const int channels_padded = round_up(channels, kGemmChannels);
    const size_t pair_stride = static_cast<size_t>(w.n_padded) * 2;
    for (int o = 0; o < channels_padded; o += 2 * kGemmChannels) {
        const bool two = o + kGemmChannels < channels_padded;
        __m512i acc[kGemmRows][2];
        for (auto& row : acc) row[0] = row[1] = _mm512_setzero_si512();
        const int16_t* weights = w.pairs.data() + (static_cast<size_t>(pair_first) * w.n_padded + o) * 2;
        for (int p = pair_first; p < pair_last; ++p, weights += pair_stride) {
            const __m512i low = _mm512_loadu_si512(weights);
            const __m512i high = two ? _mm512_loadu_si512(weights + 32) : _mm512_setzero_si512();
            for (int r = 0; r < kGemmRows; ++r) {
                const __m512i x = _mm512_set1_epi32(operand_pair(rows[r], 2 * p));
                acc[r][0] = _mm512_dpwssd_epi32(acc[r][0], x, low);
                acc[r][1] = _mm512_dpwssd_epi32(acc[r][1], x, high);
            }
        }
        for (int r = 0; r < kGemmRows; ++r) {
            int32_t* out = sums + static_cast<size_t>(r) * w.n_padded + o;
            _mm512_storeu_si512(out, acc[r][0]);
            if (two) _mm512_storeu_si512(out + 16, acc[r][1]);
        }
    }
}
#endif

}  // namespace

GemmWeights pack_gemm_weights(const int16_t* ohwi, int n, int k, bool bytes_operands) {
    GemmWeights w;
    w.k = k;
    w.n = n;
    w.n_padded = round_up(n, kGemmChannels);
    const size_t count = static_cast<size_t>(n) * k;
    if (bytes_operands && gemm_u8_is_fast() && k <= kGemmU8MaxK &&
        std::all_of(ohwi, ohwi + count, [](int16_t v) { return v >= INT8_MIN && v <= INT8_MAX; })) {
        const int quads = (k + 3) / 4;
        w.quads.assign(static_cast<size_t>(quads) * w.n_padded * 4, 0);
        w.channel_sums.assign(static_cast<size_t>(w.n_padded), 0);
        for (int o = 0; o < n; ++o) {
            const int16_t* from = ohwi + static_cast<size_t>(o) * k;
            for (int i = 0; i < k; ++i) {
                w.quads[(static_cast<size_t>(i / 4) * w.n_padded + o) * 4 + i % 4] = static_cast<int8_t>(from[i]);
                w.channel_sums[static_cast<size_t>(o)] += from[i];
            }
        }
        return w;
    }
    const int pairs = (k + 1) / 2;
    w.pairs.assign(static_cast<size_t>(pairs) * w.n_padded * 2, 0);
    // A channel's weights are read in order and written a pair (32 bits) at a time.
    const size_t pair_stride = static_cast<size_t>(w.n_padded) * 2;
    for (int o = 0; o < n; ++o) {
        const int16_t* from = ohwi + static_cast<size_t>(o) * k;
        int16_t* to = w.pairs.data() + static_cast<size_t>(o) * 2;
        for (int p = 0; p < k / 2; ++p, to += pair_stride) std::memcpy(to, from + 2 * p, 2 * sizeof(int16_t));
        if (k % 2) to[0] = from[k - 1];  // the last pair's second weight stays zero
    }
    return w;
}

std::span<const GemmKernel> gemm_int16_kernels() {
    static const std::vector<GemmKernel> kernels = [] {
        std::vector<GemmKernel> usable;
#if defined(__x86_64__)
        if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw")) usable.push_back(gemm_avx512_vnni);
        if (__builtin_cpu_supports("avx2")) usable.push_back(gemm_avx2);
#endif
        usable.push_back(gemm_baseline);
        return usable;
    }();
    return kernels;
}

std::span<const GemmU8Kernel> gemm_u8_kernels() {
    static const std::vector<GemmU8Kernel> kernels = [] {
        std::vector<GemmU8Kernel> usable;
#if defined(__x86_64__)
        if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
            usable.push_back(gemm_u8_avx512_vnni);
#endif
        usable.push_back(gemm_u8_baseline);
        return usable;
    }();
    return kernels;
}

bool gemm_u8_is_fast() { return gemm_u8_kernels().size() > 1; }

void gemm_u8(const uint8_t* const rows[kGemmRows], const GemmWeights& w, int channels, int32_t offset, int32_t* sums) {
    static const GemmU8Kernel best = gemm_u8_kernels().front();
    best(rows, w, channels, offset, sums);
}

void gemm_int16(const int16_t* const rows[kGemmRows], const GemmWeights& w, int first, int last, int channels,
                int32_t* sums) {
    static const GemmKernel best = gemm_int16_kernels().front();
    best(rows, w, first, last, channels, sums);
}

}  // namespace ethosu
