// A kernel op's weight and scale/bias streams decoded into OHWI weights and per-channel
// bias/scale/shift. The weight order undone here is Vela 5.1's U55/U65 encoder
// (regor/architecture/ethosu55/ethos_u55_weight_encoder.cpp, EthosUWeightOrdering); the stream
// layout per core is regor/compiler/scheduler.cpp (TryEncodeWeightAndScaleTensor).

#include "emulator/engine/weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <limits>

#include "emulator/engine/weights_u85.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

enum class Traversal { DepthFirst, PartKernelFirst, Depthwise };

struct MicroBlockDepths {
    int ofm;
    int ifm;
};

// The configuration's one OFM micro-block; the IFM micro-block is 8 deep on every U55/U65.
MicroBlockDepths micro_block_depths(const NpuConfig& config) { return {config.micro_blocks[0].depth, 8}; }

// The loop limits of the encoder's traversal for one core's stream.
struct WeightOrder {
    Traversal traversal = Traversal::DepthFirst;
    int ofm_depth = 0;  // channels in this stream
    int kernel_height = 0, kernel_width = 0;
    int ifm_depth = 0;        // 1 for depthwise
    int ofm_block_depth = 0;  // this stream's share of OFM_BLK_DEPTH
    int ifm_block_depth = 0;
    MicroBlockDepths micro{};
    // The hardware's 8x8 sub-kernels: fewer taps when dilated.
    int sub_kernel_width = 8, sub_kernel_height = 8;
    // Kernel elements per sub-kernel are padded to a multiple of this.
    int element_round = 1;
};

// A sub-kernel of at most 8x8 (dilated) taps inside one OFM block x IFM block.
struct SubKernelPass {
    int ofm_base, ofm_count;
    int ifm_base, ifm_count;
    int x0, y0, width, height;
};

// The innermost loops for one sub-kernel: part-kernel-first walks IFM micro-blocks outside the
// kernel elements, depth-first inside. The IFM channels of one OFM channel in a micro-block are
// consecutive in the stream, so they are visited as one run: visit(o, y, x, i, real, count) gets
// `count` stream positions for IFM channels i, i + 1, ... of OFM channel o, of which the first
// `real` are weights and the rest padding (real 0: o is padding too).
template <typename Visit>
void visit_sub_kernel(const WeightOrder& w, const SubKernelPass& p, Visit& visit) {
    const bool part_kernel = w.traversal == Traversal::PartKernelFirst;
    const bool depthwise = w.traversal == Traversal::Depthwise;
    const int elements = (p.width * p.height + w.element_round - 1) / w.element_round * w.element_round;
    const int ifm_outer_count = part_kernel ? p.ifm_count : 1;
    const int ifm_inner_count = part_kernel ? 1 : p.ifm_count;
    const int ifm_per_micro = depthwise ? 1 : w.micro.ifm;
    for (int ifm_outer = 0; ifm_outer < ifm_outer_count; ifm_outer += w.micro.ifm) {
        for (int ofm_micro = 0; ofm_micro < p.ofm_count; ofm_micro += w.micro.ofm) {
            for (int element = 0; element < elements; ++element) {
                const int kx = element % p.width, ky = element / p.width;
                for (int ifm_inner = 0; ifm_inner < ifm_inner_count; ifm_inner += w.micro.ifm) {
                    const int i = p.ifm_base + ifm_outer + ifm_inner;
                    const int real_ifm = std::clamp(w.ifm_depth - i, 0, ifm_per_micro);
                    for (int oz = 0; oz < w.micro.ofm; ++oz) {
                        const int o = p.ofm_base + ofm_micro + oz;
                        const int real = o < w.ofm_depth && ky < p.height ? real_ifm : 0;
                        visit(o, p.y0 + ky, p.x0 + kx, i, real, ifm_per_micro);
                    }
                }
            }
        }
    }
}

