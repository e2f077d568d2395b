// Weight and scale/bias stream decoding: hand-built bitstreams for every slice-header case,
// hostile streams, and every kernel op of the corpus against the original model's weights.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "emulator/engine/executor.h"
#include "emulator/engine/weights.h"
#include "emulator/isa/decoder.h"
#include "emulator/isa/error.h"
#include "frontend/loaders/model.h"
#include "tests/config_test_name.h"
#include "tests/engine/tflite_kernel_ops.h"
#include "tests/engine/weight_encoder.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

using namespace test_support;

// ---------------------------------------------------------------------------------------------
// Streams from the encoder in weight_encoder.h, with the values they should decode to.

// What a slice decodes to, straight from the definition.
void expected_values(const SliceSpec& s, const PaletteState& p, std::vector<int16_t>& out) {
    auto zeros = [&](size_t i) { out.insert(out.end(), static_cast<size_t>(s.zero_runs[i]), int16_t{0}); };
    if (s.zero_runs_on() && s.new_palette) zeros(0);
    for (size_t i = 0; i < s.symbols.size(); ++i) {
        const int symbol = s.symbols[i];
        const int palette_size = static_cast<int>(p.entries.size());
        const int folded =
            symbol < palette_size ? p.entries[static_cast<size_t>(symbol)] : symbol - palette_size + p.direct_offset;
        out.push_back(static_cast<int16_t>(folded & 1 ? -(folded >> 1) : folded >> 1));
        if (s.zero_runs_on()) zeros(i + (s.new_palette ? 1 : 0));
    }
}

struct EncodedStream {
    std::vector<uint8_t> bytes;
    std::vector<int16_t> values;
};

// Slices in order; a slice spec with no symbols stands for an end-of-stream marker mid-stream.
EncodedStream encode(const std::vector<SliceSpec>& slices) {
    BitWriter w;
    EncodedStream out;
    PaletteState palette;
    for (const SliceSpec& s : slices) {
        if (s.symbols.empty()) {
            w.put(7, 3);
            w.align_with_ones();
            continue;
        }
        write_slice(w, s, palette);
        expected_values(s, palette, out.values);
    }
    w.end_stream();
    out.bytes = w.bytes();
    return out;
}

std::vector<int16_t> decode(const std::vector<uint8_t>& bytes) { return decode_weight_bitstream(bytes, "test", 0); }


// ---------------------------------------------------------------------------------------------
// Hand-built slices: every header case.

TEST(WeightBitstream, DirectSymbolsForEveryWeightDivisor) {
    for (int wdiv = 0; wdiv <= 5; ++wdiv) {
        SliceSpec s;
        s.wdiv = wdiv;
        s.direct_offset = 3;
        for (int v = -40; v <= 40; v += 3) s.symbols.push_back(std::max(fold(v) - 3, 0));
        const EncodedStream e = encode({s});
        EXPECT_EQ(decode(e.bytes), e.values) << "WDIV " << wdiv;
        EXPECT_EQ(e.bytes.size() % 16, 0u);
    }
}

TEST(WeightBitstream, DirectOffsetShiftsSymbols) {
    SliceSpec s;
    s.direct_offset = 31;
    s.symbols = {0, 1, 2, 10};  // folded 31, 32, 33, 41
    const EncodedStream e = encode({s});
    EXPECT_EQ(decode(e.bytes), (std::vector<int16_t>{-15, 16, -16, -20}));
}

TEST(WeightBitstream, PaletteIndicesAndDirectSymbolsPastThePalette) {
    SliceSpec s;
    s.wdiv = 1;
    s.palette = {fold(-7), fold(100), fold(0), fold(-128)};
    s.palette_bits = 9;
    s.direct_offset = 5;
    s.symbols = {0, 1, 2, 3, 4, 9, 3, 0};  // 4 -> folded 5, 9 -> folded 10
    const EncodedStream e = encode({s});
    EXPECT_EQ(decode(e.bytes), (std::vector<int16_t>{-7, 100, 0, -128, -2, 5, -128, -7}));
}

TEST(WeightBitstream, ZeroRunsForEveryZeroDivisor) {
    for (int zdiv : {0, 1, 2, 3}) {
        SliceSpec s;
        s.zdiv = zdiv;
        s.wdiv = 2;
        s.palette = {fold(1), fold(-1), fold(5)};
        s.palette_bits = 4;
        s.symbols = {0, 1, 2, 2, 1, 0, 5, 7, 0, 0, 1, 1, 2};
        s.zero_runs = {4, 0, 1, 30, 0, 0, 2, 9, 0, 64, 3, 0, 0, 17};  // leading run first
        const EncodedStream e = encode({s});
        EXPECT_EQ(decode(e.bytes), e.values) << "ZDIV " << zdiv;
        EXPECT_EQ(e.values.size(), 13u + 4 + 1 + 30 + 2 + 9 + 64 + 3 + 17);
    }
}

TEST(WeightBitstream, ZeroRunsThrottleLongWeightSequences) {
    // Many weights with no zeros between them: the flow control lets the weights run at most 8
    // symbols ahead of the zero runs, so chunks alternate with one side disabled.
    SliceSpec s;
    s.zdiv = 3;
    s.wdiv = 0;
    for (int i = 0; i < 200; ++i) s.symbols.push_back(i % 7 == 0 ? 60 : i % 3);
    s.zero_runs.assign(201, 0);
    s.zero_runs[100] = 500;
    const EncodedStream e = encode({s});
    EXPECT_EQ(decode(e.bytes), e.values);
}

TEST(WeightBitstream, TruncatedQuotients) {
    SliceSpec s;
    s.wdiv = 3;
    s.truncated = true;
    s.symbols = {0, 7, 8, 15, 16, 23, 1, 22};  // quotients 0..2 only
    const EncodedStream e = encode({s});
    EXPECT_EQ(decode(e.bytes), e.values);
    // The same symbols untruncated take a different stream and decode alike.
    s.truncated = false;
    const EncodedStream plain = encode({s});
    EXPECT_NE(plain.bytes, e.bytes);
    EXPECT_EQ(decode(plain.bytes), e.values);
}

