// Operators that move elements without arithmetic: PAD, PADV2, TRANSPOSE, CONCATENATION, PACK,
// SPLIT, SPLIT_V, UNPACK, SLICE, STRIDED_SLICE, GATHER, as TFLM's kernels (pad_common.cc,
// transpose.cc, concatenation.cc, pack.cc, split.cc, split_v.cc, unpack.cc, slice.cc,
// strided_slice_common.cc, gather.cc;
// reference/pad.h, transpose.h, strided_slice.h, strided_slice_logic.h). They copy bytes, so
// one implementation serves every element type a kernel takes; the output shapes are the file's,
// checked against what the parameters give as TFLM's Prepare checks them.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "frontend/graph/cpu_operator.h"
#include "frontend/graph/kernel_helpers.h"
#include "frontend/graph/operator_options.h"

namespace ethosu {
namespace {

using Shape = std::vector<int64_t>;

bool one_of(ElementType t, std::initializer_list<ElementType> types) { return std::ranges::find(types, t) != types.end(); }

void expect_type(const OperatorView& v, const TensorInfo& t, std::initializer_list<ElementType> types) {
    std::vector<std::string_view> names;
    for (const ElementType e : types) names.push_back(element_type_name(e));
    v.expect(one_of(t.type, types),
             fmt::format("'{}' is {}; TFLM's {} takes {}", t.name, element_type_name(t.type), v.name(), fmt::join(names, ", ")));
}

void expect_shape(const OperatorView& v, const TensorInfo& t, const Shape& want) {
    v.expect(t.shape == want, fmt::format("'{}' is [{}]; its inputs and parameters give [{}]", t.name,
                                          fmt::join(t.shape, ","), fmt::join(want, ",")));
}

void expect_same_type(const OperatorView& v, const TensorInfo& a, const TensorInfo& b) {
    v.expect(a.type == b.type, fmt::format("'{}' is {} and '{}' {}", a.name, element_type_name(a.type), b.name,
                                           element_type_name(b.type)));
}

size_t product(const Shape& s, size_t from, size_t to) {
    size_t n = 1;
    for (size_t k = from; k < to; ++k) n *= static_cast<size_t>(s[k]);
    return n;
}

// Row-major strides, in elements.
std::vector<size_t> strides_of(const Shape& s) {
    std::vector<size_t> st(s.size(), 1);
    for (size_t k = s.size(); k-- > 1;) st[k - 1] = st[k] * static_cast<size_t>(s[k]);
    return st;
}

// Calls f(output element index, output coordinates) over `out` in row-major order.
template <class F>
void for_each_index(const Shape& out, F&& f) {
    const size_t total = product(out, 0, out.size());
    std::vector<int64_t> at(out.size(), 0);
    for (size_t i = 0; i < total; ++i) {
        f(i, at);
        for (size_t d = out.size(); d-- > 0;) {
            if (++at[d] < out[d]) break;
            at[d] = 0;
        }
    }
}

void copy_element(std::vector<uint8_t>& out, size_t o, const std::vector<uint8_t>& in, size_t i, size_t size) {
    std::memcpy(out.data() + o * size, in.data() + i * size, size);
}

// ---- PAD, PADV2 -------------------------------------------------------------------------

std::vector<int64_t> paddings(const OperatorView& v) { return constant_integers(v, 1); }

void check_pad(const OperatorView& v) {
    const bool v2 = v.name() == "PADV2";
    v.expect_arity(v2 ? 3 : 2, 1);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    expect_type(v, in, {ElementType::Float32, ElementType::Int8, ElementType::Int16, ElementType::Int32});
    expect_same_type(v, in, out);
    // reference/pad.h: PadKernelMaxDimensionCount() is 5.
    v.expect(in.shape.size() <= 5, fmt::format("input is {}-D; TFLM pads up to 5-D", in.shape.size()));
    const auto pad = paddings(v);
    v.expect(pad.size() == 2 * in.shape.size(),
             fmt::format("has {} paddings for a {}-D input; PAD takes two per dimension", pad.size(), in.shape.size()));
    Shape want(in.shape.size());
    for (size_t d = 0; d < in.shape.size(); ++d) {
        v.expect(pad[2 * d] >= 0 && pad[2 * d + 1] >= 0, fmt::format("padding [{}, {}] of dimension {} is negative",
                                                                     pad[2 * d], pad[2 * d + 1], d));
        want[d] = in.shape[d] + pad[2 * d] + pad[2 * d + 1];
    }
    expect_shape(v, out, want);
    if (v2) {
        const TensorInfo& value = v.input(2);
        v.expect(value.type == in.type && element_count(value) == 1,
                 fmt::format("its constant value '{}' must be one {} element", value.name, element_type_name(in.type)));
        // pad_common.cc: an int8 value must be quantized as the output is.
        if (in.type == ElementType::Int8)
            v.expect(value.scale == out.scale && value.zero_point == out.zero_point,
                     fmt::format("its constant value '{}' is quantized unlike the output", value.name));
    } else if (in.type == ElementType::Int8) {
        v.expect(out.zero_point.size() == 1 && out.zero_point[0] >= INT8_MIN && out.zero_point[0] <= INT8_MAX,
                 "pads with the output's zero point, which it lacks or which is outside int8");
    }
}

void run_pad(const OperatorView& v, HostTensors& tensors) {
    const TensorInfo &in = v.input(0), &out = v.output(0);
    const auto size = static_cast<size_t>(element_size(in.type));
    // The padding value: PADV2's constant, else the int8 output's zero point, else zero.
    std::vector<uint8_t> value(size, 0);
    if (v.op.inputs.size() == 3) {
        value = tensors.read(v.op.inputs[2]);
    } else if (in.type == ElementType::Int8) {
        value[0] = static_cast<uint8_t>(static_cast<int8_t>(out.zero_point[0]));
    }
    const auto pad = paddings(v);
    const auto& src = tensors.read(v.op.inputs[0]);
    auto& dst = tensors.write(v.op.outputs[0]);
    const auto in_strides = strides_of(in.shape);
    for_each_index(out.shape, [&](size_t o, const std::vector<int64_t>& at) {
        size_t i = 0;
        for (size_t d = 0; d < at.size(); ++d) {
            const int64_t c = at[d] - pad[2 * d];
            if (c < 0 || c >= in.shape[d]) {
                std::memcpy(dst.data() + o * size, value.data(), size);
                return;
            }
            i += static_cast<size_t>(c) * in_strides[d];
        }
        copy_element(dst, o, src, i, size);
    });
}

// ---- TRANSPOSE --------------------------------------------------------------------------

void check_transpose(const OperatorView& v) {
    v.expect_arity(2, 1);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    expect_type(v, in, {ElementType::Float32, ElementType::Int8, ElementType::Int16});
    expect_same_type(v, in, out);
    // transpose.cc: up to 5 dimensions, a constant permutation of them.
    v.expect(in.shape.size() <= 5, fmt::format("input is {}-D; TFLM transposes up to 5-D", in.shape.size()));
    const auto perm = constant_integers(v, 1);
    v.expect(perm.size() == in.shape.size(), fmt::format("its permutation has {} entries for a {}-D input", perm.size(),
                                                          in.shape.size()));
    Shape want(perm.size());
    std::vector<bool> used(perm.size(), false);
    for (size_t k = 0; k < perm.size(); ++k) {
        v.expect(perm[k] >= 0 && perm[k] < static_cast<int64_t>(perm.size()) && !used[static_cast<size_t>(perm[k])],
                 fmt::format("[{}] is not a permutation of the input's dimensions", fmt::join(perm, ",")));
        used[static_cast<size_t>(perm[k])] = true;
        want[k] = in.shape[static_cast<size_t>(perm[k])];
    }
    expect_shape(v, out, want);
}

void run_transpose(const OperatorView& v, HostTensors& tensors) {
    const TensorInfo &in = v.input(0), &out = v.output(0);
    const auto size = static_cast<size_t>(element_size(in.type));
    const auto perm = constant_integers(v, 1);
    const auto in_strides = strides_of(in.shape);
    const auto& src = tensors.read(v.op.inputs[0]);
    auto& dst = tensors.write(v.op.outputs[0]);
    for_each_index(out.shape, [&](size_t o, const std::vector<int64_t>& at) {
        size_t i = 0;
        for (size_t k = 0; k < at.size(); ++k) i += static_cast<size_t>(at[k]) * in_strides[static_cast<size_t>(perm[k])];
        copy_element(dst, o, src, i, size);
    });
}

// ---- CONCATENATION and PACK; SPLIT, SPLIT_V and UNPACK ------------------------------------
// Joining along an axis: each piece contributes, per index of the dimensions before the axis,
// one contiguous run of its elements; splitting is the same walk the other way.

struct Pieces {
    std::vector<int32_t> tensors;  // the pieces, in order
    int32_t whole = -1;            // the joined tensor
    size_t outer = 1;              // elements before the axis
    std::vector<size_t> runs;      // elements per outer index of each piece
};

void join(const Pieces& p, size_t size, HostTensors& tensors) {
    auto& dst = tensors.write(p.whole);
    size_t o = 0;
    for (size_t outer = 0; outer < p.outer; ++outer)
        for (size_t k = 0; k < p.tensors.size(); ++k) {
            const auto& src = tensors.read(p.tensors[k]);
            std::memcpy(dst.data() + o * size, src.data() + outer * p.runs[k] * size, p.runs[k] * size);
            o += p.runs[k];
        }
}

void split(const Pieces& p, size_t size, HostTensors& tensors) {
    const auto& src = tensors.read(p.whole);
    size_t i = 0;
    for (size_t outer = 0; outer < p.outer; ++outer)
        for (size_t k = 0; k < p.tensors.size(); ++k) {
            auto& dst = tensors.write(p.tensors[k]);
            std::memcpy(dst.data() + outer * p.runs[k] * size, src.data() + i * size, p.runs[k] * size);
            i += p.runs[k];
        }
}

// The pieces of `whole` along `axis`, each of `extent` on that axis (`stacked`: PACK and UNPACK,
// whose pieces lack the axis).
Pieces pieces_along(const OperatorView& v, const std::vector<int32_t>& parts, int32_t whole, int axis,
                    const std::vector<int64_t>& extents, bool stacked) {
    const TensorInfo& w = v.tensor(whole).info;
    Pieces p{parts, whole, product(w.shape, 0, static_cast<size_t>(axis)), {}};
    const size_t inner = product(w.shape, static_cast<size_t>(axis) + 1, w.shape.size());
    int64_t total = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
        const TensorInfo& t = v.tensor(parts[k]).info;
        expect_same_type(v, t, w);
        Shape want = w.shape;
        if (stacked) want.erase(want.begin() + axis);
        else want[static_cast<size_t>(axis)] = extents[k];
        expect_shape(v, t, want);
        total += stacked ? 1 : extents[k];
        p.runs.push_back(static_cast<size_t>(stacked ? 1 : extents[k]) * inner);
    }
    v.expect(total == w.shape[static_cast<size_t>(axis)],
             fmt::format("its {} pieces span {} along axis {}, where '{}' has {}", parts.size(), total, axis, w.name,
                         w.shape[static_cast<size_t>(axis)]));
    return p;
}

std::vector<int64_t> extents_on(const OperatorView& v, const std::vector<int32_t>& parts, int axis) {
    std::vector<int64_t> e;
    for (const int32_t t : parts) {
        const TensorInfo& info = v.tensor(t).info;
        v.expect(static_cast<size_t>(axis) < info.shape.size(), fmt::format("'{}' has no axis {}", info.name, axis));
        e.push_back(info.shape[static_cast<size_t>(axis)]);
    }
    return e;
}

constexpr std::initializer_list<ElementType> kConcatenationTypes = {ElementType::Float32, ElementType::Int8,
                                                                   ElementType::Int16,   ElementType::Int32,
                                                                   ElementType::Int64,   ElementType::Bool};

Pieces concatenation_pieces(const OperatorView& v) {
    const TensorInfo& out = v.output(0);
    const int axis = normalized_axis(v, builtin_options<tflite::ConcatenationOptionsT>(v).axis, out.shape.size());
    return pieces_along(v, v.op.inputs, v.op.outputs[0], axis, extents_on(v, v.op.inputs, axis), false);
}

void check_concatenation(const OperatorView& v) {
    v.expect(!v.op.inputs.empty() && v.op.outputs.size() == 1, "needs inputs and one output");
    v.expect_arity(v.op.inputs.size(), 1);
    const TensorInfo& out = v.output(0);
    expect_type(v, out, kConcatenationTypes);
    // concatenation.cc: no fused activation; int8 inputs quantized as the output; int16 symmetric.
    v.expect(builtin_options<tflite::ConcatenationOptionsT>(v).fused_activation_function == 0,
             "has a fused activation, which TFLM's CONCATENATION refuses");
    for (size_t k = 0; k < v.op.inputs.size(); ++k) {
        const TensorInfo& in = v.input(k);
        if (out.type == ElementType::Int8)
            v.expect(in.scale == out.scale && in.zero_point == out.zero_point,
                     fmt::format("'{}' is quantized unlike the output, which TFLM's int8 CONCATENATION refuses", in.name));
        if (out.type == ElementType::Int16)
            v.expect(std::ranges::all_of(in.zero_point, [](int64_t z) { return z == 0; }) &&
                         std::ranges::all_of(out.zero_point, [](int64_t z) { return z == 0; }),
                     "int16 needs zero points of 0, as TFLM requires");
    }
    concatenation_pieces(v);
}

void run_concatenation(const OperatorView& v, HostTensors& tensors) {
    join(concatenation_pieces(v), static_cast<size_t>(element_size(v.output(0).type)), tensors);
}

Pieces pack_pieces(const OperatorView& v) {
    const TensorInfo& out = v.output(0);
    const int axis = normalized_axis(v, builtin_options<tflite::PackOptionsT>(v).axis, out.shape.size());
    return pieces_along(v, v.op.inputs, v.op.outputs[0], axis, {}, true);
}

void check_pack(const OperatorView& v) {
    v.expect(!v.op.inputs.empty() && v.op.outputs.size() == 1, "needs inputs and one output");
    v.expect_arity(v.op.inputs.size(), 1);
    const int32_t values_count = builtin_options<tflite::PackOptionsT>(v).values_count;
    v.expect(static_cast<size_t>(values_count) == v.op.inputs.size(),
             fmt::format("values_count {} but {} inputs", values_count, v.op.inputs.size()));
    expect_type(v, v.output(0), {ElementType::Float32, ElementType::Int8, ElementType::Int16, ElementType::Int32,
                                 ElementType::Int64});
    pack_pieces(v);
}

void run_pack(const OperatorView& v, HostTensors& tensors) {
    join(pack_pieces(v), static_cast<size_t>(element_size(v.output(0).type)), tensors);
}

// SPLIT's inputs are (axis, value), SPLIT_V's (value, size_splits, axis), UNPACK's (value).
Pieces split_pieces(const OperatorView& v) {
    const std::string name = v.name();
    const size_t value = name == "SPLIT" ? 1 : 0;
    const TensorInfo& in = v.input(value);
    if (name == "UNPACK")
        return pieces_along(v, v.op.outputs, v.op.inputs[0],
                            normalized_axis(v, builtin_options<tflite::UnpackOptionsT>(v).axis, in.shape.size()), {}, true);
    const auto axis_values = constant_integers(v, name == "SPLIT" ? 0 : 2);
    v.expect(axis_values.size() == 1, "its axis must be one value");
    const int axis = normalized_axis(v, axis_values[0], in.shape.size());
    return pieces_along(v, v.op.outputs, v.op.inputs[value], axis, extents_on(v, v.op.outputs, axis), false);
}

void check_split(const OperatorView& v) {
    const std::string name = v.name();
    v.expect(!v.op.outputs.empty(), "has no outputs");
    v.expect_arity(name == "SPLIT" ? 2 : name == "SPLIT_V" ? 3 : 1, v.op.outputs.size());
    const size_t value = name == "SPLIT" ? 1 : 0;
    expect_type(v, v.input(value), {ElementType::Float32, ElementType::Int8, ElementType::Int16, ElementType::Int32});
    const Pieces p = split_pieces(v);
    if (name == "UNPACK") {
        const int32_t num = builtin_options<tflite::UnpackOptionsT>(v).num;
        v.expect(static_cast<size_t>(num) == v.op.outputs.size(), fmt::format("num {} but {} outputs", num, v.op.outputs.size()));
    } else if (name == "SPLIT") {
        v.expect(std::ranges::all_of(p.runs, [&](size_t r) { return r == p.runs[0]; }),
                 "its outputs are not of equal size along the axis");
    } else {
        // SPLIT_V: the sizes as given (one may be -1: the rest) must be the outputs' extents.
        const auto sizes = constant_integers(v, 1);
        v.expect(sizes.size() == v.op.outputs.size(),
                 fmt::format("{} split sizes for {} outputs", sizes.size(), v.op.outputs.size()));
        const auto axis = static_cast<size_t>(normalized_axis(v, constant_integers(v, 2)[0], v.input(0).shape.size()));
        for (size_t k = 0; k < sizes.size(); ++k)
            v.expect(sizes[k] == -1 || sizes[k] == v.output(k).shape[axis],
                     fmt::format("split size {} disagrees with output '{}'", sizes[k], v.output(k).name));
    }
}

void run_split(const OperatorView& v, HostTensors& tensors) {
    split(split_pieces(v), static_cast<size_t>(element_size(v.output(0).type)), tensors);
}

// ---- SLICE, STRIDED_SLICE -----------------------------------------------------------------

// Per input dimension: the first index, the step, and how many the output takes.
struct Window {
    std::vector<int64_t> start, step, count;
};

Window slice_window(const OperatorView& v) {
    const TensorInfo& in = v.input(0);
    const auto begin = constant_integers(v, 1), size = constant_integers(v, 2);
    v.expect(begin.size() == in.shape.size() && size.size() == in.shape.size(),
             fmt::format("has {} begins and {} sizes for a {}-D input", begin.size(), size.size(), in.shape.size()));
    Window w;
    for (size_t d = 0; d < in.shape.size(); ++d) {
        // slice.cc: a size of -1 takes the rest of the dimension.
        const int64_t n = size[d] == -1 ? in.shape[d] - begin[d] : size[d];
        v.expect(begin[d] >= 0 && n >= 0 && begin[d] + n <= in.shape[d],
                 fmt::format("begin {} size {} leave dimension {} of {}", begin[d], size[d], d, in.shape[d]));
        w.start.push_back(begin[d]);
        w.step.push_back(1);
        w.count.push_back(n);
    }
    return w;
}

// strided_slice_logic.h: StartForAxis / StopForAxis with begin, end and shrink masks; the count
// is ceil((stop - start) / stride) as Prepare computes it, 0 if negative.
Window strided_slice_window(const OperatorView& v, Shape* kept_shape) {
    const TensorInfo& in = v.input(0);
    const auto begin = constant_integers(v, 1), end = constant_integers(v, 2), strides = constant_integers(v, 3);
    const auto o = builtin_options<tflite::StridedSliceOptionsT>(v);
    const size_t rank = in.shape.size();
    v.expect(begin.size() == rank && end.size() == rank && strides.size() == rank,
             fmt::format("has {} begins, {} ends and {} strides for a {}-D input", begin.size(), end.size(),
                         strides.size(), rank));
    Window w;
    for (size_t d = 0; d < rank; ++d) {
        const auto size = static_cast<int32_t>(in.shape[d]);
        const int32_t stride = static_cast<int32_t>(strides[d]);
        v.expect(stride != 0, fmt::format("stride of dimension {} is 0", d));
        const auto bound = [&](int64_t index, bool masked, bool is_start) {
            if (size == 0) return 0;
            int64_t x = masked ? ((stride > 0) == is_start ? std::numeric_limits<int32_t>::lowest()
                                                          : std::numeric_limits<int32_t>::max())
                               : index;
            if (x < 0) x += size;
            return static_cast<int32_t>(stride > 0 ? std::clamp<int64_t>(x, 0, size) : std::clamp<int64_t>(x, -1, size - 1));
        };
        const int32_t start = bound(begin[d], o.begin_mask & (1 << d), true);
        const bool shrink = o.shrink_axis_mask & (1 << d);
        // A shrunk axis reads the one element at start, which must exist.
        v.expect(!shrink || (start >= 0 && start < size),
                 fmt::format("shrinks dimension {} at {}, outside its {} elements", d, begin[d], size));
        const int32_t stop = shrink ? (size == 0 ? 0 : start + 1) : bound(end[d], o.end_mask & (1 << d), false);
        const auto count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(static_cast<float>(stop - start) /
                                                                             static_cast<float>(stride))));
        w.start.push_back(start);
        w.step.push_back(stride);
        w.count.push_back(count);
        if (!shrink) kept_shape->push_back(count);
    }
    return w;
}

