// vela.ini-format system configurations: Vela's bundled ones, the defaults per generation,
// user files, and refusals that name the key and the valid values.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "emulator/engine/timing/system_config.h"
#include "emulator/engine/timing/timing_model.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

// The bandwidths Vela reports in its model summaries for the corpus (GiB/s at the core clock).
TEST(SystemConfig, DefaultsGiveVelasBandwidths) {
    struct Case {
        const char* npu;
        MemoryKind memory;
        double gib_per_s;
    };
    for (const Case c : {Case{"ethos-u55-128", MemoryKind::Sram, 3.725290298461914},
                         Case{"ethos-u55-128", MemoryKind::OffChipFlash, 0.46566128730773926},
                         Case{"ethos-u65-256", MemoryKind::Sram, 14.901161193847656},
                         Case{"ethos-u65-256", MemoryKind::Dram, 11.175870895385742},
                         Case{"ethos-u85-256", MemoryKind::Sram, 29.802322387695312},
                         Case{"ethos-u85-1024", MemoryKind::Dram, 11.175870895385742}}) {
        const NpuConfig npu = *find_npu_config(c.npu);
        const MemorySystem m = make_memory_system(npu, {});
        const double gib = m.bytes_per_cycle(c.memory) * m.system.core_clock / (1024.0 * 1024 * 1024);
        EXPECT_NEAR(gib, c.gib_per_s, 1e-9) << c.npu << " " << memory_kind_name(c.memory);
    }
}

TEST(SystemConfig, DefaultsPerGeneration) {
    const MemorySystem u55 = make_memory_system(*find_npu_config("ethos-u55-256"), {});
    EXPECT_EQ(u55.system.name, "Ethos_U55_High_End_Embedded");
    EXPECT_EQ(u55.mode.name, "Shared_Sram");
    EXPECT_EQ(u55.port_memory(u55.port_for_role(RegionRole::Weights)), MemoryKind::OffChipFlash);
    EXPECT_EQ(u55.port_memory(u55.port_for_role(RegionRole::Scratch)), MemoryKind::Sram);
    const MemorySystem u85 = make_memory_system(*find_npu_config("ethos-u85-256"), {});
    EXPECT_EQ(u85.system.name, "Ethos_U85_SYS_DRAM_Mid");
    EXPECT_EQ(u85.mode.name, "Dedicated_Sram_384KB");
    EXPECT_EQ(u85.mode.arena_cache_size, 393216u);  // inherited mode plus its own key
    EXPECT_EQ(u85.port_memory(u85.port_for_role(RegionRole::Scratch)), MemoryKind::Dram);
    EXPECT_EQ(u85.port_memory(u85.port_for_role(RegionRole::ScratchFast)), MemoryKind::Sram);
    EXPECT_EQ(u85.timing(MemoryKind::Dram).read_latency, 500);
    EXPECT_EQ(u85.axi_bytes, 16);
}

// The caller's buffers (Vela's --separate-io-regions, the Linux driver's IFM and OFM buffers) sit
// with the arena: on a Dedicated_Sram system that is the DRAM, not the fast scratch's SRAM.
TEST(SystemConfig, EveryRegionRoleHasItsPort) {
    const MemorySystem u85 = make_memory_system(*find_npu_config("ethos-u85-256"), {});
    EXPECT_EQ(u85.port_for_role(RegionRole::Weights), u85.mode.const_port);
    EXPECT_EQ(u85.port_for_role(RegionRole::ScratchFast), u85.mode.cache_port);
    for (const RegionRole role : {RegionRole::Scratch, RegionRole::Input, RegionRole::Output})
        EXPECT_EQ(u85.port_for_role(role), u85.mode.arena_port) << region_role_name(role);
    const auto memories = region_memories(u85, {{3, RegionRole::Input}, {4, RegionRole::Output}, {5, RegionRole::ScratchFast}});
    EXPECT_EQ(memories[2], MemoryKind::Sram);  // no role given: Vela's layout, the fast scratch
    EXPECT_EQ(memories[3], MemoryKind::Dram);
    EXPECT_EQ(memories[4], MemoryKind::Dram);
    EXPECT_EQ(memories[5], MemoryKind::Sram);
}

