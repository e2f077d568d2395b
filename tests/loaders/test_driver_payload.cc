// COP1/COP2 driver payloads, NPU-configuration resolution, raw command streams and format
// detection by content.

#include <gtest/gtest.h>

#include <cstring>

#include "frontend/loaders/model.h"
#include "loader_test_util.h"

namespace ethosu::test {
namespace {

using ::testing::HasSubstr;

CommandStream parse(const Bytes& payload, uint64_t base = 0) {
    return parse_driver_payload("payload.bin", payload.data(), payload.size(), base);
}

std::string parse_error(const Bytes& payload) {
    return error_of([&] { parse(payload); });
}

TEST(DriverPayload, Cop1AsVelaWritesIt) {
    const CommandStream cs = parse(cop1_payload(kU55_128Config, kU55Id, kSomeWords), 0x100);
    EXPECT_EQ(cs.payload_kind, "COP1");
    EXPECT_EQ(cs.config_word, kU55_128Config);
    EXPECT_EQ(cs.id_word, kU55Id);
    EXPECT_EQ(cs.words, kSomeWords);
    EXPECT_EQ(cs.file_offset, 0x100u + 32);  // 4 header words, 3 NOPs, the tag
}

TEST(DriverPayload, Cop1StreamLengthUsesItsHighByte) {
    const std::vector<uint32_t> words(0x10003, 0x00000000);
    EXPECT_EQ(parse(cop1_payload(kU55_128Config, kU55Id, words)).words.size(), words.size());
}

TEST(DriverPayload, Cop1StreamPastTheEnd) {
    Bytes payload = cop1_payload(kU55_128Config, kU55Id, kSomeWords);
    payload.resize(payload.size() - 4);
    const std::string e = parse_error(payload);
    EXPECT_THAT(e, HasSubstr("payload.bin"));
    EXPECT_THAT(e, HasSubstr("file@0x1c"));  // the COMMAND_STREAM tag
    EXPECT_THAT(e, HasSubstr("COMMAND_STREAM.length"));
}

TEST(DriverPayload, Cop1Refusals) {
    const Bytes good = cop1_payload(kU55_128Config, kU55Id, kSomeWords);
    Bytes odd = good;
    odd.push_back(0);
    EXPECT_THAT(parse_error(odd), HasSubstr("not a whole number of words"));

    Bytes magic = good;
    magic[3] = '9';
    EXPECT_THAT(parse_error(magic), HasSubstr("expected \"COP1\" or \"COP2\""));

    EXPECT_THAT(parse_error(Bytes(good.begin(), good.begin() + 12)), HasSubstr("OPTIMIZER_CONFIG.ID"));
    EXPECT_THAT(parse_error(Bytes(good.begin(), good.begin() + 28)), HasSubstr("no COMMAND_STREAM tag"));
    EXPECT_THAT(parse_error({}), HasSubstr("magic"));

    Bytes unknown = good;
    unknown[16] = 0x09;  // first NOP becomes tag id 9
    EXPECT_THAT(parse_error(unknown), HasSubstr("unknown driver action id 9"));
    Bytes apb = good;
    apb[16] = 0x03;
    EXPECT_THAT(parse_error(apb), HasSubstr("READ_APB"));

    Bytes twice = good;
    for (const uint32_t w : {0x00040002u, 1u, 2u, 3u, 4u}) put_u32(twice, w);
    EXPECT_THAT(parse_error(twice), HasSubstr("second COMMAND_STREAM"));
}

TEST(DriverPayload, Cop2AsRegorWritesIt) {
    const Bytes payload = cop2_payload(kU55_128Config, kU55Id, 0x1, kSomeWords);
    const CommandStream cs = parse(payload, 0x40);
    EXPECT_EQ(cs.payload_kind, "COP2");
    EXPECT_EQ(cs.config_word, kU55_128Config);
    EXPECT_EQ(cs.id_word, kU55Id);
    EXPECT_EQ(cs.words, kSomeWords);
    EXPECT_EQ(cs.file_offset, 0x40u + 64);
    // Local addressing (vela --separate-io-regions): the same stream, the I/O regions named by the tensors.
    EXPECT_EQ(parse(cop2_payload(kU55_128Config, kU55Id, 0x3, kSomeWords), 0).words, kSomeWords);
}

TEST(DriverPayload, Cop2Refusals) {
    const Bytes good = cop2_payload(kU55_128Config, kU55Id, 0x1, kSomeWords);

    Bytes veum = good;
    veum[28] = 'X';
    EXPECT_THAT(parse_error(veum), HasSubstr("VEUM"));

    Bytes version = good;
    version[4] = 2;
    EXPECT_THAT(parse_error(version), HasSubstr("COP2 version 2"));

    Bytes length = good;
    length[8] += 4;
    EXPECT_THAT(parse_error(length), HasSubstr("actions"));

    Bytes entry_type = good;
    entry_type[16] = 7;
    EXPECT_THAT(parse_error(entry_type), HasSubstr("unknown entry type 7"));

    Bytes entry_length = good;
    entry_length[20] += 16;  // entry claims more than the actions hold
    EXPECT_THAT(parse_error(entry_length), HasSubstr("entry"));

    Bytes metadata = good;
    metadata[24] = 0xF0;  // metadata longer than the entry
    EXPECT_THAT(parse_error(metadata), HasSubstr("metadata"));

    Bytes ragged = good;  // entry ends 2 bytes into the last word; those 2 bytes would start the next entry
    ragged[20] -= 2;
    EXPECT_THAT(parse_error(ragged), HasSubstr("not a whole number of words"));
}

TEST(ResolveNpuConfig, FromTheHeaderOrTheOverride) {
    CommandStream cs;
    cs.config_word = kU55_128Config;
    EXPECT_EQ(resolve_npu_config("m", cs, {}).name, "ethos-u55-128");
    EXPECT_EQ(resolve_npu_config("m", cs, {.npu = "ethos-u55-128"}).name, "ethos-u55-128");

    const std::string mismatch = error_of([&] { resolve_npu_config("m", cs, {.npu = "ethos-u85-256"}); });
    EXPECT_THAT(mismatch, HasSubstr("ethos-u85-256"));
    EXPECT_THAT(mismatch, HasSubstr("ethos-u55-128"));
    EXPECT_THAT(mismatch, HasSubstr("CONFIG"));

    const std::string unknown = error_of([&] { resolve_npu_config("m", cs, {.npu = "ethos-u99"}); });
    EXPECT_THAT(unknown, HasSubstr("ethos-u99"));
    EXPECT_THAT(unknown, HasSubstr(npu_config_names()));

    cs.config_word = 0x70000003;
    EXPECT_THAT(error_of([&] { resolve_npu_config("m", cs, {}); }), HasSubstr("0x70000003"));

    CommandStream raw;
    raw.payload_kind = "raw";
    EXPECT_THAT(error_of([&] { resolve_npu_config("m", raw, {}); }), HasSubstr("--npu is required"));
    EXPECT_EQ(resolve_npu_config("m", raw, {.npu = "ethos-u85-1024"}).name, "ethos-u85-1024");
}

TEST(ResolveNpuConfig, ErrorsNameTheConfigWordOffset) {
    const Bytes payload = cop1_payload(0x70000003, kU55Id, kSomeWords);
    const CommandStream cs = parse_driver_payload("m", payload.data(), payload.size(), 0x100);
    EXPECT_EQ(cs.config_word_offset, 0x100u + 8);  // after the magic and the OPTIMIZER_CONFIG tag
    try {
        resolve_npu_config("m", cs, {});
        FAIL() << "expected ethosu::Error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, 0x108u);
        EXPECT_EQ(e.where().field, "CONFIG");
    }
    const Bytes cop2 = cop2_payload(kU55_128Config, kU55Id, 0, kSomeWords);
    const CommandStream from_cop2 = parse_driver_payload("m", cop2.data(), cop2.size(), 0);
    uint32_t at_offset = 0;
    std::memcpy(&at_offset, cop2.data() + from_cop2.config_word_offset, 4);
    EXPECT_EQ(at_offset, kU55_128Config);
}

// Streams over the limit are refused before they are copied, in every container.
TEST(CommandStreamLimit, RefusedWithTheOffsetOfTheLength) {
    const std::vector<uint32_t> words(100, 0);
    const Bytes cop1 = cop1_payload(kU55_128Config, kU55Id, words);
    EXPECT_NO_THROW(parse_driver_payload("m", cop1.data(), cop1.size(), 0, 100));
    const std::string e = error_of([&] { parse_driver_payload("m", cop1.data(), cop1.size(), 0, 99); });
    EXPECT_THAT(e, HasSubstr("COMMAND_STREAM.length"));
    EXPECT_THAT(e, HasSubstr("100 words is over the limit of 99"));

    const Bytes cop2 = cop2_payload(kU55_128Config, kU55Id, 0, words);
    EXPECT_THAT(error_of([&] { parse_driver_payload("m", cop2.data(), cop2.size(), 0, 99); }),
                HasSubstr("over the limit of 99"));

    Bytes raw;
    for (const uint32_t w : words) put_u32(raw, w);
    const LoadOptions limited{.npu = "ethos-u55-128", .max_stream_words = 99};
    EXPECT_THAT(error_of([&] { load_raw_command_stream("m.bin", raw, limited); }),
                HasSubstr("m.bin: file@0x0: command stream: command stream of 100 words"));
}

TEST(RawCommandStream, BareWordsNeedNpu) {
    Bytes words;
    for (const uint32_t w : kSomeWords) put_u32(words, w);
    const std::string path = write_temp("stream.bin", words);
    const std::string without_npu = error_of([&] { load_model(path, {}); });
    EXPECT_THAT(without_npu, HasSubstr("not a model ethosu-emu reads"));
    EXPECT_THAT(without_npu, HasSubstr("bare command stream without a COP header is read only with --npu"));

    const auto model = load_model(path, {.npu = "ethos-u65-256"});
    EXPECT_EQ(model->format, ModelFormat::RawCommandStream);
    EXPECT_EQ(model->config.name, "ethos-u65-256");
    ASSERT_EQ(model->invocations.size(), 1u);
    EXPECT_EQ(model->invocations[0].stream.payload_kind, "raw");
    EXPECT_EQ(model->invocations[0].stream.words, kSomeWords);
    EXPECT_TRUE(model->invocations[0].regions.empty());

    words.push_back(0);
    const std::string e = error_of([&] { load_raw_command_stream("odd.bin", words, {.npu = "ethos-u65-256"}); });
    EXPECT_THAT(e, HasSubstr("odd.bin"));
    EXPECT_THAT(e, HasSubstr("not a whole number of 32-bit words"));
    EXPECT_THAT(error_of([&] { load_raw_command_stream("none.bin", Bytes{}, {.npu = "ethos-u65-256"}); }),
                HasSubstr("empty"));
}

TEST(RawCommandStream, SavedPayloadNamesItsNpu) {
    const std::string path = write_temp("payload.cop", cop1_payload(kU55_128Config, kU55Id, kSomeWords));
    const auto model = load_model(path, {});
    EXPECT_EQ(model->format, ModelFormat::RawCommandStream);
    EXPECT_EQ(model->config.name, "ethos-u55-128");
    EXPECT_EQ(model->invocations.at(0).stream.payload_kind, "COP1");
    EXPECT_THAT(error_of([&] { load_model(path, {.npu = "ethos-u65-256"}); }), HasSubstr("disagrees"));
}

TEST(LoadModel, UnrecognisedFilesAreNotModels) {
    const Bytes png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13};
    const std::string path = write_temp("picture.png", png);
    const std::string e = error_of([&] { load_model(path, {}); });
    EXPECT_THAT(e, HasSubstr(path));
    EXPECT_THAT(e, HasSubstr("file@0x0"));
    EXPECT_THAT(e, HasSubstr("not a model ethosu-emu reads (expected a Vela .tflite, .npz, ExecuTorch .pte or "
                             "vela_bin_stream, or a COP1 command stream)"));
    EXPECT_THAT(error_of([&] { load_model(write_temp("short.bin", {1, 2}), {}); }), HasSubstr("not a model"));
}

TEST(LoadModel, UnreadableFiles) {
    const std::string empty = write_temp("empty.tflite", {});
    const std::string e = error_of([&] { load_model(empty, {}); });
    EXPECT_THAT(e, HasSubstr(empty));
    EXPECT_THAT(e, HasSubstr("empty"));

    const std::string missing = write_temp("x", {}) + ".missing";
    EXPECT_THAT(error_of([&] { load_model(missing, {}); }), HasSubstr(missing));
    EXPECT_THAT(error_of([&] { load_model(std::filesystem::temp_directory_path().string(), {}); }),
                HasSubstr("not a regular file"));
}

TEST(LoadModel, NamesAndSizes) {
    EXPECT_EQ(element_size(ElementType::Int8), 1);
    EXPECT_EQ(element_size(ElementType::UInt16), 2);
    EXPECT_EQ(element_size(ElementType::Float32), 4);
    EXPECT_EQ(element_size(ElementType::Int64), 8);
    EXPECT_EQ(element_size(ElementType::Other), 0);
    EXPECT_EQ(element_type_name(ElementType::Bool), "bool");
    EXPECT_EQ(model_format_name(ModelFormat::VelaNpz), "vela-npz");
}

// Shapes lay out the same bytes when they are equal but for dimensions of 1, wherever those sit.
TEST(LoadModel, SameElementOrderIgnoresOnlyDimensionsOfOne) {
    using S = std::vector<int64_t>;
    EXPECT_TRUE(same_element_order(S{}, S{}));
    EXPECT_TRUE(same_element_order(S{1, 1}, S{}));
    EXPECT_TRUE(same_element_order(S{1, 1, 1, 1, 28, 28}, S{1, 28, 1, 28}));
    EXPECT_TRUE(same_element_order(S{8, 1, 8, 32, 1}, S{1, 8, 8, 32}));
    EXPECT_FALSE(same_element_order(S{1, 3, 8, 8}, S{1, 8, 8, 3}));  // channels first vs last
    EXPECT_FALSE(same_element_order(S{2048}, S{1, 8, 8, 32}));
    EXPECT_FALSE(same_element_order(S{8, 8}, S{8, 8, 2}));
    EXPECT_FALSE(same_element_order(S{0}, S{}));
}

}  // namespace
}  // namespace ethosu::test
