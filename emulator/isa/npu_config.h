#pragma once
// The NPU configurations Vela compiles for, and the CONFIG/ID words that name them.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "emulator/isa/isa_enums.h"

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

// What a row's fields hold until its initialiser sets them, which the completeness test
// (tests/isa/test_npu_config.cc) finds: 0 for counts every row makes positive (and which a model
// without NPU work, configured by no row, reports as 0), kUnsetFact for facts that may be 0.
inline constexpr int kUnsetFact = -1;

// One OFM micro-block the MAC array works in (per core on U65-512): height x width x depth.
struct MicroBlockShape {
    int height = kUnsetFact, width = kUnsetFact, depth = kUnsetFact;
    bool operator==(const MicroBlockShape&) const = default;
};

// How many OFM micro-blocks a configuration offers at most (U85: ACC_FORMAT.microblock picks
// one by height x width; U55/U65 have one).
inline constexpr int kMaxMicroBlocks = 3;

// Everything that differs between the configurations of a generation, one row per
// configuration (npu_config.cc). A fact a generation lacks is 0 on its rows, said beside it.
struct NpuConfig {
    std::string_view name;  // Vela's --accelerator-config spelling, e.g. "ethos-u55-128"
    Generation generation = Generation::U55;
    int macs = 0;                     // MACs per cycle of the whole NPU
    int cores = 0;                    // U65-512: 2 cores; U85: weight decoders
    int shram_kb = kUnsetFact;        // U55/U65 SHRAM size; 0 on U85 (no SHRAM)
    int axi_sram_ports = 0;           // U85 only (1 on U55/U65)
    int axi_ext_ports = 0;            // U85 only (1 on U55/U65)
    // The OFM micro-blocks, the first micro_block_count of them.
    std::array<MicroBlockShape, kMaxMicroBlocks> micro_blocks{};
    int micro_block_count = 0;
    int accumulator_ram_bytes = kUnsetFact;  // U85; 0 on U55/U65 (accumulators live in SHRAM)
    // U85: the IFM block depth of a dense depth-first convolution with an 8- or 16-bit IFM on a
    // 16-deep micro-block (32 on the 128- and 256-MAC arrays, 64 above: Vela 5.1 ethos_u85.cpp
    // FindBlockConfig); 0 on U55/U65, whose IFM block depth follows the IFM width alone.
    int ifm_block_depth_16_deep_ublock = kUnsetFact;
    // U85: weight slots a DEPTHWISE op's weight stream pads each kernel position with, by IFM
    // width (Vela 5.1 ethos_u85_weight_encoder.cpp); 0 on U55/U65.
    int depthwise_weight_padding_8bit = kUnsetFact, depthwise_weight_padding_16bit = kUnsetFact;
    uint32_t config_word = 0;  // CONFIG register value, as Vela writes it into the COP header
                               // (derived from the facts above, npu_config.cc)
    uint32_t id_word = 0;      // ID value Vela writes into the COP header
    uint32_t hw_id_reset = 0;  // ID register reset value of the hardware

    const NpuTraits& traits() const { return npu_traits(generation); }
    std::span<const MicroBlockShape> offered_micro_blocks() const {
        return std::span(micro_blocks).first(static_cast<size_t>(micro_block_count));
    }
    // The index of the micro-block of this height and width, if the configuration offers one.
    std::optional<size_t> micro_block_index(int height, int width) const;
    // The index of the micro-block an op's ACC_FORMAT names, if the configuration offers it.
    std::optional<size_t> micro_block_index(MicroBlock m) const {
        return micro_block_index(micro_block_height(m), micro_block_width(m));
    }
};

std::span<const NpuConfig> all_npu_configs();

// Looks up by Vela name; nullopt if unknown.
std::optional<NpuConfig> find_npu_config(std::string_view name);

// Identifies the configuration from the CONFIG word of a COP header (product and MACs).
std::optional<NpuConfig> npu_config_from_config_word(uint32_t config_word);

// Comma-separated list of valid names, for error messages.
std::string npu_config_names();

// The IFM block depth Vela gives a U85 convolution or reduce-sum (ethos_u85.cpp
// FindBlockConfig), which the weight stream's order and the cost model's IFM block follow.
int u85_conv_ifm_block_depth(const NpuConfig& config, const MicroBlockShape& ublock, bool part_kernel_first,
                             int ifm_bits, bool sparse_2_4);

}  // namespace ethosu