TEST(SystemConfig, UserFileAddsAndReplacesSections) {
    const auto path = std::filesystem::temp_directory_path() / "ethosu_emu_test_vela.ini";
    std::ofstream(path) << "; my board\n[System_Config.My_Board]\ncore_clock=250e6\naxi0_port=Sram\n"
                           "axi1_port=Dram\nSram_clock_scale=0.5\nDram_read_latency=100\n"
                           "[Memory_Mode.Shared_Sram]\nconst_mem_area=Axi0\narena_mem_area=Axi0\ncache_mem_area=Axi0\n";
    const MemorySystem m =
        make_memory_system(*find_npu_config("ethos-u55-64"), {"My_Board", "Shared_Sram", {path.string()}});
    EXPECT_EQ(m.system.core_clock, 250e6);
    EXPECT_EQ(m.bytes_per_cycle(MemoryKind::Sram), 4.0);
    EXPECT_EQ(m.timing(MemoryKind::Dram).read_latency, 100);
    EXPECT_EQ(m.mode.const_port, 0);  // the user's Shared_Sram replaced the built-in one
    std::filesystem::remove(path);
}

TEST(SystemConfig, RefusalsNameTheKeyAndTheValidValues) {
    VelaIni ini = VelaIni::builtin();
    std::string e = error_of([&] { ini.add("[System_Config.X]\nSram_burst_lenght=32\n", "my.ini"); });
    EXPECT_NE(e.find("my.ini"), std::string::npos) << e;
    EXPECT_NE(e.find("Sram_burst_lenght"), std::string::npos) << e;
    EXPECT_NE(e.find("Sram_burst_length"), std::string::npos) << e;  // among the valid keys
    e = error_of([&] { ini.add("[Memory_Mode.Y]\nconst_mem_area=Axi2\n", "my.ini"); ini.memory_mode("Y"); });
    EXPECT_NE(e.find("Axi0, Axi1"), std::string::npos) << e;
    e = error_of([&] { ini.add("[Accelerator]\nmacs=256\n", "my.ini"); });
    EXPECT_NE(e.find("unknown section"), std::string::npos) << e;
    e = error_of([&] { ini.system_config("Ethos_U55_Hgh_End_Embedded"); });
    EXPECT_NE(e.find("Ethos_U55_High_End_Embedded"), std::string::npos) << e;
    e = error_of([&] { ini.add("[System_Config.Z]\ncore_clock=fast\n", "my.ini"); ini.system_config("Z"); });
    EXPECT_NE(e.find("not a number"), std::string::npos) << e;
    e = error_of([&] { ini.add("[Memory_Mode.Loop]\ninherit=Memory_Mode.Loop\n", "my.ini"); ini.memory_mode("Loop"); });
    EXPECT_NE(e.find("inherit"), std::string::npos) << e;
    e = error_of([&] { ini.add("[System_Config.Capped]\nDram_bandwidth_cap_words=50\n", "my.ini"); ini.system_config("Capped"); });
    EXPECT_NE(e.find("Dram_bandwidth_cap_period"), std::string::npos) << e;
    EXPECT_NE(e.find("must be positive"), std::string::npos) << e;
    e = error_of([&] { ini.add("core_clock=1\n", "my.ini"); });
    EXPECT_NE(e.find("outside any section"), std::string::npos) << e;
}

// Every field of a system configuration or memory mode as numbers, in a fixed order.
std::vector<double> fields_of(const SystemConfig& c) {
    std::vector<double> v{c.core_clock, double(c.axi_port[0]), double(c.axi_port[1])};
    for (const MemoryTiming& m : c.memory) {
        for (double f : {m.clock_scale, double(m.ports_used), double(m.burst_length), double(m.burst_split),
                         double(m.read_latency), double(m.write_latency), double(m.max_reads), double(m.max_writes),
                         double(m.bandwidth_cap_words), double(m.bandwidth_cap_period)})
            v.push_back(f);
    }
    return v;
}
std::vector<double> fields_of(const MemoryMode& m) {
    return {double(m.const_port), double(m.arena_port), double(m.cache_port), double(m.arena_cache_size)};
}

