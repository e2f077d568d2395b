// U85 comparisons, bitwise operations, LSR and DIV on hand-built streams, programmed as Vela 5.1
// programs TFLite's EQUAL / NOT_EQUAL / GREATER(_EQUAL) / LESS (operands swapped) and TOSA's
// EQUAL, BITWISE_*, LOGICAL_*, LOGICAL_RIGHT_SHIFT and INTDIV, against plain loops written from
// TFLite's comparisons.h and TOSA's pseudocode; and the register combinations no reference
// defines, which must be refused with the op's offset and the field.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/error.h"
#include "tests/engine/stream_helpers.h"
#include "tests/engine/tflite_math.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;

constexpr uint64_t kSramBase = 0x1000'0000;
constexpr size_t kSramBytes = 1 << 19;
constexpr uint32_t kIfmOffset = 0x00000, kIfm2Offset = 0x20000, kOfmOffset = 0x40000;
constexpr int kBroadcastC = 4, kBroadcastScalar = 8;

enum Mode : int {
    kMul = 0, kAdd = 1, kAbs = 6, kLsr = 10, kDiv = 11, kCmpEq = 16, kCmpNe = 17, kCmpGe = 18, kCmpGt = 19,
    kAnd = 33, kOr = 34, kXor = 35, kNot = 36, kAndNot = 42,
};
constexpr int kRoundNatural = 1, kRoundTruncateToZero = 4;

constexpr Precision kInt8{true, 8}, kInt16{true, 16}, kInt32{true, 32}, kUint8{false, 8};

using test_streams::precision_code;
using test_streams::u16;

// An IFM_SCALE / IFM2_SCALE register: scale * 2^-shift.
struct ScaleRegister {
    uint64_t scale = 1, shift = 0;
};

struct Input {
    Input() = default;
    Input(Precision t, std::vector<int64_t> v, int b = 0, int32_t zp = 0, ScaleRegister s = {})
        : type(t), values(std::move(v)), broadcast(b), zero_point(zp), scale(s) {}
    Precision type = kInt8;
    std::vector<int64_t> values;  // H x W x C, or one element per channel-broadcast pixel
    int broadcast = 0;            // C or SCALAR (then values[0] goes to OP_SCALAR)
    int32_t zero_point = 0;
    ScaleRegister scale;
};

struct EltOp {
    int mode = kAnd;
    int height = 1, width = 1, depth = 1;  // the OFM
    Input ifm, ifm2;
    Precision ofm_type = kInt8;
    int32_t ofm_zero_point = 0;
    ScaleRegister ofm_scale;
    int round_mode = 0;  // DOUBLE_SYMMETRIC, what Vela writes for these ops
};

bool unary(int mode) { return mode == kNot || mode == kAbs; }

// An op of mode on a height x width x depth OFM, int8 throughout, unit scales.
EltOp elementwise(int mode, int height, int width, int depth) {
    EltOp op;
    op.mode = mode, op.height = height, op.width = width, op.depth = depth;
    return op;
}

class U85IntegerElementwise : public ::testing::Test {
protected:
    U85IntegerElementwise() : config_(*find_npu_config("ethos-u85-256")), space_(map_) {
        sram_ = map_.allocate(kSramBase, kSramBytes, "sram");
        space_.set_base(1, kSramBase);
    }

