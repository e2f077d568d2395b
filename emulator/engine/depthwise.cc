#include "emulator/engine/depthwise.h"

#include <cstring>

#include "emulator/engine/rounding.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ethosu {
namespace {

// Where channel j of a 16-channel block sits among the block's pairs (depthwise.h): VPUNPCKLWD of
// two rows of 16 channels interleaves channels 0-3 and 8-11, VPUNPCKHWD 4-7 and 12-15.
int pair_slot(int j) { return (j & 3) | (j & 4) << 1 | (j & 8) >> 1; }
// The pair slot of channel c: its 16-channel block, then its place within the block.
int channel_slot(int c) { return c - c % kDepthwiseChannels + pair_slot(c % kDepthwiseChannels); }

// Plain loops, for any CPU.
void depthwise_baseline(const int16_t* const* pixels, const DepthwiseWeights& w, int first, int last, int channels,
                        int32_t* sums) {
    const int pair_first = first / 2, pair_last = (last + 1) / 2;
    const int channels_padded = round_up(channels, kDepthwiseChannels);
    std::memset(sums, 0, sizeof(int32_t) * static_cast<size_t>(channels_padded));
    for (int p = pair_first; p < pair_last; ++p) {
        const int16_t* x0 = pixels[2 * p];
        const int16_t* x1 = pixels[2 * p + 1];
        const int16_t* weights = w.pairs.data() + static_cast<size_t>(p) * w.channels_padded * 2;
        for (int c = 0; c < channels_padded; ++c) {
            const int16_t* pair = weights + channel_slot(c) * 2;
            sums[c] += int32_t{x0[c]} * pair[0] + int32_t{x1[c]} * pair[1];
        }
    }
}

#if defined(__x86_64__)
// AVX2's VPMADDWD multiplies 16 int16 pairs and adds each pair into an int32 lane: two taps of 8
// channels an instruction. The operands of two taps are interleaved by VPUNPCKLWD / VPUNPCKHWD,
// which work within 128-bit lanes; the weights were packed in that order, and the sums are put
// back in channel order once, after the taps.
__attribute__((target("avx2"))) void depthwise_avx2(const int16_t* const* pixels, const DepthwiseWeights& w,
                                                    int first, int last, int channels, int32_t* sums) {
    const int pair_first = first / 2, pair_last = (last + 1) / 2;
    const int channels_padded = round_up(channels, kDepthwiseChannels);
    const size_t pair_stride = static_cast<size_t>(w.channels_padded) * 2;
    for (int c = 0; c < channels_padded; c += kDepthwiseChannels) {
        __m256i low = _mm256_setzero_si256();   // channels 0-3, 8-11 of the block
        __m256i high = _mm256_setzero_si256();  // channels 4-7, 12-15
        const int16_t* weights = w.pairs.data() + static_cast<size_t>(pair_first) * pair_stride + c * 2;
        for (int p = pair_first; p < pair_last; ++p, weights += pair_stride) {
            const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pixels[2 * p] + c));
            const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pixels[2 * p + 1] + c));
            const __m256i w_low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(weights));
            const __m256i w_high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(weights + 16));
            low = _mm256_add_epi32(low, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), w_low));
            high = _mm256_add_epi32(high, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), w_high));
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + c), _mm256_permute2x128_si256(low, high, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + c + 8), _mm256_permute2x128_si256(low, high, 0x31));
    }
}
#endif

}  // namespace

DepthwiseWeights pack_depthwise_weights(const int16_t* channel_taps, int channels, int taps) {
    DepthwiseWeights w;
    w.taps = taps;
    w.channels = channels;
    w.channels_padded = round_up(channels, kDepthwiseChannels);
    const int pairs = (taps + 1) / 2;
    w.pairs.assign(static_cast<size_t>(pairs) * w.channels_padded * 2, 0);
    for (int c = 0; c < channels; ++c) {
        const int slot = channel_slot(c);
        for (int t = 0; t < taps; ++t)
            w.pairs[(static_cast<size_t>(t / 2) * w.channels_padded + slot) * 2 + t % 2] =
                channel_taps[static_cast<size_t>(c) * taps + t];
    }
    return w;
}

std::span<const DepthwiseKernel> depthwise_int16_kernels() {
    static const std::vector<DepthwiseKernel> kernels = [] {
        std::vector<DepthwiseKernel> usable;
#if defined(__x86_64__)
        if (__builtin_cpu_supports("avx2")) usable.push_back(depthwise_avx2);
#endif
        usable.push_back(depthwise_baseline);
        return usable;
    }();
    return kernels;
}

void depthwise_int16(const int16_t* const* pixels, const DepthwiseWeights& w, int first, int last, int channels,
                     int32_t* sums) {
    static const DepthwiseKernel best = depthwise_int16_kernels().front();
    best(pixels, w, first, last, channels, sums);
}

}  // namespace ethosu
