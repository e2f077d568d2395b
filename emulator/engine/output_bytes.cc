#include "emulator/engine/output_bytes.h"

#include <algorithm>

#include "emulator/engine/rounding.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ethosu {
namespace {

constexpr int64_t kFormLimit = int64_t{1} << 30;  // |bias| and |accumulator + bias| below it

// Where channel j of a block sits among its 64-bit terms: even channels first, then odd ones.
int lane_slot(int j) { return (j & 1) * (kByteScalingBlock / 2) + j / 2; }

// Plain loops, for any CPU: the closed form of output_stage.h's scale_value.
bool byte_scaling_baseline(const int32_t* acc, const ByteScaling& s, bool double_symmetric, int64_t zero_point,
                           Range clip, int first_block, int blocks, uint8_t* out, int64_t block_step) {
    bool inside = true;
    for (int b = first_block; b < first_block + blocks; ++b) {
        for (int j = 0; j < kByteScalingBlock; ++j) {
            const size_t c = static_cast<size_t>(b) * kByteScalingBlock + j;
            const size_t t = static_cast<size_t>(b) * kByteScalingBlock + lane_slot(j);
            const int64_t sum = int64_t{acc[c]} + s.bias[c];
            inside &= sum > -kFormLimit && sum < kFormLimit;
            const int64_t product = sum * s.scale[c];
            const int64_t round = !double_symmetric ? s.half[t] : product >= 0 ? s.dbl_nonnegative[t] : s.dbl_negative[t];
            out[(b - first_block) * block_step + j] =
                static_cast<uint8_t>(clamp(((product + round) >> s.shift[t]) + zero_point, clip));
        }
    }
    return inside;
}

#if defined(__x86_64__)
// GCC 12 warns of the undefined vectors its own AVX-512 intrinsics start from (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// One block of 16 channels: the sums (acc + bias in int32) times the scales as two VPMULDQ, of
// the even lanes and of the odd ones moved down, each product in 64 bits with its rounding term
// and shift; the odd lanes' results then move up into the even ones' high halves, which puts the
// 16 results (int32: the shift is 30 or more) back in channel order for the zero point, the clamp
// and the narrowing to bytes. DBL's rounding term follows the product's sign. Only the sums'
// magnitudes are checked: with |bias| < 2^30, a sum that wrapped in int32 lies at 2^30 or
// beyond, so an accumulator of 2^30 or more shows in its sum.
template <bool kDoubleSymmetric>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) bool byte_scaling_avx512_mode(
    const int32_t* acc, const ByteScaling& s, int64_t zero_point, Range clip, int first_block, int blocks,
    uint8_t* out, int64_t block_step) {
    const __m512i low = _mm512_set1_epi32(static_cast<int32_t>(clip.min - zero_point));
    const __m512i high = _mm512_set1_epi32(static_cast<int32_t>(clip.max - zero_point));
    const __m512i zero = _mm512_set1_epi32(static_cast<int32_t>(zero_point));
    __m512i magnitudes = _mm512_setzero_si512();
    // The tables as locals: a byte store may alias anything, which would reload them every block.
    const int32_t *const bias = s.bias.data(), *const scales = s.scale.data();
    const int64_t *const half = s.half.data(), *const nonnegative = s.dbl_nonnegative.data(),
                  *const negative = s.dbl_negative.data(), *const shift = s.shift.data();
    for (int b = first_block; b < first_block + blocks; ++b) {
        const size_t c = static_cast<size_t>(b) * kByteScalingBlock;
        const __m512i sum = _mm512_add_epi32(_mm512_loadu_si512(acc + c), _mm512_loadu_si512(bias + c));
        magnitudes = _mm512_or_si512(magnitudes, _mm512_abs_epi32(sum));
        const __m512i scale = _mm512_loadu_si512(scales + c);
        __m512i lanes[2] = {_mm512_mul_epi32(sum, scale),
                            _mm512_mul_epi32(_mm512_srli_epi64(sum, 32), _mm512_srli_epi64(scale, 32))};
        for (int odd = 0; odd < 2; ++odd) {
            const size_t t = c + static_cast<size_t>(odd) * (kByteScalingBlock / 2);
            __m512i round;
            if constexpr (kDoubleSymmetric)
                round = _mm512_mask_blend_epi64(_mm512_movepi64_mask(lanes[odd]), _mm512_loadu_si512(nonnegative + t),
                                                _mm512_loadu_si512(negative + t));
            else
                round = _mm512_loadu_si512(half + t);
            lanes[odd] = _mm512_srav_epi64(_mm512_add_epi64(lanes[odd], round), _mm512_loadu_si512(shift + t));
        }
        __m512i v = _mm512_mask_blend_epi32(0xAAAA, lanes[0], _mm512_slli_epi64(lanes[1], 32));
        v = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(v, low), high), zero);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (b - first_block) * block_step), _mm512_cvtepi32_epi8(v));
    }
    // A magnitude of 2^30 or more has bit 30 or 31 set (|INT32_MIN| stays INT32_MIN).
    return (_mm512_reduce_or_epi32(magnitudes) & ~int32_t{kFormLimit - 1}) == 0;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

