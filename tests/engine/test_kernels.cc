// Every U55/U65 kernel op, built with the CommandStreamBuilder and the test weight encoder, run on
// the Executor and compared with plain loop references written here (TFLite reference-kernel
// style: one loop nest per op, exact integer arithmetic). Edge cases: saturation, shifts at both
// ends, padding on each side, odd depths, NHCWB16 partial bricks, four tiles, strides 1..4,
// dilation, IFM2 broadcast and scalars, every rounding mode, int8/uint8/int16. Then ADD/SUB
// against TFLite's own kernel, and hostile run-time data.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "emulator/isa/error.h"
#include "tests/engine/kernel_harness.h"
#include "tests/engine/tflite_math.h"

namespace ethosu::kernel_test {
namespace {

using isa::Cmd;
using isa::Field;
__extension__ typedef __int128 wide;

constexpr Precision kInt8{true, 8}, kUint8{false, 8}, kInt16{true, 16}, kInt32{true, 32};

// Test cases are a name plus changes to the defaults.
template <typename Case, typename Change>
Case with(Case c, Change change) {
    change(c);
    return c;
}

// ---------------------------------------------------------------------------------------------
// Reference arithmetic.

// a / d rounded toward minus infinity (d > 0).
wide floor_div(wide a, wide d) { return a / d - (a % d != 0 && a < 0 ? 1 : 0); }

// acc * scale / 2^shift rounded as the output stage's mode says. DBL is written as TFLite does it:
// a saturating doubling high multiply (x * m + nudge) / 2^31 truncated, then a rounding divide by
// the remaining power of two (half away from zero); for shifts below 31 the value is first
// multiplied up, as TFLite's left shift does. TRUNCATE rounds toward zero, NATURAL half up.
int64_t requantize(int64_t acc, uint32_t scale, int shift, RoundMode mode) {
    const wide product = wide{acc} * scale;
    if (shift == 0) return static_cast<int64_t>(product);
    const wide divisor = wide{1} << shift;
    switch (mode) {
        case RoundMode::Truncate:
            return static_cast<int64_t>(product / divisor);
        case RoundMode::Natural:
            return static_cast<int64_t>(floor_div(product + divisor / 2, divisor));
        default: {
            const int left = shift < 31 ? 31 - shift : 0;
            const wide x = product * (wide{1} << left);
            const wide nudge = x >= 0 ? wide{1} << 30 : 1 - (wide{1} << 30);
            const wide high = (x + nudge) / (wide{1} << 31);
            if (shift <= 31) return static_cast<int64_t>(high);
            const int exponent = shift - 31;
            const wide mask = (wide{1} << exponent) - 1;
            const wide remainder = high & mask;
            const wide threshold = (mask >> 1) + (high < 0 ? 1 : 0);
            return static_cast<int64_t>((high >> exponent) + (remainder > threshold ? 1 : 0));
        }
    }
}

// Output zero point and the clamp: activation bounds within the OFM type.
struct OutputStage {
    int32_t zero_point = 0;
    int64_t lo = 0, hi = 0;
    int64_t operator()(int64_t scaled) const { return std::clamp(scaled + zero_point, lo, hi); }
};

void expect_same(const Tensor& got, const Tensor& want) {
    ASSERT_EQ(got.values.size(), want.values.size());
    int differ = 0;
    std::string first;  // the first few, with coordinates
    for (int y = 0; y < want.height; ++y)
        for (int x = 0; x < want.width; ++x)
            for (int c = 0; c < want.depth; ++c)
                if (got.at(y, x, c) != want.at(y, x, c) && differ++ < 5)
                    first += fmt::format(" ({},{},{}): got {} want {}", y, x, c, got.at(y, x, c), want.at(y, x, c));
    EXPECT_EQ(differ, 0) << differ << " of " << want.values.size() << " elements differ:" << first;
}

// Output size of a window op, and the bottom/right padding the registers hold: Vela programs only
// the padding the last window reaches.
struct Window {
    int out = 0, pad_after = 0;
};
Window window(int in, int kernel, int stride, int dilation, int pad_before, int pad_after) {
    const int extent = (kernel - 1) * dilation + 1;
    Window w;
    w.out = (in + pad_before + pad_after - extent) / stride + 1;
    w.pad_after = std::max(0, (w.out - 1) * stride + extent - pad_before - in);
    return w;
}

// ---------------------------------------------------------------------------------------------
// CONV, DEPTHWISE and fully connected.

enum class ShiftRange { Fitted, Zero, Max };

struct ConvCase {
    const char* name;
    OpKind kind = OpKind::Conv;
    int ifm_h = 5, ifm_w = 6, ifm_c = 3, ofm_c = 5;
    int kernel_h = 3, kernel_w = 3;
    int stride_x = 1, stride_y = 1, dilation_x = 1, dilation_y = 1;
    Padding pad{};
    Precision ifm = kInt8, ofm = kInt8;
    RoundMode round = RoundMode::DoubleSymmetric;
    DataFormat ifm_format = DataFormat::NHWC, ofm_format = DataFormat::NHWC;
    bool four_tiles = false;
    bool part_kernel = false;
    int32_t ifm_zp = 0, ofm_zp = 0;
    bool narrow_clip = false;  // activation bounds inside the OFM type
    ShiftRange shifts = ShiftRange::Fitted;
    // Every IFM value the type's maximum and every weight +-255 (the sign by OFM channel): sums as
    // far from zero as the kernel allows.
    bool extreme = false;
    // |weight|: 255 (9-bit, the int16 GEMM), or 128 (int8: an 8-bit IFM's CONV then goes by gemm_u8
    // on a CPU with AVX-512 VNNI).
    int weight_limit = 255;
    const char* config = "ethos-u55-128";
    std::optional<BlockConfig> block{};  // default: 4x4, depth the OFM's rounded up to 8 (at most 64)
};

std::ostream& operator<<(std::ostream& os, const ConvCase& c) { return os << c.name; }

// Weights in [-limit, limit] (int8's -128 at the low end for limit 128), the extremes often.
Weights random_weights(int o, int kh, int kw, int i, uint32_t seed, int limit = 255) {
    Weights w{o, kh, kw, i, {}};
    std::mt19937 rng(seed);
    const int low = limit == 128 ? -128 : -limit, high = limit == 128 ? 127 : limit;
    std::uniform_int_distribution<int> any(low, high);
    w.values.resize(static_cast<size_t>(o) * kh * kw * i);
    for (size_t k = 0; k < w.values.size(); ++k)
        w.values[k] = static_cast<int16_t>(k % 11 == 5 ? (k % 2 ? high : low) : any(rng));
    return w;
}

// Accumulators of the plain convolution, before the bias (TFLite conv/depthwise reference loops).
Tensor conv_accumulators(const ConvCase& c, const Tensor& in, const Weights& w, int out_h, int out_w) {
    const bool depthwise = c.kind == OpKind::Depthwise;
    Tensor acc(out_h, out_w, c.ofm_c, {true, 64});
    for (int oy = 0; oy < out_h; ++oy)
        for (int ox = 0; ox < out_w; ++ox)
            for (int oc = 0; oc < c.ofm_c; ++oc) {
                int64_t sum = 0;
                for (int ky = 0; ky < c.kernel_h; ++ky)
                    for (int kx = 0; kx < c.kernel_w; ++kx) {
                        const int iy = oy * c.stride_y - c.pad.top + ky * c.dilation_y;
                        const int ix = ox * c.stride_x - c.pad.left + kx * c.dilation_x;
                        if (iy < 0 || iy >= in.height || ix < 0 || ix >= in.width) continue;
                        if (depthwise) {
                            sum += (in.at(iy, ix, oc) - c.ifm_zp) * w.at(oc, ky, kx, 0);
                        } else {
                            for (int ic = 0; ic < c.ifm_c; ++ic)
                                sum += (in.at(iy, ix, ic) - c.ifm_zp) * w.at(oc, ky, kx, ic);
                        }
                    }
                acc.at(oy, ox, oc) = sum;
            }
    return acc;
}

OutputStage output_stage(const Precision& ofm, int32_t zero_point, bool narrow) {
    OutputStage o{zero_point, type_min(ofm), type_max(ofm)};
    if (narrow) {  // a ReLU6-like window inside the type
        o.lo = type_min(ofm) + (type_max(ofm) - type_min(ofm)) / 4;
        o.hi = type_max(ofm) - (type_max(ofm) - type_min(ofm)) / 8;
    }
    return o;
}

// Per-channel scales: Fitted maps the largest accumulator to about 1.5x the OFM range,
// so some outputs saturate; Zero and Max sit at the ends of the 6-bit shift.
std::vector<ChannelScale> channel_scales(const ConvCase& c, const Tensor& acc, std::vector<ChannelScale> bias) {
    for (int oc = 0; oc < c.ofm_c; ++oc) {
        ChannelScale& s = bias[static_cast<size_t>(oc)];
        if (c.shifts == ShiftRange::Zero) {
            s.scale = 1 + oc % 3, s.shift = 0;
            continue;
        }
        if (c.shifts == ShiftRange::Max) {
            s.scale = 0xFFFFFFFFu - static_cast<uint32_t>(oc), s.shift = 63;
            s.bias = oc % 2 ? (int64_t{1} << 39) - 1 : -(int64_t{1} << 39);  // the bias's full 40 bits
            continue;
        }
        int64_t largest = 1;
        for (int64_t v : acc.values) largest = std::max(largest, v < 0 ? -v : v);
        s.scale = (1u << 30) + static_cast<uint32_t>(oc) * 7919u * 1013u;
        const double target = 1.5 * static_cast<double>(type_max(c.ofm) - type_min(c.ofm)) / 2;
        s.shift = std::clamp(30 + static_cast<int>(std::ceil(std::log2(static_cast<double>(largest) / target))), 1, 62);
    }
    return bias;
}

void check_conv(const ConvCase& c) {
    const bool depthwise = c.kind == OpKind::Depthwise;
    Rig rig(c.config);
    const Window wy = window(c.ifm_h, c.kernel_h, c.stride_y, c.dilation_y, c.pad.top, c.pad.bottom);
    const Window wx = window(c.ifm_w, c.kernel_w, c.stride_x, c.dilation_x, c.pad.left, c.pad.right);
    Tensor in = random_tensor(c.ifm_h, c.ifm_w, c.ifm_c, c.ifm, 11);
    Weights w = random_weights(c.ofm_c, c.kernel_h, c.kernel_w, depthwise ? 1 : c.ifm_c, 12, c.weight_limit);
    if (c.extreme) {
        std::fill(in.values.begin(), in.values.end(), type_max(c.ifm));
        const size_t per_channel = w.values.size() / static_cast<size_t>(c.ofm_c);
        const int16_t high = static_cast<int16_t>(c.weight_limit == 128 ? 127 : c.weight_limit);
        const int16_t low = static_cast<int16_t>(-c.weight_limit);
        for (size_t k = 0; k < w.values.size(); ++k) w.values[k] = k / per_channel % 2 ? high : low;
    }
    std::vector<ChannelScale> bias(static_cast<size_t>(c.ofm_c));
    std::mt19937 rng(13);
    for (auto& b : bias) b.bias = std::uniform_int_distribution<int64_t>(-100000, 100000)(rng);
    const Tensor acc = conv_accumulators(c, in, w, wy.out, wx.out);
    const std::vector<ChannelScale> scales = channel_scales(c, acc, bias);

    const Placement ifm = rig.place(in, {c.ifm_format, c.four_tiles, c.ifm_zp});
    const Placement ofm = rig.reserve(wy.out, wx.out, c.ofm_c, c.ofm, {c.ofm_format, c.four_tiles, c.ofm_zp});
    const OutputStage out = output_stage(c.ofm, c.ofm_zp, c.narrow_clip);
    const BlockConfig block = c.block.value_or(BlockConfig{.depth = std::min(64, (c.ofm_c + 7) / 8 * 8)});
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, c.round, false);
    rig.emit_kernel(c.kernel_h, c.kernel_w, c.stride_x, c.stride_y, c.dilation_x, c.dilation_y, c.part_kernel);
    rig.emit_padding(c.pad.top, c.pad.left, wy.pad_after, wx.pad_after);
    rig.emit_weights(w, scales, {depthwise, c.part_kernel, c.ifm.bits, block.depth, c.dilation_x, c.dilation_y});
    rig.emit_activation(0, out.lo, out.hi);
    rig.emit_block(block);
    rig.stream().emit(depthwise ? Cmd::OP_DEPTHWISE : Cmd::OP_CONV);
    rig.run();

    Tensor want(wy.out, wx.out, c.ofm_c, c.ofm);
    for (int y = 0; y < want.height; ++y)
        for (int x = 0; x < want.width; ++x)
            for (int oc = 0; oc < c.ofm_c; ++oc) {
                const ChannelScale& s = scales[static_cast<size_t>(oc)];
                want.at(y, x, oc) = out(requantize(acc.at(y, x, oc) + s.bias, s.scale, s.shift, c.round));
            }
    expect_same(rig.read(ofm), want);
}

class ConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTest, MatchesThePlainReference) { check_conv(GetParam()); }

ConvCase conv(const char* name) { return ConvCase{name}; }