    // Runs the op; returns the OFM, or throws what the executor throws.
    std::vector<int64_t> run(const EltOp& op) {
        const int elements = op.height * op.width * op.depth;
        place(kIfmOffset, op.ifm);
        if (!unary(op.mode)) place(kIfm2Offset, op.ifm2);
        CommandStreamBuilder b(Generation::U85);
        emit(b, op);
        b.emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0xFFFF}});
        const auto stream = decode_stream(config_, b.words(), "u85 integer elementwise");
        Executor(config_, space_, "u85 integer elementwise").run(stream);
        std::vector<int64_t> out(static_cast<size_t>(elements));
        const int bytes = op.ofm_type.bytes();
        for (int i = 0; i < elements; ++i) {
            uint64_t raw = 0;
            for (int k = 0; k < bytes; ++k) raw |= uint64_t{sram_[kOfmOffset + i * bytes + k]} << (8 * k);
            const int unused = 64 - 8 * bytes;
            out[static_cast<size_t>(i)] = op.ofm_type.is_signed ? static_cast<int64_t>(raw << unused) >> unused
                                                                : static_cast<int64_t>(raw);
        }
        return out;
    }

    // The NPU_OP_ELEMENTWISE command's offset in the stream run() builds for op.
    uint32_t op_offset(const EltOp& op) {
        CommandStreamBuilder b(Generation::U85);
        emit(b, op);
        return static_cast<uint32_t>(b.words().size() * 4 - 4);
    }

    // The error run(op) raises.
    Error refusal(const EltOp& op) {
        try {
            run(op);
        } catch (const Error& e) {
            return e;
        }
        ADD_FAILURE() << "op was not refused";
        return Error({}, "");
    }

    void expect_refused(const EltOp& op, const std::string& field) {
        const Error e = refusal(op);
        EXPECT_EQ(e.where().field, field) << e.what();
        EXPECT_EQ(e.where().offset, op_offset(op)) << e.what();
    }

    NpuConfig config_;
    MemoryMap map_;
    std::span<uint8_t> sram_;
    AddressSpace space_;

