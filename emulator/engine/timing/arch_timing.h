#pragma once
// Micro-architecture timing parameters per NPU configuration, as named tables. The numbers are
// the ones Vela 5.1's performance model uses for each configuration (regor's architecture and
// performance tables); each row has a boundary test in tests/timing/test_arch_timing.cc, and a
// completeness test checks that every configuration of all_npu_configs() has one row, named by
// it, with every field set. The configuration's own facts (MACs, cores, micro-blocks) are its
// NpuConfig row's, not repeated here.

#include <array>
#include <cstdint>
#include <limits>
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

inline Block3 block_of(const MicroBlockShape& u) { return {u.height, u.width, u.depth}; }

// What a row's fields hold until its initialiser sets them: the completeness test finds any
// left (a rate of NaN, a count or size of -1, a block of zero elements).
inline constexpr double kUnsetRate = std::numeric_limits<double>::quiet_NaN();
inline constexpr int kUnsetCount = -1;
inline constexpr Block3 kUnsetBlock{0, 0, 0};

// A yes/no fact of a row, Unset until the initialiser says which.
enum class RowFlag : int8_t { Unset, No, Yes };

// The accumulator pipeline's delay per kernel step when a block is a single micro-block wide and
// high, with the narrow (32-bit) and the wide (U55/U65 40-bit, U85 48-bit) accumulators.
struct AccumulatorDelay {
    int narrow = kUnsetCount, wide = kUnsetCount;
    int per_step(bool wide_accumulators) const { return wide_accumulators ? wide : narrow; }
};

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
    std::string_view config;  // the configuration's name (NpuConfig::name)
    Block3 ifm_ublock = kUnsetBlock;
    int shram_banks = kUnsetCount;
    AccumulatorDelay accumulator_delay;
    // Pooling cycles grow with the IFM width (IFM bits / 2 per micro-block element): every
    // array but U55-32's.
    RowFlag pooling_by_ifm_width = RowFlag::Unset;
    // A block a single micro-block wide or high and more than one deep, with 40-bit
    // accumulators, stalls one more delay per micro-block of depth: U55-32 only.
    RowFlag thin_block_wide_accumulator_stall = RowFlag::Unset;
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

// The IFM allocation units that go with one OFM micro-block of a U85 configuration, for IFM
// block depths of up to 128 bits, up to 256 bits and more (depth in 128-bit units).
struct U85IfmAllocUnits {
    Block3 up_to_128_bits = kUnsetBlock, up_to_256_bits = kUnsetBlock, wider = kUnsetBlock;
    const Block3& for_depth_bits(int depth_bits) const {
        return depth_bits > 256 ? wider : depth_bits > 128 ? up_to_256_bits : up_to_128_bits;
    }
};

struct U85TimingRow {
    std::string_view config;  // the configuration's name (NpuConfig::name)
    // One per OFM micro-block of the configuration, in the order of NpuConfig::micro_blocks.
    std::array<U85IfmAllocUnits, kMaxMicroBlocks> ifm_alloc_units{};
    Block3 ifm_ublock = kUnsetBlock;
    int ifm_ram_bytes = kUnsetCount, ob_ram_bytes = kUnsetCount, cb_ram_bytes = kUnsetCount;
    AccumulatorDelay accumulator_delay;
    U85ReadBuffers channel_read_buffers;
    U85OutputCycles output_cycles;
    U85ActivationCycles activation_cycles;
};

std::span<const U55TimingRow> u55_timing_table();  // the U55 and U65 configurations
std::span<const U85TimingRow> u85_timing_table();  // the U85 configurations

// The row named by a configuration; throws std::out_of_range for a configuration without one.
const U55TimingRow& u55_timing(const NpuConfig& npu);
const U85TimingRow& u85_timing(const NpuConfig& npu);

}  // namespace ethosu