const ConvCase kConvCases[] = {
    conv("Basic3x3"),
    with(conv("PaddingOnAllFourSides"), [](ConvCase& c) { c.pad = {1, 2, 2, 1}; }),
    with(conv("PaddingTopLeftOnly"), [](ConvCase& c) { c.pad = {2, 1, 0, 0}; }),
    with(conv("Stride2"), [](ConvCase& c) {
        c.stride_x = c.stride_y = 2, c.ifm_h = 9, c.ifm_w = 8, c.pad = {1, 1, 1, 1};
    }),
    with(conv("Stride3x1"), [](ConvCase& c) { c.stride_x = 3, c.ifm_w = 11, c.pad = {0, 1, 1, 1}; }),
    with(conv("Stride4"), [](ConvCase& c) {
        c.stride_x = c.stride_y = 4, c.kernel_h = c.kernel_w = 5, c.ifm_h = c.ifm_w = 13, c.pad = {2, 2, 2, 2};
    }),
    with(conv("Stride1x4"), [](ConvCase& c) { c.stride_y = 4, c.ifm_h = 10, c.kernel_h = 4; }),
    with(conv("Dilation2"), [](ConvCase& c) {
        c.dilation_x = c.dilation_y = 2, c.ifm_h = c.ifm_w = 9, c.pad = {2, 2, 2, 2};
    }),
    with(conv("DilationXStride2"), [](ConvCase& c) {
        c.dilation_x = 2, c.dilation_y = 1, c.stride_x = c.stride_y = 2;
        c.ifm_h = 11, c.ifm_w = 12, c.pad = {1, 3, 2, 0};
    }),
    with(conv("OddDepths"), [](ConvCase& c) { c.ifm_c = 7, c.ofm_c = 13; }),
    with(conv("DeepIfmPartKernelFirst"), [](ConvCase& c) { c.ifm_c = 37, c.ofm_c = 9, c.part_kernel = true; }),
    with(conv("DeepIfmDepthFirst"), [](ConvCase& c) { c.ifm_c = 45, c.ofm_c = 17, c.kernel_h = c.kernel_w = 1; }),
    with(conv("LargeKernelSplitsIntoSubKernels"), [](ConvCase& c) {
        c.kernel_h = 9, c.kernel_w = 10, c.ifm_h = 12, c.ifm_w = 12, c.pad = {4, 5, 4, 4};
    }),
    with(conv("Uint8WithZeroPoints"), [](ConvCase& c) { c.ifm = c.ofm = kUint8, c.ifm_zp = 131, c.ofm_zp = 77; }),
    with(conv("Int8WithZeroPoints"), [](ConvCase& c) { c.ifm_zp = -17, c.ofm_zp = 9; }),
    with(conv("Int16Natural"), [](ConvCase& c) {
        c.ifm = c.ofm = kInt16, c.round = RoundMode::Natural, c.pad = {1, 1, 1, 1};
    }),
    with(conv("Int16PartKernelFirst"), [](ConvCase& c) { c.ifm = c.ofm = kInt16, c.ifm_c = 19, c.part_kernel = true; }),
    with(conv("Int8ToInt16"), [](ConvCase& c) { c.ofm = kInt16; }),
    with(conv("Truncate"), [](ConvCase& c) { c.round = RoundMode::Truncate; }),
    with(conv("Natural"), [](ConvCase& c) { c.round = RoundMode::Natural; }),
    with(conv("ClampInsideTheType"), [](ConvCase& c) { c.narrow_clip = true, c.ofm_zp = -5; }),
    with(conv("ShiftZeroSaturates"), [](ConvCase& c) { c.shifts = ShiftRange::Zero; }),
    with(conv("ShiftMaxWithFullBias"), [](ConvCase& c) { c.shifts = ShiftRange::Max; }),
    with(conv("ShiftZeroTruncate"), [](ConvCase& c) { c.shifts = ShiftRange::Zero, c.round = RoundMode::Truncate; }),
    with(conv("ShiftMaxNatural"), [](ConvCase& c) { c.shifts = ShiftRange::Max, c.round = RoundMode::Natural; }),
    with(conv("Nhcwb16PartialBrick"), [](ConvCase& c) {
        c.ifm_c = 21, c.ofm_c = 19, c.ifm_format = c.ofm_format = DataFormat::NHCWB16, c.pad = {1, 0, 0, 1};
    }),
    with(conv("Nhcwb16InNhwcOut"), [](ConvCase& c) { c.ifm_c = 18, c.ifm_format = DataFormat::NHCWB16; }),
    with(conv("FourTiles"), [](ConvCase& c) { c.four_tiles = true, c.ifm_h = 7, c.ifm_w = 8, c.pad = {1, 1, 1, 1}; }),
    with(conv("FourTilesNhcwb16Strided"), [](ConvCase& c) {
        c.four_tiles = true, c.ifm_h = 9, c.ifm_w = 10;
        c.ifm_c = 17, c.ofm_c = 20, c.stride_x = 2, c.pad = {0, 1, 1, 0};
        c.ifm_format = c.ofm_format = DataFormat::NHCWB16;
    }),
    // Large enough that the fast path copies the IFM in several bands of OFM rows.
    with(conv("TallIfmInBandsStride2"), [](ConvCase& c) {
        c.ifm_h = 95, c.ifm_w = 128, c.ifm_c = 32, c.stride_x = c.stride_y = 2, c.pad = {1, 1, 1, 1};
    }),
    with(conv("TallIfmInBandsDepthwiseDilated"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_h = 72, c.ifm_w = 96, c.ifm_c = c.ofm_c = 48;
        c.dilation_x = c.dilation_y = 2, c.pad = {2, 2, 2, 2}, c.ifm_zp = 3;
    }),
    with(conv("U55With32Macs"), [](ConvCase& c) { c.config = "ethos-u55-32", c.ofm_c = 11, c.ifm_c = 9; }),
    with(conv("U55With256Macs"), [](ConvCase& c) { c.config = "ethos-u55-256", c.ofm_c = 30; }),
    with(conv("U65DualCore"), [](ConvCase& c) {
        c.config = "ethos-u65-512", c.ofm_c = 21, c.ifm_c = 10, c.pad = {1, 1, 1, 1};
    }),
    with(conv("U65DualCoreOneChannel"), [](ConvCase& c) { c.config = "ethos-u65-512", c.ofm_c = 1; }),
    with(conv("U65SingleCore"), [](ConvCase& c) { c.config = "ethos-u65-256", c.ifm = c.ofm = kInt16; }),
    // int8 weights: an 8-bit IFM's operands as bytes (gemm_u8), padding taps at the byte offset.
    with(conv("ByteWeightsPaddingAllSides"), [](ConvCase& c) { c.weight_limit = 128, c.pad = {1, 2, 2, 1}; }),
    with(conv("ByteWeightsStrideDilation"), [](ConvCase& c) {
        c.weight_limit = 128, c.dilation_x = 2, c.stride_x = c.stride_y = 2, c.ifm_h = 11, c.ifm_w = 12;
        c.pad = {1, 3, 2, 0};
    }),
    with(conv("ByteWeightsOddDepths"), [](ConvCase& c) { c.weight_limit = 128, c.ifm_c = 7, c.ofm_c = 37; }),
    with(conv("ByteWeights1x1OddDepth"), [](ConvCase& c) {
        c.weight_limit = 128, c.ifm_c = 45, c.ofm_c = 17, c.kernel_h = c.kernel_w = 1, c.ifm_zp = -9;
    }),
    with(conv("ByteWeightsUint8ZeroPoints"), [](ConvCase& c) {
        c.weight_limit = 128, c.ifm = c.ofm = kUint8, c.ifm_zp = 255, c.ofm_zp = 77, c.pad = {1, 1, 1, 1};
    }),
    with(conv("ByteWeightsInt8ZeroPoints"), [](ConvCase& c) {
        c.weight_limit = 128, c.ifm_zp = -128, c.ofm_zp = 9, c.pad = {1, 1, 1, 1};
    }),
    with(conv("ByteWeightsExtreme"), [](ConvCase& c) { c.weight_limit = 128, c.extreme = true, c.ifm_c = 40; }),
    with(conv("ByteWeightsNhcwb16FourTiles"), [](ConvCase& c) {
        c.weight_limit = 128, c.four_tiles = true, c.ifm_h = 9, c.ifm_w = 10, c.ifm_c = 17, c.ofm_c = 20;
        c.pad = {0, 1, 1, 0}, c.ifm_format = c.ofm_format = DataFormat::NHCWB16;
    }),
    with(conv("ByteWeightsLargeInGroups"), [](ConvCase& c) {
        c.weight_limit = 128, c.ifm_h = 2, c.ifm_w = 1, c.kernel_h = c.kernel_w = 1, c.ifm_c = 1030, c.ofm_c = 521;
        c.ifm = c.ofm = kUint8, c.ifm_zp = 120, c.ofm_zp = 7;
    }),
    // A zero point no Vela writes, whose operands leave a byte: the int16 GEMM, packed at the op.
    with(conv("ByteWeightsZeroPointBeyondAByte"), [](ConvCase& c) {
        c.weight_limit = 128, c.ifm_zp = 300, c.pad = {1, 1, 1, 1};
    }),
    // Fully connected: a vector product, 1x1 kernel over a 1x1 IFM (and a batch of rows).
    with(conv("FullyConnected"), [](ConvCase& c) {
        c.ifm_h = c.ifm_w = 1, c.kernel_h = c.kernel_w = 1, c.ifm_c = 67, c.ofm_c = 23;
    }),
    with(conv("FullyConnectedBatch"), [](ConvCase& c) {
        c.ifm_h = 3, c.ifm_w = 1, c.kernel_h = c.kernel_w = 1, c.ifm_c = 40, c.ofm_c = 10, c.ifm_zp = 3, c.ofm_zp = -3;
    }),
    // Over 1 MiB of decoded weights: a run decodes and computes them a group of OFM blocks at a time.
    with(conv("FullyConnectedLargeInGroups"), [](ConvCase& c) {
        c.ifm_h = 2, c.ifm_w = 1, c.kernel_h = c.kernel_w = 1, c.ifm_c = 1030, c.ofm_c = 521, c.ifm = c.ofm = kUint8;
        c.ifm_zp = 120, c.ofm_zp = 7;
    }),
    with(conv("Conv3x3LargeInGroupsNhcwb16"), [](ConvCase& c) {
        c.ifm_h = c.ifm_w = 5, c.ifm_c = 300, c.ofm_c = 203, c.pad = {1, 1, 1, 1}, c.ofm_format = DataFormat::NHCWB16;
    }),
    with(conv("FullyConnectedInt16LargeInGroups"), [](ConvCase& c) {
        c.ifm_h = 2, c.ifm_w = 1, c.kernel_h = c.kernel_w = 1, c.ifm_c = 1030, c.ofm_c = 521, c.ifm = c.ofm = kInt16;
        c.round = RoundMode::Natural;
    }),
    with(conv("FullyConnectedInt16"), [](ConvCase& c) {
        c.ifm_h = c.ifm_w = 1, c.kernel_h = c.kernel_w = 1, c.ifm_c = 33, c.ofm_c = 8, c.ifm = c.ofm = kInt16;
        c.round = RoundMode::Natural;
    }),
    // 16-bit IFMs: int32 partial sums of 240 products, added in int64 (3x3x40 = 360 products,
    // extremes of int16 among the values); OFM depths that leave one to three channels after the
    // groups of four.
    with(conv("Int16SumsLongerThanInt32Holds"), [](ConvCase& c) {
        c.ifm = c.ofm = kInt16, c.ifm_c = 40, c.ofm_c = 7, c.pad = {1, 1, 1, 1}, c.round = RoundMode::Natural;
    }),
    with(conv("Int16SumsLongerThanInt32HoldsShiftMax"), [](ConvCase& c) {
        c.ifm = c.ofm = kInt16, c.ifm_c = 27, c.ofm_c = 6, c.shifts = ShiftRange::Max;
    }),
    // 360 products of 32767 x +-255: sums of +-3.0e9, beyond int32.
    with(conv("Int16SumsBeyondInt32"), [](ConvCase& c) {
        c.ifm = c.ofm = kInt16, c.ifm_c = 40, c.ofm_c = 6, c.extreme = true, c.round = RoundMode::Natural;
    }),
    // Several IFM bands, each split over worker threads, with long 16-bit sums.
    with(conv("Int16TallIfmInBands"), [](ConvCase& c) {
        c.ifm = c.ofm = kInt16, c.ifm_h = 70, c.ifm_w = 128, c.ifm_c = 40, c.ofm_c = 9, c.pad = {1, 1, 1, 1};
        c.round = RoundMode::Natural;
    }),
    // Depthwise (depth multiplier 1).
    with(conv("Depthwise3x3"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 11, c.pad = {1, 1, 1, 1};
    }),
    with(conv("DepthwiseStride2Dilation2"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 5, c.stride_x = c.stride_y = 2, c.dilation_x = c.dilation_y = 2;
        c.ifm_h = c.ifm_w = 11, c.pad = {2, 2, 2, 2};
    }),
    with(conv("DepthwiseStride3Uint8"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 9, c.stride_x = c.stride_y = 3, c.ifm_h = c.ifm_w = 10;
        c.ifm = c.ofm = kUint8, c.ifm_zp = 128, c.ofm_zp = 100;
    }),
    with(conv("DepthwiseInt16Nhcwb16"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 20, c.ifm = c.ofm = kInt16, c.round = RoundMode::Natural;
        c.ifm_format = c.ofm_format = DataFormat::NHCWB16;
    }),
    with(conv("DepthwiseFourTiles"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 6, c.four_tiles = true;
        c.ifm_h = 8, c.ifm_w = 7, c.pad = {1, 1, 1, 1};
    }),
    with(conv("DepthwiseU65DualCore"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 19;
        c.config = "ethos-u65-512", c.kernel_h = 5, c.pad = {2, 1, 2, 1};
    }),
    with(conv("DepthwiseShiftMax"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 4, c.shifts = ShiftRange::Max;
    }),
    // More taps (16x16 = 256) than one int32 sum of 16-bit products holds (240).
    with(conv("DepthwiseInt16ManyTaps"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 21, c.ifm = c.ofm = kInt16, c.round = RoundMode::Natural;
        c.kernel_h = c.kernel_w = 16, c.ifm_h = 20, c.ifm_w = 18, c.pad = {2, 1, 2, 1};
    }),
    // 17x17 = 289 products of 32767 x +-255: sums of +-2.4e9.
    with(conv("DepthwiseInt16SumsBeyondInt32"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 5, c.ifm = c.ofm = kInt16, c.extreme = true;
        c.kernel_h = c.kernel_w = 17, c.ifm_h = c.ifm_w = 18;
    }),
    with(conv("DepthwiseInt16TallInBands"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 32, c.ifm = c.ofm = kInt16, c.round = RoundMode::Natural;
        c.ifm_h = 140, c.ifm_w = 64, c.stride_x = c.stride_y = 2, c.pad = {1, 1, 1, 1};
    }),
};