private:
    void place(uint32_t offset, const Input& in) {
        if (in.broadcast & kBroadcastScalar) return;
        for (size_t i = 0; i < in.values.size(); ++i)
            for (int k = 0; k < in.type.bytes(); ++k)
                sram_[offset + i * in.type.bytes() + k] = static_cast<uint8_t>(in.values[i] >> (8 * k));
    }

    static void emit(CommandStreamBuilder& b, const EltOp& op) {
        const uint64_t h = op.height - 1, w = op.width - 1, d = op.depth - 1;
        const Input& a = op.ifm;
        const Input& c = op.ifm2;
        const uint64_t ifm_x = static_cast<uint64_t>(op.depth * a.type.bytes());
        const uint64_t ofm_x = static_cast<uint64_t>(op.depth * op.ofm_type.bytes());
        b.emit(Cmd::SET_IFM_SCALE, {{Field::SET_IFM_SCALE__scale, a.scale.scale}, {Field::SET_IFM_SCALE__shift, a.scale.shift}})
            .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, op.ofm_scale.scale},
                                       {Field::SET_OFM_SCALE__shift, op.ofm_scale.shift},
                                       {Field::SET_OFM_SCALE__round_mode, static_cast<uint64_t>(op.round_mode)}})
            .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, a.type.is_signed},
                                           {Field::SET_IFM_PRECISION__activation_precision, precision_code(a.type)}})
            .emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, 1}})
            .emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, kIfmOffset}})
            .emit(Cmd::SET_IFM_BASE1).emit(Cmd::SET_IFM_BASE2).emit(Cmd::SET_IFM_BASE3)
            .emit(Cmd::SET_IFM_HEIGHT0_M1, {{Field::SET_IFM_HEIGHT0_M1__height_m1, h}})
            .emit(Cmd::SET_IFM_HEIGHT1_M1, {{Field::SET_IFM_HEIGHT1_M1__height_m1, h}})
            .emit(Cmd::SET_IFM_WIDTH0_M1, {{Field::SET_IFM_WIDTH0_M1__width_m1, w}})
            .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, d}})
            .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, ifm_x}})
            .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, ifm_x * op.width}})
            .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, 1}})
            .emit(Cmd::SET_IFM_ZERO_POINT, {{Field::SET_IFM_ZERO_POINT__zero_point, u16(a.zero_point)}})
            .emit(Cmd::SET_IFM_BROADCAST)
            .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, op.ofm_type.is_signed},
                                           {Field::SET_OFM_PRECISION__activation_precision, precision_code(op.ofm_type)},
                                           {Field::SET_OFM_PRECISION__scale_mode, 1}})
            .emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, 1}})
            .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, kOfmOffset}})
            .emit(Cmd::SET_OFM_BASE1).emit(Cmd::SET_OFM_BASE2).emit(Cmd::SET_OFM_BASE3)
            .emit(Cmd::SET_OFM_HEIGHT_M1, {{Field::SET_OFM_HEIGHT_M1__height_m1, h}})
            .emit(Cmd::SET_OFM_WIDTH_M1, {{Field::SET_OFM_WIDTH_M1__width_m1, w}})
            .emit(Cmd::SET_OFM_HEIGHT0_M1, {{Field::SET_OFM_HEIGHT0_M1__height_m1, h}})
            .emit(Cmd::SET_OFM_HEIGHT1_M1, {{Field::SET_OFM_HEIGHT1_M1__height_m1, h}})
            .emit(Cmd::SET_OFM_WIDTH0_M1, {{Field::SET_OFM_WIDTH0_M1__width_m1, w}})
            .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, d}})
            .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, ofm_x}})
            .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, ofm_x * op.width}})
            .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, 1}})
            .emit(Cmd::SET_OFM_ZERO_POINT, {{Field::SET_OFM_ZERO_POINT__zero_point, u16(op.ofm_zero_point)}})
            .emit(Cmd::SET_ACTIVATION)
            .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, u16(op.ofm_type.is_signed ? -32768 : 0)}})
            .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, u16(op.ofm_type.is_signed ? 32767 : 255)}});
        if (!unary(op.mode)) {
            const uint64_t ifm2_x = c.broadcast & kBroadcastC ? 0 : static_cast<uint64_t>(op.depth * c.type.bytes());
            b.emit(Cmd::SET_IFM2_SCALE, {{Field::SET_IFM2_SCALE__scale, c.scale.scale}, {Field::SET_IFM2_SCALE__shift, c.scale.shift}})
                .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, c.type.is_signed},
                                                {Field::SET_IFM2_PRECISION__activation_precision, precision_code(c.type)}})
                .emit(Cmd::SET_IFM2_ZERO_POINT, {{Field::SET_IFM2_ZERO_POINT__zero_point, u16(c.zero_point)}})
                .emit(Cmd::SET_IFM2_BROADCAST, {{Field::SET_IFM2_BROADCAST__broadcast_mode, static_cast<uint64_t>(c.broadcast)}});
            if (c.broadcast & kBroadcastScalar) {
                b.emit(Cmd::SET_OP_SCALAR, {{Field::SET_OP_SCALAR__scalar, static_cast<uint32_t>(c.values.at(0))}});
            } else {
                // A channel-broadcast IFM2 holds one element per pixel.
                const uint64_t x = c.broadcast & kBroadcastC ? static_cast<uint64_t>(c.type.bytes()) : ifm2_x;
                b.emit(Cmd::SET_IFM2_REGION, {{Field::SET_IFM2_REGION__region, 1}})
                    .emit(Cmd::SET_IFM2_BASE0, {{Field::SET_IFM2_BASE0__addr, kIfm2Offset}})
                    .emit(Cmd::SET_IFM2_BASE1).emit(Cmd::SET_IFM2_BASE2).emit(Cmd::SET_IFM2_BASE3)
                    .emit(Cmd::SET_IFM2_HEIGHT0_M1, {{Field::SET_IFM2_HEIGHT0_M1__height_m1, h}})
                    .emit(Cmd::SET_IFM2_HEIGHT1_M1, {{Field::SET_IFM2_HEIGHT1_M1__height_m1, h}})
                    .emit(Cmd::SET_IFM2_WIDTH0_M1, {{Field::SET_IFM2_WIDTH0_M1__width_m1, w}})
                    .emit(Cmd::SET_IFM2_STRIDE_X, {{Field::SET_IFM2_STRIDE_X__addr, x}})
                    .emit(Cmd::SET_IFM2_STRIDE_Y, {{Field::SET_IFM2_STRIDE_Y__addr, x * op.width}})
                    .emit(Cmd::SET_IFM2_STRIDE_C, {{Field::SET_IFM2_STRIDE_C__addr, 1}});
            }
        }
        b.emit(Cmd::SET_OFM_BLK_HEIGHT_M1).emit(Cmd::SET_OFM_BLK_WIDTH_M1)
            .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, 63}})
            .emit(Cmd::SET_ACC_FORMAT)
            .emit(Cmd::SET_BLOCKDEP)
            .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, static_cast<uint64_t>(op.mode)}});
    }
};

