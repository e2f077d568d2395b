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

// Set bits of a chunk's 12 WUNARY0 positions, looked up: the baseline x86-64 has no POPCNT, and
// std::popcount there is a library call.
constexpr auto kSetBits12 = [] {
    std::array<uint8_t, 1 << kSymbolsPerChunk> table{};
    for (size_t i = 1; i < table.size(); ++i) table[i] = static_cast<uint8_t>(table[i >> 1] + (i & 1));
    return table;
}();

// WUNARY1's bits spread over the set bits of 6 WUNARY0 positions (the k-th bit of `bits` to the
// k-th set position of `set`), looked up by [set][bits]: the baseline x86-64 has no PDEP.
constexpr auto kSpread6 = [] {
    std::array<std::array<uint8_t, 64>, 64> table{};
    for (uint32_t set = 0; set < 64; ++set) {
        for (uint32_t bits = 0; bits < 64; ++bits) {
            uint32_t spread = 0, next = 0;
            for (uint32_t position = 0; position < 6; ++position)
                if (set >> position & 1) spread |= (bits >> next++ & 1) << position;
            table[set][bits] = static_cast<uint8_t>(spread);
        }
    }
    return table;
}();

// Where a unary code ends its quotient: weights at codes 0 and 1 (a 2 continues), truncated
// weights at every code, zero runs at a 0 bit (a 1 continues).
enum class UnaryEnds { BelowTwo, Always, AtZeroBit };

// Four positions of unary codes at a time: position i's code is (ones >> i & 1) + (twos >> i & 1);
// the quotients the nibble completes, each the codes since the previous end (the first one also
// takes the quotient open before the nibble), and the codes after the last end.
struct UnaryNibble {
    uint8_t ends = 0;
    uint8_t tail = 0;
    std::array<uint8_t, 4> quotients{};
};
constexpr auto kUnaryNibbles = [] {
    std::array<std::array<UnaryNibble, 256>, 3> table{};
    for (int mode = 0; mode < 3; ++mode) {
        for (uint32_t index = 0; index < 256; ++index) {
            const uint32_t ones = index & 15, twos = index >> 4;
            UnaryNibble& n = table[static_cast<size_t>(mode)][index];
            uint32_t run = 0;
            for (uint32_t i = 0; i < 4; ++i) {
                const uint32_t code = (ones >> i & 1) + (twos >> i & 1);
                run += code;
                const bool ends = mode == static_cast<int>(UnaryEnds::Always) ||
                                  (mode == static_cast<int>(UnaryEnds::BelowTwo) ? code < 2 : (ones >> i & 1) == 0);
                if (!ends) continue;
                n.quotients[n.ends++] = static_cast<uint8_t>(run);
                run = 0;
            }
            n.tail = static_cast<uint8_t>(run);
        }
    }
    return table;
}();

// Reads LSB-first, as the hardware does; a read past the end names the field and byte offset.
// The bits ahead wait in a 64-bit buffer, refilled 8 bytes at a time, so a field costs a mask and
// a shift.
class BitReader {
public:
    BitReader(std::span<const uint8_t> bytes, const std::string& source, uint64_t base)
        : bytes_(bytes), source_(source), base_(base) {}