INSTANTIATE_TEST_SUITE_P(Kernels, ConvTest, ::testing::ValuesIn(kConvCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Pooling: MAX, AVERAGE (a padded window divides by its valid count), REDUCE_SUM.

struct PoolCase {
    const char* name;
    PoolMode mode = PoolMode::Average;
    int ifm_h = 6, ifm_w = 7, depth = 5;
    int kernel_h = 3, kernel_w = 3, stride_x = 1, stride_y = 1;
    Padding pad{};
    Precision ifm = kInt8, ofm = kInt8;
    RoundMode round = RoundMode::DoubleSymmetric;
    DataFormat format = DataFormat::NHWC;
    bool four_tiles = false;
    int32_t ifm_zp = 0, ofm_zp = 0;
    uint32_t scale = 1;  // OFM_SCALE: unpadded average, max, reduce sum
    int shift = 0;
    bool narrow_clip = false;
    const char* config = "ethos-u55-128";
    // OFM scale_mode PER_CHANNEL, as Vela 2.x-4.x program MAX and padded AVERAGE pools: the hardware
    // scales (AVERAGE by the valid elements, else by one); OFM_SCALE, if written, is not applied.
    bool per_channel = false;
    BlockConfig block{};
};

std::ostream& operator<<(std::ostream& os, const PoolCase& c) { return os << c.name; }

// The OFM zero point the U55/U65 output stage adds: none to a 32-bit OFM (without a TABLE).
int32_t added_zero_point(const Precision& ofm, int32_t zero_point) { return ofm.bits == 32 ? 0 : zero_point; }

void check_pool(const PoolCase& c) {
    const bool reduce = c.mode == PoolMode::ReduceSum;
    Rig rig(c.config);
    const Window wy = window(c.ifm_h, c.kernel_h, c.stride_y, 1, c.pad.top, c.pad.bottom);
    const Window wx = window(c.ifm_w, c.kernel_w, c.stride_x, 1, c.pad.left, c.pad.right);
    const int out_depth = reduce ? 1 : c.depth;
    const Tensor in = random_tensor(c.ifm_h, c.ifm_w, c.depth, c.ifm, 21);
    const Placement ifm = rig.place(in, {c.format, c.four_tiles, c.ifm_zp});
    const Placement ofm = rig.reserve(wy.out, wx.out, out_depth, c.ofm, {c.format, c.four_tiles, c.ofm_zp});
    const OutputStage out = output_stage(c.ofm, added_zero_point(c.ofm, c.ofm_zp), c.narrow_clip);
    const bool padded = c.pad.top || c.pad.left || wy.pad_after || wx.pad_after;
    const uint32_t scale = c.per_channel ? 1 : c.scale;
    const int shift = c.per_channel ? 0 : c.shift;
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, c.round, !c.per_channel);
    rig.emit_kernel(c.kernel_h, c.kernel_w, c.stride_x, c.stride_y, 1, 1, false);
    rig.emit_padding(c.pad.top, c.pad.left, wy.pad_after, wx.pad_after);
    rig.stream().emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, c.scale},
                                           {Field::SET_OFM_SCALE__shift, static_cast<uint64_t>(c.shift)}});
    rig.emit_activation(0, out.lo, out.hi);
    rig.emit_block(c.block);
    const uint64_t mode = c.mode == PoolMode::Max ? 0 : c.mode == PoolMode::Average ? 1 : 2;
    rig.stream().emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, mode}});
    rig.run();

    Tensor want(wy.out, wx.out, out_depth, c.ofm);
    for (int oy = 0; oy < wy.out; ++oy)
        for (int ox = 0; ox < wx.out; ++ox) {
            if (reduce) {
                int64_t sum = 0;
                for (int ch = 0; ch < c.depth; ++ch) sum += in.at(oy, ox, ch) - c.ifm_zp;
                want.at(oy, ox, 0) = out(requantize(sum, scale, shift, c.round));
                continue;
            }
            for (int ch = 0; ch < c.depth; ++ch) {
                int64_t sum = 0, largest = INT64_MIN, count = 0;
                for (int ky = 0; ky < c.kernel_h; ++ky)
                    for (int kx = 0; kx < c.kernel_w; ++kx) {
                        const int iy = oy * c.stride_y - c.pad.top + ky, ix = ox * c.stride_x - c.pad.left + kx;
                        if (iy < 0 || iy >= c.ifm_h || ix < 0 || ix >= c.ifm_w) continue;
                        const int64_t v = in.at(iy, ix, ch) - c.ifm_zp;
                        sum += v, largest = std::max(largest, v), ++count;
                    }
                int64_t scaled;
                if (c.mode == PoolMode::Max) {
                    scaled = requantize(largest, scale, shift, c.round);
                } else if (padded || c.per_channel) {
                    // TFLite's average: the sum over the valid elements, rounded half away from zero.
                    scaled = sum >= 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
                } else {
                    scaled = requantize(sum, scale, shift, c.round);
                }
                want.at(oy, ox, ch) = out(scaled);
            }
        }
    expect_same(rig.read(ofm), want);
}

class PoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolTest, MatchesThePlainReference) { check_pool(GetParam()); }

PoolCase pool(const char* name, PoolMode mode) { return PoolCase{name, mode}; }
// 1/9 as scale / 2^34.
constexpr uint32_t kNinth = 1908874354;

const PoolCase kPoolCases[] = {
    with(pool("AverageUnpadded", PoolMode::Average), [](PoolCase& c) { c.scale = kNinth, c.shift = 34; }),
    with(pool("AverageUnpaddedTruncate", PoolMode::Average), [](PoolCase& c) {
        c.scale = kNinth, c.shift = 34, c.round = RoundMode::Truncate;
    }),
    with(pool("AverageUnpaddedNatural", PoolMode::Average), [](PoolCase& c) {
        c.scale = kNinth, c.shift = 34, c.round = RoundMode::Natural;
    }),
    with(pool("AveragePaddedAllSides", PoolMode::Average), [](PoolCase& c) { c.pad = {1, 1, 1, 1}; }),
    with(pool("AveragePaddedBottomRight", PoolMode::Average), [](PoolCase& c) {
        c.pad = {0, 0, 2, 2}, c.stride_x = c.stride_y = 2;
    }),
    with(pool("AveragePaddedTopLeftStride3", PoolMode::Average), [](PoolCase& c) {
        c.pad = {2, 1, 0, 0}, c.stride_x = c.stride_y = 3, c.ifm_h = c.ifm_w = 11, c.kernel_h = c.kernel_w = 4;
    }),
    with(pool("AveragePaddedUint8ZeroPoints", PoolMode::Average), [](PoolCase& c) {
        c.pad = {1, 1, 1, 1}, c.ifm = c.ofm = kUint8, c.ifm_zp = 120, c.ofm_zp = 120;
    }),
    with(pool("AveragePaddedInt16Nhcwb16", PoolMode::Average), [](PoolCase& c) {
        c.pad = {1, 2, 1, 2}, c.ifm = c.ofm = kInt16, c.depth = 18, c.format = DataFormat::NHCWB16, c.kernel_w = 5;
    }),
    with(pool("AveragePaddedFourTiles", PoolMode::Average), [](PoolCase& c) {
        c.pad = {1, 1, 1, 1}, c.four_tiles = true, c.ifm_h = 9, c.ifm_w = 8;
    }),
    with(pool("AverageGlobal", PoolMode::Average), [](PoolCase& c) {
        c.kernel_h = c.ifm_h = 7, c.kernel_w = c.ifm_w = 7, c.depth = 33, c.scale = 2804876602u, c.shift = 37;
    }),
    with(pool("MaxUnpadded", PoolMode::Max), [](PoolCase& c) {
        c.kernel_h = c.kernel_w = 2, c.stride_x = c.stride_y = 2;
    }),
    with(pool("MaxPaddedStride4", PoolMode::Max), [](PoolCase& c) {
        c.pad = {1, 2, 2, 1}, c.stride_x = c.stride_y = 4, c.ifm_h = c.ifm_w = 13, c.kernel_h = c.kernel_w = 5;
    }),
    with(pool("MaxUint8Clamped", PoolMode::Max), [](PoolCase& c) {
        c.ifm = c.ofm = kUint8, c.ifm_zp = c.ofm_zp = 30, c.narrow_clip = true;
    }),
    with(pool("MaxRescaledInt16ToInt8", PoolMode::Max), [](PoolCase& c) {
        c.ifm = kInt16, c.scale = 1u << 31, c.shift = 39, c.round = RoundMode::Natural;  // /256
    }),
    with(pool("MaxNhcwb16PartialBrickFourTiles", PoolMode::Max), [](PoolCase& c) {
        c.depth = 23, c.format = DataFormat::NHCWB16, c.four_tiles = true, c.pad = {1, 1, 1, 1};
    }),
    with(pool("MaxU65", PoolMode::Max), [](PoolCase& c) { c.config = "ethos-u65-512", c.stride_x = 2; }),
    with(pool("MaxShiftMax", PoolMode::Max), [](PoolCase& c) {
        c.ifm = kInt16, c.scale = 0xFFFFFFFFu, c.shift = 63, c.round = RoundMode::Natural;
    }),
    with(pool("AverageUnpaddedShiftMaxTruncate", PoolMode::Average), [](PoolCase& c) {
        c.ifm = kInt16, c.scale = 0xFFFFFFFFu, c.shift = 63, c.round = RoundMode::Truncate;
    }),
    // Tall enough to be split over worker threads.
    with(pool("MaxInt16Tall", PoolMode::Max), [](PoolCase& c) {
        c.ifm = c.ofm = kInt16, c.ifm_h = 61, c.ifm_w = 20, c.depth = 37, c.pad = {1, 1, 1, 1}, c.stride_y = 2;
    }),
    with(pool("AveragePaddedInt16Tall", PoolMode::Average), [](PoolCase& c) {
        c.ifm = c.ofm = kInt16, c.ifm_h = 64, c.ifm_w = 17, c.depth = 24, c.pad = {1, 1, 1, 1};
    }),
    with(pool("AverageUnpaddedInt8Tall", PoolMode::Average), [](PoolCase& c) {
        c.ifm_h = 58, c.ifm_w = 12, c.depth = 40, c.scale = kNinth, c.shift = 34, c.ifm_zp = -9, c.ofm_zp = 4;
    }),
    with(pool("ReduceSumShiftZeroSaturates", PoolMode::ReduceSum), [](PoolCase& c) {
        c.kernel_h = c.kernel_w = 1, c.depth = 9, c.scale = 3, c.shift = 0, c.narrow_clip = true;
    }),
    with(pool("ReduceSumToInt32", PoolMode::ReduceSum), [](PoolCase& c) {
        c.kernel_h = c.kernel_w = 1, c.depth = 37, c.ofm = kInt32, c.ifm_zp = -3;
    }),
    with(pool("ReduceSumScaledInt8", PoolMode::ReduceSum), [](PoolCase& c) {
        c.kernel_h = c.kernel_w = 1, c.depth = 19, c.scale = 1500000000;
        c.shift = 35, c.ofm_zp = 4, c.round = RoundMode::Truncate;
    }),
    with(pool("ReduceSumInt16Tall", PoolMode::ReduceSum), [](PoolCase& c) {
        c.kernel_h = c.kernel_w = 1, c.ifm_h = 50, c.ifm_w = 6, c.depth = 33, c.ifm = kInt16, c.ofm = kInt32;
    }),
    with(pool("ReduceSumNhcwb16", PoolMode::ReduceSum), [](PoolCase& c) {
        c.kernel_h = c.kernel_w = 1, c.depth = 40, c.ofm = kInt32, c.format = DataFormat::NHCWB16, c.ifm = kInt16;
    }),
    // As Vela 2.x-4.x program them: PER_CHANNEL, with a stale OFM_SCALE from an earlier op.
    with(pool("MaxPerChannelIgnoresOfmScale", PoolMode::Max), [](PoolCase& c) {
        c.per_channel = true, c.scale = 3, c.shift = 1, c.ifm_zp = 14, c.ofm_zp = 14;
    }),
    with(pool("MaxPerChannelU65", PoolMode::Max), [](PoolCase& c) {
        c.per_channel = true, c.scale = 0, c.config = "ethos-u65-512", c.kernel_h = c.kernel_w = 2, c.stride_x = 2;
    }),
    with(pool("AveragePaddedPerChannel", PoolMode::Average), [](PoolCase& c) {
        c.per_channel = true, c.pad = {1, 1, 1, 1}, c.scale = kNinth, c.shift = 34;
    }),
    with(pool("AverageUnpaddedPerChannelDividesByTheWindow", PoolMode::Average), [](PoolCase& c) {
        c.per_channel = true, c.scale = 7, c.shift = 2;
    }),
    with(pool("ReduceSumPerChannelInt32IgnoresOfmZeroPoint", PoolMode::ReduceSum), [](PoolCase& c) {
        c.per_channel = true, c.kernel_h = c.kernel_w = 1, c.depth = 21, c.ofm = kInt32, c.ofm_zp = 14, c.scale = 5;
    }),
    // Vela 3.x/4.x softmax: a GLOBAL REDUCE_SUM into int32 with a stale OFM zero point.
    with(pool("ReduceSumInt32IgnoresOfmZeroPoint", PoolMode::ReduceSum), [](PoolCase& c) {
        c.kernel_h = c.kernel_w = 1, c.depth = 21, c.ifm = kInt32, c.ofm = kInt32, c.ofm_zp = 14;
    }),
};