TEST(WeightBitstream, UncompressedWithPaletteUsesIndexWidth) {
    for (int palette_size : {2, 3, 5, 17, 32}) {
        SliceSpec s;
        s.wdiv = 7;
        s.palette_bits = 9;
        for (int i = 0; i < palette_size; ++i) s.palette.push_back(fold(i * 7 - 50));
        for (int i = 0; i < 50; ++i) s.symbols.push_back((i * 11) % palette_size);
        const EncodedStream e = encode({s});
        EXPECT_EQ(decode(e.bytes), e.values) << palette_size << " entries";
    }
}

TEST(WeightBitstream, UncompressedWithoutPaletteUsesPaletteBits) {
    // Widths above 5 bits carry 8 symbols per chunk instead of 12.
    for (int bits = 2; bits <= 9; ++bits) {
        SliceSpec s;
        s.wdiv = 7;
        s.palette_bits = bits;
        for (int i = 0; i < 41; ++i) s.symbols.push_back((i * 37) % (1 << bits));
        const EncodedStream e = encode({s});
        EXPECT_EQ(decode(e.bytes), e.values) << bits << " bits";
    }
}

TEST(WeightBitstream, UncompressedWithZeroRuns) {
    SliceSpec s;
    s.wdiv = 7;
    s.zdiv = 1;
    s.palette = {fold(3), fold(-3), fold(9)};
    s.palette_bits = 5;
    for (int i = 0; i < 30; ++i) s.symbols.push_back(i % 3), s.zero_runs.push_back(i % 4);
    s.zero_runs.push_back(6);
    const EncodedStream e = encode({s});
    EXPECT_EQ(decode(e.bytes), e.values);
}

TEST(WeightBitstream, LaterSliceReusesThePalette) {
    SliceSpec first;
    first.zdiv = 0;
    first.wdiv = 1;
    first.palette = {fold(4), fold(-9)};
    first.palette_bits = 5;
    first.symbols = {0, 1, 1, 0};
    first.zero_runs = {1, 0, 2, 0, 3};
    SliceSpec second = first;
    second.new_palette = false;
    second.zdiv = 2;
    second.symbols = {1, 1, 0, 2};    // 2: first direct symbol (offset 0)
    second.zero_runs = {5, 0, 0, 1};  // no leading run without a new palette
    const EncodedStream e = encode({first, second});
    EXPECT_EQ(decode(e.bytes), (std::vector<int16_t>{0, 4, -9, 0, 0, -9, 4, 0, 0, 0, -9, 0, 0, 0, 0, 0, -9, 4, 0, 0}));
}

TEST(WeightBitstream, EndOfStreamMidwayNeedsANewPalette) {
    SliceSpec a;
    a.symbols = {2, 3};
    const SliceSpec eos;
    SliceSpec b;
    b.wdiv = 4;
    b.direct_offset = 1;
    b.symbols = {100, 0};
    const EncodedStream e = encode({a, eos, b});
    EXPECT_EQ(decode(e.bytes), (std::vector<int16_t>{1, -1, -50, 0}));

    b.new_palette = false;
    EXPECT_THROW(decode(encode({a, eos, b}).bytes), Error);
}

TEST(WeightBitstream, EmptyAndPaddingOnlyStreamsDecodeToNothing) {
    EXPECT_TRUE(decode({}).empty());
    EXPECT_TRUE(decode(std::vector<uint8_t>(16, 0xFF)).empty());
}

TEST(WeightBitstream, LongestSlice) {
    SliceSpec s;
    s.wdiv = 2;
    for (int i = 0; i < 32768; ++i) s.symbols.push_back(i % 13);
    const EncodedStream e = encode({s});
    EXPECT_EQ(decode(e.bytes), e.values);
}

// Random slices over the whole header space: palette or not, reuse, zero runs, divisors, truncation.
SliceSpec random_slice(std::mt19937& rng, const SliceSpec* previous, int longest = 3000) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    SliceSpec s;
    s.new_palette = !previous || pick(0, 2) != 0;
    if (s.new_palette) {
        s.zdiv = std::array{0, 1, 2, 3, 6}[static_cast<size_t>(pick(0, 4))];
        s.palette_bits = pick(2, 9);
        s.direct_offset = pick(0, 31);
        const int palette_size = pick(0, 3) == 0 ? 0 : pick(2, 32);
        for (int i = 0; i < palette_size; ++i) s.palette.push_back(pick(0, (1 << s.palette_bits) - 1));
    } else {
        s.zdiv = previous->zero_runs_on() ? pick(0, 3) : 6;  // the zero-run mode stays with the palette
        s.palette = previous->palette;
        s.palette_bits = previous->palette_bits;
        s.direct_offset = previous->direct_offset;
    }
    s.wdiv = pick(0, 6) == 6 ? 7 : pick(0, 5);
    const PaletteState p{s.palette, s.palette_bits, s.direct_offset};
    const bool uncompressed = s.wdiv == 7;
    const int width = remainder_width(s, p);
    const int palette_size = static_cast<int>(p.entries.size());
    // Largest symbol that stays within 9 bits, as does the folded value it stands for.
    const int max_symbol = !uncompressed  ? std::min(511, palette_size + 511 - p.direct_offset)
                           : palette_size ? palette_size - 1
                                          : std::min((1 << width) - 1, 511 - p.direct_offset);
    s.truncated = s.wdiv != 7 && pick(0, 3) == 0;
    const int limit = s.truncated ? std::min(max_symbol, (3 << width) - 1) : max_symbol;
    const int count = pick(0, 5) == 0 ? pick(std::min(100, longest), longest) : pick(1, 60);
    for (int i = 0; i < count; ++i) s.symbols.push_back(pick(0, 2) == 0 ? pick(0, limit) : pick(0, std::min(limit, 8)));
    for (size_t i = 0; i < s.zero_run_count(); ++i) s.zero_runs.push_back(pick(0, 4) == 0 ? pick(0, 300) : pick(0, 2));
    return s;
}

TEST(WeightBitstream, RandomStreamsRoundTrip) {
    std::mt19937 rng(1234);
    for (int trial = 0; trial < 300; ++trial) {
        std::vector<SliceSpec> slices;
        const int n = std::uniform_int_distribution<int>(1, 5)(rng);
        for (int i = 0; i < n; ++i) slices.push_back(random_slice(rng, i ? &slices.back() : nullptr));
        const EncodedStream e = encode(slices);
        ASSERT_EQ(decode(e.bytes), e.values) << "trial " << trial;
    }
}

