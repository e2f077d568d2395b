// Reductions over axes: MEAN, SUM, ARG_MAX, ARG_MIN, as TFLM's kernels (reduce_common.cc,
// arg_min_max.cc; reference/reduce.h, arg_min_max.h).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

#include "frontend/graph/cpu_operator.h"
#include "frontend/graph/kernel_helpers.h"
#include "frontend/graph/operator_options.h"

namespace ethosu {
namespace {

using Shape = std::vector<int64_t>;

// The reduced axes (TFLite's ResolveAxis: negative ones counted from the end, duplicates once).
std::vector<bool> reduced_axes(const OperatorView& v) {
    const Shape& in = v.input(0).shape;
    std::vector<bool> reduced(in.size(), false);
    for (const int64_t a : constant_integers(v, 1)) reduced[static_cast<size_t>(normalized_axis(v, a, in.size()))] = true;
    return reduced;
}

// For each input element in row-major order, the index of the output element it reduces into.
std::vector<size_t> output_index_of_each_input(const Shape& in, const std::vector<bool>& reduced) {
    size_t total = 1;
    for (const int64_t d : in) total *= static_cast<size_t>(d);
    std::vector<size_t> stride(in.size(), 0);
    size_t step = 1;
    for (size_t d = in.size(); d-- > 0;) {
        if (reduced[d]) continue;
        stride[d] = step;
        step *= static_cast<size_t>(in[d]);
    }
    std::vector<size_t> index(total);
    std::vector<int64_t> at(in.size(), 0);
    size_t o = 0;
    for (size_t i = 0; i < total; ++i) {
        index[i] = o;
        for (size_t d = in.size(); d-- > 0;) {
            o += stride[d];
            if (++at[d] < in[d]) break;
            o -= stride[d] * static_cast<size_t>(in[d]);
            at[d] = 0;
        }
    }
    return index;
}

// ---- MEAN, SUM ----------------------------------------------------------------------------

// MEAN's and SUM's integer rescaling (reduce_common.cc PrepareMeanOrSumHelper, reference
// QuantizedMeanOrSum): input scale / output scale; MEAN folds the division by the count into the
// multiplier, shifted up by floor(log2(count)) (at most 32, at most 31 + the shift) first.
reference::QuantizedMultiplier reduce_multiplier(const OperatorView& v, uint64_t count) {
    reference::QuantizedMultiplier m =
        reference::quantize_multiplier(static_cast<double>(v.input(0).scale[0]) / static_cast<double>(v.output(0).scale[0]));
    if (v.name() == "MEAN" && count > 0) {
        const int shift = std::min({63 - std::countl_zero(count), 32, 31 + m.shift});
        m.multiplier = static_cast<int32_t>((static_cast<int64_t>(m.multiplier) << shift) / static_cast<int64_t>(count));
        m.shift -= shift;
    }
    v.expect(m.shift >= -31 && m.shift <= 30,
             fmt::format("the effective scale 2^{} is outside what TFLite's integer {} takes", m.shift, v.name()));
    return m;
}

uint64_t reduced_count(const OperatorView& v) {
    const auto reduced = reduced_axes(v);
    uint64_t n = 1;
    for (size_t d = 0; d < reduced.size(); ++d)
        if (reduced[d]) n *= static_cast<uint64_t>(v.input(0).shape[d]);
    return n;
}

void check_reduce(const OperatorView& v) {
    v.expect_arity(2, 1);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    v.expect(in.type == out.type && (in.type == ElementType::Float32 || in.type == ElementType::Int8 || in.type == ElementType::Int16),
             fmt::format("takes {} to {}; TFLM's {} takes float32, int8 or int16, the same type in and out",
                         element_type_name(in.type), element_type_name(out.type), v.name()));
    v.expect(v.input(1).type == ElementType::Int32, "its axes must be int32, as TFLM requires");
    const auto reduced = reduced_axes(v);
    const bool keep_dims = builtin_options<tflite::ReducerOptionsT>(v).keep_dims;
    Shape want;
    for (size_t d = 0; d < in.shape.size(); ++d) {
        if (!reduced[d]) want.push_back(in.shape[d]);
        else if (keep_dims) want.push_back(1);
    }
    v.expect(out.shape == want || (want.empty() && element_count(out) == 1),
             fmt::format("'{}' is [{}]; reducing [{}] gives [{}]", out.name, fmt::join(out.shape, ","),
                         fmt::join(in.shape, ","), fmt::join(want, ",")));
    if (in.type == ElementType::Float32) return;
    v.expect_quantized(in);
    v.expect_quantized(out);
    reduce_multiplier(v, reduced_count(v));
}

void run_reduce(const OperatorView& v, HostTensors& tensors) {
    const TensorInfo &in = v.input(0), &out = v.output(0);
    const auto index = output_index_of_each_input(in.shape, reduced_axes(v));
    const uint64_t count = reduced_count(v);
    const bool mean = v.name() == "MEAN";
    auto& out_bytes = tensors.write(v.op.outputs[0]);
    if (in.type == ElementType::Float32) {
        // Float sums in input order, then (MEAN) divided by the count as a float.
        const auto x = typed<float>(tensors.read(v.op.inputs[0]));
        const auto y = typed<float>(out_bytes);
        for (size_t i = 0; i < x.size(); ++i) y[index[i]] += x[i];
        if (mean && count > 0)
            for (float& s : y) s /= static_cast<float>(count);
        return;
    }
    const reference::QuantizedMultiplier m = reduce_multiplier(v, count);
    const auto in_zp = static_cast<int64_t>(in.zero_point[0]);
    const auto out_zp = static_cast<int32_t>(out.zero_point[0]);
    with_integer_type(in.type, [&]<class T>(T) {
        const auto x = typed<T>(tensors.read(v.op.inputs[0]));
        const auto y = typed<T>(out_bytes);
        // int32 sums of the raw values, wrapping as TFLite's do; the zero points taken off after.
        std::vector<uint32_t> sums(y.size(), 0);
        for (size_t i = 0; i < x.size(); ++i) sums[index[i]] += static_cast<uint32_t>(static_cast<int32_t>(x[i]));
        if (count == 0) return;
        for (size_t o = 0; o < y.size(); ++o) {
            const auto shifted = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(static_cast<int32_t>(sums[o])) -
                                                                            in_zp * static_cast<int64_t>(count)));
            const int64_t value = reference::multiply_by_quantized_multiplier(shifted, m) + out_zp;
            y[o] = static_cast<T>(std::clamp<int64_t>(value, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
        }
    });
}

// ---- ARG_MAX, ARG_MIN ---------------------------------------------------------------------

int arg_axis(const OperatorView& v) {
    const auto axis = constant_integers(v, 1);
    v.expect(axis.size() == 1, "its axis must be one value");
    return normalized_axis(v, axis[0], v.input(0).shape.size());
}

void check_arg_min_max(const OperatorView& v) {
    v.expect_arity(2, 1);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    // arg_min_max.cc: float32 or int8 in, an int32 axis, int32 out.
    v.expect(in.type == ElementType::Float32 || in.type == ElementType::Int8,
             fmt::format("input is {}; TFLM's {} takes float32 or int8", element_type_name(in.type), v.name()));
    v.expect(v.input(1).type == ElementType::Int32 && out.type == ElementType::Int32,
             "its axis and output must be int32, as TFLM requires");
    const int axis = arg_axis(v);
    // The first element along the axis is the starting extreme: an empty axis has none.
    v.expect(in.shape[static_cast<size_t>(axis)] > 0, fmt::format("axis {} of '{}' is empty", axis, in.name));
    Shape want = in.shape;
    want.erase(want.begin() + axis);
    v.expect(out.shape == want, fmt::format("'{}' is [{}]; [{}] without the axis is [{}]", out.name, fmt::join(out.shape, ","),
                                            fmt::join(in.shape, ","), fmt::join(want, ",")));
}

void run_arg_min_max(const OperatorView& v, HostTensors& tensors) {
    const Shape& shape = v.input(0).shape;
    const auto axis = static_cast<size_t>(arg_axis(v));
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(shape[d]);
    for (size_t d = axis + 1; d < shape.size(); ++d) inner *= static_cast<size_t>(shape[d]);
    const auto size = static_cast<size_t>(shape[axis]);
    const bool max = v.name() == "ARG_MAX";
    const auto out = typed<int32_t>(tensors.write(v.op.outputs[0]));
    const auto reduce = [&]<class T>(std::span<const T> x) {
        for (size_t o = 0; o < outer; ++o)
            for (size_t i = 0; i < inner; ++i) {
                // The first extreme wins: only a strictly greater (less) value moves the index.
                T best = x[o * size * inner + i];
                int32_t at = 0;
                for (size_t k = 1; k < size; ++k) {
                    const T value = x[(o * size + k) * inner + i];
                    if (max ? value > best : value < best) {
                        best = value;
                        at = static_cast<int32_t>(k);
                    }
                }
                out[o * inner + i] = at;
            }
    };
    const auto& bytes = tensors.read(v.op.inputs[0]);
    if (v.input(0).type == ElementType::Float32) reduce(typed<float>(bytes));
    else reduce(typed<int8_t>(bytes));
}

}  // namespace

std::span<const CpuKernel> reduce_kernels() {
    static constexpr CpuKernel kernels[] = {
        {"MEAN", check_reduce, run_reduce},
        {"SUM", check_reduce, run_reduce},
        {"ARG_MAX", check_arg_min_max, run_arg_min_max},
        {"ARG_MIN", check_arg_min_max, run_arg_min_max},
    };
    return kernels;
}

}  // namespace ethosu
