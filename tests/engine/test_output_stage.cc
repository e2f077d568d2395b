// The output-stage arithmetic against plain transcriptions of TFLite's reference integer math.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "emulator/engine/output_bytes.h"
#include "emulator/engine/output_pipeline.h"
#include "emulator/engine/output_stage.h"
#include "emulator/engine/validate.h"
#include "emulator/isa/error.h"
#include "tests/engine/tflite_math.h"

namespace ethosu {
namespace {

using tflite_math::multiply;

// TFLite's 16-bit requantize: int64 input, multiplier reduced to 16 bits, single rounding.
int32_t tflite_multiply_int64(int64_t x, int32_t multiplier, int shift) {
    const int32_t reduced = multiplier < 0x7FFF0000 ? ((multiplier + (1 << 15)) >> 16) : 0x7FFF;
    const int total_shift = 15 - shift;
    return static_cast<int32_t>((x * reduced + (int64_t{1} << (total_shift - 1))) >> total_shift);
}

// DBL with Vela's scale and shift = 31 - TFLite shift equals TFLite's double rounding.
TEST(OutputStage, DoubleRoundingEqualsTfliteMultiplyByQuantizedMultiplier) {
    std::mt19937_64 rng(1);
    for (int i = 0; i < 200000; ++i) {
        const int32_t x = static_cast<int32_t>(rng() >> (rng() % 40));
        const int32_t sign = rng() & 1 ? 1 : -1;
        const int32_t multiplier = static_cast<int32_t>((1u << 30) + (rng() % (1u << 30)));
        const int tflite_shift = -static_cast<int>(rng() % 31);  // scales below one
        const int32_t value = sign * x;
        ASSERT_EQ(scale_value(value, static_cast<uint32_t>(multiplier), 31 - tflite_shift, RoundMode::DoubleSymmetric),
                  multiply(value, multiplier, tflite_shift))
            << value << " * " << multiplier << " >> " << 31 - tflite_shift;
    }
    // Exact halves at both rounding steps, both signs.
    for (int32_t v : {-3, -2, -1, 1, 2, 3, 1 << 20, -(1 << 20)})
        for (int s = 0; s > -8; --s) EXPECT_EQ(scale_value(v, 1u << 30, 31 - s, RoundMode::DoubleSymmetric), multiply(v, 1 << 30, s));
}

TEST(OutputStage, NaturalWithReducedScaleEqualsTflite16BitRequantize) {
    std::mt19937_64 rng(2);
    for (int i = 0; i < 200000; ++i) {
        const int64_t x = static_cast<int64_t>(rng() % (int64_t{1} << 40)) - (int64_t{1} << 39);
        const int32_t multiplier = static_cast<int32_t>((1u << 30) + (rng() % ((1u << 31) - (1u << 16) - (1u << 30))));
        const int tflite_shift = -8 - static_cast<int>(rng() % 20);  // results fit TFLite's int32
        // Vela's reduced scale: round the 32-bit multiplier to 16 bits; shift drops by 16.
        const uint32_t reduced = static_cast<uint32_t>((multiplier + (1 << 15)) >> 16);
        ASSERT_EQ(scale_value(x, reduced, 31 - tflite_shift - 16, RoundMode::Natural),
                  tflite_multiply_int64(x, multiplier, tflite_shift));
    }
}

TEST(OutputStage, RoundingModesAtTheirEdges) {
    EXPECT_EQ(rounding_shift(5, 1, RoundMode::Natural), 3);    //  2.5 ->  3
    EXPECT_EQ(rounding_shift(-5, 1, RoundMode::Natural), -2);  // -2.5 -> -2
    EXPECT_EQ(rounding_shift(-5, 1, RoundMode::Truncate), -2);
    EXPECT_EQ(rounding_shift(5, 1, RoundMode::Truncate), 2);
    EXPECT_EQ(rounding_shift(-5, 1, RoundMode::TruncateToLower), -3);
    EXPECT_EQ(rounding_shift(-5, 1, RoundMode::DoubleSymmetric), -3);  // half away from zero
    EXPECT_EQ(rounding_shift(7, 0, RoundMode::Natural), 7);
    EXPECT_EQ(scale_value(1, 1, 0, RoundMode::DoubleSymmetric), 1);
    // Shifts at the top of the 6-bit range do not overflow.
    // (2^31 - 1)(2^32 - 1) / 2^63 = 0.99999... -> 1;  2^39 (2^32 - 1) / 2^63 = 255.99... -> 256.
    EXPECT_EQ(scale_value(std::numeric_limits<int32_t>::max(), 0xFFFFFFFFu, 63, RoundMode::DoubleSymmetric), 1);
    EXPECT_EQ(scale_value(int64_t{1} << 39, 0xFFFFFFFFu, 63, RoundMode::Natural), 256);
}

// TFLite's average: (sum +- n/2) / n, rounding half away from zero.
TEST(OutputStage, AveragePoolScaleEqualsTfliteRoundedDivision) {
    for (int n : {1, 2, 3, 4, 7, 9, 25, 49, 64, 100, 255, 256, 441, 2401, 4096}) {
        const Scale s = average_pool_scale(n);
        for (int64_t sum = -128 * n; sum <= 127 * n; sum += (n > 64 ? 7 : 1)) {
            const int64_t expected = sum > 0 ? (sum + n / 2) / n : (sum - n / 2) / n;
            ASSERT_EQ(scale_value(sum, s.scale, s.shift, s.round), expected) << "n " << n << " sum " << sum;
        }
    }
    EXPECT_EQ(average_pool_scale(49).scale, 2804876602u);  // Vela's listing for a 7x7 pool
    EXPECT_EQ(average_pool_scale(49).shift, 37);
}

TEST(OutputStage, ClipRangeFollowsTheOfmType) {
    DecodedOp op(OpKind::Conv);
    op.kernel().ofm.precision = {false, 8};
    op.kernel().output.clip_min = 0;
    op.kernel().output.clip_max = 0xFF;
    EXPECT_EQ(clip_range(op).max, 255);  // 16-bit bound read unsigned for an unsigned OFM
    op.kernel().ofm.precision = {true, 8};
    op.kernel().output.clip_min = -32768;
    op.kernel().output.clip_max = 32767;
    EXPECT_EQ(clip_range(op).min, -128);
    EXPECT_EQ(clip_range(op).max, 127);
}

// TFLite's int16 LOGISTIC and TANH (reference_integer_ops) after the input multiply, written out
// plainly: interpolate in the sample table on |x|, then mirror for negative x with its own
// rounding offsets. 512 (sigmoid) or 256 (tanh) units of x per sample.
int32_t tflite_logistic16(int32_t x) {
    const auto& t = sigmoid_samples();
    const uint32_t a = static_cast<uint32_t>(std::abs(x)), i = a >> 9;
    uint32_t r = i >= 255 ? 0x7FFFu << 10 : (uint32_t{t[i]} << 9) + (a & 0x1FF) * (t[i + 1] - t[i]);
    r = x >= 0 ? r + (1 << 9) : (1u << 25) - r + (1 << 9) - 1;
    return static_cast<int32_t>(r >> 10);
}
int32_t tflite_tanh16(int32_t x) {
    const auto& t = sigmoid_samples();
    const uint32_t a = static_cast<uint32_t>(std::abs(x)), i = a >> 8;
    int32_t r = i >= 255 ? 0xFFFF << 8 : static_cast<int32_t>((t[i] << 8) + (a & 0xFF) * (t[i + 1] - t[i]));
    r = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return r >> 8;
}

// Inputs reach the functions as int16 * 3 (input scale 2^-12) or * 6 (2^-11); cover both and beyond.
constexpr int32_t kActivationInputLimit = 6 * 32768 + 4096;

TEST(BuiltinActivation, SigmoidEqualsTfliteLogistic16) {
    for (int32_t x = -kActivationInputLimit; x <= kActivationInputLimit; ++x)
        ASSERT_EQ(builtin_sigmoid(x), tflite_logistic16(x)) << x;
}

TEST(BuiltinActivation, TanhEqualsTfliteTanh16) {
    for (int32_t x = -kActivationInputLimit; x <= kActivationInputLimit; ++x)
        ASSERT_EQ(builtin_tanh(x), tflite_tanh16(x)) << x;
}

TEST(BuiltinActivation, SamplesMatchTflitesTableWhereRoundingAloneDoesNot) {
    const auto& t = sigmoid_samples();
    EXPECT_EQ(t[0], 32768);
    EXPECT_EQ(t[4], 35493);   // 65536 * sigmoid(4/24) = 35492.36
    EXPECT_EQ(t[28], 49975);  // 49973.95: raised by more than one
    EXPECT_EQ(t[35], 53169);  // 53167.89
    EXPECT_EQ(t[254], 65534);
    EXPECT_EQ(t[255], 65535);  // 65534.4: the saturated end
    for (size_t i = 1; i < t.size(); ++i) ASSERT_LE(t[i - 1], t[i]) << i;
    // Every entry: sums of TFLite's sigmoid_table_uint16 (plain, index-weighted, squared).
    int64_t sum = 0, weighted = 0, squares = 0;
    for (size_t i = 0; i < t.size(); ++i) {
        sum += t[i];
        weighted += static_cast<int64_t>(i) * t[i];
        squares += int64_t{t[i]} * t[i];
    }
    EXPECT_EQ(sum, 15670629);
    EXPECT_EQ(weighted, 2108062945);
    EXPECT_EQ(squares, 974918119835);
}

TEST(BuiltinActivation, ZeroSaturationAndSymmetry) {
    EXPECT_EQ(builtin_sigmoid(0), 16384);
    EXPECT_EQ(builtin_tanh(0), 0);
    // The last sample interval and everything past it.
    for (int64_t x : {int64_t{255 * 512 - 1}, int64_t{255 * 512}, int64_t{1} << 40}) {
        EXPECT_EQ(builtin_sigmoid(x), 32767) << x;
        EXPECT_EQ(builtin_sigmoid(-x), 1) << x;  // not 0: the mirror of 32767
    }
    for (int64_t x : {int64_t{255 * 256 - 1}, int64_t{255 * 256}, int64_t{1} << 40}) {
        EXPECT_EQ(builtin_tanh(x), 32767) << x;
        EXPECT_EQ(builtin_tanh(-x), -32767) << x;
    }
    for (int64_t x = 1; x < 300000; x += 97) {
        ASSERT_EQ(builtin_sigmoid(-x), 32768 - builtin_sigmoid(x)) << x;
        ASSERT_EQ(builtin_tanh(-x), -builtin_tanh(x)) << x;
    }
}

TEST(BuiltinActivation, InterpolationBoundariesAndAccuracy) {
    const auto& t = sigmoid_samples();
    for (int k = 0; k < 255; ++k) {
        // On a sample the result is the sample, halved to Q0.15 and rounded; between samples it
        // moves by the slope, reaching the next sample only at the next boundary.
        ASSERT_EQ(builtin_sigmoid(512 * k), (t[k] + 1) >> 1) << k;
        ASSERT_EQ(builtin_sigmoid(512 * k + 256), ((t[k] << 9) + 256 * (t[k + 1] - t[k]) + 512) >> 10) << k;
        ASSERT_EQ(builtin_tanh(256 * k), t[k] - 32768) << k;  // 2 * sigmoid - 1, exact on a sample
    }
    int64_t previous_sigmoid = 0, previous_tanh = -32768;
    for (int64_t x = -140000; x <= 140000; ++x) {
        const int64_t s = builtin_sigmoid(x), th = builtin_tanh(x);
        ASSERT_GE(s, previous_sigmoid) << x;
        ASSERT_GE(th, previous_tanh) << x;
        previous_sigmoid = s;
        previous_tanh = th;
        // Close to the exact functions (x in units of 1/12288): the samples are within about
        // half an LSB of 16-bit sigmoid, which tanh doubles.
        const double real = static_cast<double>(x) / 12288;
        ASSERT_LE(std::abs(s - 32768 / (1 + std::exp(-real))), 1.1) << x;
        ASSERT_LE(std::abs(th - 32768 * std::tanh(real)), 1.5) << x;
    }
}

// What an OutputPipeline reads of a run: an ExecutionContext of U55-128 on an empty memory map.
struct PipelineContext {
    NpuConfig config = *find_npu_config("ethos-u55-128");
    MemoryMap map;
    AddressSpace memory{map};
    Shram shram{config};
    WeightCache weights;
    ChainBuffers chain;
    KernelScratch scratch;
    Accumulators accumulators;
    std::string source = "test";
    WorkBudget budget{{}, source};
    ExecutionContext ctx{config, memory, shram, weights, source, chain, scratch, accumulators, budget};
};

// A 64-bit OFM: a scaled value that scale_value saturated to an end of int64 takes the zero point
// saturating, as the clamp to the OFM's type would (a fuzzed U85 MUL overflowed here).
TEST(OutputStage, ZeroPointAtTheEndsOfInt64Saturates) {
    PipelineContext rig;
    for (const int64_t zero_point : {int64_t{-74}, int64_t{74}}) {
        DecodedOp op(OpKind::Conv);
        op.kernel().ofm.precision = {true, 64};
        op.kernel().ofm.zero_point = zero_point;
        const OutputPipeline pipeline(op, rig.ctx);
        const std::vector<int64_t> scaled = {INT64_MIN, INT64_MAX, 5, INT64_MIN + 80, INT64_MAX - 80};
        std::vector<int64_t> out(scaled.size());
        pipeline.finish_channels(scaled.data(), static_cast<int>(scaled.size()), out.data());
        for (size_t i = 0; i < scaled.size(); ++i) {
            const int64_t expected = add_zero_point(scaled[i], zero_point);
            EXPECT_EQ(out[i], expected) << scaled[i] << " + " << zero_point;
            EXPECT_EQ(pipeline.finish(scaled[i]), expected) << scaled[i] << " + " << zero_point;
        }
        EXPECT_EQ(out[0], zero_point < 0 ? INT64_MIN : INT64_MIN + 74);
        EXPECT_EQ(out[1], zero_point > 0 ? INT64_MAX : INT64_MAX - 74);
    }
}

TEST(BuiltinActivation, PipelineAppliesTheFunctionToTheScaledValueThenClips) {
    PipelineContext rig;
    ExecutionContext& ctx = rig.ctx;
    DecodedOp op(OpKind::Conv);
    op.kernel().ofm.precision = {true, 16};
    op.kernel().output.activation = Activation::Sigmoid;
    op.kernel().output.clip_min = 11;  // Vela's LSTM gate range
    op.kernel().output.clip_max = 32757;
    const OutputPipeline sigmoid(op, ctx);
    EXPECT_EQ(sigmoid.finish(0), 16384);
    EXPECT_EQ(sigmoid.finish(-(1 << 20)), 11);
    EXPECT_EQ(sigmoid.finish(1 << 20), 32757);
    op.kernel().output.activation = Activation::Tanh;
    op.kernel().output.clip_min = -32768;
    op.kernel().output.clip_max = 32767;
    op.kernel().output.global_scale = {6, 0, 0, RoundMode::DoubleSymmetric};  // cell state at scale 2^-11
    const OutputPipeline tanh(op, ctx);
    EXPECT_EQ(tanh.apply(1000, 0, nullptr), builtin_tanh(6000));
    EXPECT_EQ(tanh.apply(-32768, 0, nullptr), -32767);

    // What the built-in functions do not cover, validate() refuses before any pipeline is made.
    op.kind = OpKind::Pool;
    op.kernel().parts = PoolMode::Max;
    op.kernel().ofm.height = op.kernel().ofm.width = op.kernel().ofm.depth = 1;
    op.kernel().kernel.height = op.kernel().kernel.width = op.kernel().kernel.stride_x = op.kernel().kernel.stride_y = 1;
    const auto refusal = [&](const NpuConfig& config) -> std::string {
        try {
            validate(op, config, rig.source);
        } catch (const Error& e) {
            return e.reason();
        }
        return "accepted";
    };
    EXPECT_EQ(refusal(rig.config), "accepted");
    const std::string builtin_only = "built-in TANH/SIGMOID activations are supported on U55/U65 16-bit OFMs with zero "
                                     "point 0 only";
    op.kernel().ofm.precision = {true, 8};
    EXPECT_EQ(refusal(rig.config), builtin_only);
    op.kernel().ofm.precision = {true, 16};
    op.kernel().ofm.zero_point = 1;
    EXPECT_EQ(refusal(rig.config), builtin_only);
    op.kernel().ofm.zero_point = 0;
    EXPECT_EQ(refusal(*find_npu_config("ethos-u85-256")), "a LUT activation without a LUT type");
}

// apply_channels' vectorised per-channel scaling (output_pipeline.cc scale_channels_64) against
// apply() channel by channel: int32 and int64 sums, every rounding mode, int8/int16/int32 OFMs,
// odd channel counts, and pixels with a channel outside its closed form (sums of 2^30 and more,
// shifts of 0 and 63), which must take the general path whole (a shift: the op's every pixel).
TEST(OutputStage, ApplyChannelsEqualsApplyPerChannel) {
    PipelineContext rig;
    ExecutionContext& ctx = rig.ctx;
    std::mt19937_64 rng(3);
    for (const RoundMode round : {RoundMode::DoubleSymmetric, RoundMode::Natural, RoundMode::DoubleAsymmetric,
                                  RoundMode::Truncate, RoundMode::TruncateToLower, RoundMode::Symmetric}) {
        for (const int bits : {8, 16, 32}) {
            for (const int channels : {1, 7, 16, 37}) {
                for (const bool outside : {false, true}) {
                    DecodedOp op(OpKind::Conv);
                    op.kernel().ofm.precision = {true, bits};
                    op.kernel().ofm.zero_point = bits == 8 ? -5 : 0;
                    op.kernel().output.per_channel_scale = true;
                    op.kernel().output.round = round;
                    op.kernel().output.clip_min = bits == 8 ? -100 : -30000;
                    op.kernel().output.clip_max = bits == 8 ? 120 : 30000;
                    const OutputPipeline pipeline(op, ctx);
                    OpWeights w;
                    std::vector<int32_t> narrow(static_cast<size_t>(channels));
                    std::vector<int64_t> wide(static_cast<size_t>(channels));
                    for (int c = 0; c < channels; ++c) {
                        w.bias.push_back(static_cast<int64_t>(rng() % 2000001) - 1000000);
                        w.scale.push_back(static_cast<uint32_t>(rng()));
                        w.shift.push_back(static_cast<uint8_t>(1 + rng() % 50));
                        narrow[static_cast<size_t>(c)] = static_cast<int32_t>(rng() >> (34 + rng() % 30)) *
                                                         (rng() & 1 ? 1 : -1);
                        wide[static_cast<size_t>(c)] = narrow[static_cast<size_t>(c)];
                    }
                    if (outside) {
                        const size_t c = rng() % static_cast<size_t>(channels);
                        if (rng() & 1) {
                            narrow[c] = INT32_MAX;
                            wide[c] = int64_t{1} << 40;
                        } else {
                            w.shift[c] = rng() & 1 ? 0 : 63;
                        }
                    }
                    tabulate_output_rounding(w);
                    std::vector<int64_t> from_narrow(static_cast<size_t>(channels)), from_wide(from_narrow.size());
                    pipeline.apply_channels(narrow.data(), channels, &w, from_narrow.data());
                    pipeline.apply_channels(wide.data(), channels, &w, from_wide.data());
                    for (int c = 0; c < channels; ++c) {
                        const size_t i = static_cast<size_t>(c);
                        ASSERT_EQ(from_narrow[i], pipeline.apply(narrow[i], c, &w)) << "channel " << c;
                        ASSERT_EQ(from_wide[i], pipeline.apply(wide[i], c, &w)) << "channel " << c;
                    }
                }
            }
        }
    }
}

// store_channels_as_bytes (the byte kernels of output_bytes.h and the brick layout) against
// apply_channels: 8-bit OFMs, signed and unsigned, with bricks back to back (NHWC) and apart
// (NHCWB16, the pixel's first channel inside a brick), runs longer than one staging buffer; it
// declines what it does not cover (a 16-bit OFM, TRUNCATE, a sum of 2^30 and more).
TEST(OutputStage, StoreChannelsAsBytesEqualsApplyChannels) {
    if (!fast_byte_scaling()) GTEST_SKIP() << "no hand-vectorised byte kernel on this CPU: the output stage goes by int64";
    PipelineContext rig;
    std::mt19937_64 rng(5);
    for (const RoundMode round : {RoundMode::DoubleSymmetric, RoundMode::Natural, RoundMode::DoubleAsymmetric}) {
        for (const bool is_signed : {true, false}) {
            for (const int channels : {1, 16, 37, 300}) {
                DecodedOp op(OpKind::Conv);
                op.kernel().ofm.precision = {is_signed, 8};
                op.kernel().ofm.zero_point = is_signed ? -5 : 7;
                op.kernel().output.per_channel_scale = true;
                op.kernel().output.round = round;
                op.kernel().output.clip_min = is_signed ? -100 : 3;
                op.kernel().output.clip_max = is_signed ? 120 : 250;
                const OutputPipeline pipeline(op, rig.ctx);
                OpWeights w;
                std::vector<int32_t> acc(static_cast<size_t>((channels + 15) / 16 * 16), 0);
                for (int c = 0; c < channels; ++c) {
                    w.bias.push_back(static_cast<int64_t>(rng() % 2000001) - 1000000);
                    w.scale.push_back(static_cast<uint32_t>(rng() >> 33));
                    w.shift.push_back(static_cast<int32_t>(30 + rng() % 30));
                    acc[static_cast<size_t>(c)] = static_cast<int32_t>(rng() >> (36 + rng() % 28)) * (rng() & 1 ? 1 : -1);
                }
                tabulate_output_rounding(w);
                std::vector<int64_t> values(static_cast<size_t>(channels));
                pipeline.apply_channels(acc.data(), channels, &w, values.data());
                for (const int first : {0, 5}) {
                    for (const int64_t brick_step : {int64_t{16}, int64_t{48}}) {
                        if (brick_step == 16 && first != 0) continue;
                        std::vector<uint8_t> bytes(static_cast<size_t>(channels + 32) * 3, 0xcd), expected = bytes;
                        ASSERT_TRUE(pipeline.store_channels_as_bytes(acc.data(), channels, w, first, bytes.data(),
                                                                     brick_step));
                        // Channel c (OFM channel first + c) at its brick's start plus its place in the brick.
                        for (int c = 0; c < channels; ++c) {
                            const int channel = first + c;
                            const int64_t at = (channel / 16 - first / 16) * brick_step + channel % 16 - first % 16;
                            expected[static_cast<size_t>(at)] = static_cast<uint8_t>(values[static_cast<size_t>(c)]);
                        }
                        ASSERT_EQ(bytes, expected) << channels << " channels from " << first << ", brick step " << brick_step;
                    }
                }
                acc[0] = (int32_t{1} << 30) + 1000000;  // a sum of 2^30 or more, whatever the bias
                std::vector<uint8_t> bytes(static_cast<size_t>(channels));
                EXPECT_FALSE(pipeline.store_channels_as_bytes(acc.data(), channels, w, 0, bytes.data(), 16));
            }
        }
    }
    DecodedOp op(OpKind::Conv);
    op.kernel().ofm.precision = {true, 16};
    op.kernel().output.per_channel_scale = true;
    OpWeights w;
    w.bias = {0};
    w.scale = {1};
    w.shift = {1};
    tabulate_output_rounding(w);
    std::vector<int32_t> acc(16, 0);
    std::vector<uint8_t> bytes(16);
    EXPECT_FALSE(OutputPipeline(op, rig.ctx).store_channels_as_bytes(acc.data(), 1, w, 0, bytes.data(), 16));
    op.kernel().ofm.precision = {true, 8};
    op.kernel().output.round = RoundMode::Truncate;
    EXPECT_FALSE(OutputPipeline(op, rig.ctx).store_channels_as_bytes(acc.data(), 1, w, 0, bytes.data(), 16));
}

}  // namespace
}  // namespace ethosu
