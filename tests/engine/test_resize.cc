// U85 NPU_OP_RESIZE and IFM_UPSCALE (U55/U65/U85) on streams built as Vela 5.1 programs them,
// against plain transcriptions of TFLite's RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR reference
// kernels, TOSA's RESIZE pseudocode and TRANSPOSE_CONV; hostile resize registers are refused
// with the op's offset and the field.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "emulator/isa/decoder.h"
#include "emulator/isa/error.h"
#include "tests/engine/kernel_harness.h"
#include "tests/engine/tflite_math.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;
using kernel_test::Placement;
using kernel_test::Rig;
using kernel_test::Tensor;

constexpr Precision kInt8{true, 8}, kUint8{false, 8}, kInt16{true, 16}, kInt32{true, 32}, kInt64{true, 64};
constexpr uint64_t kRoundSymmetric = 3;  // round_mode_ofm SYMMETRIC: what Vela writes for TFLite resizes

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0 ? 1 : 0); }

// ---------------------------------------------------------------------------------------------
// What Vela 5.1 programs (regor tflite_graph_optimiser.cpp ConvertResize and
// ethos_u85_register_cs_generator.cpp GenerateResizeOp).

// TOSA RESIZE parameters per axis: position (o * d + offset) / n.
struct AxisScale {
    int n = 1, d = 1, offset = 0;
};
struct ResizeParams {
    ResizeMode mode = ResizeMode::Bilinear;
    AxisScale y, x;
    int shift = 0;  // the result is (weighted sum) / 2^shift
};

enum class TfliteOp { Bilinear, NearestNeighbor };

AxisScale tflite_axis(int in, int out, bool align_corners, bool half_pixel) {
    AxisScale a{out, in, 0};
    if (align_corners && in > 1) --a.n, --a.d;
    const int g = std::gcd(a.n, a.d);
    a.n /= g, a.d /= g;
    if (half_pixel) {
        a.n *= 2, a.d *= 2;
        a.offset = a.d / 2 - a.n / 2;
    }
    return a;
}

ResizeParams vela_lowering(TfliteOp op, int in_h, int in_w, int out_h, int out_w, bool align_corners, bool half_pixel) {
    // Nearest neighbour uses half-pixel centres unless the corners are aligned.
    if (op == TfliteOp::NearestNeighbor) half_pixel = !align_corners || half_pixel;
    ResizeParams p;
    p.y = tflite_axis(in_h, out_h, align_corners, half_pixel);
    p.x = tflite_axis(in_w, out_w, align_corners, half_pixel);
    if (op == TfliteOp::Bilinear && (in_w > 1 || in_h > 1)) {
        p.mode = ResizeMode::Bilinear;
        p.shift = static_cast<int>(std::log2(p.x.n * p.y.n));
    } else {
        p.mode = ResizeMode::Nearest;
    }
    return p;
}

// The registers of one RESIZE op; hostile tests change them before emitting.
struct ResizeRegisters {
    uint64_t mode = 0;
    int x_n = 1, y_n = 1, x_offset = 0, y_offset = 0;
    std::array<int, 4> x_step{}, y_step{};  // one_step_int, blk_step_int, one_step_mod, blk_step_mod
    int kernel_h = 1, kernel_w = 1;
    int block_h = 1, block_w = 1;
    int shift = 16;
    uint64_t round = kRoundSymmetric;
    UpscaleMode upscale = UpscaleMode::None;
};

std::array<int, 4> steps(const AxisScale& a, int block) {
    const int walk = (block - 1) * a.d;
    return {a.d / a.n, walk / a.n, a.d % a.n, walk % a.n};
}

ResizeRegisters vela_registers(const ResizeParams& p, int ifm_h, int ifm_w, int ofm_w, int block_w) {
    ResizeRegisters r;
    r.mode = p.mode == ResizeMode::Bilinear ? 0 : p.mode == ResizeMode::Replicate ? 1 : 2;
    r.x_n = p.x.n, r.y_n = p.y.n, r.x_offset = p.x.offset, r.y_offset = p.y.offset;
    r.block_w = block_w;  // Vela's blocks are one row high
    r.x_step = steps(p.x, r.block_w);
    r.y_step = steps(p.y, r.block_h);
    const int width_read = ((ofm_w - 1) * p.x.d + p.x.offset) / p.x.n + 2;
    r.kernel_h = ifm_h;
    r.kernel_w = std::min(ifm_w, width_read);
    r.shift = 16 + p.shift;
    return r;
}

uint64_t s12(int v) { return static_cast<uint64_t>(v) & 0xFFF; }

