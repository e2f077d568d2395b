// Vela's raw .npz output: the zip container, the .npy arrays inside and the model they
// describe; hostile archives and arrays end in ethosu::Error naming file, offset and member.

#include <gtest/gtest.h>

#include <algorithm>

#include "frontend/runner/run_model.h"
#include "frontend/loaders/model.h"
#include "frontend/loaders/npy.h"
#include "loader_test_util.h"

namespace ethosu::test {
namespace {

using ::testing::HasSubstr;

const Bytes kWeights = {1, 2, 3, 4, 5, 6, 7, 8, 9};

ZipMembers good_members() { return npz_members(cop1_payload(kU55_128Config, kU55Id, kSomeWords), kWeights); }

void replace(ZipMembers& members, const std::string& name, Bytes bytes) {
    auto it = std::find_if(members.begin(), members.end(), [&](const auto& m) { return m.first == name; });
    ASSERT_NE(it, members.end()) << name;
    it->second = std::move(bytes);
}

std::string npz_error(const ZipMembers& members) {
    return error_of([&] { load_vela_npz("model.npz", zip_archive(members), {}); });
}

// Offset of the first central-directory entry of an archive.
size_t central_directory(const Bytes& zip) {
    const Bytes signature = {0x50, 0x4b, 0x01, 0x02};
    return static_cast<size_t>(std::search(zip.begin(), zip.end(), signature.begin(), signature.end()) - zip.begin());
}

void poke_u32(Bytes& bytes, size_t at, uint32_t value) {
    for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

TEST(Npz, LoadsStoredAndDeflatedAlike) {
    for (const bool deflate : {false, true}) {
        SCOPED_TRACE(deflate ? "DEFLATE" : "STORED");
        const auto model = load_vela_npz("model.npz", zip_archive(good_members(), deflate), {});
        EXPECT_EQ(model->format, ModelFormat::VelaNpz);
        EXPECT_EQ(model->config.name, "ethos-u55-128");
        ASSERT_EQ(model->invocations.size(), 1u);
        const NpuInvocation& inv = model->invocations[0];
        EXPECT_EQ(inv.stream.words, kSomeWords);
        ASSERT_EQ(inv.regions.size(), 2u);  // fast scratch of size 0 is no region
        EXPECT_EQ(inv.regions[0].index, 0);
        EXPECT_EQ(inv.regions[0].role, RegionRole::Weights);
        EXPECT_TRUE(std::ranges::equal(inv.regions[0].bytes, kWeights));
        EXPECT_EQ(inv.regions[1].index, 1);
        EXPECT_EQ(inv.regions[1].role, RegionRole::Scratch);
        EXPECT_EQ(inv.regions[1].size, 64u);
        ASSERT_EQ(model->inputs.size(), 1u);
        EXPECT_EQ(model->inputs[0].shape, (std::vector<int64_t>{1, 1, 1, 4, 4, 2}));
        EXPECT_EQ(model->inputs[0].type, ElementType::Int8);
        EXPECT_EQ(model->inputs[0].region, 1);
        EXPECT_EQ(model->inputs[0].size_bytes, 32u);
        ASSERT_EQ(model->outputs.size(), 1u);
        EXPECT_EQ(model->outputs[0].offset, 32u);
        EXPECT_EQ(model->outputs[0].size_bytes, 8u);
    }
}

TEST(Npz, DetectedByZipMagic) {
    const auto model = load_model(write_temp("m.npz", zip_archive(good_members())), {});
    EXPECT_EQ(model->format, ModelFormat::VelaNpz);
}

TEST(Npz, NumpyEmptyBytesMeanNoWeights) {
    ZipMembers members = good_members();
    replace(members, "weight_data.npy", npy_bytes({0}));  // how numpy stores b""
    const auto model = load_vela_npz("model.npz", zip_archive(members), {});
    EXPECT_TRUE(model->invocations[0].regions[0].bytes.empty());
    EXPECT_EQ(model->invocations[0].regions[0].size, 0u);
}

TEST(Npz, FastScratchAndUnplacedFeatureMaps) {
    ZipMembers members = good_members();
    replace(members, "scratch_fast_size.npy", npy_i64("()", {4096}));
    // Vela's "not placed" offset, uint64 -1, stored by numpy as float64 2^64.
    Bytes offsets;
    put_u64(offsets, 0x43F0000000000000);  // 2^64
    replace(members, "input_offset.npy", npy("<f8", "(1,)", offsets));
    const auto model = load_vela_npz("model.npz", zip_archive(members), {});
    ASSERT_EQ(model->invocations[0].regions.size(), 3u);
    EXPECT_EQ(model->invocations[0].regions[2].role, RegionRole::ScratchFast);
    EXPECT_EQ(model->invocations[0].regions[2].index, 2);
    EXPECT_EQ(model->invocations[0].regions[2].size, 4096u);
    EXPECT_EQ(model->inputs[0].region, -1);

    Bytes fraction;
    put_u64(fraction, 0x3FF8000000000000);  // 1.5
    replace(members, "input_offset.npy", npy("<f8", "(1,)", fraction));
    EXPECT_THAT(npz_error(members), HasSubstr("not a whole 64-bit number"));
}

TEST(Npz, BadModelValues) {
    ZipMembers missing = good_members();
    missing.erase(missing.begin());
    const std::string e = npz_error(missing);
    EXPECT_THAT(e, HasSubstr("model.npz"));
    EXPECT_THAT(e, HasSubstr("cmd_data.npy"));
    EXPECT_THAT(e, HasSubstr("missing"));

    ZipMembers region = good_members();
    replace(region, "weight_region.npy", npy_i64("()", {9}));
    EXPECT_THAT(npz_error(region), HasSubstr("region 9"));

    ZipMembers shared = good_members();
    replace(shared, "scratch_region.npy", npy_i64("()", {0}));
    EXPECT_THAT(npz_error(shared), HasSubstr("both claim region 0"));

    ZipMembers rows = good_members();
    replace(rows, "input_region.npy", npy_i64("(2,)", {1, 1}));
    EXPECT_THAT(npz_error(rows), HasSubstr("disagree"));

    ZipMembers element = good_members();
    replace(element, "output_elem_size.npy", npy_i64("(1,)", {3}));
    EXPECT_THAT(npz_error(element), HasSubstr("element size 3"));

    ZipMembers huge_scratch = good_members();
    replace(huge_scratch, "scratch_size.npy", npy_i64("()", {int64_t{1} << 40}));
    EXPECT_THAT(npz_error(huge_scratch), HasSubstr("scratch_size"));

    ZipMembers pickled = good_members();
    replace(pickled, "cmd_data.npy", npy("|O", "()", {0x80, 0x04}));
    EXPECT_THAT(npz_error(pickled), HasSubstr("pickles"));

    ZipMembers not_bytes = good_members();
    replace(not_bytes, "cmd_data.npy", npy_i64("()", {7}));
    EXPECT_THAT(npz_error(not_bytes), HasSubstr("bytes scalar"));
}

// Every error about a value names where it lies: a missing member the central directory, a
// scalar or a row its value's offset, in the archive for STORED members.
TEST(Npz, ErrorsNameTheOffsetOfTheValue) {
    const auto where_of = [](const ZipMembers& members) -> ErrorLocation {
        try {
            load_vela_npz("model.npz", zip_archive(members), {});
        } catch (const Error& e) {
            return e.where();
        }
        ADD_FAILURE() << "expected ethosu::Error";
        return {};
    };
    // Where the 8 bytes of a member's only int64 lie: the end of its data in the archive.
    const auto value_offset = [](const ZipMembers& members, const std::string& name) {
        const Bytes zip = zip_archive(members);
        const auto it = std::find_if(members.begin(), members.end(), [&](const auto& m) { return m.first == name; });
        const auto header = std::search(zip.begin(), zip.end(), name.begin(), name.end());  // its local header
        const auto at = std::search(header, zip.end(), it->second.begin(), it->second.end());
        return static_cast<uint64_t>(at - zip.begin()) + it->second.size() - 8;
    };

    ZipMembers missing = good_members();
    missing.erase(missing.begin());
    EXPECT_EQ(where_of(missing).offset, central_directory(zip_archive(missing)));

    ZipMembers region = good_members();
    replace(region, "weight_region.npy", npy_i64("()", {9}));
    EXPECT_EQ(where_of(region).offset, value_offset(region, "weight_region.npy"));
    EXPECT_EQ(where_of(region).field, "weight_region");

    ZipMembers shared = good_members();
    replace(shared, "scratch_region.npy", npy_i64("()", {0}));
    EXPECT_EQ(where_of(shared).offset, value_offset(shared, "scratch_region.npy"));

    ZipMembers huge_scratch = good_members();
    replace(huge_scratch, "scratch_size.npy", npy_i64("()", {int64_t{1} << 40}));
    EXPECT_EQ(where_of(huge_scratch).offset, value_offset(huge_scratch, "scratch_size.npy"));

    ZipMembers negative = good_members();
    replace(negative, "output_shape.npy", npy_i64("(1, 4)", {1, -2, 2, 2}));
    EXPECT_EQ(where_of(negative).offset, value_offset(negative, "output_shape.npy") - 24);  // the row's first value
    EXPECT_EQ(where_of(negative).field, "output[0]");

    // A region the file may hold but no run can map: the run's error points at its size.
    ZipMembers unmappable = good_members();
    replace(unmappable, "scratch_size.npy", npy_i64("()", {int64_t{1} << 29}));
    const auto model = load_vela_npz("model.npz", zip_archive(unmappable), {});
    try {
        run_model(*model, {});
        ADD_FAILURE() << "a 512 MiB scratch region was mapped";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, value_offset(unmappable, "scratch_size.npy")) << e.what();
        EXPECT_EQ(e.where().field, "scratch_size") << e.what();
        EXPECT_THAT(e.what(), HasSubstr("region 1 (scratch) of 536870912 bytes cannot be mapped"));
    }
}

// A deflated member is checked against its limit before it is inflated: cmd_data may hold
// max_stream_words words and its headers, nothing more.
TEST(Npz, MemberOverItsLimitIsRefusedBeforeInflating) {
    ZipMembers members = good_members();
    replace(members, "cmd_data.npy", npy_bytes(cop1_payload(kU55_128Config, kU55Id, std::vector<uint32_t>(1 << 16))));
    const Bytes zip = zip_archive(members, /*deflate=*/true);
    EXPECT_NO_THROW(load_vela_npz("model.npz", zip, {}));
    const std::string e =
        error_of([&] { load_vela_npz("model.npz", zip, {.npu = std::nullopt, .max_stream_words = 1000}); });
    EXPECT_THAT(e, HasSubstr("cmd_data.npy"));
    EXPECT_THAT(e, HasSubstr("over the limit"));
    EXPECT_THAT(e, HasSubstr("file@0x"));
}

TEST(Npz, HostileArrays) {
    ZipMembers huge = good_members();
    replace(huge, "input_shape.npy", npy("<i8", "(4611686018427387904,)", {}));
    const std::string e = npz_error(huge);
    EXPECT_THAT(e, HasSubstr("input_shape.npy"));
    EXPECT_THAT(e, HasSubstr("file@0x"));
    EXPECT_THAT(e, HasSubstr("shape needs more elements"));

    ZipMembers header = good_members();
    replace(header, "scratch_size.npy", {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xFF, 0xFF, '{', '}'});
    EXPECT_THAT(npz_error(header), HasSubstr("needs 65535 bytes"));

    ZipMembers extra = good_members();
    Bytes two_values;
    put_u64(two_values, 64);
    put_u64(two_values, 0);
    replace(extra, "scratch_size.npy", npy("<i8", "()", two_values));
    EXPECT_THAT(npz_error(extra), HasSubstr("8 bytes follow the array data"));
}

// parse_npy on its own: the header grammar.
std::string npy_error(const std::string& header) {
    Bytes file = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    put_u16(file, static_cast<uint16_t>(header.size()));
    put_string(file, header);
    return error_of([&] { parse_npy(ByteReader("a.npy", file), "a.npy"); });
}

TEST(Npy, StrictHeaderGrammar) {
    Bytes v2 = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0};
    const std::string header = "{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (1, 2)}\n";
    put_u32(v2, static_cast<uint32_t>(header.size()));
    put_string(v2, header);
    v2.resize(v2.size() + 16, 0);
    const NpyArray a = parse_npy(ByteReader("a.npy", v2), "a.npy");
    EXPECT_EQ(a.descr, "<i8");
    EXPECT_EQ(a.shape, (std::vector<uint64_t>{1, 2}));
    EXPECT_EQ(a.elements.size(), 16u);

