#include "emulator/engine/weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>

#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// Bitstream constants of the U55/U65 weight codec (Vela mlw_common.h).
constexpr int kZeroRunDisabled = 6;  // ZDIV: no zero runs in this slice
constexpr int kEndOfStream = 7;      // ZDIV: end of stream, then byte alignment
constexpr int kUncompressed = 7;     // WDIV: remainders only

// LSB-first bit reader; reading past the end is an Error with the byte offset.
class BitReader {
public:
    BitReader(std::span<const uint8_t> bytes, const std::string& source, uint64_t base)
        : bytes_(bytes), source_(source), base_(base) {}

    uint32_t get(int bits, const char* field) {
        if (bits == 0) return 0;
        if (pos_ + static_cast<uint64_t>(bits) > bytes_.size() * 8) {
            throw Error({source_, base_ + pos_ / 8, field}, "weight stream ends in the middle of a slice");
        }
        uint32_t value = 0;
        for (int i = 0; i < bits; ++i, ++pos_) value |= static_cast<uint32_t>((bytes_[pos_ >> 3] >> (pos_ & 7)) & 1) << i;
        return value;
    }
    void align_to_byte() { pos_ = (pos_ + 7) & ~uint64_t{7}; }
    bool at_end() const { return pos_ >= bytes_.size() * 8; }
    uint64_t byte_offset() const { return base_ + pos_ / 8; }

private:
    std::span<const uint8_t> bytes_;
    const std::string& source_;
    uint64_t base_;
    uint64_t pos_ = 0;
};

// Golomb-Rice quotients come as unary words; remainders follow one chunk later.
struct UnaryChunk {
    std::array<int, 12> quotients{};
    int count = 0;
};

}  // namespace

