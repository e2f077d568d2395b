#pragma once
// Test-only encoder for U55/U65 weight streams, written from the format description (LSB-first
// fields, slice header, chunks of unary words with remainders one chunk behind, flow control)
// and Vela's weight order. The weight decoder tests and the kernel tests build streams with it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ethosu::test_support {

class BitWriter {
public:
    // Fields wider than 64 bits (reserved runs) take zeros past bit 63.
    void put(uint64_t value, int bits) {
        for (int i = 0; i < bits; ++i, ++count_) {
            if (count_ % 8 == 0) bytes_.push_back(0);
            const uint64_t bit = i < 64 ? (value >> i) & 1 : 0;
            bytes_.back() |= static_cast<uint8_t>(bit << (count_ % 8));
        }
    }
    // End-of-stream marker, 1-bits to the byte boundary, 0xFF bytes to a multiple of 16 (as Vela).
    void end_stream() {
        put(7, 3);
        align_with_ones();
        while (bytes_.size() % 16) put(0xFF, 8);
    }
    void align_with_ones() {
        while (count_ % 8) put(1, 1);
    }
    const std::vector<uint8_t>& bytes() const { return bytes_; }

private:
    std::vector<uint8_t> bytes_;
    uint64_t count_ = 0;
};

struct SliceSpec {
    int zdiv = 6;  // 0..3, or 6: no zero runs
    int wdiv = 0;  // 0..5, or 7: uncompressed
    bool truncated = false;
    bool new_palette = true;
    int direct_offset = 0;
    std::vector<int> palette;    // sign-folded values
    int palette_bits = 2;        // PALBITS + 2
    std::vector<int> symbols;    // palette indices, or direct symbols past the palette
    std::vector<int> zero_runs;  // zero runs on: one per symbol, plus a leading one with a new palette

    bool zero_runs_on() const { return zdiv != 6; }
    size_t zero_run_count() const { return zero_runs_on() ? symbols.size() + (new_palette ? 1 : 0) : 0; }
};

// The palette in force for a slice (a slice without NEWPAL reuses the previous one).
struct PaletteState {
    std::vector<int> entries;
    int bits = 2;
    int direct_offset = 0;
};

int remainder_width(const SliceSpec& s, const PaletteState& p);
void write_header(BitWriter& w, const SliceSpec& s);
void write_slice(BitWriter& w, const SliceSpec& s, PaletteState& palette);

// A signed weight as the stream's sign-folded symbol: sign in bit 0.
int fold(int value);

// Vela's U55/U65 weight order for one core's stream, transcribed from the loop nest of
// docs/spec-sources.md section 2 (regor ethos_u55_weight_encoder.cpp): positions (o, y, x, i)
// in stream channels, o = -1 for padding.
struct OrderSpec {
    bool depthwise = false, part_kernel = false;
    int ofm_depth = 0, kernel_h = 1, kernel_w = 1, ifm_depth = 1;
    int ofm_block = 8, ifm_bits = 8, dilation_x = 1, dilation_y = 1;
    int ofm_micro = 8;
};

std::vector<std::array<int, 4>> vela_order(const OrderSpec& p);

// Values as uncompressed 9-bit direct symbols, in slices of at most 32768, ended as Vela ends a stream.
std::vector<uint8_t> encode_values(const std::vector<int16_t>& values);

}  // namespace ethosu::test_support