Window window_of(const OperatorView& v) {
    if (v.name() == "SLICE") return slice_window(v);
    Shape kept;
    return strided_slice_window(v, &kept);
}

void check_slice(const OperatorView& v) {
    const bool strided = v.name() == "STRIDED_SLICE";
    v.expect_arity(strided ? 4 : 3, 1);
    const TensorInfo &in = v.input(0), &out = v.output(0);
    expect_type(v, in, {ElementType::Float32, ElementType::Int8, ElementType::Int16, ElementType::Int32, ElementType::Bool});
    expect_same_type(v, in, out);
    // slice.cc takes up to 5-D, strided_slice_common.cc up to 4-D, and TFLM reads neither the
    // ellipsis nor the new-axis mask nor `offset`: a model setting them is refused, not run
    // differently from TFLite.
    v.expect(in.shape.size() <= (strided ? 4u : 5u),
             fmt::format("input is {}-D; TFLM's {} takes up to {}-D", in.shape.size(), v.name(), strided ? 4 : 5));
    if (!strided) {
        expect_shape(v, out, slice_window(v).count);
        return;
    }
    const auto o = builtin_options<tflite::StridedSliceOptionsT>(v);
    v.expect(o.ellipsis_mask == 0 && o.new_axis_mask == 0 && !o.offset,
             "sets the ellipsis mask, the new-axis mask or offset, which TFLM's STRIDED_SLICE does not read");
    Shape kept;
    strided_slice_window(v, &kept);
    expect_shape(v, out, kept);
}

