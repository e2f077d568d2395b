// ExecuTorch's vela_bin_stream, built here block by block (the corpus has no sample).

#include <gtest/gtest.h>

#include <algorithm>

#include "frontend/loaders/model.h"
#include "loader_test_util.h"

namespace ethosu::test {
namespace {

using ::testing::HasSubstr;

const Bytes kWeights = {9, 8, 7, 6, 5};

struct Blocks {
    std::vector<std::pair<std::string, Bytes>> list;
    Bytes build() const {
        Bytes out;
        for (const auto& [name, data] : list) put_bytes(out, executorch_block(name, data));
        return out;
    }
};

Blocks good_blocks() {
    return {{
        {"vela_bin_stream", {}},
        {"cmd_data", cop1_payload(kU55_128Config, kU55Id, kSomeWords)},
        {"weight_data", kWeights},
        {"scratch_size", scratch_size_block(256)},
        {"inputs", io_block({{1, 1, 1, 4, 4, 2, 1, 0, 1}})},
        {"outputs", io_block({{1, 1, 1, 2, 2, 2, 1, 64, 1}, {1, 1, 1, 1, 1, 3, 2, 128, 1}})},
        {"vela_end_stream", {}},
    }};
}

std::string et_error(const Bytes& bytes) {
    return error_of([&] { load_executorch_bin("model.pte.bin", bytes, {}); });
}

TEST(ExecuTorch, LoadsAndIsDetected) {
    const auto model = load_model(write_temp("delegate.bin", good_blocks().build()), {});
    EXPECT_EQ(model->format, ModelFormat::ExecuTorchBin);
    EXPECT_EQ(model->config.name, "ethos-u55-128");
    ASSERT_EQ(model->invocations.size(), 1u);
    const NpuInvocation& inv = model->invocations[0];
    EXPECT_EQ(inv.stream.words, kSomeWords);
    EXPECT_EQ(inv.stream.file_offset, 32u + 32u + 32u);  // two block headers, then the COP1 header
    ASSERT_EQ(inv.regions.size(), 2u);
    EXPECT_TRUE(std::ranges::equal(inv.regions[0].bytes, kWeights));
    EXPECT_EQ(inv.regions[1].role, RegionRole::Scratch);
    EXPECT_EQ(inv.regions[1].size, 256u);
    ASSERT_EQ(model->inputs.size(), 1u);
    EXPECT_EQ(model->inputs[0].shape, (std::vector<int64_t>{1, 1, 1, 4, 4, 2}));
    EXPECT_EQ(model->inputs[0].size_bytes, 32u);
    ASSERT_EQ(model->outputs.size(), 2u);
    EXPECT_EQ(model->outputs[1].type, ElementType::Int16);
    EXPECT_EQ(model->outputs[1].offset, 128u);
    EXPECT_EQ(model->outputs[1].size_bytes, 6u);
}

// Vela's --separate-io-regions: inputs in region 3, outputs in region 4, each region spanning
// its tensors (the driver bases them at the caller's first input and output buffer).
TEST(ExecuTorch, SeparateIoRegionsGetTheirRegions) {
    Blocks direct = good_blocks();
    direct.list[4] = {"inputs", io_block({{1, 1, 1, 4, 4, 2, 1, 0, 3}, {1, 1, 1, 1, 1, 5, 1, 32, 3}})};
    direct.list[5] = {"outputs", io_block({{1, 1, 1, 2, 2, 2, 1, 0, 4}})};
    const auto model = load_model(write_temp("direct.bin", direct.build()), {});
    const auto& regions = model->invocations.at(0).regions;
    ASSERT_EQ(regions.size(), 4u);
    EXPECT_EQ(regions[2].index, 3);
    EXPECT_EQ(regions[2].role, RegionRole::Input);
    EXPECT_EQ(regions[2].size, 37u);  // the second input ends at 32 + 5
    EXPECT_EQ(regions[3].index, 4);
    EXPECT_EQ(regions[3].role, RegionRole::Output);
    EXPECT_EQ(regions[3].size, 8u);
}

TEST(ExecuTorch, OlderLayouts) {
    Blocks older = good_blocks();
    older.list[3] = {"scratch_data", Bytes(48, 0)};                 // scratch as a zero block
    older.list[4] = {"inputs", io_block({{1, 4, 4, 2, 1, 0, 1}})};  // 4-D entries
    older.list[5] = {"outputs", io_block({{1, 2, 2, 2, 1, 64, 1}})};
    const auto model = load_executorch_bin("old.bin", older.build(), {});
    EXPECT_EQ(model->invocations[0].regions[1].size, 48u);
    EXPECT_EQ(model->inputs[0].shape, (std::vector<int64_t>{1, 4, 4, 2}));
    EXPECT_EQ(model->outputs[0].offset, 64u);
}

TEST(ExecuTorch, HostileStreams) {
    const Bytes good = good_blocks().build();

    Bytes past_end = good;  // cmd_data claims more bytes than the file holds
    past_end[32 + 16] = 0xF0;
    past_end[32 + 17] = 0xFF;
    std::string e = et_error(past_end);
    EXPECT_THAT(e, HasSubstr("model.pte.bin"));
    EXPECT_THAT(e, HasSubstr("file@0x"));
    EXPECT_THAT(e, HasSubstr("cmd_data"));

    Blocks no_end = good_blocks();
    no_end.list.pop_back();
    EXPECT_THAT(et_error(no_end.build()), HasSubstr("no 'vela_end_stream'"));

    Bytes trailing = good;
    trailing.resize(trailing.size() + 16, 0);
    EXPECT_THAT(et_error(trailing), HasSubstr("follow the end block"));

    Blocks first = good_blocks();
    std::swap(first.list[0], first.list[1]);
    EXPECT_THAT(et_error(first.build()), HasSubstr("first block"));

    Blocks unknown = good_blocks();
    unknown.list.insert(unknown.list.begin() + 1, {"mystery", {1}});
    EXPECT_THAT(et_error(unknown.build()), HasSubstr("unknown block 'mystery'"));

    Blocks twice = good_blocks();
    twice.list.insert(twice.list.begin() + 2, twice.list[2]);
    EXPECT_THAT(et_error(twice.build()), HasSubstr("twice"));

    Blocks missing = good_blocks();
    missing.list.erase(missing.list.begin() + 2);
    EXPECT_THAT(et_error(missing.build()), HasSubstr("weight_data: required block missing"));

    Blocks both_scratch = good_blocks();
    both_scratch.list.insert(both_scratch.list.begin() + 3, {"scratch_data", Bytes(16, 0)});
    EXPECT_THAT(et_error(both_scratch.build()), HasSubstr("exactly one"));

    Blocks ragged_io = good_blocks();
    ragged_io.list[4].second.push_back(0);
    EXPECT_THAT(et_error(ragged_io.build()), HasSubstr("neither"));

    Blocks huge_count = good_blocks();
    huge_count.list[4].second = io_block({});
    huge_count.list[4].second[3] = 0x7F;
    EXPECT_THAT(et_error(huge_count.build()), HasSubstr("neither"));

    Blocks region = good_blocks();
    region.list[4] = {"inputs", io_block({{1, 1, 1, 4, 4, 2, 1, 0, 8}})};
    EXPECT_THAT(et_error(region.build()), HasSubstr("region 8"));

    Bytes external = good;
    external[32 + 20] = 1;  // cmd_data kept in ExecuTorch's named data map
    EXPECT_THAT(et_error(external), HasSubstr("external"));

    Bytes name = good;
    for (int i = 0; i < 16; ++i) name[32 + i] = 'x';
    EXPECT_THAT(et_error(name), HasSubstr("NUL-terminated"));
}

}  // namespace
}  // namespace ethosu::test
