// The compressed weight bitstream of U55/U65 (also U85's standard "SWD" format).
// Bit layout, field order and the chunk/flow-control rules: Vela 5.1 ethosu/mlw_codec/mlw_decode.c
// (reference decoder) and regor/dependencies/mlw_codec/source/mlw_encode.cpp (encoder, padding).

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "emulator/engine/weights.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

constexpr int kZeroRunsDisabled = 6;  // ZDIV: this slice has no zero runs
constexpr int kEndOfStream = 7;       // ZDIV: end of stream; the rest of the byte is padding
constexpr int kUncompressed = 7;      // WDIV: weights are plain indices, no unary part
constexpr int kMaxPalette = 32;
constexpr int kSymbolsPerChunk = 12;
constexpr int kMaxWeightSymbol = 511;  // the hardware decodes 9-bit symbols

// Reads LSB-first, as the hardware does; a read past the end names the field and byte offset.
class BitReader {
public:
    BitReader(std::span<const uint8_t> bytes, const std::string& source, uint64_t base)
        : bytes_(bytes), source_(source), base_(base) {}

    uint32_t get(int bits, const char* field) {
        if (position_ + static_cast<uint64_t>(bits) > bytes_.size() * 8) {
            throw Error({source_, byte_offset(), field}, "weight stream ends in the middle of a slice");
        }
        if (bits == 0) return 0;
        // Up to 8 bytes from the current one hold the field (bits <= 32, at most 7 bits in).
        const size_t first = static_cast<size_t>(position_ / 8);
        uint64_t window = 0;
        std::memcpy(&window, bytes_.data() + first, std::min<size_t>(8, bytes_.size() - first));  // little-endian host
        const uint64_t value = (window >> (position_ % 8)) & ((uint64_t{1} << bits) - 1);
        position_ += static_cast<uint64_t>(bits);
        return static_cast<uint32_t>(value);
    }
    void skip_to_byte_boundary() { position_ = (position_ + 7) / 8 * 8; }
    bool at_end() const { return position_ >= bytes_.size() * 8; }
    uint64_t byte_offset() const { return base_ + position_ / 8; }
    uint64_t bytes_read() const { return (position_ + 7) / 8; }
    Error error(const char* field, const std::string& reason) const {
        return Error({source_, byte_offset(), field}, reason);
    }

private:
    std::span<const uint8_t> bytes_;
    const std::string& source_;
    uint64_t base_;
    uint64_t position_ = 0;
};

// Palette state; it persists across slices until a slice with NEWPAL replaces it.
struct Palette {
    std::array<int, kMaxPalette> entries{};
    int size = 0;        // 0: no palette, every symbol is direct
    int entry_bits = 2;  // PALBITS + 2; also the uncompressed width without a palette
    int direct_offset = 0;
    bool defined = false;  // false at the start and after an end-of-stream marker
    bool zero_runs = false;

    // A symbol (palette index or direct value) as the sign-folded 9-bit value it stands for.
    int folded_value(int symbol) const { return symbol < size ? entries[symbol] : symbol - size + direct_offset; }
};

struct SliceHeader {
    int zero_divisor = 0;
    bool zero_runs = false;
    int weight_count = 0;
    int weight_divisor = 0;  // remainder width; the index width in uncompressed mode
    bool uncompressed = false;
    bool truncated = false;  // WTRUNC: unary codes of 2 never continue
    bool new_palette = false;
};

SliceHeader read_slice_header(BitReader& bits, int zero_divisor, Palette& palette) {
    SliceHeader h;
    h.zero_divisor = zero_divisor;
    if (zero_divisor > 3 && zero_divisor != kZeroRunsDisabled) {
        throw bits.error("ZDIV", fmt::format("invalid zero-run divisor {}", zero_divisor));
    }
    h.zero_runs = zero_divisor != kZeroRunsDisabled;
    h.weight_count = static_cast<int>(bits.get(15, "SLICELEN")) + 1;
    const int weight_divisor = static_cast<int>(bits.get(3, "WDIV"));
    h.truncated = bits.get(1, "WTRUNC") != 0;
    h.new_palette = bits.get(1, "NEWPAL") != 0;
    if (!h.new_palette && !palette.defined) {
        throw bits.error("NEWPAL", "the first slice of a stream must define its palette");
    }
    // Zero is not a palette symbol when zero runs are on, so the mode can only change with a new palette.
    if (!h.new_palette && h.zero_runs != palette.zero_runs) {
        throw bits.error("ZDIV", "zero-run mode changes without a new palette");
    }
    if (h.new_palette) {
        palette.direct_offset = static_cast<int>(bits.get(5, "DIROFS"));
        const int size_field = static_cast<int>(bits.get(5, "PALSIZE"));
        palette.size = size_field == 0 ? 0 : size_field + 1;
        palette.entry_bits = static_cast<int>(bits.get(3, "PALBITS")) + 2;
        for (int i = 0; i < palette.size; ++i)
            palette.entries[i] = static_cast<int>(bits.get(palette.entry_bits, "PALETTE"));
        palette.defined = true;
        palette.zero_runs = h.zero_runs;
    }
    h.uncompressed = weight_divisor == kUncompressed;
    if (h.uncompressed) {
        // Only remainders: as wide as a palette index, or PALBITS when there is no palette.
        h.weight_divisor =
            palette.size > 0 ? std::bit_width(static_cast<unsigned>(palette.size - 1)) : palette.entry_bits;
    } else if (weight_divisor > 5) {
        throw bits.error("WDIV", fmt::format("invalid weight divisor {}", weight_divisor));
    } else {
        h.weight_divisor = weight_divisor;
    }
    return h;
}

