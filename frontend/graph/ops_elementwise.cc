// Binary elementwise operators with broadcasting: ADD, SUB, MUL, MINIMUM, MAXIMUM,
// SQUARED_DIFFERENCE, as TFLM's reference kernels compute them (add_common.cc, sub_common.cc,
// mul_common.cc, maximum_minimum.cc, squared_difference.cc; reference/add.h, sub.h, mul.h,
// integer_ops/add.h, integer_ops/mul.h).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "frontend/graph/cpu_operator.h"
#include "frontend/graph/kernel_helpers.h"
#include "frontend/graph/operator_options.h"

namespace ethosu {
namespace {

using reference::QuantizedMultiplier;

// Wrapping int32 arithmetic, as TFLite's int32 expressions behave on the x86 hosts its goldens
// come from (signed overflow there is undefined behaviour in C++, wrapping in practice).
int32_t wrap_add(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
int32_t wrap_sub(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b)); }
int32_t wrap_mul(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b)); }

enum class Binary { Add, Sub, Mul, Minimum, Maximum, SquaredDifference };

Binary binary_of(const OperatorView& v) {
    const std::string name = v.name();
    if (name == "ADD") return Binary::Add;
    if (name == "SUB") return Binary::Sub;
    if (name == "MUL") return Binary::Mul;
    if (name == "MINIMUM") return Binary::Minimum;
    if (name == "MAXIMUM") return Binary::Maximum;
    return Binary::SquaredDifference;
}

bool has_fused_activation(Binary op) { return op == Binary::Add || op == Binary::Sub || op == Binary::Mul; }

// ADD's, SUB's and MUL's fused activation, each from its own options table; the others have none.
FusedActivation activation_of(const OperatorView& v, Binary op) {
    int8_t code = 0;
    if (op == Binary::Add) code = builtin_options<tflite::AddOptionsT>(v).fused_activation_function;
    if (op == Binary::Sub) code = builtin_options<tflite::SubOptionsT>(v).fused_activation_function;
    if (op == Binary::Mul) code = builtin_options<tflite::MulOptionsT>(v).fused_activation_function;
    return fused_activation(v, code);
}

// The integer parameters TFLM derives in Prepare.
struct QuantizedBinary {
    int32_t input1_offset = 0, input2_offset = 0, output_offset = 0;
    int left_shift = 0;
    QuantizedMultiplier input1{}, input2{}, output{};
    int32_t activation_min = 0, activation_max = 0;
};

QuantizedBinary quantized_parameters(const OperatorView& v, Binary op) {
    const TensorInfo &a = v.input(0), &b = v.input(1), &out = v.output(0);
    QuantizedBinary q{.input1_offset = -static_cast<int32_t>(a.zero_point[0]),
                      .input2_offset = -static_cast<int32_t>(b.zero_point[0]),
                      .output_offset = static_cast<int32_t>(out.zero_point[0])};
    std::tie(q.activation_min, q.activation_max) = quantized_activation_range(v, out, activation_of(v, op));
    const bool wide = out.type == ElementType::Int16;
    switch (op) {
        case Binary::Add: {
            // add_common.cc: the ratios in double.
            q.left_shift = wide ? 15 : 20;
            const double twice_max = 2 * static_cast<double>(std::max(a.scale[0], b.scale[0]));
            q.input1 = multiplier_below_one(v, a.scale[0] / twice_max, "input 1");
            q.input2 = multiplier_below_one(v, b.scale[0] / twice_max, "input 2");
            q.output = multiplier_below_one(v, twice_max / ((1 << q.left_shift) * static_cast<double>(out.scale[0])), "output");
            break;
        }
        case Binary::Sub: {
            // sub_common.cc: twice the larger scale and the ratios formed in float, then widened.
            q.left_shift = wide ? 15 : 20;
            const float twice_max = 2 * std::max(a.scale[0], b.scale[0]);
            q.input1 = multiplier_below_one(v, static_cast<double>(a.scale[0] / twice_max), "input 1");
            q.input2 = multiplier_below_one(v, static_cast<double>(b.scale[0] / twice_max), "input 2");
            q.output = multiplier_below_one(
                v, static_cast<double>(twice_max / (static_cast<float>(1 << q.left_shift) * out.scale[0])), "output");
            break;
        }
        case Binary::Mul: {
            // mul_common.cc: input1 scale * input2 scale / output scale in double.
            q.output = reference::quantize_multiplier(static_cast<double>(a.scale[0]) * static_cast<double>(b.scale[0]) /
                                                      static_cast<double>(out.scale[0]));
            v.expect(q.output.shift <= 30, "the effective scale is over 2^30");
            break;
        }
        case Binary::SquaredDifference: {
            // squared_difference.cc: left shift 7 (int8) or 0 (int16); the output ratio is the
            // squared twice-max over 2^(2 * shift) * output scale, that product formed in float.
            q.left_shift = wide ? 0 : 7;
            q.activation_min = wide ? INT16_MIN : INT8_MIN;
            q.activation_max = wide ? INT16_MAX : INT8_MAX;
            const double twice_max = 2.0 * static_cast<double>(std::max(a.scale[0], b.scale[0]));
            q.input1 = multiplier_below_one(v, static_cast<double>(a.scale[0]) / twice_max, "input 1");
            q.input2 = multiplier_below_one(v, static_cast<double>(b.scale[0]) / twice_max, "input 2");
            q.output = reference::quantize_multiplier(
                twice_max * twice_max / static_cast<double>(static_cast<float>(1 << (q.left_shift * 2)) * out.scale[0]));
            v.expect(q.output.shift <= 30, "the effective scale is over 2^30");
            break;
        }
        default: break;
    }
    return q;
}

