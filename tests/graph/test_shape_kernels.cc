// PAD, PADV2, TRANSPOSE, CONCATENATION, PACK, SPLIT, SPLIT_V, UNPACK, SLICE, STRIDED_SLICE,
// SQUEEZE and EXPAND_DIMS against plain nested loops written from TFLite's definitions, and the
// refusals TFLM's Prepare makes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "tests/graph/host_graph.h"

namespace ethosu::test {
namespace {

using ::testing::HasSubstr;

template <class T>
std::vector<T> iota_values(size_t n, T first = T(1)) {
    std::vector<T> v(n);
    std::iota(v.begin(), v.end(), first);
    return v;
}

TEST(ShapeKernels, PadInt8WithZeroPointAndPadV2Float) {
    const HostTensor in{{1, 2, 3, 2}, ElementType::Int8, {0.5f}, {-7}};
    HostGraph pad{"PAD", {in, ints({0, 0, 1, 2, 0, 1, 2, 0}), {{1, 5, 4, 4}, ElementType::Int8, {0.5f}, {-7}}}, {0, 1}, {2}};
    const auto x = iota_values<int8_t>(12);
    const auto got = values_of<int8_t>(pad.run({bytes_of(x)})[0]);
    size_t i = 0;
    for (int h = 0; h < 5; ++h)
        for (int w = 0; w < 4; ++w)
            for (int c = 0; c < 4; ++c, ++i) {
                const bool inside = h >= 1 && h < 3 && w < 3 && c >= 2;
                EXPECT_EQ(got[i], inside ? x[static_cast<size_t>(((h - 1) * 3 + w) * 2 + c - 2)] : -7) << i;
            }

    HostTensor value{{1}, ElementType::Float32, {}, {}, bytes_of(std::vector<float>{2.5f})};
    HostGraph v2{"PADV2",
                 {{{3}, ElementType::Float32}, ints({2, 1}), value, {{6}, ElementType::Float32}},
                 {0, 1, 2},
                 {3}};
    EXPECT_EQ(values_of<float>(v2.run({bytes_of(std::vector<float>{1, 2, 3})})[0]),
              (std::vector<float>{2.5f, 2.5f, 1, 2, 3, 2.5f}));
}

TEST(ShapeKernels, TransposeInt16) {
    const std::vector<int64_t> s = {2, 3, 4, 5};
    HostGraph g{"TRANSPOSE",
                {{s, ElementType::Int16, {1.0f}, {0}}, ints({0, 3, 1, 2}), {{2, 5, 3, 4}, ElementType::Int16, {1.0f}, {0}}},
                {0, 1},
                {2}};
    const auto x = iota_values<int16_t>(120);
    const auto got = values_of<int16_t>(g.run({bytes_of(x)})[0]);
    size_t i = 0;
    for (int n = 0; n < 2; ++n)
        for (int c = 0; c < 5; ++c)
            for (int h = 0; h < 3; ++h)
                for (int w = 0; w < 4; ++w, ++i) EXPECT_EQ(got[i], x[static_cast<size_t>(((n * 3 + h) * 4 + w) * 5 + c)]);
}

TEST(ShapeKernels, ConcatenationAndPack) {
    const HostTensor a{{2, 1, 3}, ElementType::Int8, {0.1f}, {2}}, b{{2, 2, 3}, ElementType::Int8, {0.1f}, {2}};
    HostGraph g{"CONCATENATION", {a, b, {{2, 3, 3}, ElementType::Int8, {0.1f}, {2}}}, {0, 1}, {2}};
    tflite::ConcatenationOptionsT concatenation;
    concatenation.axis = -2;
    g.options = options_table(concatenation);
    const auto x = iota_values<int8_t>(6), y = iota_values<int8_t>(12, 50);
    const auto got = values_of<int8_t>(g.run({bytes_of(x), bytes_of(y)})[0]);
    size_t i = 0;
    for (int n = 0; n < 2; ++n)
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c, ++i)
                EXPECT_EQ(got[i], r == 0 ? x[static_cast<size_t>(n * 3 + c)] : y[static_cast<size_t>((n * 2 + r - 1) * 3 + c)]);

