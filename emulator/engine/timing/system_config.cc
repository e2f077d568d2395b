#include "emulator/engine/timing/system_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <sstream>

#include "emulator/isa/bounded_file.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// Vela's own vela.ini (config_files/Arm/vela.ini) is 4 KB; a user's adds a handful of sections. A larger file is not a vela.ini (--config /dev/zero would never end).
constexpr uint64_t kMaxConfigFileBytes = uint64_t{1} << 20;
constexpr std::string_view kConfigFileLimitReason = "a vela.ini holds a few KB of sections";

// The system configurations and memory modes bundled with Vela 5.1 (config_files/Arm/vela.ini),
// the numbers Vela compiled the corpus against. Bandwidth follows from them: see bytes_per_cycle.
constexpr const char* kBuiltinIni = R"ini(
[System_Config.Ethos_U55_Deep_Embedded]
core_clock=200e6
axi0_port=Sram
axi1_port=OffChipFlash
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=8
Sram_max_writes=8
OffChipFlash_clock_scale=0.0625
OffChipFlash_burst_length=128
OffChipFlash_read_latency=64
OffChipFlash_write_latency=0
OffChipFlash_max_reads=2
OffChipFlash_max_writes=0

[System_Config.Ethos_U55_High_End_Embedded]
core_clock=500e6
axi0_port=Sram
axi1_port=OffChipFlash
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=4
Sram_max_writes=4
OffChipFlash_clock_scale=0.125
OffChipFlash_burst_length=128
OffChipFlash_read_latency=64
OffChipFlash_write_latency=0
OffChipFlash_max_reads=2
OffChipFlash_max_writes=0

[System_Config.Ethos_U65_Embedded]
core_clock=500e6
axi0_port=Sram
axi1_port=OffChipFlash
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=8
Sram_max_writes=8
OffChipFlash_clock_scale=0.0625
OffChipFlash_burst_length=128
OffChipFlash_read_latency=64
OffChipFlash_write_latency=0
OffChipFlash_max_reads=2
OffChipFlash_max_writes=0

[System_Config.Ethos_U65_Mid_End]
core_clock=500e6
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=8
Sram_max_writes=8
Dram_clock_scale=0.46875
Dram_burst_length=128
Dram_read_latency=500
Dram_write_latency=250
Dram_max_reads=12
Dram_max_writes=6

[System_Config.Ethos_U65_High_End]
core_clock=1e9
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=16
Sram_max_writes=16
Dram_clock_scale=0.234375
Dram_burst_length=128
Dram_read_latency=500
Dram_write_latency=250
Dram_max_reads=24
Dram_max_writes=12

[System_Config.Ethos_U65_Client_Server]
core_clock=1e9
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=16
Sram_max_writes=16
Dram_clock_scale=0.75
Dram_burst_length=128
Dram_read_latency=500
Dram_write_latency=250
Dram_max_reads=24
Dram_max_writes=12

[System_Config.Ethos_U85_SYS_Flash_Low]
core_clock=200e6
axi0_port=Sram
axi1_port=OffChipFlash
Sram_clock_scale=1
Sram_ports_used=2
Sram_burst_length=64
Sram_read_latency=8
Sram_write_latency=8
Sram_max_reads=8
Sram_max_writes=8
OffChipFlash_clock_scale=0.0625
OffChipFlash_ports_used=1
OffChipFlash_burst_length=128
OffChipFlash_read_latency=32
OffChipFlash_write_latency=0
OffChipFlash_max_reads=2
OffChipFlash_max_writes=0

[System_Config.Ethos_U85_SYS_Flash_High]
core_clock=500e6
axi0_port=Sram
axi1_port=OffChipFlash
Sram_clock_scale=1.0
Sram_ports_used=2
Sram_burst_length=64
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=8
Sram_max_writes=8
OffChipFlash_clock_scale=0.0625
OffChipFlash_ports_used=1
OffChipFlash_burst_length=128
OffChipFlash_read_latency=64
OffChipFlash_write_latency=0
OffChipFlash_max_reads=2
OffChipFlash_max_writes=0

[System_Config.Ethos_U85_SYS_DRAM_Low]
core_clock=500e6
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=1.0
Sram_ports_used=2
Sram_burst_length=64
Sram_read_latency=16
Sram_write_latency=16
Sram_max_reads=8
Sram_max_writes=8
Dram_clock_scale=0.46875
Dram_ports_used=1
Dram_burst_length=128
Dram_read_latency=500
Dram_write_latency=250
Dram_max_reads=24
Dram_max_writes=12

