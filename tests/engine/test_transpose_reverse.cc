// U85 OFM transpose and reverse on hand-built streams, programmed as Vela 5.1 programs them:
// the OFM shape and block registers hold the computed (pre-transpose) shape; the tile
// registers, strides and base addresses describe the stored (transposed) tensor, its base at
// the start of the area written. A standalone TFLite TRANSPOSE / REVERSE_V2 of 8- or 16-bit
// data is a 1x1 POOL SUM with a unit OFM scale; a transpose fused into an elementwise op rides
// on that op's OFM. Results are compared with plain loops computing TFLite's TRANSPOSE (by its
// permutation) and REVERSE_V2; OFM placement (NHWC with row slack, NHCWB16, four tiles) uses the
// test rig's own addressing. Hostile streams end in ethosu::Error naming the op's offset and
// the field, with nothing written.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "emulator/isa/builder.h"
#include "emulator/isa/error.h"
#include "tests/engine/stream_helpers.h"
#include "tests/engine/kernel_harness.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;
using kernel_test::Layout;
using kernel_test::Placement;
using kernel_test::Rig;
using kernel_test::Tensor;

constexpr uint64_t kPoolSum = 3;      // NPU_OP_POOL pooling_mode SUM
constexpr uint64_t kElementwiseMax = 4;
constexpr uint64_t kChainedStorage = 2;
constexpr uint64_t kTile3x1Storage = 1;

// TFLite TRANSPOSE permutations (of N, H, W, C) for each activation_transpose code, from Vela's
// TransposeType names: NWHC (0, 2, 1, 3) is WHC, NHCW is HCW, NWCH is WCH, NCHW is CHW, NCWH is CWH.
struct TransposeMode {
    const char* name;
    uint64_t code;
    std::array<int, 4> perm;
};
constexpr TransposeMode kTransposes[] = {
    {"HWC", 0, {0, 1, 2, 3}}, {"WHC", 1, {0, 2, 1, 3}}, {"HCW", 2, {0, 1, 3, 2}},
    {"WCH", 3, {0, 2, 3, 1}}, {"CHW", 6, {0, 3, 1, 2}}, {"CWH", 7, {0, 3, 2, 1}},
};

// TFLite's TRANSPOSE of a batch-1 NHWC tensor: output dimension k is input dimension perm[k],
// and output element o is input element i with i[perm[k]] = o[k].
Tensor tflite_transpose(const Tensor& in, const std::array<int, 4>& perm) {
    const std::array<int, 4> in_dims = {1, in.height, in.width, in.depth};
    Tensor out(in_dims[perm[1]], in_dims[perm[2]], in_dims[perm[3]], in.precision);
    for (int y = 0; y < out.height; ++y)
        for (int x = 0; x < out.width; ++x)
            for (int c = 0; c < out.depth; ++c) {
                const std::array<int, 4> o = {0, y, x, c};
                std::array<int, 4> i{};
                for (int k = 0; k < 4; ++k) i[perm[k]] = o[k];
                out.at(y, x, c) = in.at(i[1], i[2], i[3]);
            }
    return out;
}

// TFLite's REVERSE_V2 along one axis of a batch-1 NHWC tensor (1 H, 2 W, 3 C).
Tensor tflite_reverse(const Tensor& in, int axis) {
    Tensor out(in.height, in.width, in.depth, in.precision);
    for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x)
            for (int c = 0; c < in.depth; ++c) {
                const int sy = axis == 1 ? in.height - 1 - y : y;
                const int sx = axis == 2 ? in.width - 1 - x : x;
                const int sc = axis == 3 ? in.depth - 1 - c : c;
                out.at(y, x, c) = in.at(sy, sx, sc);
            }
    return out;
}

using test_streams::format_code;
using test_streams::precision_code;
using test_streams::u16;

// How the OFM is written: transpose and reverse codes, storage, and the OFM block.
struct OfmMode {
    uint64_t transpose = 0;
    uint64_t reverse = 0;  // 1 H, 2 W, 3 C
    uint64_t storage = 0;
    std::array<int, 3> block = {16, 16, 16};  // height, width, depth (pre-transpose)
};