// The IFM2 value paired with OFM element i.
int64_t second(const EltOp& op, size_t i) {
    const Input& c = op.ifm2;
    if (c.broadcast & kBroadcastScalar) return c.values[0];
    if (c.broadcast & kBroadcastC) return c.values[i / static_cast<size_t>(op.depth)];
    return c.values[i];
}

std::vector<int64_t> random_values(size_t n, const Precision& p, std::mt19937& rng) {
    const int64_t lo = p.is_signed ? -(int64_t{1} << (p.bits - 1)) : 0;
    const int64_t hi = p.is_signed ? (int64_t{1} << (p.bits - 1)) - 1 : (int64_t{1} << p.bits) - 1;
    std::uniform_int_distribution<int64_t> any(lo, hi);
    std::vector<int64_t> v(n);
    for (auto& x : v) x = any(rng);
    // The extremes and zero always take part.
    if (n >= 4) v[0] = lo, v[1] = hi, v[2] = 0, v[3] = p.is_signed ? -1 : 1;
    return v;
}

// value as a two's complement number of type p.
int64_t wrap(int64_t value, const Precision& p) {
    const int unused = 64 - p.bits;
    const uint64_t bits = static_cast<uint64_t>(value) << unused;
    return p.is_signed ? static_cast<int64_t>(bits) >> unused : static_cast<int64_t>(bits >> unused);
}

// ---- Comparisons

// TFLite's quantized int8 comparison operand: (x - zero point) shifted left 8, then
// MultiplyByQuantizedMultiplierSmallerThanOneExp by the input scale (comparisons.h).
struct TfliteOperand {
    float scale;
    int32_t zero_point;
    int32_t rescale(int64_t x) const {
        const auto m = tflite_math::quantize_multiplier(scale);
        return tflite_math::multiply(static_cast<int32_t>((x - zero_point) * 256), m.multiplier, m.shift);
    }
    // Vela: the input's own scale with the left shift of 8 taken off the shift.
    ScaleRegister vela_scale() const {
        const auto m = tflite_math::quantize_multiplier(scale);
        return {static_cast<uint64_t>(m.multiplier), static_cast<uint64_t>(31 - m.shift - 8)};
    }
    Input input(std::vector<int64_t> values) const { return {kInt8, std::move(values), 0, zero_point, vela_scale()}; }
    // The operand as that register rescales it: one rounding, half up.
    int64_t rounded_once(int64_t x) const {
        const ScaleRegister r = vela_scale();
        const int64_t product = (x - zero_point) * static_cast<int64_t>(r.scale);
        return (product + (int64_t{1} << (r.shift - 1))) >> r.shift;
    }
};

// Vela's boolean: -1 true, 0 false.
int64_t truth(bool b) { return b ? -1 : 0; }

using Compare = std::function<bool(int64_t, int64_t)>;
struct ComparisonCase {
    const char* name;
    int mode;
    bool swapped;  // LESS / LESS_EQUAL: GREATER / GREATER_EQUAL with the operands exchanged
    Compare reference;
};
// A comparison of a and b as Vela programs it: LESS swaps the operands onto IFM2 and IFM.
EltOp comparison(const ComparisonCase& cmp, const TfliteOperand& qa, const TfliteOperand& qb,
                 const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    EltOp op = elementwise(cmp.mode, 1, 256, 256);
    op.ifm = cmp.swapped ? qb.input(b) : qa.input(a);
    op.ifm2 = cmp.swapped ? qa.input(a) : qb.input(b);
    return op;
}