// ---------------------------------------------------------------------------------------------
// Invalid headers and hostile streams.

ErrorLocation error_of(const std::vector<uint8_t>& bytes, uint64_t base = 0x100) {
    try {
        decode_weight_bitstream(bytes, "hostile", base);
    } catch (const Error& e) {
        return e.where();
    }
    ADD_FAILURE() << "no error";
    return {};
}

TEST(WeightBitstream, InvalidHeadersNameFieldAndOffset) {
    BitWriter w;
    w.put(4, 3);  // ZDIV 4 and 5 are reserved
    EXPECT_EQ(error_of(w.bytes()).field, "ZDIV");
    EXPECT_EQ(error_of(w.bytes()).offset, 0x100u);

    SliceSpec s;
    s.symbols = {1};
    s.wdiv = 6;  // WDIV 6 is reserved
    BitWriter w6;
    write_header(w6, s);
    w6.put(0, 32);
    EXPECT_EQ(error_of(w6.bytes()).field, "WDIV");

    s.wdiv = 0;
    s.new_palette = false;  // the first slice must set up a palette
    BitWriter np;
    write_header(np, s);
    np.put(0, 32);
    EXPECT_EQ(error_of(np.bytes()).field, "NEWPAL");
}

TEST(WeightBitstream, ZeroRunModeChangeNeedsANewPalette) {
    SliceSpec first;
    first.symbols = {1, 2};
    SliceSpec second = first;
    second.new_palette = false;
    second.zdiv = 0;
    second.zero_runs = {0, 0};
    BitWriter w;
    PaletteState p;
    write_slice(w, first, p);
    write_slice(w, second, p);
    w.end_stream();
    EXPECT_EQ(error_of(w.bytes()).field, "ZDIV");
}

TEST(WeightBitstream, SymbolsBeyondNineBitsAreRefused) {
    SliceSpec s;
    s.direct_offset = 10;
    s.symbols = {502};  // folded 512
    EXPECT_EQ(error_of(encode({s}).bytes).field, "WREMAIN");
}

// An uncompressed 9-bit slice without a palette: 36 header bits (ZDIV 3, SLICELEN 15, WDIV 3,
// WTRUNC 1, NEWPAL 1, DIROFS 5, PALSIZE 5, PALBITS 3), then the symbols one after another.
SliceSpec plain_9_bit_slice(int direct_offset) {
    SliceSpec s;
    s.wdiv = 7;
    s.palette_bits = 9;
    s.direct_offset = direct_offset;
    for (int i = 0; i < 100; ++i) s.symbols.push_back((i * 37) % 400);
    return s;
}
constexpr uint64_t kPlainHeaderBits = 36;

TEST(WeightBitstream, UncompressedSliceCutShortNamesTheSymbolWhereItEnds) {
    const std::vector<uint8_t> bytes = encode({plain_9_bit_slice(0)}).bytes;
    for (uint64_t cut = 5; cut * 8 < kPlainHeaderBits + 100 * 9; ++cut) {
        const uint64_t complete = (cut * 8 - kPlainHeaderBits) / 9;  // symbols before the one cut
        const ErrorLocation where =
            error_of(std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut)));
        EXPECT_EQ(where.field, "WREMAIN") << cut << " bytes";
        EXPECT_EQ(where.offset, 0x100 + (kPlainHeaderBits + complete * 9) / 8) << cut << " bytes";
    }
}

TEST(WeightBitstream, UncompressedSymbolBeyondNineBitsIsRefusedAtTheSliceEnd) {
    SliceSpec s = plain_9_bit_slice(10);
    s.symbols[3] = 502;  // folded 512
    const ErrorLocation where = error_of(encode({s}).bytes);
    EXPECT_EQ(where.field, "WREMAIN");
    EXPECT_EQ(where.offset, 0x100 + (kPlainHeaderBits + 100 * 9) / 8);
}

TEST(WeightBitstream, EveryTruncationIsAnErrorOrThePaddingOnly) {
    std::mt19937 rng(77);
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<SliceSpec> slices;
        for (int i = 0; i < 3; ++i) slices.push_back(random_slice(rng, i ? &slices.back() : nullptr, 300));
        const EncodedStream e = encode(slices);
        for (size_t cut = 0; cut < e.bytes.size(); ++cut) {
            const std::vector<uint8_t> head(e.bytes.begin(), e.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
            try {
                const auto values = decode(head);
                // Only a cut on a byte boundary between slices or in the padding decodes cleanly.
                ASSERT_LE(values.size(), e.values.size());
                ASSERT_TRUE(std::equal(values.begin(), values.end(), e.values.begin()));
            } catch (const Error& err) {
                ASSERT_LE(*err.where().offset, cut) << "error offset past the end";
            }
        }
    }
}

TEST(WeightBitstream, GarbageNeverCrashesOrHangs) {
    std::mt19937 rng(99);
    int errors = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        std::vector<uint8_t> bytes(std::uniform_int_distribution<size_t>(0, 256)(rng));
        for (auto& b : bytes) b = static_cast<uint8_t>(rng());
        try {
            decode_weight_bitstream(bytes, "garbage", 0);
        } catch (const Error&) {
            ++errors;
        }
    }
    EXPECT_GT(errors, 2900);  // random bytes end inside a slice or break a header nearly always
}

// ---------------------------------------------------------------------------------------------
// Whole ops built by hand: configurations and shapes the corpus lacks (dual-core U65-512, the
// 4-deep OFM micro-block of U55-32, kernels split into 8x8 sub-kernels).

int16_t test_weight(int o, int y, int x, int i) {
    return static_cast<int16_t>((o * 37 + y * 11 + x * 5 + i * 3) % 255 - 127);
}

struct HandBuiltOp {
    DecodedOp op;
    std::vector<uint8_t> memory;  // every stream, at the bases the op names
    std::span<const uint8_t> fetch(const Stream& s) const {
        return std::span<const uint8_t>(memory).subspan(s.base, s.length);
    }
};

void append_stream(HandBuiltOp& h, std::vector<Stream>& streams, const std::vector<uint8_t>& bytes) {
    streams.push_back({0, h.memory.size(), bytes.size()});
    h.memory.insert(h.memory.end(), bytes.begin(), bytes.end());
}

