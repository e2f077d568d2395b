#include "emulator/engine/weights_u85.h"

#include <fmt/format.h>

#include <algorithm>

#include "emulator/engine/rounding.h"

namespace ethosu {
namespace {

constexpr int kInterleaveDepth = 4;  // OFM channels a decoder takes before the next one

}  // namespace

U85WeightOrder u85_weight_order(const DecodedOp& op, const NpuConfig& config, const OpWeights& shape,
                                const LazyLocation& where) {
    using Traversal = U85WeightOrder::Traversal;
    U85WeightOrder w;
    w.traversal = op.kind == OpKind::Depthwise   ? Traversal::Depthwise
                  : op.kernel().kernel.part_kernel_first ? Traversal::PartKernelFirst
                                                : Traversal::DepthFirst;
    w.ofm_depth = shape.ofm_depth;
    w.kernel_height = shape.kernel_height;
    w.kernel_width = shape.kernel_width;
    w.ifm_depth = shape.ifm_depth;
    w.streams = op.kernel().weight_format == WeightFormat::Fast ? config.cores : static_cast<int>(op.kernel().weights.size());
    w.ofm_block_depth = op.kernel().block.ofm_depth;
    const auto ublock = config.micro_block_index(op.kernel().output.microblock);
    if (!ublock) {
        throw Error({*where.file, where.offset, "NPU_SET_ACC_FORMAT.microblock", OffsetKind::Command},
                    fmt::format("micro-block {} does not exist on {}", static_cast<int>(op.kernel().output.microblock),
                                config.name));
    }
    const MicroBlockShape& ofm_ublock = config.micro_blocks[*ublock];
    w.ofm_ublock_depth = ofm_ublock.depth;
    if (w.ofm_ublock_depth % (kInterleaveDepth * w.streams) != 0 || w.ofm_block_depth % w.ofm_ublock_depth != 0) {
        throw Error(where, fmt::format("OFM block depth {} is not made of {}-deep micro-blocks for {} weight decoders",
                                       w.ofm_block_depth, w.ofm_ublock_depth, w.streams));
    }
    const bool ifm16 = op.kernel().ifm.precision.bits == 16;
    const bool sparse = op.kernel().sparse_2_4;
    // Vela encodes 2:4 sparsity along the IFM depth of convolutions only.
    if (sparse && w.traversal == Traversal::Depthwise) {
        throw Error({*where.file, where.offset, "NPU_SET_WEIGHT_FORMAT.weight_sparsity", OffsetKind::Command},
                    "2:4 sparse weights on a DEPTHWISE op", ErrorKind::Unsupported);
    }
    w.ifm_block_depth = u85_conv_ifm_block_depth(config, ofm_ublock, w.traversal == Traversal::PartKernelFirst,
                                                 op.kernel().ifm.precision.bits, sparse);

    switch (w.traversal) {
        case Traversal::PartKernelFirst:
            w.element_round = ifm16 || sparse ? 10 : 5;
            w.ifm_ublock_depth = ifm16 && !sparse ? 8 : w.ifm_block_depth;
            w.stride_x = op.kernel().kernel.stride_x;
            w.stride_y = op.kernel().kernel.stride_y;
            break;
        case Traversal::DepthFirst:
            w.ifm_ublock_depth = w.ifm_block_depth;
            break;
        case Traversal::Depthwise:
            w.element_round = 10;
            w.ifm_ublock_depth = 1;
            w.stride_x = op.kernel().kernel.stride_x;
            w.stride_y = op.kernel().kernel.stride_y;
            break;
    }
    w.ifm_step = w.traversal == Traversal::Depthwise ? 1 : sparse ? 16 : 8;
    w.sub_kernel_width = 8 / op.kernel().kernel.dilation_x;
    w.sub_kernel_height = 8 / op.kernel().kernel.dilation_y;
    w.depthwise_padding = ifm16 ? config.depthwise_weight_padding_16bit : config.depthwise_weight_padding_8bit;
    return w;
}

void for_each_u85_weight_position(const U85WeightOrder& w, int stream,
                                  const std::function<void(int, int, int, int)>& visit) {
    const bool depthwise = w.traversal == U85WeightOrder::Traversal::Depthwise;
    auto padding = [&](int count) {
        for (int n = 0; n < count; ++n) visit(-1, 0, 0, 0);
    };
    // IFM blocks go up for one OFM block and back down for the next.
    int ifm_block = 0;
    int ifm_increment = -w.ifm_block_depth;
    for (int ofm_block = 0; ofm_block < w.ofm_depth; ofm_block += w.ofm_block_depth) {
        ifm_increment = -ifm_increment;
        const int ofm_count = std::min(w.ofm_block_depth, w.ofm_depth - ofm_block);
        for (int ifm = ifm_block; ifm < (depthwise ? 1 : w.ifm_depth) && ifm >= 0; ifm += ifm_increment) {
            ifm_block = ifm;
            const int ifm_count = depthwise ? 1 : std::min(w.ifm_block_depth, w.ifm_depth - ifm);
            for (int sub_x = 0; sub_x < w.kernel_width; sub_x += w.sub_kernel_width) {
                const int sub_width = std::min(w.kernel_width - sub_x, w.sub_kernel_width);
                for (int sub_y = 0; sub_y < w.kernel_height; sub_y += w.sub_kernel_height) {
                    const int sub_height = std::min(w.kernel_height - sub_y, w.sub_kernel_height);
                    for (int ifm_outer = 0; ifm_outer < ifm_count; ifm_outer += w.ifm_ublock_depth) {
                        for (int ofm_outer = 0; ofm_outer < ofm_count; ofm_outer += w.ofm_ublock_depth) {
                            int elements_left = round_up(sub_width * sub_height, w.element_round);
                            for (int phase_y = 0; phase_y < w.stride_y; ++phase_y) {
                                const int rows = (sub_height + w.stride_y - 1 - phase_y) / w.stride_y;
                                for (int phase_x = 0; phase_x < w.stride_x; ++phase_x) {
                                    const int columns = (sub_width + w.stride_x - 1 - phase_x) / w.stride_x;
                                    for (int ky = 0; ky < rows; ++ky) {
                                        for (int k = 0; k < columns; ++k) {
                                            const int kx = ky % 2 == 0 ? k : columns - 1 - k;  // boustrophedon
                                            --elements_left;
                                            const int x = sub_x + phase_x + kx * w.stride_x;
                                            const int y = sub_y + phase_y + ky * w.stride_y;
                                            for (int ifm_inner = 0; ifm_inner < w.ifm_ublock_depth;
                                                 ifm_inner += w.ifm_step) {
                                                for (int group = stream * kInterleaveDepth; group < w.ofm_ublock_depth;
                                                     group += kInterleaveDepth * w.streams) {
                                                    for (int oz = 0; oz < kInterleaveDepth; ++oz) {
                                                        for (int iz = 0; iz < w.ifm_step; ++iz) {
                                                            const int i = ifm + ifm_outer + ifm_inner + iz;
                                                            const int o = ofm_block + ofm_outer + group + oz;
                                                            const bool real = i < w.ifm_depth && o < w.ofm_depth;
                                                            visit(real ? o : -1, y, x, real ? i : 0);
                                                        }
                                                    }
                                                }
                                            }
                                            if (depthwise && elements_left % w.element_round == 0)
                                                padding(w.depthwise_padding * w.ofm_ublock_depth / w.streams);
                                        }
                                    }
                                }
                            }
                            if (elements_left > 0) {
                                padding((elements_left + (depthwise ? w.depthwise_padding : 0)) * w.ifm_ublock_depth *
                                        w.ofm_ublock_depth / w.streams);
                            }
                        }
                    }
                }
            }
        }
    }
}

uint64_t u85_stream_weight_count(const U85WeightOrder& w, int stream) {
    // Channels of this decoder: groups of 4 in turn within each micro-block.
    uint64_t channels = 0;
    for (int o = 0; o < w.ofm_depth; ++o)
        if ((o % w.ofm_ublock_depth) / kInterleaveDepth % w.streams == stream) ++channels;
    return channels * static_cast<uint64_t>(w.kernel_height) * w.kernel_width * w.ifm_depth;
}

int u85_fast_interleave_block(const U85WeightOrder& w) {
    return w.ofm_ublock_depth * w.ifm_ublock_depth * w.element_round / w.streams;
}

std::vector<int16_t> decode_fast_weights(std::span<const uint8_t> stream, uint64_t count, const std::string& source,
                                         uint64_t base_offset) {
    constexpr size_t kHeaderBytes = 32;
    auto bit = [&](uint64_t position) { return (stream[position / 8] >> (position % 8)) & 1; };
    auto field = [&](uint64_t position, int bits) {
        uint32_t v = 0;
        for (int b = 0; b < bits; ++b) v |= static_cast<uint32_t>(bit(position + b)) << b;
        return v;
    };
    if (stream.size() < kHeaderBytes) {
        throw Error({source, base_offset, "fast weight header"}, "weight stream ends inside the 256-bit header");
    }
    const bool raw = bit(0);
    const bool lut2 = bit(1);
    const int zero_adjust = static_cast<int8_t>(field(104, 8));
    int lut[16];
    for (int e = 0; e < 16; ++e) {
        const uint32_t folded = field(112 + 9 * e, 9);
        lut[e] = folded & 1 ? -static_cast<int>(folded >> 1) : static_cast<int>(folded >> 1);
    }
    const int bits = raw ? 8 : lut2 ? 2 : 4;
    const uint64_t payload_bits = (stream.size() - kHeaderBytes) * 8;
    if (count > payload_bits / bits) {
        throw Error({source, base_offset + stream.size(), "fast weight stream"},
                    fmt::format("stream holds {} {}-bit weights, the op needs {}", payload_bits / bits, bits, count));
    }
    std::vector<int16_t> values(count);
    for (uint64_t n = 0; n < count; ++n) {
        const uint32_t v = field(kHeaderBytes * 8 + n * bits, bits);
        values[n] = static_cast<int16_t>(raw ? static_cast<int8_t>(v) - zero_adjust : lut[v]);
    }
    return values;
}

void decode_u85_scale_record(const uint8_t* r, bool acc48, int64_t& bias, uint32_t& scale, int32_t& shift) {
    uint64_t b = 0;
    const int bias_bytes = acc48 ? 6 : 4;
    for (int i = 0; i < bias_bytes; ++i) b |= uint64_t{r[i]} << (8 * i);
    bias = static_cast<int64_t>(b << (64 - 8 * bias_bytes)) >> (64 - 8 * bias_bytes);
    scale = acc48 ? (uint32_t{r[6]} | uint32_t{r[7] & 0x7Fu} << 8)
                  : (uint32_t{r[4]} | uint32_t{r[5]} << 8 | uint32_t{r[6]} << 16 | uint32_t{r[7] & 0x7Fu} << 24);
    shift = r[8] & 0x3F;
}

}  // namespace ethosu