// Emits the op; returns the offset of its NPU_OP_RESIZE.
uint32_t emit_resize(Rig& rig, const Placement& ifm, const Placement& ofm, const ResizeRegisters& r) {
    rig.emit_ifm(ifm);
    rig.emit_padding(0, 0, 0, 0, r.upscale);
    rig.emit_ofm(ofm, RoundMode::Symmetric, true);
    // ACTIVATION_MIN/MAX are 16-bit and leave wider OFMs unclipped.
    const bool narrow = ofm.precision.bits <= 16;
    rig.emit_activation(0, narrow ? kernel_test::type_min(ofm.precision) : INT16_MIN,
                        narrow ? kernel_test::type_max(ofm.precision) : INT16_MAX);
    auto& s = rig.stream();
    s.emit(Cmd::SET_IFM2_ZERO_POINT)
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__shift, static_cast<uint64_t>(r.shift)},
                                   {Field::SET_OFM_SCALE__round_mode, r.round},
                                   {Field::SET_OFM_SCALE__scale, 1}})
        .emit(Cmd::SET_RESIZE_X_SCALE_N_M1,
              {{Field::SET_RESIZE_X_SCALE_N_M1__resize_x_scale_n_m1, uint64_t(r.x_n - 1)}})
        .emit(Cmd::SET_RESIZE_Y_SCALE_N_M1,
              {{Field::SET_RESIZE_Y_SCALE_N_M1__resize_y_scale_n_m1, uint64_t(r.y_n - 1)}})
        .emit(Cmd::SET_RESIZE_X, {{Field::SET_RESIZE_X__one_step_int, uint64_t(r.x_step[0])},
                                  {Field::SET_RESIZE_X__blk_step_int, uint64_t(r.x_step[1])},
                                  {Field::SET_RESIZE_X__one_step_mod, uint64_t(r.x_step[2])},
                                  {Field::SET_RESIZE_X__blk_step_mod, uint64_t(r.x_step[3])}})
        .emit(Cmd::SET_RESIZE_Y, {{Field::SET_RESIZE_Y__one_step_int, uint64_t(r.y_step[0])},
                                  {Field::SET_RESIZE_Y__blk_step_int, uint64_t(r.y_step[1])},
                                  {Field::SET_RESIZE_Y__one_step_mod, uint64_t(r.y_step[2])},
                                  {Field::SET_RESIZE_Y__blk_step_mod, uint64_t(r.y_step[3])}})
        .emit(Cmd::SET_RESIZE_X_OFFSET, {{Field::SET_RESIZE_X_OFFSET__resize_x_offset, s12(r.x_offset)}})
        .emit(Cmd::SET_RESIZE_Y_OFFSET, {{Field::SET_RESIZE_Y_OFFSET__resize_y_offset, s12(r.y_offset)}})
        .emit(Cmd::SET_KERNEL_HEIGHT_M1, {{Field::SET_KERNEL_HEIGHT_M1__height_m1, uint64_t(r.kernel_h - 1)}})
        .emit(Cmd::SET_KERNEL_WIDTH_M1, {{Field::SET_KERNEL_WIDTH_M1__width_m1, uint64_t(r.kernel_w - 1)}})
        .emit(Cmd::SET_OFM_BLK_HEIGHT_M1, {{Field::SET_OFM_BLK_HEIGHT_M1__height_m1, uint64_t(r.block_h - 1)}})
        .emit(Cmd::SET_OFM_BLK_WIDTH_M1, {{Field::SET_OFM_BLK_WIDTH_M1__width_m1, uint64_t(r.block_w - 1)}})
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, 15}})
        .emit(Cmd::SET_ACC_FORMAT)
        .emit(Cmd::SET_BLOCKDEP);
    const uint32_t at = rig.next_offset();
    s.emit(Cmd::OP_RESIZE, {{Field::OP_RESIZE__resize_mode, r.mode}});
    return at;
}

// ---------------------------------------------------------------------------------------------
// References.

// TFLite's ResizeBilinearInteger (int8/int16): positions in 1/1024 units, rounding half away
// from zero (TFLite Micro builds without TFLITE_SINGLE_ROUNDING).
Tensor tflite_resize_bilinear(const Tensor& in, int out_h, int out_w, bool align_corners, bool half_pixel) {
    auto scale_10 = [&](int in_size, int out_size) {
        if (align_corners && out_size > 1) return ((1 << 10) * (in_size - 1) + (out_size - 1) / 2) / (out_size - 1);
        return ((1 << 10) * in_size + out_size / 2) / out_size;
    };
    struct Interp {
        int32_t scaled, lower, upper;
    };
    auto interp = [&](int value, int32_t scale, int in_size) {
        const int32_t scaled = half_pixel ? value * scale + scale / 2 - (1 << 9) : value * scale;
        return Interp{scaled, std::max(scaled / (1 << 10), 0),
                      std::min((scaled + (1 << 10) - 1) / (1 << 10), in_size - 1)};
    };
    const int32_t sy = scale_10(in.height, out_h), sx = scale_10(in.width, out_w);
    Tensor out(out_h, out_w, in.depth, in.precision);
    for (int y = 0; y < out_h; ++y) {
        const Interp iy = interp(y, sy, in.height);
        for (int x = 0; x < out_w; ++x) {
            const Interp ix = interp(x, sx, in.width);
            const int64_t fy = iy.scaled - (1 << 10) * iy.lower, fx = ix.scaled - (1 << 10) * ix.lower;
            for (int c = 0; c < in.depth; ++c) {
                const int64_t sum = in.at(iy.lower, ix.lower, c) * ((1 << 10) - fy) * ((1 << 10) - fx) +
                                    in.at(iy.upper, ix.lower, c) * fy * ((1 << 10) - fx) +
                                    in.at(iy.lower, ix.upper, c) * ((1 << 10) - fy) * fx +
                                    in.at(iy.upper, ix.upper, c) * fy * fx;
                const int64_t round = sum > 0 ? (1 << 19) : -(1 << 19);
                out.at(y, x, c) = (sum + round) / (1 << 20);
            }
        }
    }
    return out;
}