// Parses each declared key alone (with each value of a kind it may take) and records which field
// of the result moved: every key must move exactly one field, and no two keys the same one.
template <class Parse>
void expect_each_key_sets_its_own_field(std::string_view kind, Parse parse) {
    const auto defaults = parse(std::string{});
    std::map<size_t, std::string> owner;
    for (const VelaIniKey& key : vela_ini_keys(kind)) {
        std::set<size_t> moved;
        for (const char* value : {"7", "OffChipFlash", "Axi0", "Axi1"}) {
            try {
                const auto fields = parse(key.name + "=" + value + "\n");
                for (size_t i = 0; i < fields.size(); ++i)
                    if (fields[i] != defaults[i]) moved.insert(i);
            } catch (const Error&) {  // a value of another kind
            }
        }
        ASSERT_EQ(moved.size(), 1u) << key.name;
        const auto [it, fresh] = owner.emplace(*moved.begin(), key.name);
        EXPECT_TRUE(fresh) << key.name << " sets the field of " << it->second;
    }
    EXPECT_EQ(owner.size(), defaults.size()) << kind << ": a field no key sets";
}

TEST(SystemConfig, EachDeclaredKeyParsesIntoItsOwnField) {
    expect_each_key_sets_its_own_field("System_Config", [](const std::string& line) {
        // A bandwidth cap needs its period, so each memory has one here, which a line may replace.
        std::string periods;
        for (const char* memory : {"Sram", "Dram", "OnChipFlash", "OffChipFlash"})
            periods += std::string(memory) + "_bandwidth_cap_period=400\n";
        VelaIni ini;
        ini.add("[System_Config.K]\n" + periods + line, "keys.ini");
        return fields_of(ini.system_config("K"));
    });
    expect_each_key_sets_its_own_field("Memory_Mode", [](const std::string& line) {
        VelaIni ini;
        ini.add("[Memory_Mode.K]\n" + line, "keys.ini");
        return fields_of(ini.memory_mode("K"));
    });
}

