// Every U55/U65 kernel op, built with the CommandStreamBuilder and the test weight encoder, run on
// the Executor and compared with plain loop references written here (TFLite reference-kernel
// style: one loop nest per op, exact integer arithmetic). Edge cases: saturation, shifts at both
// ends, padding on each side, odd depths, NHCWB16 partial bricks, four tiles, strides 1..4,
// dilation, IFM2 broadcast and scalars, every rounding mode, int8/uint8/int16.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>

#include "emulator/isa/error.h"
#include "tests/engine/kernel_harness.h"

namespace ethosu::kernel_test {
namespace {

using isa::Cmd;
using isa::Field;
__extension__ typedef __int128 wide;

constexpr Precision kInt8{true, 8}, kUint8{false, 8}, kInt16{true, 16}, kInt32{true, 32};

// ---------------------------------------------------------------------------------------------
// Reference arithmetic.

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
        case RoundMode::Natural: {
            const wide v = product + divisor / 2;
            return static_cast<int64_t>(v >= 0 || v % divisor == 0 ? v / divisor : v / divisor - 1);
        }
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

struct Mismatches {
    int count = 0;
    std::string first;
};

void expect_same(const Tensor& got, const Tensor& want) {
    ASSERT_EQ(got.values.size(), want.values.size());
    Mismatches m;
    for (int y = 0; y < want.height; ++y)
        for (int x = 0; x < want.width; ++x)
            for (int c = 0; c < want.depth; ++c)
                if (got.at(y, x, c) != want.at(y, x, c) && m.count++ < 5)
                    m.first += fmt::format(" ({},{},{}): got {} want {}", y, x, c, got.at(y, x, c), want.at(y, x, c));
    EXPECT_EQ(m.count, 0) << m.count << " of " << want.values.size() << " elements differ:" << m.first;
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
    const char* config = "ethos-u55-128";
};

std::ostream& operator<<(std::ostream& os, const ConvCase& c) { return os << c.name; }

Weights random_weights(int o, int kh, int kw, int i, uint32_t seed) {
    Weights w{o, kh, kw, i, {}};
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> any(-255, 255);
    w.values.resize(static_cast<size_t>(o) * kh * kw * i);
    for (size_t k = 0; k < w.values.size(); ++k) w.values[k] = static_cast<int16_t>(k % 11 == 5 ? (k % 2 ? 255 : -255) : any(rng));
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
                            for (int ic = 0; ic < c.ifm_c; ++ic) sum += (in.at(iy, ix, ic) - c.ifm_zp) * w.at(oc, ky, kx, ic);
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

class ConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTest, MatchesThePlainReference) {
    const ConvCase& c = GetParam();
    const bool depthwise = c.kind == OpKind::Depthwise;
    Rig rig(c.config);
    const Window wy = window(c.ifm_h, c.kernel_h, c.stride_y, c.dilation_y, c.pad.top, c.pad.bottom);
    const Window wx = window(c.ifm_w, c.kernel_w, c.stride_x, c.dilation_x, c.pad.left, c.pad.right);
    const Tensor in = random_tensor(c.ifm_h, c.ifm_w, c.ifm_c, c.ifm, 11);
    const Weights w = random_weights(c.ofm_c, c.kernel_h, c.kernel_w, depthwise ? 1 : c.ifm_c, 12);
    std::vector<ChannelScale> bias(static_cast<size_t>(c.ofm_c));
    std::mt19937 rng(13);
    for (auto& b : bias) b.bias = std::uniform_int_distribution<int64_t>(-100000, 100000)(rng);
    const Tensor acc = conv_accumulators(c, in, w, wy.out, wx.out);
    const std::vector<ChannelScale> scales = channel_scales(c, acc, bias);

