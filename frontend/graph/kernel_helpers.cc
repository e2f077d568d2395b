#include "frontend/graph/kernel_helpers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace ethosu {
FusedActivation fused_activation(const OperatorView& v, int8_t code) {
    v.expect(code >= 0 && code <= static_cast<int8_t>(FusedActivation::SignBit),
             fmt::format("fused activation {} is not one of TFLite's", code));
    return static_cast<FusedActivation>(code);
}

std::pair<int32_t, int32_t> quantized_activation_range(const OperatorView& v, const TensorInfo& out,
                                                       FusedActivation activation) {
    int32_t lo = 0, hi = 0;
    with_integer_type(out.type, [&](auto value) {
        lo = std::numeric_limits<decltype(value)>::min();
        hi = std::numeric_limits<decltype(value)>::max();
    });
    // TFLite's Quantize: the bound divided by the scale in float, std::round, plus the zero point;
    // a bound beyond int32 on the output's scale is refused, as TFLite refuses it.
    const auto quantize = [&](float bound) {
        const float steps = std::round(bound / out.scale[0]);
        v.expect(steps >= -2147483648.0f && steps <= 2147483648.0f,
                 fmt::format("its fused activation's bound {} is beyond int32 on the output scale {}", bound, out.scale[0]));
        return static_cast<int32_t>(std::clamp<int64_t>(static_cast<int64_t>(steps) + out.zero_point[0], INT32_MIN, INT32_MAX));
    };
    switch (activation) {
        case FusedActivation::Relu: return {std::max(lo, quantize(0.0f)), hi};
        case FusedActivation::Relu6: return {std::max(lo, quantize(0.0f)), std::min(hi, quantize(6.0f))};
        case FusedActivation::ReluN1To1: return {std::max(lo, quantize(-1.0f)), std::min(hi, quantize(1.0f))};
        default: return {lo, hi};
    }
}

std::vector<int64_t> constant_integers(const OperatorView& v, size_t k) {
    v.expect(k < v.op.inputs.size() && v.op.inputs[k] >= 0, fmt::format("input {} is missing", k));
    const GraphTensor& t = v.tensor(v.op.inputs[k]);
    v.expect(t.constant, fmt::format("input {} ('{}') must be a constant", k, t.info.name));
    v.expect(t.info.type == ElementType::Int32 || t.info.type == ElementType::Int64,
             fmt::format("input {} ('{}') must be int32 or int64", k, t.info.name));
    const size_t size = t.info.type == ElementType::Int32 ? 4 : 8;
    const uint64_t n = element_count(t.info);
    v.expect(t.data.size() == n * size, fmt::format("input {} ('{}') holds {} bytes for {} elements", k, t.info.name,
                                                    t.data.size(), n));
    std::vector<int64_t> values(n);
    for (size_t i = 0; i < n; ++i) {
        if (size == 4) {
            int32_t x;
            std::memcpy(&x, t.data.data() + i * 4, 4);
            values[i] = x;
        } else {
            std::memcpy(&values[i], t.data.data() + i * 8, 8);
        }
    }
    return values;
}

int normalized_axis(const OperatorView& v, int64_t axis, size_t rank) {
    const auto r = static_cast<int64_t>(rank);
    v.expect(axis >= -r && axis < r, fmt::format("axis {} is outside a rank-{} tensor", axis, rank));
    return static_cast<int>(axis < 0 ? axis + r : axis);
}

reference::QuantizedMultiplier multiplier_below_one(const OperatorView& v, double real, const char* what) {
    v.expect(real > 0 && real < 1, fmt::format("the {} scale ratio {} is outside (0, 1), which TFLite requires", what, real));
    return reference::quantize_multiplier(real);
}

int32_t multiply_below_one(int32_t x, reference::QuantizedMultiplier m) {
    return fixed_point::rounding_divide_by_pot(fixed_point::doubling_high_mul(x, m.multiplier), -m.shift);
}

bool broadcasts_to(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::vector<int64_t>& out) {
    if (a.size() > out.size() || b.size() > out.size()) return false;
    for (size_t k = 0; k < out.size(); ++k) {
        const auto dim = [&](const std::vector<int64_t>& s) {
            return k < s.size() ? s[s.size() - 1 - k] : int64_t{1};
        };
        const int64_t da = dim(a), db = dim(b), d = out[out.size() - 1 - k];
        if ((da != 1 && da != d) || (db != 1 && db != d) || d != std::max(da, db)) return false;
    }
    return true;
}

}  // namespace ethosu