// TFLite's GetNearestNeighbor, in float as TFLite computes it.
int tflite_nearest_index(int value, int in_size, int out_size, bool align_corners, bool half_pixel) {
    const float scale = align_corners && out_size > 1
                            ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1)
                            : static_cast<float>(in_size) / static_cast<float>(out_size);
    const float offset = half_pixel ? 0.5f : 0.0f;
    const float scaled = (static_cast<float>(value) + offset) * scale;
    int index = std::min(align_corners ? static_cast<int>(std::round(scaled)) : static_cast<int>(std::floor(scaled)),
                         in_size - 1);
    if (half_pixel) index = std::max(0, index);
    return index;
}

Tensor tflite_resize_nearest(const Tensor& in, int out_h, int out_w, bool align_corners, bool half_pixel) {
    Tensor out(out_h, out_w, in.depth, in.precision);
    for (int y = 0; y < out_h; ++y)
        for (int x = 0; x < out_w; ++x) {
            const int iy = tflite_nearest_index(y, in.height, out_h, align_corners, half_pixel);
            const int ix = tflite_nearest_index(x, in.width, out_w, align_corners, half_pixel);
            for (int c = 0; c < in.depth; ++c) out.at(y, x, c) = in.at(iy, ix, c);
        }
    return out;
}

// TOSA RESIZE (integer): bilinear gives the weighted sum, nearest rounds the position half up.
// REPLICATE, which neither TOSA nor Vela uses, is read as the sample at or before the position.
Tensor tosa_resize(const Tensor& in, int out_h, int out_w, const ResizeParams& p, Precision out_precision) {
    Tensor out(out_h, out_w, in.depth, out_precision);
    for (int oy = 0; oy < out_h; ++oy)
        for (int ox = 0; ox < out_w; ++ox) {
            const int64_t y = int64_t{oy} * p.y.d + p.y.offset, x = int64_t{ox} * p.x.d + p.x.offset;
            const int64_t iy = floor_div(y, p.y.n), ix = floor_div(x, p.x.n);
            const int64_t dy = y - iy * p.y.n, dx = x - ix * p.x.n;
            const int iy0 = static_cast<int>(std::max<int64_t>(iy, 0));
            const int iy1 = static_cast<int>(std::min<int64_t>(iy + 1, in.height - 1));
            const int ix0 = static_cast<int>(std::max<int64_t>(ix, 0));
            const int ix1 = static_cast<int>(std::min<int64_t>(ix + 1, in.width - 1));
            for (int c = 0; c < in.depth; ++c) {
                int64_t v;
                if (p.mode == ResizeMode::Bilinear) {
                    v = in.at(iy0, ix0, c) * (p.y.n - dy) * (p.x.n - dx) + in.at(iy0, ix1, c) * (p.y.n - dy) * dx +
                        in.at(iy1, ix0, c) * dy * (p.x.n - dx) + in.at(iy1, ix1, c) * dy * dx;
                } else if (p.mode == ResizeMode::Nearest) {
                    v = in.at(2 * dy >= p.y.n ? iy1 : iy0, 2 * dx >= p.x.n ? ix1 : ix0, c);
                } else {
                    v = in.at(iy0, ix0, c);
                }
                out.at(oy, ox, c) = v;
            }
        }
    return out;
}

void expect_same(const Tensor& got, const Tensor& want) {
    ASSERT_EQ(got.values.size(), want.values.size());
    for (int y = 0; y < want.height; ++y)
        for (int x = 0; x < want.width; ++x)
            for (int c = 0; c < want.depth; ++c)
                ASSERT_EQ(got.at(y, x, c), want.at(y, x, c)) << "at y " << y << " x " << x << " c " << c;
}

// ---------------------------------------------------------------------------------------------
// RESIZE against TFLite.

struct TfliteCase {
    const char* name;
    TfliteOp op;
    int in_h, in_w, out_h, out_w;
    bool align_corners = false, half_pixel = false;
    Precision precision = kInt8;
    int depth = 5;
    const char* config = "ethos-u85-256";
    kernel_test::Layout layout{};
};
std::ostream& operator<<(std::ostream& os, const TfliteCase& c) { return os << c.name; }