// Every weight position of one stream in encoding order: OFM blocks, IFM blocks, sub-kernels
// (rows of sub-kernels outermost), then visit_sub_kernel.
template <typename Visit>
void for_each_weight_position(const WeightOrder& w, Visit&& visit, int first_ofm = 0, int end_ofm = INT_MAX) {
    const bool depthwise = w.traversal == Traversal::Depthwise;
    const bool part_kernel = w.traversal == Traversal::PartKernelFirst;
    // OFM blocks are the outermost loop: the stream holds one block's weights after another.
    for (int ofm = first_ofm; ofm < std::min(w.ofm_depth, end_ofm); ofm += w.ofm_block_depth) {
        for (int ifm = 0; ifm < (depthwise ? 1 : w.ifm_depth); ifm += w.ifm_block_depth) {
            // Depth-first always walks whole IFM blocks; the channels past the IFM are zeros.
            const int ifm_count = depthwise     ? w.micro.ifm
                                  : part_kernel ? std::min(w.ifm_block_depth, w.ifm_depth - ifm)
                                                : w.ifm_block_depth;
            for (int y0 = 0; y0 < w.kernel_height; y0 += w.sub_kernel_height) {
                for (int x0 = 0; x0 < w.kernel_width; x0 += w.sub_kernel_width) {
                    const SubKernelPass pass{ofm,
                                             std::min(w.ofm_block_depth, w.ofm_depth - ofm),
                                             ifm,
                                             ifm_count,
                                             x0,
                                             y0,
                                             std::min(w.sub_kernel_width, w.kernel_width - x0),
                                             std::min(w.sub_kernel_height, w.kernel_height - y0)};
                    visit_sub_kernel(w, pass, visit);
                }
            }
        }
    }
}

Traversal traversal_of(const DecodedOp& op) {
    if (op.kind == OpKind::Depthwise) return Traversal::Depthwise;
    return op.kernel().kernel.part_kernel_first ? Traversal::PartKernelFirst : Traversal::DepthFirst;
}

// Channels of stream s out of n: the cores take OFM channels in turn (s, s + n, ...).
int channels_of_stream(int channels, int stream, int streams) { return (channels + streams - 1 - stream) / streams; }

WeightOrder u55_weight_order(const DecodedOp& op, const NpuConfig& config, const OpWeights& shape, int stream,
                             int streams) {
    WeightOrder w;
    w.traversal = traversal_of(op);
    w.ofm_depth = channels_of_stream(shape.ofm_depth, stream, streams);
    w.kernel_height = shape.kernel_height;
    w.kernel_width = shape.kernel_width;
    w.ifm_depth = shape.ifm_depth;
    w.ofm_block_depth = channels_of_stream(op.kernel().block.ofm_depth, stream, streams);
    const bool ifm16 = op.kernel().ifm.precision.bits == 16;
    w.ifm_block_depth = w.traversal == Traversal::PartKernelFirst || ifm16 ? 16 : 32;
    w.micro = micro_block_depths(config);
    w.sub_kernel_width = 8 / op.kernel().kernel.dilation_x;
    w.sub_kernel_height = 8 / op.kernel().kernel.dilation_y;
    if (w.traversal == Traversal::Depthwise) w.element_round = 4;
    if (w.traversal == Traversal::PartKernelFirst) w.element_round = ifm16 ? 2 : 4;
    return w;
}

void check_kernel_op(const DecodedOp& op, const NpuConfig& config, const LazyLocation& where) {
    if (op.kind != OpKind::Conv && op.kind != OpKind::Depthwise) throw Error(where, "the op has no weights to decode");
    if (op.kernel().weights.empty()) throw Error(where, "the op has no weight stream");
    // Every core needs an OFM block of at least one channel, or the traversal would not advance.
    if (config.traits().weight_encoding == WeightEncoding::PerCore && op.kernel().block.ofm_depth < static_cast<int>(op.kernel().weights.size())) {
        throw Error(where,
                    fmt::format("OFM block depth {} for {} weight streams", op.kernel().block.ofm_depth, op.kernel().weights.size()));
    }
    if (op.kernel().kernel.dilation_x < 1 || op.kernel().kernel.dilation_y < 1 || op.kernel().kernel.dilation_x > 8 || op.kernel().kernel.dilation_y > 8) {
        throw Error(where, "kernel dilation outside 1..8");
    }
    if (op.kernel().kernel.width < 1 || op.kernel().kernel.height < 1 || op.kernel().ofm.depth < 1 || op.kernel().ifm.depth < 1) {
        throw Error(where, "empty kernel, IFM or OFM");
    }
}

OpWeights weights_shape(const DecodedOp& op) {
    OpWeights w;
    w.ofm_depth = op.kernel().ofm.depth;
    // Vela encodes the kernel's taps; the registers hold their dilated extent.
    w.kernel_height = op.kernel().kernel.taps_height();
    w.kernel_width = op.kernel().kernel.taps_width();
    w.ifm_depth = op.kind == OpKind::Depthwise ? 1 : op.kernel().ifm.depth;
    return w;
}