void run_slice(const OperatorView& v, HostTensors& tensors) {
    const TensorInfo& in = v.input(0);
    const auto size = static_cast<size_t>(element_size(in.type));
    const Window w = window_of(v);
    const auto in_strides = strides_of(in.shape);
    const auto& src = tensors.read(v.op.inputs[0]);
    auto& dst = tensors.write(v.op.outputs[0]);
    for_each_index(w.count, [&](size_t o, const std::vector<int64_t>& at) {
        size_t i = 0;
        for (size_t d = 0; d < at.size(); ++d)
            i += static_cast<size_t>(w.start[d] + at[d] * w.step[d]) * in_strides[d];
        copy_element(dst, o, src, i, size);
    });
}

// ---- GATHER --------------------------------------------------------------------------------

// gather.cc: per batch (the first batch_dims dimensions, shared by input and positions) and
// per index before the axis, the input's slices at each position along the axis.
struct Gather {
    size_t axis = 0, batch_dims = 0;
    size_t batches = 1, outer = 1, axis_size = 1, inner = 1, positions = 1;
};

Gather gather_of(const OperatorView& v) {
    const Shape &in = v.input(0).shape, &at = v.input(1).shape;
    const auto o = builtin_options<tflite::GatherOptionsT>(v);
    const int axis = normalized_axis(v, o.axis, in.size());
    int64_t batch_dims = o.batch_dims;
    if (batch_dims < 0) batch_dims += static_cast<int64_t>(at.size());
    v.expect(batch_dims >= 0 && batch_dims <= axis && static_cast<size_t>(batch_dims) <= at.size(),
             fmt::format("batch_dims {} is outside [0, axis {}] or beyond the positions' rank", o.batch_dims, axis));
    const auto b = static_cast<size_t>(batch_dims), a = static_cast<size_t>(axis);
    for (size_t d = 0; d < b; ++d)
        v.expect(in[d] == at[d], fmt::format("batch dimension {} is {} in the input and {} in the positions", d, in[d], at[d]));
    return {a, b, product(in, 0, b), product(in, b, a), static_cast<size_t>(in[a]), product(in, a + 1, in.size()),
            product(at, b, at.size())};
}