class ResizeVsTflite : public ::testing::TestWithParam<TfliteCase> {};

TEST_P(ResizeVsTflite, EqualsTheReferenceKernel) {
    const TfliteCase& c = GetParam();
    Rig rig(c.config);
    const Tensor in = kernel_test::random_tensor(c.in_h, c.in_w, c.depth, c.precision, 31);
    const Placement ifm = rig.place(in, c.layout);
    const Placement ofm = rig.reserve(c.out_h, c.out_w, c.depth, c.precision, c.layout);
    const ResizeParams p = vela_lowering(c.op, c.in_h, c.in_w, c.out_h, c.out_w, c.align_corners, c.half_pixel);
    emit_resize(rig, ifm, ofm, vela_registers(p, c.in_h, c.in_w, c.out_w, std::min(c.out_w, 8)));
    rig.run();
    const Tensor want = c.op == TfliteOp::Bilinear
                            ? tflite_resize_bilinear(in, c.out_h, c.out_w, c.align_corners, c.half_pixel)
                            : tflite_resize_nearest(in, c.out_h, c.out_w, c.align_corners, c.half_pixel);
    expect_same(rig.read(ofm), want);
}

// Vela maps TFLite bilinear resizes with integer power-of-two ratios only (regor
// tflite_supported_operators_u85.cpp); nearest neighbour takes any ratio.
const TfliteCase kTfliteCases[] = {
    {"Bilinear2x", TfliteOp::Bilinear, 4, 5, 8, 10},
    {"Bilinear2xHalfPixel", TfliteOp::Bilinear, 4, 5, 8, 10, false, true},
    {"Bilinear2xHalfPixelInt16", TfliteOp::Bilinear, 4, 3, 8, 6, false, true, kInt16},
    {"Bilinear2xAlignCorners", TfliteOp::Bilinear, 3, 5, 5, 9, true, false},
    {"Bilinear4x", TfliteOp::Bilinear, 2, 3, 8, 12},
    {"Bilinear4xHalfPixel", TfliteOp::Bilinear, 3, 2, 12, 8, false, true},
    {"Bilinear8xAlignCornersInt16", TfliteOp::Bilinear, 2, 3, 9, 17, true, false, kInt16},
    {"BilinearHeight2xWidth4xUint8", TfliteOp::Bilinear, 3, 2, 6, 8, false, false, kUint8},
    {"BilinearFromOnePixelIsNearest", TfliteOp::Bilinear, 1, 1, 4, 4},
    {"BilinearDeepU85_1024", TfliteOp::Bilinear, 3, 3, 6, 6, false, true, kInt8, 37, "ethos-u85-1024"},
    {"BilinearBricksInFourTiles", TfliteOp::Bilinear, 4, 6, 8, 12, false, true, kInt8, 20, "ethos-u85-256",
     {DataFormat::NHCWB16, true, 0}},
    {"Nearest2x", TfliteOp::NearestNeighbor, 4, 5, 8, 10},
    {"Nearest3To5HalfPixel", TfliteOp::NearestNeighbor, 3, 3, 5, 5, false, true},
    {"Nearest3To5AlignCorners", TfliteOp::NearestNeighbor, 3, 4, 5, 7, true, false},
    {"Nearest4To7AlignCornersInt16", TfliteOp::NearestNeighbor, 4, 4, 7, 7, true, false, kInt16},
    {"NearestDownscale5To3HalfPixel", TfliteOp::NearestNeighbor, 5, 7, 3, 4, false, true},
    {"NearestDownscale8To2HalfPixel", TfliteOp::NearestNeighbor, 8, 8, 2, 2, false, true},
    {"Nearest3xUint8", TfliteOp::NearestNeighbor, 2, 3, 6, 9, false, false, kUint8},
};
INSTANTIATE_TEST_SUITE_P(Vela, ResizeVsTflite, ::testing::ValuesIn(kTfliteCases),
                         [](const auto& info) { return std::string(info.param.name); });

// TFLite's nearest neighbour without half-pixel centres or aligned corners takes floor(o * in / out);
// Vela lowers it with half-pixel centres, floor((o + 1/2) * in / out), which agrees for integer
// upscales (above) but not for 3 -> 5: the NPU then computes what Vela programmed.
TEST(Resize, NearestWithoutHalfPixelFollowsVelasHalfPixelLowering) {
    Rig rig("ethos-u85-256");
    const Tensor in = kernel_test::random_tensor(3, 3, 4, kInt8, 32);
    const Placement ifm = rig.place(in, {});
    const Placement ofm = rig.reserve(5, 5, 4, kInt8, {});
    const ResizeParams p = vela_lowering(TfliteOp::NearestNeighbor, 3, 3, 5, 5, false, false);
    emit_resize(rig, ifm, ofm, vela_registers(p, 3, 3, 5, 5));
    rig.run();
    const Tensor got = rig.read(ofm);
    expect_same(got, tflite_resize_nearest(in, 5, 5, false, true));
    EXPECT_NE(got.values, tflite_resize_nearest(in, 5, 5, false, false).values);
}