[System_Config.Ethos_U85_SYS_DRAM_Mid]
core_clock=1e9
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=1.0
Sram_ports_used=2
Sram_burst_length=64
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=8
Sram_max_writes=8
Dram_clock_scale=0.75
Dram_ports_used=1
Dram_burst_length=128
Dram_read_latency=500
Dram_write_latency=250
Dram_max_reads=64
Dram_max_writes=32

[System_Config.Ethos_U85_SYS_DRAM_High]
core_clock=1e9
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=1.0
Sram_ports_used=4
Sram_burst_length=64
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=8
Sram_max_writes=8
Dram_clock_scale=0.75
Dram_ports_used=2
Dram_burst_length=128
Dram_read_latency=500
Dram_write_latency=250
Dram_max_reads=64
Dram_max_writes=32

; Not Vela's: Arm's Corstone-300 FVP as the ML Embedded Evaluation Kit (MLEK) ran it for the
; U55 figures it published (our FVP anchors). MLEK programs the FVP's AXI timing adapters
; (scripts/cmake/timing_adapter/ta_config_u55_high_end.cmake); the rest is Vela's High_End.
[System_Config.Ethos_U55_High_End_Corstone300_FVP]
inherit=System_Config.Ethos_U55_High_End_Embedded
; TA0 (AXI0, SRAM): MAXR 8, MAXW 8; RLATENCY/WLATENCY 32 as Vela's. BWCAP 4000 words per
; PULSE_ON 3999 + PULSE_OFF 1 cycles: 8 bytes a cycle, the port's own width, as Vela's.
Sram_max_reads=8
Sram_max_writes=8
Sram_bandwidth_cap_words=4000
Sram_bandwidth_cap_period=4000
; TA1 (AXI1, flash, any memory mode but Sram_Only): MAXR 2 and RLATENCY 64 as Vela's; MODE
; frequency scale 0 (full speed), so the cap is the only throttle; BWCAP 50 words per
; PULSE_ON 320 + PULSE_OFF 80 cycles.
; Reads are whole AXI bursts of 64 bytes, aligned: Arm's core driver leaves AXI_LIMIT2/3.max_beats
; ("burst split alignment") at their default, 0 = 64 bytes (ethosu_config_u55.h
; AXI_LIMITn_MAX_BEATS_BYTES), and the cap counts the bursts. FVP, 64-byte spans, Vela's 128-byte
; burst_length as spans: MobileNetV2 432,351, 430,607, 432,447; AD 56,245, 56,000, 56,224; RNNoise
; 13,911, 13,528, 13,760; Himax's YOLO-Fastest on U55-64, whose weight streams are small depth
; slices fetched again per OFM block, 73,728, 72,928, 89,680.
OffChipFlash_clock_scale=1.0
OffChipFlash_burst_split=64
OffChipFlash_bandwidth_cap_words=50
OffChipFlash_bandwidth_cap_period=400

[Memory_Mode.Sram_Only]
const_mem_area=Axi0
arena_mem_area=Axi0
cache_mem_area=Axi0

[Memory_Mode.Shared_Sram]
const_mem_area=Axi1
arena_mem_area=Axi0
cache_mem_area=Axi0

[Memory_Mode.Dedicated_Sram]
const_mem_area=Axi1
arena_mem_area=Axi1
cache_mem_area=Axi0

[Memory_Mode.Dedicated_Sram_256KB]
inherit=Memory_Mode.Dedicated_Sram
arena_cache_size=262144

[Memory_Mode.Dedicated_Sram_384KB]
inherit=Memory_Mode.Dedicated_Sram
arena_cache_size=393216

[Memory_Mode.Dedicated_Sram_512KB]
inherit=Memory_Mode.Dedicated_Sram
arena_cache_size=524288
)ini";

constexpr std::string_view kMemoryNames[kMemoryKinds] = {"Sram", "Dram", "OnChipFlash", "OffChipFlash"};

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(" \t\r");
    return std::string(s.substr(b, e - b + 1));
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
}

