// MEAN, SUM, ARG_MAX, ARG_MIN, RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR against plain loops
// written from TFLite's definitions, and the refusals TFLM's Prepare makes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "tests/graph/host_graph.h"
#include "tests/engine/tflite_math.h"

namespace ethosu::test {
namespace {

using ::testing::HasSubstr;

TEST(ReduceKernels, MeanInt8OverHeightAndWidth) {
    // [2, 3, 5, 4] reduced over axes 1 and -3... 1 and 2, kept: 15 values per output.
    HostGraph g{"MEAN",
                {{{2, 3, 5, 4}, ElementType::Int8, {0.1f}, {-3}}, ints({1, 2, -2}), {{2, 1, 1, 4}, ElementType::Int8, {0.07f}, {5}}},
                {0, 1},
                {2}};
    tflite::ReducerOptionsT keep;
    keep.keep_dims = true;
    g.options = options_table(keep);
    const auto x = random_values<int8_t>(120, 21);
    const auto got = values_of<int8_t>(g.run({bytes_of(x)})[0]);
    // TFLite's recipe: multiplier of 0.1/0.07, shifted up by floor(log2(15)) = 3 and divided by 15.
    tflite_math::Multiplier m = tflite_math::quantize_multiplier(double{0.1f} / double{0.07f});
    m.multiplier = static_cast<int32_t>((int64_t{m.multiplier} << 3) / 15);
    m.shift -= 3;
    for (int b = 0; b < 2; ++b)
        for (int c = 0; c < 4; ++c) {
            int64_t sum = 0;
            double real = 0;
            for (int h = 0; h < 3; ++h)
                for (int w = 0; w < 5; ++w) {
                    const int8_t v = x[static_cast<size_t>(((b * 3 + h) * 5 + w) * 4 + c)];
                    sum += v;
                    real += (v + 3) * 0.1 / 15;
                }
            const auto i = static_cast<size_t>(b * 4 + c);
            EXPECT_EQ(got[i], std::clamp<int64_t>(tflite_math::multiply(sum + 3 * 15, m) + 5, -128, 127)) << i;
            EXPECT_NEAR(got[i], std::clamp(real / 0.07 + 5, -128.0, 127.0), 1.0) << i;
        }
}

TEST(ReduceKernels, SumInt16AndFloatMean) {
    HostGraph sum{"SUM", {{{3, 4}, ElementType::Int16, {0.5f}, {0}}, ints({0}), {{4}, ElementType::Int16, {2.0f}, {0}}}, {0, 1}, {2}};
    const auto x = random_values<int16_t>(12, 22);
    const auto got = values_of<int16_t>(sum.run({bytes_of(x)})[0]);
    const tflite_math::Multiplier m = tflite_math::quantize_multiplier(0.25);
    for (size_t c = 0; c < 4; ++c)
        EXPECT_EQ(got[c], std::clamp<int64_t>(tflite_math::multiply(int64_t{x[c]} + x[4 + c] + x[8 + c], m), INT16_MIN, INT16_MAX));

    HostGraph mean{"MEAN", {{{2, 3}, ElementType::Float32}, ints({-1}), {{2}, ElementType::Float32}}, {0, 1}, {2}};
    const std::vector<float> f = {0.1f, 0.2f, 0.7f, -1.0f, 1e-8f, 3.0f};
    const auto fm = values_of<float>(mean.run({bytes_of(f)})[0]);
    EXPECT_EQ(fm[0], (0.1f + 0.2f + 0.7f) / 3.0f);
    EXPECT_EQ(fm[1], (-1.0f + 1e-8f + 3.0f) / 3.0f);
}

TEST(ReduceKernels, ArgMaxAndArgMinTakeTheFirstExtreme) {
    const std::vector<int8_t> x = {3, 7, 7, -2, /**/ 5, 5, -9, -9, /**/ 0, 1, 2, 3};  // [3, 4]
    HostGraph arg_max{"ARG_MAX", {{{3, 4}, ElementType::Int8, {1.0f}, {0}}, ints({1}), {{3}, ElementType::Int32}}, {0, 1}, {2}};
    HostGraph arg_min = arg_max;
    arg_min.builtin = "ARG_MIN";
    EXPECT_EQ(values_of<int32_t>(arg_max.run({bytes_of(x)})[0]), (std::vector<int32_t>{1, 0, 3}));
    EXPECT_EQ(values_of<int32_t>(arg_min.run({bytes_of(x)})[0]), (std::vector<int32_t>{3, 2, 0}));
    HostGraph columns{"ARG_MAX", {{{3, 4}, ElementType::Int8, {1.0f}, {0}}, ints({-2}), {{4}, ElementType::Int32}}, {0, 1}, {2}};
    EXPECT_EQ(values_of<int32_t>(columns.run({bytes_of(x)})[0]), (std::vector<int32_t>{1, 0, 0, 2}));
}

TEST(ResizeKernels, NearestNeighbourInt8) {
    const auto x = random_values<int8_t>(2 * 3 * 5 * 2, 23);
    for (const bool half_pixel : {false, true}) {
        HostGraph g{"RESIZE_NEAREST_NEIGHBOR",
                    {{{2, 3, 5, 2}, ElementType::Int8, {1.0f}, {0}}, ints({7, 4}), {{2, 7, 4, 2}, ElementType::Int8, {1.0f}, {0}}},
                    {0, 1},
                    {2}};
        tflite::ResizeNearestNeighborOptionsT options;
        options.half_pixel_centers = half_pixel;
        g.options = options_table(options);
        const auto got = values_of<int8_t>(g.run({bytes_of(x)})[0]);
        size_t i = 0;
        for (int b = 0; b < 2; ++b)
            for (int y = 0; y < 7; ++y)
                for (int w = 0; w < 4; ++w)
                    for (int c = 0; c < 2; ++c, ++i) {
                        const float offset = half_pixel ? 0.5f : 0.0f;
                        const int sy = std::min(static_cast<int>(std::floor((y + offset) * (3.0f / 7.0f))), 2);
                        const int sx = std::min(static_cast<int>(std::floor((w + offset) * (5.0f / 4.0f))), 4);
                        EXPECT_EQ(got[i], x[static_cast<size_t>(((b * 3 + sy) * 5 + sx) * 2 + c)]) << i;
                    }
    }
}

TEST(ResizeKernels, BilinearFloatAndInt8) {
    // 2x2 to 4x4 without half-pixel centres: samples at 0, 1/2, 1, 3/2 (the last reading row 1 twice).
    const std::vector<float> f = {0.0f, 4.0f, 8.0f, 16.0f};
    HostGraph g{"RESIZE_BILINEAR", {{{1, 2, 2, 1}, ElementType::Float32}, ints({4, 4}), {{1, 4, 4, 1}, ElementType::Float32}}, {0, 1}, {2}};
    const auto got = values_of<float>(g.run({bytes_of(f)})[0]);
    const auto at = [&](float y, float x) {
        const int y0 = static_cast<int>(y), x0 = static_cast<int>(x), y1 = std::min(static_cast<int>(std::ceil(y)), 1),
                  x1 = std::min(static_cast<int>(std::ceil(x)), 1);
        const float dy = y - y0, dx = x - x0;
        return f[static_cast<size_t>(y0 * 2 + x0)] * (1 - dy) * (1 - dx) + f[static_cast<size_t>(y1 * 2 + x0)] * dy * (1 - dx) +
               f[static_cast<size_t>(y0 * 2 + x1)] * (1 - dy) * dx + f[static_cast<size_t>(y1 * 2 + x1)] * dy * dx;
    };
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) EXPECT_EQ(got[static_cast<size_t>(y * 4 + x)], at(y * 0.5f, x * 0.5f) + 0.0f);
    EXPECT_EQ(got[5], 7.0f);  // (0 + 4 + 8 + 16) / 4

