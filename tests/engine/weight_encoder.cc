#include "tests/engine/weight_encoder.h"

#include <algorithm>
#include <bit>

namespace ethosu::test_support {

int remainder_width(const SliceSpec& s, const PaletteState& p) {
    if (s.wdiv != 7) return s.wdiv;
    return p.entries.empty() ? p.bits : std::bit_width(p.entries.size() - 1);
}

namespace {

// One unary position of a weight quotient: code 0, 1 or 2; the last one ends the symbol.
struct UnaryCode {
    int code;
    bool ends_symbol;
};

std::vector<UnaryCode> weight_codes(const SliceSpec& s, int width) {
    std::vector<UnaryCode> codes;
    for (int symbol : s.symbols) {
        int q = symbol >> width;
        if (s.truncated) {
            codes.push_back({q, true});  // truncated slices keep quotients at most 2
            continue;
        }
        for (; q >= 2; q -= 2) codes.push_back({2, false});
        codes.push_back({q, true});
    }
    return codes;
}

std::vector<bool> zero_unary_bits(const SliceSpec& s) {
    std::vector<bool> bits;
    for (int run : s.zero_runs) {
        bits.insert(bits.end(), static_cast<size_t>(run >> s.zdiv), true);
        bits.push_back(false);
    }
    return bits;
}

}  // namespace

void write_header(BitWriter& w, const SliceSpec& s) {
    w.put(static_cast<uint64_t>(s.zdiv), 3);
    w.put(s.symbols.size() - 1, 15);
    w.put(static_cast<uint64_t>(s.wdiv), 3);
    w.put(s.truncated, 1);
    w.put(s.new_palette, 1);
    if (!s.new_palette) return;
    w.put(static_cast<uint64_t>(s.direct_offset), 5);
    w.put(s.palette.empty() ? 0 : s.palette.size() - 1, 5);
    w.put(static_cast<uint64_t>(s.palette_bits - 2), 3);
    for (int e : s.palette) w.put(static_cast<uint64_t>(e), s.palette_bits);
}

void write_slice(BitWriter& w, const SliceSpec& s, PaletteState& palette) {
    if (s.new_palette) palette = {s.palette, s.palette_bits, s.direct_offset};
    write_header(w, s);
    const bool uncompressed = s.wdiv == 7;
    const int width = remainder_width(s, palette);
    const std::vector<UnaryCode> codes = weight_codes(s, width);
    const std::vector<bool> zero_bits = zero_unary_bits(s);
    const int n = static_cast<int>(s.symbols.size()), zn = static_cast<int>(s.zero_run_count());
    const int zero_width = s.zdiv < 3 ? 12 : 8;
    size_t next_code = 0, next_zero_bit = 0;
    int weights_started = 0, zeros_started = 0;
    std::vector<int> previous_weights, previous_zeros;
    while (true) {
        const int balance = s.zero_runs_on() ? weights_started - zeros_started : 0;
        const bool weights_on = (balance < 8 || !s.zero_runs_on()) && weights_started < n;
        const bool zeros_on = s.zero_runs_on() && balance >= 0 && zeros_started < zn;
        std::vector<int> current_weights, current_zeros;
        std::vector<int> second_bits;
        if (weights_on && uncompressed) {
            for (int i = 0; i < (width > 5 ? 8 : 12); ++i) current_weights.push_back(weights_started++);
        } else if (weights_on) {
            uint32_t unary0 = 0;
            for (int i = 0; i < 12; ++i, ++next_code) {
                const UnaryCode c = next_code < codes.size() ? codes[next_code] : UnaryCode{0, true};
                if (c.code > 0) {
                    unary0 |= 1u << i;
                    second_bits.push_back(c.code == 2);
                }
                if (c.ends_symbol) current_weights.push_back(weights_started++);
            }
            w.put(unary0, 12);
        }
        if (zeros_on) {
            uint32_t unary = 0;
            for (int i = 0; i < zero_width; ++i, ++next_zero_bit) {
                const bool one = next_zero_bit < zero_bits.size() && zero_bits[next_zero_bit];
                unary |= static_cast<uint32_t>(one) << i;
                if (!one) current_zeros.push_back(zeros_started++);
            }
            w.put(unary, zero_width);
        }
        for (bool b : second_bits) w.put(b, 1);
        for (int i : previous_weights)
            if (i < n) w.put(static_cast<uint64_t>(s.symbols[static_cast<size_t>(i)]) & ((1u << width) - 1), width);
        for (int i : previous_zeros)
            if (i < zn)
                w.put(static_cast<uint64_t>(s.zero_runs[static_cast<size_t>(i)]) & ((1u << s.zdiv) - 1), s.zdiv);
        if (!weights_on && !zeros_on) break;
        previous_weights = current_weights;
        previous_zeros = current_zeros;
    }
}

int fold(int value) { return value < 0 ? (-value << 1) | 1 : value << 1; }

std::vector<std::array<int, 4>> vela_order(const OrderSpec& p) {
    std::vector<std::array<int, 4>> order;
    const int ifm_block = p.part_kernel || p.ifm_bits == 16 ? 16 : 32;
    const int round = p.depthwise ? 4 : p.part_kernel ? (p.ifm_bits == 16 ? 2 : 4) : 1;
    const int ifm_limit = p.depthwise ? 1 : p.ifm_depth;
    for (int ob = 0; ob < p.ofm_depth; ob += p.ofm_block)
        for (int ib = 0; ib < ifm_limit; ib += ifm_block) {
            const int ib_len = p.depthwise ? 8 : p.part_kernel ? std::min(ifm_block, p.ifm_depth - ib) : ifm_block;
            for (int sy = 0; sy < p.kernel_h; sy += 8 / p.dilation_y)
                for (int sx = 0; sx < p.kernel_w; sx += 8 / p.dilation_x) {
                    const int h = std::min(p.kernel_h - sy, 8 / p.dilation_y);
                    const int w = std::min(p.kernel_w - sx, 8 / p.dilation_x);
                    const int elements = (w * h + round - 1) / round * round;
                    for (int iu_outer = 0; iu_outer < (p.part_kernel ? ib_len : 1); iu_outer += 8)
                        for (int ou = 0; ou < std::min(p.ofm_block, p.ofm_depth - ob); ou += p.ofm_micro)
                            for (int e = 0; e < elements; ++e)
                                for (int iu_inner = 0; iu_inner < (p.part_kernel ? 1 : ib_len); iu_inner += 8)
                                    for (int oz = 0; oz < p.ofm_micro; ++oz)
                                        for (int iz = 0; iz < (p.depthwise ? 1 : 8); ++iz) {
                                            const int o = ob + ou + oz, i = ib + iu_outer + iu_inner + iz;
                                            const bool real = o < p.ofm_depth && i < ifm_limit && e / w < h;
                                            order.push_back({real ? o : -1, sy + e / w, sx + e % w, i});
                                        }
                }
        }
    return order;
}

std::vector<uint8_t> encode_values(const std::vector<int16_t>& values) {
    BitWriter w;
    PaletteState palette;
    for (size_t first = 0; first < values.size(); first += 32768) {
        SliceSpec s;
        s.wdiv = 7;
        s.palette_bits = 9;
        s.new_palette = first == 0;
        for (size_t k = first; k < std::min(values.size(), first + 32768); ++k) s.symbols.push_back(fold(values[k]));
        write_slice(w, s, palette);
    }
    w.end_stream();
    return w.bytes();
}

}  // namespace ethosu::test_support
