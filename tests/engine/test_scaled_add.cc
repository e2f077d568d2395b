// ADD/SUB's closed form (emulator/engine/scaled_add.h) against scale_value, the general way's
// arithmetic, element by element: random operand scales and shifts around DBL's nudge (bit 31 of
// the shift), both operand orders, ADD and SUB, 8- and 16-bit operands and every rounding the form
// takes; and the ops whose values may leave the form get no terms.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "emulator/engine/output_stage.h"
#include "emulator/engine/scaled_add.h"

namespace ethosu {
namespace {

DecodedOp add_op(int bits, OperandScaling scaling, uint32_t opa_scale, int opa_shift, uint32_t ofm_scale, int ofm_shift,
                 RoundMode round, bool sub) {
    DecodedOp op(OpKind::Elementwise);
    op.kernel().has_ifm2 = true;
    op.kernel().ifm.precision = op.kernel().ifm2.precision = op.kernel().ofm.precision = {true, bits};
    op.kernel().elementwise().mode = sub ? ElementwiseMode::Sub : ElementwiseMode::Add;
    op.kernel().elementwise().operand_scaling = scaling;
    op.kernel().elementwise().opa = {opa_scale, opa_shift};
    op.kernel().output.global_scale = {ofm_scale, ofm_shift};
    op.kernel().output.round = round;
    return op;
}

TEST(ScaledAdd, EqualsScaleValueElementByElement) {
    std::mt19937_64 rng(17);
    int ops = 0;
    for (const int bits : {8, 16}) {
        const int L = bits == 8 ? 20 : 15;
        const int64_t largest = bits == 8 ? 255 : 65535;
        for (const RoundMode round : {RoundMode::DoubleSymmetric, RoundMode::Natural, RoundMode::DoubleAsymmetric}) {
            for (int trial = 0; trial < 60; ++trial) {
                const OperandScaling scaling = trial % 2 ? OperandScaling::Opb32 : OperandScaling::Opa32;
                const bool sub = trial % 3 == 0;
                const uint32_t opa_scale = static_cast<uint32_t>(rng() >> 33);
                const int opa_shift = 10 + static_cast<int>(rng() % 22);  // shift + L across 31
                const uint32_t ofm_scale = static_cast<uint32_t>(rng() >> 33);
                const int ofm_shift = 20 + static_cast<int>(rng() % 40);
                const DecodedOp op = add_op(bits, scaling, opa_scale, opa_shift, ofm_scale, ofm_shift, round, sub);
                const auto terms = scaled_add_terms(op);
                if (!terms) continue;  // an operand scale that takes the sum past 2^30
                ++ops;
                std::vector<int64_t> lhs(500), rhs(500), out(500);
                for (size_t i = 0; i < lhs.size(); ++i) {
                    lhs[i] = static_cast<int64_t>(rng() % (2 * largest + 1)) - largest;
                    rhs[i] = static_cast<int64_t>(rng() % (2 * largest + 1)) - largest;
                }
                const bool opa = scaling == OperandScaling::Opa32;
                add_scaled(opa ? lhs.data() : rhs.data(), opa ? rhs.data() : lhs.data(), 500, *terms, out.data());
                const int64_t sign = sub ? -1 : 1;
                const auto scale32 = [&](int64_t v) {
                    return scale_value(v * (int64_t{1} << L), opa_scale, opa_shift + L, RoundMode::DoubleSymmetric);
                };
                for (size_t i = 0; i < lhs.size(); ++i) {
                    const int64_t v = opa ? scale32(lhs[i]) + sign * (rhs[i] * (int64_t{1} << (L - 1)))
                                          : lhs[i] * (int64_t{1} << (L - 1)) + sign * scale32(rhs[i]);
                    ASSERT_EQ(out[i], scale_value(v, ofm_scale, ofm_shift, round))
                        << bits << "-bit, trial " << trial << ", " << lhs[i] << (sub ? " - " : " + ") << rhs[i];
                }
            }
        }
    }
    EXPECT_GT(ops, 150);  // most of the 360 ops take the form
}

TEST(ScaledAdd, OpsThatMayLeaveTheFormHaveNoTerms) {
    const auto terms = [](DecodedOp op) { return scaled_add_terms(op).has_value(); };
    const DecodedOp vela = add_op(8, OperandScaling::Opa32, 2047886337, 12, 1483599641, 50, RoundMode::DoubleSymmetric, false);
    EXPECT_TRUE(terms(vela));
    DecodedOp small_shift = vela;  // 255 x 2^20 x scale / 2^23: past 2^30
    small_shift.kernel().elementwise().opa.shift = 3;
    EXPECT_FALSE(terms(small_shift));
    DecodedOp truncate = vela;
    truncate.kernel().output.round = RoundMode::Truncate;
    EXPECT_FALSE(terms(truncate));
    DecodedOp sixteen_bit_scales = vela;
    sixteen_bit_scales.kernel().elementwise().operand_scaling = OperandScaling::Both16;
    EXPECT_FALSE(terms(sixteen_bit_scales));
    DecodedOp mul = vela;
    mul.kernel().elementwise().mode = ElementwiseMode::Mul;
    EXPECT_FALSE(terms(mul));
    DecodedOp far_zero_point = vela;  // operands to 1278: 1278 x 2^20 is past 2^30
    far_zero_point.kernel().ifm.zero_point = -1023;
    EXPECT_FALSE(terms(far_zero_point));
    DecodedOp no_output_shift = vela;
    no_output_shift.kernel().output.global_scale.shift = 0;
    EXPECT_FALSE(terms(no_output_shift));
}

}  // namespace
}  // namespace ethosu