INSTANTIATE_TEST_SUITE_P(Kernels, PoolTest, ::testing::ValuesIn(kPoolCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Elementwise (U55/U65 modes).

struct EltCase {
    const char* name;
    ElementwiseMode mode = ElementwiseMode::Add;
    int h = 4, w = 5, c = 7;
    Precision in = kInt8, out = kInt8;
    bool broadcast_h = false, broadcast_w = false, broadcast_c = false;
    bool scalar = false, reversed = false;
    int32_t scalar_value = 0;
    int scale_mode = 0;  // OPA_OPB_16, OPA_32, OPB_32
    uint32_t opa_scale = 1;
    int opa_shift = 0;
    uint32_t opb_scale = 1;
    uint32_t ofm_scale = 1;
    int ofm_shift = 0;
    RoundMode round = RoundMode::DoubleSymmetric;
    DataFormat format = DataFormat::NHWC;
    bool four_tiles = false;
    int32_t zp1 = 0, zp2 = 0, zp_out = 0;
    bool narrow_clip = false;
    // 8-bit operands: every pair of IFM and IFM2 values once (h x w x c = 65536), where rounding
    // ties and the sign of each scaled value all occur.
    bool every_pair = false;
    const char* config = "ethos-u55-128";
    BlockConfig block{};
};

std::ostream& operator<<(std::ostream& os, const EltCase& c) { return os << c.name; }

uint64_t mode_code(ElementwiseMode m) {
    switch (m) {
        case ElementwiseMode::Mul: return 0;
        case ElementwiseMode::Add: return 1;
        case ElementwiseMode::Sub: return 2;
        case ElementwiseMode::Min: return 3;
        case ElementwiseMode::Max: return 4;
        case ElementwiseMode::LRelu: return 5;
        case ElementwiseMode::Abs: return 6;
        case ElementwiseMode::Clz: return 7;
        case ElementwiseMode::Shr: return 8;
        case ElementwiseMode::Shl: return 9;
        default: throw std::invalid_argument("not a U55/U65 elementwise mode");
    }
}

bool unary(ElementwiseMode m) {
    return m == ElementwiseMode::LRelu || m == ElementwiseMode::Abs || m == ElementwiseMode::Clz;
}

// The hardware's elementwise arithmetic on zero-point-corrected operands; lhs and rhs are the
// operation's first and second operands (OPA and OPB), IFM and IFM2 unless the order is reversed.
int64_t elementwise(const EltCase& c, int64_t lhs, int64_t rhs) {
    const int left_shift = c.in.bits == 8 ? 20 : 15;  // TFLite's ADD/SUB input left shift
    switch (c.mode) {
        case ElementwiseMode::Add:
        case ElementwiseMode::Sub: {
            int64_t a = lhs, b = rhs;
            if (c.scale_mode == 0) {
                a = lhs * (c.opa_scale & 0xFFFF), b = rhs * (c.opb_scale & 0xFFFF);
            } else {
                // One operand is rescaled (as TFLite's MultiplyByQuantizedMultiplier on the shifted
                // input), the other only shifted by the left shift less one (multiplier one half).
                int64_t& scaled = c.scale_mode == 1 ? a : b;
                int64_t& halved = c.scale_mode == 1 ? b : a;
                scaled = requantize(scaled * (int64_t{1} << left_shift), c.opa_scale, c.opa_shift + left_shift,
                                    RoundMode::DoubleSymmetric);
                halved = halved * (int64_t{1} << (left_shift - 1));
            }
            return requantize(c.mode == ElementwiseMode::Add ? a + b : a - b, c.ofm_scale, c.ofm_shift, c.round);
        }
        case ElementwiseMode::Mul:
            return requantize(lhs * rhs, c.in.bits == 32 ? 1 : c.ofm_scale, c.ofm_shift, c.round);
        case ElementwiseMode::Min:
            return requantize(std::min(lhs, rhs), c.ofm_scale, c.ofm_shift, c.round);
        case ElementwiseMode::Max:
            return requantize(std::max(lhs, rhs), c.ofm_scale, c.ofm_shift, c.round);
        case ElementwiseMode::LRelu:
            return lhs >= 0 ? lhs : requantize(lhs, c.ofm_scale, c.ofm_shift, c.round);
        case ElementwiseMode::Abs:
            return requantize(lhs < 0 ? -lhs : lhs, c.ofm_scale, c.ofm_shift, c.round);
        case ElementwiseMode::Clz: {
            int zeros = 0;
            for (int bit = 31; bit >= 0 && !((static_cast<uint64_t>(lhs) >> bit) & 1); --bit) ++zeros;
            return zeros;
        }
        case ElementwiseMode::Shl: {
            const int n = static_cast<int>(std::clamp<int64_t>(rhs, 0, 31));
            const uint64_t bits = (static_cast<uint64_t>(lhs) << n) & 0xFFFFFFFFu;  // 32-bit result
            return bits >= 0x80000000u ? static_cast<int64_t>(bits) - (int64_t{1} << 32) : static_cast<int64_t>(bits);
        }
        case ElementwiseMode::Shr: {
            // NATURAL rounds half up; the other modes shift arithmetically (toward minus infinity).
            const int n = static_cast<int>(std::clamp<int64_t>(rhs, 0, 31));
            const wide divisor = wide{1} << n;
            const wide half = c.round == RoundMode::Natural ? divisor / 2 : 0;
            return static_cast<int64_t>(floor_div(lhs + half, divisor));
        }
        default:
            throw std::invalid_argument("not a U55/U65 elementwise mode");
    }
}

void check_elementwise(const EltCase& c) {
    const bool binary = !unary(c.mode);
    const bool tensor2 = binary && !c.scalar;
    Rig rig(c.config);
    Tensor in1 = random_tensor(c.h, c.w, c.c, c.in, 31);
    Tensor in2 = random_tensor(c.broadcast_h ? 1 : c.h, c.broadcast_w ? 1 : c.w, c.broadcast_c ? 1 : c.c, c.in, 32);
    if (c.every_pair) {
        const int64_t low = c.in.is_signed ? -128 : 0;
        for (size_t i = 0; i < in1.values.size(); ++i) {
            in1.values[i] = low + static_cast<int64_t>(i % 256);
            in2.values[i] = low + static_cast<int64_t>(i / 256 % 256);
        }
    }
    if (c.mode == ElementwiseMode::Shl || c.mode == ElementwiseMode::Shr) {
        // Shift amounts around 0..31, some out of range at both ends.
        std::mt19937 rng(33);
        for (auto& v : in2.values) v = std::uniform_int_distribution<int64_t>(-3, 35)(rng) + c.zp2;
    }
    const Placement ifm = rig.place(in1, {c.format, c.four_tiles, c.zp1});
    const bool tiles2 = c.four_tiles && in2.height >= 2 && in2.width >= 2;
    const Placement ofm = rig.reserve(c.h, c.w, c.c, c.out, {c.format, c.four_tiles, c.zp_out});
    const OutputStage out = output_stage(c.out, added_zero_point(c.out, c.zp_out), c.narrow_clip);
    rig.emit_ifm(ifm, c.scale_mode);
    rig.emit_ofm(ofm, c.round, true);
    if (tensor2) rig.emit_ifm2(rig.place(in2, {c.format, tiles2, c.zp2}));
    if (c.scalar) {
        rig.stream()
            .emit(Cmd::SET_IFM2_SCALAR, {{Field::SET_IFM2_SCALAR__scalar, static_cast<uint16_t>(c.scalar_value)}})
            .emit(Cmd::SET_IFM2_ZERO_POINT, {{Field::SET_IFM2_ZERO_POINT__zero_point, static_cast<uint16_t>(c.zp2)}})
            .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, c.in.is_signed},
                                            {Field::SET_IFM2_PRECISION__activation_precision,
                                             c.in.bits == 8 ? 0u : c.in.bits == 16 ? 1u : 2u}});
    }
    if (binary) {
        rig.stream().emit(Cmd::SET_IFM2_BROADCAST, {{Field::SET_IFM2_BROADCAST__broadcast_h, c.broadcast_h},
                                                    {Field::SET_IFM2_BROADCAST__broadcast_w, c.broadcast_w},
                                                    {Field::SET_IFM2_BROADCAST__broadcast_c, c.broadcast_c},
                                                    {Field::SET_IFM2_BROADCAST__operand_order, c.reversed},
                                                    {Field::SET_IFM2_BROADCAST__broadcast_constant, c.scalar}});
    }
    if (c.mode == ElementwiseMode::Add || c.mode == ElementwiseMode::Sub) {
        rig.stream()
            .emit(Cmd::SET_OPA_SCALE, {{Field::SET_OPA_SCALE__scale, c.opa_scale},
                                       {Field::SET_OPA_SCALE__shift, static_cast<uint64_t>(c.opa_shift)}})
            .emit(Cmd::SET_OPB_SCALE, {{Field::SET_OPB_SCALE__scale, c.opb_scale}});
    }
    rig.stream().emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, c.ofm_scale},
                                           {Field::SET_OFM_SCALE__shift, static_cast<uint64_t>(c.ofm_shift)}});
    rig.emit_activation(0, out.lo, out.hi);
    rig.emit_block(c.block);
    rig.stream().emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, mode_code(c.mode)}});
    rig.run();

    Tensor want(c.h, c.w, c.c, c.out);
    for (int y = 0; y < c.h; ++y)
        for (int x = 0; x < c.w; ++x)
            for (int ch = 0; ch < c.c; ++ch) {
                const int64_t a = in1.at(y, x, ch) - c.zp1;
                int64_t b = 0;
                if (c.scalar) {
                    b = c.scalar_value - c.zp2;
                } else if (binary) {
                    b = in2.at(c.broadcast_h ? 0 : y, c.broadcast_w ? 0 : x, c.broadcast_c ? 0 : ch) - c.zp2;
                }
                want.at(y, x, ch) = out(elementwise(c, c.reversed ? b : a, c.reversed ? a : b));
            }
    expect_same(rig.read(ofm), want);
}

class ElementwiseTest : public ::testing::TestWithParam<EltCase> {};

TEST_P(ElementwiseTest, MatchesThePlainReference) { check_elementwise(GetParam()); }

EltCase elt(const char* name, ElementwiseMode mode) { return EltCase{name, mode}; }

// Register values in the ranges Vela writes for int8 ADD/SUB (one operand rescaled) and MUL.
void add_opa32(EltCase& c) {
    c.scale_mode = 1, c.opa_scale = 2047886337, c.opa_shift = 12;
    c.ofm_scale = 1483599641, c.ofm_shift = 50;
}
void add_opb32(EltCase& c) {
    c.scale_mode = 2, c.opa_scale = 2130706440, c.opa_shift = 13;
    c.ofm_scale = 1077998399, c.ofm_shift = 48;
}
void add_equal16(EltCase& c) { c.opa_scale = c.opb_scale = 1u << 15, c.ofm_scale = 1500000000, c.ofm_shift = 46; }
void mul_scale(EltCase& c) { c.ofm_scale = 1073940096, c.ofm_shift = 38; }

