#pragma once
// What several host-kernel families share: TFLite's fused activation ranges, constant parameter
// tensors (paddings, permutations, axes), axis normalisation and numpy-style broadcasting.

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "frontend/graph/cpu_operator.h"
#include "frontend/graph/reference_kernels.h"

namespace ethosu {

// TFLite's ActivationFunctionType, as an operator's options give it (`code`), refused outside
// TFLite's enum.
enum class FusedActivation : int8_t { None = 0, Relu = 1, ReluN1To1 = 2, Relu6 = 3, Tanh = 4, SignBit = 5 };
FusedActivation fused_activation(const OperatorView& v, int8_t code);
// The clamp TFLite applies for a fused activation on a quantized output
// (CalculateActivationRangeQuantized: zero point + round(bound / scale), inside the type). TANH and
// SIGN_BIT clamp nothing there, as in TFLite.
std::pair<int32_t, int32_t> quantized_activation_range(const OperatorView& v, const TensorInfo& out,
                                                       FusedActivation activation);
// The same for unquantized outputs (CalculateActivationRange<T>).
template <class T>
std::pair<T, T> activation_range(FusedActivation activation) {
    switch (activation) {
        case FusedActivation::Relu: return {T(0), std::numeric_limits<T>::max()};
        case FusedActivation::Relu6: return {T(0), T(6)};
        case FusedActivation::ReluN1To1: return {T(-1), T(1)};
        default: return {std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()};
    }
}

// Input k's values, which must be a constant int32 or int64 tensor (a parameter such as PAD's
// paddings), widened to int64.
std::vector<int64_t> constant_integers(const OperatorView& v, size_t k);

// axis in [-rank, rank) as TFLite takes it, made non-negative; anything else is refused.
int normalized_axis(const OperatorView& v, int64_t axis, size_t rank);

// QuantizeMultiplierSmallerThanOneExp: a multiplier for a real in (0, 1), refused otherwise.
reference::QuantizedMultiplier multiplier_below_one(const OperatorView& v, double real, const char* what);
// MultiplyByQuantizedMultiplierSmallerThanOneExp: round(x * m / 2^31), then a rounding right shift.
int32_t multiply_below_one(int32_t x, reference::QuantizedMultiplier m);

// Numpy broadcasting as TFLite's *Slow kernels do it: the shapes right-aligned to the output's
// rank, a dimension of 1 repeated: whether a and b broadcast to out.
bool broadcasts_to(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::vector<int64_t>& out);
// For each output element in order: f(output index, index in a, index in b).
template <class F>
void for_each_broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                        const std::vector<int64_t>& out, F&& f) {
    const size_t rank = out.size();
    std::vector<uint64_t> stride_a(rank, 0), stride_b(rank, 0);
    const auto strides = [rank](const std::vector<int64_t>& s, std::vector<uint64_t>& st) {
        uint64_t step = 1;
        for (size_t k = 0; k < s.size(); ++k) {
            const size_t dim = s.size() - 1 - k;
            st[rank - 1 - k] = s[dim] == 1 ? 0 : step;
            step *= static_cast<uint64_t>(s[dim]);
        }
    };
    strides(a, stride_a);
    strides(b, stride_b);
    uint64_t total = 1;
    for (const int64_t d : out) total *= static_cast<uint64_t>(d);
    std::vector<int64_t> at(rank, 0);
    uint64_t ia = 0, ib = 0;
    for (uint64_t i = 0; i < total; ++i) {
        f(static_cast<size_t>(i), static_cast<size_t>(ia), static_cast<size_t>(ib));
        for (size_t d = rank; d-- > 0;) {
            ia += stride_a[d];
            ib += stride_b[d];
            if (++at[d] < out[d]) break;
            ia -= stride_a[d] * static_cast<uint64_t>(out[d]);
            ib -= stride_b[d] * static_cast<uint64_t>(out[d]);
            at[d] = 0;
        }
    }
}

}  // namespace ethosu
