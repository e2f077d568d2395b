#include "loader_test_util.h"

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <iterator>

namespace ethosu::test {

std::filesystem::path vectors_dir() { return ETHOSU_VECTORS_DIR; }

bool have_vectors() { return std::filesystem::is_directory(vectors_dir()); }

Bytes read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string write_temp(const std::string& name, const Bytes& bytes) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const auto dir = std::filesystem::temp_directory_path() /
                     (std::string("ethosu_loaders_") + info->test_suite_name() + "_" + info->name());
    std::filesystem::create_directories(dir);
    const auto path = dir / name;
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path.string();
}

void put_u16(Bytes& out, uint16_t v) {
    for (int i = 0; i < 2; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u32(Bytes& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(Bytes& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_bytes(Bytes& out, std::span<const uint8_t> bytes) { out.insert(out.end(), bytes.begin(), bytes.end()); }
void put_string(Bytes& out, std::string_view s) { out.insert(out.end(), s.begin(), s.end()); }

Bytes cop1_payload(uint32_t config, uint32_t id, const std::vector<uint32_t>& words) {
    Bytes out = {'C', 'O', 'P', '1'};
    put_u32(out, 0x00100001);  // OPTIMIZER_CONFIG, version 0.1
    put_u32(out, config);
    put_u32(out, id);
    while ((out.size() + 4) % 16 != 0) put_u32(out, 0x00000005);  // NOP
    const auto n = static_cast<uint32_t>(words.size());
    put_u32(out, 0x02 | ((n >> 16) & 0xFF) << 8 | (n & 0xFFFF) << 16);
    for (const uint32_t w : words) put_u32(out, w);
    return out;
}

Bytes cop2_payload(uint32_t config, uint32_t id, uint32_t features, const std::vector<uint32_t>& words) {
    constexpr uint32_t kPadding = 4;  // 16 + 8 + 16 + 20 = 60 bytes of headers, padded to 64
    const uint32_t stream_bytes = static_cast<uint32_t>(words.size() * 4);
    Bytes out = {'C', 'O', 'P', '2'};
    put_u16(out, 1);
    put_u16(out, 0);
    put_u64(out, 8 + 16 + 20 + kPadding + stream_bytes);
    put_u32(out, 1);                                  // command-stream entry
    put_u32(out, 16 + 20 + kPadding + stream_bytes);  // entry length
    put_u32(out, 12 + 20 + kPadding);                 // metadata length (after this word)
    put_string(out, "VEUM");
    put_u16(out, 1);
    put_u16(out, 0);
    put_u32(out, 20);
    put_u32(out, config);
    put_u32(out, id);
    put_u32(out, features);
    put_u64(out, 4096);  // staging usage
    for (uint32_t i = 0; i < kPadding; ++i) out.push_back(0xFF);
    for (const uint32_t w : words) put_u32(out, w);
    return out;
}

Bytes npy(const std::string& descr, const std::string& shape, const Bytes& data) {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    Bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    put_u16(out, static_cast<uint16_t>(header.size()));
    put_string(out, header);
    put_bytes(out, data);
    return out;
}

Bytes npy_i64(const std::string& shape, const std::vector<int64_t>& values) {
    Bytes data;
    for (const int64_t v : values) put_u64(data, static_cast<uint64_t>(v));
    return npy("<i8", shape, data);
}

Bytes npy_bytes(const Bytes& data) { return npy("|S" + std::to_string(data.size()), "()", data); }

namespace {

Bytes raw_deflate(const Bytes& data) {
    z_stream zs{};
    deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    Bytes out(deflateBound(&zs, static_cast<uLong>(data.size())));
    zs.next_in = const_cast<Bytef*>(data.data());
    zs.avail_in = static_cast<uInt>(data.size());
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

}  // namespace

Bytes zip_archive(const ZipMembers& members, bool deflate) {
    Bytes out, directory;
    for (const auto& [name, data] : members) {
        const Bytes stored = deflate ? raw_deflate(data) : data;
        const auto crc = static_cast<uint32_t>(crc32(0, data.data(), static_cast<uInt>(data.size())));
        const auto local_offset = static_cast<uint32_t>(out.size());
        const uint16_t method = deflate ? 8 : 0;
        put_u32(out, 0x04034b50);
        put_u16(out, 20);
        put_u16(out, 0);
        put_u16(out, method);
        put_u32(out, 0);  // time, date
        put_u32(out, crc);
        put_u32(out, static_cast<uint32_t>(stored.size()));
        put_u32(out, static_cast<uint32_t>(data.size()));
        put_u16(out, static_cast<uint16_t>(name.size()));
        put_u16(out, 0);
        put_string(out, name);
        put_bytes(out, stored);

        put_u32(directory, 0x02014b50);
        put_u16(directory, 20);
        put_u16(directory, 20);
        put_u16(directory, 0);
        put_u16(directory, method);
        put_u32(directory, 0);
        put_u32(directory, crc);
        put_u32(directory, static_cast<uint32_t>(stored.size()));
        put_u32(directory, static_cast<uint32_t>(data.size()));
        put_u16(directory, static_cast<uint16_t>(name.size()));
        put_u16(directory, 0);  // extra
        put_u16(directory, 0);  // comment
        put_u16(directory, 0);  // disk
        put_u16(directory, 0);  // internal attributes
        put_u32(directory, 0);  // external attributes
        put_u32(directory, local_offset);
        put_string(directory, name);
    }
    const auto directory_offset = static_cast<uint32_t>(out.size());
    put_bytes(out, directory);
    put_u32(out, 0x06054b50);
    put_u16(out, 0);
    put_u16(out, 0);
    put_u16(out, static_cast<uint16_t>(members.size()));
    put_u16(out, static_cast<uint16_t>(members.size()));
    put_u32(out, static_cast<uint32_t>(directory.size()));
    put_u32(out, directory_offset);
    put_u16(out, 0);
    return out;
}

ZipMembers npz_members(const Bytes& cmd_payload, const Bytes& weights) {
    return {
        {"cmd_data.npy", npy_bytes(cmd_payload)},
        {"weight_data.npy", npy_bytes(weights)},
        {"weight_region.npy", npy_i64("()", {0})},
        {"scratch_size.npy", npy_i64("()", {64})},
        {"scratch_region.npy", npy_i64("()", {1})},
        {"scratch_fast_size.npy", npy_i64("()", {0})},
        {"scratch_fast_region.npy", npy_i64("()", {2})},
        {"input_shape.npy", npy_i64("(1, 6)", {1, 1, 1, 4, 4, 2})},
        {"input_elem_size.npy", npy_i64("(1,)", {1})},
        {"input_region.npy", npy_i64("(1,)", {1})},
        {"input_offset.npy", npy_i64("(1,)", {0})},
        {"output_shape.npy", npy_i64("(1, 6)", {1, 1, 1, 2, 2, 2})},
        {"output_elem_size.npy", npy_i64("(1,)", {1})},
        {"output_region.npy", npy_i64("(1,)", {1})},
        {"output_offset.npy", npy_i64("(1,)", {32})},
        {"input_quantization.npy", npy("|O", "(1,)", {0x80, 0x04, 0x2e})},  // a pickle: never read
    };
}

Bytes executorch_block(const std::string& name, const Bytes& data) {
    Bytes out;
    put_string(out, name);
    out.resize(16, 0);
    put_u32(out, static_cast<uint32_t>(data.size()));
    out.resize(32, 0);
    put_bytes(out, data);
    out.resize(out.size() + (16 - data.size() % 16) % 16, 0);
    return out;
}

Bytes io_block(const std::vector<std::vector<int32_t>>& entries) {
    Bytes out;
    put_u32(out, static_cast<uint32_t>(entries.size()));
    for (const auto& e : entries)
        for (const int32_t v : e) put_u32(out, static_cast<uint32_t>(v));
    return out;
}

Bytes scratch_size_block(uint32_t size) {
    Bytes out;
    put_u32(out, size);
    return out;
}

namespace {

std::vector<std::vector<int32_t>> io_entries(const std::vector<TensorInfo>& maps) {
    std::vector<std::vector<int32_t>> entries;
    for (const TensorInfo& t : maps) {
        std::vector<int32_t> entry(t.shape.begin(), t.shape.end());
        entry.push_back(element_size(t.type));
        entry.push_back(t.region < 0 ? -1 : static_cast<int32_t>(t.offset));
        entry.push_back(t.region);
        entries.push_back(std::move(entry));
    }
    return entries;
}

}  // namespace

Bytes vela_bin_stream_of(const LoadedModel& model) {
    const NpuInvocation& inv = model.invocations.at(0);
    if (inv.regions.size() != 2) throw std::runtime_error("a vela_bin_stream holds regions 0 and 1 only");
    const CommandStream& cs = inv.stream;
    const Bytes payload = cs.payload_kind == "COP2" ? cop2_payload(*cs.config_word, *cs.id_word, 0, cs.words)
                                                    : cop1_payload(*cs.config_word, *cs.id_word, cs.words);
    const auto region = [&](int index) -> const RegionImage& {
        const auto it = std::find_if(inv.regions.begin(), inv.regions.end(), [&](const auto& r) { return r.index == index; });
        if (it == inv.regions.end()) throw std::runtime_error("the model has no region " + std::to_string(index));
        return *it;
    };
    const auto& weights = region(0).bytes;
    Bytes out;
    for (const auto& [name, data] : std::vector<std::pair<std::string, Bytes>>{
             {"vela_bin_stream", {}},
             {"cmd_data", payload},
             {"weight_data", Bytes(weights.begin(), weights.end())},
             {"scratch_size", scratch_size_block(static_cast<uint32_t>(region(1).size))},
             {"inputs", io_block(io_entries(model.inputs))},
             {"outputs", io_block(io_entries(model.outputs))},
             {"vela_end_stream", {}}})
        put_bytes(out, executorch_block(name, data));
    return out;
}

}  // namespace ethosu::test