const EltCase kEltCases[] = {
    with(elt("AddOpaOpb16", ElementwiseMode::Add), add_equal16),
    with(elt("AddOpa32", ElementwiseMode::Add), add_opa32),
    with(elt("AddOpb32", ElementwiseMode::Add), add_opb32),
    with(elt("SubOpa32", ElementwiseMode::Sub), add_opa32),
    with(elt("SubOpb32", ElementwiseMode::Sub), add_opb32),
    with(elt("SubOpb32Reversed", ElementwiseMode::Sub), [](EltCase& c) { add_opb32(c), c.reversed = true; }),
    with(elt("SubOpa32Reversed", ElementwiseMode::Sub), [](EltCase& c) { add_opa32(c), c.reversed = true; }),
    with(elt("SubOpaOpb16Reversed", ElementwiseMode::Sub), [](EltCase& c) {
        add_equal16(c), c.opb_scale = 3u << 13, c.reversed = true;
    }),
    with(elt("SubScalarReversed", ElementwiseMode::Sub), [](EltCase& c) {
        add_opb32(c), c.scalar = true, c.reversed = true, c.scalar_value = 127, c.zp1 = -128, c.zp_out = -128;
    }),
    with(elt("AddScalarNegative", ElementwiseMode::Add), [](EltCase& c) {
        add_opa32(c), c.scalar = true, c.scalar_value = -77, c.zp2 = 5;
    }),
    with(elt("AddUint8ZeroPoints", ElementwiseMode::Add), [](EltCase& c) {
        add_opa32(c), c.in = c.out = kUint8, c.zp1 = 128, c.zp2 = 100, c.zp_out = 130;
    }),
    with(elt("AddInt16", ElementwiseMode::Add), [](EltCase& c) {
        c.in = c.out = kInt16, c.scale_mode = 1, c.opa_scale = 1600000000;
        c.opa_shift = 17, c.ofm_scale = 1300000000, c.ofm_shift = 46;
    }),
    // ADD/SUB's closed form (elementwise.cc: add_scaled) over every pair of operands, and beside it
    // an operand scale whose scaled values leave the form (OPA shift 3: the general way).
    with(elt("AddOpa32EveryPair", ElementwiseMode::Add), [](EltCase& c) {
        add_opa32(c), c.every_pair = true, c.h = 16, c.w = 16, c.c = 256, c.zp1 = -3, c.zp2 = 7, c.zp_out = -1;
    }),
    with(elt("SubOpb32EveryPair", ElementwiseMode::Sub), [](EltCase& c) {
        add_opb32(c), c.every_pair = true, c.h = 16, c.w = 16, c.c = 256, c.zp1 = 5, c.zp2 = -128;
    }),
    with(elt("AddOpa32EveryPairNaturalUint8", ElementwiseMode::Add), [](EltCase& c) {
        add_opa32(c), c.every_pair = true, c.h = 16, c.w = 16, c.c = 256, c.in = c.out = kUint8;
        c.round = RoundMode::Natural, c.zp1 = 128, c.zp2 = 0, c.zp_out = 100;
    }),
    with(elt("AddOpa32ShiftBelowTheForm", ElementwiseMode::Add), [](EltCase& c) {
        add_opa32(c), c.opa_shift = 3, c.ofm_shift = 40, c.every_pair = true, c.h = 16, c.w = 16, c.c = 256;
    }),
    with(elt("AddBroadcastH", ElementwiseMode::Add), [](EltCase& c) { add_opb32(c), c.broadcast_h = true; }),
    with(elt("AddBroadcastW", ElementwiseMode::Add), [](EltCase& c) { add_opb32(c), c.broadcast_w = true; }),
    with(elt("AddBroadcastC", ElementwiseMode::Add), [](EltCase& c) { add_opb32(c), c.broadcast_c = true, c.c = 24; }),
    with(elt("AddBroadcastHWReversed", ElementwiseMode::Add), [](EltCase& c) {
        add_opa32(c), c.broadcast_h = c.broadcast_w = true, c.reversed = true;
    }),
    with(elt("AddNhcwb16PartialBrickFourTiles", ElementwiseMode::Add), [](EltCase& c) {
        add_opa32(c), c.c = 21, c.h = 5, c.w = 6, c.format = DataFormat::NHCWB16, c.four_tiles = true;
    }),
    with(elt("AddTruncate", ElementwiseMode::Add), [](EltCase& c) { add_opa32(c), c.round = RoundMode::Truncate; }),
    with(elt("AddNatural", ElementwiseMode::Add), [](EltCase& c) { add_opa32(c), c.round = RoundMode::Natural; }),
    with(elt("AddClamped", ElementwiseMode::Add), [](EltCase& c) { add_opa32(c), c.narrow_clip = true; }),
    with(elt("AddUnitScaleSaturates", ElementwiseMode::Add), [](EltCase& c) { c.opa_scale = c.opb_scale = 1; }),
    with(elt("AddShiftMax", ElementwiseMode::Add), [](EltCase& c) {
        c.opa_scale = c.opb_scale = 0xFFFF, c.ofm_scale = 0xFFFFFFFF, c.ofm_shift = 63;
    }),
    with(elt("Mul", ElementwiseMode::Mul), mul_scale),
    with(elt("MulTruncate", ElementwiseMode::Mul), [](EltCase& c) { mul_scale(c), c.round = RoundMode::Truncate; }),
    with(elt("MulNaturalInt16", ElementwiseMode::Mul), [](EltCase& c) {
        c.in = c.out = kInt16, c.ofm_scale = 1073940096, c.ofm_shift = 45, c.round = RoundMode::Natural;
    }),
    with(elt("MulInt32IgnoresTheScale", ElementwiseMode::Mul), [](EltCase& c) {
        c.in = c.out = kInt32, c.ofm_scale = 12345, c.ofm_shift = 20;
    }),
    with(elt("MulBroadcastCScalarZeroPoints", ElementwiseMode::Mul), [](EltCase& c) {
        mul_scale(c), c.broadcast_c = true, c.zp1 = 3, c.zp2 = -2, c.zp_out = 1;
    }),
    with(elt("MulScalar", ElementwiseMode::Mul), [](EltCase& c) {
        mul_scale(c), c.scalar = true, c.scalar_value = -128;
    }),
    with(elt("MulUint8", ElementwiseMode::Mul), [](EltCase& c) {
        mul_scale(c), c.in = c.out = kUint8, c.zp1 = 128, c.zp2 = 120, c.zp_out = 128;
    }),
    with(elt("Min", ElementwiseMode::Min), [](EltCase& c) { c.zp1 = 4, c.zp2 = -6, c.zp_out = 2; }),
    with(elt("MinBroadcastWReversed", ElementwiseMode::Min), [](EltCase& c) {
        c.broadcast_w = true, c.reversed = true;
    }),
    with(elt("Max", ElementwiseMode::Max), [](EltCase& c) {
        c.in = c.out = kInt16, c.ofm_scale = 3, c.ofm_shift = 1, c.round = RoundMode::Natural;
    }),
    with(elt("MaxScalarUint8", ElementwiseMode::Max), [](EltCase& c) {
        c.in = c.out = kUint8, c.scalar = true, c.scalar_value = 200, c.zp1 = 10;
    }),
    with(elt("Abs", ElementwiseMode::Abs), [](EltCase& c) { c.ofm_scale = 1800000000, c.ofm_shift = 31, c.zp1 = 7; }),
    with(elt("AbsInt16Saturates", ElementwiseMode::Abs), [](EltCase& c) { c.in = c.out = kInt16; }),
    with(elt("LRelu", ElementwiseMode::LRelu), [](EltCase& c) {
        c.ofm_scale = 1717986918, c.ofm_shift = 33, c.zp1 = -3, c.zp_out = 5;
    }),
    with(elt("LReluTruncateNhcwb16", ElementwiseMode::LRelu), [](EltCase& c) {
        c.ofm_scale = 1717986918, c.ofm_shift = 33;
        c.round = RoundMode::Truncate, c.format = DataFormat::NHCWB16, c.c = 17;
    }),
    with(elt("ClzInt32", ElementwiseMode::Clz), [](EltCase& c) { c.in = c.out = kInt32; }),
    with(elt("ClzInt8", ElementwiseMode::Clz), [](EltCase& c) { c.zp1 = 1; }),
    with(elt("ShlInt32", ElementwiseMode::Shl), [](EltCase& c) { c.in = c.out = kInt32; }),
    with(elt("ShlInt8Saturates", ElementwiseMode::Shl), [](EltCase& c) { c.broadcast_h = true; }),
    with(elt("ShrInt32", ElementwiseMode::Shr), [](EltCase& c) { c.in = c.out = kInt32; }),
    with(elt("ShrInt32Natural", ElementwiseMode::Shr), [](EltCase& c) {
        c.in = c.out = kInt32, c.round = RoundMode::Natural;
    }),
    // Vela 3.x/4.x softmax lowerings write OFM zero points 14 or 34 on int32 outputs; none is added.
    with(elt("ShrInt32IgnoresOfmZeroPoint", ElementwiseMode::Shr), [](EltCase& c) {
        c.in = c.out = kInt32, c.zp_out = 34;
    }),
    with(elt("SubInt32IgnoresOfmZeroPoint", ElementwiseMode::Sub), [](EltCase& c) {
        c.in = c.out = kInt32, c.zp_out = 14;
    }),
    with(elt("MulInt32IgnoresOfmZeroPoint", ElementwiseMode::Mul), [](EltCase& c) {
        c.in = c.out = kInt32, c.ofm_shift = 31, c.zp_out = 34;
    }),
    with(elt("ClzInt32IgnoresOfmZeroPoint", ElementwiseMode::Clz), [](EltCase& c) {
        c.in = c.out = kInt32, c.zp_out = 14;
    }),
    with(elt("ShlInt32IgnoresOfmZeroPoint", ElementwiseMode::Shl), [](EltCase& c) {
        c.in = c.out = kInt32, c.zp_out = -5;
    }),
    with(elt("ShrScalarNaturalInt16", ElementwiseMode::Shr), [](EltCase& c) {
        c.in = c.out = kInt16, c.scalar = true, c.scalar_value = 5, c.round = RoundMode::Natural;
    }),
    // Tall enough to be split over worker threads.
    with(elt("AddInt16Tall", ElementwiseMode::Add), [](EltCase& c) {
        c.in = c.out = kInt16, c.h = 48, c.w = 9, c.c = 33, c.scale_mode = 2, c.opa_scale = 1600000000;
        c.opa_shift = 17, c.ofm_scale = 1300000000, c.ofm_shift = 46, c.broadcast_w = true;
    }),
    with(elt("MulInt8TallReversed", ElementwiseMode::Mul), [](EltCase& c) {
        mul_scale(c), c.h = 40, c.w = 11, c.c = 20, c.reversed = true, c.zp1 = 3, c.zp2 = -5;
    }),
    with(elt("AddU65DualCore", ElementwiseMode::Add), [](EltCase& c) {
        add_opb32(c), c.config = "ethos-u65-512", c.broadcast_w = true;
    }),
};

INSTANTIATE_TEST_SUITE_P(Kernels, ElementwiseTest, ::testing::ValuesIn(kEltCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Every U55/U65 configuration runs the ops of the corpus's single-op models, with their shapes and
// the block registers Vela 4.1.0 programmed for them (../shared/vectors-vela/4.1.0/<model>/<config>/
// vela_stdout.txt; 3.10.0 programs the same): conv_k3s1_same_10x10x7to13_relu,
// dw_k3s1_same_16x16x32_relu6, fc_64to10, maxpool_k3s2_same_15x15x24, avgpool_k3s1_same_12x12x20,
// add_8x8x32 and mul_8x8x32. On U65-512 each op also gets PARALLEL_MODE 1 (in those listings for
// every op) and CONVs the two cores' weight and scale streams.

struct VelaBlocks {
    const char* config;
    BlockConfig conv, depthwise, fully_connected, max_pool, average_pool, elementwise;
};

const VelaBlocks kVelaBlocks[] = {
    // Not in the corpus. Vela's ethos-u55-32 has ethos-u55-64's 16 KB SHRAM in 16 banks
    // (architecture_features.py, 3.10) and a 4-deep OFM micro-block, which divides these depths:
    // ethos-u55-64's blocks.
    {"ethos-u55-32", {8, 10, 16, 4, 4}, {8, 8, 16, 6, 8}, {1, 1, 16, 4, 12}, {5, 8, 16, 8, 8}, {8, 8, 16, 6, 8},
     {8, 8, 32, 16, 16, 6}},
    {"ethos-u55-64", {8, 10, 16, 4, 4}, {8, 8, 16, 6, 8}, {1, 1, 16, 4, 12}, {5, 8, 16, 8, 8}, {8, 8, 16, 6, 8},
     {8, 8, 32, 16, 16, 6}},
    {"ethos-u65-512", {10, 10, 16, 10, 30}, {12, 16, 16, 10, 14}, {2, 2, 16, 10, 30}, {8, 8, 16, 18, 30},
     {12, 12, 16, 10, 14}, {8, 8, 32, 46, 46, 10}},
};

enum class VelaOp { Conv, Depthwise, FullyConnected, MaxPool, AveragePool, Add, Mul };

std::string vela_op_name(VelaOp op) {
    constexpr const char* kNames[] = {"Conv", "Depthwise", "FullyConnected", "MaxPool", "AveragePool", "Add", "Mul"};
    return kNames[static_cast<int>(op)];
}

class EveryConfiguration : public ::testing::TestWithParam<std::tuple<VelaBlocks, VelaOp>> {};

TEST_P(EveryConfiguration, VelasOpMatchesThePlainReference) {
    // Not a structured binding: clang 14 cannot capture those in the lambdas below.
    const VelaBlocks& blocks = std::get<0>(GetParam());
    switch (std::get<1>(GetParam())) {
        case VelaOp::Conv:
            return check_conv(with(conv("conv"), [&](ConvCase& c) {
                c.config = blocks.config, c.block = blocks.conv;
                c.ifm_h = c.ifm_w = 10, c.ifm_c = 7, c.ofm_c = 13, c.pad = {1, 1, 1, 1}, c.ifm_zp = -3, c.ofm_zp = 5;
            }));
        case VelaOp::Depthwise:
            return check_conv(with(conv("depthwise"), [&](ConvCase& c) {
                c.config = blocks.config, c.block = blocks.depthwise, c.kind = OpKind::Depthwise;
                c.ifm_h = c.ifm_w = 16, c.ifm_c = c.ofm_c = 32, c.pad = {1, 1, 1, 1}, c.narrow_clip = true;
            }));
        case VelaOp::FullyConnected:
            return check_conv(with(conv("fully_connected"), [&](ConvCase& c) {
                c.config = blocks.config, c.block = blocks.fully_connected;
                c.ifm_h = c.ifm_w = c.kernel_h = c.kernel_w = 1, c.ifm_c = 64, c.ofm_c = 10, c.ifm_zp = 7;
            }));
        case VelaOp::MaxPool:
            return check_pool(with(pool("max_pool", PoolMode::Max), [&](PoolCase& c) {
                c.config = blocks.config, c.block = blocks.max_pool;
                c.ifm_h = c.ifm_w = 15, c.depth = 24, c.stride_x = c.stride_y = 2, c.pad = {1, 1, 1, 1};
            }));
        case VelaOp::AveragePool:
            return check_pool(with(pool("average_pool", PoolMode::Average), [&](PoolCase& c) {
                c.config = blocks.config, c.block = blocks.average_pool;
                c.ifm_h = c.ifm_w = 12, c.depth = 20, c.pad = {1, 1, 1, 1}, c.ifm_zp = -4, c.ofm_zp = -4;
            }));
        case VelaOp::Add:
            return check_elementwise(with(elt("add", ElementwiseMode::Add), [&](EltCase& c) {
                add_opa32(c), c.config = blocks.config, c.block = blocks.elementwise;
                c.h = c.w = 8, c.c = 32, c.zp1 = -2, c.zp2 = 6, c.zp_out = 1;
            }));
        case VelaOp::Mul:
            return check_elementwise(with(elt("mul", ElementwiseMode::Mul), [&](EltCase& c) {
                mul_scale(c), c.config = blocks.config, c.block = blocks.elementwise;
                c.h = c.w = 8, c.c = 32, c.zp1 = 3, c.zp2 = -1, c.zp_out = -6;
            }));
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, EveryConfiguration,
                         ::testing::Combine(::testing::ValuesIn(kVelaBlocks),
                                            ::testing::Values(VelaOp::Conv, VelaOp::Depthwise, VelaOp::FullyConnected,
                                                              VelaOp::MaxPool, VelaOp::AveragePool, VelaOp::Add,
                                                              VelaOp::Mul)),
                         [](const auto& info) {
                             std::string name = std::string(std::get<0>(info.param).config) + "_" +
                                                vela_op_name(std::get<1>(info.param));
                             for (char& ch : name)
                                 if (ch == '-') ch = '_';
                             return name;
                         });

// An int8 ADD (unit scales) whose OFM overwrites its own IFM, `ofm_rows_below` rows further on,
// run on `threads` workers; returns the OFM. In place (0) each element is read before the same
// element is written; one row below, each OFM row overwrites the IFM row the next OFM row reads.
Tensor add_over_own_ifm(int ofm_rows_below, int threads) {
    constexpr int kH = 64, kW = 9, kC = 20;
    Rig rig("ethos-u55-128");
    const Placement whole = rig.place(random_tensor(kH + 1, kW, kC, kInt8, 41), {});
    Placement ifm = whole, ofm = whole;
    ifm.height = ofm.height = kH;
    for (uint64_t& base : ofm.tile_base) base += static_cast<uint64_t>(ofm_rows_below * whole.stride_y);
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, true);
    rig.emit_ifm2(rig.place(random_tensor(kH, kW, kC, kInt8, 42), {}));
    rig.stream()
        .emit(Cmd::SET_IFM2_BROADCAST)
        .emit(Cmd::SET_OPA_SCALE, {{Field::SET_OPA_SCALE__scale, 1}})
        .emit(Cmd::SET_OPB_SCALE, {{Field::SET_OPB_SCALE__scale, 1}})
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}});
    rig.emit_activation(0, -128, 127);
    rig.emit_block(16);
    rig.stream().emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, mode_code(ElementwiseMode::Add)}});
    tbb::task_arena arena(threads);
    arena.execute([&] { rig.run(); });
    return rig.read(ofm);
}

