#include "frontend/graph/cpu_operator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "emulator/isa/error.h"
#include "frontend/graph/builtin_operators.h"

namespace ethosu {

uint64_t element_count(const TensorInfo& t) {
    return std::accumulate(t.shape.begin(), t.shape.end(), uint64_t{1},
                           [](uint64_t n, int64_t d) { return n * static_cast<uint64_t>(d); });
}

bool is_quantized_integer(ElementType t) {
    return t == ElementType::Int8 || t == ElementType::UInt8 || t == ElementType::Int16;
}

std::string OperatorView::name() const {
    return op.invocation >= 0 ? std::string("ethos-u")
                              : op.builtin_code == static_cast<int32_t>(Builtin::Custom)
                                    ? fmt::format("CUSTOM \"{}\"", op.custom_code)
                                    : builtin_operator_name(op.builtin_code);
}

void OperatorView::fail(const std::string& reason, ErrorKind kind) const {
    throw Error({model.path, std::nullopt, fmt::format("subgraphs[0].operators[{}] ({})", index, name())}, reason, kind);
}

void OperatorView::expect_work_within_limit(uint64_t work, std::string_view what) const {
    if (work > limits.max_op_work)
        fail(fmt::format("takes {} {}, above the limit of {} per op (raise it with --max-op-work)", work, what,
                         limits.max_op_work),
             ErrorKind::LimitExceeded);
}

void OperatorView::expect_bounded_work(std::initializer_list<uint64_t> factors) const {
    uint64_t macs = 1;
    for (const uint64_t f : factors)
        if (__builtin_mul_overflow(macs, f, &macs)) macs = UINT64_MAX;  // saturates: still over the limit
    expect_work_within_limit(macs, "multiply-accumulates");
}

void OperatorView::expect_arity(size_t inputs, size_t outputs) const {
    expect(op.inputs.size() == inputs && op.outputs.size() == outputs,
           fmt::format("has {} inputs and {} outputs; {} takes {} and {}", op.inputs.size(), op.outputs.size(), name(),
                       inputs, outputs));
    for (const int32_t t : op.inputs) expect(t >= 0, "an input is omitted");
    for (const int32_t t : op.outputs) expect(t >= 0, "an output is omitted");
}

void OperatorView::expect_same_shape(const TensorInfo& a, const TensorInfo& b) const {
    expect(a.shape == b.shape, fmt::format("shapes disagree: '{}' is [{}], '{}' is [{}]", a.name,
                                           fmt::join(a.shape, ","), b.name, fmt::join(b.shape, ",")));
}

void OperatorView::expect_quantized(const TensorInfo& t) const {
    expect(t.scale.size() == 1 && t.zero_point.size() == 1,
           fmt::format("'{}' needs one scale and zero point; has {} and {}", t.name, t.scale.size(),
                       t.zero_point.size()));
    expect(std::isfinite(t.scale[0]) && t.scale[0] > 0,
           fmt::format("'{}' has scale {}; a scale must be positive and finite", t.name, t.scale[0]));
    const int64_t zp = t.zero_point[0];
    const auto [lo, hi] = [&]() -> std::pair<int64_t, int64_t> {
        switch (t.type) {
            case ElementType::Int8: return {INT8_MIN, INT8_MAX};
            case ElementType::UInt8: return {0, UINT8_MAX};
            case ElementType::Int16: return {INT16_MIN, INT16_MAX};
            default: return {INT32_MIN, INT32_MAX};
        }
    }();
    expect(zp >= lo && zp <= hi,
           fmt::format("'{}' has zero point {} outside its {} range", t.name, zp, element_type_name(t.type)));
}

namespace {

// Every family of host kernels; a new family file adds its line here.
constexpr std::span<const CpuKernel> (*kFamilies[])() = {
    conversion_kernels,
    svdf_kernels,
    softmax_kernels,
    convolution_kernels,
    fully_connected_kernels,
    pool_kernels,
    elementwise_kernels,
    shape_kernels,
    activation_kernels,
    reduce_kernels,
    resize_kernels,
};

// The kernels by builtin code, built once; a name TFLite lacks or registered twice is a bug here.
const std::vector<const CpuKernel*>& kernels_by_code() {
    static const std::vector<const CpuKernel*> table = [] {
        std::vector<const CpuKernel*> by_code;
        for (const auto family : kFamilies) {
            for (const CpuKernel& k : family()) {
                const int32_t code = builtin_code(k.builtin);
                if (code < 0) throw std::logic_error(fmt::format("no TFLite builtin is named {}", k.builtin));
                if (by_code.size() <= static_cast<size_t>(code)) by_code.resize(static_cast<size_t>(code) + 1);
                if (by_code[static_cast<size_t>(code)]) throw std::logic_error(fmt::format("{} registered twice", k.builtin));
                by_code[static_cast<size_t>(code)] = &k;
            }
        }
        return by_code;
    }();
    return table;
}

}  // namespace

const CpuKernel* find_cpu_kernel(int32_t builtin_code) {
    const auto& table = kernels_by_code();
    return builtin_code >= 0 && static_cast<size_t>(builtin_code) < table.size() ? table[static_cast<size_t>(builtin_code)]
                                                                                  : nullptr;
}

std::string implemented_cpu_operators() {
    std::vector<std::string_view> names;
    for (const CpuKernel* k : kernels_by_code())
        if (k) names.push_back(k->builtin);
    std::ranges::sort(names);
    return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace ethosu
