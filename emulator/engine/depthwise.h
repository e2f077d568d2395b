#pragma once
// The DEPTHWISE fast path's inner product: every channel of one OFM pixel at once, the kernel's
// taps in pairs (each channel's IFM operand times its own weight, int16 x int16 in int32). Integer
// sums are exact in any order while no partial sum leaves int32, which the caller guarantees by the
// length of the tap range (conv.cc: int32_exact_terms), so the result equals the plain loop's.

#include <cstdint>
#include <span>
#include <vector>

namespace ethosu {

constexpr int kDepthwiseChannels = 16;  // channels the packed weights are padded to

// A DEPTHWISE's weights (`channels` channels of `taps` values each, [channel][tap] as OpWeights
// holds them) as the kernel reads them: for each pair of consecutive taps, every channel's pair,
// [taps / 2 rounded up][channels_padded][2], zeros past the taps and channels. Within each block
// of 16 channels the pairs are in the order AVX2's VPUNPCKLWD / VPUNPCKHWD interleave two 16-channel
// operand rows in (channels 0-3, 8-11, then 4-7, 12-15), so that the kernel interleaves operands
// without a lane-crossing permute.
struct DepthwiseWeights {
    int taps = 0;
    int channels = 0;
    int channels_padded = 0;  // channels rounded up to kDepthwiseChannels
    std::vector<int16_t> pairs;
};

DepthwiseWeights pack_depthwise_weights(const int16_t* channel_taps, int channels, int taps);

// sums[c] = sum of pixels[t][c] * weight(c, t) for t in [first, last), for the channels [0,
// channels) rounded up to kDepthwiseChannels (channels <= w.channels). first is even, last is even
// or w.taps; pixels[t] (an IFM pixel's operands, or zeros for a padding tap) is readable for
// channels rounded up to kDepthwiseChannels values, for every t up to `last` rounded up to even
// (the operands of a tap past w.taps are multiplied by zero weights).
void depthwise_int16(const int16_t* const* pixels, const DepthwiseWeights& w, int first, int last, int channels,
                     int32_t* sums);

// Every implementation of depthwise_int16 this CPU runs, the one it uses first (AVX2, plain
// loops): tests compare them all.
using DepthwiseKernel = void (*)(const int16_t* const* pixels, const DepthwiseWeights& w, int first, int last,
                                 int channels, int32_t* sums);
std::span<const DepthwiseKernel> depthwise_int16_kernels();

}  // namespace ethosu