// The unknown-key error lists the declared keys, and the engine README names each of them.
TEST(SystemConfig, DeclaredKeysAreTheValidOnesAndDocumented) {
    const std::string e = error_of([] { VelaIni().add("[System_Config.X]\nSram_speed=1\n", "my.ini"); });
    std::ifstream readme(std::string(ETHOSU_SOURCE_DIR) + "/emulator/engine/README.md");
    ASSERT_TRUE(readme) << "emulator/engine/README.md";
    const std::string docs((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
    for (const char* kind : {"System_Config", "Memory_Mode"}) {
        for (const VelaIniKey& key : vela_ini_keys(kind)) {
            if (std::string_view(kind) == "System_Config") {
                EXPECT_NE(e.find(key.name), std::string::npos) << key.name;
            }
            // Memory keys are listed once as `_<key>` after their memories.
            const size_t memory_key = key.meaning.find(':');
            const std::string listed =
                memory_key == std::string::npos ? key.name : key.name.substr(key.name.find('_'));
            EXPECT_NE(docs.find("`" + listed + "`"), std::string::npos) << key.name << " is not in the README";
        }
    }
    EXPECT_EQ(vela_ini_keys("System_Config").size(), 3u + 4u * 10u);
}

// A bandwidth cap admits a burst while fewer than its words have passed in the period (see
// bandwidth_cap_bytes_per_cycle), so a cap a word past a whole number of bursts admits one more.
TEST(SystemConfig, BandwidthCapAdmitsBurstsUntilItsWordsHavePassed) {
    struct Case {
        int words, period, burst_bytes, split;
        double bytes_per_cycle;
    };
    for (const Case c : {Case{50, 400, 128, 64, 7 * 64 / 400.0},  // the FVP's flash: bursts at words 0, 8, ..., 48
                         Case{50, 400, 64, 0, 7 * 64 / 400.0},    // the same bursts, unsplit
                         Case{48, 400, 64, 0, 6 * 64 / 400.0},    // 6 whole bursts: the 7th would start at 48
                         Case{49, 400, 64, 0, 7 * 64 / 400.0},
                         Case{56, 400, 64, 0, 7 * 64 / 400.0},
                         Case{57, 400, 64, 0, 8 * 64 / 400.0},
                         Case{50, 400, 128, 0, 4 * 128 / 400.0},  // 128-byte bursts: at words 0, 16, 32, 48
                         Case{50, 400, 128, 256, 4 * 128 / 400.0},  // a split wider than the burst
                         Case{4000, 4000, 32, 0, 8.0}}) {         // the FVP's SRAM: one word a cycle
        MemoryTiming t;
        t.bandwidth_cap_words = c.words;
        t.bandwidth_cap_period = c.period;
        t.burst_length = c.burst_bytes;
        t.burst_split = c.split;
        ASSERT_TRUE(t.bandwidth_cap_bytes_per_cycle()) << c.words;
        EXPECT_DOUBLE_EQ(*t.bandwidth_cap_bytes_per_cycle(), c.bytes_per_cycle)
            << c.words << " words, " << c.burst_bytes << " B split at " << c.split;
    }
    EXPECT_FALSE(MemoryTiming{}.bandwidth_cap_bytes_per_cycle());  // no cap
}

// A timing adapter cycle by cycle, as Arm's timing_adapter.h describes its registers: addresses
// pass only in the first pulse_on cycles of each period; a read is admitted while fewer than
// `cap_words` 64-bit words were admitted in the period and fewer than `max_reads` are pending;
// its first data beat comes `latency` cycles after its address, one 8-byte beat a cycle on the
// one read data channel; it is pending until its last beat. Returns the bytes per cycle of
// `bursts` back-to-back reads of `burst_bytes` from a random phase of the period.
double simulated_adapter_rate(int burst_bytes, int max_reads, int latency, int pulse_on, int period, int cap_words,
                              int64_t bursts, int64_t phase) {
    const int64_t beats = burst_bytes / 8;
    std::vector<int64_t> pending;  // when each pending read's last beat is done
    int64_t t = phase, data_free = 0, words = 0, period_index = phase / period;
    for (int64_t issued = 0; issued < bursts;) {
        std::erase_if(pending, [&](int64_t done) { return done <= t; });
        if (t / period != period_index) period_index = t / period, words = 0;
        if (t % period >= pulse_on || words >= cap_words) {
            t = (t / period + 1) * period;  // the next period's first cycle
        } else if (static_cast<int>(pending.size()) >= max_reads) {
            t = *std::min_element(pending.begin(), pending.end());
        } else {
            const int64_t first = std::max(t + latency, data_free);
            data_free = first + beats;
            pending.push_back(data_free);
            words += beats;
            ++issued;
            ++t;  // one address a cycle
        }
    }
    return double(bursts * burst_bytes) / double(data_free - phase);
}

// The cap's closed form (bandwidth_cap_bytes_per_cycle) is the adapter's rate wherever the cap
// binds: the FVP's flash (64-byte bursts, MAXR 2, RLATENCY 64, 320 + 80 cycles, 50 words), the
// same with 128-byte bursts, and its SRAM (MAXR 8, RLATENCY 32, 4000 words per 3999 + 1 cycles),
// averaged over phases of the period. With one pending read the latency binds instead: the
// closed form is then only an upper bound, which is why the FVP system keeps MAXR 2.
TEST(SystemConfig, BandwidthCapIsTheTimingAdaptersRateWhereTheCapBinds) {
    struct Case {
        int burst_bytes, max_reads, latency, pulse_on, period, cap_words;
    };
    for (const Case c : {Case{64, 2, 64, 320, 400, 50}, Case{128, 2, 64, 320, 400, 50}, Case{64, 8, 32, 3999, 4000, 4000}}) {
        MemoryTiming t;
        t.burst_length = c.burst_bytes;
        t.bandwidth_cap_words = c.cap_words;
        t.bandwidth_cap_period = c.period;
        double rate = 0;
        constexpr int kPhases = 8;
        for (int k = 0; k < kPhases; ++k)
            rate += simulated_adapter_rate(c.burst_bytes, c.max_reads, c.latency, c.pulse_on, c.period, c.cap_words,
                                           100000, k * c.period / kPhases + 13) / kPhases;
        EXPECT_NEAR(rate, *t.bandwidth_cap_bytes_per_cycle(), 0.01) << c.burst_bytes << " B, MAXR " << c.max_reads;
    }
    EXPECT_LT(simulated_adapter_rate(64, 1, 64, 320, 400, 50, 100000, 0), 0.9);  // 5 reads of 72 cycles a period
}

// The Corstone-300 FVP as MLEK ran it: flash at 1.12 bytes a cycle (Vela: 1.0) in 64-byte AXI
// bursts over Vela's 128-byte spans, the SRAM as Vela's, and every timing figure the U55 model
// reads other than the flash's equal to Vela's.
TEST(SystemConfig, Corstone300FvpDiffersFromVelasOnlyInTheFlash) {
    const NpuConfig u55 = *find_npu_config("ethos-u55-128");
    const MemorySystem vela = make_memory_system(u55, {"Ethos_U55_High_End_Embedded", "Shared_Sram", {}});
    const MemorySystem fvp = make_memory_system(u55, {"Ethos_U55_High_End_Corstone300_FVP", "Shared_Sram", {}});
    EXPECT_DOUBLE_EQ(fvp.bytes_per_cycle(MemoryKind::OffChipFlash), 1.12);
    EXPECT_DOUBLE_EQ(vela.bytes_per_cycle(MemoryKind::OffChipFlash), 1.0);
    EXPECT_DOUBLE_EQ(fvp.bytes_per_cycle(MemoryKind::Sram), vela.bytes_per_cycle(MemoryKind::Sram));
    const MemoryTiming& fs = fvp.timing(MemoryKind::Sram);
    const MemoryTiming& vs = vela.timing(MemoryKind::Sram);
    EXPECT_EQ(std::tie(fs.burst_length, fs.read_latency, fs.write_latency),
              std::tie(vs.burst_length, vs.read_latency, vs.write_latency));
    EXPECT_EQ(fvp.system.core_clock, vela.system.core_clock);
    EXPECT_EQ(fvp.system.axi_port, vela.system.axi_port);
    const MemoryTiming& flash = fvp.timing(MemoryKind::OffChipFlash);
    EXPECT_EQ(flash.burst_length, vela.timing(MemoryKind::OffChipFlash).burst_length);
    EXPECT_EQ(flash.axi_burst_bytes(), 64);
    EXPECT_EQ(vela.timing(MemoryKind::OffChipFlash).axi_burst_bytes(), 128);
    // The flash TA's 2 outstanding 64-byte reads, each 64 cycles of latency plus its 8 beats,
    // would allow 1.78 bytes a cycle: the cap, not MAXR, binds.
    const double outstanding_reads_bound = double(flash.max_reads * flash.axi_burst_bytes()) /
                                           (flash.read_latency + flash.axi_burst_bytes() / fvp.axi_bytes);
    EXPECT_GT(outstanding_reads_bound, fvp.bytes_per_cycle(MemoryKind::OffChipFlash));
}

// Vela's bundled configurations name the generation they were set for; another generation's is
// refused with this NPU's, a configuration of the user's (any other name) is taken on any NPU.
TEST(SystemConfig, AnotherGenerationsConfigurationIsRefused) {
    const NpuConfig u85 = *find_npu_config("ethos-u85-256");
    const std::string e = error_of([&] { make_memory_system(u85, {"Ethos_U55_High_End_Embedded", "", {}}); });
    EXPECT_NE(e.find("--system-config"), std::string::npos) << e;
    EXPECT_NE(e.find("another NPU generation than ethos-u85-256"), std::string::npos) << e;
    EXPECT_NE(e.find("Ethos_U85_SYS_DRAM_Mid"), std::string::npos) << e;
    EXPECT_EQ(e.find("Ethos_U65"), std::string::npos) << e;
    EXPECT_NE(error_of([&] { make_memory_system(*find_npu_config("ethos-u55-128"), {"Ethos_U65_High_End", "", {}}); }),
              "no error");
    EXPECT_EQ(error_of([&] { make_memory_system(*find_npu_config("ethos-u65-512"), {"Ethos_U65_High_End", "", {}}); }),
              "no error");
    const auto path = std::filesystem::temp_directory_path() / "ethosu_emu_test_board.ini";
    std::ofstream(path) << "[System_Config.Board]\ncore_clock=1e9\naxi0_port=Sram\naxi1_port=Dram\n";
    EXPECT_EQ(error_of([&] { make_memory_system(u85, {"Board", "", {path.string()}}); }), "no error");
    std::filesystem::remove(path);
}

// Every key a vela.ini section may hold, with its value in `ms`.
std::map<std::string, std::string> all_key_values(const MemorySystem& ms) {
    std::map<std::string, std::string> values;
    for (const auto kind : {"System_Config", "Memory_Mode"})
        for (const auto& k : vela_ini_keys(kind)) values[k.name] = system_key_value(ms, k.name);
    return values;
}

// A variant differs from its base in exactly the key it sets or scales.
TEST(SystemConfig, VariantsChangeExactlyTheirKey) {
    const MemorySystem base = make_memory_system(*find_npu_config("ethos-u55-128"), {});
    const auto before = all_key_values(base);
    EXPECT_EQ(before.at("core_clock"), "500000000");
    EXPECT_EQ(before.at("OffChipFlash_clock_scale"), "0.125");
    EXPECT_EQ(before.at("axi1_port"), "OffChipFlash");
    EXPECT_EQ(before.at("const_mem_area"), "Axi1");

    const struct {
        std::string key;
        std::optional<std::string> value;  // else scaled by factor
        double factor;
        std::string expected;
    } cases[] = {
        {"OffChipFlash_clock_scale", std::nullopt, 2, "0.25"},
        {"OffChipFlash_read_latency", std::nullopt, 0.5, "32"},
        {"Sram_burst_length", std::nullopt, 1.5, "48"},
        {"core_clock", "400e6", 0, "400000000"},
        {"axi0_port", "Dram", 0, "Dram"},
        {"const_mem_area", "Axi0", 0, "Axi0"},
        {"arena_cache_size", std::nullopt, 2, "0"},  // Shared_Sram has none: 0 scaled stays 0
    };
    for (const auto& c : cases) {
        MemorySystem variant = base;
        if (c.value) set_system_key(variant, c.key, *c.value, "--vary");
        else scale_system_key(variant, c.key, c.factor, "--scale");
        auto expected = before;
        expected[c.key] = c.expected;
        EXPECT_EQ(all_key_values(variant), expected) << c.key;
    }
    // The bandwidth the timing model divides by follows the clock scale.
    MemorySystem faster = base;
    scale_system_key(faster, "OffChipFlash_clock_scale", 2, "--scale");
    EXPECT_DOUBLE_EQ(faster.bytes_per_cycle(MemoryKind::OffChipFlash), 2 * base.bytes_per_cycle(MemoryKind::OffChipFlash));
    EXPECT_DOUBLE_EQ(faster.bytes_per_cycle(MemoryKind::Sram), base.bytes_per_cycle(MemoryKind::Sram));
}

TEST(SystemConfig, VariantRefusalsNameTheOptionAndKey) {
    MemorySystem ms = make_memory_system(*find_npu_config("ethos-u55-128"), {});
    const std::string unknown = error_of([&] { set_system_key(ms, "Flash_read_latency", "3", "--vary"); });
    EXPECT_NE(unknown.find("--vary: Flash_read_latency: not a System_Config or Memory_Mode key; valid: core_clock"),
              std::string::npos) << unknown;
    EXPECT_NE(unknown.find("OffChipFlash_read_latency"), std::string::npos);
    EXPECT_NE(unknown.find("arena_cache_size"), std::string::npos);
    EXPECT_NE(error_of([&] { set_system_key(ms, "axi1_port", "Flash", "--vary"); }).find("valid: Sram, Dram"),
              std::string::npos);
    EXPECT_NE(error_of([&] { scale_system_key(ms, "axi1_port", 2, "--scale"); }).find("--scale: axi1_port: takes a memory name"),
              std::string::npos);
    EXPECT_NE(error_of([&] { set_system_key(ms, "core_clock", "0", "--vary"); }).find("must be positive"), std::string::npos);
    EXPECT_NE(error_of([&] { scale_system_key(ms, "Sram_clock_scale", 0, "--scale"); }).find("not positive"),
              std::string::npos);
}

}  // namespace
}  // namespace ethosu