// Scale records of the channels a core owns; the bias spans the full signed 40 bits.
std::vector<uint8_t> scale_records(int ofm_depth, int stream, int streams) {
    std::vector<uint8_t> bytes;
    for (int c = stream; c < ofm_depth; c += streams) {
        const int64_t bias = (c % 2 ? -1 : 1) * ((int64_t{1} << 38) + c);
        const uint32_t scale = 0x80000000u + static_cast<uint32_t>(c);
        for (int b = 0; b < 5; ++b) bytes.push_back(static_cast<uint8_t>(bias >> (8 * b)));
        for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(scale >> (8 * b)));
        bytes.push_back(static_cast<uint8_t>(0xC0 | (c % 64)));  // the top two bits are not the shift
    }
    bytes.resize((bytes.size() + 15) / 16 * 16);
    return bytes;
}

HandBuiltOp build_op(const OrderSpec& shape, const NpuConfig& config) {
    HandBuiltOp h;
    DecodedOp& op = h.op;
    op = DecodedOp(shape.depthwise ? OpKind::Depthwise : OpKind::Conv);
    op.kernel().ofm.depth = shape.ofm_depth;
    op.kernel().ifm.depth = shape.depthwise ? shape.ofm_depth : shape.ifm_depth;
    op.kernel().ifm.precision.bits = shape.ifm_bits;
    op.kernel().kernel.height = (shape.kernel_h - 1) * shape.dilation_y + 1;
    op.kernel().kernel.width = (shape.kernel_w - 1) * shape.dilation_x + 1;
    op.kernel().kernel.dilation_x = shape.dilation_x;
    op.kernel().kernel.dilation_y = shape.dilation_y;
    op.kernel().kernel.part_kernel_first = shape.part_kernel;
    op.kernel().block.ofm_depth = shape.ofm_block;
    for (int s = 0; s < config.cores; ++s) {
        OrderSpec core = shape;
        core.ofm_depth = (shape.ofm_depth + config.cores - 1 - s) / config.cores;
        core.ofm_block = (shape.ofm_block + config.cores - 1 - s) / config.cores;
        core.ofm_micro = config.macs == 32 ? 4 : 8;
        std::vector<int16_t> values;
        for (const auto& [o, y, x, i] : vela_order(core))
            values.push_back(o < 0 ? 0 : test_weight(o * config.cores + s, y, x, i));
        append_stream(h, op.kernel().weights, core.ofm_depth ? encode_values(values) : std::vector<uint8_t>{});
        append_stream(h, op.kernel().scales, scale_records(shape.ofm_depth, s, config.cores));
    }
    return h;
}

void expect_decodes(const OrderSpec& shape, const char* config_name) {
    const NpuConfig config = *find_npu_config(config_name);
    const HandBuiltOp h = build_op(shape, config);
    const OpWeights w = decode_op_weights(
        h.op, config, [&](const Stream& s) { return h.fetch(s); }, "hand-built");
    ASSERT_EQ(w.ofm_depth, shape.ofm_depth);
    ASSERT_EQ(w.kernel_height, shape.kernel_h);
    ASSERT_EQ(w.kernel_width, shape.kernel_w);
    ASSERT_EQ(w.ifm_depth, shape.depthwise ? 1 : shape.ifm_depth);
    for (int o = 0; o < w.ofm_depth; ++o) {
        for (int y = 0; y < w.kernel_height; ++y)
            for (int x = 0; x < w.kernel_width; ++x)
                for (int i = 0; i < w.ifm_depth; ++i)
                    ASSERT_EQ(w.at(o, y, x, i), test_weight(o, y, x, i))
                        << config_name << " o" << o << " y" << y << " x" << x << " i" << i;
        const int64_t bias = (o % 2 ? -1 : 1) * ((int64_t{1} << 38) + o);
        EXPECT_EQ(w.bias[static_cast<size_t>(o)], bias);
        EXPECT_EQ(w.scale[static_cast<size_t>(o)], 0x80000000u + static_cast<uint32_t>(o));
        EXPECT_EQ(w.shift[static_cast<size_t>(o)], o % 64);
    }
}

TEST(OpWeights, DualCoreU65InterleavesChannelsAndSplitsTheBlock) {
    OrderSpec s;
    s.ofm_depth = 21, s.ifm_depth = 40, s.kernel_h = 3, s.kernel_w = 2, s.ofm_block = 16;
    expect_decodes(s, "ethos-u65-512");
    s.part_kernel = true, s.ofm_block = 24;
    expect_decodes(s, "ethos-u65-512");
    s.depthwise = true, s.part_kernel = false, s.ofm_block = 8;
    expect_decodes(s, "ethos-u65-512");
}

TEST(OpWeights, DualCoreWithOneChannelLeavesTheSecondStreamEmpty) {
    OrderSpec s;
    s.ofm_depth = 1, s.ifm_depth = 8, s.ofm_block = 8;
    expect_decodes(s, "ethos-u65-512");
}

TEST(OpWeights, DualCoreNeedsAnOfmBlockPerCore) {
    const NpuConfig config = *find_npu_config("ethos-u65-512");
    OrderSpec s;
    s.ofm_depth = 4, s.ifm_depth = 8, s.ofm_block = 8;
    HandBuiltOp h = build_op(s, config);
    h.op.kernel().block.ofm_depth = 1;  // the second core's share would be empty and its walk never advance
    EXPECT_THROW(decode_op_weights(
                     h.op, config, [&](const Stream& st) { return h.fetch(st); }, "hand-built"),
                 Error);
}

TEST(OpWeights, U55With32MacsUsesFourDeepOfmMicroBlocks) {
    OrderSpec s;
    s.ofm_depth = 10, s.ifm_depth = 20, s.kernel_h = 5, s.kernel_w = 3, s.ofm_block = 8, s.part_kernel = true;
    s.ifm_bits = 16;
    expect_decodes(s, "ethos-u55-32");
    s.part_kernel = false;
    expect_decodes(s, "ethos-u55-32");
    expect_decodes(s, "ethos-u55-64");
}