// A U85 stream on a kernel-test rig. Every NPU_SET_ register is written first (zero), so the
// rig's strict decode accepts the op and the registers a test sets are the whole story.
class U85Stream {
public:
    explicit U85Stream(Rig& rig) : rig_(rig), b_(rig.stream()) {
        for (const isa::CommandDesc& c : b_.generation().commands)
            if (c.name.starts_with("NPU_SET_")) b_.emit(c.id);
    }

    void ifm(const Placement& p) { rig_.emit_ifm(p); }
    void ifm2(const Placement& p) { rig_.emit_ifm2(p); }

    // The OFM: shape registers from the computed shape (h, w, c); tiles, strides and bases from
    // the stored placement. Unit global scale; the clip is the OFM type's range.
    void ofm(const Placement& stored, int h, int w, int c, const OfmMode& m) {
        const Precision& p = stored.precision;
        const int64_t lo = kernel_test::type_min(p), hi = kernel_test::type_max(p);
        b_.emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, kernel_test::kSramRegion}})
            .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, stored.tile_base[0]}})
            .emit(Cmd::SET_OFM_BASE1, {{Field::SET_OFM_BASE1__addr, stored.tile_base[1]}})
            .emit(Cmd::SET_OFM_BASE2, {{Field::SET_OFM_BASE2__addr, stored.tile_base[2]}})
            .emit(Cmd::SET_OFM_BASE3, {{Field::SET_OFM_BASE3__addr, stored.tile_base[3]}})
            .emit(Cmd::SET_OFM_HEIGHT_M1, {{Field::SET_OFM_HEIGHT_M1__height_m1, h - 1}})
            .emit(Cmd::SET_OFM_WIDTH_M1, {{Field::SET_OFM_WIDTH_M1__width_m1, w - 1}})
            .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, c - 1}})
            .emit(Cmd::SET_OFM_WIDTH0_M1, {{Field::SET_OFM_WIDTH0_M1__width_m1, stored.width0 - 1}})
            .emit(Cmd::SET_OFM_HEIGHT0_M1, {{Field::SET_OFM_HEIGHT0_M1__height_m1, stored.height0 - 1}})
            .emit(Cmd::SET_OFM_HEIGHT1_M1, {{Field::SET_OFM_HEIGHT1_M1__height_m1, stored.height1 - 1}})
            .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, static_cast<uint64_t>(stored.stride_x)}})
            .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, static_cast<uint64_t>(stored.stride_y)}})
            .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, static_cast<uint64_t>(stored.stride_c)}})
            .emit(Cmd::SET_OFM_ZERO_POINT, {{Field::SET_OFM_ZERO_POINT__zero_point, u16(stored.layout.zero_point)}})
            .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, p.is_signed},
                                           {Field::SET_OFM_PRECISION__activation_precision, precision_code(p)},
                                           {Field::SET_OFM_PRECISION__activation_format, format_code(stored.layout.format)},
                                           {Field::SET_OFM_PRECISION__scale_mode, 1},  // global
                                           {Field::SET_OFM_PRECISION__activation_reverse, m.reverse},
                                           {Field::SET_OFM_PRECISION__activation_transpose, m.transpose},
                                           {Field::SET_OFM_PRECISION__activation_storage, m.storage}})
            .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}})
            .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, u16(lo)}})
            .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, u16(hi)}})
            .emit(Cmd::SET_OFM_BLK_HEIGHT_M1, {{Field::SET_OFM_BLK_HEIGHT_M1__height_m1, m.block[0] - 1}})
            .emit(Cmd::SET_OFM_BLK_WIDTH_M1, {{Field::SET_OFM_BLK_WIDTH_M1__width_m1, m.block[1] - 1}})
            .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, m.block[2] - 1}});
    }

    // Emits the op; returns the byte offset of its command.
    uint32_t op(Cmd cmd, std::initializer_list<std::pair<Field, uint64_t>> fields) {
        const auto at = static_cast<uint32_t>(b_.words().size() * 4);
        b_.emit(cmd, fields);
        return at;
    }

private:
    Rig& rig_;
    CommandStreamBuilder& b_;
};

