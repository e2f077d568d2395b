// Decodes every command stream of ../shared/vectors and compares each command with the
// listing Vela printed while compiling it (vela_stdout.txt): offset, name, param, payload,
// code and the decoded fields.

#include <gtest/gtest.h>

#include "tests/config_test_name.h"

#include <filesystem>
#include <fstream>
#include <sstream>

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

// Vela prints one "Register command stream: N words" section per ethos-u operator.
std::vector<std::vector<ListingLine>> parse_listing(const fs::path& path) {
    std::vector<std::vector<ListingLine>> streams;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("Register command stream:", 0) == 0) {
            streams.emplace_back();
            continue;
        }
        if (streams.empty() || line.size() < 30 || line.rfind("0x", 0) != 0 || line[8] != ':') continue;
        ListingLine l;
        l.offset = static_cast<uint32_t>(std::stoul(line.substr(2, 6), nullptr, 16));
        const std::string payload = line.substr(10, 8);
        if (payload != "        ") l.payload = static_cast<uint32_t>(std::stoul(payload, nullptr, 16));
        l.param = static_cast<uint16_t>(std::stoul(line.substr(19, 4), nullptr, 16));
        l.code = static_cast<uint16_t>(std::stoul(line.substr(24, 4), nullptr, 16));
        const size_t name_start = 31;
        const size_t name_end = line.find(' ', name_start);
        l.name = line.substr(name_start, name_end - name_start);
        const size_t comma = line.find(',', name_end);
        if (comma != std::string::npos) l.fields = line.substr(comma);
        streams.back().push_back(l);
    }
    return streams;
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

class VelaListing : public ::testing::TestWithParam<const char*> {};

TEST_P(VelaListing, EveryCommandMatchesVelasDisassembly) {
    const fs::path vectors = ETHOSU_VECTORS_DIR;
    if (!fs::exists(vectors / "index.csv")) GTEST_SKIP() << "test vectors not found at " << vectors;
    const std::string config = GetParam();
    const auto npu = find_npu_config(config);
    ASSERT_TRUE(npu);
    size_t models = 0, streams = 0, commands = 0, mismatches = 0, unset_reports = 0;
    for (const auto& dir : fs::directory_iterator(vectors)) {
        const fs::path tflite = dir.path() / config / "model_vela.tflite";
        const fs::path listing = dir.path() / config / "vela_stdout.txt";
        if (!fs::exists(tflite) || !fs::exists(listing)) continue;
        const auto model = load_model(tflite.string(), {});
        const auto expected = parse_listing(listing);
        ASSERT_EQ(model->invocations.size(), expected.size()) << tflite;
        ++models;
        for (size_t s = 0; s < expected.size(); ++s) {
            const auto& words = model->invocations[s].stream.words;
            const auto ours = disassemble_stream(npu->generation, words, tflite.string());
            // Every register an op reads was written by the stream before it.
            for (const auto& w : decode_stream(*npu, words, tflite.string()).warnings) {
                if (++unset_reports <= 10) ADD_FAILURE() << w;
            }
            ASSERT_EQ(ours.size(), expected[s].size()) << tflite << " stream " << s;
            ++streams;
            for (size_t i = 0; i < ours.size(); ++i) {
                const auto& a = ours[i];
                const auto& b = expected[s][i];
                ++commands;
                const bool same = a.offset == b.offset && a.name == b.name && a.param == b.param &&
                                  a.code == b.code && a.payload == b.payload &&
                                  fields_match(fields_text(a), b.fields, npu->generation == Generation::U55);
                if (!same && ++mismatches <= 20) {
                    ADD_FAILURE() << tflite << " stream " << s << "\n  ours: " << format_listing_line(a)
                                  << "\n  vela: offset 0x" << std::hex << b.offset << " " << b.name << " param "
                                  << std::dec << b.param << b.fields;
                }
            }
        }
    }
    EXPECT_EQ(mismatches, 0u);
    EXPECT_EQ(unset_reports, 0u);
    EXPECT_GT(models, 60u);
    std::cout << "[ listing ] " << config << ": " << models << " models, " << streams << " streams, " << commands
              << " commands, " << mismatches << " mismatches\n";
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, VelaListing,
                         ::testing::Values("ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u85-256",
                                           "ethos-u85-1024"),
                         ConfigTestName{});

}  // namespace
}  // namespace ethosu