TEST(OpWeights, LargeAndDilatedKernelsSplitIntoSubKernels) {
    OrderSpec s;
    s.ofm_depth = 9, s.ifm_depth = 5, s.kernel_h = 7, s.kernel_w = 5, s.ofm_block = 8;
    s.dilation_x = 2, s.dilation_y = 2;
    expect_decodes(s, "ethos-u55-128");
    s.dilation_x = 1, s.kernel_w = 11, s.part_kernel = true;
    expect_decodes(s, "ethos-u55-256");
    s.depthwise = true, s.part_kernel = false, s.kernel_h = 9, s.kernel_w = 9, s.dilation_y = 1;
    expect_decodes(s, "ethos-u65-256");
}

ErrorLocation op_error(const HandBuiltOp& h, const NpuConfig& config) {
    try {
        decode_op_weights(
            h.op, config, [&](const Stream& s) { return h.fetch(s); }, "hand-built");
    } catch (const Error& e) {
        return e.where();
    }
    ADD_FAILURE() << "no error";
    return {};
}

TEST(OpWeights, StreamsThatDoNotFitTheShapeAreRefused) {
    const NpuConfig config = *find_npu_config("ethos-u55-128");
    OrderSpec shape;
    shape.ofm_depth = 16, shape.ifm_depth = 8, shape.kernel_h = 3, shape.kernel_w = 3, shape.ofm_block = 16;
    HandBuiltOp h = build_op(shape, config);
    h.op.offset = 0x40;

    HandBuiltOp deeper = h;
    deeper.op.kernel().ofm.depth = 24;  // more channels than the stream holds
    EXPECT_EQ(op_error(deeper, config).field, "WEIGHT_BASE");
    EXPECT_EQ(op_error(deeper, config).offset, 0x40u);

    HandBuiltOp shallower = h;
    shallower.op.kernel().ofm.depth = 8;  // the stream runs past what the op needs
    EXPECT_EQ(op_error(shallower, config).field, "WEIGHT_BASE");

    HandBuiltOp huge = h;  // registers asking for 2^64 weights: refused before anything is sized from them
    huge.op.kernel().ofm.depth = huge.op.kernel().ifm.depth = huge.op.kernel().kernel.height = huge.op.kernel().kernel.width = 65536;
    EXPECT_EQ(op_error(huge, config).field, "WEIGHT_BASE");

    HandBuiltOp short_scales = h;
    short_scales.op.kernel().scales[0].length = 150;  // 16 channels need 160 bytes
    EXPECT_EQ(op_error(short_scales, config).field, "SCALE_LENGTH");

    HandBuiltOp pool = h;
    pool.op.kind = OpKind::Pool;
    pool.op.kernel().parts = PoolMode::Max;
    EXPECT_EQ(op_error(pool, config).field, "pool");
}

// The weight cache decodes ahead from the bytes a DMA will copy; an op that reads other bytes
// than predicted (here: the DMA never ran) gets its own bytes decoded, not the prediction. The
// same holds for a cache that borrows the read-only source instead of copying it, within a run or
// across runs on one memory.
class WeightCacheKinds : public ::testing::TestWithParam<WeightCache::Lifetime> {};

TEST_P(WeightCacheKinds, PrefetchIsCheckedAgainstTheBytesTheOpReads) {
    const NpuConfig config = *find_npu_config("ethos-u55-128");
    OrderSpec shape;
    shape.ofm_depth = 16, shape.ifm_depth = 32, shape.ofm_block = 16;
    const HandBuiltOp h = build_op(shape, config);
    std::vector<uint8_t> source = h.memory, staged = h.memory;
    staged[h.op.kernel().weights[0].base + 12] ^= 0x10;  // one 9-bit direct symbol: a different weight

    MemoryMap map;
    map.map_read_only(uint64_t{1} << 28, source, "flash");
    map.map(uint64_t{2} << 28, staged, "sram");
    AddressSpace space(map);
    space.set_base(0, uint64_t{1} << 28);
    space.set_base(1, uint64_t{2} << 28);

    DecodedStream stream;
    DecodedOp& dma = stream.ops.emplace_back(OpKind::DmaStart);
    dma.dma().src = {0, false, 0};
    dma.dma().dst = {1, false, 0};
    dma.dma().length = source.size();
    DecodedOp& conv = stream.ops.emplace_back(h.op);
    conv.offset = 0x10;
    for (auto* streams : {&conv.kernel().weights, &conv.kernel().scales})
        for (Stream& st : *streams) st.region = 1;

    WeightCache cache(GetParam());
    cache.prefetch(stream.ops, config, space, "hand-built");
    const OpWeights& used = cache.get(stream.ops[1], config, space, "hand-built");
    const auto fetch_from = [&](const std::vector<uint8_t>& bytes) {
        return [&bytes](const Stream& st) { return std::span<const uint8_t>(bytes).subspan(st.base, st.length); };
    };
    const OpWeights from_staged = decode_op_weights(stream.ops[1], config, fetch_from(staged), "hand-built");
    const OpWeights from_source = decode_op_weights(stream.ops[1], config, fetch_from(source), "hand-built");
    ASSERT_NE(from_staged.values, from_source.values);
    EXPECT_EQ(used.values, from_staged.values);
    // Once the bytes are the predicted ones, the op gets the prefetched decode.
    staged = source;
    EXPECT_EQ(cache.get(stream.ops[1], config, space, "hand-built").values, from_source.values);
}

INSTANTIATE_TEST_SUITE_P(CopyingAndBorrowing, WeightCacheKinds,
                         ::testing::Values(WeightCache::Lifetime::OneRun, WeightCache::Lifetime::RunsOnOneMemory,
                                           WeightCache::Lifetime::RunsOnFreshMemory));

// ---------------------------------------------------------------------------------------------
// The corpus: every kernel op Vela emitted, decoded and compared with the original model.

using tflite_reference::ReferenceKernelOp;