// The OHWI element count of some OFM channels; saturates, as hostile registers can ask for 2^64.
uint64_t weight_count(uint64_t channels, const OpWeights& shape) {
    uint64_t n = channels;
    for (const int d : {shape.kernel_height, shape.kernel_width, shape.ifm_depth}) {
        const auto factor = static_cast<uint64_t>(d);
        n = n > std::numeric_limits<uint64_t>::max() / factor ? std::numeric_limits<uint64_t>::max() : n * factor;
    }
    return n;
}

// The register of a weight stream: WEIGHT_BASE, then WEIGHT1_BASE (U55/U65's second core, U85's
// second decoder), WEIGHT2_BASE and WEIGHT3_BASE (U85).
std::string weight_field(int stream) { return stream == 0 ? std::string("WEIGHT_BASE") : fmt::format("WEIGHT{}_BASE", stream); }

// A bitstream error, whose offset is an address in the weights' region, as an error of the op
// the stream fed (at its command offset), the address and the bitstream's field in the reason.
Error weight_stream_error(const DecodedOp& op, const std::string& source, int stream, const Error& e) {
    const Stream& where = op.kernel().weights[static_cast<size_t>(stream)];
    return Error({source, op.offset, weight_field(stream), OffsetKind::Command},
                 fmt::format("{} weight stream at 0x{:x}, byte 0x{:x}: {}: {}", op_kind_name(op.kind), where.base,
                             e.where().offset.value_or(where.base), e.where().field, e.reason()));
}

// Before the OHWI buffer is sized from the (possibly hostile) registers: a stream holds at most
// kMaxValuesPerByte values per byte, so it cannot serve more weights than that.
void check_stream_can_hold(const DecodedOp& op, const StreamFetch& fetch, const std::string& source, int stream,
                           const OpWeights& shape) {
    const int streams = static_cast<int>(op.kernel().weights.size());
    const uint64_t channels = static_cast<uint64_t>(channels_of_stream(shape.ofm_depth, stream, streams));
    if (channels == 0) return;  // a second core without channels gets WEIGHT1_LENGTH 0
    const Stream& where = op.kernel().weights[static_cast<size_t>(stream)];
    const uint64_t most = kMaxValuesPerByte * uint64_t{fetch(where).size()};
    const uint64_t owned = weight_count(channels, shape);
    if (owned > most) {
        throw Error({source, op.offset, weight_field(stream), OffsetKind::Command},
                    fmt::format("{} weight stream at 0x{:x} can hold at most {} weights; the op has {} for this core",
                                op_kind_name(op.kind), where.base, most, owned));
    }
}

// One stream's values, pulled as the traversal places them.
class StreamValues {
public:
    StreamValues(const DecodedOp& op, const StreamFetch& fetch, const std::string& source, int stream)
        : op_(op), source_(source), stream_(stream),
          reader_(fetch(op.kernel().weights[static_cast<size_t>(stream)]), source, op.kernel().weights[static_cast<size_t>(stream)].base) {}

    bool next(int16_t& value) {
        while (at_ == slice_.size()) {
            if (!pull()) return false;
        }
        value = slice_[at_++];
        ++taken_;
        return true;
    }
    // The next `count` values, the first `real` of them copied to `to`: a run within the slice at
    // once, one across slices value by value. False when the stream ends first.
    bool take(int16_t* to, int real, int count) {
        const auto n = static_cast<size_t>(count);
        if (slice_.size() - at_ >= n) {
            std::copy_n(slice_.data() + at_, real, to);
            at_ += n;
            taken_ += n;
            return true;
        }
        for (int k = 0; k < count; ++k) {
            int16_t v = 0;
            if (!next(v)) return false;
            if (k < real) to[k] = v;
        }
        return true;
    }
    uint64_t taken() const { return taken_; }
    uint64_t bytes_read() const { return reader_.bytes_read(); }
    // Decodes what is left, counting it.
    uint64_t count_rest() {
        uint64_t rest = slice_.size() - at_;
        while (pull()) rest += slice_.size();
        return rest;
    }

private:
    bool pull() {
        try {
            at_ = 0;
            return reader_.next_slice(slice_);
        } catch (const Error& e) {
            throw weight_stream_error(op_, source_, stream_, e);
        }
    }
    const DecodedOp& op_;
    const std::string& source_;
    int stream_;
    WeightBitstreamReader reader_;
    std::vector<int16_t> slice_;
    size_t at_ = 0;
    uint64_t taken_ = 0;
};