    uint32_t get(int bits, const char* field) {
        if (bits > buffered_) {
            refill();
            if (bits > buffered_) throw Error({source_, byte_offset(), field}, "weight stream ends in the middle of a slice");
        }
        const uint64_t value = buffer_ & ((uint64_t{1} << bits) - 1);  // bits <= 32
        buffer_ >>= bits;
        buffered_ -= bits;
        position_ += static_cast<uint64_t>(bits);
        return static_cast<uint32_t>(value);
    }
    // get(bits) n times (bits <= 57), each value handed to sink(i, value). The fields are read
    // straight from the bytes, each by an 8-byte load at its own byte, so that no field waits for
    // the previous one's shift; the last ones, whose load would pass the end, go through get(),
    // which throws where the stream ends.
    template <typename Sink>
    void get_each(int bits, size_t n, const char* field, Sink&& sink) {
        const uint64_t start = position_;
        const uint64_t loadable_bits = bytes_.size() >= 8 ? (bytes_.size() - 7) * 8 : 0;  // a load starts below
        size_t direct = 0;
        if (bits == 0) {
            direct = n;
        } else if (start < loadable_bits) {
            direct = static_cast<size_t>(std::min<uint64_t>(n, (loadable_bits - 1 - start) / static_cast<uint64_t>(bits) + 1));
        }
        const uint64_t mask = (uint64_t{1} << bits) - 1;
        const uint8_t* data = bytes_.data();
        for (size_t i = 0; i < direct; ++i) {
            const uint64_t at = start + i * static_cast<uint64_t>(bits);
            uint64_t word;
            std::memcpy(&word, data + at / 8, sizeof word);  // little-endian host
            sink(i, static_cast<uint32_t>(word >> (at % 8) & mask));
        }
        skip_unbuffered(direct * static_cast<uint64_t>(bits));
        for (size_t i = direct; i < n; ++i) sink(i, get(bits, field));
    }
    // get(bits) n times into out (n * bits <= 64), from the buffer at once when it holds them;
    // otherwise field by field, so that a stream that ends throws where get() does.
    void get_fields(int bits, int n, uint32_t* out, const char* field) {
        const int total = bits * n;
        if (total > buffered_) refill();
        if (total > buffered_ || total >= 64) {
            for (int k = 0; k < n; ++k) out[k] = get(bits, field);
            return;
        }
        const uint64_t mask = (uint64_t{1} << bits) - 1;
        uint64_t buffer = buffer_;
        for (int k = 0; k < n; ++k, buffer >>= bits) out[k] = static_cast<uint32_t>(buffer & mask);
        buffer_ = buffer;
        buffered_ -= total;
        position_ += static_cast<uint64_t>(total);
    }
    // The rest of the current byte (an end-of-stream marker's padding).
    void skip_to_byte_boundary() { get(static_cast<int>((8 - position_ % 8) % 8), "ZDIV"); }
    bool at_end() const { return position_ >= bytes_.size() * 8; }
    uint64_t byte_offset() const { return base_ + position_ / 8; }
    uint64_t bytes_read() const { return (position_ + 7) / 8; }
    Error error(const char* field, const std::string& reason) const {
        return Error({source_, byte_offset(), field}, reason);
    }

private:
    // Consumes `bits` bits read without the buffer: the buffer restarts at the new position.
    void skip_unbuffered(uint64_t bits) {
        if (bits == 0) return;
        position_ += bits;
        buffer_ = 0;
        buffered_ = 0;
        next_byte_ = static_cast<size_t>(position_ / 8);
        const int into_byte = static_cast<int>(position_ % 8);
        if (into_byte == 0) return;
        refill();  // position_ is inside the stream, so this buffers at least its byte
        buffer_ >>= into_byte;
        buffered_ -= into_byte;
    }
    // Bits of whole bytes after the buffered ones, up to 56 and more buffered (bytes are appended
    // above the buffered bits; an 8-byte load may set bits past them, which are the stream's next
    // bits anyway, and the next refill ORs the same bits in again).
    void refill() {
        if (next_byte_ + 8 <= bytes_.size()) {
            uint64_t word;
            std::memcpy(&word, bytes_.data() + next_byte_, sizeof word);  // little-endian host
            buffer_ |= word << buffered_;
            const int bytes = (63 - buffered_) / 8;
            next_byte_ += static_cast<size_t>(bytes);
            buffered_ += 8 * bytes;
            return;
        }
        while (buffered_ <= 56 && next_byte_ < bytes_.size()) {
            buffer_ |= uint64_t{bytes_[next_byte_++]} << buffered_;
            buffered_ += 8;
        }
    }
    std::span<const uint8_t> bytes_;
    const std::string& source_;
    uint64_t base_;
    uint64_t position_ = 0;  // bits consumed
    uint64_t buffer_ = 0;    // the next `buffered_` bits, LSB first
    int buffered_ = 0;
    size_t next_byte_ = 0;  // the first byte not yet in the buffer
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

    // The signed weight of every symbol below 512 (bit 0 of the folded value is the sign), looked
    // up by emit_slice without a branch; kBeyond9Bits where the folded value passes 9 bits.
    static constexpr int16_t kBeyond9Bits = INT16_MIN;
    std::array<int16_t, kMaxWeightSymbol + 1> weights{};
    void tabulate() {
        for (int symbol = 0; symbol <= kMaxWeightSymbol; ++symbol) {
            const int folded = folded_value(symbol);
            const int magnitude = folded >> 1;
            weights[static_cast<size_t>(symbol)] = folded > kMaxWeightSymbol ? kBeyond9Bits
                                                   : static_cast<int16_t>(folded & 1 ? -magnitude : magnitude);
        }
    }
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
        palette.tabulate();
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
    // values: the reader's buffer for this channel, reused from slice to slice.
    RiceChannel(int divisor, int symbols, std::vector<int32_t>& values) : divisor_(divisor), values_(values) {
        values_.assign(static_cast<size_t>(symbols), 0);
    }