// Element (0, x, c) pairs c - 128 with x - 128.
std::pair<std::vector<int64_t>, std::vector<int64_t>> every_int8_pair() {
    std::vector<int64_t> lhs, rhs;
    for (int x = 0; x < 256; ++x)
        for (int c = 0; c < 256; ++c) lhs.push_back(c - 128), rhs.push_back(x - 128);
    return {lhs, rhs};
}

const ComparisonCase kComparisons[] = {
    {"EQUAL", kCmpEq, false, std::equal_to<int64_t>()},
    {"NOT_EQUAL", kCmpNe, false, std::not_equal_to<int64_t>()},
    {"GREATER", kCmpGt, false, std::greater<int64_t>()},
    {"GREATER_EQUAL", kCmpGe, false, std::greater_equal<int64_t>()},
    {"LESS", kCmpGt, true, std::less<int64_t>()},
    {"LESS_EQUAL", kCmpGe, true, std::less_equal<int64_t>()},
};

// Every int8 pair, OFM element (0, x, c) comparing c - 128 with x - 128, under quantizations
// whose rescaled values keep their order in TFLite (same scale, or a scale ratio that is a
// power of two): the result equals TFLite's for every pair.
TEST_F(U85IntegerElementwise, QuantizedInt8ComparisonsEqualTfliteForEveryPair) {
    const TfliteOperand quants[][2] = {{{0.05f, -7}, {0.05f, -7}}, {{0.05f, 3}, {0.05f, -100}},
                                       {{0.5f, 0}, {0.00390625f, -128}}};
    const auto [lhs, rhs] = every_int8_pair();
    for (const auto& q : quants)
        for (const ComparisonCase& cmp : kComparisons) {
            const auto out = run(comparison(cmp, q[0], q[1], lhs, rhs));
            for (size_t i = 0; i < lhs.size(); ++i) {
                const bool expected = cmp.reference(q[0].rescale(lhs[i]), q[1].rescale(rhs[i]));
                ASSERT_EQ(out[i], truth(expected)) << cmp.name << " " << lhs[i] << ", " << rhs[i];
            }
        }
}

// Unrelated scales: Vela programs each input's scale with the shift less 8 and dbl_rnd 0, so the
// operand is rounded once, (x - zero point) * scale / 2^shift half up, where TFLite rounds
// twice (its doubling high multiply, then the shift). Compared with that single rounding (both
// shifts here are at most 31, where DOUBLE_SYMMETRIC adds no second rounding).
TEST_F(U85IntegerElementwise, QuantizedInt8ComparisonsWithUnrelatedScalesRoundEachOperandOnce) {
    const TfliteOperand quants[][2] = {{{0.0371f, 11}, {0.0123f, -20}}, {{0.0021f, -128}, {0.09f, 127}}};
    const auto [lhs, rhs] = every_int8_pair();
    for (const auto& q : quants)
        for (const ComparisonCase& cmp : kComparisons) {
            const auto out = run(comparison(cmp, q[0], q[1], lhs, rhs));
            for (size_t i = 0; i < lhs.size(); ++i) {
                const bool expected = cmp.reference(q[0].rounded_once(lhs[i]), q[1].rounded_once(rhs[i]));
                ASSERT_EQ(out[i], truth(expected)) << cmp.name << " " << lhs[i] << ", " << rhs[i];
            }
        }
}

