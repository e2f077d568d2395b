#include "emulator/engine/timing/arch_timing.h"

#include <stdexcept>
#include <string>

namespace ethosu {
namespace {

// Block3 is {height, width, depth} throughout.

// Vela 5.1: IFM micro-blocks and SHRAM banks from regor's s_EthosU55Configs
// (architecture/ethosu55/ethos_u55.cpp); the per-element cycles from its s_EthosU55PerfInfo,
// which are also architecture_features.py's _generate_output_perf_tables; the accumulator delays
// and the U55-32 flags from ethos_u55_performance.cpp's MAC cycle estimate (Vela 3.10
// npu_performance.py: 3 cycles with 40-bit accumulators on U55-64 and U55-128 only). U65 has no
// row of its own in regor: U65-256 takes U55-256's numbers (the Python tables share the branch),
// U65-512 those of the Python table's Ethos_U65_512 branch (two 256-MAC cores, every cost halved).
constexpr U55TimingRow kU55Rows[] = {
    {.config = "ethos-u55-32", .ifm_ublock = {1, 1, 8},
     .shram_banks = 16, .accumulator_delay = {.narrow = 3, .wide = 7},
     .pooling_by_ifm_width = RowFlag::No, .thin_block_wide_accumulator_stall = RowFlag::Yes,
     .output_cycles = {.elementwise32_unary = 2.0, .elementwise32_binary = 3.0, .mul32 = 3.0, .mul8_or_40bit_acc = 3.0,
                       .simple_add_sub = 4.0, .add_sub = 6.0, .max_pool = 1.0, .other = 2.0},
     .activation_cycles = {.lut_or_none = 1.0, .relu = 1.0, .other = 0.0}},
    {.config = "ethos-u55-64", .ifm_ublock = {1, 1, 8},
     .shram_banks = 16, .accumulator_delay = {.narrow = 2, .wide = 3},
     .pooling_by_ifm_width = RowFlag::Yes, .thin_block_wide_accumulator_stall = RowFlag::No,
     .output_cycles = {.elementwise32_unary = 1.0, .elementwise32_binary = 1.5, .mul32 = 1.5, .mul8_or_40bit_acc = 1.5,
                       .simple_add_sub = 2.0, .add_sub = 3.0, .max_pool = 0.5, .other = 1.0},
     .activation_cycles = {.lut_or_none = 1.0, .relu = 1.0, .other = 0.0}},
    {.config = "ethos-u55-128", .ifm_ublock = {1, 2, 8},
     .shram_banks = 24, .accumulator_delay = {.narrow = 2, .wide = 3},
     .pooling_by_ifm_width = RowFlag::Yes, .thin_block_wide_accumulator_stall = RowFlag::No,
     .output_cycles = {.elementwise32_unary = 0.75, .elementwise32_binary = 1.25, .mul32 = 0.75,
                       .mul8_or_40bit_acc = 0.75, .simple_add_sub = 1.0, .add_sub = 1.5, .max_pool = 0.25, .other = 0.5},
     .activation_cycles = {.lut_or_none = 1.0, .relu = 0.5, .other = 0.0}},
    {.config = "ethos-u55-256", .ifm_ublock = {2, 2, 8},
     .shram_banks = 48, .accumulator_delay = {.narrow = 2, .wide = 2},
     .pooling_by_ifm_width = RowFlag::Yes, .thin_block_wide_accumulator_stall = RowFlag::No,
     .output_cycles = {.elementwise32_unary = 0.625, .elementwise32_binary = 1.125, .mul32 = 0.5,
                       .mul8_or_40bit_acc = 0.375, .simple_add_sub = 0.5, .add_sub = 0.75, .max_pool = 0.125,
                       .other = 0.25},
     .activation_cycles = {.lut_or_none = 1.0, .relu = 0.25, .other = 0.0}},
    // U55-256's numbers
    {.config = "ethos-u65-256", .ifm_ublock = {2, 2, 8},
     .shram_banks = 48, .accumulator_delay = {.narrow = 2, .wide = 2},
     .pooling_by_ifm_width = RowFlag::Yes, .thin_block_wide_accumulator_stall = RowFlag::No,
     .output_cycles = {.elementwise32_unary = 0.625, .elementwise32_binary = 1.125, .mul32 = 0.5,
                       .mul8_or_40bit_acc = 0.375, .simple_add_sub = 0.5, .add_sub = 0.75, .max_pool = 0.125,
                       .other = 0.25},
     .activation_cycles = {.lut_or_none = 1.0, .relu = 0.25, .other = 0.0}},
    // two 256-MAC cores, the per-element costs halved
    {.config = "ethos-u65-512", .ifm_ublock = {2, 2, 8},
     .shram_banks = 48, .accumulator_delay = {.narrow = 2, .wide = 2},
     .pooling_by_ifm_width = RowFlag::Yes, .thin_block_wide_accumulator_stall = RowFlag::No,
     .output_cycles = {.elementwise32_unary = 0.3125, .elementwise32_binary = 0.5625, .mul32 = 0.25,
                       .mul8_or_40bit_acc = 0.1875, .simple_add_sub = 0.25, .add_sub = 0.375, .max_pool = 0.0625,
                       .other = 0.125},
     .activation_cycles = {.lut_or_none = 0.5, .relu = 0.125, .other = 0.0}},
};

// Vela 5.1: the micro-block and RAM sizes and the read buffers from regor's s_EthosU85Configs,
// the cycles from s_EthosU85PerfInfo (architecture/ethosu85/ethos_u85.cpp); the IFM allocation
// units from ArchEthosU85::SetupOfmUBlockToIfmAuTable in the same file; the accumulator delays
// from ethos_u85_performance.cpp (3 cycles with 48-bit accumulators on the 128-MAC array).
constexpr U85TimingRow kU85Rows[] = {
    {.config = "ethos-u85-128",
     .ifm_alloc_units = {{{.up_to_128_bits = {1, 2, 1}, .up_to_256_bits = {1, 1, 2}, .wider = {1, 1, 2}},
                         {.up_to_128_bits = {1, 2, 1}, .up_to_256_bits = {1, 1, 2}, .wider = {1, 1, 2}}}},
     .ifm_ublock = {1, 2, 8},
     .ifm_ram_bytes = 8192, .ob_ram_bytes = 2048, .cb_ram_bytes = 768,
     .accumulator_delay = {.narrow = 2, .wide = 3},
     .channel_read_buffers = {.mem2mem = 64, .ifm_stream = 64, .weight = 128, .fast_weight = 128, .ifm = 104, .scale = 16},
     .output_cycles = {.ofm8 = 0.5, .ofm16 = 0.5, .ofm32 = 0.5, .ofm64 = 1.0, .chained32 = 1.0, .binary32 = 1.0},
     .activation_cycles = {.full_rate = 0.5, .half_rate = 1.0}},
    {.config = "ethos-u85-256",
     .ifm_alloc_units = {{{.up_to_128_bits = {2, 2, 1}, .up_to_256_bits = {1, 2, 2}, .wider = {1, 1, 4}},
                         {.up_to_128_bits = {1, 4, 1}, .up_to_256_bits = {1, 2, 2}, .wider = {1, 1, 4}},
                         {.up_to_128_bits = {2, 2, 1}, .up_to_256_bits = {1, 2, 2}, .wider = {1, 1, 4}}}},
     .ifm_ublock = {2, 2, 8},
     .ifm_ram_bytes = 16384, .ob_ram_bytes = 2048, .cb_ram_bytes = 1536,
     .accumulator_delay = {.narrow = 2, .wide = 2},
     .channel_read_buffers = {.mem2mem = 104, .ifm_stream = 104, .weight = 128, .fast_weight = 128, .ifm = 128,
                              .scale = 16},
     .output_cycles = {.ofm8 = 0.25, .ofm16 = 0.25, .ofm32 = 0.25, .ofm64 = 0.5, .chained32 = 0.5, .binary32 = 0.5},
     .activation_cycles = {.full_rate = 0.25, .half_rate = 0.5}},
    {.config = "ethos-u85-512",
     .ifm_alloc_units = {{{.up_to_128_bits = {2, 2, 1}, .up_to_256_bits = {1, 2, 2}, .wider = {1, 1, 4}},
                         {.up_to_128_bits = {1, 4, 1}, .up_to_256_bits = {1, 2, 2}, .wider = {1, 1, 4}}}},
     .ifm_ublock = {2, 2, 16},
     .ifm_ram_bytes = 16384, .ob_ram_bytes = 4096, .cb_ram_bytes = 3072,
     .accumulator_delay = {.narrow = 2, .wide = 2},
     .channel_read_buffers = {.mem2mem = 128, .ifm_stream = 128, .weight = 256, .fast_weight = 256, .ifm = 128,
                              .scale = 16},
     .output_cycles = {.ofm8 = 0.125, .ofm16 = 0.125, .ofm32 = 0.25, .ofm64 = 0.5, .chained32 = 0.25, .binary32 = 0.25},
     .activation_cycles = {.full_rate = 0.125, .half_rate = 0.25}},
    {.config = "ethos-u85-1024",
     .ifm_alloc_units = {{{.up_to_128_bits = {2, 4, 1}, .up_to_256_bits = {2, 2, 2}, .wider = {1, 2, 4}},
                         {.up_to_128_bits = {2, 4, 1}, .up_to_256_bits = {1, 4, 2}, .wider = {1, 2, 4}},
                         {.up_to_128_bits = {2, 4, 1}, .up_to_256_bits = {2, 2, 2}, .wider = {1, 2, 4}}}},
     .ifm_ublock = {4, 2, 16},
     .ifm_ram_bytes = 16384, .ob_ram_bytes = 4096, .cb_ram_bytes = 6144,
     .accumulator_delay = {.narrow = 2, .wide = 2},
     .channel_read_buffers = {.mem2mem = 256, .ifm_stream = 256, .weight = 416, .fast_weight = 208, .ifm = 256,
                              .scale = 16},
     .output_cycles = {.ofm8 = 0.0625, .ofm16 = 0.125, .ofm32 = 0.25, .ofm64 = 0.5, .chained32 = 0.125, .binary32 = 0.25},
     .activation_cycles = {.full_rate = 0.0625, .half_rate = 0.125}},
    {.config = "ethos-u85-2048",
     .ifm_alloc_units = {{{.up_to_128_bits = {4, 4, 1}, .up_to_256_bits = {2, 4, 2}, .wider = {2, 2, 4}},
                         {.up_to_128_bits = {4, 4, 1}, .up_to_256_bits = {2, 4, 2}, .wider = {1, 4, 4}},
                         {.up_to_128_bits = {4, 4, 1}, .up_to_256_bits = {2, 4, 2}, .wider = {2, 2, 4}}}},
     .ifm_ublock = {4, 4, 16},
     .ifm_ram_bytes = 32768, .ob_ram_bytes = 8192, .cb_ram_bytes = 12288,
     .accumulator_delay = {.narrow = 2, .wide = 2},
     .channel_read_buffers = {.mem2mem = 256, .ifm_stream = 256, .weight = 512, .fast_weight = 256, .ifm = 256,
                              .scale = 16},
     .output_cycles = {.ofm8 = 0.03125, .ofm16 = 0.0625, .ofm32 = 0.125, .ofm64 = 0.25, .chained32 = 0.0625,
                       .binary32 = 0.125},
     .activation_cycles = {.full_rate = 0.03125, .half_rate = 0.0625}},
};

[[noreturn]] void no_row(const NpuConfig& npu) {
    throw std::out_of_range("no timing table row for " + std::string(npu.name));
}

}  // namespace

double U55OutputCycles::operator[](OutputClass c) const {
    switch (c) {
        case OutputClass::Elementwise32Unary: return elementwise32_unary;
        case OutputClass::Elementwise32Binary: return elementwise32_binary;
        case OutputClass::Mul32: return mul32;
        case OutputClass::Mul8Or40BitAcc: return mul8_or_40bit_acc;
        case OutputClass::SimpleAddSub: return simple_add_sub;
        case OutputClass::AddSub: return add_sub;
        case OutputClass::MaxPool: return max_pool;
        case OutputClass::Other: return other;
    }
    return kUnsetRate;
}

double U55ActivationCycles::operator[](ActivationClass c) const {
    switch (c) {
        case ActivationClass::LutOrNone: return lut_or_none;
        case ActivationClass::Relu: return relu;
        case ActivationClass::Other: return other;
    }
    return kUnsetRate;
}

int U85ReadBuffers::operator[](U85ReadChannel c) const {
    switch (c) {
        case U85ReadChannel::Mem2Mem: return mem2mem;
        case U85ReadChannel::IfmStream: return ifm_stream;
        case U85ReadChannel::Weight: return weight;
        case U85ReadChannel::FastWeight: return fast_weight;
        case U85ReadChannel::Ifm: return ifm;
        case U85ReadChannel::Scale: return scale;
    }
    return kUnsetCount;
}

double U85OutputCycles::operator[](U85OutputClass c) const {
    switch (c) {
        case U85OutputClass::Ofm8: return ofm8;
        case U85OutputClass::Ofm16: return ofm16;
        case U85OutputClass::Ofm32: return ofm32;
        case U85OutputClass::Ofm64: return ofm64;
        case U85OutputClass::Chained32: return chained32;
        case U85OutputClass::Binary32: return binary32;
    }
    return kUnsetRate;
}

double U85ActivationCycles::operator[](U85ActivationClass c) const {
    switch (c) {
        case U85ActivationClass::FullRate: return full_rate;
        case U85ActivationClass::HalfRate: return half_rate;
    }
    return kUnsetRate;
}

std::span<const U55TimingRow> u55_timing_table() { return kU55Rows; }
std::span<const U85TimingRow> u85_timing_table() { return kU85Rows; }

const U55TimingRow& u55_timing(const NpuConfig& npu) {
    for (const auto& r : kU55Rows)
        if (r.config == npu.name) return r;
    no_row(npu);
}

const U85TimingRow& u85_timing(const NpuConfig& npu) {
    for (const auto& r : kU85Rows)
        if (r.config == npu.name) return r;
    no_row(npu);
}

}  // namespace ethosu