std::vector<int16_t> decode_weight_bitstream(std::span<const uint8_t> stream, const std::string& source,
                                             uint64_t base_offset) {
    BitReader bits(stream, source, base_offset);
    std::vector<int16_t> out;
    std::array<int16_t, 32> palette{};
    int palette_size = 0, palette_bits = 0, direct_offset = 0;
    bool need_palette = true;
    bool previous_zero_runs = false;

    while (!bits.at_end()) {
        int z_div = static_cast<int>(bits.get(3, "ZDIV"));
        if (z_div == kEndOfStream) {
            bits.align_to_byte();
            need_palette = true;
            continue;
        }
        const uint64_t slice_offset = bits.byte_offset();
        if (z_div > 3 && z_div != kZeroRunDisabled) {
            throw Error({source, slice_offset, "ZDIV"}, fmt::format("invalid zero-run divisor {}", z_div));
        }
        const bool zero_runs = z_div != kZeroRunDisabled;
        const int count = static_cast<int>(bits.get(15, "SLICELEN")) + 1;
        int w_div = static_cast<int>(bits.get(3, "WDIV"));
        const bool truncated = bits.get(1, "WTRUNC") != 0;
        const bool new_palette = bits.get(1, "NEWPAL") != 0;
        if (need_palette && !new_palette) {
            throw Error({source, slice_offset, "NEWPAL"}, "the first slice of a stream must define its palette");
        }
        if (!new_palette && zero_runs != previous_zero_runs) {
            throw Error({source, slice_offset, "ZDIV"}, "zero-run mode changes without a new palette");
        }
        need_palette = false;
        previous_zero_runs = zero_runs;
        if (new_palette) {
            direct_offset = static_cast<int>(bits.get(5, "DIROFS"));
            palette_size = static_cast<int>(bits.get(5, "PALSIZE"));
            if (palette_size > 0) ++palette_size;
            palette_bits = static_cast<int>(bits.get(3, "PALBITS")) + 2;
            for (int i = 0; i < palette_size; ++i) palette[i] = static_cast<int16_t>(bits.get(palette_bits, "PALETTE"));
        }
        const bool uncompressed = w_div == kUncompressed;
        if (uncompressed) {
            // Only remainders, as wide as a palette index (or PALBITS without a palette).
            w_div = palette_size > 0 ? std::bit_width(static_cast<unsigned>(palette_size - 1)) : palette_bits;
        } else if (w_div > 5) {
            throw Error({source, slice_offset, "WDIV"}, fmt::format("invalid weight divisor {}", w_div));
        }

        // Zero runs: with a new palette, a leading run before the first weight.
        const int z_count = zero_runs ? count + (new_palette ? 1 : 0) : 0;
        std::vector<int> weights(static_cast<size_t>(count), 0), zeros(static_cast<size_t>(z_count), 0);
        int w_pos = 0, z_pos = 0, w_done = 0, z_done = 0;
        int w_carry = 0, z_carry = 0;
        const int z_unary_bits = z_div < 3 ? 12 : 8;
        UnaryChunk w_prev, z_prev;
        bool w_prev_enabled = false, z_prev_enabled = false;
        do {
            // Flow control keeps the weight and zero-run streams within 8 symbols of each other.
            const int balance = zero_runs ? w_pos - z_pos : 0;
            const bool w_enabled = (balance < 8 || !zero_runs) && w_pos < count;
            const bool z_enabled = balance >= 0 && zero_runs && z_pos < z_count;
            UnaryChunk w_now, z_now;
            const uint32_t w_unary0 = w_enabled && !uncompressed ? bits.get(12, "WUNARY0") : 0;
            if (z_enabled) {
                const uint32_t unary = bits.get(z_unary_bits, "ZUNARY");
                int run = z_carry;
                for (int i = 0; i < z_unary_bits; ++i) {
                    if (unary & (1u << i)) {
                        ++run;
                    } else {
                        z_now.quotients[z_now.count++] = run;
                        run = 0;
                    }
                }
                z_carry = run;
                z_pos += z_now.count;
            }
            if (w_enabled) {
                const int symbols = uncompressed && w_div > 5 ? 8 : 12;
                int unary1_bits = 0;
                for (int i = 0; i < symbols; ++i) unary1_bits += (w_unary0 >> i) & 1;
                uint32_t w_unary1 = bits.get(unary1_bits, "WUNARY1");
                int run = w_carry;
                for (int i = 0; i < symbols; ++i) {
                    int code = 0;
                    if (w_unary0 & (1u << i)) {
                        ++code;
                        if (w_unary1 & 1) ++code;
                        w_unary1 >>= 1;
                    }
                    run += code;
                    if (code < 2 || truncated) {
                        w_now.quotients[w_now.count++] = run;
                        run = 0;
                    }
                }
                w_carry = run;
                w_pos += w_now.count;
            }
            if (w_prev_enabled) {
                for (int i = 0; i < w_prev.count && w_done < count; ++i, ++w_done)
                    weights[w_done] = (w_prev.quotients[i] << w_div) + static_cast<int>(bits.get(w_div, "WREMAIN"));
            }
            if (z_prev_enabled) {
                for (int i = 0; i < z_prev.count && z_done < z_count; ++i, ++z_done)
                    zeros[z_done] = (z_prev.quotients[i] << z_div) + static_cast<int>(bits.get(z_div, "ZREMAIN"));
            }
            w_prev = w_now;
            z_prev = z_now;
            w_prev_enabled = w_enabled;
            z_prev_enabled = z_enabled;
        } while (w_prev_enabled || z_prev_enabled);

        auto emit_zeros = [&](int n) {
            if (n < 0 || out.size() + static_cast<size_t>(n) > stream.size() * 8 * 64 + 65536) {
                throw Error({source, slice_offset, "ZREMAIN"}, "zero run larger than any real weight tensor");
            }
            out.insert(out.end(), static_cast<size_t>(n), int16_t{0});
        };
        if (zero_runs && new_palette) emit_zeros(zeros[0]);
        for (int i = 0; i < count; ++i) {
            const int index = weights[i];
            const int value = index < palette_size ? palette[index] : index - palette_size + direct_offset;
            if (value >= 512) throw Error({source, slice_offset, "WREMAIN"}, "weight symbol beyond 9 bits");
            const int magnitude = value >> 1;
            out.push_back(static_cast<int16_t>(value & 1 ? -magnitude : magnitude));  // sign folded in bit 0
            if (zero_runs) emit_zeros(zeros[i + (new_palette ? 1 : 0)]);
        }
    }
    return out;
}