// TOSA EQUAL / GREATER / GREATER_EQUAL on int16 and int32: plain comparisons, unit scales;
// IFM2 as a tensor, broadcast along C and as a scalar.
TEST_F(U85IntegerElementwise, Int16AndInt32ComparisonsEqualTosa) {
    std::mt19937 rng(7);
    for (const Precision& type : {kInt16, kInt32})
        for (int broadcast : {0, kBroadcastC, kBroadcastScalar})
            for (const ComparisonCase& cmp : kComparisons) {
                EltOp op = elementwise(cmp.mode, 3, 5, 40);
                const size_t n = 3 * 5 * 40;
                op.ifm = {type, random_values(n, type, rng)};
                const size_t n2 = broadcast == kBroadcastScalar ? 1 : broadcast == kBroadcastC ? n / 40 : n;
                op.ifm2 = {type, random_values(n2, type, rng), broadcast};
                // Some equal pairs for EQUAL / GREATER_EQUAL.
                if (!broadcast)
                    for (size_t i = 0; i < n; i += 7) op.ifm2.values[i] = op.ifm.values[i];
                const auto out = run(op);
                for (size_t i = 0; i < n; ++i) {
                    // The stream compares IFM with IFM2; LESS reaches it with the operands swapped.
                    const int64_t a = op.ifm.values[i], b = second(op, i);
                    const bool expected = cmp.swapped ? cmp.reference(b, a) : cmp.reference(a, b);
                    ASSERT_EQ(out[i], truth(expected)) << cmp.name << " " << a << ", " << b;
                }
            }
}

// A TFLite bool graph output: Vela ANDs the -1/0 result with 1.
TEST_F(U85IntegerElementwise, ComparisonThenAndOneGivesTfliteBooleans) {
    EltOp cmp = elementwise(kCmpGt, 1, 1, 256);
    for (int i = 0; i < 256; ++i) cmp.ifm.values.push_back(i - 128);
    cmp.ifm2 = {kInt8, {5}, kBroadcastScalar};
    const auto internal = run(cmp);
    EltOp to_tflite = elementwise(kAnd, 1, 1, 256);
    to_tflite.ifm.values = internal;
    to_tflite.ifm2 = {kInt8, {1}, kBroadcastScalar};
    const auto out = run(to_tflite);
    for (int i = 0; i < 256; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], i - 128 > 5 ? 1 : 0) << i;
}

// ---- Bitwise

struct BitwiseCase {
    const char* name;
    int mode;
    std::function<int64_t(int64_t, int64_t)> reference;  // on the values as stored
};
const BitwiseCase kBitwise[] = {
    {"AND", kAnd, [](int64_t a, int64_t b) { return a & b; }},
    {"OR", kOr, [](int64_t a, int64_t b) { return a | b; }},
    {"XOR", kXor, [](int64_t a, int64_t b) { return a ^ b; }},
    {"AND_NOT", kAndNot, [](int64_t a, int64_t b) { return a & ~b; }},
    {"NOT", kNot, [](int64_t a, int64_t) { return ~a; }},
};

// TOSA BITWISE_AND / OR / XOR / NOT on int8, int16, int32 (and uint8, whose NOT stays in 8 bits),
// and Vela's AND_NOT; IFM2 as a tensor, broadcast along C and as a scalar.
TEST_F(U85IntegerElementwise, BitwiseOperationsEqualTosaPerType) {
    std::mt19937 rng(11);
    for (const Precision& type : {kInt8, kInt16, kInt32, kUint8})
        for (int broadcast : {0, kBroadcastC, kBroadcastScalar})
            for (const BitwiseCase& bit : kBitwise) {
                EltOp op = elementwise(bit.mode, 2, 7, 33);
                op.ofm_type = type;
                const size_t n = 2 * 7 * 33;
                op.ifm = {type, random_values(n, type, rng)};
                const size_t n2 = broadcast == kBroadcastScalar ? 1 : broadcast == kBroadcastC ? n / 33 : n;
                op.ifm2 = {type, random_values(n2, type, rng), broadcast};
                const auto out = run(op);
                for (size_t i = 0; i < n; ++i) {
                    const int64_t a = op.ifm.values[i], b = bit.mode == kNot ? 0 : second(op, i);
                    ASSERT_EQ(out[i], wrap(bit.reference(a, b), type)) << bit.name << " " << a << ", " << b;
                }
            }
}

// ---- LSR