// The reference: the rows in order, each reading the IFM as the rows before left it.
Tensor add_over_own_ifm_reference(int ofm_rows_below) {
    constexpr int kH = 64, kW = 9, kC = 20;
    Tensor memory = random_tensor(kH + 1, kW, kC, kInt8, 41);
    const Tensor in2 = random_tensor(kH, kW, kC, kInt8, 42);
    Tensor out(kH, kW, kC, kInt8);
    for (int y = 0; y < kH; ++y)
        for (int x = 0; x < kW; ++x)
            for (int c = 0; c < kC; ++c) {
                out.at(y, x, c) = std::clamp<int64_t>(memory.at(y, x, c) + in2.at(y, x, c), -128, 127);
                memory.at(y + ofm_rows_below, x, c) = out.at(y, x, c);
            }
    return out;
}

TEST(ElementwiseOverItsIfm, InPlaceGivesTheReferenceOnAnyNumberOfThreads) {
    const Tensor want = add_over_own_ifm_reference(0);
    for (const int threads : {1, 2, 4}) {
        SCOPED_TRACE(fmt::format("{} threads", threads));
        expect_same(add_over_own_ifm(0, threads), want);
    }
}

TEST(ElementwiseOverItsIfm, OverlappingRowsRunInOrderOnAnyNumberOfThreads) {
    const Tensor want = add_over_own_ifm_reference(1);
    for (const int threads : {1, 2, 4}) {
        SCOPED_TRACE(fmt::format("{} threads", threads));
        expect_same(add_over_own_ifm(1, threads), want);
    }
}

// ---------------------------------------------------------------------------------------------
// Random sweeps over the case space, beyond the named cases (fixed seeds).

const char* const kConfigs[] = {"ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256",
                                "ethos-u65-512"};
constexpr RoundMode kRoundModes[] = {RoundMode::DoubleSymmetric, RoundMode::Truncate, RoundMode::Natural};

TEST(RandomSweep, ConvAndDepthwise) {
    std::mt19937 rng(2024);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const Precision types[] = {kInt8, kUint8, kInt16};
    for (int trial = 0; trial < 150; ++trial) {
        ConvCase c{"random"};
        c.config = kConfigs[pick(0, 5)];
        c.kind = pick(0, 2) == 0 ? OpKind::Depthwise : OpKind::Conv;
        c.kernel_h = pick(1, 5), c.kernel_w = pick(1, 5);
        c.stride_x = pick(1, 4), c.stride_y = pick(1, 4);
        c.dilation_x = pick(1, 2), c.dilation_y = pick(1, 2);
        const int extent_h = (c.kernel_h - 1) * c.dilation_y + 1, extent_w = (c.kernel_w - 1) * c.dilation_x + 1;
        c.pad = {pick(0, extent_h - 1), pick(0, extent_w - 1), pick(0, extent_h - 1), pick(0, extent_w - 1)};
        c.ifm_h = std::max(pick(1, 12), extent_h - c.pad.top - c.pad.bottom);
        c.ifm_w = std::max(pick(1, 12), extent_w - c.pad.left - c.pad.right);
        c.ifm_c = pick(1, 40);
        c.ofm_c = c.kind == OpKind::Depthwise ? c.ifm_c : pick(1, 40);
        c.ifm = types[pick(0, 2)], c.ofm = types[pick(0, 2)];
        c.ifm_zp = c.ifm.bits == 16 ? 0 : pick(-20, 20) + (c.ifm.is_signed ? 0 : 128);
        c.ofm_zp = c.ofm.bits == 16 ? 0 : pick(-20, 20) + (c.ofm.is_signed ? 0 : 128);
        c.round = kRoundModes[pick(0, 2)];
        c.ifm_format = pick(0, 1) ? DataFormat::NHCWB16 : DataFormat::NHWC;
        c.ofm_format = pick(0, 1) ? DataFormat::NHCWB16 : DataFormat::NHWC;
        c.part_kernel = c.kind == OpKind::Conv && pick(0, 1);
        c.narrow_clip = pick(0, 3) == 0;
        const int out_h = window(c.ifm_h, c.kernel_h, c.stride_y, c.dilation_y, c.pad.top, c.pad.bottom).out;
        const int out_w = window(c.ifm_w, c.kernel_w, c.stride_x, c.dilation_x, c.pad.left, c.pad.right).out;
        c.four_tiles = std::min({c.ifm_h, c.ifm_w, out_h, out_w}) >= 2 && pick(0, 1);
        SCOPED_TRACE(fmt::format("trial {}: {} {} ifm {}x{}x{} ofm {} k {}x{} s {}x{} d {}x{} pad {},{},{},{} "
                                 "bits {}/{} fmt {}/{} tiles {} pkf {}",
                                 trial, c.config, c.kind == OpKind::Depthwise ? "depthwise" : "conv", c.ifm_h, c.ifm_w,
                                 c.ifm_c, c.ofm_c, c.kernel_h, c.kernel_w, c.stride_x, c.stride_y, c.dilation_x,
                                 c.dilation_y, c.pad.top, c.pad.left, c.pad.bottom, c.pad.right, c.ifm.bits,
                                 c.ofm.bits, static_cast<int>(c.ifm_format), static_cast<int>(c.ofm_format),
                                 c.four_tiles, c.part_kernel));
        check_conv(c);
        if (HasFailure()) return;
    }
}

TEST(RandomSweep, Pooling) {
    std::mt19937 rng(2026);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const Precision types[] = {kInt8, kUint8, kInt16};
    const PoolMode modes[] = {PoolMode::Max, PoolMode::Average, PoolMode::ReduceSum};
    for (int trial = 0; trial < 150; ++trial) {
        PoolCase c{"random", modes[pick(0, 2)]};
        c.config = kConfigs[pick(0, 5)];
        const bool reduce = c.mode == PoolMode::ReduceSum;
        c.kernel_h = reduce ? 1 : pick(1, 6), c.kernel_w = reduce ? 1 : pick(1, 6);
        c.stride_x = reduce ? 1 : pick(1, 4), c.stride_y = reduce ? 1 : pick(1, 4);
        if (!reduce && pick(0, 1)) {
            c.pad.top = pick(0, c.kernel_h - 1), c.pad.left = pick(0, c.kernel_w - 1);
            c.pad.bottom = pick(0, c.kernel_h - 1), c.pad.right = pick(0, c.kernel_w - 1);
        }
        c.ifm_h = std::max(pick(1, 12), c.kernel_h - c.pad.top - c.pad.bottom);
        c.ifm_w = std::max(pick(1, 12), c.kernel_w - c.pad.left - c.pad.right);
        c.depth = pick(1, 40);
        c.ifm = types[pick(0, 2)];
        c.ofm = reduce && pick(0, 1) ? kInt32 : types[pick(0, 2)];
        c.ifm_zp = c.ifm.bits == 16 ? 0 : pick(-20, 20) + (c.ifm.is_signed ? 0 : 128);
        c.ofm_zp = c.ofm.bits != 8 ? 0 : pick(-20, 20) + (c.ofm.is_signed ? 0 : 128);
        c.scale = static_cast<uint32_t>(pick(1 << 30, 0x7FFFFFFF));
        c.shift = pick(28, 40);
        c.round = kRoundModes[pick(0, 2)];
        c.format = pick(0, 1) ? DataFormat::NHCWB16 : DataFormat::NHWC;
        const int out_h = window(c.ifm_h, c.kernel_h, c.stride_y, 1, c.pad.top, c.pad.bottom).out;
        const int out_w = window(c.ifm_w, c.kernel_w, c.stride_x, 1, c.pad.left, c.pad.right).out;
        c.four_tiles = std::min({c.ifm_h, c.ifm_w, out_h, out_w}) >= 2 && pick(0, 1);
        c.narrow_clip = c.ofm.bits <= 16 && pick(0, 3) == 0;
        SCOPED_TRACE(fmt::format("trial {}: {} mode {} ifm {}x{}x{} k {}x{} s {}x{} pad {},{},{},{} bits {}/{} "
                                 "round {} fmt {} tiles {}",
                                 trial, c.config, static_cast<int>(c.mode), c.ifm_h, c.ifm_w, c.depth, c.kernel_h,
                                 c.kernel_w, c.stride_x, c.stride_y, c.pad.top, c.pad.left, c.pad.bottom, c.pad.right,
                                 c.ifm.bits, c.ofm.bits, static_cast<int>(c.round), static_cast<int>(c.format),
                                 c.four_tiles));
        check_pool(c);
        if (HasFailure()) return;
    }
}