void check_gather(const OperatorView& v) {
    v.expect_arity(2, 1);
    const TensorInfo &in = v.input(0), &at = v.input(1), &out = v.output(0);
    expect_type(v, in, {ElementType::Float32, ElementType::Int8});
    expect_same_type(v, in, out);
    v.expect(at.type == ElementType::Int32, fmt::format("positions '{}' must be int32, as TFLM requires", at.name));
    // The output: the input's dimensions before the axis, the positions' after the batch, the input's after the axis.
    const Gather g = gather_of(v);
    Shape want(in.shape.begin(), in.shape.begin() + static_cast<ptrdiff_t>(g.axis));
    want.insert(want.end(), at.shape.begin() + static_cast<ptrdiff_t>(g.batch_dims), at.shape.end());
    want.insert(want.end(), in.shape.begin() + static_cast<ptrdiff_t>(g.axis) + 1, in.shape.end());
    expect_shape(v, out, want);
}

void run_gather(const OperatorView& v, HostTensors& tensors) {
    const Gather g = gather_of(v);
    const auto size = static_cast<size_t>(element_size(v.input(0).type)) * g.inner;
    const auto& src = tensors.read(v.op.inputs[0]);
    const auto positions = typed<int32_t>(tensors.read(v.op.inputs[1]));
    auto& dst = tensors.write(v.op.outputs[0]);
    size_t o = 0;
    for (size_t b = 0; b < g.batches; ++b)
        for (size_t outer = 0; outer < g.outer; ++outer)
            for (size_t k = 0; k < g.positions; ++k, o += size) {
                const int32_t at = positions[b * g.positions + k];
                // TFLM only debug-checks the positions; here one outside the axis ends the run.
                v.expect(at >= 0 && static_cast<size_t>(at) < g.axis_size,
                         fmt::format("position {} is outside the axis of {} elements", at, g.axis_size));
                std::memcpy(dst.data() + o, src.data() + ((b * g.outer + outer) * g.axis_size + static_cast<size_t>(at)) * size, size);
            }
}

}  // namespace

std::span<const CpuKernel> shape_kernels() {
    static constexpr CpuKernel kernels[] = {
        {"PAD", check_pad, run_pad},
        {"PADV2", check_pad, run_pad},
        {"TRANSPOSE", check_transpose, run_transpose},
        {"CONCATENATION", check_concatenation, run_concatenation},
        {"PACK", check_pack, run_pack},
        {"SPLIT", check_split, run_split},
        {"SPLIT_V", check_split, run_split},
        {"UNPACK", check_split, run_split},
        {"SLICE", check_slice, run_slice},
        {"STRIDED_SLICE", check_slice, run_slice},
        {"GATHER", check_gather, run_gather},
    };
    return kernels;
}

}  // namespace ethosu
