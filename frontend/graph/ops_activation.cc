// Activations: RELU, RELU6, LEAKY_RELU, PRELU, LOGISTIC, TANH, HARD_SWISH, as TFLM's kernels
// (activations_common.cc, activations.h, leaky_relu_common.cc, prelu_common.cc, logistic_common.cc,
// tanh.cc, hard_swish_common.cc; reference/prelu.h, reference/leaky_relu.h, logistic.h, tanh.h, hard_swish.h,
// integer_ops/logistic.h, integer_ops/tanh.h). TFLM has no RELU_N1_TO_1 kernel.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "frontend/graph/cpu_operator.h"
#include "frontend/graph/kernel_helpers.h"
#include "frontend/graph/operator_options.h"

namespace ethosu {
namespace {

using reference::QuantizedMultiplier;

// TFLite's sigmoid_table_uint16 (kernels/internal/common.h): sigmoid(i / 24) in Q0.16 for
// i = 0..255, tuned for the linear interpolation its int16 LOGISTIC and TANH do between entries.
// The table is the definition of those kernels' results, so it is restated here value for value.
constexpr uint16_t kSigmoidTable[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535};

void expect_unary(const OperatorView& v, std::initializer_list<ElementType> types) {
    v.expect_arity(1, 1);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    v.expect_same_shape(in, out);
    std::string names;
    for (const ElementType t : types) names += fmt::format("{}{}", names.empty() ? "" : ", ", element_type_name(t));
    v.expect(in.type == out.type && std::ranges::find(types, in.type) != types.end(),
             fmt::format("takes {} to {}; TFLM's {} takes {}, the same type in and out", element_type_name(in.type),
                         element_type_name(out.type), v.name(), names));
    if (in.type != ElementType::Float32) {
        v.expect_quantized(in);
        v.expect_quantized(out);
    }
}

void expect_symmetric_int16(const OperatorView& v) {
    if (v.input(0).type == ElementType::Int16)
        v.expect(v.input(0).zero_point[0] == 0 && v.output(0).zero_point[0] == 0,
                 "int16 needs zero points of 0, as TFLM requires");
}

// Applies f to each element of the operator's one input, of type T, into its output.
template <class T, class F>
void map_elements(const OperatorView& v, HostTensors& tensors, F&& f) {
    const auto in = typed<T>(tensors.read(v.op.inputs[0]));
    const auto out = typed<T>(tensors.write(v.op.outputs[0]));
    for (size_t i = 0; i < in.size(); ++i) out[i] = f(in[i]);
}

// Calls f with a value of the quantized type t (int8 or int16).
template <class F>
void with_int8_or_int16(ElementType t, F&& f) {
    if (t == ElementType::Int16) f(int16_t{});
    else f(int8_t{});
}

// ---- RELU, RELU6 --------------------------------------------------------------------------

// CalculateReluOpData: the input rescaled to the output's scale, clamped below at the output's
// zero point.
QuantizedMultiplier relu_multiplier(const OperatorView& v) {
    const auto m = reference::quantize_multiplier(static_cast<double>(v.input(0).scale[0] / v.output(0).scale[0]));
    v.expect(m.shift <= 30, "the input scale is over 2^30 times the output scale");
    return m;
}

// Relu6Prepare: FloatToQuantizedType(6, input scale, input zero point), clamped to the type.
template <class T>
int32_t quantized_six(const TensorInfo& in) {
    const int32_t six = static_cast<int32_t>(std::round(6.0f / in.scale[0]) + static_cast<double>(in.zero_point[0]));
    return std::clamp<int32_t>(six, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
}

void check_relu(const OperatorView& v) {
    expect_unary(v, {ElementType::Float32, ElementType::Int8, ElementType::Int16});
    expect_symmetric_int16(v);
    if (v.input(0).type != ElementType::Float32 && v.name() == "RELU") relu_multiplier(v);
}

void run_relu(const OperatorView& v, HostTensors& tensors) {
    const bool six = v.name() == "RELU6";
    const TensorInfo &in = v.input(0), &out = v.output(0);
    if (in.type == ElementType::Float32) {
        // ReluFloat / Relu6Float: comparisons, so NaN and -0 pass through.
        map_elements<float>(v, tensors, [six](float x) { return six ? (x > 6.0f ? 6.0f : x < 0.0f ? 0.0f : x) : (x < 0.0f ? 0.0f : x); });
        return;
    }
    with_int8_or_int16(in.type, [&]<class T>(T) {
        if (six) {
            // Relu6Quantized clamps the raw values between the input's 0 and 6; no rescaling.
            const auto lower = static_cast<T>(in.zero_point[0]), upper = static_cast<T>(quantized_six<T>(in));
            map_elements<T>(v, tensors, [=](T x) { return x > upper ? upper : x < lower ? lower : x; });
            return;
        }
        const QuantizedMultiplier m = relu_multiplier(v);
        const auto in_zp = static_cast<int32_t>(in.zero_point[0]), out_zp = static_cast<int32_t>(out.zero_point[0]);
        const int32_t lo = std::max<int32_t>(std::numeric_limits<T>::min(), out_zp), hi = std::numeric_limits<T>::max();
        map_elements<T>(v, tensors, [&](T x) {
            const auto y = out_zp + reference::multiply_by_quantized_multiplier(x - in_zp, m);
            return static_cast<T>(std::clamp<int64_t>(y, lo, hi));
        });
    });
}

// ---- LEAKY_RELU ---------------------------------------------------------------------------

struct LeakyReluMultipliers {
    QuantizedMultiplier identity, alpha;
};

// CalculateOpDataLeakyRelu: input scale * alpha / output scale and input / output scale, each
// formed in float. A negative alpha's multiplier is applied by magnitude and the product negated.
LeakyReluMultipliers leaky_relu_multipliers(const OperatorView& v) {
    const float in_scale = v.input(0).scale[0], out_scale = v.output(0).scale[0];
    const float alpha = builtin_options<tflite::LeakyReluOptionsT>(v).alpha;
    const LeakyReluMultipliers m{reference::quantize_multiplier(static_cast<double>(in_scale / out_scale)),
                                 reference::quantize_multiplier(static_cast<double>(in_scale * alpha / out_scale))};
    v.expect(m.identity.shift <= 30 && m.alpha.shift <= 30, "an effective scale is over 2^30");
    return m;
}

void check_leaky_relu(const OperatorView& v) {
    expect_unary(v, {ElementType::Float32, ElementType::Int8, ElementType::Int16});
    const float alpha = builtin_options<tflite::LeakyReluOptionsT>(v).alpha;
    v.expect(std::isfinite(alpha), fmt::format("alpha {} is not finite", alpha));
    if (v.input(0).type != ElementType::Float32) leaky_relu_multipliers(v);
}

void run_leaky_relu(const OperatorView& v, HostTensors& tensors) {
    const TensorInfo &in = v.input(0), &out = v.output(0);
    if (in.type == ElementType::Float32) {
        const float alpha = builtin_options<tflite::LeakyReluOptionsT>(v).alpha;
        map_elements<float>(v, tensors, [alpha](float x) { return x > 0 ? x : x * alpha; });
        return;
    }
    const LeakyReluMultipliers m = leaky_relu_multipliers(v);
    const bool negative_alpha = m.alpha.multiplier < 0;
    const QuantizedMultiplier alpha{negative_alpha ? -m.alpha.multiplier : m.alpha.multiplier, m.alpha.shift};
    const auto in_zp = static_cast<int32_t>(in.zero_point[0]), out_zp = static_cast<int32_t>(out.zero_point[0]);
    with_int8_or_int16(in.type, [&]<class T>(T) {
        map_elements<T>(v, tensors, [&](T x) {
            const int32_t d = x - in_zp;
            int64_t y = out_zp;
            if (d >= 0) {
                y += reference::multiply_by_quantized_multiplier(d, m.identity);
            } else {
                const int64_t scaled = reference::multiply_by_quantized_multiplier(d, alpha);
                y += negative_alpha ? -scaled : scaled;
            }
            return static_cast<T>(std::clamp<int64_t>(y, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
        });
    });
}

// ---- PRELU ----------------------------------------------------------------------------------

// prelu_common.cc: alpha broadcast against the input in 4-D; integer multipliers for input /
// output scale and input * alpha / output scale, in double. int16 inputs take int8 alphas.
struct PreluMultipliers {
    QuantizedMultiplier identity, alpha;
};

PreluMultipliers prelu_multipliers(const OperatorView& v) {
    const double in = v.input(0).scale[0], alpha = v.input(1).scale[0], out = v.output(0).scale[0];
    const PreluMultipliers m{reference::quantize_multiplier(in / out), reference::quantize_multiplier(in * alpha / out)};
    v.expect(m.identity.shift <= 30 && m.alpha.shift <= 30, "an effective scale is over 2^30");
    return m;
}

void check_prelu(const OperatorView& v) {
    v.expect_arity(2, 1);
    const TensorInfo &in = v.input(0), &alpha = v.input(1), &out = v.output(0);
    const bool float_prelu = in.type == ElementType::Float32 && alpha.type == ElementType::Float32;
    const bool integer_prelu = (in.type == ElementType::Int8 || in.type == ElementType::Int16) && alpha.type == ElementType::Int8;
    v.expect(in.type == out.type && (float_prelu || integer_prelu), fmt::format("takes {} with {} alphas to {}; TFLM's PRELU takes float32 with float32 alphas, "
                                   "int8 or int16 with int8 alphas, the same type out",
                                   element_type_name(in.type), element_type_name(alpha.type), element_type_name(out.type)));
    v.expect(broadcasts_to(in.shape, alpha.shape, out.shape) && out.shape.size() <= 4 && in.shape == out.shape,
             fmt::format("alphas [{}] do not broadcast to the input's [{}] in 4-D", fmt::join(alpha.shape, ","),
                         fmt::join(in.shape, ",")));
    if (in.type == ElementType::Float32) return;
    for (const TensorInfo* t : {&in, &alpha, &out}) v.expect_quantized(*t);
    prelu_multipliers(v);
}

void run_prelu(const OperatorView& v, HostTensors& tensors) {
    const TensorInfo &in = v.input(0), &alpha = v.input(1), &out = v.output(0);
    const auto& x_bytes = tensors.read(v.op.inputs[0]);
    const auto& a_bytes = tensors.read(v.op.inputs[1]);
    auto& out_bytes = tensors.write(v.op.outputs[0]);
    if (in.type == ElementType::Float32) {
        const auto x = typed<float>(x_bytes), a = typed<float>(a_bytes);
        const auto y = typed<float>(out_bytes);
        for_each_broadcast(in.shape, alpha.shape, out.shape,
                           [&](size_t i, size_t ix, size_t ia) { y[i] = x[ix] >= 0.0f ? x[ix] : x[ix] * a[ia]; });
        return;
    }
    const PreluMultipliers m = prelu_multipliers(v);
    const auto in_offset = -static_cast<int32_t>(in.zero_point[0]), alpha_offset = -static_cast<int32_t>(alpha.zero_point[0]);
    const auto out_zp = static_cast<int32_t>(out.zero_point[0]);
    const auto a = typed<int8_t>(a_bytes);
    with_int8_or_int16(in.type, [&]<class T>(T) {
        const auto x = typed<T>(x_bytes);
        const auto y = typed<T>(out_bytes);
        for_each_broadcast(in.shape, alpha.shape, out.shape, [&](size_t i, size_t ix, size_t ia) {
            const int32_t value = in_offset + x[ix];
            const int64_t scaled = value >= 0 ? reference::multiply_by_quantized_multiplier(value, m.identity)
                                              : reference::multiply_by_quantized_multiplier(value * (alpha_offset + a[ia]), m.alpha);
            y[i] = static_cast<T>(std::clamp<int64_t>(scaled + out_zp, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
        });
    });
}

// ---- LOGISTIC, TANH -----------------------------------------------------------------------

// int8: the input rescaled into gemmlowp's Q4.27 and fed to its logistic or tanh, inputs
// beyond the radius saturating (logistic_common.cc, tanh.cc).
struct Int8Curve {
    QuantizedMultiplier input;
    int32_t radius = 0;
};
constexpr int kInt8CurveIntegerBits = 4;

Int8Curve int8_curve(const OperatorView& v) {
    const double real = static_cast<double>(v.input(0).scale[0]) * static_cast<double>(1 << (31 - kInt8CurveIntegerBits));
    const QuantizedMultiplier m = reference::quantize_multiplier(real);
    v.expect(m.shift >= 0 && m.shift <= 30,
             fmt::format("input scale {} is outside what TFLM's int8 {} takes", v.input(0).scale[0], v.name()));
    return {m, reference::input_radius(kInt8CurveIntegerBits, m.shift)};
}

// int16: the input brought to the table's scale, 3 * 4096 steps per unit, as a multiplier and a
// right shift (logistic_common.cc, tanh.cc); a power-of-two input scale uses 3 << shift.
struct Int16Curve {
    int32_t multiplier = 0;
    int right_shift = 0;
};

// CheckedLog2: log2 of x rounded, and whether x is within 0.1% of that power of two (float math).
bool checked_log2(float x, int* log2) {
    const float x_log2 = std::log(x) * (1.0f / std::log(2.0f));
    const float rounded = std::round(x_log2);
    *log2 = static_cast<int>(rounded);
    return std::abs(x_log2 - rounded) < 1e-3f;
}

Int16Curve int16_curve(const OperatorView& v, bool tanh) {
    constexpr int kInputIntegerBits = 3;
    int scale_log2 = 0;
    const bool pot = checked_log2(v.input(0).scale[0], &scale_log2);
    const int shift = (15 - kInputIntegerBits) + scale_log2;
    // LOGISTIC takes the power-of-two path at a shift of 0 only, TANH at 0 or 1.
    if (pot && (shift == 0 || (tanh && shift == 1))) return {3 << shift, 0};
    double multiplier = static_cast<double>(v.input(0).scale[0]) * 4096.0 * 3.0;
    int right_shift = 0;
    while (multiplier <= 32767.0 / 2.0 && right_shift <= 30) {
        ++right_shift;
        multiplier *= 2.0;
    }
    v.expect(multiplier <= 32767.0, fmt::format("input scale {} is over what TFLM's int16 {} takes", v.input(0).scale[0], v.name()));
    return {static_cast<int32_t>(multiplier), right_shift};
}

void check_curve(const OperatorView& v) {
    expect_unary(v, {ElementType::Float32, ElementType::Int8, ElementType::Int16});
    const TensorInfo &in = v.input(0), &out = v.output(0);
    const bool tanh = v.name() == "TANH";
    if (in.type == ElementType::Int8) {
        // TFLM's int8 LOGISTIC writes from -128 and requires that zero point.
        if (!tanh) v.expect(out.zero_point[0] == -128, "the int8 output's zero point must be -128, as TFLM requires");
        int8_curve(v);
    } else if (in.type == ElementType::Int16) {
        expect_symmetric_int16(v);
        int log2 = 0;
        v.expect(checked_log2(out.scale[0], &log2) && log2 == -15, "the int16 output's scale must be 2^-15, as TFLM requires");
        int16_curve(v, tanh);
    }
}

int16_t int16_logistic(int16_t x, Int16Curve c) {
    const int32_t round = c.right_shift > 0 ? 1 << (c.right_shift - 1) : 0;
    const int32_t value = (x * c.multiplier + round) >> c.right_shift;
    const auto magnitude = static_cast<uint32_t>(std::abs(value));
    const uint32_t step = magnitude >> 9;  // 1/4 of the scale and 2^7 of the conversion
    uint32_t result = 0x7FFFu << 10;
    if (step < 255) {
        const uint32_t a = kSigmoidTable[step], b = kSigmoidTable[step + 1];
        result = (a << 9) + (magnitude & 0x1FF) * (b - a);
    }
    result = value >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1;
    return static_cast<int16_t>(result >> 10);
}

// tanh(x) = 2 * sigmoid(2x) - 1 from the same table.
int16_t int16_tanh(int16_t x, Int16Curve c) {
    const int32_t round = c.right_shift > 0 ? 1 << (c.right_shift - 1) : 0;
    const int32_t value = (x * c.multiplier + round) >> c.right_shift;
    const auto magnitude = static_cast<uint32_t>(std::abs(value));
    const uint32_t step = magnitude >> 8;
    auto result = static_cast<int32_t>(0xFFFFu << 8);
    if (step < 255) {
        const uint32_t a = kSigmoidTable[step], b = kSigmoidTable[step + 1];
        result = static_cast<int32_t>((a << 8) + (magnitude & 0xFF) * (b - a));
    }
    result = value >= 0 ? result - (1 << 23) + (1 << 7) : -result + (1 << 23) + (1 << 7) - 1;
    return static_cast<int16_t>(result >> 8);
}

void run_curve(const OperatorView& v, HostTensors& tensors) {
    const TensorInfo& in = v.input(0);
    const bool tanh = v.name() == "TANH";
    if (in.type == ElementType::Float32) {
        // reference_ops::Logistic: 1 above 16.619047164916992188, exp(x) below -9.
        map_elements<float>(v, tensors, [tanh](float x) {
            if (tanh) return std::tanh(x);
            return x > 16.619047164916992188f ? 1.0f : x < -9.0f ? std::exp(x) : 1.0f / (1.0f + std::exp(-x));
        });
    } else if (in.type == ElementType::Int16) {
        const Int16Curve c = int16_curve(v, tanh);
        map_elements<int16_t>(v, tensors, [&](int16_t x) { return tanh ? int16_tanh(x, c) : int16_logistic(x, c); });
    } else {
        const Int8Curve c = int8_curve(v);
        const auto zp = static_cast<int32_t>(in.zero_point[0]);
        map_elements<int8_t>(v, tensors, [&](int8_t x) -> int8_t {
            const int32_t d = x - zp;
            if (d <= -c.radius) return INT8_MIN;
            if (d >= c.radius) return INT8_MAX;
            const auto q4 = static_cast<int32_t>(reference::multiply_by_quantized_multiplier(d, c.input));
            // LOGISTIC: Q0.31 to 1/256 steps from -128; TANH: to 1/128 steps around 0.
            const int32_t y = tanh ? fixed_point::rounding_divide_by_pot(fixed_point::tanh(q4, kInt8CurveIntegerBits), 24)
                                   : fixed_point::rounding_divide_by_pot(fixed_point::logistic(q4, kInt8CurveIntegerBits), 23) - 128;
            return static_cast<int8_t>(std::clamp<int32_t>(y, INT8_MIN, INT8_MAX));
        });
    }
}

// ---- HARD_SWISH ---------------------------------------------------------------------------

// HardSwishPrepare: the input on a 2^7 finer scale; its multipliers to the output scale and to
// the "relu-ish" scale (3 at 32768), each narrowed to 16 bits (DownScaleInt32ToInt16Multiplier).
struct HardSwishParameters {
    int16_t output_multiplier = 0, reluish_multiplier = 0;
    int output_exponent = 0, reluish_exponent = 0;
};

int16_t to_int16_multiplier(int32_t m) {
    constexpr int32_t kRounding = 1 << 15;
    if (m >= std::numeric_limits<int32_t>::max() - kRounding) return INT16_MAX;
    return static_cast<int16_t>((m + kRounding) >> 16);
}

HardSwishParameters hard_swish_parameters(const OperatorView& v) {
    const float hires_input_scale = (1.0f / 128.0f) * v.input(0).scale[0];
    const float reluish_scale = 3.0f / 32768.0f;
    const auto out = reference::quantize_multiplier(static_cast<double>(hires_input_scale / v.output(0).scale[0]));
    const auto reluish = reference::quantize_multiplier(static_cast<double>(hires_input_scale / reluish_scale));
    v.expect(out.shift <= 0, "the input scale is over 128 times the output scale, which TFLM's HARD_SWISH refuses");
    // Its 16-bit rounding shift is defined up to 15 places.
    v.expect(out.shift >= -15, "the output scale is over 2^15 times the input scale / 128, beyond TFLM's 16-bit HARD_SWISH");
    v.expect(reluish.shift <= 15 && reluish.shift >= -15, "the input scale is outside what TFLM's HARD_SWISH takes");
    return {to_int16_multiplier(out.multiplier), to_int16_multiplier(reluish.multiplier), out.shift, reluish.shift};
}

// gemmlowp's int16 SaturatingRoundingDoublingHighMul and RoundingDivideByPOT.
int16_t rounding_high_mul16(int16_t a, int16_t b) {
    if (a == b && a == INT16_MIN) return INT16_MAX;
    const int32_t ab = int32_t{a} * b;
    return static_cast<int16_t>((ab + (ab >= 0 ? (1 << 14) : 1 - (1 << 14))) / (1 << 15));
}
int16_t rounding_shift16(int16_t x, int exponent) {
    const int32_t mask = (1 << exponent) - 1, remainder = x & mask, threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return static_cast<int16_t>((x >> exponent) + (remainder > threshold ? 1 : 0));
}
int16_t saturating_left_shift16(int16_t x, int amount) {
    return static_cast<int16_t>(std::clamp<int64_t>(int64_t{x} * (int64_t{1} << amount), INT16_MIN, INT16_MAX));
}

// reference_ops::HardSwish (quantized): x * relu6(x + 3) / 6 in 16-bit fixed point.
int8_t hard_swish_int8(int8_t x, int32_t in_zp, int32_t out_zp, const HardSwishParameters& p) {
    const auto input = static_cast<int16_t>(x - in_zp);
    const auto hires = static_cast<int16_t>(input * (1 << 7));
    const int16_t preshift_output = rounding_high_mul16(hires, p.output_multiplier);
    int16_t reluish = hires;
    if (p.reluish_exponent > 0) reluish = saturating_left_shift16(reluish, p.reluish_exponent - 1);
    reluish = rounding_high_mul16(reluish, p.reluish_multiplier);
    if (p.reluish_exponent > 0) reluish = saturating_left_shift16(reluish, 1);
    if (p.reluish_exponent < 0) reluish = rounding_shift16(reluish, -p.reluish_exponent);
    reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);  // [-1, 1] to [0, 1]
    // SaturatingDoublingHighMul: truncating, not rounding, to cancel the roundings above.
    const auto product = static_cast<int16_t>(
        reluish == INT16_MIN && preshift_output == INT16_MIN ? INT16_MAX : (int32_t{reluish} * preshift_output) / (1 << 15));
    auto out = static_cast<int16_t>(rounding_shift16(product, -p.output_exponent) + out_zp);
    return static_cast<int8_t>(std::clamp<int16_t>(out, INT8_MIN, INT8_MAX));
}

void check_hard_swish(const OperatorView& v) {
    expect_unary(v, {ElementType::Float32, ElementType::Int8});
    if (v.input(0).type == ElementType::Int8) hard_swish_parameters(v);
}

void run_hard_swish(const OperatorView& v, HostTensors& tensors) {
    const TensorInfo &in = v.input(0), &out = v.output(0);
    if (in.type == ElementType::Float32) {
        map_elements<float>(v, tensors, [](float x) { return x * std::min(6.0f, std::max(0.0f, x + 3)) / 6; });
        return;
    }
    const HardSwishParameters p = hard_swish_parameters(v);
    const auto in_zp = static_cast<int32_t>(in.zero_point[0]), out_zp = static_cast<int32_t>(out.zero_point[0]);
    map_elements<int8_t>(v, tensors, [&](int8_t x) { return hard_swish_int8(x, in_zp, out_zp, p); });
}

}  // namespace

std::span<const CpuKernel> activation_kernels() {
    static constexpr CpuKernel kernels[] = {
        {"RELU", check_relu, run_relu},
        {"RELU6", check_relu, run_relu},
        {"LEAKY_RELU", check_leaky_relu, run_leaky_relu},
        {"PRELU", check_prelu, run_prelu},
        {"LOGISTIC", check_curve, run_curve},
        {"TANH", check_curve, run_curve},
        {"HARD_SWISH", check_hard_swish, run_hard_swish},
    };
    return kernels;
}

}  // namespace ethosu