    int symbols_started() const { return started_; }
    bool wants_more() const { return started_ < static_cast<int>(values_.size()); }
    const std::vector<int32_t>& values() const { return values_; }

    // A chunk's unary codes at `positions` positions (a multiple of 4), a nibble a lookup: position
    // i adds (ones >> i & 1) + (twos >> i & 1) to the open quotient, which `ends` completes; a
    // quotient still open carries into the next chunk.
    void add_unary_codes(uint32_t ones, uint32_t twos, UnaryEnds ends, int positions) {
        const auto& nibbles = kUnaryNibbles[static_cast<size_t>(ends)];
        int64_t run = run_;  // locals: the stores to current_ could alias members as far as the compiler knows
        size_t count = static_cast<size_t>(current_count_);
        std::array<int64_t, kSymbolsPerChunk>& current = chunks_[current_chunk_];
        current_bound_ = std::max(current_bound_, run + 2 * positions);  // a code adds at most 2
        for (int at = 0; at < positions; at += 4) {
            const UnaryNibble& n = nibbles[(ones >> at & 15) | (twos >> at & 15) << 4];
            // Every quotient slot is written, the ones past n.ends again by the next nibble: at
            // most `at` quotients are complete before this nibble, so the slots stay inside the chunk.
            for (size_t k = 0; k < 4; ++k) current[count + k] = n.quotients[k];
            current[count] += run;
            run = (n.ends ? 0 : run) + n.tail;
            count += n.ends;
        }
        run_ = run;
        current_count_ = static_cast<int>(count);
    }
    // Reads the remainders of the previous chunk's quotients, then makes this chunk the previous.
    void finish_chunk(BitReader& bits, const char* field) {
        const std::array<int64_t, kSymbolsPerChunk>& previous = chunks_[1 - current_chunk_];
        const int n = std::min(previous_count_, static_cast<int>(values_.size()) - finished_);
        // Values are held in 32 bits (a full slice's two channels take 256 KiB): a quotient too
        // large for that is no weight or zero run of any layer.
        const int64_t largest_fitting = int64_t{INT32_MAX} >> divisor_;
        if (previous_bound_ <= largest_fitting) {
            std::array<uint32_t, kSymbolsPerChunk> remainders;
            bits.get_fields(divisor_, n, remainders.data(), field);
            for (int i = 0; i < n; ++i)
                values_[static_cast<size_t>(finished_ + i)] = static_cast<int32_t>(
                    (previous[static_cast<size_t>(i)] << divisor_) + remainders[static_cast<size_t>(i)]);
            finished_ += n;
        } else {  // quotient by quotient: the remainders up to one that does not fit, then its error
            for (int i = 0; i < n; ++i, ++finished_) {
                const int64_t quotient = previous[static_cast<size_t>(i)];
                if (quotient > largest_fitting) {
                    throw bits.error(field, fmt::format("a unary quotient of {} is beyond any slice", quotient));
                }
                values_[static_cast<size_t>(finished_)] =
                    static_cast<int32_t>((quotient << divisor_) + bits.get(divisor_, field));
            }
        }
        started_ += current_count_;
        previous_count_ = current_count_;
        previous_bound_ = current_bound_;
        current_count_ = 0;
        current_bound_ = 0;
        current_chunk_ = 1 - current_chunk_;
    }

private:
    int divisor_;
    std::vector<int32_t>& values_;
    // The quotients of this chunk and of the previous one, which take turns, and a bound on the
    // largest of each (the remainders are read at once when it fits).
    std::array<std::array<int64_t, kSymbolsPerChunk>, 2> chunks_{};
    size_t current_chunk_ = 0;
    int current_count_ = 0, previous_count_ = 0;
    int64_t current_bound_ = 0, previous_bound_ = 0;
    int64_t run_ = 0;
    int started_ = 0;   // quotients seen
    int finished_ = 0;  // values complete with their remainder
};

// Zero-run quotients: plain unary, a 1 bit continues the run, a 0 bit ends it.
void read_zero_unary(BitReader& bits, int width, RiceChannel& zeros) {
    zeros.add_unary_codes(bits.get(width, "ZUNARY"), 0, UnaryEnds::AtZeroBit, width);
}