// ---------------------------------------------------------------------------------------------
// RESIZE against TOSA: any ratio, the raw weighted sum (int8 -> int32, int16 -> int48), downscale,
// and REPLICATE.

struct TosaCase {
    const char* name;
    ResizeParams p;
    int in_h, in_w, out_h, out_w;
    Precision in = kInt8, out = kInt32;
    int block_w = 4;
};
std::ostream& operator<<(std::ostream& os, const TosaCase& c) { return os << c.name; }

class ResizeVsTosa : public ::testing::TestWithParam<TosaCase> {};

TEST_P(ResizeVsTosa, EqualsThePseudocode) {
    const TosaCase& c = GetParam();
    Rig rig("ethos-u85-512");
    const Tensor in = kernel_test::random_tensor(c.in_h, c.in_w, 3, c.in, 33);
    const Placement ifm = rig.place(in, {});
    const Placement ofm = rig.reserve(c.out_h, c.out_w, 3, c.out, {});
    emit_resize(rig, ifm, ofm, vela_registers(c.p, c.in_h, c.in_w, c.out_w, c.block_w));
    rig.run();
    expect_same(rig.read(ofm), tosa_resize(in, c.out_h, c.out_w, c.p, c.out));
}

// Output sizes follow TOSA: out = ((in - 1) * n - offset) / d + 1 (border 0).
const TosaCase kTosaCases[] = {
    {"Bilinear3To5", {ResizeMode::Bilinear, {4, 2, 0}, {4, 2, 0}}, 3, 3, 5, 5},
    {"Bilinear5Over3HalfPixel", {ResizeMode::Bilinear, {10, 6, -2}, {10, 6, -2}}, 3, 4, 4, 6},
    {"BilinearDownscaleByTwo", {ResizeMode::Bilinear, {1, 2, 0}, {1, 2, 0}}, 7, 9, 4, 5},
    {"BilinearDownscale7Over3", {ResizeMode::Bilinear, {3, 7, 1}, {3, 7, 2}}, 12, 15, 5, 6, kInt8, kInt32, 3},
    {"BilinearInt16ToInt48", {ResizeMode::Bilinear, {5, 3, 0}, {2048, 1024, -2047}}, 4, 4, 6, 8, kInt16, kInt64},
    {"NearestOddNumerator", {ResizeMode::Nearest, {3, 1, 0}, {5, 3, 1}}, 3, 4, 7, 5, kInt8, kInt8},
    {"NearestDownscale", {ResizeMode::Nearest, {2, 5, 1}, {3, 7, -2}}, 11, 15, 4, 7, kInt16, kInt16},
    {"Replicate3x", {ResizeMode::Replicate, {3, 1, 0}, {3, 1, 0}}, 3, 4, 7, 10, kInt8, kInt8},
    {"ReplicateHalfPixel", {ResizeMode::Replicate, {4, 2, -1}, {6, 3, 1}}, 3, 3, 5, 4, kInt8, kInt8},
};
INSTANTIATE_TEST_SUITE_P(Tosa, ResizeVsTosa, ::testing::ValuesIn(kTosaCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Hostile resize registers: ethosu::Error at the op with the field.

struct HostileCase {
    const char* name;
    void (*change)(ResizeRegisters&);
    const char* field;
    int ofm_w = 8;
};
std::ostream& operator<<(std::ostream& os, const HostileCase& c) { return os << c.name; }

class ResizeHostile : public ::testing::TestWithParam<HostileCase> {};

TEST_P(ResizeHostile, IsRefusedWithOffsetAndField) {
    const HostileCase& c = GetParam();
    Rig rig("ethos-u85-256");
    const Tensor in = kernel_test::random_tensor(4, 4, 3, kInt8, 34);
    const Placement ifm = rig.place(in, {});
    const Placement ofm = rig.reserve(8, c.ofm_w, 3, kInt8, {});
    const ResizeParams p = vela_lowering(TfliteOp::Bilinear, 4, 4, 8, 8, false, true);
    ResizeRegisters r = vela_registers(p, 4, 4, 8, 4);
    c.change(r);
    const uint32_t at = emit_resize(rig, ifm, ofm, r);
    try {
        rig.run();
        FAIL() << "not refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, at) << e.what();
        EXPECT_EQ(e.where().field, c.field) << e.what();
        EXPECT_NE(std::string(e.what()).find("NPU_OP_RESIZE"), std::string::npos) << e.what();
    }
}

const HostileCase kHostileCases[] = {
    {"StepRemainderNotBelowN", [](ResizeRegisters& r) { r.x_step[2] = r.x_n; }, "NPU_SET_RESIZE_X.one_step_mod"},
    {"BlockStepRemainderNotBelowN", [](ResizeRegisters& r) { r.y_step[3] = r.y_n + 1; },
     "NPU_SET_RESIZE_Y.blk_step_mod"},
    {"ZeroStep", [](ResizeRegisters& r) { r.y_step = {0, 0, 0, 0}; }, "NPU_SET_RESIZE_Y.one_step_int"},
    {"BlockStepDisagreesWithTheBlock", [](ResizeRegisters& r) { r.x_step[1] += 1; }, "NPU_SET_RESIZE_X.blk_step_int"},
    {"OffsetOfSixteenElements", [](ResizeRegisters& r) { r.x_offset = 16 * r.x_n; },
     "NPU_SET_RESIZE_X_OFFSET.resize_x_offset"},
    {"OffsetBelowMinusN", [](ResizeRegisters& r) { r.y_offset = -r.y_n - 1; },
     "NPU_SET_RESIZE_Y_OFFSET.resize_y_offset"},
    {"StepReadsPastTheIfm", [](ResizeRegisters& r) { r.y_step[0] = 2; }, "NPU_SET_OFM_HEIGHT_M1"},
    {"OfmWiderThanTheScaleGives", [](ResizeRegisters&) {}, "NPU_SET_OFM_WIDTH_M1", 10},
    {"KernelNarrowerThanTheOfmNeeds", [](ResizeRegisters& r) { r.kernel_w = 2; }, "NPU_SET_OFM_WIDTH_M1"},
    {"UpscaledIfm", [](ResizeRegisters& r) { r.upscale = UpscaleMode::Nearest; }, "NPU_SET_IFM_UPSCALE.mode"},
};
INSTANTIATE_TEST_SUITE_P(Registers, ResizeHostile, ::testing::ValuesIn(kHostileCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Resize, OfmDeeperThanTheIfmIsRefused) {
    Rig rig("ethos-u85-256");
    const Placement ifm = rig.place(kernel_test::random_tensor(4, 4, 3, kInt8, 35), {});
    const Placement ofm = rig.reserve(8, 8, 4, kInt8, {});
    const ResizeParams p = vela_lowering(TfliteOp::NearestNeighbor, 4, 4, 8, 8, false, false);
    const uint32_t at = emit_resize(rig, ifm, ofm, vela_registers(p, 4, 4, 8, 8));
    try {
        rig.run();
        FAIL() << "not refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, at);
        EXPECT_EQ(e.where().field, "NPU_SET_OFM_DEPTH_M1");
    }
}

// The IFM area the kernel registers claim lies past the mapped SRAM.
TEST(Resize, IfmAreaOutsideMemoryIsRefused) {
    Rig rig("ethos-u85-256");
    Placement ifm = rig.place(kernel_test::random_tensor(4, 4, 3, kInt8, 36), {});
    const Placement ofm = rig.reserve(8, 8, 3, kInt8, {});
    ifm.tile_base[0] = rig.sram().size() - 16;
    const ResizeParams p = vela_lowering(TfliteOp::Bilinear, 4, 4, 8, 8, false, false);
    const uint32_t at = emit_resize(rig, ifm, ofm, vela_registers(p, 4, 4, 8, 8));
    try {
        rig.run();
        FAIL() << "not refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, at) << e.what();
    }
}

// ---------------------------------------------------------------------------------------------
// IFM_UPSCALE.

// Vela's resize legalisation for pooling (regor scheduler_decompose.cpp LegaliseResize): a 2x
// bilinear resize is a 2x2 average pool, padded one row and column after, over the IFM upscaled
// A pooling op's block registers: U85's, or the U55/U65 rig's with a 16-deep OFM block.
void emit_pool_block(Rig& rig) {
    if (rig.config().generation != Generation::U85) {
        rig.emit_block(16);
        return;
    }
    rig.stream()
        .emit(Cmd::SET_OFM_BLK_HEIGHT_M1)
        .emit(Cmd::SET_OFM_BLK_WIDTH_M1)
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, 15}})
        .emit(Cmd::SET_ACC_FORMAT)
        .emit(Cmd::SET_BLOCKDEP);
}