// TOSA LOGICAL_RIGHT_SHIFT: the element's bits shifted as unsigned, for every shift 0..31.
TEST_F(U85IntegerElementwise, LogicalRightShiftEqualsTosaPerType) {
    std::mt19937 rng(13);
    for (const Precision& type : {kInt8, kInt16, kInt32}) {
        EltOp op = elementwise(kLsr, 1, 32, 24);
        op.ofm_type = type;
        const size_t n = 32 * 24;
        op.ifm = {type, random_values(n, type, rng)};
        op.ifm2.type = type;
        for (size_t i = 0; i < n; ++i) op.ifm2.values.push_back(static_cast<int64_t>(i / 24));
        const auto out = run(op);
        for (size_t i = 0; i < n; ++i) {
            const int64_t a = op.ifm.values[i];
            const int shift = static_cast<int>(op.ifm2.values[i]);
            const uint64_t element = static_cast<uint64_t>(a) & ((uint64_t{1} << type.bits) - 1);
            ASSERT_EQ(out[i], wrap(static_cast<int64_t>(element >> shift), type)) << a << " >> " << shift;
        }
    }
}

// ---- DIV

// TFLite's int32 DIV and TOSA INTDIV: the quotient truncated toward zero, with Vela's
// DOUBLE_SYMMETRIC and with TRUNCATE_TO_ZERO; divisors as a tensor and a scalar.
TEST_F(U85IntegerElementwise, Int32DivTruncatesTowardZeroAsTosaIntdiv) {
    std::mt19937 rng(17);
    std::uniform_int_distribution<int64_t> small(-300, 300);
    for (int round : {0, kRoundTruncateToZero})
        for (int broadcast : {0, kBroadcastScalar}) {
            EltOp op = elementwise(kDiv, 4, 8, 16);
            op.ofm_type = kInt32;
            op.round_mode = round;
            const size_t n = 4 * 8 * 16;
            op.ifm = {kInt32, random_values(n, kInt32, rng)};
            op.ifm.values[3] = -7;  // -7 / 2 and -7 / -2 round toward zero
            if (broadcast == kBroadcastScalar) {
                op.ifm2 = {kInt32, {-2}, kBroadcastScalar};
            } else {
                op.ifm2 = {kInt32, std::vector<int64_t>(n)};
                for (size_t i = 0; i < n; ++i) {
                    int64_t d = i % 3 ? small(rng) : random_values(1, kInt32, rng)[0];
                    op.ifm2.values[i] = d ? d : 3;
                }
                op.ifm2.values[0] = 1, op.ifm2.values[1] = -1, op.ifm2.values[3] = 2;
            }
            const auto out = run(op);
            for (size_t i = 0; i < n; ++i) {
                const int64_t a = op.ifm.values[i], b = second(op, i);
                ASSERT_EQ(out[i], a / b) << a << " / " << b;
            }
        }
}

// ---- Refused

TEST_F(U85IntegerElementwise, DivByZeroIsRefusedWithTheOpAndOperand) {
    EltOp op = elementwise(kDiv, 1, 1, 4);
    op.ofm_type = kInt32;
    op.ifm = {kInt32, {10, 20, 30, 40}};
    op.ifm2 = {kInt32, {1, 2, 0, 4}};
    expect_refused(op, "IFM2");
    op.ifm2 = {kInt32, {0}, kBroadcastScalar};
    expect_refused(op, "NPU_SET_OP_SCALAR.scalar");
}

TEST_F(U85IntegerElementwise, DivOverflowIsRefused) {
    EltOp op = elementwise(kDiv, 1, 1, 1);
    op.ofm_type = kInt32;
    op.ifm = {kInt32, {-2147483648}};
    op.ifm2 = {kInt32, {-1}};
    expect_refused(op, "NPU_OP_ELEMENTWISE");
}

// int8 MUL operands with zero point 32767 and IFM scale 2^30 / 2^11 reach 2^34 in magnitude, and
// their product would leave int64. Refused whatever the data; the widest MUL
// Vela writes (int32 operands, unit scales) still runs, its product exact.
TEST_F(U85IntegerElementwise, MulWhoseScaledProductCanLeave64BitsIsRefused) {
    EltOp op = elementwise(kMul, 1, 1, 2);
    op.ifm = {kInt8, {1, 2}, 0, 32767, {uint64_t{1} << 30, 11}};
    op.ifm2 = {kInt8, {3, 4}, 0, 32767, {uint64_t{1} << 30, 13}};
    expect_refused(op, "NPU_SET_IFM_SCALE");

    EltOp widest = elementwise(kMul, 1, 1, 2);
    widest.ifm = {kInt32, {-2147483648, 3}};
    widest.ifm2 = {kInt32, {1, -5}};
    widest.ofm_type = kInt32;
    EXPECT_EQ(run(widest), (std::vector<int64_t>{-2147483648, -15}));
}

