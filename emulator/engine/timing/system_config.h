#pragma once
// The system around the NPU, as Vela describes it: a [System_Config.*] section (core clock,
// which memory sits behind AXI0 and AXI1, and each memory's clock scale, ports, burst length,
// latencies and outstanding transactions) and a [Memory_Mode.*] section (which AXI port holds
// the constant data, the tensor arena and the arena cache). Read from files in vela.ini format;
// Vela's bundled configurations are built in, with Vela's defaults per NPU generation.

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/engine/timing/system_selection.h"
#include "emulator/isa/npu_config.h"
#include "emulator/memory/address_space.h"

namespace ethosu {

inline constexpr int kMemoryKinds = 4;  // MemoryKind values: Sram, Dram, OnChipFlash, OffChipFlash
std::string_view memory_kind_name(MemoryKind k);  // vela.ini spelling: "Sram", "OffChipFlash", ...

struct MemoryTiming {
    double clock_scale = 1.0;
    int ports_used = 1;
    int burst_length = 1;  // bytes: the span a read fetches, aligned to it
    // Bytes at whose alignment the NPU splits its AXI bursts (U55/U65 AXI_LIMITn.max_beats, "burst
    // split alignment": 64, 128 or 256); 0: bursts of burst_length. A timing adapter counts these.
    int burst_split = 0;
    int read_latency = 0;  // NPU cycles
    int write_latency = 0;
    int max_reads = 1;     // outstanding transactions
    int max_writes = 1;
    // A bandwidth cap such as the Corstone-300 FVP's AXI timing adapters apply (their BWCAP and
    // PULSE_ON + PULSE_OFF): 64-bit words per period of NPU cycles; 0 words: no cap.
    int bandwidth_cap_words = 0;
    int bandwidth_cap_period = 0;
    // Bytes per NPU cycle the cap admits on average, or nullopt without a cap: see the definition.
    std::optional<double> bandwidth_cap_bytes_per_cycle() const;
    // The bytes of one AXI burst: burst_length, split at burst_split.
    int axi_burst_bytes() const { return burst_split > 0 ? std::min(burst_length, burst_split) : burst_length; }
};

struct SystemConfig {
    std::string name;
    double core_clock = 1.0;  // Hz
    std::array<MemoryKind, 2> axi_port{MemoryKind::Sram, MemoryKind::Sram};  // AXI0, AXI1
    std::array<MemoryTiming, kMemoryKinds> memory{};                       // by MemoryKind
};

struct MemoryMode {
    std::string name;
    int const_port = 1;  // AXI port of the read-only data (weights, LUTs, scales)
    int arena_port = 0;  // AXI port of the tensor arena
    int cache_port = 0;  // AXI port of the arena cache (fast scratch)
    uint64_t arena_cache_size = 0;
};

// The keys a section of KIND ("System_Config" or "Memory_Mode") may hold, besides inherit, each
// with what it means; the parsers take exactly these.
struct VelaIniKey {
    std::string name;
    std::string meaning;
};
std::vector<VelaIniKey> vela_ini_keys(std::string_view kind);

// Sections of one or more vela.ini-format texts: "System_Config.X" / "Memory_Mode.X" -> key -> value.
class VelaIni {
public:
    // The configurations Vela ships (its Arm/vela.ini), as our own table; parsed once.
    static const VelaIni& builtin();

    // Adds the sections of text; a section that already exists is replaced. Throws ethosu::Error
    // naming source and line for malformed lines, unknown sections kinds and unknown keys.
    void add(const std::string& text, const std::string& source);

    SystemConfig system_config(const std::string& name) const;
    MemoryMode memory_mode(const std::string& name) const;
    std::vector<std::string> names(std::string_view kind) const;  // "System_Config" or "Memory_Mode"

private:
    struct Section {
        std::string source;
        std::map<std::string, std::string> keys;
    };
    // The keys of KIND.NAME with its inherit= chain resolved, and the file it came from; throws
    // naming the option and the valid names when there is no such section.
    struct Lookup {
        std::string section, source;
        std::map<std::string, std::string> keys;
    };
    Lookup lookup(std::string_view kind, std::string_view option, const std::string& name) const;
    // Resolves inherit= chains into one key map.
    std::map<std::string, std::string> resolved(const std::string& section, int depth = 0) const;
    std::map<std::string, Section> sections_;
};

// What the timing model needs of the system: the configuration plus, per memory, its
// bandwidth in bytes per NPU cycle (AXI bytes per beat x ports used x clock scale, or its
// bandwidth cap where that is lower).
struct MemorySystem {
    SystemConfig system;
    MemoryMode mode;
    int axi_bytes = 8;  // bytes per AXI beat (NpuTraits::axi_data_bytes)

    MemoryKind port_memory(int port) const { return system.axi_port.at(static_cast<size_t>(port)); }
    const MemoryTiming& timing(MemoryKind k) const { return system.memory.at(static_cast<size_t>(k)); }
    double bytes_per_cycle(MemoryKind k) const;
    // The AXI port a region's memory sits behind, from the role its loader gave it: weights on
    // the const port, fast scratch on the cache port, the arena and the caller's buffers on the
    // arena port.
    int port_for_role(RegionRole role) const;
};

// Variants of a memory system, one key at a time, by its vela.ini name (a System_Config key such
// as core_clock or OffChipFlash_read_latency, or a Memory_Mode key such as const_mem_area): the
// value as a vela.ini would write it; set from vela.ini text; or scaled by a positive factor (number
// keys; an integer key takes the nearest integer). A memory's bandwidth scales with its
// clock_scale. Errors name `option` and the key, and for an unknown key every valid one.
bool is_system_key(std::string_view key);
std::string system_key_value(const MemorySystem& ms, std::string_view key);
void set_system_key(MemorySystem& ms, std::string_view key, const std::string& value, std::string_view option);
void scale_system_key(MemorySystem& ms, std::string_view key, double factor, std::string_view option);

MemorySystem make_memory_system(const NpuConfig& npu, const SystemSelection& selection);

}  // namespace ethosu