namespace {

// The OFM/IFM micro-block depths that set the weight traversal (Vela's architecture tables).
struct MicroBlocks {
    int ofm_depth;
    int ifm_depth;
};
MicroBlocks micro_blocks(const NpuConfig& config) {
    if (config.generation != Generation::U85 && config.macs == 32) return {4, 8};
    return {8, 8};
}

enum class Traversal { DepthFirst, PartKernel, Depthwise };

// Replays the order in which Vela's U55/U65 encoder emits weights (regor
// EthosUWeightOrdering) and calls place(o, y, x, i) for each position, or place(-1, ...)
// for the zero padding the traversal inserts.
template <typename Place>
void traverse_u55(int ofm_depth, int kernel_h, int kernel_w, int ifm_depth, int ofm_block_depth, int ifm_bits,
                  int dilation_x, int dilation_y, Traversal traversal, MicroBlocks ublock, Place&& place) {
    const bool depthwise = traversal == Traversal::Depthwise;
    const bool part_kernel = traversal == Traversal::PartKernel;
    const int ifm_block_depth = part_kernel || ifm_bits == 16 ? 16 : 32;
    const int decomp_x = 8 / dilation_x, decomp_y = 8 / dilation_y;
    const int element_round = depthwise ? 4 : part_kernel ? (ifm_bits == 16 ? 2 : 4) : 1;
    for (int ofm_block = 0; ofm_block < ofm_depth; ofm_block += ofm_block_depth) {
        const int block_depth = std::min(ofm_block_depth, ofm_depth - ofm_block);
        for (int ifm_block = 0; ifm_block < (depthwise ? 1 : ifm_depth); ifm_block += ifm_block_depth) {
            const int ifm_block_len = depthwise ? ublock.ifm_depth
                                    : part_kernel ? std::min(ifm_block_depth, ifm_depth - ifm_block)
                                                  : ifm_block_depth;
            for (int sub_y = 0; sub_y < kernel_h; sub_y += decomp_y) {
                const int sub_h = std::min(kernel_h - sub_y, decomp_y);
                for (int sub_x = 0; sub_x < kernel_w; sub_x += decomp_x) {
                    const int sub_w = std::min(kernel_w - sub_x, decomp_x);
                    const int elements = (sub_w * sub_h + element_round - 1) / element_round * element_round;
                    const int outer_len = part_kernel ? ifm_block_len : 1;
                    const int inner_len = part_kernel ? 1 : ifm_block_len;
                    for (int ifm_outer = 0; ifm_outer < outer_len; ifm_outer += ublock.ifm_depth)
                        for (int ofm_ublock = 0; ofm_ublock < block_depth; ofm_ublock += ublock.ofm_depth)
                            for (int element = 0; element < elements; ++element) {
                                const int kx = element % sub_w, ky = element / sub_w;
                                for (int ifm_inner = 0; ifm_inner < inner_len; ifm_inner += ublock.ifm_depth)
                                    for (int oz = 0; oz < ublock.ofm_depth; ++oz)
                                        for (int iz = 0; iz < (depthwise ? 1 : ublock.ifm_depth); ++iz) {
                                            const int i = ifm_block + ifm_outer + ifm_inner + iz;
                                            const int o = ofm_block + ofm_ublock + oz;
                                            const bool real = i < (depthwise ? 1 : ifm_depth) && o < ofm_depth &&
                                                              ky < sub_h;
                                            if (real) place(o, sub_y + ky, sub_x + kx, i);
                                            else place(-1, 0, 0, 0);
                                        }
                            }
                }
            }
        }
    }
}

int64_t sign_extend_40(uint64_t v) { return static_cast<int64_t>(v << 24) >> 24; }

}  // namespace

