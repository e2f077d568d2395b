// Decodes every command stream of ../shared/vectors (Vela 5.1), ../shared/vectors-vela (Vela 3.10
// and 4.1) and ../shared/vectors-vela-u85 (Vela 4.5 and 5.1 for U85) and compares each command with the listing Vela printed while compiling it
// (vela_stdout.txt): offset, name, param, payload, code and, where Vela prints them (5.1), the
// decoded fields.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/config_test_name.h"
#include "tests/corpus_index.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "emulator/isa/disasm.h"
#include "frontend/loaders/model.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

struct ListingLine {
    uint32_t offset = 0;
    std::optional<uint32_t> payload;
    uint16_t param = 0;
    uint16_t code = 0;
    std::string name;
    std::string fields;  // ", a = b, c = d" as printed
};

// The columns both listing layouts share: "0x000004: 00001000 0000 4000 - " then the name.
ListingLine parse_command_columns(const std::string& line) {
    ListingLine l;
    l.offset = static_cast<uint32_t>(std::stoul(line.substr(2, 6), nullptr, 16));
    const std::string payload = line.substr(10, 8);
    if (payload != "        ") l.payload = static_cast<uint32_t>(std::stoul(payload, nullptr, 16));
    l.param = static_cast<uint16_t>(std::stoul(line.substr(19, 4), nullptr, 16));
    l.code = static_cast<uint16_t>(std::stoul(line.substr(24, 4), nullptr, 16));
    return l;
}

bool is_command_line(const std::string& line) {
    return line.size() >= 30 && line.rfind("0x", 0) == 0 && line[8] == ':';
}

constexpr size_t kNameColumn = 31;

// Vela 5.1 (Regor) prints one "Register command stream: N words" section per ethos-u operator.
std::vector<std::vector<ListingLine>> parse_listing(const fs::path& path) {
    std::vector<std::vector<ListingLine>> streams;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("Register command stream:", 0) == 0) {
            streams.emplace_back();
            continue;
        }
        if (streams.empty() || !is_command_line(line)) continue;
        ListingLine l = parse_command_columns(line);
        const size_t name_end = line.find(' ', kNameColumn);
        l.name = line.substr(kNameColumn, name_end - kNameColumn);
        const size_t comma = line.find(',', name_end);
        if (comma != std::string::npos) l.fields = line.substr(comma);
        streams.back().push_back(l);
    }
    return streams;
}

// One "Register-Level Command Stream: Output" section of Vela 3.x/4.x's Python core, and the
// totals it prints after it.
struct PythonListingSection {
    std::vector<ListingLine> lines;
    std::optional<size_t> commands;  // "Number of commands = N"
    std::optional<size_t> bytes;     // "Command stream length = N bytes"
};

// Vela 3.x/4.x lines: "0x0000bc:          ff80 0118 - cmd0.NPU_SET_OFM_ZERO_POINT    65408", the
// kind (cmd0: one word, cmd1: with a payload) before the name and the 16-bit param again, unsigned
// decimal, in the last column; no decoded fields. A line whose two params or whose kind and payload
// disagree is a listing this parser does not understand: it throws, naming the line.
std::vector<PythonListingSection> parse_python_listing(const fs::path& path) {
    std::vector<PythonListingSection> sections;
    std::ifstream in(path);
    std::string line;
    bool in_output = false;
    size_t line_number = 0;
    auto malformed = [&](const char* what) {
        return std::runtime_error(path.string() + ":" + std::to_string(line_number) + ": " + what + ": " + line);
    };
    while (std::getline(in, line)) {
        ++line_number;
        if (line.rfind("Register-Level Command Stream: Output", 0) == 0) {
            sections.emplace_back();
            in_output = true;
            continue;
        }
        if (!in_output) continue;
        if (line.rfind("Number of commands = ", 0) == 0) {
            sections.back().commands = std::stoul(line.substr(21));
            continue;
        }
        if (line.rfind("Command stream length = ", 0) == 0) {
            sections.back().bytes = std::stoul(line.substr(24));
            in_output = false;
            continue;
        }
        if (!is_command_line(line)) continue;
        ListingLine l = parse_command_columns(line);
        const std::string kind = line.substr(kNameColumn, 5);
        if (kind != "cmd0." && kind != "cmd1.") throw malformed("no cmd0./cmd1. before the name");
        if ((kind == "cmd1.") != l.payload.has_value()) throw malformed("command kind and payload disagree");
        const size_t name_start = kNameColumn + kind.size();
        const size_t name_end = line.find(' ', name_start);
        if (name_end == std::string::npos) throw malformed("no param after the name");
        l.name = line.substr(name_start, name_end - name_start);
        if (std::stoul(line.substr(name_end)) != l.param) throw malformed("decimal and hex params differ");
        sections.back().lines.push_back(l);
    }
    return sections;
}