    EXPECT_THAT(npy_error("{'descr': '<i8', 'fortran_order': False, 'shape': (), 'x': 1}"),
                HasSubstr("unexpected key 'x'"));
    EXPECT_THAT(npy_error("{'descr': '<i8', 'shape': ()}"), HasSubstr("lacks"));
    EXPECT_THAT(npy_error("{'descr': '<i8', 'descr': '<i8'}"), HasSubstr("twice"));
    EXPECT_THAT(npy_error("{'descr': '>i8', 'fortran_order': False, 'shape': ()}"), HasSubstr("little-endian"));
    // A descr without its size: std::stoull would throw std::invalid_argument, not name the field.
    EXPECT_THAT(npy_error("{'descr': '|S', 'fortran_order': False, 'shape': (0), }"), HasSubstr("element size"));
    EXPECT_THAT(npy_error("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 2)}"), HasSubstr("Fortran"));
    EXPECT_THAT(npy_error("{'descr': '<i8', 'fortran_order': False, 'shape': ()} x"), HasSubstr("after the header"));
    EXPECT_THAT(npy_error("{'descr': '<i8', 'fortran_order': Maybe, 'shape': ()}"), HasSubstr("True or False"));
    EXPECT_THAT(npy_error("{'descr': '<i8', 'fortran_order': False, 'shape': (-1,)}"), HasSubstr("non-negative"));
    EXPECT_THAT(npy_error("{'descr': '<i8', 'fortran_order': False, 'shape': (99999999999999999999,)}"),
                HasSubstr("64 bits"));
    EXPECT_THAT(npy_error("{'descr': '<i8"), HasSubstr("unterminated"));
    EXPECT_THAT(npy_error("{'descr': '|S0', 'fortran_order': False, 'shape': ()}"), HasSubstr("element size 0"));
    const std::string at = npy_error("{'descr': '<i8', 'fortran_order': False, 'shape': (1,)}");
    EXPECT_THAT(at, HasSubstr("a.npy: file@0x"));
    EXPECT_THAT(at, HasSubstr("more elements than the 0 bytes left"));
}

TEST(Npy, WrittenAsNumpySavesAndReadBack) {
    const Bytes data = {1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0};
    const std::vector<int64_t> shape = {2, 3};
    const Bytes file = npy_file(npy_descr(ElementType::Int16), shape, data);
    // numpy.save's header for this array, padded with spaces and a newline so the data starts
    // 64-byte aligned (at 128: the dict alone takes 59 bytes after the 10 of the preamble).
    const size_t length = file[8] | (file[9] << 8);
    ASSERT_EQ(10 + length, 128u);
    const std::string header(file.begin() + 10, file.begin() + 128);
    EXPECT_EQ(header.substr(0, 59), "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }");
    EXPECT_EQ(header.find_first_not_of(' ', 59), header.size() - 1);
    EXPECT_EQ(header.back(), '\n');
    EXPECT_EQ(file.size(), 128u + data.size());
    const NpyArray a = parse_npy(ByteReader("a.npy", file), "a.npy");
    EXPECT_EQ(a.descr, "<i2");
    EXPECT_EQ(a.shape, (std::vector<uint64_t>{2, 3}));
    EXPECT_TRUE(std::ranges::equal(a.elements.data(), data));
    EXPECT_EQ(shape_tuple(std::vector<int64_t>{5}), "(5,)");
    EXPECT_EQ(shape_tuple(std::vector<int64_t>{}), "()");
    EXPECT_EQ(npy_descr(ElementType::Float32), "<f4");
    EXPECT_EQ(npy_descr(ElementType::Int8), "|i1");
    EXPECT_EQ(npy_descr(ElementType::Other), "");
}

TEST(Zip, HostileArchives) {
    const Bytes good = zip_archive(good_members());
    const size_t entry = central_directory(good);
    const auto error = [](const Bytes& zip) { return error_of([&] { load_vela_npz("model.npz", zip, {}); }); };

    Bytes past_end = good;  // member sizes far beyond the file
    poke_u32(past_end, entry + 20, 0x7FFFFFF0);
    poke_u32(past_end, entry + 24, 0x7FFFFFF0);
    const std::string e = error(past_end);
    EXPECT_THAT(e, HasSubstr("model.npz: file@0x"));
    EXPECT_THAT(e, HasSubstr("member cmd_data.npy: data"));

    Bytes local = good;
    poke_u32(local, entry + 42, static_cast<uint32_t>(good.size() + 100));
    EXPECT_THAT(error(local), HasSubstr("local header"));

    Bytes name_length = good;
    name_length[entry + 28] = 0xFF;
    name_length[entry + 29] = 0xFF;
    EXPECT_THAT(error(name_length), HasSubstr("central directory.name"));

    Bytes encrypted = good;
    encrypted[entry + 8] |= 1;
    EXPECT_THAT(error(encrypted), HasSubstr("encrypted"));

    Bytes method = good;
    method[entry + 10] = 12;  // bzip2
    EXPECT_THAT(error(method), HasSubstr("method 12"));

    Bytes zip64 = good;
    poke_u32(zip64, entry + 24, 0xFFFFFFFF);
    poke_u32(zip64, entry + 20, 0xFFFFFFFF);
    EXPECT_THAT(error(zip64), HasSubstr("zip64"));

    Bytes crc = good;
    crc[100] ^= 0x01;  // inside cmd_data's payload
    EXPECT_THAT(error(crc), HasSubstr("CRC-32"));

    EXPECT_THAT(error(Bytes(good.begin(), good.end() - 1)), HasSubstr("end-of-central-directory"));
    EXPECT_THAT(error(Bytes(good.begin(), good.begin() + 10)), HasSubstr("too short"));

    // cmd_data claiming 2 GB is over the stream's limit; weight_data (limit 4 GiB) over DEFLATE's ratio.
    Bytes bomb = zip_archive(good_members(), true);
    const size_t bomb_entry = central_directory(bomb);
    poke_u32(bomb, bomb_entry + 24, 0x7FFFFFF0);
    EXPECT_THAT(error(bomb), HasSubstr("over the limit"));
    Bytes weights_bomb = zip_archive(good_members(), true);
    const std::string weights_name = "weight_data.npy";
    const size_t weights_entry =
        static_cast<size_t>(std::search(weights_bomb.begin() + static_cast<ptrdiff_t>(central_directory(weights_bomb)),
                                        weights_bomb.end(), weights_name.begin(), weights_name.end()) -
                            weights_bomb.begin()) -
        46;  // the name follows the 46-byte fixed part of the entry
    poke_u32(weights_bomb, weights_entry + 24, 0x7FFFFFF0);
    EXPECT_THAT(error(weights_bomb), HasSubstr("inflated"));

    Bytes corrupt = zip_archive(good_members(), true);
    corrupt[50] ^= 0xFF;  // inside cmd_data's deflate stream
    const std::string inflate = error(corrupt);
    EXPECT_THAT(inflate, ::testing::AnyOf(HasSubstr("DEFLATE"), HasSubstr("CRC-32")));
}

TEST(Zip, DuplicateMembers) {
    ZipMembers twice = good_members();
    twice.push_back(twice.front());
    EXPECT_THAT(npz_error(twice), HasSubstr("appears twice"));
}

TEST(Npz, CorpusArchiveWithAMemberPastTheEnd) {
    if (!have_vectors()) GTEST_SKIP() << "no Vela corpus at " << vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    const auto path = vectors_dir() / "hello_world_int8" / "ethos-u55-128" / "model_vela.npz";
    Bytes bytes = read_bytes(path);
    const size_t entry = central_directory(bytes);
    poke_u32(bytes, entry + 20, 0x00FFFFFF);
    poke_u32(bytes, entry + 24, 0x00FFFFFF);
    const std::string e = error_of([&] { load_vela_npz(path.string(), bytes, {}); });
    EXPECT_THAT(e, HasSubstr(path.string()));
    EXPECT_THAT(e, HasSubstr("file@0x"));
    EXPECT_THAT(e, HasSubstr("cmd_data.npy"));
}

}  // namespace
}  // namespace ethosu::test