OpWeights decode_op_weights(const DecodedOp& op, const NpuConfig& config, const StreamFetch& fetch,
                            const std::string& source) {
    const ErrorLocation where{source, op.offset, std::string(op_kind_name(op.kind))};
    if (config.generation == Generation::U85) throw Error(where, "U85 weight streams are not supported yet");
    if (op.weights.empty()) throw Error(where, "the op has no weight stream");
    const bool depthwise = op.kind == OpKind::Depthwise;
    const int streams = static_cast<int>(op.weights.size());

    OpWeights w;
    w.ofm_depth = op.ofm.depth;
    // Vela encodes the undilated kernel; the registers hold the dilated size.
    w.kernel_height = (op.kernel.height - 1) / op.kernel.dilation_y + 1;
    w.kernel_width = (op.kernel.width - 1) / op.kernel.dilation_x + 1;
    w.ifm_depth = depthwise ? 1 : op.ifm.depth;
    const size_t total = static_cast<size_t>(w.ofm_depth) * w.kernel_height * w.kernel_width * w.ifm_depth;
    w.values.assign(total, 0);
    const Traversal traversal = depthwise ? Traversal::Depthwise
                              : op.kernel.part_kernel_first ? Traversal::PartKernel
                                                            : Traversal::DepthFirst;

    // Each core's stream holds every streams-th OFM channel, starting at its index.
    for (int s = 0; s < streams; ++s) {
        const Stream& stream = op.weights[static_cast<size_t>(s)];
        const auto values = decode_weight_bitstream(fetch(stream), source, stream.base);
        const int channels = (w.ofm_depth - s + streams - 1) / streams;
        const int block_depth = (op.block.ofm_depth + streams - 1 - s) / streams;
        size_t next = 0;
        traverse_u55(channels, w.kernel_height, w.kernel_width, w.ifm_depth, block_depth, op.ifm.precision.bits,
                     op.kernel.dilation_x, op.kernel.dilation_y, traversal, micro_blocks(config),
                     [&](int o, int y, int x, int i) {
                         if (next >= values.size()) {
                             throw Error({source, op.offset, "weights"},
                                         fmt::format("weight stream at 0x{:x} ends after {} weights; the op needs more",
                                                     stream.base, values.size()));
                         }
                         const int16_t v = values[next++];
                         if (o >= 0) {
                             const int oc = o * streams + s;
                             w.values[((static_cast<size_t>(oc) * w.kernel_height + y) * w.kernel_width + x) *
                                          w.ifm_depth + i] = v;
                         }
                     });
    }

    // Scale/bias records: 10 bytes per channel, channels interleaved over the cores' streams.
    constexpr size_t kRecord = 10;
    w.bias.assign(static_cast<size_t>(w.ofm_depth), 0);
    w.scale.assign(static_cast<size_t>(w.ofm_depth), 1);
    w.shift.assign(static_cast<size_t>(w.ofm_depth), 0);
    const int scale_streams = static_cast<int>(op.scales.size());
    for (int s = 0; s < scale_streams; ++s) {
        const Stream& stream = op.scales[static_cast<size_t>(s)];
        const auto bytes = fetch(stream);
        const int channels = (w.ofm_depth - s + scale_streams - 1) / scale_streams;
        if (bytes.size() < static_cast<size_t>(channels) * kRecord) {
            throw Error({source, op.offset, "scales"},
                        fmt::format("scale stream at 0x{:x} holds {} bytes; {} channels need {}", stream.base,
                                    bytes.size(), channels, channels * kRecord));
        }
        for (int c = 0; c < channels; ++c) {
            const uint8_t* r = bytes.data() + static_cast<size_t>(c) * kRecord;
            uint64_t bias = 0;
            for (int b = 0; b < 5; ++b) bias |= uint64_t{r[b]} << (8 * b);
            const size_t oc = static_cast<size_t>(c * scale_streams + s);
            w.bias[oc] = sign_extend_40(bias);
            w.scale[oc] = uint32_t{r[5]} | uint32_t{r[6]} << 8 | uint32_t{r[7]} << 16 | uint32_t{r[8]} << 24;
            w.shift[oc] = r[9] & 0x3F;
        }
    }
    return w;
}

}  // namespace ethosu
