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

// The cost function family that times a generation's ops (emulator/engine/timing picks the
// functions by it): U55's serves U55 and U65, whose MAC arrays and SHRAM work alike.
enum class CostModel : uint8_t { U55, U85 };

// How a generation stores and decodes weights: U55/U65 one stream per core, the cores' OFM block
// channels interleaved; U85 one stream per weight decoder, in U85's weight order.
enum class WeightEncoding : uint8_t { PerCore, PerDecoder };

// What a generation does differently from its siblings, as the engine, the timing model and the
// front ends ask it: one entry per generation (npu_config.cc). Registers and fields a generation
// has or lacks are not here: the description says that (isa::describe).
struct NpuTraits {
    Generation generation;
    CostModel cost_model;
    WeightEncoding weight_encoding;
    // ACTIVATION.activation_function names a LUT element type read from the LUT RAM (U85), not a
    // SHRAM table slot or a built-in TANH/SIGMOID (U55/U65).
    bool activation_names_lut_type;
    // Elementwise ops scale each operand by IFM_SCALE/IFM2_SCALE with their own rounding and
    // broadcast either operand (U85), not by OPA/OPB scales with IFM2 broadcast only (U55/U65).
    bool elementwise_scales_each_operand;
    // AVERAGE pooling divides every window by its valid elements and does not apply OFM_SCALE
    // (U85; evidence in pool.cc); U55/U65 divide so only padded or PER_CHANNEL pools and scale
    // the others by OFM_SCALE alone.
    bool average_pool_always_divides;
    // Vela's vela.ini: the prefix of the bundled System_Config sections set for this generation,
    // and Vela's defaults when none is given (architecture_features.py / regor's defaults).
    std::string_view vela_ini_prefix;
    std::string_view default_system_config;
    std::string_view default_memory_mode;
    int axi_data_bytes;  // bytes per AXI beat: a 64-bit bus on U55, 128-bit on U65 and U85
    // Kernel ops and DMAs the command processor may have issued that have not completed: it
    // queues up to these and reads on, and stalls at the next kernel op or DMA_START until the
    // oldest completes. Vela omits the waits for work older than these (Vela >= 3.10
    // max_outstanding_kernels 2, MLBEDSW-8156, was 3; max_outstanding_dma 1 on U55, 2 on U65, 4
    // on U85; regor's MaxOutstandingKernelOps/MaxOutstandingDMAOps the same), so its streams
    // are correct only if the hardware keeps no more outstanding; and the wait counts (KERNEL_WAIT
    // n: 2 bits on U55/U65, 1 on U85; DMA_WAIT k) would mean nothing if it kept fewer.
    int max_outstanding_kernel_ops;
    int max_outstanding_dmas;
};

const NpuTraits& npu_traits(Generation g);
std::span<const NpuTraits> all_npu_traits();

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

    const NpuTraits& traits() const { return npu_traits(generation); }
};

std::span<const NpuConfig> all_npu_configs();

// Looks up by Vela name; nullopt if unknown.
std::optional<NpuConfig> find_npu_config(std::string_view name);

// Identifies the configuration from the CONFIG word of a COP header (product and MACs).
std::optional<NpuConfig> npu_config_from_config_word(uint32_t config_word);

// Comma-separated list of valid names, for error messages.
std::string npu_config_names();

}  // namespace ethosu