// Weight quotients: WUNARY0 has a bit per symbol position, WUNARY1 a second bit for each set one;
// a code of 2 continues the run unless the slice is truncated. The positions of code 2 ("twos")
// come from spreading WUNARY1's bits over WUNARY0's set ones, 6 positions a lookup.
void read_weight_unary(BitReader& bits, const SliceHeader& h, uint32_t unary0, RiceChannel& weights) {
    const int positions = h.uncompressed && h.weight_divisor > 5 ? 8 : kSymbolsPerChunk;
    const uint32_t set = unary0 & ((1u << positions) - 1);
    const uint32_t unary1 = bits.get(kSetBits12[set], "WUNARY1");
    const uint32_t low = set & 63, high = set >> 6;
    const uint32_t twos = kSpread6[low][unary1 & 63] | uint32_t{kSpread6[high][(unary1 >> kSetBits12[low]) & 63]} << 6;
    weights.add_unary_codes(set, twos, h.truncated ? UnaryEnds::Always : UnaryEnds::BelowTwo, positions);
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

// Appends the slice's weights with the zero runs between them: the slice's room at once, zeros,
// then each weight written past its preceding run.
void emit_slice(const SliceHeader& h, const Palette& palette, const RiceChannel& weights, const RiceChannel& zeros,
                const BitReader& bits, std::vector<int16_t>& out) {
    const int first_run = h.new_palette ? 1 : 0;  // a new palette brings a run of zeros before the first weight
    size_t room = static_cast<size_t>(h.weight_count);
    if (h.zero_runs)
        for (const int32_t run : zeros.values()) room += static_cast<size_t>(run);
    const size_t start = out.size();
    out.resize(start + room);
    int16_t* to = out.data() + start;
    if (h.zero_runs && h.new_palette) to += zeros.values()[0];
    for (int i = 0; i < h.weight_count; ++i) {
        const int32_t symbol = weights.values()[static_cast<size_t>(i)];
        const int16_t value = symbol > kMaxWeightSymbol ? Palette::kBeyond9Bits : palette.weights[static_cast<size_t>(symbol)];
        if (value == Palette::kBeyond9Bits) throw bits.error("WREMAIN", "weight symbol beyond 9 bits");
        *to++ = value;
        if (h.zero_runs) to += zeros.values()[static_cast<size_t>(i + first_run)];
    }
}

// A slice without unary bits of either channel (uncompressed, no zero runs): every chunk holds the
// previous chunk's remainders only, so the symbols are the fields one after another, looked up in
// the palette as they are read. The index width is at most 9 bits (PALBITS + 2), so every symbol
// is inside the palette's table; a weight beyond 9 bits throws once the slice is read, as in
// emit_slice.
void read_plain_slice(BitReader& bits, const SliceHeader& h, const Palette& palette, std::vector<int16_t>& out) {
    const size_t start = out.size();
    out.resize(start + static_cast<size_t>(h.weight_count));
    int16_t* to = out.data() + start;
    int16_t lowest = 0;  // kBeyond9Bits is below every weight
    bits.get_each(h.weight_divisor, static_cast<size_t>(h.weight_count), "WREMAIN", [&](size_t i, uint32_t symbol) {
        const int16_t value = palette.weights[symbol];
        to[i] = value;
        lowest = std::min(lowest, value);
    });
    if (lowest == Palette::kBeyond9Bits) throw bits.error("WREMAIN", "weight symbol beyond 9 bits");
}

}  // namespace

struct WeightBitstreamReader::State {
    BitReader bits;
    Palette palette;
    std::vector<int32_t> weight_values, zero_runs;  // the current slice's symbols
};

WeightBitstreamReader::WeightBitstreamReader(std::span<const uint8_t> stream, const std::string& source,
                                             uint64_t base_offset)
    : state_(std::make_unique<State>(State{BitReader(stream, source, base_offset), Palette{}, {}, {}})) {}

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
        if (h.uncompressed && !h.zero_runs) {
            read_plain_slice(bits, h, palette, out);
            return true;
        }
        RiceChannel weights(h.weight_divisor, h.weight_count, state_->weight_values);
        RiceChannel zeros(h.zero_divisor, h.zero_runs ? h.weight_count + (h.new_palette ? 1 : 0) : 0,
                          state_->zero_runs);
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