Error count_mismatch(const DecodedOp& op, const std::string& source, int stream, uint64_t held, const char* how) {
    return Error({source, op.offset, weight_field(stream), OffsetKind::Command},
                 fmt::format("{} weight stream at 0x{:x} holds {} weights, {} the op's traversal needs",
                             op_kind_name(op.kind), op.kernel().weights[static_cast<size_t>(stream)].base, held, how));
}

// Replays the encoder's traversal of core `stream` over the OFM channels [first, end) of its
// order, taking one value per position (decoded a slice at a time) into OHWI: a core's channel o
// is out's channel (o - first) * streams + stream.
void place_weights(const DecodedOp& op, const std::string& source, const WeightOrder& order, StreamValues& values,
                   int streams, int stream, int first, int end, OpWeights& out) {
    for_each_weight_position(
        order,
        [&](int o, int y, int x, int i, int real, int count) {
            int16_t* to = out.values.data();
            if (real > 0) {
                const size_t channel = static_cast<size_t>(o - first) * streams + stream;
                to += ((channel * out.kernel_height + y) * out.kernel_width + x) * out.ifm_depth + i;
            }
            if (!values.take(to, real, count)) throw count_mismatch(op, source, stream, values.taken(), "fewer than");
        },
        first, end);
}

// After the traversal: the stream must hold nothing more.
void expect_stream_spent(const DecodedOp& op, const std::string& source, int stream, StreamValues& values) {
    if (const uint64_t rest = values.count_rest())
        throw count_mismatch(op, source, stream, values.taken() + rest, "more than");
}

// One core's whole stream into OHWI.
void place_weight_stream(const DecodedOp& op, const NpuConfig& config, const StreamFetch& fetch,
                         const std::string& source, int stream, OpWeights& out) {
    const int streams = static_cast<int>(op.kernel().weights.size());
    const WeightOrder order = u55_weight_order(op, config, out, stream, streams);
    if (order.ofm_depth == 0) return;
    StreamValues values(op, fetch, source, stream);
    place_weights(op, source, order, values, streams, stream, 0, INT_MAX, out);
    expect_stream_spent(op, source, stream, values);
}

// U55/U65 scale/bias record, 10 bytes little-endian: bias int40, scale uint32, shift in the low 6
// bits of the last byte (ethos_u55_weight_encoder.cpp EncodeBias).
constexpr size_t kScaleRecordBytes = 10;

void decode_scale_record(const uint8_t* r, size_t channel, OpWeights& out) {
    uint64_t bias = 0;
    for (int b = 0; b < 5; ++b) bias |= uint64_t{r[b]} << (8 * b);
    out.bias[channel] = static_cast<int64_t>(bias << 24) >> 24;  // sign-extend 40 bits
    out.scale[channel] = uint32_t{r[5]} | uint32_t{r[6]} << 8 | uint32_t{r[7]} << 16 | uint32_t{r[8]} << 24;
    out.shift[channel] = r[9] & 0x3F;
}

void decode_scale_stream(const DecodedOp& op, const StreamFetch& fetch, const std::string& source, int stream,
                         OpWeights& out) {
    const int streams = static_cast<int>(op.kernel().scales.size());
    const int channels = channels_of_stream(out.ofm_depth, stream, streams);
    if (channels == 0) return;
    const Stream& where = op.kernel().scales[static_cast<size_t>(stream)];
    const auto bytes = fetch(where);
    if (bytes.size() < channels * kScaleRecordBytes) {
        throw Error({source, op.offset, stream == 0 ? "SCALE_LENGTH" : "SCALE1_LENGTH", OffsetKind::Command},
                    fmt::format("{} scale stream at 0x{:x} holds {} bytes; {} channels need {}", op_kind_name(op.kind),
                                where.base, bytes.size(), channels, channels * kScaleRecordBytes));
    }
    for (int c = 0; c < channels; ++c) {
        decode_scale_record(bytes.data() + c * kScaleRecordBytes, static_cast<size_t>(c) * streams + stream, out);
    }
}