    HostGraph pack{"PACK", {{{2, 3}, ElementType::Float32}, {{2, 3}, ElementType::Float32}, {{2, 2, 3}, ElementType::Float32}},
                   {0, 1}, {2}};
    tflite::PackOptionsT pack_options;
    pack_options.values_count = 2;
    pack_options.axis = 1;
    pack.options = options_table(pack_options);
    const auto p = iota_values<float>(6), q = iota_values<float>(6, 10.0f);
    const auto packed = values_of<float>(pack.run({bytes_of(p), bytes_of(q)})[0]);
    i = 0;
    for (int n = 0; n < 2; ++n)
        for (int k = 0; k < 2; ++k)
            for (int c = 0; c < 3; ++c, ++i) EXPECT_EQ(packed[i], (k == 0 ? p : q)[static_cast<size_t>(n * 3 + c)]);
}

TEST(ShapeKernels, SplitSplitVAndUnpack) {
    const auto x = iota_values<int32_t>(24);
    HostGraph split{"SPLIT",
                    {ints({-1}), {{2, 3, 4}, ElementType::Int32}, {{2, 3, 2}, ElementType::Int32}, {{2, 3, 2}, ElementType::Int32}},
                    {0, 1},
                    {2, 3}};
    split.tensors[0].shape = {};
    const auto halves = split.run({bytes_of(x)});
    for (int k = 0; k < 2; ++k) {
        const auto h = values_of<int32_t>(halves[static_cast<size_t>(k)]);
        for (size_t i = 0; i < 12; ++i) EXPECT_EQ(h[i], x[(i / 2) * 4 + static_cast<size_t>(k) * 2 + i % 2]);
    }
    HostGraph split_v{"SPLIT_V",
                      {{{2, 3, 4}, ElementType::Int32}, ints({1, -1}), ints({1}), {{2, 1, 4}, ElementType::Int32},
                       {{2, 2, 4}, ElementType::Int32}},
                      {0, 1, 2},
                      {3, 4}};
    const auto parts = split_v.run({bytes_of(x)});
    const auto first = values_of<int32_t>(parts[0]), rest = values_of<int32_t>(parts[1]);
    for (size_t n = 0; n < 2; ++n)
        for (size_t c = 0; c < 4; ++c) {
            EXPECT_EQ(first[n * 4 + c], x[n * 12 + c]);
            for (size_t r = 0; r < 2; ++r) EXPECT_EQ(rest[(n * 2 + r) * 4 + c], x[n * 12 + (r + 1) * 4 + c]);
        }
    HostGraph unpack{"UNPACK",
                     {{{2, 3, 4}, ElementType::Int32}, {{2, 4}, ElementType::Int32}, {{2, 4}, ElementType::Int32},
                      {{2, 4}, ElementType::Int32}},
                     {0},
                     {1, 2, 3}};
    tflite::UnpackOptionsT unpack_options;
    unpack_options.num = 3;
    unpack_options.axis = 1;
    unpack.options = options_table(unpack_options);
    const auto rows = unpack.run({bytes_of(x)});
    for (size_t r = 0; r < 3; ++r) {
        const auto row = values_of<int32_t>(rows[r]);
        for (size_t n = 0; n < 2; ++n)
            for (size_t c = 0; c < 4; ++c) EXPECT_EQ(row[n * 4 + c], x[n * 12 + r * 4 + c]);
    }
}

TEST(ShapeKernels, SliceAndStridedSlice) {
    const auto x = iota_values<int8_t>(60);  // [3, 4, 5]
    HostGraph slice{"SLICE",
                    {{{3, 4, 5}, ElementType::Int8}, ints({1, 0, 2}), ints({2, -1, 2}), {{2, 4, 2}, ElementType::Int8}},
                    {0, 1, 2},
                    {3}};
    const auto s = values_of<int8_t>(slice.run({bytes_of(x)})[0]);
    size_t i = 0;
    for (size_t a = 1; a < 3; ++a)
        for (size_t b = 0; b < 4; ++b)
            for (size_t c = 2; c < 4; ++c, ++i) EXPECT_EQ(s[i], x[(a * 4 + b) * 5 + c]);

    // begin [-1, 0, 0] end [0, 4, 5] strides [-1, 2, 1], begin mask on axis 1 (ignored begin),
    // end mask on axis 0 (to the front), shrink on axis 2 (one column, begin 0).
    HostGraph strided{"STRIDED_SLICE",
                      {{{3, 4, 5}, ElementType::Int8}, ints({-1, 3, 0}), ints({0, 4, 5}), ints({-1, 2, 1}),
                       {{3, 2}, ElementType::Int8}},
                      {0, 1, 2, 3},
                      {4}};
    tflite::StridedSliceOptionsT masks;
    masks.begin_mask = 0b010;
    masks.end_mask = 0b001;
    masks.shrink_axis_mask = 0b100;
    strided.options = options_table(masks);
    const auto t = values_of<int8_t>(strided.run({bytes_of(x)})[0]);
    i = 0;
    for (int a = 2; a >= 0; --a)
        for (size_t b = 0; b < 4; b += 2, ++i) EXPECT_EQ(t[i], x[(static_cast<size_t>(a) * 4 + b) * 5]);
}

TEST(ShapeKernels, GatherWithBatchDimensions) {
    // input [2, 3, 4], positions [2, 2] per batch, axis 1, batch_dims 1: out[b][k][c] = in[b][pos[b][k]][c].
    const auto x = iota_values<float>(24);
    HostGraph g{"GATHER", {{{2, 3, 4}, ElementType::Float32}, {{2, 2}, ElementType::Int32}, {{2, 2, 4}, ElementType::Float32}},
                {0, 1}, {2}};
    tflite::GatherOptionsT gather;
    gather.axis = 1;
    gather.batch_dims = 1;
    g.options = options_table(gather);
    const std::vector<int32_t> positions = {2, 0, 1, 1};
    const auto got = values_of<float>(g.run({bytes_of(x), bytes_of(positions)})[0]);
    for (size_t b = 0; b < 2; ++b)
        for (size_t k = 0; k < 2; ++k)
            for (size_t c = 0; c < 4; ++c)
                EXPECT_EQ(got[(b * 2 + k) * 4 + c], x[(b * 3 + static_cast<size_t>(positions[b * 2 + k])) * 4 + c]);
    // A position outside the axis ends the run with an error naming the operator.
    try {
        g.run({bytes_of(x), bytes_of(std::vector<int32_t>{0, 3, 0, 0})});
        ADD_FAILURE() << "position 3 accepted";
    } catch (const Error& e) {
        EXPECT_THAT(e.what(), HasSubstr("operators[0] (GATHER): position 3 is outside the axis of 3 elements"));
    }
}

TEST(ShapeKernels, SqueezeAndExpandDimsCopy) {
    const auto x = iota_values<float>(6);
    HostGraph squeeze{"SQUEEZE", {{{1, 2, 1, 3}, ElementType::Float32}, {{2, 3}, ElementType::Float32}}, {0}, {1}};
    EXPECT_EQ(values_of<float>(squeeze.run({bytes_of(x)})[0]), x);
    HostGraph expand{"EXPAND_DIMS", {{{2, 3}, ElementType::Float32}, ints({0}), {{1, 2, 3}, ElementType::Float32}}, {0, 1}, {2}};
    EXPECT_EQ(values_of<float>(expand.run({bytes_of(x)})[0]), x);
}

TEST(ShapeKernels, RefusesWhatTflmRefuses) {
    const HostTensor in{{1, 2, 3}, ElementType::Int8, {0.5f}, {0}};
    EXPECT_THAT(refusal({"PAD", {in, ints({0, 0, 1, 1, 0, 0}), {{1, 4, 4}, ElementType::Int8, {0.5f}, {0}}}, {0, 1}, {2}}),
                HasSubstr("parameters give [1,4,3]"));
    EXPECT_THAT(refusal({"PAD", {in, ints({0, 0, -1, 1, 0, 0}), {{1, 2, 3}, ElementType::Int8, {0.5f}, {0}}}, {0, 1}, {2}}),
                HasSubstr("negative"));
    HostGraph variable_paddings{"PAD", {in, {{6}, ElementType::Int32}, {{1, 4, 3}, ElementType::Int8, {0.5f}, {0}}}, {0, 1}, {2}};
    EXPECT_THAT(refusal(variable_paddings), HasSubstr("must be a constant"));
    EXPECT_THAT(refusal({"TRANSPOSE", {in, ints({0, 0, 1}), {{1, 1, 2}, ElementType::Int8}}, {0, 1}, {2}}),
                HasSubstr("not a permutation"));
    HostGraph rescaled{"CONCATENATION", {in, {{1, 2, 3}, ElementType::Int8, {0.25f}, {0}}, {{2, 2, 3}, ElementType::Int8, {0.5f}, {0}}},
                       {0, 1}, {2}};
    EXPECT_THAT(refusal(rescaled), HasSubstr("quantized unlike the output"));
    HostGraph ellipsis{"STRIDED_SLICE", {in, ints({0, 0, 0}), ints({1, 2, 3}), ints({1, 1, 1}), in}, {0, 1, 2, 3}, {4}};
    ellipsis.tensors[4].constant = {};
    tflite::StridedSliceOptionsT ellipsis_mask;
    ellipsis_mask.ellipsis_mask = 1;
    ellipsis.options = options_table(ellipsis_mask);
    EXPECT_THAT(refusal(ellipsis), HasSubstr("ellipsis mask"));
    HostGraph past_the_end{"STRIDED_SLICE", {in, ints({0, 0, 3}), ints({1, 2, 4}), ints({1, 1, 1}), {{1, 2}, ElementType::Int8}},
                           {0, 1, 2, 3}, {4}};
    tflite::StridedSliceOptionsT shrink;
    shrink.shrink_axis_mask = 0b100;
    past_the_end.options = options_table(shrink);
    EXPECT_THAT(refusal(past_the_end), HasSubstr("shrinks dimension 2 at 3, outside its 3 elements"));
    HostGraph uneven{"SPLIT", {ints({2}), {{1, 2, 3}, ElementType::Int8}, {{1, 2, 1}, ElementType::Int8}, {{1, 2, 2}, ElementType::Int8}},
                     {0, 1}, {2, 3}};
    uneven.tensors[0].shape = {};
    EXPECT_THAT(refusal(uneven), HasSubstr("not of equal size"));
    HostGraph gather_shape{"GATHER", {in, {{2}, ElementType::Int32}, {{1, 2, 3}, ElementType::Int8}}, {0, 1}, {2}};
    tflite::GatherOptionsT axis_2;
    axis_2.axis = 2;
    gather_shape.options = options_table(axis_2);
    EXPECT_THAT(refusal(gather_shape), HasSubstr("parameters give [1,2,2]"));
    EXPECT_THAT(refusal({"SLICE", {in, ints({0, 1, 0}), ints({1, 2, 3}), {{1, 2, 3}, ElementType::Int8}}, {0, 1, 2}, {3}}),
                HasSubstr("leave dimension 1"));
}

}  // namespace
}  // namespace ethosu::test