// Vela's printer renders a negative signed field (NPU_SET_OP_SCALAR) as
// (raw - INT_MIN + INT_MAX) in 32-bit unsigned arithmetic, i.e. raw - 1 modulo 2^32; the
// value itself is the two's-complement int32 we print. Reproduce the quirk to compare.
std::string vela_rendering(const DisassembledField& f) {
    if (f.value < 0 && f.enum_value.empty() && f.text[0] == '-')
        return std::to_string(static_cast<uint32_t>(static_cast<uint32_t>(f.value) - 1u));
    return f.text;
}

std::string fields_text(const DisassembledCommand& c) {
    std::string text;
    for (const auto& f : c.fields) text += ", " + std::string(f.name) + " = " + vela_rendering(f);
    return text;
}

// Vela 5.1 prints U55 streams with the U65 interface header; ours describes the U55 itself,
// whose region registers add custom_dma_cs. Every field Vela printed must match.
bool fields_match(const std::string& ours, const std::string& vela, bool allow_extra) {
    if (ours == vela) return true;
    if (!allow_extra) return false;
    std::stringstream ss(vela.substr(vela.empty() ? 0 : 2));
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (!item.empty() && item[0] == ' ') item.erase(0, 1);
        if (ours.find(", " + item) == std::string::npos) return false;
    }
    return true;
}

// Offset, name, param, code and payload: what every listing prints.
bool same_command(const DisassembledCommand& ours, const ListingLine& vela) {
    return ours.offset == vela.offset && ours.name == vela.name && ours.param == vela.param &&
           ours.code == vela.code && ours.payload == vela.payload;
}

std::string describe(const ListingLine& l) {
    std::ostringstream os;
    os << "offset 0x" << std::hex << l.offset << " " << l.name << " param " << std::dec << l.param << " code 0x"
       << std::hex << l.code;
    if (l.payload) os << " payload 0x" << *l.payload;
    os << std::dec << l.fields;
    return os.str();
}

// Every Regor-compiled model under `models` (<model>/<config>/) against its listing.
void check_regor_listings(const fs::path& models, const std::string& config, const std::string& label) {
    const auto npu = find_npu_config(config);
    ASSERT_TRUE(npu);
    size_t compiled = 0, streams = 0, commands = 0, mismatches = 0;
    for (const auto& dir : fs::directory_iterator(models)) {
        const fs::path tflite = dir.path() / config / "model_vela.tflite";
        const fs::path listing = dir.path() / config / "vela_stdout.txt";
        if (!fs::exists(tflite) || !fs::exists(listing)) continue;
        const auto model = load_model(tflite.string(), {});
        const auto expected = parse_listing(listing);
        ASSERT_EQ(model->invocations.size(), expected.size()) << tflite;
        ++compiled;
        for (size_t s = 0; s < expected.size(); ++s) {
            const auto& words = model->invocations[s].stream.words;
            const auto ours = disassemble_stream(npu->generation, words, tflite.string());
            // Every register an op reads was written by the stream before it (else decoding throws).
            EXPECT_NO_THROW(decode_stream(*npu, words, tflite.string())) << tflite << " stream " << s;
            ASSERT_EQ(ours.size(), expected[s].size()) << tflite << " stream " << s;
            ++streams;
            for (size_t i = 0; i < ours.size(); ++i) {
                const auto& a = ours[i];
                const auto& b = expected[s][i];
                ++commands;
                const bool same =
                    same_command(a, b) && fields_match(fields_text(a), b.fields, npu->generation == Generation::U55);
                if (!same && ++mismatches <= 20) {
                    ADD_FAILURE() << tflite << " stream " << s << "\n  ours: " << format_listing_line(a)
                                  << "\n  vela: " << describe(b);
                }
            }
        }
    }
    EXPECT_EQ(mismatches, 0u);
    EXPECT_GT(compiled, 60u);
    std::cout << "[ listing ] " << label << ": " << compiled << " models, " << streams << " streams, " << commands
              << " commands, " << mismatches << " mismatches\n";
}