// One Golomb-Rice symbol sequence of a slice (the weights, or the zero runs). Each chunk carries
// the unary quotients of up to 12 symbols; their remainders come one chunk later.
class RiceChannel {
public:
    RiceChannel(int divisor, int symbols) : divisor_(divisor), values_(static_cast<size_t>(symbols)) {}

    int symbols_started() const { return started_; }
    bool wants_more() const { return started_ < static_cast<int>(values_.size()); }
    const std::vector<int32_t>& values() const { return values_; }

    // A quotient is complete when its unary run ends; a run still open carries into the next chunk.
    void add_unary_run(int length, bool ends) {
        run_ += length;
        if (!ends) return;
        current_[current_count_++] = run_;
        run_ = 0;
    }
    // Reads the remainders of the previous chunk's quotients, then makes this chunk the previous.
    void finish_chunk(BitReader& bits, const char* field) {
        for (int i = 0; i < previous_count_ && finished_ < static_cast<int>(values_.size()); ++i, ++finished_) {
            // Values are held in 32 bits (a full slice's two channels take 256 KiB): a quotient
            // too large for that is no weight or zero run of any layer.
            if (previous_[i] > (int64_t{INT32_MAX} >> divisor_)) {
                throw bits.error(field, fmt::format("a unary quotient of {} is beyond any slice", previous_[i]));
            }
            values_[static_cast<size_t>(finished_)] =
                static_cast<int32_t>((previous_[i] << divisor_) + bits.get(divisor_, field));
        }
        started_ += current_count_;
        previous_ = current_;
        previous_count_ = current_count_;
        current_count_ = 0;
    }

private:
    int divisor_;
    std::vector<int32_t> values_;
    std::array<int64_t, kSymbolsPerChunk> current_{}, previous_{};
    int current_count_ = 0, previous_count_ = 0;
    int64_t run_ = 0;
    int started_ = 0;   // quotients seen
    int finished_ = 0;  // values complete with their remainder
};

// Zero-run quotients: plain unary, a 1 bit continues the run, a 0 bit ends it. Walks the 0 bits:
// each ends a run of the 1 bits since the previous one.
void read_zero_unary(BitReader& bits, int width, RiceChannel& zeros) {
    const uint32_t unary = bits.get(width, "ZUNARY");
    uint32_t ends = ~unary & ((1u << width) - 1);
    int next = 0;
    for (; ends; ends &= ends - 1) {
        const int at = std::countr_zero(ends);
        zeros.add_unary_run(at - next, true);
        next = at + 1;
    }
    zeros.add_unary_run(width - next, false);
}

// Weight quotients: WUNARY0 has a bit per symbol position, WUNARY1 a second bit for each set one;
// a code of 2 continues the run unless the slice is truncated.
void read_weight_unary(BitReader& bits, const SliceHeader& h, uint32_t unary0, RiceChannel& weights) {
    const int positions = h.uncompressed && h.weight_divisor > 5 ? 8 : kSymbolsPerChunk;
    const uint32_t position_mask = (1u << positions) - 1;
    uint32_t unary1 = bits.get(std::popcount(unary0 & position_mask), "WUNARY1");
    for (int i = 0; i < positions; ++i) {
        // Branch-free: the codes are data, a mispredicted branch per position costs more.
        const uint32_t set = (unary0 >> i) & 1;
        const int code = static_cast<int>(set + (set & unary1));
        unary1 >>= set;
        weights.add_unary_run(code, code < 2 || h.truncated);
    }
}

