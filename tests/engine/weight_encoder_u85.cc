#include "tests/engine/weight_encoder_u85.h"

#include <algorithm>
#include <cstdlib>

#include "tests/engine/weight_encoder.h"

namespace ethosu::test_support {
namespace {

using Traversal = U85OrderSpec::Traversal;
constexpr int kGroup = 4;  // OFM channels a decoder takes before the next decoder's turn

int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }

struct Limits {
    int ifm_ublock, ifm_step, element_round, depthwise_padding, stride_x, stride_y;
};

Limits limits_of(const U85OrderSpec& s) {
    const bool ifm16 = s.ifm_bits == 16;
    Limits l{};
    l.ifm_step = s.traversal == Traversal::Depthwise ? 1 : s.sparse ? 16 : 8;
    l.depthwise_padding = !ifm16 && s.macs <= 256 ? 0 : s.macs <= 512 ? 2 : 6;
    l.stride_x = s.stride_x;
    l.stride_y = s.stride_y;
    switch (s.traversal) {
        case Traversal::DepthFirst:
            l.ifm_ublock = s.ifm_block_depth;
            l.element_round = 1;
            l.stride_x = l.stride_y = 1;  // depth-first ignores the stride
            break;
        case Traversal::PartKernelFirst:
            l.ifm_ublock = ifm16 && !s.sparse ? 8 : s.ifm_block_depth;
            l.element_round = ifm16 || s.sparse ? 10 : 5;
            break;
        case Traversal::Depthwise:
            l.ifm_ublock = 1;
            l.element_round = 10;
            break;
    }
    return l;
}

}  // namespace

std::vector<std::array<int, 4>> u85_vela_order(const U85OrderSpec& s, int decoder) {
    const Limits l = limits_of(s);
    const bool depthwise = s.traversal == Traversal::Depthwise;
    const int sub_w = 8 / s.dilation_x, sub_h = 8 / s.dilation_y;
    std::vector<std::array<int, 4>> out;
    auto pad = [&](int count) { out.insert(out.end(), static_cast<size_t>(count), {-1, 0, 0, 0}); };

    std::vector<int> ifm_blocks;
    for (int i = 0; i < (depthwise ? 1 : s.ifm_depth); i += s.ifm_block_depth) ifm_blocks.push_back(i);
    int ofm_block_index = 0;
    for (int ofm_block = 0; ofm_block < s.ofm_depth; ofm_block += s.ofm_block_depth, ++ofm_block_index) {
        const int ofm_count = std::min(s.ofm_block_depth, s.ofm_depth - ofm_block);
        // Odd OFM blocks walk the IFM blocks back down.
        std::vector<int> order = ifm_blocks;
        if (ofm_block_index % 2 == 1) std::reverse(order.begin(), order.end());
        for (const int ifm_block : order) {
            const int ifm_count = depthwise ? 1 : std::min(s.ifm_block_depth, s.ifm_depth - ifm_block);
            for (int x0 = 0; x0 < s.kernel_w; x0 += sub_w) {
                const int width = std::min(sub_w, s.kernel_w - x0);
                for (int y0 = 0; y0 < s.kernel_h; y0 += sub_h) {
                    const int height = std::min(sub_h, s.kernel_h - y0);
                    for (int ifm_outer = 0; ifm_outer < ifm_count; ifm_outer += l.ifm_ublock) {
                        for (int ofm_outer = 0; ofm_outer < ofm_count; ofm_outer += s.ofm_ublock_depth) {
                            int left = round_up(width * height, l.element_round);
                            for (int py = 0; py < l.stride_y; ++py) {
                                const int rows = (height - py + l.stride_y - 1) / l.stride_y;
                                for (int px = 0; px < l.stride_x; ++px) {
                                    const int columns = (width - px + l.stride_x - 1) / l.stride_x;
                                    for (int row = 0; row < rows; ++row) {
                                        for (int c = 0; c < columns; ++c) {
                                            const int column = row % 2 ? columns - 1 - c : c;
                                            const int y = y0 + py + row * l.stride_y;
                                            const int x = x0 + px + column * l.stride_x;
                                            --left;
                                            for (int ifm_inner = 0; ifm_inner < l.ifm_ublock; ifm_inner += l.ifm_step) {
                                                for (int group = decoder * kGroup; group < s.ofm_ublock_depth;
                                                     group += kGroup * s.decoders) {
                                                    for (int oz = 0; oz < kGroup; ++oz) {
                                                        for (int iz = 0; iz < l.ifm_step; ++iz) {
                                                            const int o = ofm_block + ofm_outer + group + oz;
                                                            const int i = ifm_block + ifm_outer + ifm_inner + iz;
                                                            if (o < s.ofm_depth && i < s.ifm_depth) out.push_back({o, y, x, i});
                                                            else pad(1);
                                                        }
                                                    }
                                                }
                                            }
                                            if (depthwise && left % l.element_round == 0)
                                                pad(l.depthwise_padding * s.ofm_ublock_depth / s.decoders);
                                        }
                                    }
                                }
                            }
                            if (left > 0) {
                                pad((left + (depthwise ? l.depthwise_padding : 0)) * l.ifm_ublock *
                                    s.ofm_ublock_depth / s.decoders);
                            }
                        }
                    }
                }
            }
        }
    }
    return out;
}