double parse_number(const std::string& value, const ErrorLocation& where) {
    try {
        size_t used = 0;
        const double v = std::stod(value, &used);
        if (used == value.size()) return v;
    } catch (const std::exception&) {
    }
    throw Error(where, fmt::format("'{}' is not a number", value));
}

int parse_int(const std::string& value, const ErrorLocation& where) {
    const double v = parse_number(value, where);
    if (v != static_cast<double>(static_cast<int64_t>(v)) || v < 0 || v > 1e9)
        throw Error(where, fmt::format("'{}' is not a non-negative integer", value));
    return static_cast<int>(v);
}

MemoryKind parse_memory(const std::string& value, const ErrorLocation& where) {
    for (int k = 0; k < kMemoryKinds; ++k)
        if (kMemoryNames[k] == value) return static_cast<MemoryKind>(k);
    throw Error(where, fmt::format("'{}' is not a memory; valid: Sram, Dram, OnChipFlash, OffChipFlash", value));
}

int parse_port(const std::string& value, const ErrorLocation& where) {
    if (value == "Axi0") return 0;
    if (value == "Axi1") return 1;
    throw Error(where, fmt::format("'{}' is not an AXI port; valid: Axi0, Axi1", value));
}

// Every key of a section, declared once: its name, what it means and where its value goes. The
// parsers, the unknown-key error and vela_ini_keys() read these tables and nothing else. Memory
// keys are written <Memory>_<key> (Sram_burst_length), once per memory.
enum class ValueKind { Number, Integer, Memory, Port };

template <class Target>
struct KeyDecl {
    std::string_view name;
    std::string_view meaning;
    ValueKind kind;
    void (*set)(Target&, const std::string& value, const ErrorLocation& where);
    std::string (*get)(const Target&);  // the value as a vela.ini writes it
};

// Shortest text that reads back to the same double (200000000, 0.0625).
std::string number_text(double v) { return fmt::format("{}", v); }
std::string port_text(int port) { return fmt::format("Axi{}", port); }

constexpr KeyDecl<SystemConfig> kSystemKeys[] = {
    {"core_clock", "NPU clock in Hz",
     ValueKind::Number,
     [](SystemConfig& c, const std::string& v, const ErrorLocation& w) { c.core_clock = parse_number(v, w); },
     [](const SystemConfig& c) { return number_text(c.core_clock); }},
    {"axi0_port", "the memory behind AXI0",
     ValueKind::Memory,
     [](SystemConfig& c, const std::string& v, const ErrorLocation& w) { c.axi_port[0] = parse_memory(v, w); },
     [](const SystemConfig& c) { return std::string(memory_kind_name(c.axi_port[0])); }},
    {"axi1_port", "the memory behind AXI1",
     ValueKind::Memory,
     [](SystemConfig& c, const std::string& v, const ErrorLocation& w) { c.axi_port[1] = parse_memory(v, w); },
     [](const SystemConfig& c) { return std::string(memory_kind_name(c.axi_port[1])); }},
};