// Reads a slice body: weight and zero-run chunks interleaved under the encoder's flow control,
// which keeps the weights no more than 8 symbols ahead of the zero runs.
void read_slice_body(BitReader& bits, const SliceHeader& h, RiceChannel& weights, RiceChannel& zeros) {
    const int zero_unary_width = h.zero_divisor < 3 ? 12 : 8;
    bool chunk_had_symbols = false;
    do {
        const int balance = h.zero_runs ? weights.symbols_started() - zeros.symbols_started() : 0;
        const bool weights_on = (balance < 8 || !h.zero_runs) && weights.wants_more();
        const bool zeros_on = h.zero_runs && balance >= 0 && zeros.wants_more();
        const uint32_t unary0 = weights_on && !h.uncompressed ? bits.get(kSymbolsPerChunk, "WUNARY0") : 0;
        if (zeros_on) read_zero_unary(bits, zero_unary_width, zeros);
        if (weights_on) read_weight_unary(bits, h, unary0, weights);
        weights.finish_chunk(bits, "WREMAIN");
        zeros.finish_chunk(bits, "ZREMAIN");
        // One more round after the last active chunk reads its remainders.
        chunk_had_symbols = weights_on || zeros_on;
    } while (chunk_had_symbols);
}

// Appends the slice's weights with the zero runs between them.
void emit_slice(const SliceHeader& h, const Palette& palette, const RiceChannel& weights, const RiceChannel& zeros,
                const BitReader& bits, std::vector<int16_t>& out) {
    const int first_run = h.new_palette ? 1 : 0;  // a new palette brings a run of zeros before the first weight
    auto emit_zeros = [&](size_t run) {
        const int64_t n = zeros.values()[run];
        out.insert(out.end(), static_cast<size_t>(n), int16_t{0});
    };
    if (h.zero_runs && h.new_palette) emit_zeros(0);
    for (int i = 0; i < h.weight_count; ++i) {
        const int64_t symbol = weights.values()[static_cast<size_t>(i)];
        const int64_t folded = symbol > kMaxWeightSymbol ? symbol : palette.folded_value(static_cast<int>(symbol));
        if (folded > kMaxWeightSymbol) throw bits.error("WREMAIN", "weight symbol beyond 9 bits");
        const int magnitude = static_cast<int>(folded >> 1);
        out.push_back(static_cast<int16_t>(folded & 1 ? -magnitude : magnitude));  // the sign sits in bit 0
        if (h.zero_runs) emit_zeros(static_cast<size_t>(i + first_run));
    }
}

}  // namespace

struct WeightBitstreamReader::State {
    BitReader bits;
    Palette palette;
};

WeightBitstreamReader::WeightBitstreamReader(std::span<const uint8_t> stream, const std::string& source,
                                             uint64_t base_offset)
    : state_(std::make_unique<State>(State{BitReader(stream, source, base_offset), Palette{}})) {}

WeightBitstreamReader::~WeightBitstreamReader() = default;

uint64_t WeightBitstreamReader::bytes_read() const { return state_->bits.bytes_read(); }

bool WeightBitstreamReader::next_slice(std::vector<int16_t>& out) {
    out.clear();
    return append_slice(out);
}

bool WeightBitstreamReader::append_slice(std::vector<int16_t>& out) {
    BitReader& bits = state_->bits;
    Palette& palette = state_->palette;
    while (!bits.at_end()) {
        const int zero_divisor = static_cast<int>(bits.get(3, "ZDIV"));
        if (zero_divisor == kEndOfStream) {
            bits.skip_to_byte_boundary();  // Vela pads with 0xFF bytes, i.e. more end markers
            palette.defined = false;
            continue;
        }
        const SliceHeader h = read_slice_header(bits, zero_divisor, palette);
        RiceChannel weights(h.weight_divisor, h.weight_count);
        RiceChannel zeros(h.zero_divisor, h.zero_runs ? h.weight_count + (h.new_palette ? 1 : 0) : 0);
        read_slice_body(bits, h, weights, zeros);
        emit_slice(h, palette, weights, zeros, bits, out);
        return true;
    }
    return false;
}

std::vector<int16_t> decode_weight_bitstream(std::span<const uint8_t> stream, const std::string& source,
                                             uint64_t base_offset, uint64_t expected_values) {
    WeightBitstreamReader reader(stream, source, base_offset);
    std::vector<int16_t> out;
    // Room for the channels Vela pads the last OFM group with, so they do not double the buffer.
    const uint64_t room = expected_values + expected_values / 8 + 4096;
    out.reserve(static_cast<size_t>(std::min<uint64_t>(room, kMaxValuesPerByte * uint64_t{stream.size()})));
    while (reader.append_slice(out)) {
    }
    return out;
}

}  // namespace ethosu
