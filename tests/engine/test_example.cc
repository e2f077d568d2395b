// The bundled example end to end: written by our builder, loaded as an ExecuTorch
// vela_bin_stream, executed, and checked against a plain reference of its two ops.

#include <gtest/gtest.h>

#include <algorithm>

#include "frontend/cli/example_model.h"
#include "frontend/runner/run_model.h"

namespace ethosu {
namespace {

// TFLite's double rounding for scale 2^30 with a right shift of 32: round half up at /2,
// then half away from zero at /2 again.
int32_t average_of_four(int32_t sum) {
    const int32_t half = static_cast<int32_t>((int64_t{sum} + 1) >> 1);  // floor((sum + 1) / 2)
    return half >= 0 ? (half + 1) / 2 : -((-half + 1) / 2);
}

TEST(Example, RunsBitExactAgainstAPlainReference) {
    const auto bytes = build_example_model();
    const auto model = load_executorch_bin("example.bin", bytes, {});
    ASSERT_EQ(model->config.name, "ethos-u55-128");
    ASSERT_EQ(model->inputs.size(), 1u);
    std::vector<uint8_t> input(16 * 16 * 16);
    for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<uint8_t>(i * 37 + 11);
    const RunResult result = run_model(*model, {input});
    ASSERT_EQ(result.outputs.size(), 1u);
    ASSERT_EQ(result.outputs[0].size(), 8u * 8 * 16);
    auto in = [&](int y, int x, int c) { return static_cast<int8_t>(input[(y * 16 + x) * 16 + c]); };
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x)
            for (int c = 0; c < 16; ++c) {
                const int32_t sum = in(2 * y, 2 * x, c) + in(2 * y, 2 * x + 1, c) + in(2 * y + 1, 2 * x, c) +
                                    in(2 * y + 1, 2 * x + 1, c);
                const int32_t expected = std::clamp(average_of_four(sum) + 3, -128, 127);
                ASSERT_EQ(static_cast<int8_t>(result.outputs[0][(y * 8 + x) * 16 + c]), expected)
                    << y << "," << x << "," << c << " sum " << sum;
            }
}

}  // namespace
}  // namespace ethosu
