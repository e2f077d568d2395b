#include "emulator/isa/npu_config.h"

#include <array>

namespace ethosu {
namespace {

constexpr uint32_t kU55U65VelaId = 0x10066001;  // arch 1.0.6, as Vela writes for U55 and U65
constexpr uint32_t kU85VelaId = 0x20007000;     // arch 2.0.0

// CONFIG word, U55/U65: product[31:28] | shram_kb[15:8] | log2(macs)[3:0].
constexpr uint32_t u55_u65_config(uint32_t product, uint32_t shram_kb, uint32_t log2_macs) {
    return (product << 28) | (shram_kb << 8) | log2_macs;
}
// CONFIG word, U85: product[31:28] | log2(wd)[13:12] | log2(ext)[10] | log2(sram)[9:8] |
// cmd_stream_version(1)[7:4] | log2(macs)[3:0].
constexpr uint32_t u85_config(uint32_t log2_macs, uint32_t log2_sram, uint32_t log2_ext, uint32_t log2_wd) {
    return (2u << 28) | (log2_wd << 12) | (log2_ext << 10) | (log2_sram << 8) | (1u << 4) | log2_macs;
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

constexpr std::array kConfigs = {
    NpuConfig{"ethos-u55-32", Generation::U55, 32, 1, 16, 1, 1, u55_u65_config(0, 16, 5), kU55U65VelaId, 0x10104201},
    NpuConfig{"ethos-u55-64", Generation::U55, 64, 1, 16, 1, 1, u55_u65_config(0, 16, 6), kU55U65VelaId, 0x10104201},
    NpuConfig{"ethos-u55-128", Generation::U55, 128, 1, 24, 1, 1, u55_u65_config(0, 24, 7), kU55U65VelaId, 0x10104201},
    NpuConfig{"ethos-u55-256", Generation::U55, 256, 1, 48, 1, 1, u55_u65_config(0, 48, 8), kU55U65VelaId, 0x10104201},
    NpuConfig{"ethos-u65-256", Generation::U65, 256, 1, 48, 1, 1, u55_u65_config(1, 48, 8), kU55U65VelaId, 0x10066001},
    NpuConfig{"ethos-u65-512", Generation::U65, 512, 2, 96, 1, 1, u55_u65_config(1, 96, 9), kU55U65VelaId, 0x10066001},
    NpuConfig{"ethos-u85-128", Generation::U85, 128, 1, 0, 2, 1, u85_config(7, 1, 0, 0), kU85VelaId, 0x20007001},
    NpuConfig{"ethos-u85-256", Generation::U85, 256, 1, 0, 2, 1, u85_config(8, 1, 0, 0), kU85VelaId, 0x20007001},
    NpuConfig{"ethos-u85-512", Generation::U85, 512, 2, 0, 2, 1, u85_config(9, 1, 0, 1), kU85VelaId, 0x20007001},
    NpuConfig{"ethos-u85-1024", Generation::U85, 1024, 4, 0, 2, 2, u85_config(10, 1, 1, 2), kU85VelaId, 0x20007001},
    NpuConfig{"ethos-u85-2048", Generation::U85, 2048, 4, 0, 4, 2, u85_config(11, 2, 1, 2), kU85VelaId, 0x20007001},
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

std::string npu_config_names() {
    std::string names;
    for (const auto& c : kConfigs) {
        if (!names.empty()) names += ", ";
        names += c.name;
    }
    return names;
}

}  // namespace ethosu