// One quantized element: TFLM's AddElementwise, SubElementwise, MulElementwise, SquaredDifference.
int32_t quantized_element(Binary op, const QuantizedBinary& q, int32_t x, int32_t y) {
    const int32_t a = q.input1_offset + x, b = q.input2_offset + y;
    int32_t raw = 0;
    if (op == Binary::Mul) {
        raw = static_cast<int32_t>(reference::multiply_by_quantized_multiplier(wrap_mul(a, b), q.output)) + q.output_offset;
    } else {
        const int32_t sa = multiply_below_one(wrap_mul(a, 1 << q.left_shift), q.input1);
        const int32_t sb = multiply_below_one(wrap_mul(b, 1 << q.left_shift), q.input2);
        if (op == Binary::SquaredDifference) {
            const int32_t d = wrap_sub(sa, sb);
            raw = static_cast<int32_t>(reference::multiply_by_quantized_multiplier(wrap_mul(d, d), q.output)) +
                  q.output_offset;
        } else {
            const int32_t sum = op == Binary::Add ? wrap_add(sa, sb) : wrap_sub(sa, sb);
            raw = multiply_below_one(sum, q.output) + q.output_offset;
        }
    }
    return std::clamp(raw, q.activation_min, q.activation_max);
}

// One unquantized element (float32, int32, int64) in TFLM's order of operations.
template <class T>
T plain_element(Binary op, T x, T y) {
    if constexpr (std::is_same_v<T, int32_t>) {
        switch (op) {
            case Binary::Add: return wrap_add(x, y);
            case Binary::Sub: return wrap_sub(x, y);
            case Binary::Mul: return wrap_mul(x, y);
            case Binary::SquaredDifference: return wrap_mul(wrap_sub(x, y), wrap_sub(x, y));
            default: break;
        }
    } else {
        switch (op) {
            case Binary::Add: return x + y;
            case Binary::Sub: return x - y;
            case Binary::Mul: return x * y;
            case Binary::SquaredDifference: return (x - y) * (x - y);
            default: break;
        }
    }
    return op == Binary::Minimum ? std::min(x, y) : std::max(x, y);
}

// The types TFLM's kernel of each operator takes (its Eval switch).
bool takes_type(Binary op, ElementType t) {
    using E = ElementType;
    switch (op) {
        case Binary::Add:
        case Binary::Sub:
        case Binary::Mul:
        case Binary::SquaredDifference: return t == E::Float32 || t == E::Int8 || t == E::Int16 || t == E::Int32;
        default: return t == E::Float32 || t == E::Int8 || t == E::Int16 || t == E::Int32 || t == E::Int64;
    }
}

bool quantized_path(Binary op, ElementType t) {
    return (t == ElementType::Int8 || t == ElementType::Int16) && op != Binary::Minimum && op != Binary::Maximum;
}