// Region images as the command stream leaves them: Vela stages weights into SRAM with DMA
// before the op that reads them, so the DMA copies are replayed in stream order.
class RegionImages {
public:
    explicit RegionImages(const NpuInvocation& invocation) {
        for (const RegionImage& r : invocation.regions) {
            auto& image = images_[r.index];
            image.assign(r.bytes.begin(), r.bytes.end());
            image.resize(std::max<uint64_t>(r.size, r.bytes.size()));
        }
    }
    std::span<const uint8_t> bytes(int region, uint64_t offset, uint64_t length) const {
        const auto it = images_.find(region);
        if (it == images_.end() || offset > it->second.size() || length > it->second.size() - offset) {
            throw std::runtime_error(fmt::format("[0x{:x}, +{}) is outside region {}", offset, length, region));
        }
        return std::span<const uint8_t>(it->second).subspan(offset, length);
    }
    void copy(const Dma& d) {
        if (d.src.internal || d.dst.internal || d.length == 0) return;  // LUT loads into SHRAM
        if (d.dimensions != 1) throw std::runtime_error("multi-dimensional DMA");
        const auto from = bytes(d.src.region, d.src.address, d.length);
        const std::vector<uint8_t> staged(from.begin(), from.end());
        bytes(d.dst.region, d.dst.address, d.length);  // bounds check
        std::copy(staged.begin(), staged.end(),
                  images_[d.dst.region].begin() + static_cast<std::ptrdiff_t>(d.dst.address));
    }

private:
    std::map<int, std::vector<uint8_t>> images_;
};

struct CorpusOp {
    NpuConfig config;
    DecodedOp op;
    OpWeights weights;
    std::vector<uint8_t> weight_stream, scale_stream;  // the first core's, as the op found them
    std::vector<std::vector<uint8_t>> weight_streams;  // every core's / weight decoder's
};

// Decodes the weights of every CONV / DEPTHWISE op of every NPU invocation of a Vela output.
std::vector<CorpusOp> decode_corpus_ops(const std::string& path) {
    const auto model = load_model(path, {});
    std::vector<CorpusOp> out;
    for (const NpuInvocation& invocation : model->invocations) {
        RegionImages images(invocation);
        const auto stream = decode_stream(model->config, invocation.stream.words, path);
        const StreamFetch fetch = [&](const Stream& s) { return images.bytes(s.region, s.base, s.length); };
        for (const DecodedOp& op : stream.ops) {
            if (op.kind == OpKind::DmaStart) images.copy(op.dma());
            if (op.kind != OpKind::Conv && op.kind != OpKind::Depthwise) continue;
            const auto weight_stream = fetch(op.kernel().weights[0]);
            const auto scale_stream = op.kernel().scales.empty() ? std::span<const uint8_t>{} : fetch(op.kernel().scales[0]);
            std::vector<std::vector<uint8_t>> weight_streams;
            for (const Stream& w : op.kernel().weights) {
                const auto bytes = fetch(w);
                weight_streams.emplace_back(bytes.begin(), bytes.end());
            }
            out.push_back({model->config,
                           op,
                           decode_op_weights(op, model->config, fetch, path),
                           {weight_stream.begin(), weight_stream.end()},
                           {scale_stream.begin(), scale_stream.end()},
                           std::move(weight_streams)});
        }
    }
    return out;
}

// A depthwise operator over a single IFM channel (depth multiplier = OFM depth) is a CONV with
// IFM depth 1 to Vela; both lay their weights out alike.
bool same_shape(const OpWeights& w, const DecodedOp& op, const ReferenceKernelOp& r) {
    const bool depthwise = op.kind == OpKind::Depthwise;
    const bool reference_depthwise = r.kind == tflite_reference::KernelOpKind::Depthwise;
    const bool same_kind = depthwise == reference_depthwise || (reference_depthwise && w.ifm_depth == 1);
    return same_kind && w.kernel_height == r.kernel_height && w.kernel_width == r.kernel_width &&
           w.ifm_depth == r.ifm_depth && w.ofm_depth <= r.ofm_depth;
}

bool weights_match_at(const OpWeights& w, const ReferenceKernelOp& r, int first_channel) {
    const size_t per_channel = static_cast<size_t>(w.kernel_height) * w.kernel_width * w.ifm_depth;
    return std::equal(w.values.begin(), w.values.end(),
                      r.weights.begin() + static_cast<std::ptrdiff_t>(first_channel * per_channel));
}

// Where an NPU op's weights sit in the original model: the operator and the first OFM channel
// (Vela splits an operator along OFM depth into several NPU ops).
struct Placement {
    const ReferenceKernelOp* reference = nullptr;
    int first_channel = 0;
};

Placement place(const CorpusOp& c, const std::vector<ReferenceKernelOp>& references) {
    for (const ReferenceKernelOp& r : references) {
        if (!same_shape(c.weights, c.op, r)) continue;
        for (int first = 0; first + c.weights.ofm_depth <= r.ofm_depth; ++first)
            if (weights_match_at(c.weights, r, first)) return {&r, first};
    }
    return {};
}

// Compares bias, scale and shift channel by channel; empty if they all agree.
std::string compare_scales(const OpWeights& w, const ReferenceKernelOp& r, int first) {
    std::string diff;
    for (size_t c = 0; c < static_cast<size_t>(w.ofm_depth) && diff.size() < 300; ++c) {
        const size_t o = static_cast<size_t>(first) + c;
        const tflite_reference::QuantizedScale got{w.scale[c], w.shift[c]};
        if (w.bias[c] != r.bias[o]) diff += fmt::format(" channel {} bias {} vs {};", o, w.bias[c], r.bias[o]);
        if (!(got == r.scales[o])) {
            diff += fmt::format(" channel {} scale {}>>{} vs {}>>{};", o, got.scale, got.shift, r.scales[o].scale,
                                r.scales[o].shift);
        }
    }
    return diff;
}

// Vela lowers MEAN to a DEPTHWISE of unit weights (regor tflite_graph_optimiser.cpp
// ConvertMeanOps / MakeDepthwiseMeanOp): an op with no operator of its own in the model.
bool is_lowered_mean(const CorpusOp& c) {
    return c.op.kind == OpKind::Depthwise &&
           std::all_of(c.weights.values.begin(), c.weights.values.end(), [](int16_t v) { return v == 1; });
}

// Models whose TRANSPOSE_CONV Vela 5.1 lowers for U85 into stride-phase CONVs over reversed
// sub-kernels (regor graph optimiser): their ops' weights are no run of the original's channels,
// so they are only decoded (to exactly their traversal's count), not placed.
const std::set<std::string> kDecomposedTransposeConvs = {"seanet_transpose_conv0"};

struct ModelReport {
    int npu_ops = 0, placed = 0, lowered_means = 0, scales_compared = 0, transpose_conv_parts = 0;
    int reference_ops = 0, references_covered = 0;
    std::vector<std::string> problems;