class VelaListing : public ::testing::TestWithParam<const char*> {};

TEST_P(VelaListing, EveryCommandMatchesVelasDisassembly) {
    const fs::path vectors = ETHOSU_VECTORS_DIR;
    if (!fs::exists(vectors / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors;
    check_regor_listings(vectors, GetParam(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, VelaListing,
                         ::testing::Values("ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u85-256",
                                           "ethos-u85-1024"),
                         ConfigTestName{});

// Vela 4.5.0 on every U85 size and 5.1.0 on the sizes ../shared/vectors lacks
// (../shared/vectors-vela-u85), in the same listing layout.
class VelaU85Listing : public ::testing::TestWithParam<VelaCompile> {};

TEST_P(VelaU85Listing, EveryCommandMatchesVelasDisassembly) {
    const fs::path vectors = ETHOSU_VECTORS_VELA_U85_DIR;
    if (!fs::exists(vectors / "index.csv"))
        GTEST_SKIP() << "Vela 4.5/5.1 U85 test vectors not found at " << vectors << " (set ETHOSU_VECTORS_VELA_U85_DIR)";
    const auto [version, config] = GetParam();
    check_regor_listings(vectors / version, config, fmt::format("{} {}", version, config));
}

INSTANTIATE_TEST_SUITE_P(Vela45And51, VelaU85Listing, ::testing::ValuesIn(kVelaU85Compiles),
                         [](const auto& info) { return vela_compile_name(info.param); });

// The parser on hand-written lines in Vela 3.x/4.x's layout: two sections, both kinds of command,
// the unsigned decimal param; lines whose columns contradict each other are refused.
fs::path write_listing(const std::string& name, const std::string& text) {
    const fs::path path = fs::temp_directory_path() / name;
    std::ofstream(path) << text;
    return path;
}

TEST(PythonListingParser, ReadsEachOutputSectionAndItsTotals) {
    const auto sections = parse_python_listing(write_listing("listing_ok.txt",
        "Register-Level Command Stream: Input\n"
        "0 AVERAGE Pooling name=: <NpuStripe ...>\n"
        "Register-Level Command Stream: Output\n"
        "  Offset: Payload Param Code - Command                        Param\n"
        "0x000000:          0001 010f - cmd0.NPU_SET_IFM_REGION            1\n"
        "0x000004: 00001400 0000 4000 - cmd1.NPU_SET_IFM_BASE0             0\n"
        "0x00000c:          ff80 0118 - cmd0.NPU_SET_OFM_ZERO_POINT    65408\n"
        "Number of commands = 3\n"
        "Command stream length = 16 bytes\n"
        "Register-Level Command Stream: Input\n"
        "Register-Level Command Stream: Output\n"
        "0x000000: 56796c7e 0025 4024 - cmd1.NPU_SET_OFM_SCALE            37\n"
        "Number of commands = 1\n"
        "Command stream length = 8 bytes\n"));
    ASSERT_EQ(sections.size(), 2u);
    ASSERT_EQ(sections[0].lines.size(), 3u);
    EXPECT_EQ(sections[0].commands, 3u);
    EXPECT_EQ(sections[0].bytes, 16u);
    const ListingLine& zero_point = sections[0].lines[2];
    EXPECT_EQ(zero_point.offset, 0xcu);
    EXPECT_EQ(zero_point.name, "NPU_SET_OFM_ZERO_POINT");
    EXPECT_EQ(zero_point.param, 0xff80);
    EXPECT_EQ(zero_point.code, 0x0118);
    EXPECT_FALSE(zero_point.payload);
    const ListingLine& scale = sections[1].lines.at(0);
    EXPECT_EQ(scale.name, "NPU_SET_OFM_SCALE");
    EXPECT_EQ(scale.payload, 0x56796c7eu);
    EXPECT_EQ(scale.param, 37);
    EXPECT_EQ(scale.code, 0x4024);
}

TEST(PythonListingParser, RefusesLinesWhoseColumnsDisagree) {
    const char* header = "Register-Level Command Stream: Output\n";
    for (const char* line : {"0x000000:          0001 010f - cmd0.NPU_SET_IFM_REGION            2\n",
                             "0x000000:          0001 010f - cmd1.NPU_SET_IFM_REGION            1\n",
                             "0x000004: 00001400 0000 4000 - cmd0.NPU_SET_IFM_BASE0             0\n",
                             "0x000004: 00001400 0000 4000 - NPU_SET_IFM_BASE0                  0\n"}) {
        SCOPED_TRACE(line);
        EXPECT_THROW(parse_python_listing(write_listing("listing_bad.txt", std::string(header) + line)),
                     std::runtime_error);
    }
}

// Vela 3.10.0 and 4.1.0 (../shared/vectors-vela): every stream of every model that compiled, whether
// or not the whole model is on the NPU (one stream per ethos-u operator).
class OlderVelaListing : public ::testing::TestWithParam<VelaCompile> {};

TEST_P(OlderVelaListing, EveryCommandMatchesVelasListing) {
    const fs::path vectors = ETHOSU_VECTORS_VELA_DIR;
    if (!fs::exists(vectors / "index.csv"))
        GTEST_SKIP() << "Vela 3.10/4.1 test vectors not found at " << vectors << " (set ETHOSU_VECTORS_VELA_DIR)";
    const auto [version, config] = GetParam();
    const auto npu = find_npu_config(config);
    ASSERT_TRUE(npu);
    size_t models = 0, streams = 0, commands = 0, mismatches = 0;
    for (auto& row : read_index_rows(vectors / "index.csv")) {
        if (row["vela"] != version || row["config"] != config || row["ok"] != "True") continue;
        const fs::path dir = vectors / version / row["model"] / config;
        const fs::path tflite = dir / "model_vela.tflite";
        const auto model = load_model(tflite.string(), {});
        const auto expected = parse_python_listing(dir / "vela_stdout.txt");
        ASSERT_EQ(model->invocations.size(), std::stoul(row["cmd_streams"])) << tflite;
        ASSERT_EQ(model->invocations.size(), expected.size()) << tflite;
        if (expected.empty()) continue;  // every operator left on the CPU
        ++models;
        for (size_t s = 0; s < expected.size(); ++s) {
            const auto& words = model->invocations[s].stream.words;
            const auto ours = disassemble_stream(npu->generation, words, tflite.string());
            // Every register an op reads was written before it: Vela <= 4.x writes no OFM_SCALE for MAX
            // and padded AVERAGE pools, which in PER_CHANNEL mode do not read it.
            EXPECT_NO_THROW(decode_stream(*npu, words, tflite.string())) << tflite << " stream " << s;
            ASSERT_EQ(ours.size(), expected[s].lines.size()) << tflite << " stream " << s;
            EXPECT_EQ(expected[s].commands, ours.size()) << tflite << " stream " << s;
            EXPECT_EQ(expected[s].bytes, words.size() * 4) << tflite << " stream " << s;
            ++streams;
            for (size_t i = 0; i < ours.size(); ++i) {
                ++commands;
                if (!same_command(ours[i], expected[s].lines[i]) && ++mismatches <= 20) {
                    ADD_FAILURE() << tflite << " stream " << s << "\n  ours: " << format_listing_line(ours[i])
                                  << "\n  vela: " << describe(expected[s].lines[i]);
                }
            }
        }
    }
    EXPECT_EQ(mismatches, 0u);
    EXPECT_GT(models, 55u);
    std::cout << "[ listing ] " << version << " " << config << ": " << models << " models, " << streams << " streams, "
              << commands << " commands, " << mismatches << " mismatches\n";
}

INSTANTIATE_TEST_SUITE_P(
    Vela310And41, OlderVelaListing,
    ::testing::Values(VelaCompile{"3.10.0", "ethos-u55-64"}, VelaCompile{"3.10.0", "ethos-u55-128"},
                      VelaCompile{"3.10.0", "ethos-u65-256"}, VelaCompile{"3.10.0", "ethos-u65-512"},
                      VelaCompile{"4.1.0", "ethos-u55-64"}, VelaCompile{"4.1.0", "ethos-u55-128"},
                      VelaCompile{"4.1.0", "ethos-u65-256"}, VelaCompile{"4.1.0", "ethos-u65-512"}),
    [](const auto& info) { return vela_compile_name(info.param); });

}  // namespace
}  // namespace ethosu
