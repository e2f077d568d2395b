#pragma once
// Micro-architecture timing parameters per NPU configuration, as named tables. The numbers are
// the ones Vela 5.1's performance model uses for each configuration (regor's architecture and
// performance tables); each row has a boundary test in tests/timing/test_arch_timing.cc, and a
// completeness test checks that every configuration has one row with every field set.

#include <array>
#include <cstdint>
#include <limits>
#include <span>

#include "emulator/isa/npu_config.h"

namespace ethosu {

struct Block3 {
    int height = 1, width = 1, depth = 1;
    int64_t elements() const { return int64_t{height} * width * depth; }
    int64_t elements_wh() const { return int64_t{height} * width; }
    bool operator==(const Block3&) const = default;
};

// What a row's fields hold until its initialiser sets them: the completeness test finds any
// left (a rate of NaN, a count or size of -1, a block of zero elements).
inline constexpr double kUnsetRate = std::numeric_limits<double>::quiet_NaN();
inline constexpr int kUnsetCount = -1;
inline constexpr Block3 kUnsetBlock{0, 0, 0};

// Output-unit (AO) throughput, cycles per output element, by operation class (U55/U65).
enum class OutputClass : uint8_t {
    Elementwise32Unary, Elementwise32Binary, Mul32, Mul8Or40BitAcc, SimpleAddSub, AddSub, MaxPool, Other,
};
struct U55OutputCycles {
    double elementwise32_unary = kUnsetRate, elementwise32_binary = kUnsetRate, mul32 = kUnsetRate,
           mul8_or_40bit_acc = kUnsetRate, simple_add_sub = kUnsetRate, add_sub = kUnsetRate,
           max_pool = kUnsetRate, other = kUnsetRate;
    double operator[](OutputClass c) const;
};

// Activation-unit cost class. Vela 5.1 prices an op without a fused activation like a LUT
// activation (the class it starts from), so "no activation" is LutOrNone.
enum class ActivationClass : uint8_t { LutOrNone, Relu, Other };
struct U55ActivationCycles {
    double lut_or_none = kUnsetRate, relu = kUnsetRate, other = kUnsetRate;
    double operator[](ActivationClass c) const;
};

struct U55TimingRow {
    Generation generation = Generation::U55;  // with macs, the configuration the row is for
    int macs = kUnsetCount;
    int cores = kUnsetCount;
    Block3 ofm_ublock = kUnsetBlock;  // the MAC array's OFM micro-block
    Block3 ifm_ublock = kUnsetBlock;
    int shram_banks = kUnsetCount;
    U55OutputCycles output_cycles;
    U55ActivationCycles activation_cycles;
};

// U85 read channels, each with its read buffer (bytes).
enum class U85ReadChannel : uint8_t { Mem2Mem, IfmStream, Weight, FastWeight, Ifm, Scale };
struct U85ReadBuffers {
    int mem2mem = kUnsetCount, ifm_stream = kUnsetCount, weight = kUnsetCount, fast_weight = kUnsetCount,
        ifm = kUnsetCount, scale = kUnsetCount;
    int operator[](U85ReadChannel c) const;
};

// U85 output-unit throughput classes: by OFM width, then 32-bit data written to the chaining
// buffer (or a binary elementwise op narrowing a 32-bit IFM), then binary elementwise 32-bit to
// 32-bit.
enum class U85OutputClass : uint8_t { Ofm8, Ofm16, Ofm32, Ofm64, Chained32, Binary32 };
struct U85OutputCycles {
    double ofm8 = kUnsetRate, ofm16 = kUnsetRate, ofm32 = kUnsetRate, ofm64 = kUnsetRate, chained32 = kUnsetRate,
           binary32 = kUnsetRate;
    double operator[](U85OutputClass c) const;
};

// U85 activation-unit classes: full rate, and half rate (H/W transposes, reversing W).
enum class U85ActivationClass : uint8_t { FullRate, HalfRate };
struct U85ActivationCycles {
    double full_rate = kUnsetRate, half_rate = kUnsetRate;
    double operator[](U85ActivationClass c) const;
};

// One OFM micro-block a U85 configuration offers, with the IFM allocation unit that goes with
// it for IFM block depths of up to 128 bits, up to 256 bits and more (depth in 128-bit units).
struct U85MicroBlock {
    Block3 ofm = kUnsetBlock;
    Block3 ifm_alloc_up_to_128_bits = kUnsetBlock, ifm_alloc_up_to_256_bits = kUnsetBlock,
           ifm_alloc_wider = kUnsetBlock;
    const Block3& ifm_alloc_unit(int depth_bits) const {
        return depth_bits > 256 ? ifm_alloc_wider : depth_bits > 128 ? ifm_alloc_up_to_256_bits : ifm_alloc_up_to_128_bits;
    }
};

struct U85TimingRow {
    int macs = kUnsetCount;  // the configuration the row is for
    int cores = kUnsetCount;
    std::array<U85MicroBlock, 3> micro_blocks{};  // the first n_micro_blocks are the configuration's
    int n_micro_blocks = kUnsetCount;
    Block3 ifm_ublock = kUnsetBlock;
    int ifm_ram_bytes = kUnsetCount, acc_ram_bytes = kUnsetCount, ob_ram_bytes = kUnsetCount,
        cb_ram_bytes = kUnsetCount;
    int axi_sram_log2 = kUnsetCount, axi_ext_log2 = kUnsetCount;
    U85ReadBuffers channel_read_buffers;
    U85OutputCycles output_cycles;
    U85ActivationCycles activation_cycles;
};

std::span<const U55TimingRow> u55_timing_table();  // U55-32..256 and U65-256/512
std::span<const U85TimingRow> u85_timing_table();  // U85-128..2048

// The row for a configuration (its generation and MACs); throws std::out_of_range for a
// configuration without one.
const U55TimingRow& u55_timing(const NpuConfig& npu);
const U85TimingRow& u85_timing(const NpuConfig& npu);

}  // namespace ethosu