constexpr KeyDecl<MemoryTiming> kMemoryKeys[] = {
    {"clock_scale", "the memory's clock over the NPU's",
     ValueKind::Number,
     [](MemoryTiming& m, const std::string& v, const ErrorLocation& w) { m.clock_scale = parse_number(v, w); },
     [](const MemoryTiming& m) { return number_text(m.clock_scale); }},
    {"ports_used", "AXI ports the memory is reached through (at least 1)",
     ValueKind::Integer,
     [](MemoryTiming& m, const std::string& v, const ErrorLocation& w) { m.ports_used = std::max(1, parse_int(v, w)); },
     [](const MemoryTiming& m) { return std::to_string(m.ports_used); }},
    {"burst_length", "bytes per burst (at least 1)",
     ValueKind::Integer,
     [](MemoryTiming& m, const std::string& v, const ErrorLocation& w) { m.burst_length = std::max(1, parse_int(v, w)); },
     [](const MemoryTiming& m) { return std::to_string(m.burst_length); }},
    {"burst_split", "bytes at whose alignment the NPU splits its bursts (AXI_LIMIT max_beats; 0: none)",
     ValueKind::Integer,
     [](MemoryTiming& m, const std::string& v, const ErrorLocation& w) { m.burst_split = parse_int(v, w); },
     [](const MemoryTiming& m) { return std::to_string(m.burst_split); }},
    {"read_latency", "NPU cycles before a read's data",
     ValueKind::Integer,
     [](MemoryTiming& m, const std::string& v, const ErrorLocation& w) { m.read_latency = parse_int(v, w); },
     [](const MemoryTiming& m) { return std::to_string(m.read_latency); }},
    {"write_latency", "NPU cycles before a write completes",
     ValueKind::Integer,
     [](MemoryTiming& m, const std::string& v, const ErrorLocation& w) { m.write_latency = parse_int(v, w); },
     [](const MemoryTiming& m) { return std::to_string(m.write_latency); }},
    {"max_reads", "outstanding read transactions",
     ValueKind::Integer,
     [](MemoryTiming& m, const std::string& v, const ErrorLocation& w) { m.max_reads = parse_int(v, w); },
     [](const MemoryTiming& m) { return std::to_string(m.max_reads); }},
    {"max_writes", "outstanding write transactions",
     ValueKind::Integer,
     [](MemoryTiming& m, const std::string& v, const ErrorLocation& w) { m.max_writes = parse_int(v, w); },
     [](const MemoryTiming& m) { return std::to_string(m.max_writes); }},
    {"bandwidth_cap_words", "64-bit words a timing adapter lets through per period (0: no cap)",
     ValueKind::Integer,
     [](MemoryTiming& m, const std::string& v, const ErrorLocation& w) { m.bandwidth_cap_words = parse_int(v, w); },
     [](const MemoryTiming& m) { return std::to_string(m.bandwidth_cap_words); }},
    {"bandwidth_cap_period", "NPU cycles of that period",
     ValueKind::Integer,
     [](MemoryTiming& m, const std::string& v, const ErrorLocation& w) { m.bandwidth_cap_period = parse_int(v, w); },
     [](const MemoryTiming& m) { return std::to_string(m.bandwidth_cap_period); }},
};

constexpr KeyDecl<MemoryMode> kModeKeys[] = {
    {"const_mem_area", "AXI port (Axi0 or Axi1) of the read-only data (weights, LUTs, scales)",
     ValueKind::Port,
     [](MemoryMode& m, const std::string& v, const ErrorLocation& w) { m.const_port = parse_port(v, w); },
     [](const MemoryMode& m) { return port_text(m.const_port); }},
    {"arena_mem_area", "AXI port of the tensor arena",
     ValueKind::Port,
     [](MemoryMode& m, const std::string& v, const ErrorLocation& w) { m.arena_port = parse_port(v, w); },
     [](const MemoryMode& m) { return port_text(m.arena_port); }},
    {"cache_mem_area", "AXI port of the arena cache",
     ValueKind::Port,
     [](MemoryMode& m, const std::string& v, const ErrorLocation& w) { m.cache_port = parse_port(v, w); },
     [](const MemoryMode& m) { return port_text(m.cache_port); }},
    {"arena_cache_size", "bytes of the arena cache",
     ValueKind::Integer,
     [](MemoryMode& m, const std::string& v, const ErrorLocation& w) {
         m.arena_cache_size = static_cast<uint64_t>(parse_number(v, w));
     },
     [](const MemoryMode& m) { return std::to_string(m.arena_cache_size); }},
};

template <class Target, size_t N>
const KeyDecl<Target>* find_key(const KeyDecl<Target> (&keys)[N], std::string_view name) {
    for (const auto& k : keys)
        if (k.name == name) return &k;
    return nullptr;
}

// A System_Config key's declaration, and for a memory key the memory it is about.
struct SystemKey {
    const KeyDecl<SystemConfig>* system = nullptr;
    const KeyDecl<MemoryTiming>* memory = nullptr;
    MemoryKind memory_kind = MemoryKind::Sram;
};

std::optional<SystemKey> find_system_key(std::string_view name) {
    if (const auto* k = find_key(kSystemKeys, name)) return SystemKey{.system = k};
    for (int m = 0; m < kMemoryKinds; ++m) {
        const std::string_view memory = kMemoryNames[m];
        if (name.size() > memory.size() && name.starts_with(memory) && name[memory.size()] == '_') {
            if (const auto* k = find_key(kMemoryKeys, name.substr(memory.size() + 1)))
                return SystemKey{.memory = k, .memory_kind = static_cast<MemoryKind>(m)};
        }
    }
    return std::nullopt;
}

}  // namespace