    void add(const ModelReport& r) {
        npu_ops += r.npu_ops, placed += r.placed, lowered_means += r.lowered_means;
        transpose_conv_parts += r.transpose_conv_parts;
        scales_compared += r.scales_compared, reference_ops += r.reference_ops;
        references_covered += r.references_covered;
    }
};

void check_op(const CorpusOp& c, const std::vector<ReferenceKernelOp>& references,
              std::map<const ReferenceKernelOp*, std::vector<bool>>& covered, bool transpose_conv_model,
              ModelReport& report) {
    ++report.npu_ops;
    const Placement p = place(c, references);
    if (!p.reference) {
        if (is_lowered_mean(c)) {
            ++report.lowered_means;
            return;
        }
        if (transpose_conv_model && c.config.generation == Generation::U85) {
            ++report.transpose_conv_parts;
            return;
        }
        report.problems.push_back(fmt::format("{} at 0x{:x} ({}x{}x{}x{}) matches no operator", op_kind_name(c.op.kind),
                                              c.op.offset, c.weights.ofm_depth, c.weights.kernel_height,
                                              c.weights.kernel_width, c.weights.ifm_depth));
        return;
    }
    ++report.placed;
    auto& channels = covered[p.reference];
    channels.resize(static_cast<size_t>(p.reference->ofm_depth));
    std::fill_n(channels.begin() + p.first_channel, c.weights.ofm_depth, true);
    if (p.reference->scales.empty() || c.weights.scale.empty()) return;
    ++report.scales_compared;
    const std::string diff = compare_scales(c.weights, *p.reference, p.first_channel);
    if (!diff.empty()) {
        report.problems.push_back(
            fmt::format("op at 0x{:x} (operator {}):{}", c.op.offset, p.reference->operator_index, diff));
    }
}

// The original model's kernel operators that Vela placed on the NPU: those it left to the CPU
// are still operators of its output.
std::vector<ReferenceKernelOp> npu_operators(const fs::path& original, const fs::path& vela_output) {
    std::vector<ReferenceKernelOp> on_npu = tflite_reference::read_reference_kernel_ops(original.string());
    for (const ReferenceKernelOp& cpu : tflite_reference::read_reference_kernel_ops(vela_output.string())) {
        std::erase_if(on_npu, [&](const ReferenceKernelOp& r) { return r.output_name == cpu.output_name; });
    }
    return on_npu;
}

ModelReport check_model(const fs::path& dir, const std::string& config) {
    ModelReport report;
    const fs::path vela_output = dir / config / "model_vela.tflite";
    const auto references = npu_operators(dir / "model.tflite", vela_output);
    std::map<const ReferenceKernelOp*, std::vector<bool>> covered;
    const bool transpose_conv = kDecomposedTransposeConvs.count(dir.filename().string()) > 0;
    for (const CorpusOp& c : decode_corpus_ops(vela_output.string()))
        check_op(c, references, covered, transpose_conv, report);
    report.reference_ops = static_cast<int>(references.size());
    for (const auto& [reference, channels] : covered)
        report.references_covered += std::all_of(channels.begin(), channels.end(), [](bool b) { return b; });
    return report;
}

bool vectors_present() { return fs::exists(fs::path(ETHOSU_VECTORS_DIR) / "index.csv"); }

std::vector<std::string> corpus_models() {
    std::vector<std::string> models;
    for (const auto& entry : fs::directory_iterator(ETHOSU_VECTORS_DIR))
        if (fs::exists(entry.path() / "model.tflite")) models.push_back(entry.path().filename().string());
    std::sort(models.begin(), models.end());
    return models;
}

// Every CONV / DEPTHWISE op of every Vela output decodes (to exactly its traversal's count), its
// weights are a run of OFM channels of one operator of the original model, its bias, scale and
// shift are the model's, and every weight of every operator is covered by some NPU op.
class WeightCorpus : public ::testing::TestWithParam<const char*> {};

TEST_P(WeightCorpus, KernelOpsMatchTheOriginalModel) {
    if (!vectors_present()) GTEST_SKIP() << "test vectors not found at " << ETHOSU_VECTORS_DIR;
    const std::string config = GetParam();
    ModelReport total;
    int models = 0;
    for (const std::string& name : corpus_models()) {
        const fs::path dir = fs::path(ETHOSU_VECTORS_DIR) / name;
        if (!fs::exists(dir / config / "model_vela.tflite")) continue;
        try {
            const ModelReport r = check_model(dir, config);
            for (const auto& problem : r.problems) ADD_FAILURE() << config << " " << name << ": " << problem;
            EXPECT_EQ(r.references_covered, r.reference_ops) << config << " " << name << ": operators not covered";
            total.add(r);
            models += r.npu_ops > 0;
        } catch (const std::exception& e) {
            ADD_FAILURE() << config << " " << name << ": " << e.what();
        }
    }
    std::cout << fmt::format(
        "[ weights ] {}: {} models, {} CONV/DEPTHWISE ops decoded, {} placed in the original "
        "model ({} with bias/scale/shift compared), {} lowered MEANs, {} parts of decomposed TRANSPOSE_CONVs; "
        "{}/{} operators covered\n",
        config, models, total.npu_ops, total.placed, total.scales_compared, total.lowered_means,
        total.transpose_conv_parts,
        total.references_covered, total.reference_ops);
    EXPECT_GT(total.placed, 0);
}

// A Vela stream cut short anywhere, or replaced by garbage, is an ethosu::Error; a cut that only
// drops the end marker and padding still decodes to the same weights.
class HostileRealStream : public ::testing::Test {
protected:
    void SetUp() override {
        if (!vectors_present()) GTEST_SKIP() << "test vectors not found at " << ETHOSU_VECTORS_DIR;
        const fs::path path =
            fs::path(ETHOSU_VECTORS_DIR) / "conv_k3s1_same_16x16x8to16_relu" / "ethos-u55-128" / "model_vela.tflite";
        real_ = decode_corpus_ops(path.string()).at(0);
    }
    // Decodes with the given stream bytes in place of the real weight or scale stream.
    std::optional<OpWeights> decode_with(const std::vector<uint8_t>& weights, const std::vector<uint8_t>& scales) {
        DecodedOp op = real_.op;
        op.kernel().weights[0] = {0, 0, weights.size()};
        op.kernel().scales[0] = {1, 0, scales.size()};
        const StreamFetch fetch = [&](const Stream& s) {
            return std::span<const uint8_t>(s.region == 0 ? weights : scales);
        };
        try {
            return decode_op_weights(op, real_.config, fetch, "hostile");
        } catch (const Error&) {
            return std::nullopt;
        }
    }
    CorpusOp real_;
};