// 2:4 sparse weights (Vela 5.1 ethos_u85_weight_encoder.cpp, SparsityTracker): the stream still
// holds every weight, but each aligned group of 4 IFM channels of one OFM channel and kernel tap
// has at most 2 non-zero weights, each within -127..127. The MAC array keeps only those 2, so a
// stream that breaks the pattern has no defined result.
void check_2_4_sparse(const OpWeights& w, const ErrorLocation& where) {
    for (int o = 0; o < w.ofm_depth; ++o) {
        for (int y = 0; y < w.kernel_height; ++y) {
            for (int x = 0; x < w.kernel_width; ++x) {
                for (int group = 0; group < w.ifm_depth; group += 4) {
                    int non_zero = 0;
                    for (int i = group; i < std::min(group + 4, w.ifm_depth); ++i) {
                        const int v = w.at(o, y, x, i);
                        if (v < -127 || v > 127) {
                            throw Error(where, fmt::format("sparse weight {} at OFM {}, kernel ({}, {}), IFM {} is "
                                                           "outside -127..127",
                                                           v, o, y, x, i));
                        }
                        non_zero += v != 0;
                    }
                    if (non_zero > 2) {
                        throw Error(where, fmt::format("{} non-zero weights in IFM channels {}..{} of OFM {}, kernel "
                                                       "({}, {}); 2:4 sparsity allows 2",
                                                       non_zero, group, group + 3, o, y, x));
                    }
                }
            }
        }
    }
}

// U85: each weight decoder's stream (or, in the fast format, one stream interleaving them) holds
// its 4-channel groups of every OFM micro-block; one scale stream holds every channel's record.
void decode_u85_weights(const DecodedOp& op, const NpuConfig& config, const StreamFetch& fetch,
                        const std::string& source, OpWeights& out) {
    const U85WeightOrder order = u85_weight_order(op, config, out, {&source, op.offset, op_kind_name(op.kind)});
    std::vector<std::vector<int16_t>> streams(static_cast<size_t>(order.streams));
    if (op.kernel().weight_format == WeightFormat::Fast) {
        const Stream& stream = op.kernel().weights[0];
        const auto bytes = fetch(stream);
        // Positions per decoder; a stream of n bytes holds at most 4n weights (2-bit indices).
        std::vector<uint64_t> positions(streams.size(), 0);
        uint64_t total = 0;
        for (int s = 0; s < order.streams; ++s) {
            for_each_u85_weight_position(order, s, [&](int, int, int, int) {
                if (++total > bytes.size() * 4) {
                    throw Error({source, op.offset, "WEIGHT_LENGTH", OffsetKind::Command},
                                fmt::format("fast weight stream at 0x{:x} is too short for the op", stream.base));
                }
                ++positions[static_cast<size_t>(s)];
            });
        }
        std::vector<int16_t> values;
        try {
            values = decode_fast_weights(bytes, total, source, stream.base);
        } catch (const Error& e) {
            throw weight_stream_error(op, source, 0, e);
        }
        // The decoders' streams take turns, a block of weights at a time.
        const size_t block = static_cast<size_t>(u85_fast_interleave_block(order));
        for (size_t next = 0; next < values.size();) {
            for (size_t s = 0; s < streams.size() && next < values.size(); ++s) {
                const size_t n = std::min({block, positions[s] - streams[s].size(), values.size() - next});
                streams[s].insert(streams[s].end(), values.begin() + static_cast<ptrdiff_t>(next),
                                  values.begin() + static_cast<ptrdiff_t>(next + n));
                next += n;
            }
        }
    } else {
        for (int s = 0; s < order.streams; ++s) {
            const Stream& stream = op.kernel().weights[static_cast<size_t>(s)];
            try {
                streams[static_cast<size_t>(s)] =
                    decode_weight_bitstream(fetch(stream), source, stream.base, u85_stream_weight_count(order, s));
            } catch (const Error& e) {
                throw weight_stream_error(op, source, s, e);
            }
            // Checked before the OHWI buffer is sized from the (possibly hostile) registers.
            if (streams[static_cast<size_t>(s)].size() < u85_stream_weight_count(order, s)) {
                throw Error({source, op.offset, weight_field(s), OffsetKind::Command},
                            fmt::format("weight stream at 0x{:x} holds {} weights; the op has {} for this decoder",
                                        stream.base, streams[static_cast<size_t>(s)].size(),
                                        u85_stream_weight_count(order, s)));
            }
        }
    }
    out.values.assign(static_cast<size_t>(out.ofm_depth) * out.kernel_height * out.kernel_width * out.ifm_depth, 0);
    for (int s = 0; s < order.streams; ++s) {
        const auto& values = streams[static_cast<size_t>(s)];
        auto mismatch = [&](const char* how) {
            return Error({source, op.offset, weight_field(s), OffsetKind::Command},
                         fmt::format("weight stream holds {} weights, {} the op's traversal needs", values.size(), how));
        };
        size_t next = 0;
        for_each_u85_weight_position(order, s, [&](int o, int y, int x, int i) {
            if (next == values.size()) throw mismatch("fewer than");
            const int16_t v = values[next++];
            if (o < 0) return;
            out.values[((static_cast<size_t>(o) * out.kernel_height + y) * out.kernel_width + x) * out.ifm_depth + i] = v;
        });
        if (next != values.size()) throw mismatch("more than");
    }
    if (op.kernel().sparse_2_4) check_2_4_sparse(out, {source, op.offset, "NPU_SET_WEIGHT_FORMAT.weight_sparsity"});
    if (op.kernel().scales.empty()) return;
    const Stream& scales = op.kernel().scales[0];
    const auto bytes = fetch(scales);
    const size_t channels = static_cast<size_t>(out.ofm_depth);
    if (bytes.size() < channels * kScaleRecordBytes) {
        throw Error({source, op.offset, "SCALE_LENGTH", OffsetKind::Command},
                    fmt::format("scale stream at 0x{:x} holds {} bytes; {} channels need {}", scales.base, bytes.size(),
                                channels, channels * kScaleRecordBytes));
    }
    out.bias.assign(channels, 0);
    out.scale.assign(channels, 0);
    out.shift.assign(channels, 0);
    const bool acc48 = op.kernel().output.acc_format == AccFormat::I48;
    for (size_t c = 0; c < channels; ++c)
        decode_u85_scale_record(bytes.data() + c * kScaleRecordBytes, acc48, out.bias[c], out.scale[c], out.shift[c]);
}

}  // namespace