    const Placement ifm = rig.place(in, {c.ifm_format, c.four_tiles, c.ifm_zp});
    const Placement ofm = rig.reserve(wy.out, wx.out, c.ofm_c, c.ofm, {c.ofm_format, c.four_tiles, c.ofm_zp});
    const OutputStage out = output_stage(c.ofm, c.ofm_zp, c.narrow_clip);
    const int block_depth = std::min(64, (c.ofm_c + 7) / 8 * 8);
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, c.round, false);
    rig.emit_kernel(c.kernel_h, c.kernel_w, c.stride_x, c.stride_y, c.dilation_x, c.dilation_y, c.part_kernel);
    rig.emit_padding(c.pad.top, c.pad.left, wy.pad_after, wx.pad_after);
    rig.emit_weights(w, scales, {depthwise, c.part_kernel, c.ifm.bits, block_depth, c.dilation_x, c.dilation_y});
    rig.emit_activation(0, out.lo, out.hi);
    rig.emit_block(block_depth);
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

ConvCase conv(const char* name) { return ConvCase{name}; }
template <typename F>
ConvCase with(ConvCase c, F f) {
    f(c);
    return c;
}

const ConvCase kConvCases[] = {
    conv("Basic3x3"),
    with(conv("PaddingOnAllFourSides"), [](ConvCase& c) { c.pad = {1, 2, 2, 1}; }),
    with(conv("PaddingTopLeftOnly"), [](ConvCase& c) { c.pad = {2, 1, 0, 0}; }),
    with(conv("Stride2"), [](ConvCase& c) { c.stride_x = c.stride_y = 2, c.ifm_h = 9, c.ifm_w = 8, c.pad = {1, 1, 1, 1}; }),
    with(conv("Stride3x1"), [](ConvCase& c) { c.stride_x = 3, c.ifm_w = 11, c.pad = {0, 1, 1, 1}; }),
    with(conv("Stride4"), [](ConvCase& c) {
        c.stride_x = c.stride_y = 4, c.kernel_h = c.kernel_w = 5, c.ifm_h = c.ifm_w = 13, c.pad = {2, 2, 2, 2};
    }),
    with(conv("Stride1x4"), [](ConvCase& c) { c.stride_y = 4, c.ifm_h = 10, c.kernel_h = 4; }),
    with(conv("Dilation2"), [](ConvCase& c) { c.dilation_x = c.dilation_y = 2, c.ifm_h = c.ifm_w = 9, c.pad = {2, 2, 2, 2}; }),
    with(conv("DilationXStride2"), [](ConvCase& c) {
        c.dilation_x = 2, c.dilation_y = 1, c.stride_x = c.stride_y = 2, c.ifm_h = 11, c.ifm_w = 12, c.pad = {1, 3, 2, 0};
    }),
    with(conv("OddDepths"), [](ConvCase& c) { c.ifm_c = 7, c.ofm_c = 13; }),
    with(conv("DeepIfmPartKernelFirst"), [](ConvCase& c) { c.ifm_c = 37, c.ofm_c = 9, c.part_kernel = true; }),
    with(conv("DeepIfmDepthFirst"), [](ConvCase& c) { c.ifm_c = 45, c.ofm_c = 17, c.kernel_h = c.kernel_w = 1; }),
    with(conv("LargeKernelSplitsIntoSubKernels"), [](ConvCase& c) { c.kernel_h = 9, c.kernel_w = 10, c.ifm_h = 12, c.ifm_w = 12, c.pad = {4, 5, 4, 4}; }),
    with(conv("Uint8WithZeroPoints"), [](ConvCase& c) { c.ifm = c.ofm = kUint8, c.ifm_zp = 131, c.ofm_zp = 77; }),
    with(conv("Int8WithZeroPoints"), [](ConvCase& c) { c.ifm_zp = -17, c.ofm_zp = 9; }),
    with(conv("Int16Natural"), [](ConvCase& c) { c.ifm = c.ofm = kInt16, c.round = RoundMode::Natural, c.pad = {1, 1, 1, 1}; }),
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
        c.four_tiles = true, c.ifm_h = 9, c.ifm_w = 10, c.ifm_c = 17, c.ofm_c = 20, c.stride_x = 2, c.pad = {0, 1, 1, 0};
        c.ifm_format = c.ofm_format = DataFormat::NHCWB16;
    }),
    with(conv("U55With32Macs"), [](ConvCase& c) { c.config = "ethos-u55-32", c.ofm_c = 11, c.ifm_c = 9; }),
    with(conv("U55With256Macs"), [](ConvCase& c) { c.config = "ethos-u55-256", c.ofm_c = 30; }),
    with(conv("U65DualCore"), [](ConvCase& c) { c.config = "ethos-u65-512", c.ofm_c = 21, c.ifm_c = 10, c.pad = {1, 1, 1, 1}; }),
    with(conv("U65DualCoreOneChannel"), [](ConvCase& c) { c.config = "ethos-u65-512", c.ofm_c = 1; }),
    with(conv("U65SingleCore"), [](ConvCase& c) { c.config = "ethos-u65-256", c.ifm = c.ofm = kInt16; }),
    // Fully connected: a vector product, 1x1 kernel over a 1x1 IFM (and a batch of rows).
    with(conv("FullyConnected"), [](ConvCase& c) { c.ifm_h = c.ifm_w = 1, c.kernel_h = c.kernel_w = 1, c.ifm_c = 67, c.ofm_c = 23; }),
    with(conv("FullyConnectedBatch"), [](ConvCase& c) {
        c.ifm_h = 3, c.ifm_w = 1, c.kernel_h = c.kernel_w = 1, c.ifm_c = 40, c.ofm_c = 10, c.ifm_zp = 3, c.ofm_zp = -3;
    }),
    with(conv("FullyConnectedInt16"), [](ConvCase& c) {
        c.ifm_h = c.ifm_w = 1, c.kernel_h = c.kernel_w = 1, c.ifm_c = 33, c.ofm_c = 8, c.ifm = c.ofm = kInt16;
        c.round = RoundMode::Natural;
    }),
    // Depthwise (depth multiplier 1).
    with(conv("Depthwise3x3"), [](ConvCase& c) { c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 11, c.pad = {1, 1, 1, 1}; }),
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
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 6, c.four_tiles = true, c.ifm_h = 8, c.ifm_w = 7, c.pad = {1, 1, 1, 1};
    }),
    with(conv("DepthwiseU65DualCore"), [](ConvCase& c) {
        c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 19, c.config = "ethos-u65-512", c.kernel_h = 5, c.pad = {2, 1, 2, 1};
    }),
    with(conv("DepthwiseShiftMax"), [](ConvCase& c) { c.kind = OpKind::Depthwise, c.ifm_c = c.ofm_c = 4, c.shifts = ShiftRange::Max; }),
};

INSTANTIATE_TEST_SUITE_P(Kernels, ConvTest, ::testing::ValuesIn(kConvCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ethosu::kernel_test