std::vector<VelaIniKey> vela_ini_keys(std::string_view kind) {
    std::vector<VelaIniKey> keys;
    if (kind == "System_Config") {
        for (const auto& k : kSystemKeys) keys.push_back({std::string(k.name), std::string(k.meaning)});
        for (const auto memory : kMemoryNames)
            for (const auto& k : kMemoryKeys)
                keys.push_back({fmt::format("{}_{}", memory, k.name), fmt::format("{}: {}", memory, k.meaning)});
    } else if (kind == "Memory_Mode") {
        for (const auto& k : kModeKeys) keys.push_back({std::string(k.name), std::string(k.meaning)});
    }
    return keys;
}

std::string_view memory_kind_name(MemoryKind k) { return kMemoryNames[static_cast<size_t>(k)]; }

namespace {

// A key of a memory system by its vela.ini name, as a setter and getter on the MemorySystem.
struct BoundKey {
    ValueKind kind;
    std::function<void(const std::string&, const ErrorLocation&)> set;
    std::function<std::string()> get;
};

template <class Target>
BoundKey bind(const KeyDecl<Target>& k, Target& target) {
    return {k.kind, [&k, &target](const std::string& v, const ErrorLocation& w) { k.set(target, v, w); },
            [&k, &target] { return k.get(target); }};
}

BoundKey bind_key(MemorySystem& ms, std::string_view key, std::string_view option) {
    if (const auto k = find_system_key(key)) {
        if (k->system) return bind(*k->system, ms.system);
        return bind(*k->memory, ms.system.memory[static_cast<size_t>(k->memory_kind)]);
    }
    if (const auto* k = find_key(kModeKeys, key)) return bind(*k, ms.mode);
    std::vector<std::string> valid;
    for (const auto kind : {"System_Config", "Memory_Mode"})
        for (const auto& k : vela_ini_keys(kind)) valid.push_back(k.name);
    throw Error({std::string(option), std::nullopt, std::string(key)},
                fmt::format("not a System_Config or Memory_Mode key; valid: {}", join(valid)));
}

// What the timing model divides by: a clock and the memories' clock scales stay positive.
void check_positive_clocks(const MemorySystem& ms, std::string_view key, std::string_view option) {
    const bool memory_clock_zero = std::ranges::any_of(ms.system.memory, [](const MemoryTiming& t) { return !(t.clock_scale > 0); });
    if (!(ms.system.core_clock > 0) || memory_clock_zero)
        throw Error({std::string(option), std::nullopt, std::string(key)}, "clocks and clock scales must be positive");
}

}  // namespace

bool is_system_key(std::string_view key) {
    return find_system_key(key).has_value() || find_key(kModeKeys, key) != nullptr;
}

std::string system_key_value(const MemorySystem& ms, std::string_view key) {
    MemorySystem copy = ms;  // bind_key binds setters too
    return bind_key(copy, key, "key").get();
}

void set_system_key(MemorySystem& ms, std::string_view key, const std::string& value, std::string_view option) {
    bind_key(ms, key, option).set(value, {std::string(option), std::nullopt, std::string(key)});
    check_positive_clocks(ms, key, option);
}

void scale_system_key(MemorySystem& ms, std::string_view key, double factor, std::string_view option) {
    const BoundKey k = bind_key(ms, key, option);
    const ErrorLocation where{std::string(option), std::nullopt, std::string(key)};
    if (k.kind == ValueKind::Memory || k.kind == ValueKind::Port)
        throw Error(where, fmt::format("takes a {}, not a number: give its values, not factors",
                                       k.kind == ValueKind::Memory ? "memory name" : "port name"));
    if (!(factor > 0)) throw Error(where, fmt::format("factor {} is not positive", factor));
    const double scaled = std::stod(k.get()) * factor;
    // An integer key (latencies, bursts, sizes) takes the nearest integer.
    k.set(k.kind == ValueKind::Integer ? std::to_string(std::llround(scaled)) : number_text(scaled), where);
    check_positive_clocks(ms, key, option);
}

const VelaIni& VelaIni::builtin() {
    static const VelaIni parsed = [] {
        VelaIni ini;
        ini.add(kBuiltinIni, "<built-in vela.ini>");
        return ini;
    }();
    return parsed;
}