void tabulate_output_rounding(OpWeights& w) {
    const size_t channels = w.shift.size();
    w.rounding_half.assign(channels, 0);
    w.double_nudge.assign(channels, 0);
    w.shift_wide.assign(channels, 0);
    w.closed_form = w.scale.size() == channels;
    for (size_t c = 0; c < channels; ++c) {
        const int shift = w.shift[c];
        if (shift < 1 || shift > 62 || w.scale[c] >> 31) {
            w.closed_form = false;
            continue;
        }
        w.rounding_half[c] = int64_t{1} << (shift - 1);
        w.double_nudge[c] = shift > 31 ? int64_t{1} << 30 : 0;
        w.shift_wide[c] = shift;
    }
    // Only where a kernel will read them (32 bytes a channel).
    w.byte_scaling = w.closed_form && fast_byte_scaling() ? tabulate_byte_scaling(w.bias, w.scale, w.shift) : ByteScaling{};
}

struct ConvWeightGroups::State {
    State(const DecodedOp& o, const NpuConfig& config, const StreamFetch& fetch, const std::string& s, OpWeights a)
        : op(o), source(s), all(std::move(a)), order(u55_weight_order(o, config, all, 0, 1)),
          values(o, fetch, source, 0) {}
    const DecodedOp& op;
    std::string source;
    OpWeights all;  // the op's shape and its scale/bias records; no values
    WeightOrder order;
    StreamValues values;
    int next = 0;  // first OFM channel of the next group
};

bool ConvWeightGroups::applies(const DecodedOp& op, const NpuConfig& config) {
    if (config.traits().weight_encoding != WeightEncoding::PerCore || op.kind != OpKind::Conv || op.kernel().weights.size() != 1) return false;
    const OpWeights shape = weights_shape(op);
    return weight_count(static_cast<uint64_t>(shape.ofm_depth), shape) * sizeof(int16_t) > kLargeLayerBytes;
}