TEST(RandomSweep, Elementwise) {
    std::mt19937 rng(2025);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const ElementwiseMode modes[] = {ElementwiseMode::Add, ElementwiseMode::Sub,   ElementwiseMode::Mul,
                                     ElementwiseMode::Min, ElementwiseMode::Max,   ElementwiseMode::LRelu,
                                     ElementwiseMode::Abs, ElementwiseMode::Clz,   ElementwiseMode::Shl,
                                     ElementwiseMode::Shr};
    const Precision types[] = {kInt8, kUint8, kInt16, kInt32};
    for (int trial = 0; trial < 200; ++trial) {
        EltCase c{"random", modes[pick(0, 9)]};
        c.config = kConfigs[pick(0, 5)];
        c.h = pick(1, 7), c.w = pick(1, 7), c.c = pick(1, 35);
        const bool shifts = c.mode == ElementwiseMode::Clz || c.mode == ElementwiseMode::Shl ||
                            c.mode == ElementwiseMode::Shr || c.mode == ElementwiseMode::Mul;
        c.in = types[pick(0, shifts ? 3 : 2)];
        c.out = types[pick(0, shifts ? 3 : 2)];
        const bool binary = !unary(c.mode);
        c.scalar = binary && pick(0, 3) == 0;
        c.broadcast_h = binary && !c.scalar && pick(0, 2) == 0;
        c.broadcast_w = binary && !c.scalar && pick(0, 2) == 0;
        c.broadcast_c = binary && !c.scalar && pick(0, 2) == 0;
        c.reversed = binary && pick(0, 1);
        // The scalar register holds 16 bits, read signed or unsigned as IFM2 is.
        c.scalar_value = static_cast<int32_t>(std::clamp<int64_t>(
            pick(-200, 200), std::max<int64_t>(type_min(c.in), -32768), std::min<int64_t>(type_max(c.in), 32767)));
        const int unsigned_offset = c.in.is_signed ? 0 : 128;
        if (c.in.bits <= 8) c.zp1 = pick(-10, 10) + unsigned_offset, c.zp2 = pick(-10, 10) + unsigned_offset;
        if (c.out.bits <= 8) c.zp_out = pick(-10, 10) + (c.out.is_signed ? 0 : 128);
        c.scale_mode = pick(0, 2);
        c.opa_scale = static_cast<uint32_t>(pick(1 << 30, 0x7FFFFFFF)), c.opa_shift = pick(11, 20);
        c.opb_scale = static_cast<uint32_t>(pick(1, 0xFFFF));
        c.ofm_scale = static_cast<uint32_t>(pick(1 << 30, 0x7FFFFFFF)), c.ofm_shift = pick(0, 63);
        c.round = kRoundModes[pick(0, 2)];
        c.format = pick(0, 1) ? DataFormat::NHCWB16 : DataFormat::NHWC;
        c.four_tiles = c.h >= 2 && c.w >= 2 && pick(0, 1);
        c.narrow_clip = c.out.bits <= 16 && pick(0, 3) == 0;  // 32-bit results are not clipped
        SCOPED_TRACE(fmt::format("trial {}: {} mode {} {}x{}x{} bits {}/{} bcast {}{}{} scalar {} reversed {} "
                                 "scale mode {} round {} fmt {} tiles {}",
                                 trial, c.config, mode_code(c.mode), c.h, c.w, c.c, c.in.bits, c.out.bits,
                                 c.broadcast_h, c.broadcast_w, c.broadcast_c, c.scalar, c.reversed, c.scale_mode,
                                 static_cast<int>(c.round), static_cast<int>(c.format), c.four_tiles));
        check_elementwise(c);
        if (HasFailure()) return;
    }
}

// Two CONVs read the same weight stream bytes: a 3x1 kernel, then a 1x3 one. Depth-first order
// walks the taps of both in one sequence, so the second op sees the first's taps transposed; a
// weight cache keyed by the bytes alone would hand it the 3x1 decode.
TEST(ConvWeights, SameBytesDecodeForEachOpsShape) {
    Rig rig("ethos-u55-128");
    const Tensor in = random_tensor(5, 5, 4, kInt8, 61);
    const Weights tall = random_weights(8, 3, 1, 4, 62);
    Weights wide_kernel{8, 1, 3, 4, std::vector<int16_t>(tall.values.size())};
    for (int o = 0; o < 8; ++o)
        for (int t = 0; t < 3; ++t)
            for (int i = 0; i < 4; ++i) wide_kernel.at(o, 0, t, i) = tall.at(o, t, 0, i);
    const std::vector<ChannelScale> scales(8, ChannelScale{0, 1u << 30, 42});
    const Placement ifm = rig.place(in, {});
    const Placement ofm_tall = rig.reserve(3, 5, 8, kInt8, {});
    const Placement ofm_wide = rig.reserve(5, 3, 8, kInt8, {});
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm_tall, RoundMode::DoubleSymmetric, false);
    rig.emit_kernel(3, 1, 1, 1, 1, 1, false);
    rig.emit_padding(0, 0, 0, 0);
    rig.emit_weights(tall, scales, {false, false, 8, 8, 1, 1});
    rig.emit_activation(0, -128, 127);
    rig.emit_block(8);
    rig.stream().emit(Cmd::OP_CONV);
    rig.emit_ofm(ofm_wide, RoundMode::DoubleSymmetric, false);
    rig.emit_kernel(1, 3, 1, 1, 1, 1, false);
    rig.stream().emit(Cmd::OP_CONV);
    rig.run();

    const auto expect_conv = [&](const Weights& w, const Placement& ofm) {
        const ConvCase c{"", OpKind::Conv, 5, 5, 4, 8, w.kernel_height, w.kernel_width};
        const Tensor acc = conv_accumulators(c, in, w, ofm.height, ofm.width);
        Tensor want(ofm.height, ofm.width, 8, kInt8);
        for (size_t e = 0; e < want.values.size(); ++e)
            want.values[e] = std::clamp<int64_t>(requantize(acc.values[e], 1u << 30, 42, RoundMode::DoubleSymmetric),
                                                 -128, 127);
        expect_same(rig.read(ofm), want);
    };
    expect_conv(tall, ofm_tall);
    expect_conv(wide_kernel, ofm_wide);
}

// ---------------------------------------------------------------------------------------------
// ADD/SUB against TFLite's reference Add/Sub kernel itself: TFLite's multipliers (from the
// tensors' float scales) become the registers; the operand with the smaller scale is rescaled
// with OPA_SCALE, as OPA_32 when it is the first operand, OPB_32 when it is the second. When
// the first input is broadcast it sits in IFM2 and the operand order is reversed, as Vela does.

struct TfliteAddCase {
    const char* name;
    bool sub = false;
    double scale1 = 0.05, scale2 = 0.02, out_scale = 0.07;
    int32_t zp1 = 0, zp2 = 0, zp_out = 0;
    Precision type = kInt8;
    bool first_broadcast = false;  // input 1 is 1x1xC: placed in IFM2, ORDER_A
    bool first_scalar = false;     // input 1 is a scalar: IFM2_SCALAR, ORDER_A
};

std::ostream& operator<<(std::ostream& os, const TfliteAddCase& c) { return os << c.name; }

class TfliteAddTest : public ::testing::TestWithParam<TfliteAddCase> {};

TEST_P(TfliteAddTest, MatchesTfliteReferenceKernel) {
    const TfliteAddCase& c = GetParam();
    const int H = 4, W = 5, C = 6;
    const int left_shift = c.type.bits == 8 ? 20 : 15;
    const double twice_max = 2 * std::max(c.scale1, c.scale2);
    const auto m1 = tflite_math::quantize_multiplier(c.scale1 / twice_max);
    const auto m2 = tflite_math::quantize_multiplier(c.scale2 / twice_max);
    const auto m_out = tflite_math::quantize_multiplier(twice_max / ((1 << left_shift) * c.out_scale));

    const bool reversed = c.first_broadcast || c.first_scalar;
    const Tensor in1 = random_tensor(reversed ? 1 : H, reversed ? 1 : W, c.first_scalar ? 1 : C, c.type, 51);
    const Tensor in2 = random_tensor(H, W, C, c.type, 52);
    // The registers.
    const bool scale_first = c.scale1 <= c.scale2;
    const auto& rescaled = scale_first ? m1 : m2;
    Rig rig("ethos-u55-128");
    const Placement ifm = rig.place(reversed ? in2 : in1, {DataFormat::NHWC, false, reversed ? c.zp2 : c.zp1});
    const Placement ofm = rig.reserve(H, W, C, c.type, {DataFormat::NHWC, false, c.zp_out});
    rig.emit_ifm(ifm, scale_first ? 1 : 2);
    rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, true);
    if (c.first_scalar) {
        rig.stream()
            .emit(Cmd::SET_IFM2_SCALAR, {{Field::SET_IFM2_SCALAR__scalar, static_cast<uint16_t>(in1.values[0])}})
            .emit(Cmd::SET_IFM2_ZERO_POINT, {{Field::SET_IFM2_ZERO_POINT__zero_point, static_cast<uint16_t>(c.zp1)}})
            .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, 1},
                                            {Field::SET_IFM2_PRECISION__activation_precision,
                                             c.type.bits == 8 ? 0u : 1u}});
    } else {
        rig.emit_ifm2(rig.place(reversed ? in1 : in2, {DataFormat::NHWC, false, reversed ? c.zp1 : c.zp2}));
    }
    rig.stream()
        .emit(Cmd::SET_IFM2_BROADCAST, {{Field::SET_IFM2_BROADCAST__broadcast_h, c.first_broadcast},
                                        {Field::SET_IFM2_BROADCAST__broadcast_w, c.first_broadcast},
                                        {Field::SET_IFM2_BROADCAST__operand_order, reversed},
                                        {Field::SET_IFM2_BROADCAST__broadcast_constant, c.first_scalar}})
        .emit(Cmd::SET_OPA_SCALE, {{Field::SET_OPA_SCALE__scale, static_cast<uint32_t>(rescaled.multiplier)},
                                   {Field::SET_OPA_SCALE__shift,
                                    static_cast<uint64_t>(31 - left_shift - rescaled.shift)}})
        .emit(Cmd::SET_OPB_SCALE, {{Field::SET_OPB_SCALE__scale, 1}})
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, static_cast<uint32_t>(m_out.multiplier)},
                                   {Field::SET_OFM_SCALE__shift, static_cast<uint64_t>(31 - m_out.shift)}});
    rig.emit_activation(0, type_min(c.type), type_max(c.type));
    rig.emit_block(8);
    rig.stream().emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, c.sub ? 2u : 1u}});
    rig.run();

    // TFLite's reference Add / Sub, element by element.
    Tensor want(H, W, C, c.type);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
            for (int ch = 0; ch < C; ++ch) {
                const int64_t v1 = reversed ? in1.at(0, 0, c.first_scalar ? 0 : ch) : in1.at(y, x, ch);
                const int32_t shifted1 = static_cast<int32_t>((v1 - c.zp1) * (1 << left_shift));
                const int32_t shifted2 = static_cast<int32_t>((in2.at(y, x, ch) - c.zp2) * (1 << left_shift));
                const int32_t scaled1 = tflite_math::multiply(shifted1, m1.multiplier, m1.shift);
                const int32_t scaled2 = tflite_math::multiply(shifted2, m2.multiplier, m2.shift);
                const int32_t raw = c.sub ? scaled1 - scaled2 : scaled1 + scaled2;
                const int64_t result = tflite_math::multiply(raw, m_out.multiplier, m_out.shift) + c.zp_out;
                want.at(y, x, ch) = std::clamp(result, type_min(c.type), type_max(c.type));
            }
    expect_same(rig.read(ofm), want);
}

const TfliteAddCase kTfliteAddCases[] = {
    {"AddSecondScaleSmaller"},
    {"AddFirstScaleSmaller", false, 0.011, 0.09, 0.1, 3, -4, 2},
    {"AddEqualScales", false, 0.03, 0.03, 0.05, -1, 1, 0},
    {"SubSecondScaleSmaller", true, 0.05, 0.02, 0.07, 5, 0, -9},
    {"SubFirstScaleSmaller", true, 0.004, 0.0078, 0.0079, 0, 12, -128},
    {"SubFirstBroadcast", true, 0.05, 0.021, 0.06, 2, -3, 1, kInt8, true},
    {"SubFirstBroadcastSmaller", true, 0.009, 0.03, 0.05, 0, 7, 3, kInt8, true},
    {"SubFromScalar", true, 0.0078125, 0.00390625, 0.0078125, 0, -128, -128, kInt8, false, true},
    {"AddScalarFirstSmaller", false, 0.001, 0.02, 0.02, 4, 2, -2, kInt8, false, true},
    {"AddInt16", false, 0.0003, 0.0005, 0.0009, 0, 0, 0, kInt16},
    {"SubInt16FirstBroadcast", true, 0.0007, 0.0002, 0.0006, 0, 0, 0, kInt16, true},
};

INSTANTIATE_TEST_SUITE_P(Kernels, TfliteAddTest, ::testing::ValuesIn(kTfliteAddCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Hostile run-time data: each is an ethosu::Error naming the op and its command offset.

// A 3x3 CONV 6x6x4 -> 6x6x8 int8 with padding; returns the offset of its NPU_OP_CONV.
uint32_t emit_small_conv(Rig& rig, Placement* ofm_out = nullptr) {
    const Placement ifm = rig.place(random_tensor(6, 6, 4, kInt8, 41), {});
    const Placement ofm = rig.reserve(6, 6, 8, kInt8, {});
    const Weights w = random_weights(8, 3, 3, 4, 42);
    std::vector<ChannelScale> scales(8, ChannelScale{10, 1u << 30, 38});
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, false);
    rig.emit_kernel(3, 3, 1, 1, 1, 1, false);
    rig.emit_padding(1, 1, 1, 1);
    rig.emit_weights(w, scales, {false, false, 8, 8, 1, 1});
    rig.emit_activation(0, -128, 127);
    rig.emit_block(8);
    const uint32_t at = rig.next_offset();
    rig.stream().emit(Cmd::OP_CONV);
    if (ofm_out) *ofm_out = ofm;
    return at;
}

// Runs the rig and returns the error; checks it names the op and the command offset.
Error run_error(Rig& rig, uint32_t op_offset, const std::string& op_name, const WorkLimits& limits = {}) {
    try {
        rig.run(limits);
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, op_offset) << e.what();
        const std::string text = e.what();
        EXPECT_NE(text.find(fmt::format("cmd@0x{:x}", op_offset)), std::string::npos) << text;
        EXPECT_NE(text.find(op_name), std::string::npos) << text;
        return e;
    }
    ADD_FAILURE() << "no error";
    return Error({}, "no error");
}

bool mentions(const Error& e, const std::string& what) { return std::string(e.what()).find(what) != std::string::npos; }

TEST(HostileRuntime, OfmPastTheEndOfItsRegion) {
    Rig rig("ethos-u55-128");
    Placement ofm;
    const uint32_t at = emit_small_conv(rig, &ofm);
    rig.sram().resize(ofm.tile_base[0] + 100);  // the OFM needs 6 * stride_y bytes
    const Error e = run_error(rig, at, "conv");
    EXPECT_TRUE(mentions(e, "OFM accesses region 1")) << e.what();
}