void check_binary(const OperatorView& v) {
    v.expect_arity(2, 1);
    const Binary op = binary_of(v);
    const TensorInfo &a = v.input(0), &b = v.input(1), &out = v.output(0);
    v.expect(a.type == b.type && a.type == out.type && takes_type(op, out.type),
             fmt::format("takes {} and {} to {}; implemented: the same type throughout, one TFLM's {} takes",
                         element_type_name(a.type), element_type_name(b.type), element_type_name(out.type), v.name()));
    // TFLM's ADD, SUB, MUL and SQUARED_DIFFERENCE broadcast in 4-D, MINIMUM and MAXIMUM in 5-D.
    const size_t max_rank = op == Binary::Minimum || op == Binary::Maximum ? 5 : 4;
    v.expect(broadcasts_to(a.shape, b.shape, out.shape) && (a.shape == b.shape || out.shape.size() <= max_rank),
             fmt::format("shapes [{}] and [{}] do not broadcast to the output's [{}] (TFLM broadcasts up to {}-D)",
                         fmt::join(a.shape, ","), fmt::join(b.shape, ","), fmt::join(out.shape, ","), max_rank));
    if (has_fused_activation(op)) activation_of(v, op);
    if (!quantized_path(op, out.type)) return;
    for (const TensorInfo* t : {&a, &b, &out}) v.expect_quantized(*t);
    // TFLM's int16 MUL and SQUARED_DIFFERENCE take symmetric quantization only.
    if (out.type == ElementType::Int16 && (op == Binary::Mul || op == Binary::SquaredDifference))
        v.expect(a.zero_point[0] == 0 && b.zero_point[0] == 0 && out.zero_point[0] == 0,
                 "int16 needs zero points of 0, as TFLM requires");
    quantized_parameters(v, op);
}

void run_binary(const OperatorView& v, HostTensors& tensors) {
    const Binary op = binary_of(v);
    const TensorInfo &a = v.input(0), &b = v.input(1), &out = v.output(0);
    const auto& a_bytes = tensors.read(v.op.inputs[0]);
    const auto& b_bytes = tensors.read(v.op.inputs[1]);
    auto& out_bytes = tensors.write(v.op.outputs[0]);
    const auto apply = [&]<class T>(T, auto&& element) {
        const auto x = typed<T>(a_bytes), y = typed<T>(b_bytes);
        const auto z = typed<T>(out_bytes);
        for_each_broadcast(a.shape, b.shape, out.shape, [&](size_t i, size_t ia, size_t ib) { z[i] = element(x[ia], y[ib]); });
    };
    if (quantized_path(op, out.type)) {
        const QuantizedBinary q = quantized_parameters(v, op);
        const auto element = [&](auto x, auto y) {
            return static_cast<decltype(x)>(quantized_element(op, q, x, y));
        };
        if (out.type == ElementType::Int8) apply(int8_t{}, element);
        else apply(int16_t{}, element);
        return;
    }
    const auto clamp_to = [&](auto lo, auto hi) {
        return [op, lo, hi](auto x, auto y) {
            // TFLM's ActivationFunctionWithMinMax: min(max(x, lo), hi).
            return std::min(std::max(plain_element(op, x, y), decltype(x)(lo)), decltype(x)(hi));
        };
    };
    // Unquantized: ADD, SUB and MUL clamp to their fused activation's range (TFLM's int32 ADD
    // to none), the others to nothing.
    const auto clamped = [&]<class T>(T) {
        const auto [lo, hi] = has_fused_activation(op) && !(op == Binary::Add && out.type == ElementType::Int32)
                                  ? activation_range<T>(activation_of(v, op))
                                  : std::pair{std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()};
        apply(T{}, clamp_to(lo, hi));
    };
    switch (out.type) {
        case ElementType::Float32: clamped(float{}); break;
        case ElementType::Int32: clamped(int32_t{}); break;
        case ElementType::Int8: clamped(int8_t{}); break;
        case ElementType::Int16: clamped(int16_t{}); break;
        default: clamped(int64_t{}); break;
    }
}

}  // namespace

std::span<const CpuKernel> elementwise_kernels() {
    static constexpr CpuKernel kernels[] = {
        {"ADD", check_binary, run_binary},
        {"SUB", check_binary, run_binary},
        {"MUL", check_binary, run_binary},
        {"MINIMUM", check_binary, run_binary},
        {"MAXIMUM", check_binary, run_binary},
        {"SQUARED_DIFFERENCE", check_binary, run_binary},
    };
    return kernels;
}

}  // namespace ethosu
