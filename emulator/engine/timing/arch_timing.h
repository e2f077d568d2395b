#pragma once
// Micro-architecture timing parameters per NPU configuration, as named tables. The numbers are
// the ones Vela 5.1's performance model uses for each configuration (regor's architecture and
// performance tables); each row has a boundary test in tests/timing/test_arch_timing.cc.

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "emulator/isa/npu_config.h"

namespace ethosu {

struct Block3 {
    int height = 1, width = 1, depth = 1;
    int64_t elements() const { return int64_t{height} * width * depth; }
    int64_t elements_wh() const { return int64_t{height} * width; }
    bool operator==(const Block3&) const = default;
};

// Output-unit (AO) throughput, cycles per output element, by operation class (U55/U65 index).
enum class OutputClass : uint8_t {
    Elementwise32Unary, Elementwise32Binary, Mul32, Mul8Or40BitAcc, SimpleAddSub, AddSub, MaxPool, Other,
};
// Activation-unit cost class. Vela 5.1 prices an op without a fused activation like a LUT
// activation (the class it starts from), so "no activation" is LutOrNone.
enum class ActivationClass : uint8_t { LutOrNone, Relu, Other };

struct U55TimingRow {
    std::string_view config;    // Vela name
    int macs = 0;
    int cores = 1;
    Block3 ofm_ublock;          // the MAC array's OFM micro-block
    Block3 ifm_ublock;
    int shram_banks = 0;
    std::array<double, 8> output_cycles{};      // by OutputClass
    std::array<double, 3> activation_cycles{};  // by ActivationClass
};

// U85 read channels, in the order of U85TimingRow::channel_read_buffers.
enum class U85ReadChannel : uint8_t { Mem2Mem, IfmStream, Weight, FastWeight, Ifm, Scale };
// U85 output-unit throughput classes, in the order of U85TimingRow::output_cycles: by OFM
// width, then 32-bit data written to the chaining buffer (or a binary elementwise op narrowing a
// 32-bit IFM), then binary elementwise 32-bit to 32-bit.
enum class U85OutputClass : uint8_t { Ofm8, Ofm16, Ofm32, Ofm64, Chained32, Binary32 };
// U85 activation-unit classes: full rate, and half rate (H/W transposes, reversing W).
enum class U85ActivationClass : uint8_t { FullRate, HalfRate };

struct U85TimingRow {
    std::string_view config;
    int macs = 0;
    int cores = 1;
    std::array<Block3, 3> ofm_ublocks{};  // candidate micro-blocks; the first n_ofm_ublocks are valid
    int n_ofm_ublocks = 0;
    Block3 ifm_ublock;
    int ifm_ram_bytes = 0, acc_ram_bytes = 0, ob_ram_bytes = 0, cb_ram_bytes = 0;
    int axi_sram_log2 = 0, axi_ext_log2 = 0;
    std::array<int, 6> channel_read_buffers{};  // by U85ReadChannel
    std::array<double, 6> output_cycles{};      // by U85OutputClass
    std::array<double, 2> activation_cycles{};  // by U85ActivationClass
    // IFM allocation unit per OFM micro-block (same index as ofm_ublocks), for IFM block depths
    // of up to 128, up to 256 and more bits; the depth is in 128-bit units.
    std::array<std::array<Block3, 3>, 3> ifm_alloc_units{};
};

std::span<const U55TimingRow> u55_timing_table();  // U55-32..256 and U65-256/512
std::span<const U85TimingRow> u85_timing_table();  // U85-128..2048

// The row for a configuration; throws std::out_of_range for a configuration without one.
const U55TimingRow& u55_timing(const NpuConfig& npu);
const U85TimingRow& u85_timing(const NpuConfig& npu);

}  // namespace ethosu
