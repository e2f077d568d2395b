#pragma once
// The output stage's closed form of per-channel scaling (output_pipeline.cc: DBL or NATURAL
// rounding, no activation) for an 8-bit OFM, 16 channels a step, straight to their bytes. The
// hand-vectorised kernel multiplies the int32 sums by the int32 scales as they lie (AVX-512
// VPMULDQ, even lanes and then odd ones) where the compiler's vectorisation of the int64 form
// widens both first, and narrows to bytes in the same pass instead of storing int64 values that
// conv.cc then narrows: 1.4-1.6x the int64 form's speed on a 144- or 960-channel pixel.

#include <cstdint>
#include <span>
#include <vector>

#include "emulator/engine/output_stage.h"

namespace ethosu {

constexpr int kByteScalingBlock = 16;

// Per-channel terms, padded with zero channels to whole blocks of kByteScalingBlock. Within a
// block the 64-bit terms are in the order the kernel's even and odd lanes take them: channels 0,
// 2, ..., 14, then 1, 3, ..., 15. blocks == 0 when a channel leaves the form: a scale of 2^31 or
// more, a shift outside 30..62 (below 30 a scaled value may pass int32; Vela's scales, 2^30 or
// more, then mean a gain above 1) or a bias of magnitude 2^30 or more.
struct ByteScaling {
    int blocks = 0;
    std::vector<int32_t> bias, scale;
    // The rounding term NATURAL adds, 2^(shift - 1); DBL's for a product >= 0 and < 0, which
    // add and take off 2^30 once shift passes 31; the shift.
    std::vector<int64_t> half, dbl_nonnegative, dbl_negative, shift;
};

ByteScaling tabulate_byte_scaling(std::span<const int64_t> bias, std::span<const uint32_t> scale,
                                  std::span<const int32_t> shift);

// For the channels c in [16 * first_block, 16 * (first_block + blocks)), the byte of
// clamp(scale_value(acc[c] + bias(c), scale(c), shift(c), mode) + zero_point, clip), clip within 8
// bits, where mode is DBL (double_symmetric) or NATURAL (DBL_ASYMMETRIC's form too): block b's 16
// bytes at out + (b - first_block) * block_step (16: back to back; an NHCWB16 OFM's brick step:
// each into its brick). False, the bytes undefined, when a sum acc[c] + bias(c) lies outside the
// form (magnitude 2^30 or more); the caller then takes the general way.
using ByteScalingKernel = bool (*)(const int32_t* acc, const ByteScaling& s, bool double_symmetric,
                                   int64_t zero_point, Range clip, int first_block, int blocks, uint8_t* out,
                                   int64_t block_step);

// Every implementation this CPU runs, the hand-vectorised one first (AVX-512, plain loops): tests
// compare them all.
std::span<const ByteScalingKernel> byte_scaling_kernels();
// The hand-vectorised kernel, or nullptr on a CPU without one: there the int64 form, which the
// compiler vectorises, is faster than the plain loops.
ByteScalingKernel fast_byte_scaling();

}  // namespace ethosu