// NEAREST; the average over the valid elements rounds as TFLite's bilinear does.
void check_bilinear_by_upscaled_average(const char* config, Precision precision) {
    Rig rig(config);
    const Tensor in = kernel_test::random_tensor(5, 6, 7, precision, 41);
    const Placement ifm = rig.place(in, {});
    const Placement ofm = rig.reserve(10, 12, 7, precision, {});
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, RoundMode::Natural, true);
    rig.emit_kernel(2, 2, 1, 1, 1, 1, false);
    rig.emit_padding(0, 0, 1, 1, UpscaleMode::Nearest);
    rig.emit_activation(0, kernel_test::type_min(precision), kernel_test::type_max(precision));
    rig.stream().emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}});
    emit_pool_block(rig);
    rig.stream().emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 1}});  // AVERAGE
    rig.run();
    expect_same(rig.read(ofm), tflite_resize_bilinear(in, 10, 12, false, false));
}

TEST(IfmUpscale, NearestUnderAverageIsTflitesBilinear2xOnU55) {
    check_bilinear_by_upscaled_average("ethos-u55-128", kInt8);
}
TEST(IfmUpscale, NearestUnderAverageIsTflitesBilinear2xOnU65) {
    check_bilinear_by_upscaled_average("ethos-u65-256", kInt16);
}
TEST(IfmUpscale, NearestUnderAverageIsTflitesBilinear2xOnU85) {
    check_bilinear_by_upscaled_average("ethos-u85-256", kInt8);
}

