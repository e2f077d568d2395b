#pragma once
// Test-only encoder for Ethos-U85 weight streams as Vela 5.1 writes them
// (regor/architecture/ethosu85/ethos_u85_weight_encoder.cpp): the weight order per weight decoder,
// the fast weight format (FWD, regor/dependencies/mlw_codec/source/mlw_encode_fwd.cpp) with its
// decoder interleave, and the 10-byte scale/bias records. Standard (SWD) streams reuse the
// U55/U65 bitstream writer of weight_encoder.h, which is the same format.

#include <array>
#include <cstdint>
#include <vector>

namespace ethosu::test_support {

struct U85OrderSpec {
    enum class Traversal { DepthFirst, PartKernelFirst, Depthwise } traversal = Traversal::DepthFirst;
    int decoders = 1;  // weight decoders of the configuration
    int macs = 256;
    int ofm_depth = 0, kernel_h = 1, kernel_w = 1, ifm_depth = 1;  // OHWI (depthwise: I = 1)
    int ofm_block_depth = 16;
    int ifm_block_depth = 64;  // as Vela's block config chose it
    int ofm_ublock_depth = 16;
    int ifm_bits = 8;
    bool sparse = false;
    int stride_x = 1, stride_y = 1, dilation_x = 1, dilation_y = 1;
};

// Weight positions of one decoder's stream in encoding order: (o, y, x, i), o = -1 for a padding
// zero. Written as one plain loop nest (Vela's encoder is resumable; the order is the same).
std::vector<std::array<int, 4>> u85_vela_order(const U85OrderSpec& spec, int decoder);

// Weights per block when a fast stream interleaves several decoders' sequences.
int u85_fast_block(const U85OrderSpec& spec);

// The decoders' sequences merged a block at a time, decoder 0 first, as one fast stream holds them.
std::vector<int16_t> interleave_fast(const std::vector<std::vector<int16_t>>& per_decoder, int block);

// One fast-format stream: 256-bit header (raw flag, 2-entry LUT flag, zero adjust, 16 sign-folded
// LUT entries), then 2-bit or 4-bit LUT indices or 8-bit raw values, zero-padded to 256 bits.
// force_raw: raw mode whatever the values (Vela's choice for sparse weights).
std::vector<uint8_t> encode_fast(const std::vector<int16_t>& values, bool force_raw);

// A scale/bias record: 32-bit accumulators take bias int32 and scale uint31, 48-bit ones bias
// int48 and scale uint15; then the shift.
std::array<uint8_t, 10> u85_scale_record(int64_t bias, uint32_t scale, int shift, bool acc48);

}  // namespace ethosu::test_support