// The stored tensor's placement for computed shape (h, w, c) under a transpose permutation.
Placement reserve_stored(Rig& rig, int h, int w, int c, const std::array<int, 4>& perm, Precision p,
                         const Layout& layout) {
    const std::array<int, 4> dims = {1, h, w, c};
    return rig.reserve(dims[perm[1]], dims[perm[2]], dims[perm[3]], p, layout);
}

// A standalone TRANSPOSE / REVERSE_V2 as Vela lowers it: POOL SUM, 1x1 kernel, unit scale.
uint32_t emit_pool_copy(Rig& rig, const Placement& in, const Placement& out, const OfmMode& m) {
    U85Stream s(rig);
    s.ifm(in);
    s.ofm(out, in.height, in.width, in.depth, m);
    return s.op(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, kPoolSum}});
}

const Precision kInt8{true, 8};
const Precision kInt16{true, 16};
constexpr const char* kConfigs[] = {"ethos-u85-256", "ethos-u85-1024"};

struct Shape {
    int h, w, c;
};
// Odd sizes, a partial brick, depths past one brick, and a single-row map.
constexpr Shape kShapes[] = {{5, 7, 19}, {3, 17, 33}, {1, 9, 4}, {6, 4, 16}};

std::string describe(const char* config, const Shape& s, const Precision& p, const Layout& l) {
    return std::string(config) + " " + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" + std::to_string(s.c) +
           " int" + std::to_string(p.bits) + (l.format == DataFormat::NHCWB16 ? " NHCWB16" : " NHWC") +
           (l.four_tiles ? " four tiles" : "");
}

// The OFM block Vela could pick for a transposed brick OFM: the axis that becomes the stored
// depth a multiple of 16.
std::array<int, 3> block_for(const TransposeMode& t) {
    std::array<int, 3> block = {16, 16, 16};
    if (t.perm[3] == 1) block[0] = 32;
    if (t.perm[3] == 2) block[1] = 32;
    return block;
}

TEST(U85Transpose, EveryModeEqualsTflitesTranspose) {
    int cases = 0;
    for (const char* config : kConfigs)
        for (const Shape& s : kShapes)
            for (const Precision& p : {kInt8, kInt16})
                for (const DataFormat format : {DataFormat::NHWC, DataFormat::NHCWB16})
                    for (const bool four_tiles : {false, true})
                        for (const TransposeMode& t : kTransposes) {
                            const Tensor in = kernel_test::random_tensor(s.h, s.w, s.c, p, 17u + cases);
                            const Tensor expected = tflite_transpose(in, t.perm);
                            const Layout out_layout{format, four_tiles && expected.height > 1 && expected.width > 1, -3};
                            Rig rig(config);
                            const Placement ifm = rig.place(in, {DataFormat::NHWC, false, -3});
                            const Placement ofm = reserve_stored(rig, s.h, s.w, s.c, t.perm, p, out_layout);
                            emit_pool_copy(rig, ifm, ofm, {.transpose = t.code, .block = block_for(t)});
                            rig.run();
                            ASSERT_EQ(rig.read(ofm).values, expected.values)
                                << t.name << " " << describe(config, s, p, out_layout);
                            ++cases;
                        }
    EXPECT_EQ(cases, 2 * 4 * 2 * 2 * 2 * 6);
}

TEST(U85Reverse, EachAxisEqualsTflitesReverseV2) {
    int cases = 0;
    for (const char* config : kConfigs)
        for (const Shape& s : kShapes)
            for (const Precision& p : {kInt8, kInt16})
                for (const DataFormat format : {DataFormat::NHWC, DataFormat::NHCWB16})
                    for (const bool four_tiles : {false, true})
                        for (const int axis : {1, 2, 3}) {
                            // Vela keeps a channel reverse's output linear.
                            if (axis == 3 && format == DataFormat::NHCWB16) continue;
                            const Tensor in = kernel_test::random_tensor(s.h, s.w, s.c, p, 91u + cases);
                            const Layout out_layout{format, four_tiles && s.h > 1 && s.w > 1, 7};
                            Rig rig(config);
                            const Placement ifm = rig.place(in, {format, four_tiles && s.h > 1 && s.w > 1, 7});
                            const Placement ofm = rig.reserve(s.h, s.w, s.c, p, out_layout);
                            emit_pool_copy(rig, ifm, ofm, {.reverse = static_cast<uint64_t>(axis)});
                            rig.run();
                            ASSERT_EQ(rig.read(ofm).values, tflite_reverse(in, axis).values)
                                << "axis " << axis << " " << describe(config, s, p, out_layout);
                            ++cases;
                        }
    EXPECT_EQ(cases, 2 * 4 * 2 * 2 * 2 * 3 - 2 * 4 * 2 * 2);
}