TEST_F(HostileRealStream, EveryTruncationOfTheWeightStream) {
    int decoded = 0;
    for (size_t cut = 0; cut < real_.weight_stream.size(); ++cut) {
        const std::vector<uint8_t> head(real_.weight_stream.begin(),
                                        real_.weight_stream.begin() + static_cast<std::ptrdiff_t>(cut));
        const auto w = decode_with(head, real_.scale_stream);
        if (!w) continue;
        ++decoded;
        ASSERT_EQ(w->values, real_.weights.values) << "cut at " << cut;
    }
    EXPECT_LT(decoded, 16) << "only the end marker and padding can go";
}

TEST_F(HostileRealStream, EveryTruncationOfTheScaleStream) {
    const size_t needed = static_cast<size_t>(real_.op.kernel().ofm.depth) * 10;
    for (size_t cut = 0; cut < real_.scale_stream.size(); ++cut) {
        const std::vector<uint8_t> head(real_.scale_stream.begin(),
                                        real_.scale_stream.begin() + static_cast<std::ptrdiff_t>(cut));
        EXPECT_EQ(decode_with(real_.weight_stream, head).has_value(), cut >= needed) << "cut at " << cut;
    }
}

TEST_F(HostileRealStream, GarbageInPlaceOfTheWeightStream) {
    // Beyond not crashing, hanging or over-allocating: random bytes almost never make a stream of
    // exactly the op's weight count, while one flipped bit often only changes a value.
    std::mt19937 rng(5);
    int random_decoded = 0, flipped_decoded = 0;
    for (int trial = 0; trial < 500; ++trial) {
        std::vector<uint8_t> garbage = real_.weight_stream;
        const bool random = trial % 2;
        if (random)
            std::generate(garbage.begin(), garbage.end(), [&] { return static_cast<uint8_t>(rng()); });
        else
            garbage[rng() % garbage.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        const bool decoded = decode_with(garbage, real_.scale_stream).has_value();
        (random ? random_decoded : flipped_decoded) += decoded;
    }
    EXPECT_LT(random_decoded, 5);
    EXPECT_GT(flipped_decoded, 0);
}

// U85 streams of real ops, cut short: each cut is an ethosu::Error, or (when it only drops the
// end marker and padding) decodes to the same weights.
class U85HostileStream : public ::testing::Test {
protected:
    static CorpusOp first_op(const std::string& model, const std::string& config, WeightFormat weight_format) {
        const fs::path path = fs::path(ETHOSU_VECTORS_DIR) / model / config / "model_vela.tflite";
        for (CorpusOp& c : decode_corpus_ops(path.string()))
            if (c.op.kernel().weight_format == weight_format) return std::move(c);
        throw std::runtime_error("no op with weight format " +
                                 std::string(EngineEnum<WeightFormat>::names[static_cast<size_t>(weight_format)]) + " in " + model);
    }
    // Decodes with stream `replaced` of op.kernel().weights holding bytes instead.
    static std::optional<OpWeights> decode_with(const CorpusOp& c, size_t replaced, const std::vector<uint8_t>& bytes) {
        DecodedOp op = c.op;
        op.kernel().weights[replaced].length = bytes.size();
        const StreamFetch fetch = [&](const Stream& s) -> std::span<const uint8_t> {
            if (&s == &op.kernel().weights[replaced]) return bytes;
            for (size_t i = 0; i < op.kernel().weights.size(); ++i)
                if (&s == &op.kernel().weights[i]) return c.weight_streams[i];
            return c.scale_stream;
        };
        try {
            return decode_op_weights(op, c.config, fetch, "hostile");
        } catch (const Error&) {
            return std::nullopt;
        }
    }
    static void expect_every_cut_refused_or_equal(const CorpusOp& c) {
        for (size_t s = 0; s < c.weight_streams.size(); ++s) {
            const auto& stream = c.weight_streams[s];
            int decoded = 0;
            for (size_t cut = 0; cut < stream.size(); ++cut) {
                const std::vector<uint8_t> head(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(cut));
                const auto w = decode_with(c, s, head);
                if (!w) continue;
                ++decoded;
                ASSERT_EQ(w->values, c.weights.values) << "stream " << s << " cut at " << cut;
            }
            EXPECT_LT(decoded, 32) << "stream " << s << ": only the end marker and padding can go";
        }
    }
    void SetUp() override {
        if (!vectors_present()) GTEST_SKIP() << "test vectors not found at " << ETHOSU_VECTORS_DIR;
    }
};

TEST_F(U85HostileStream, EveryTruncationOfEachWeightDecoderStream) {
    const CorpusOp c = first_op("conv_k3s1_same_16x16x8to16_relu", "ethos-u85-1024", WeightFormat::Standard);
    ASSERT_EQ(c.weight_streams.size(), 4u);
    expect_every_cut_refused_or_equal(c);
}

TEST_F(U85HostileStream, EveryTruncationOfAFastWeightStream) {
    expect_every_cut_refused_or_equal(first_op("mlperftiny_vww_96_int8", "ethos-u85-256", WeightFormat::Fast));
}

TEST_F(U85HostileStream, MicroBlockTheConfigurationLacksIsRefused) {
    CorpusOp c = first_op("conv_k3s1_same_16x16x8to16_relu", "ethos-u85-256", WeightFormat::Standard);
    c.op.kernel().output.microblock = MicroBlock::U1x1;  // no OFM micro-block of ethos-u85-256
    try {
        decode_op_weights(c.op, c.config, [&](const Stream& s) -> std::span<const uint8_t> {
            return &s == &c.op.kernel().weights[0] ? c.weight_streams[0] : c.scale_stream;
        }, "hostile");
        FAIL() << "decoded with an undefined micro-block";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().field, "NPU_SET_ACC_FORMAT.microblock");
    }
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, WeightCorpus,
                         ::testing::Values("ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u85-256",
                                           "ethos-u85-1024"),
                         ConfigTestName{});

}  // namespace
}  // namespace ethosu