bool byte_scaling_avx512(const int32_t* acc, const ByteScaling& s, bool double_symmetric, int64_t zero_point,
                         Range clip, int first_block, int blocks, uint8_t* out, int64_t block_step) {
    if (double_symmetric)
        return byte_scaling_avx512_mode<true>(acc, s, zero_point, clip, first_block, blocks, out, block_step);
    return byte_scaling_avx512_mode<false>(acc, s, zero_point, clip, first_block, blocks, out, block_step);
}

bool cpu_has_avx512() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}
#endif

}  // namespace

ByteScaling tabulate_byte_scaling(std::span<const int64_t> bias, std::span<const uint32_t> scale,
                                  std::span<const int32_t> shift) {
    ByteScaling s;
    const size_t channels = shift.size();
    if (bias.size() != channels || scale.size() != channels) return s;
    const size_t padded = round_up(channels, size_t{kByteScalingBlock});
    s.bias.assign(padded, 0);
    s.scale.assign(padded, 0);
    s.half.assign(padded, 0);
    s.dbl_nonnegative.assign(padded, 0);
    s.dbl_negative.assign(padded, 0);
    s.shift.assign(padded, 0);
    for (size_t c = 0; c < channels; ++c) {
        if (shift[c] < 30 || shift[c] > 62 || scale[c] >> 31 || bias[c] <= -kFormLimit || bias[c] >= kFormLimit)
            return ByteScaling{};
        const size_t t = c - c % kByteScalingBlock + static_cast<size_t>(lane_slot(static_cast<int>(c % kByteScalingBlock)));
        s.bias[c] = static_cast<int32_t>(bias[c]);
        s.scale[c] = static_cast<int32_t>(scale[c]);
        const int64_t half = int64_t{1} << (shift[c] - 1), nudge = shift[c] > 31 ? kFormLimit : 0;
        s.half[t] = half;
        s.dbl_nonnegative[t] = half + nudge;
        s.dbl_negative[t] = half - nudge;
        s.shift[t] = shift[c];
    }
    s.blocks = static_cast<int>(padded / kByteScalingBlock);
    return s;
}

std::span<const ByteScalingKernel> byte_scaling_kernels() {
    static const std::vector<ByteScalingKernel> kernels = [] {
        std::vector<ByteScalingKernel> usable;
#if defined(__x86_64__)
        if (cpu_has_avx512()) usable.push_back(byte_scaling_avx512);
#endif
        usable.push_back(byte_scaling_baseline);
        return usable;
    }();
    return kernels;
}

ByteScalingKernel fast_byte_scaling() {
    static const ByteScalingKernel fast = byte_scaling_kernels().size() > 1 ? byte_scaling_kernels().front() : nullptr;
    return fast;
}

}  // namespace ethosu
