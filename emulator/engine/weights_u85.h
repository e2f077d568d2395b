#pragma once
// Ethos-U85 weight streams (engine internal): the order Vela 5.1 writes weights in for each
// weight decoder (regor/architecture/ethosu85/ethos_u85_weight_encoder.cpp,
// EthosU85WeightOrdering), the fast weight format (mlw_encode_fwd.cpp) and the 10-byte
// scale/bias records of 32- and 48-bit accumulators.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "emulator/engine/weights.h"
#include "emulator/isa/error.h"

namespace ethosu {

struct U85WeightOrder {
    enum class Traversal { DepthFirst, PartKernelFirst, Depthwise } traversal = Traversal::DepthFirst;
    int ofm_depth = 0;  // channels (depthwise: the IFM = OFM channels)
    int kernel_height = 0, kernel_width = 0;
    int ifm_depth = 0;  // 1 for depthwise
    int streams = 1;    // weight decoders; each takes 4 channels of every OFM micro-block in turn
    int ofm_block_depth = 0;
    int ifm_block_depth = 0;
    int ofm_ublock_depth = 0;
    int ifm_ublock_depth = 0;
    int ifm_step = 8;  // IFM channels per OFM channel group: 8, 16 sparse, 1 depthwise
    int stride_x = 1, stride_y = 1;  // taps are grouped by stride phase (not depth-first)
    int sub_kernel_width = 8, sub_kernel_height = 8;
    int element_round = 1;      // kernel elements per sub-kernel are padded to a multiple of this
    int depthwise_padding = 0;  // extra zero elements after every element_round depthwise taps
};

// The order of the op's weight streams; errors name the op when the registers ask for a
// micro-block the configuration does not have.
U85WeightOrder u85_weight_order(const DecodedOp& op, const NpuConfig& config, const OpWeights& shape,
                                const LazyLocation& where);

// Every weight position of one decoder's stream in encoding order: visit(channel, y, x, i) with
// channel -1 for padding entries.
void for_each_u85_weight_position(const U85WeightOrder& order, int stream,
                                  const std::function<void(int, int, int, int)>& visit);

// The weights of one decoder stream that belong to real channels.
uint64_t u85_stream_weight_count(const U85WeightOrder& order, int stream);

// Fast weight format: 256-bit header (raw flag, 2-entry LUT flag, zero adjust, 16-entry LUT),
// then 2-bit or 4-bit LUT indices or 8-bit raw values, padded to 256 bits. Decodes count values.
std::vector<int16_t> decode_fast_weights(std::span<const uint8_t> stream, uint64_t count, const std::string& source,
                                         uint64_t base_offset);

// Fast-format streams of several decoders are interleaved in blocks of this many weights.
int u85_fast_interleave_block(const U85WeightOrder& order);

// One 10-byte scale/bias record: 32-bit accumulators carry bias int32, scale uint31, shift;
// 48-bit ones bias int48, scale uint15, shift.
void decode_u85_scale_record(const uint8_t* record, bool acc48, int64_t& bias, uint32_t& scale, int32_t& shift);

}  // namespace ethosu
