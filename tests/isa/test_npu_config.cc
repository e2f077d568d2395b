// The configuration table: every row sets every fact, the facts agree with each other and with
// the CONFIG words Vela writes, and lookups find exactly the table's configurations.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "emulator/isa/npu_config.h"

namespace ethosu {
namespace {

bool set(const MicroBlockShape& u) { return u.height > 0 && u.width > 0 && u.depth > 0; }

// No fact left at its unset value; a fact a generation lacks is 0 there and set elsewhere.
TEST(NpuConfig, EveryRowSetsEveryFact) {
    for (const NpuConfig& c : all_npu_configs()) {
        SCOPED_TRACE(std::string(c.name));
        EXPECT_FALSE(c.name.empty());
        EXPECT_GT(c.macs, 0);
        EXPECT_GT(c.cores, 0);
        EXPECT_GT(c.axi_sram_ports, 0);
        EXPECT_GT(c.axi_ext_ports, 0);
        ASSERT_GE(c.micro_block_count, 1);
        ASSERT_LE(c.micro_block_count, kMaxMicroBlocks);
        for (int i = 0; i < kMaxMicroBlocks; ++i)
            EXPECT_EQ(set(c.micro_blocks[static_cast<size_t>(i)]), i < c.micro_block_count) << "micro-block " << i;
        EXPECT_NE(c.config_word, 0u);
        EXPECT_NE(c.id_word, 0u);
        EXPECT_NE(c.hw_id_reset, 0u);
        const bool u85 = c.generation == Generation::U85;
        EXPECT_GE(c.shram_kb, 0);
        EXPECT_EQ(c.shram_kb == 0, u85);
        EXPECT_EQ(c.accumulator_ram_bytes > 0, u85);
        EXPECT_EQ(c.ifm_block_depth_16_deep_ublock > 0, u85);
        EXPECT_GE(c.depthwise_weight_padding_8bit, 0);
        EXPECT_GE(c.depthwise_weight_padding_16bit, 0);
        if (!u85) {
            EXPECT_EQ(c.accumulator_ram_bytes, 0);
            EXPECT_EQ(c.ifm_block_depth_16_deep_ublock, 0);
            EXPECT_EQ(c.depthwise_weight_padding_8bit, 0);
            EXPECT_EQ(c.depthwise_weight_padding_16bit, 0);
            EXPECT_EQ(c.micro_block_count, 1);
        }
    }
}

// What the checks above catch: a row that leaves a fact out.
TEST(NpuConfig, AnUnsetFactIsDetectable) {
    const NpuConfig unset{.name = "unset", .generation = Generation::U85};
    EXPECT_EQ(unset.macs, 0);
    EXPECT_EQ(unset.shram_kb, kUnsetFact);
    EXPECT_EQ(unset.accumulator_ram_bytes, kUnsetFact);
    EXPECT_EQ(unset.ifm_block_depth_16_deep_ublock, kUnsetFact);
    EXPECT_EQ(unset.depthwise_weight_padding_8bit, kUnsetFact);
    EXPECT_EQ(unset.depthwise_weight_padding_16bit, kUnsetFact);
    EXPECT_FALSE(set(unset.micro_blocks[0]));
    EXPECT_TRUE(unset.offered_micro_blocks().empty());
}

// Names are unique, each finds its own row, the list of valid names is the table's, and the
// CONFIG word (derived from the row) finds the row back.
TEST(NpuConfig, LookupsFindExactlyTheTable) {
    std::set<std::string> names;
    std::string listed;
    for (const NpuConfig& c : all_npu_configs()) {
        EXPECT_TRUE(names.insert(std::string(c.name)).second) << c.name << " twice";
        const auto found = find_npu_config(c.name);
        ASSERT_TRUE(found) << c.name;
        EXPECT_EQ(found->config_word, c.config_word);
        const auto by_word = npu_config_from_config_word(c.config_word);
        ASSERT_TRUE(by_word) << c.name;
        EXPECT_EQ(by_word->name, c.name);
        listed += (listed.empty() ? "" : ", ") + std::string(c.name);
    }
    EXPECT_EQ(npu_config_names(), listed);
    EXPECT_FALSE(find_npu_config("ethos-u85"));  // a generation, not a configuration
    EXPECT_FALSE(find_npu_config(""));
}

// The CONFIG words Vela writes into the COP header (as the corpus's streams carry them): the
// derivation from the row's MACs, SHRAM, ports and weight decoders gives them back.
TEST(NpuConfig, ConfigWordsAreVelas) {
    const std::pair<const char*, uint32_t> vela[] = {
        {"ethos-u55-32", 0x00001005},   {"ethos-u55-64", 0x00001006},   {"ethos-u55-128", 0x00001807},
        {"ethos-u55-256", 0x00003008},  {"ethos-u65-256", 0x10003008},  {"ethos-u65-512", 0x10006009},
        {"ethos-u85-128", 0x20000117},  {"ethos-u85-256", 0x20000118},  {"ethos-u85-512", 0x20001119},
        {"ethos-u85-1024", 0x2000251a}, {"ethos-u85-2048", 0x2000261b},
    };
    for (const auto& [name, word] : vela) EXPECT_EQ(find_npu_config(name)->config_word, word) << name;
}

// A micro-block is found by its height and width; the depth is the configuration's.
TEST(NpuConfig, MicroBlockLookup) {
    const NpuConfig c = *find_npu_config("ethos-u85-256");
    ASSERT_TRUE(c.micro_block_index(1, 4));
    EXPECT_EQ(c.micro_blocks[*c.micro_block_index(1, 4)], (MicroBlockShape{1, 4, 8}));
    EXPECT_FALSE(c.micro_block_index(1, 1));
    EXPECT_FALSE(c.micro_block_index(4, 4));
}

// U85 convolution IFM block depth (Vela 5.1 FindBlockConfig): part-kernel-first 16, 32-bit IFM
// 32, a 16-deep micro-block on the 128- and 256-MAC arrays 32, sparse 8-bit 128, else 64.
TEST(NpuConfig, U85ConvIfmBlockDepth) {
    const NpuConfig u128 = *find_npu_config("ethos-u85-128");
    const NpuConfig u512 = *find_npu_config("ethos-u85-512");
    const MicroBlockShape deep16{1, 1, 16}, deep8{1, 2, 8}, deep16_512{2, 2, 16};
    EXPECT_EQ(u85_conv_ifm_block_depth(u128, deep16, true, 8, false), 16);
    EXPECT_EQ(u85_conv_ifm_block_depth(u128, deep8, false, 32, false), 32);
    EXPECT_EQ(u85_conv_ifm_block_depth(u128, deep16, false, 8, false), 32);
    EXPECT_EQ(u85_conv_ifm_block_depth(u128, deep16, false, 16, false), 32);
    EXPECT_EQ(u85_conv_ifm_block_depth(u128, deep8, false, 8, false), 64);
    EXPECT_EQ(u85_conv_ifm_block_depth(u128, deep16, false, 8, true), 128);
    EXPECT_EQ(u85_conv_ifm_block_depth(u128, deep16, false, 16, true), 64);
    EXPECT_EQ(u85_conv_ifm_block_depth(u512, deep16_512, false, 8, false), 64);
}

}  // namespace
}  // namespace ethosu