// MAX pooling over the upscaled map, against the map written out: NEAREST repeats each element
// over 2x2, ZEROS keeps it top left with the zero point around it; padding applies after upscaling.
void check_upscaled_max(const char* config, UpscaleMode mode) {
    Rig rig(config);
    constexpr int32_t kZeroPoint = -20;
    const Tensor in = kernel_test::random_tensor(4, 5, 6, kInt8, 42);
    const int up_h = 8, up_w = 10, k = 3, pad_top = 1, pad_left = 0, pad_bottom = 1, pad_right = 2;
    const int out_h = up_h + pad_top + pad_bottom - k + 1, out_w = up_w + pad_left + pad_right - k + 1;
    const Placement ifm = rig.place(in, {DataFormat::NHWC, false, kZeroPoint});
    const Placement ofm = rig.reserve(out_h, out_w, 6, kInt8, {DataFormat::NHWC, false, kZeroPoint});
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, true);
    rig.emit_kernel(k, k, 1, 1, 1, 1, false);
    rig.emit_padding(pad_top, pad_left, pad_bottom, pad_right, mode);
    rig.emit_activation(0, -128, 127);
    rig.stream().emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}});
    emit_pool_block(rig);
    rig.stream().emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 0}});  // MAX
    rig.run();

    Tensor up(up_h, up_w, 6, kInt8);
    for (int y = 0; y < up_h; ++y)
        for (int x = 0; x < up_w; ++x)
            for (int c = 0; c < 6; ++c)
                up.at(y, x, c) = mode == UpscaleMode::Zeros && (y % 2 || x % 2) ? kZeroPoint : in.at(y / 2, x / 2, c);
    Tensor want(out_h, out_w, 6, kInt8);
    for (int oy = 0; oy < out_h; ++oy)
        for (int ox = 0; ox < out_w; ++ox)
            for (int c = 0; c < 6; ++c) {
                int64_t largest = INT64_MIN;
                for (int ky = 0; ky < k; ++ky)
                    for (int kx = 0; kx < k; ++kx) {
                        const int y = oy - pad_top + ky, x = ox - pad_left + kx;
                        if (y >= 0 && y < up_h && x >= 0 && x < up_w) largest = std::max(largest, up.at(y, x, c));
                    }
                want.at(oy, ox, c) = largest;
            }
    expect_same(rig.read(ofm), want);
}

TEST(IfmUpscale, NearestUnderMaxOnU55) { check_upscaled_max("ethos-u55-256", UpscaleMode::Nearest); }
TEST(IfmUpscale, ZerosUnderMaxOnU55) { check_upscaled_max("ethos-u55-128", UpscaleMode::Zeros); }
TEST(IfmUpscale, NearestUnderMaxOnU85) { check_upscaled_max("ethos-u85-256", UpscaleMode::Nearest); }
TEST(IfmUpscale, ZerosUnderMaxOnU85) { check_upscaled_max("ethos-u85-1024", UpscaleMode::Zeros); }

