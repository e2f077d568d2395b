#pragma once
// The NPU configurations Vela compiles for, and the CONFIG/ID words that name them.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ethosu {

enum class Generation : uint8_t { U55, U65, U85 };

std::string_view generation_name(Generation g);  // "ethos-u55", ...

struct NpuConfig {
    std::string_view name;  // Vela's --accelerator-config spelling, e.g. "ethos-u55-128"
    Generation generation;
    int macs;               // MACs per cycle of the whole NPU
    int cores;              // U65-512: 2 cores; U85: weight decoders
    int shram_kb;           // U55/U65 SHRAM size; 0 on U85 (no SHRAM)
    int axi_sram_ports;     // U85 only (1 on U55/U65)
    int axi_ext_ports;      // U85 only (1 on U55/U65)
    uint32_t config_word;   // CONFIG register value, as Vela writes it into the COP header
    uint32_t id_word;       // ID value Vela writes into the COP header
    uint32_t hw_id_reset;   // ID register reset value of the hardware
};

std::span<const NpuConfig> all_npu_configs();

// Looks up by Vela name; nullopt if unknown.
std::optional<NpuConfig> find_npu_config(std::string_view name);

// Identifies the configuration from the CONFIG word of a COP header (product and MACs).
std::optional<NpuConfig> npu_config_from_config_word(uint32_t config_word);

// Comma-separated list of valid names, for error messages.
std::string npu_config_names();

}  // namespace ethosu