ConvWeightGroups::ConvWeightGroups(const DecodedOp& op, const NpuConfig& config, const StreamFetch& fetch,
                                   const std::string& source) {
    check_kernel_op(op, config, {&source, op.offset, op_kind_name(op.kind)});
    OpWeights all = weights_shape(op);
    check_stream_can_hold(op, fetch, source, 0, all);
    if (!op.kernel().scales.empty()) {
        all.bias.assign(static_cast<size_t>(all.ofm_depth), 0);
        all.scale.assign(static_cast<size_t>(all.ofm_depth), 0);
        all.shift.assign(static_cast<size_t>(all.ofm_depth), 0);
        for (int s = 0; s < static_cast<int>(op.kernel().scales.size()); ++s) decode_scale_stream(op, fetch, source, s, all);
    }
    state_ = std::make_unique<State>(op, config, fetch, source, std::move(all));
}

ConvWeightGroups::~ConvWeightGroups() = default;

uint64_t ConvWeightGroups::stream_bytes_read() const { return state_->values.bytes_read(); }

namespace {

// The weights also packed for conv.cc's fast path (GEMM or depthwise kernel), and the output
// stage's rounding tabulated, once, as they are decoded (a ModelSession runs them again and again).
void pack_conv_weights(const DecodedOp& op, OpWeights& w) {
    tabulate_output_rounding(w);
    const int taps = w.kernel_height * w.kernel_width;
    if (op.kind == OpKind::Conv)
        w.gemm = pack_gemm_weights(w.values.data(), w.ofm_depth, taps * w.ifm_depth, op.kernel().ifm.precision.bits == 8);
    else w.depthwise = pack_depthwise_weights(w.values.data(), w.ofm_depth, taps);
}

}  // namespace

bool ConvWeightGroups::next(int channels, OpWeights& out) {
    State& s = *state_;
    if (s.next >= s.order.ofm_depth) {
        expect_stream_spent(s.op, s.source, 0, s.values);
        return false;
    }
    const int block = std::max(s.order.ofm_block_depth, 1);
    const int first = s.next;
    const int end = std::min(s.order.ofm_depth, first + (std::max(channels, 1) + block - 1) / block * block);
    out.ofm_depth = end - first;
    out.kernel_height = s.all.kernel_height;
    out.kernel_width = s.all.kernel_width;
    out.ifm_depth = s.all.ifm_depth;
    out.values.assign(weight_count(static_cast<uint64_t>(out.ofm_depth), out), 0);
    place_weights(s.op, s.source, s.order, s.values, 1, 0, first, end, out);
    const auto part = [&](const auto& all, auto& mine) {
        mine.clear();
        if (!all.empty()) mine.assign(all.begin() + first, all.begin() + end);
    };
    part(s.all.bias, out.bias);
    part(s.all.scale, out.scale);
    part(s.all.shift, out.shift);
    pack_conv_weights(s.op, out);
    first_ = first;
    s.next = end;
    return true;
}

void check_weight_layout(const DecodedOp& op, const NpuConfig& config, const std::string& source) {
    // Called for every op of every run: the error's strings are built only when it is thrown.
    const LazyLocation where{&source, op.offset, op_kind_name(op.kind)};
    check_kernel_op(op, config, where);
    if (config.traits().weight_encoding == WeightEncoding::PerDecoder) u85_weight_order(op, config, weights_shape(op), where);
}

OpWeights decode_op_weights(const DecodedOp& op, const NpuConfig& config, const StreamFetch& fetch,
                            const std::string& source) {
    check_kernel_op(op, config, {&source, op.offset, op_kind_name(op.kind)});
    OpWeights w = weights_shape(op);
    if (config.traits().weight_encoding == WeightEncoding::PerDecoder) {
        decode_u85_weights(op, config, fetch, source, w);
        pack_conv_weights(op, w);
        return w;
    }
    const int streams = static_cast<int>(op.kernel().weights.size());
    for (int s = 0; s < streams; ++s) check_stream_can_hold(op, fetch, source, s, w);
    w.values.assign(static_cast<size_t>(w.ofm_depth) * w.kernel_height * w.kernel_width * w.ifm_depth, 0);
    for (int s = 0; s < streams; ++s) place_weight_stream(op, config, fetch, source, s, w);
    if (!op.kernel().scales.empty()) {
        w.bias.assign(static_cast<size_t>(w.ofm_depth), 0);
        w.scale.assign(static_cast<size_t>(w.ofm_depth), 0);
        w.shift.assign(static_cast<size_t>(w.ofm_depth), 0);
        for (int s = 0; s < static_cast<int>(op.kernel().scales.size()); ++s) decode_scale_stream(op, fetch, source, s, w);
    }
    pack_conv_weights(op, w);
    return w;
}

}  // namespace ethosu