// Vela's TRANSPOSE_CONV lowering for stride 2 (regor scheduler_decompose.cpp
// LegaliseTransposeConv2D): a stride-1 CONV with the kernel reversed in height and width over the
// IFM upscaled with ZEROS; for VALID padding Vela pads k - 1 before and k - 2 after. Against
// TFLite's transpose convolution: out[2i + ky][2j + kx] += in[i][j] * w[ky][kx].
void check_transpose_conv(const char* config) {
    Rig rig(config);
    constexpr int kIn = 4, kK = 3, kIfmC = 5, kOfmC = 6;
    constexpr int32_t kIfmZp = 7, kOfmZp = -3;
    constexpr int kOut = 2 * (kIn - 1) + kK;
    const Tensor in = kernel_test::random_tensor(kIn, kIn, kIfmC, kInt8, 43);
    std::mt19937 rng(44);
    std::uniform_int_distribution<int> weight(-60, 60);
    kernel_test::Weights w{kOfmC, kK, kK, kIfmC, std::vector<int16_t>(kOfmC * kK * kK * kIfmC)};
    for (auto& v : w.values) v = static_cast<int16_t>(weight(rng));
    kernel_test::Weights reversed = w;
    for (int o = 0; o < kOfmC; ++o)
        for (int ky = 0; ky < kK; ++ky)
            for (int kx = 0; kx < kK; ++kx)
                for (int i = 0; i < kIfmC; ++i) reversed.at(o, ky, kx, i) = w.at(o, kK - 1 - ky, kK - 1 - kx, i);
    std::vector<kernel_test::ChannelScale> scales(kOfmC);
    for (int o = 0; o < kOfmC; ++o) scales[static_cast<size_t>(o)] = {1000 * o - 2500, (1u << 30) + 12345u * o, 42};

    const Placement ifm = rig.place(in, {DataFormat::NHWC, false, kIfmZp});
    const Placement ofm = rig.reserve(kOut, kOut, kOfmC, kInt8, {DataFormat::NHWC, false, kOfmZp});
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, false);
    rig.emit_kernel(kK, kK, 1, 1, 1, 1, false);
    rig.emit_padding(kK - 1, kK - 1, kK - 2, kK - 2, UpscaleMode::Zeros);
    rig.emit_weights(reversed, scales, {false, false, 8, 16, 1, 1});
    rig.emit_activation(0, -128, 127);
    rig.emit_block(16);
    rig.stream().emit(Cmd::OP_CONV);
    rig.run();

    Tensor want(kOut, kOut, kOfmC, kInt8);
    for (int o = 0; o < kOfmC; ++o) {
        std::vector<int64_t> acc(kOut * kOut, scales[static_cast<size_t>(o)].bias);
        for (int i = 0; i < kIn; ++i)
            for (int j = 0; j < kIn; ++j)
                for (int ky = 0; ky < kK; ++ky)
                    for (int kx = 0; kx < kK; ++kx)
                        for (int c = 0; c < kIfmC; ++c)
                            acc[(2 * i + ky) * kOut + 2 * j + kx] += (in.at(i, j, c) - kIfmZp) * w.at(o, ky, kx, c);
        const auto& s = scales[static_cast<size_t>(o)];
        for (int y = 0; y < kOut; ++y)
            for (int x = 0; x < kOut; ++x) {
                const int32_t scaled = tflite_math::multiply(static_cast<int32_t>(acc[y * kOut + x]),
                                                             static_cast<int32_t>(s.scale), 31 - s.shift);
                want.at(y, x, o) = std::clamp(scaled + kOfmZp, -128, 127);
            }
    }
    expect_same(rig.read(ofm), want);
}

TEST(IfmUpscale, ZerosUnderConvIsTflitesTransposeConvOnU55) { check_transpose_conv("ethos-u55-128"); }
TEST(IfmUpscale, ZerosUnderConvIsTflitesTransposeConvOnU65) { check_transpose_conv("ethos-u65-512"); }

// REDUCE_SUM sums over depth at each OFM position; Vela never upscales its IFM.
TEST(IfmUpscale, ReduceSumOfAnUpscaledIfmIsRefused) {
    Rig rig("ethos-u55-128");
    const Placement ifm = rig.place(kernel_test::random_tensor(2, 2, 4, kInt8, 46), {});
    const Placement ofm = rig.reserve(4, 4, 1, kInt32, {});
    rig.emit_ifm(ifm);
    rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, true);
    rig.emit_kernel(1, 1, 1, 1, 1, 1, false);
    rig.emit_padding(0, 0, 0, 0, UpscaleMode::Nearest);
    rig.emit_activation(0, INT16_MIN, INT16_MAX);
    rig.stream().emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}});
    rig.emit_block(16);
    const uint32_t at = rig.next_offset();
    rig.stream().emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 2}});  // REDUCE_SUM
    try {
        rig.run();
        FAIL() << "not refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, at) << e.what();
        EXPECT_EQ(e.where().field, "NPU_SET_IFM_UPSCALE.mode") << e.what();
    }
}

// IFM_UPSCALE mode 3 is not defined on any generation.
TEST(IfmUpscale, UndefinedModeIsRefusedByTheDecoder) {
    for (const char* config : {"ethos-u55-128", "ethos-u85-256"}) {
        Rig rig(config);
        const Placement ifm = rig.place(kernel_test::random_tensor(2, 2, 4, kInt8, 45), {});
        const Placement ofm = rig.reserve(2, 2, 4, kInt8, {});
        rig.emit_ifm(ifm);
        rig.emit_ofm(ofm, RoundMode::DoubleSymmetric, true);
        rig.emit_kernel(1, 1, 1, 1, 1, 1, false);
        rig.emit_padding(0, 0, 0, 0, static_cast<UpscaleMode>(3));
        rig.emit_activation(0, -128, 127);
        rig.stream().emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}});
        rig.stream().emit(Cmd::SET_OFM_BLK_HEIGHT_M1).emit(Cmd::SET_OFM_BLK_WIDTH_M1).emit(Cmd::SET_OFM_BLK_DEPTH_M1);
        const uint32_t at = rig.next_offset();
        rig.stream().emit(Cmd::OP_POOL);
        try {
            rig.run();
            FAIL() << config << ": not refused";
        } catch (const Error& e) {
            EXPECT_EQ(e.where().offset, at) << e.what();
            EXPECT_EQ(e.where().field, "NPU_SET_IFM_UPSCALE.mode") << e.what();
        }
    }
}

}  // namespace
}  // namespace ethosu