TEST(HostileRuntime, Ifm2PastTheEndOfItsRegion) {
    Rig rig("ethos-u65-256");
    const Placement ifm = rig.place(random_tensor(4, 4, 8, kInt8, 43), {});
    const Placement ofm = rig.reserve(4, 4, 8, kInt8, {});
    const Placement ifm2 = rig.place(random_tensor(4, 4, 8, kInt8, 44), {});
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, true);
    rig.emit_ifm2(ifm2);
    rig.stream().emit(Cmd::SET_IFM2_BROADCAST).emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}});
    rig.emit_activation(0, -128, 127);
    rig.emit_block(8);
    const uint32_t at = rig.next_offset();
    rig.stream().emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 4}});
    rig.sram().resize(ifm2.tile_base[0] + 3 * ifm2.stride_y);  // one row short
    const Error e = run_error(rig, at, "elementwise");
    EXPECT_TRUE(mentions(e, "IFM2 accesses region 1")) << e.what();
}

TEST(HostileRuntime, IfmTileOutsideItsRegion) {
    Rig rig("ethos-u55-128");
    const Placement ifm = rig.place(random_tensor(6, 6, 16, kInt8, 46), {DataFormat::NHCWB16, true, 0});
    const Placement ofm = rig.reserve(6, 6, 16, kInt8, {});
    rig.emit_ifm(ifm);
    // Tile 3 runs off the end of the SRAM.
    rig.stream().emit(Cmd::SET_IFM_BASE3, {{Field::SET_IFM_BASE3__addr, rig.sram().size() - 64}});
    rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, true);
    rig.emit_kernel(2, 2, 1, 1, 1, 1, false);
    rig.emit_padding(0, 0, 1, 1);
    rig.stream().emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}});
    rig.emit_activation(0, -128, 127);
    rig.emit_block(16);
    const uint32_t at = rig.next_offset();
    rig.stream().emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 0}});
    const Error e = run_error(rig, at, "pool");
    EXPECT_TRUE(mentions(e, "IFM accesses region 1")) << e.what();
}

TEST(HostileRuntime, LutDmaPastTheEndOfItsSourceRegion) {
    Rig rig("ethos-u65-256");
    const uint64_t lut = rig.add_lut(std::vector<uint8_t>(100));
    const uint32_t at = rig.emit_lut_dma(lut, 0, 256);
    const Error e = run_error(rig, at, "NPU_OP_DMA_START");
    EXPECT_TRUE(mentions(e, "DMA source accesses region 3")) << e.what();
}

TEST(HostileRuntime, WeightRegionSmallerThanTheStreams) {
    Rig rig("ethos-u55-64");
    const uint32_t at = emit_small_conv(rig);
    rig.weight_bytes().resize(rig.weight_bytes().size() - 30);  // cuts into the scale stream
    const Error e = run_error(rig, at, "conv");
    EXPECT_TRUE(mentions(e, "weight/scale stream accesses region 2")) << e.what();
}

TEST(HostileRuntime, WeightStreamThatEndsEarly) {
    for (const uint64_t length : {1u, 5u, 40u, 100u}) {
        Rig rig("ethos-u55-128");
        emit_small_conv(rig);
        // Vela's stream is longer; WEIGHT_LENGTH now ends it inside a slice.
        rig.stream().emit(Cmd::SET_WEIGHT_LENGTH, {{Field::SET_WEIGHT_LENGTH__length, length}});
        const uint32_t at = rig.next_offset();
        rig.stream().emit(Cmd::OP_CONV);
        const Error e = run_error(rig, at, "conv");
        EXPECT_EQ(e.where().field, "WEIGHT_BASE") << e.what();
        EXPECT_TRUE(mentions(e, "weight stream at 0x0")) << e.what();
    }
}

TEST(HostileRuntime, WeightStreamWithTooFewWeights) {
    Rig rig("ethos-u55-128");
    emit_small_conv(rig);
    // A complete stream for 8 OFM channels, read by an op with 16.
    rig.stream().emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, 15}});
    const uint32_t at = rig.next_offset();
    rig.stream().emit(Cmd::OP_CONV);
    // The op is far above the work limits: lifted, so that the weight check is what refuses it.
    const Error e = run_error(rig, at, "conv", {.max_op_work = UINT64_MAX, .max_run_work = UINT64_MAX});
    EXPECT_EQ(e.where().field, "WEIGHT_BASE") << e.what();
    EXPECT_TRUE(mentions(e, "fewer than the op's traversal needs")) << e.what();
}

// Registers that ask for far more weights than the stream's bytes could encode are refused before
// any buffer is sized from them.
TEST(HostileRuntime, WeightStreamTooShortForTheRegisters) {
    Rig rig("ethos-u55-128");
    emit_small_conv(rig);
    rig.stream().emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, 65535}});
    rig.stream().emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, 65535}});
    const uint32_t at = rig.next_offset();
    rig.stream().emit(Cmd::OP_CONV);
    // The op is far above the work limits: lifted, so that the weight check is what refuses it.
    const Error e = run_error(rig, at, "conv", {.max_op_work = UINT64_MAX, .max_run_work = UINT64_MAX});
    EXPECT_EQ(e.where().field, "WEIGHT_BASE") << e.what();
    EXPECT_TRUE(mentions(e, "can hold at most")) << e.what();
}

TEST(HostileRuntime, ScaleStreamThatEndsEarly) {
    Rig rig("ethos-u55-128");
    emit_small_conv(rig);
    rig.stream().emit(Cmd::SET_SCALE_LENGTH, {{Field::SET_SCALE_LENGTH__length, 75}});  // 8 channels need 80
    const uint32_t at = rig.next_offset();
    rig.stream().emit(Cmd::OP_CONV);
    const Error e = run_error(rig, at, "conv");
    EXPECT_EQ(e.where().field, "SCALE_LENGTH") << e.what();
}

std::vector<uint8_t> test_lut() {
    std::vector<uint8_t> lut(256);
    for (int i = 0; i < 256; ++i) lut[static_cast<size_t>(i)] = static_cast<uint8_t>(255 - i * 3);
    return lut;
}

TEST(HostileRuntime, TableActivationWithALoadedLut) {
    Rig rig("ethos-u55-256");
    const auto lut = test_lut();
    rig.emit_lut_dma(rig.add_lut(lut), 2, 256);
    const LutOp op = emit_lut_pool(rig, 2);
    rig.run();
    expect_same(rig.read(op.ofm), op.expected(lut));
}

TEST(HostileRuntime, TableActivationWithoutItsLutLoaded) {
    for (const char* config : {"ethos-u55-128", "ethos-u65-256"}) {
        Rig rig(config);
        rig.emit_lut_dma(rig.add_lut(test_lut()), 1, 256);  // slot 1; the op reads slot 2
        const LutOp op = emit_lut_pool(rig, 2);
        const Error e = run_error(rig, op.offset, "pool");
        EXPECT_TRUE(mentions(e, "TABLE_2")) << e.what();
        EXPECT_TRUE(mentions(e, "no DMA has loaded")) << e.what();
    }
}

// U65-512: each of the two cores has 48 KB of SHRAM with the LUT in its last 2 KB, at 0xb800, where
// Vela 3.x/4.x DMA it with core mask 3 (../shared/vectors-vela */ethos-u65-512/vela_stdout.txt).
TEST(U65Dual, LutLoadedIntoBothCoresAt0xb800) {
    Rig rig("ethos-u65-512");
    const auto lut = test_lut();
    const uint32_t dma = rig.emit_lut_dma(rig.add_lut(lut), 2, 256);
    const auto words = rig.stream().words();
    ASSERT_EQ(words[dma / 4 - 3], 0xb800u + 2 * 256);  // the DMA0_DST payload: 46 KB + slot 2
    const LutOp op = emit_lut_pool(rig, 2);
    rig.run();
    expect_same(rig.read(op.ofm), op.expected(lut));
}

TEST(U65Dual, LutLoadedIntoOneCoreOnlyIsRefused) {
    Rig rig("ethos-u65-512");
    const uint64_t lut = rig.add_lut(test_lut());
    rig.emit_lut_dma(lut, 2, 256);
    rig.stream().emit(Cmd::SET_DMA0_DST_REGION,
                      {{Field::SET_DMA0_DST_REGION__region, 1}, {Field::SET_DMA0_DST_REGION__region_mode, 1}});
    rig.stream().emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, 0xb800 + 3 * 256}});
    rig.stream().emit(Cmd::OP_DMA_START).emit(Cmd::OP_DMA_WAIT);  // slot 3 on core 0 only
    const LutOp op = emit_lut_pool(rig, 3);
    const Error e = run_error(rig, op.offset, "pool");
    EXPECT_TRUE(mentions(e, "every core")) << e.what();
}

TEST(U65Dual, LutPastACoresShramIsRefused) {
    Rig rig("ethos-u65-512");
    rig.stream().emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, kLutRegion}});
    rig.stream().emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, rig.add_lut(test_lut())}});
    rig.stream().emit(Cmd::SET_DMA0_DST_REGION,
                      {{Field::SET_DMA0_DST_REGION__region, 3}, {Field::SET_DMA0_DST_REGION__region_mode, 1}});
    rig.stream().emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, 0x17800}});  // the end of 96 KB
    rig.stream().emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, 256}});
    const uint32_t dma = rig.next_offset();
    rig.stream().emit(Cmd::OP_DMA_START);
    const Error e = run_error(rig, dma, "NPU_SET_DMA0_DST");
    EXPECT_TRUE(mentions(e, "49152 bytes per core")) << e.what();
}

TEST(HostileRuntime, TableActivationPastTheLastSlot) {
    Rig rig("ethos-u55-128");
    const LutOp op = emit_lut_pool(rig, 15);  // activation function 31: U55/U65 define TABLE_0..TABLE_7
    const Error e = run_error(rig, op.offset, "NPU_SET_ACTIVATION.activation_function");
    EXPECT_TRUE(mentions(e, "value 31 is not a valid")) << e.what();
}

TEST(HostileRuntime, TableActivationWithAPartlyLoadedLut) {
    Rig rig("ethos-u55-128");
    rig.emit_lut_dma(rig.add_lut(test_lut()), 5, 128);  // half of slot 5
    const LutOp op = emit_lut_pool(rig, 5);
    const Error e = run_error(rig, op.offset, "pool");
    EXPECT_TRUE(mentions(e, "slot 5")) << e.what();
}

// A MAX pool of 8192 x 8192 x 32 over maps whose strides are 0 (every element aliases the first
// 32 bytes): 2^31 steps from a few hundred bytes of SRAM, above the default limit of 2^30 per
// op. Refused before it starts, not hours into it (cpu_dos_pool_stride0.npz asks 2^38).
TEST(HostileRuntime, AliasedPoolAboveTheWorkLimit) {
    Rig rig("ethos-u55-128");
    auto aliased = [](Placement p) {
        p.height = p.height0 = p.height1 = p.width = p.width0 = 8192;
        p.stride_x = p.stride_y = 0;
        return p;
    };
    const Placement ifm = aliased(rig.place(random_tensor(1, 1, 32, kInt8, 47), {}));
    const Placement ofm = aliased(rig.reserve(1, 1, 32, kInt8, {}));
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, true);
    rig.emit_kernel(1, 1, 1, 1, 1, 1, false);
    rig.emit_padding(0, 0, 0, 0);
    rig.stream().emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}});
    rig.emit_activation(0, -128, 127);
    rig.emit_block(16);
    const uint32_t at = rig.next_offset();
    rig.stream().emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 0}});
    const Error e = run_error(rig, at, "pool");
    EXPECT_TRUE(mentions(e, "OFM 8192x8192x32 x 1x1 taps = 2.15e+09")) << e.what();
    EXPECT_TRUE(mentions(e, "--max-op-work")) << e.what();
}

// An IFM_UPSCALE'd IFM is built in a buffer of the upscaled map's size (here 10 x 12 x 7 bytes):
// one byte over the allocation limit is refused at the op, the limit itself runs.
TEST(HostileRuntime, UpscaledIfmAboveTheAllocationLimit) {
    auto upscaled_pool = [](Rig& rig) {
        const Placement ifm = rig.place(random_tensor(5, 6, 7, kInt8, 48), {});
        const Placement ofm = rig.reserve(10, 12, 7, kInt8, {});
        rig.emit_ifm(ifm);
        rig.emit_ofm(ofm, RoundMode::Natural, true);
        rig.emit_kernel(2, 2, 1, 1, 1, 1, false);
        rig.emit_padding(0, 0, 1, 1, UpscaleMode::Nearest);
        rig.emit_activation(0, -128, 127);
        rig.stream().emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}});
        rig.emit_block(16);
        const uint32_t at = rig.next_offset();
        rig.stream().emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 1}});  // AVERAGE
        return at;
    };
    constexpr uint64_t kUpscaledBytes = 10 * 12 * 7;
    Rig refused("ethos-u55-128");
    const uint32_t at = upscaled_pool(refused);
    const Error e = run_error(refused, at, "pool", {.max_allocation_bytes = kUpscaledBytes - 1});
    EXPECT_TRUE(mentions(e, "the upscaled IFM needs 840 bytes")) << e.what();
    EXPECT_TRUE(mentions(e, "--max-allocation")) << e.what();
    Rig runs("ethos-u55-128");
    upscaled_pool(runs);
    EXPECT_NO_THROW(runs.run({.max_allocation_bytes = kUpscaledBytes}));
}

}  // namespace
}  // namespace ethosu::kernel_test