    // int8, half-pixel centres, 3x3 to 5x7: within one step of the real interpolation; the
    // 10-bit positions make it exact where they are.
    const auto x = random_values<int8_t>(9, 24);
    HostGraph q{"RESIZE_BILINEAR", {{{1, 3, 3, 1}, ElementType::Int8, {1.0f}, {0}}, ints({5, 7}), {{1, 5, 7, 1}, ElementType::Int8, {1.0f}, {0}}},
                {0, 1}, {2}};
    tflite::ResizeBilinearOptionsT half_pixel;
    half_pixel.half_pixel_centers = true;
    q.options = options_table(half_pixel);
    const auto qi = values_of<int8_t>(q.run({bytes_of(x)})[0]);
    for (int y = 0; y < 5; ++y)
        for (int w = 0; w < 7; ++w) {
            const double py = std::max((y + 0.5) * 3 / 5 - 0.5, 0.0), px = std::max((w + 0.5) * 3 / 7 - 0.5, 0.0);
            const int y0 = static_cast<int>(py), x0 = static_cast<int>(px), y1 = std::min(y0 + 1, 2), x1 = std::min(x0 + 1, 2);
            const double dy = py - y0, dx = px - x0;
            const double real = x[static_cast<size_t>(y0 * 3 + x0)] * (1 - dy) * (1 - dx) + x[static_cast<size_t>(y1 * 3 + x0)] * dy * (1 - dx) +
                                x[static_cast<size_t>(y0 * 3 + x1)] * (1 - dy) * dx + x[static_cast<size_t>(y1 * 3 + x1)] * dy * dx;
            EXPECT_NEAR(qi[static_cast<size_t>(y * 7 + w)], real, 1.0) << y << "," << w;
        }
}

TEST(ReduceKernels, RefusesWhatTflmRefuses) {
    HostGraph wrong_shape{"MEAN", {{{2, 3}, ElementType::Int8, {0.1f}, {0}}, ints({1}), {{2, 1}, ElementType::Int8, {0.1f}, {0}}}, {0, 1}, {2}};
    EXPECT_THAT(refusal(wrong_shape), HasSubstr("reducing [2,3] gives [2]"));
    HostGraph bad_axis{"SUM", {{{2, 3}, ElementType::Float32}, ints({2}), {{2}, ElementType::Float32}}, {0, 1}, {2}};
    EXPECT_THAT(refusal(bad_axis), HasSubstr("axis 2 is outside a rank-2 tensor"));
    HostGraph int64_out{"ARG_MAX", {{{2, 3}, ElementType::Int8, {1.0f}, {0}}, ints({1}), {{2}, ElementType::Int64}}, {0, 1}, {2}};
    EXPECT_THAT(refusal(int64_out), HasSubstr("must be int32"));
    HostGraph empty_axis{"ARG_MIN", {{{2, 0}, ElementType::Float32}, ints({1}), {{2}, ElementType::Int32}}, {0, 1}, {2}};
    EXPECT_THAT(refusal(empty_axis), HasSubstr("axis 1 of 't0' is empty"));
    HostGraph no_pixels{"RESIZE_NEAREST_NEIGHBOR", {{{1, 0, 2, 1}, ElementType::Int8, {1.0f}, {0}}, ints({4, 4}),
                                                    {{1, 4, 4, 1}, ElementType::Int8, {1.0f}, {0}}}, {0, 1}, {2}};
    EXPECT_THAT(refusal(no_pixels), HasSubstr("no pixels to resize"));
    HostGraph both{"RESIZE_BILINEAR", {{{1, 2, 2, 1}, ElementType::Float32}, ints({4, 4}), {{1, 4, 4, 1}, ElementType::Float32}}, {0, 1}, {2}};
    tflite::ResizeBilinearOptionsT both_set;
    both_set.align_corners = both_set.half_pixel_centers = true;
    both.options = options_table(both_set);
    EXPECT_THAT(refusal(both), HasSubstr("half_pixel_centers and align_corners"));
    HostGraph wide{"RESIZE_BILINEAR", {{{1, 2, 2, 1}, ElementType::Int16, {1.0f}, {0}}, ints({4, 4}), {{1, 4, 4, 1}, ElementType::Int16, {1.0f}, {0}}},
                   {0, 1}, {2}};
    EXPECT_THAT(refusal(wide), HasSubstr("takes float32, int8,"));
}

}  // namespace
}  // namespace ethosu::test