// MAXIMUM followed by a TRANSPOSE that Vela fuses into the elementwise op's OFM.
TEST(U85Transpose, FusedIntoAnElementwiseOpEqualsMaximumThenTranspose) {
    for (const TransposeMode& t : kTransposes) {
        const Tensor a = kernel_test::random_tensor(4, 6, 5, kInt16, 3);
        const Tensor b = kernel_test::random_tensor(4, 6, 5, kInt16, 4);
        Tensor maximum = a;
        for (size_t i = 0; i < maximum.values.size(); ++i) maximum.values[i] = std::max(a.values[i], b.values[i]);
        Rig rig("ethos-u85-256");
        const Placement ifm = rig.place(a, {});
        const Placement ifm2 = rig.place(b, {});
        const Placement ofm = reserve_stored(rig, 4, 6, 5, t.perm, kInt16, {});
        U85Stream s(rig);
        s.ifm(ifm);
        s.ifm2(ifm2);
        s.ofm(ofm, 4, 6, 5, {.transpose = t.code});
        // Unit input scales: the operands as they are.
        rig.stream()
            .emit(Cmd::SET_IFM_SCALE, {{Field::SET_IFM_SCALE__scale, 1}})
            .emit(Cmd::SET_IFM2_SCALE, {{Field::SET_IFM2_SCALE__scale, 1}});
        s.op(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, kElementwiseMax}});
        rig.run();
        ASSERT_EQ(rig.read(ofm).values, tflite_transpose(maximum, t.perm).values) << t.name;
    }
}

// MIRROR_PAD's border copies: Vela writes a reversed slice of the IFM into a slice of the OFM,
// the OFM base at the slice's first row, so the reversal is within the op's own rows.
TEST(U85Reverse, IntoASliceOfALargerTensorReversesWithinTheSlice) {
    const Tensor in = kernel_test::random_tensor(2, 5, 3, kInt8, 8);
    Rig rig("ethos-u85-256");
    const Placement ifm = rig.place(in, {});
    const Placement whole = rig.reserve(6, 5, 3, kInt8, {});
    Placement slice = whole;  // rows 3 and 4 of the 6-row OFM
    slice.height = 2;
    slice.height0 = slice.height1 = 2;
    for (uint64_t& base : slice.tile_base) base += 3 * static_cast<uint64_t>(whole.stride_y);
    emit_pool_copy(rig, ifm, slice, {.reverse = 1});
    const Tensor unwritten = rig.read(whole);
    rig.run();
    const Tensor out = rig.read(whole);
    const Tensor reversed = tflite_reverse(in, 1);
    for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 5; ++x)
            for (int c = 0; c < 3; ++c) {
                const bool in_slice = y == 3 || y == 4;
                ASSERT_EQ(out.at(y, x, c), in_slice ? reversed.at(y - 3, x, c) : unwritten.at(y, x, c))
                    << y << "," << x << "," << c;
            }
}

// ---- Hostile streams ----

// Runs the rig expecting ethosu::Error at the op's offset naming field; the SRAM must be as before.
void expect_refused(Rig& rig, uint32_t op_offset, const std::string& field) {
    const std::vector<uint8_t> before = rig.sram();
    try {
        rig.run();
        FAIL() << "expected an error naming " << field;
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, op_offset) << e.what();
        EXPECT_EQ(e.where().field, field) << e.what();
    }
    EXPECT_EQ(rig.sram(), before) << "a refused op wrote memory";
}