void VelaIni::add(const std::string& text, const std::string& source) {
    std::istringstream in(text);
    std::string line, current;
    std::map<std::string, Section> added;
    for (int number = 1; std::getline(in, line); ++number) {
        const std::string t = trim(line);
        const ErrorLocation where{source, std::nullopt, fmt::format("line {}", number)};
        if (t.empty() || t[0] == ';' || t[0] == '#') continue;
        if (t.front() == '[') {
            if (t.back() != ']') throw Error(where, fmt::format("malformed section header '{}'", t));
            current = trim(std::string_view(t).substr(1, t.size() - 2));
            if (!current.starts_with("System_Config.") && !current.starts_with("Memory_Mode.")) {
                throw Error(where, fmt::format("unknown section '{}'; valid: System_Config.NAME, Memory_Mode.NAME",
                                               current));
            }
            added[current].source = source;
            continue;
        }
        const auto eq = t.find_first_of("=:");
        if (eq == std::string::npos) throw Error(where, fmt::format("expected key=value, got '{}'", t));
        if (current.empty()) throw Error(where, "key outside any section");
        const std::string key = trim(std::string_view(t).substr(0, eq));
        const std::string value = trim(std::string_view(t).substr(eq + 1));
        const bool system = current.starts_with("System_Config.");
        const bool known = key == "inherit" || (system ? find_system_key(key).has_value() : find_key(kModeKeys, key) != nullptr);
        if (!known) {
            std::vector<std::string> valid{"inherit"};
            for (const auto& k : vela_ini_keys(system ? "System_Config" : "Memory_Mode")) valid.push_back(k.name);
            throw Error({source, std::nullopt, fmt::format("[{}] {}", current, key)},
                        fmt::format("unknown key; valid: {}", join(valid)));
        }
        added[current].keys[key] = value;
    }
    for (auto& [name, section] : added) sections_[name] = std::move(section);
}

std::map<std::string, std::string> VelaIni::resolved(const std::string& section, int depth) const {
    const auto it = sections_.find(section);
    if (it == sections_.end()) return {};
    std::map<std::string, std::string> keys;
    if (const auto parent = it->second.keys.find("inherit"); parent != it->second.keys.end()) {
        if (depth > 16 || !sections_.contains(parent->second)) {
            throw Error({it->second.source, std::nullopt, fmt::format("[{}] inherit", section)},
                        fmt::format("cannot inherit from '{}'", parent->second));
        }
        keys = resolved(parent->second, depth + 1);
    }
    for (const auto& [k, v] : it->second.keys)
        if (k != "inherit") keys[k] = v;
    return keys;
}

std::vector<std::string> VelaIni::names(std::string_view kind) const {
    std::vector<std::string> out;
    const std::string prefix = std::string(kind) + ".";
    for (const auto& [name, _] : sections_)
        if (name.starts_with(prefix)) out.push_back(name.substr(prefix.size()));
    return out;
}

VelaIni::Lookup VelaIni::lookup(std::string_view kind, std::string_view option, const std::string& name) const {
    const std::string section = fmt::format("{}.{}", kind, name);
    const auto it = sections_.find(section);
    if (it == sections_.end()) {
        throw Error({std::string(option), std::nullopt, name},
                    fmt::format("no such {} section; valid: {}", kind, join(names(kind))));
    }
    return {section, it->second.source, resolved(section)};
}

SystemConfig VelaIni::system_config(const std::string& name) const {
    const auto [section, source, keys] = lookup("System_Config", "--system-config", name);
    SystemConfig cfg;
    cfg.name = name;
    for (const auto& [key, value] : keys) {
        const ErrorLocation where{source, std::nullopt, fmt::format("[{}] {}", section, key)};
        const SystemKey k = *find_system_key(key);  // add() let only declared keys in
        if (k.system) k.system->set(cfg, value, where);
        else k.memory->set(cfg.memory[static_cast<size_t>(k.memory_kind)], value, where);
    }
    if (!(cfg.core_clock > 0)) throw Error({source, std::nullopt, section + " core_clock"}, "must be positive");
    for (int m = 0; m < kMemoryKinds; ++m) {
        const MemoryTiming& t = cfg.memory[static_cast<size_t>(m)];
        if (t.bandwidth_cap_words > 0 && t.bandwidth_cap_period == 0) {
            throw Error({source, std::nullopt, fmt::format("{} {}_bandwidth_cap_period", section, kMemoryNames[m])},
                        "must be positive with a bandwidth cap");
        }
    }
    return cfg;
}