// An ADD of two int64 operands, one scaled by 1557527444, would overflow the sum; an int64 ABS
// would negate INT64_MIN. The widest operands that stay inside 64 bits still run.
TEST_F(U85IntegerElementwise, ScaledOperandsThatCanLeave64BitsAreRefused) {
    constexpr Precision kInt64{true, 64};
    EltOp add = elementwise(kAdd, 1, 1, 2);
    add.ifm = {kInt64, {1, 2}, 0, 0, {1557527444, 0}};
    add.ifm2 = {kInt64, {3, 4}, 0, 0, {uint64_t{1} << 30, 16}};
    add.ofm_type = kInt16;
    expect_refused(add, "NPU_SET_IFM_SCALE");

    // Two uint64 operands: bounds near 2^64 each, whose product the check itself must not form.
    EltOp mul = elementwise(kMul, 1, 1, 2);
    mul.ifm = {Precision{false, 64}, {1, 2}};
    mul.ifm2 = {Precision{false, 64}, {3, 4}};
    mul.ofm_type = kInt32;
    expect_refused(mul, "NPU_SET_IFM_SCALE");

    EltOp abs = elementwise(kAbs, 1, 1, 2);
    abs.ifm = {kInt64, {INT64_MIN, 5}};
    abs.ofm_type = kInt32;
    expect_refused(abs, "NPU_SET_IFM_SCALE");

    EltOp widest = elementwise(kAdd, 1, 1, 2);
    widest.ifm = {kInt32, {-1'000'000'000, 3}};
    widest.ifm2 = {kInt32, {-1'000'000'000, -5}};
    widest.ofm_type = kInt32;
    EXPECT_EQ(run(widest), (std::vector<int64_t>{-2'000'000'000, -2}));
}

TEST_F(U85IntegerElementwise, UndefinedRegisterCombinationsAreRefused) {
    EltOp base = elementwise(kAnd, 1, 1, 2);
    base.ifm = {kInt8, {1, 2}};
    base.ifm2 = {kInt8, {3, 4}};
    EltOp op = base;
    op.ifm2.type = kInt16;
    expect_refused(op, "NPU_SET_IFM2_PRECISION.activation_precision");
    op = base;
    op.ifm2.type = kUint8;
    expect_refused(op, "NPU_SET_IFM2_PRECISION.activation_precision");
    op = base;
    op.ofm_scale = {1, 1};
    expect_refused(op, "NPU_SET_OFM_SCALE");
    op = base;
    op.ifm.scale = {3, 1};
    expect_refused(op, "NPU_SET_IFM_SCALE");
    op = base;
    op.ifm2.scale = {3, 1};
    expect_refused(op, "NPU_SET_IFM2_SCALE");
    op = base;
    op.ifm.zero_point = 5;
    expect_refused(op, "NPU_SET_IFM_ZERO_POINT");
    op = base;
    op.ofm_zero_point = -1;
    expect_refused(op, "NPU_SET_OFM_ZERO_POINT");
    op = base;
    op.mode = kCmpEq;
    op.ofm_scale = {2, 0};
    expect_refused(op, "NPU_SET_OFM_SCALE");
    op = base;
    op.mode = kLsr;
    op.round_mode = kRoundNatural;
    expect_refused(op, "NPU_SET_OFM_SCALE.round_mode");
    op = base;
    op.mode = kDiv;
    op.round_mode = 5;  // TRUNCATE_TO_LOWER
    expect_refused(op, "NPU_SET_OFM_SCALE.round_mode");
}

}  // namespace
}  // namespace ethosu
