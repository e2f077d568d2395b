#include "emulator/isa/npu_config.h"

#include <array>

namespace ethosu {
namespace {

constexpr uint32_t kU55U65VelaId = 0x10066001;  // arch 1.0.6, as Vela writes for U55 and U65
constexpr uint32_t kU85VelaId = 0x20007000;     // arch 2.0.0
constexpr uint32_t kU55HwId = 0x10104201, kU65HwId = 0x10066001, kU85HwId = 0x20007001;

constexpr uint32_t log2_of(int n) {
    uint32_t log2 = 0;
    while ((1 << (log2 + 1)) <= n) ++log2;
    return log2;
}

// The CONFIG word Vela writes for a configuration, from the row's facts. U55/U65:
// product[31:28] | shram_kb[15:8] | log2(macs)[3:0]. U85: product[31:28] | log2(weight
// decoders)[13:12] | log2(ext ports)[10] | log2(sram ports)[9:8] | cmd_stream_version(1)[7:4] |
// log2(macs)[3:0].
constexpr NpuConfig with_config_word(NpuConfig c) {
    const uint32_t log2_macs = log2_of(c.macs);
    switch (c.generation) {
        case Generation::U55: c.config_word = (0u << 28) | (uint32_t(c.shram_kb) << 8) | log2_macs; break;
        case Generation::U65: c.config_word = (1u << 28) | (uint32_t(c.shram_kb) << 8) | log2_macs; break;
        case Generation::U85:
            c.config_word = (2u << 28) | (log2_of(c.cores) << 12) | (log2_of(c.axi_ext_ports) << 10) |
                            (log2_of(c.axi_sram_ports) << 8) | (1u << 4) | log2_macs;
            break;
    }
    return c;
}

// In Generation order. The vela.ini defaults are those Vela picks when given none (the corpus's
// vela_stdout.txt warnings name them); the AXI widths and outstanding work those of Vela's
// architecture_features.py (axi_port_width 64 on U55, 128 otherwise).
constexpr std::array<NpuTraits, 3> kTraits = {
    NpuTraits{.generation = Generation::U55,
              .cost_model = CostModel::U55,
              .weight_encoding = WeightEncoding::PerCore,
              .activation_names_lut_type = false,
              .elementwise_scales_each_operand = false,
              .average_pool_always_divides = false,
              .vela_ini_prefix = "Ethos_U55_",
              .default_system_config = "Ethos_U55_High_End_Embedded",
              .default_memory_mode = "Shared_Sram",
              .axi_data_bytes = 8,
              .max_outstanding_kernel_ops = 2,
              .max_outstanding_dmas = 1},
    NpuTraits{.generation = Generation::U65,
              .cost_model = CostModel::U55,
              .weight_encoding = WeightEncoding::PerCore,
              .activation_names_lut_type = false,
              .elementwise_scales_each_operand = false,
              .average_pool_always_divides = false,
              .vela_ini_prefix = "Ethos_U65_",
              .default_system_config = "Ethos_U65_Client_Server",
              .default_memory_mode = "Dedicated_Sram_384KB",
              .axi_data_bytes = 16,
              .max_outstanding_kernel_ops = 2,
              .max_outstanding_dmas = 2},
    NpuTraits{.generation = Generation::U85,
              .cost_model = CostModel::U85,
              .weight_encoding = WeightEncoding::PerDecoder,
              .activation_names_lut_type = true,
              .elementwise_scales_each_operand = true,
              .average_pool_always_divides = true,
              .vela_ini_prefix = "Ethos_U85_",
              .default_system_config = "Ethos_U85_SYS_DRAM_Mid",
              .default_memory_mode = "Dedicated_Sram_384KB",
              .axi_data_bytes = 16,
              .max_outstanding_kernel_ops = 2,
              .max_outstanding_dmas = 4},
};

// One row per configuration, Generation order within the list. Sources: MACs, cores, SHRAM and
// AXI ports as Vela's CONFIG words give them (Vela 3.10 architecture_features.py, 5.1 regor's
// ethos_u55.cpp / ethos_u85.cpp accelerator tables); the OFM micro-blocks and accumulator RAM
// from those tables (U55/U65: s_EthosU55Configs; U85: s_EthosU85Configs); the ID words as the
// corpus's COP headers and Arm's interface headers' ID reset values give them.
constexpr std::array kConfigs = {
    with_config_word({.name = "ethos-u55-32",
                      .generation = Generation::U55,
                      .macs = 32,
                      .cores = 1,
                      .shram_kb = 16,
                      .axi_sram_ports = 1,
                      .axi_ext_ports = 1,
                      .micro_blocks = {{{1, 1, 4}}},
                      .micro_block_count = 1,
                      .accumulator_ram_bytes = 0,
                      .ifm_block_depth_16_deep_ublock = 0,
                      .depthwise_weight_padding_8bit = 0,
                      .depthwise_weight_padding_16bit = 0,
                      .id_word = kU55U65VelaId,
                      .hw_id_reset = kU55HwId}),
    with_config_word({.name = "ethos-u55-64",
                      .generation = Generation::U55,
                      .macs = 64,
                      .cores = 1,
                      .shram_kb = 16,
                      .axi_sram_ports = 1,
                      .axi_ext_ports = 1,
                      .micro_blocks = {{{1, 1, 8}}},
                      .micro_block_count = 1,
                      .accumulator_ram_bytes = 0,
                      .ifm_block_depth_16_deep_ublock = 0,
                      .depthwise_weight_padding_8bit = 0,
                      .depthwise_weight_padding_16bit = 0,
                      .id_word = kU55U65VelaId,
                      .hw_id_reset = kU55HwId}),
    with_config_word({.name = "ethos-u55-128",
                      .generation = Generation::U55,
                      .macs = 128,
                      .cores = 1,
                      .shram_kb = 24,
                      .axi_sram_ports = 1,
                      .axi_ext_ports = 1,
                      .micro_blocks = {{{1, 2, 8}}},
                      .micro_block_count = 1,
                      .accumulator_ram_bytes = 0,
                      .ifm_block_depth_16_deep_ublock = 0,
                      .depthwise_weight_padding_8bit = 0,
                      .depthwise_weight_padding_16bit = 0,
                      .id_word = kU55U65VelaId,
                      .hw_id_reset = kU55HwId}),
    with_config_word({.name = "ethos-u55-256",
                      .generation = Generation::U55,
                      .macs = 256,
                      .cores = 1,
                      .shram_kb = 48,
                      .axi_sram_ports = 1,
                      .axi_ext_ports = 1,
                      .micro_blocks = {{{2, 2, 8}}},
                      .micro_block_count = 1,
                      .accumulator_ram_bytes = 0,
                      .ifm_block_depth_16_deep_ublock = 0,
                      .depthwise_weight_padding_8bit = 0,
                      .depthwise_weight_padding_16bit = 0,
                      .id_word = kU55U65VelaId,
                      .hw_id_reset = kU55HwId}),
    with_config_word({.name = "ethos-u65-256",
                      .generation = Generation::U65,
                      .macs = 256,
                      .cores = 1,
                      .shram_kb = 48,
                      .axi_sram_ports = 1,
                      .axi_ext_ports = 1,
                      .micro_blocks = {{{2, 2, 8}}},
                      .micro_block_count = 1,
                      .accumulator_ram_bytes = 0,
                      .ifm_block_depth_16_deep_ublock = 0,
                      .depthwise_weight_padding_8bit = 0,
                      .depthwise_weight_padding_16bit = 0,
                      .id_word = kU55U65VelaId,
                      .hw_id_reset = kU65HwId}),
    with_config_word({.name = "ethos-u65-512",
                      .generation = Generation::U65,
                      .macs = 512,
                      .cores = 2,
                      .shram_kb = 96,
                      .axi_sram_ports = 1,
                      .axi_ext_ports = 1,
                      .micro_blocks = {{{2, 2, 8}}},
                      .micro_block_count = 1,
                      .accumulator_ram_bytes = 0,
                      .ifm_block_depth_16_deep_ublock = 0,
                      .depthwise_weight_padding_8bit = 0,
                      .depthwise_weight_padding_16bit = 0,
                      .id_word = kU55U65VelaId,
                      .hw_id_reset = kU65HwId}),
    with_config_word({.name = "ethos-u85-128",
                      .generation = Generation::U85,
                      .macs = 128,
                      .cores = 1,
                      .shram_kb = 0,
                      .axi_sram_ports = 2,
                      .axi_ext_ports = 1,
                      .micro_blocks = {{{1, 2, 8}, {1, 1, 16}}},
                      .micro_block_count = 2,
                      .accumulator_ram_bytes = 8192,
                      .ifm_block_depth_16_deep_ublock = 32,
                      .depthwise_weight_padding_8bit = 0,
                      .depthwise_weight_padding_16bit = 2,
                      .id_word = kU85VelaId,
                      .hw_id_reset = kU85HwId}),
    with_config_word({.name = "ethos-u85-256",
                      .generation = Generation::U85,
                      .macs = 256,
                      .cores = 1,
                      .shram_kb = 0,
                      .axi_sram_ports = 2,
                      .axi_ext_ports = 1,
                      .micro_blocks = {{{1, 2, 16}, {1, 4, 8}, {2, 2, 8}}},
                      .micro_block_count = 3,
                      .accumulator_ram_bytes = 16384,
                      .ifm_block_depth_16_deep_ublock = 32,
                      .depthwise_weight_padding_8bit = 0,
                      .depthwise_weight_padding_16bit = 2,
                      .id_word = kU85VelaId,
                      .hw_id_reset = kU85HwId}),
    with_config_word({.name = "ethos-u85-512",
                      .generation = Generation::U85,
                      .macs = 512,
                      .cores = 2,
                      .shram_kb = 0,
                      .axi_sram_ports = 2,
                      .axi_ext_ports = 1,
                      .micro_blocks = {{{2, 2, 16}, {1, 4, 16}}},
                      .micro_block_count = 2,
                      .accumulator_ram_bytes = 32768,
                      .ifm_block_depth_16_deep_ublock = 64,
                      .depthwise_weight_padding_8bit = 2,
                      .depthwise_weight_padding_16bit = 2,
                      .id_word = kU85VelaId,
                      .hw_id_reset = kU85HwId}),
    with_config_word({.name = "ethos-u85-1024",
                      .generation = Generation::U85,
                      .macs = 1024,
                      .cores = 4,
                      .shram_kb = 0,
                      .axi_sram_ports = 2,
                      .axi_ext_ports = 2,
                      .micro_blocks = {{{2, 2, 32}, {1, 4, 32}, {2, 4, 16}}},
                      .micro_block_count = 3,
                      .accumulator_ram_bytes = 65536,
                      .ifm_block_depth_16_deep_ublock = 64,
                      .depthwise_weight_padding_8bit = 6,
                      .depthwise_weight_padding_16bit = 6,
                      .id_word = kU85VelaId,
                      .hw_id_reset = kU85HwId}),
    with_config_word({.name = "ethos-u85-2048",
                      .generation = Generation::U85,
                      .macs = 2048,
                      .cores = 4,
                      .shram_kb = 0,
                      .axi_sram_ports = 4,
                      .axi_ext_ports = 2,
                      .micro_blocks = {{{2, 2, 64}, {1, 4, 64}, {4, 4, 16}}},
                      .micro_block_count = 3,
                      .accumulator_ram_bytes = 131072,
                      .ifm_block_depth_16_deep_ublock = 64,
                      .depthwise_weight_padding_8bit = 6,
                      .depthwise_weight_padding_16bit = 6,
                      .id_word = kU85VelaId,
                      .hw_id_reset = kU85HwId}),
};

}  // namespace

std::string_view generation_name(Generation g) {
    switch (g) {
        case Generation::U55: return "ethos-u55";
        case Generation::U65: return "ethos-u65";
        case Generation::U85: return "ethos-u85";
    }
    return "?";
}

const NpuTraits& npu_traits(Generation g) { return kTraits.at(static_cast<size_t>(g)); }

std::span<const NpuTraits> all_npu_traits() { return kTraits; }

std::span<const NpuConfig> all_npu_configs() { return kConfigs; }

std::optional<NpuConfig> find_npu_config(std::string_view name) {
    for (const auto& c : kConfigs)
        if (c.name == name) return c;
    return std::nullopt;
}

std::optional<NpuConfig> npu_config_from_config_word(uint32_t config_word) {
    const uint32_t product = config_word >> 28;
    const uint32_t log2_macs = config_word & 0xF;
    for (const auto& c : kConfigs) {
        if ((c.config_word >> 28) == product && (c.config_word & 0xF) == log2_macs) return c;
    }
    return std::nullopt;
}

std::optional<size_t> NpuConfig::micro_block_index(int height, int width) const {
    const auto offered = offered_micro_blocks();
    for (size_t i = 0; i < offered.size(); ++i)
        if (offered[i].height == height && offered[i].width == width) return i;
    return std::nullopt;
}

int u85_conv_ifm_block_depth(const NpuConfig& config, const MicroBlockShape& ublock, bool part_kernel_first,
                             int ifm_bits, bool sparse_2_4) {
    if (part_kernel_first) return 16;
    if (ifm_bits == 32) return 32;
    if (sparse_2_4) return ifm_bits == 8 ? 128 : 64;
    return ublock.depth == 16 ? config.ifm_block_depth_16_deep_ublock : 64;
}

std::string npu_config_names() {
    std::string names;
    for (const auto& c : kConfigs) {
        if (!names.empty()) names += ", ";
        names += c.name;
    }
    return names;
}

}  // namespace ethosu