int u85_fast_block(const U85OrderSpec& s) {
    const Limits l = limits_of(s);
    return s.ofm_ublock_depth * l.ifm_ublock * l.element_round / s.decoders;
}

std::vector<int16_t> interleave_fast(const std::vector<std::vector<int16_t>>& per_decoder, int block) {
    std::vector<int16_t> out;
    std::vector<size_t> next(per_decoder.size(), 0);
    for (bool more = true; more;) {
        more = false;
        for (size_t d = 0; d < per_decoder.size(); ++d) {
            const size_t n = std::min(static_cast<size_t>(block), per_decoder[d].size() - next[d]);
            out.insert(out.end(), per_decoder[d].begin() + static_cast<ptrdiff_t>(next[d]),
                       per_decoder[d].begin() + static_cast<ptrdiff_t>(next[d] + n));
            next[d] += n;
            more = more || next[d] < per_decoder[d].size();
        }
    }
    return out;
}

std::vector<uint8_t> encode_fast(const std::vector<int16_t>& values, bool force_raw) {
    std::vector<int> lut;  // distinct values in order of first use
    for (const int16_t v : values)
        if (std::find(lut.begin(), lut.end(), v) == lut.end()) lut.push_back(v);
    const bool raw = force_raw || lut.size() > 16;
    const bool lut2 = !raw && lut.size() <= 4;
    int zero_adjust = 0;
    if (raw) {
        const int lo = *std::min_element(values.begin(), values.end());
        const int hi = *std::max_element(values.begin(), values.end());
        if (hi - lo >= 256) std::abort();  // not encodable; the tests never ask
        if (lo < -128) zero_adjust = -128 - lo;
        else if (hi > 127) zero_adjust = 127 - hi;
    }
    BitWriter w;
    w.put(raw, 1);
    w.put(lut2, 1);
    w.put(0, 102);
    w.put(static_cast<uint8_t>(zero_adjust), 8);
    for (size_t e = 0; e < 16; ++e) w.put(raw || e >= lut.size() ? 0 : static_cast<uint64_t>(fold(lut[e])), 9);
    for (const int16_t v : values) {
        if (raw) {
            w.put(static_cast<uint8_t>(v + zero_adjust), 8);
        } else {
            const auto index = static_cast<uint64_t>(std::find(lut.begin(), lut.end(), v) - lut.begin());
            w.put(index, lut2 ? 2 : 4);
        }
    }
    std::vector<uint8_t> bytes = w.bytes();
    bytes.resize(round_up(static_cast<int>(bytes.size()), 32), 0);
    return bytes;
}

std::array<uint8_t, 10> u85_scale_record(int64_t bias, uint32_t scale, int shift, bool acc48) {
    std::array<uint8_t, 10> r{};
    const int bias_bytes = acc48 ? 6 : 4;
    for (int b = 0; b < bias_bytes; ++b) r[static_cast<size_t>(b)] = static_cast<uint8_t>(bias >> (8 * b));
    const uint32_t s = acc48 ? scale & 0x7FFF : scale & 0x7FFF'FFFF;
    for (int b = bias_bytes; b < 8; ++b) r[static_cast<size_t>(b)] = static_cast<uint8_t>(s >> (8 * (b - bias_bytes)));
    r[8] = static_cast<uint8_t>(shift & 0x3F);
    return r;
}

}  // namespace ethosu::test_support