MemoryMode VelaIni::memory_mode(const std::string& name) const {
    const auto [section, source, keys] = lookup("Memory_Mode", "--memory-mode", name);
    MemoryMode mode;
    mode.name = name;
    for (const auto& [key, value] : keys) {
        const ErrorLocation where{source, std::nullopt, fmt::format("[{}] {}", section, key)};
        find_key(kModeKeys, key)->set(mode, value, where);  // add() let only declared keys in
    }
    return mode;
}

// The timing adapter (its BWCAP field: "max no. of 64-bit words transferred per pulse cycle")
// admits a burst while fewer than the cap's words have passed in the current period, so the last
// burst of a period may overrun the cap: with the FVP flash's 64-byte AXI bursts and a cap of 50
// words, bursts start at words 0, 8, ..., 48, 7 bursts = 448 bytes per 400 cycles = 1.12 bytes
// a cycle. The TA's description leaves open whether a burst must instead fit under the cap
// (6 bursts, 0.96 bytes a cycle); the FVP decides it: RNNoise's 111,288 flash bytes in 103,870
// NPU ACTIVE cycles need at least 1.07 bytes a cycle.
std::optional<double> MemoryTiming::bandwidth_cap_bytes_per_cycle() const {
    if (bandwidth_cap_words == 0) return std::nullopt;
    constexpr int64_t kWordBytes = 8;
    const int64_t burst = axi_burst_bytes();
    const int64_t bursts = (bandwidth_cap_words * kWordBytes + burst - 1) / burst;
    return double(bursts * burst) / bandwidth_cap_period;
}

double MemorySystem::bytes_per_cycle(MemoryKind k) const {
    const MemoryTiming& t = timing(k);
    const double port = axi_bytes * t.ports_used * t.clock_scale;
    return std::min(port, t.bandwidth_cap_bytes_per_cycle().value_or(port));
}

int MemorySystem::port_for_role(RegionRole role) const {
    switch (role) {
        case RegionRole::Weights: return mode.const_port;
        case RegionRole::ScratchFast: return mode.cache_port;
        case RegionRole::Scratch:
        case RegionRole::Input:
        case RegionRole::Output: return mode.arena_port;
    }
    return mode.arena_port;
}

namespace {

// The generation a system configuration is named for: Vela's bundled ones say it in their name
// (NpuTraits::vela_ini_prefix), and were set for that NPU's AXI width and memories; nullopt for a
// name that does not say (one of the user's own).
std::optional<Generation> named_generation(std::string_view name) {
    for (const NpuTraits& t : all_npu_traits()) {
        if (name.starts_with(t.vela_ini_prefix)) return t.generation;
    }
    return std::nullopt;
}

}  // namespace

MemorySystem make_memory_system(const NpuConfig& npu, const SystemSelection& selection) {
    // A copy only when --config files add to the built-in sections.
    std::optional<VelaIni> extended;
    if (!selection.config_files.empty()) extended = VelaIni::builtin();
    for (const auto& file : selection.config_files) {
        extended->add(read_bounded_file(file, kMaxConfigFileBytes, "--config", kConfigFileLimitReason), file);
    }
    const VelaIni& ini = extended ? *extended : VelaIni::builtin();
    const auto generation = named_generation(selection.system_config);
    if (generation && *generation != npu.generation) {
        std::string own;
        for (const auto& name : ini.names("System_Config")) {
            const auto g = named_generation(name);
            if (!g || *g == npu.generation) own += (own.empty() ? "" : ", ") + name;
        }
        throw Error({"--system-config", std::nullopt, selection.system_config},
                    fmt::format("named for another NPU generation than {}'s; the configurations for it: {}", npu.name,
                                own));
    }
    const NpuTraits& traits = npu.traits();
    MemorySystem ms;
    ms.system = ini.system_config(selection.system_config.empty() ? std::string(traits.default_system_config)
                                                                  : selection.system_config);
    ms.mode = ini.memory_mode(selection.memory_mode.empty() ? std::string(traits.default_memory_mode)
                                                            : selection.memory_mode);
    ms.axi_bytes = traits.axi_data_bytes;
    return ms;
}

}  // namespace ethosu