struct HostileRig {
    Rig rig{"ethos-u85-256"};
    Placement ifm, ofm;
    HostileRig(const Layout& ofm_layout = {}) {
        ifm = rig.place(kernel_test::random_tensor(4, 6, 32, kInt8, 5), {});
        ofm = rig.reserve(32, 6, 4, kInt8, ofm_layout);  // big enough for any order of 4x6x32
    }
    uint32_t emit(const OfmMode& m) { return emit_pool_copy(rig, ifm, ofm, m); }
};

TEST(U85TransposeHostile, UndefinedTransposeCodesAreMalformed) {
    for (const uint64_t code : {4u, 5u}) {
        HostileRig h;
        const uint32_t at = h.emit({.transpose = code});
        expect_refused(h.rig, at, "NPU_SET_OFM_PRECISION.activation_transpose");
    }
}

TEST(U85TransposeHostile, ReverseWithTransposeIsRefused) {
    HostileRig h;
    const uint32_t at = h.emit({.transpose = 1, .reverse = 2});
    expect_refused(h.rig, at, "NPU_SET_OFM_PRECISION.activation_reverse");
}

TEST(U85TransposeHostile, ChainedOfmCannotBeTransposedOrReversed) {
    {
        HostileRig h;
        const uint32_t at = h.emit({.transpose = 6, .storage = kChainedStorage});
        expect_refused(h.rig, at, "NPU_SET_OFM_PRECISION.activation_transpose");
    }
    {
        HostileRig h;
        const uint32_t at = h.emit({.reverse = 1, .storage = kChainedStorage});
        expect_refused(h.rig, at, "NPU_SET_OFM_PRECISION.activation_reverse");
    }
}

TEST(U85TransposeHostile, ChannelReverseIntoBricksIsRefused) {
    HostileRig h({DataFormat::NHCWB16});
    const uint32_t at = h.emit({.reverse = 3});
    expect_refused(h.rig, at, "NPU_SET_OFM_PRECISION.activation_reverse");
}

TEST(U85TransposeHostile, BrickDepthFromAPartialBrickBlockIsRefused) {
    // HCW stores computed W as the depth: an NHCWB16 OFM needs whole bricks of it per block.
    HostileRig h({DataFormat::NHCWB16});
    const uint32_t at = h.emit({.transpose = 2, .block = {16, 8, 16}});
    expect_refused(h.rig, at, "NPU_SET_OFM_BLK_WIDTH_M1.width_m1");
    // CWH stores computed H as the depth.
    HostileRig v({DataFormat::NHCWB16});
    const uint32_t at2 = v.emit({.transpose = 7, .block = {8, 16, 16}});
    expect_refused(v.rig, at2, "NPU_SET_OFM_BLK_HEIGHT_M1.height_m1");
}

TEST(U85TransposeHostile, BlockDepthBeyondTheStoredWidthLimitIsRefused) {
    // HCW stores the computed depth as the width, at most 128 per block.
    HostileRig h;
    const uint32_t at = h.emit({.transpose = 2, .block = {16, 16, 256}});
    expect_refused(h.rig, at, "NPU_SET_OFM_BLK_DEPTH_M1.depth_m1");
}

// Computed 4x6x32 stored as WCH: 6 rows of 32 pixels of 4 channels, 768 bytes. The OFM starts
// 500 bytes before the end of SRAM: the computed shape's extent (436 bytes with these strides)
// would fit, the stored one does not.
TEST(U85TransposeHostile, StoredAreaOutsideTheRegionIsRefused) {
    HostileRig h;
    Placement& ofm = h.ofm;
    ofm.stride_x = 4, ofm.stride_c = 1, ofm.stride_y = 32 * 4;
    ofm.width0 = 32, ofm.height0 = ofm.height1 = 6;
    ofm.tile_base = {h.rig.sram().size() - 500, 0, 0, 0};
    const uint32_t at = h.emit({.transpose = 3});
    const std::vector<uint8_t> before = h.rig.sram();
    try {
        h.rig.run();
        FAIL() << "expected an out-of-region error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, at) << e.what();
    }
    EXPECT_EQ(h.rig.sram(), before);
}

TEST(U85TransposeHostile, Tile3x1StorageStaysRefused) {
    HostileRig h;
    const uint32_t at = h.emit({.storage = kTile3x1Storage});
    expect_refused(h.rig, at, "activation_storage");
}

}  // namespace
}  // namespace ethosu
