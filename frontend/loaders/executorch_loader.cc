// ExecuTorch's Arm Ethos-U backend payload ("vela_bin_stream"): a run of blocks, each a
// 32-byte header {char name[16] NUL padded; u32 size; 12 reserved bytes} and size bytes of
// data padded to 16. The first block is "vela_bin_stream", the last "vela_end_stream".

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "frontend/loaders/byte_reader.h"
#include "frontend/loaders/loader_common.h"

namespace ethosu {
namespace {

constexpr size_t kNameSize = 16;
constexpr size_t kAlignment = 16;
constexpr uint8_t kExternalBlock = 1;  // newer ExecuTorch: data kept in its named data map
constexpr std::string_view kFirstBlock = "vela_bin_stream", kLastBlock = "vela_end_stream";
constexpr std::string_view kKnownBlocks[] = {"cmd_data",     "weight_data", "scratch_size",
                                             "scratch_data", "inputs",      "outputs"};

// I/O entry: int32 shape[rank], element size, offset, region. ExecuTorch writes rank 6;
// older versions wrote rank 4.
constexpr size_t kIoRanks[] = {6, 4};
constexpr size_t io_entry_size(size_t rank) { return 4 * (rank + 3); }

struct Block {
    std::string name;
    size_t header_pos;
    ByteReader data;
};

std::string block_name(ByteReader& r) {
    const size_t pos = r.position();
    const auto raw = r.bytes(kNameSize, "block.name");
    const auto nul = std::find(raw.begin(), raw.end(), uint8_t{0});
    if (nul == raw.end() || std::any_of(nul, raw.end(), [](uint8_t c) { return c != 0; }))
        r.fail_at(pos, "block.name", "block name is not NUL-terminated and NUL-padded within 16 bytes");
    return {raw.begin(), nul};
}

Block read_block(ByteReader& r) {
    const size_t header_pos = r.position();
    std::string name = block_name(r);
    const uint32_t size = r.u32(name + ".size");
    const size_t external_pos = r.position();
    if (r.u8(name + ".external") == kExternalBlock)
        r.fail_at(external_pos, name, "external blocks (kept in ExecuTorch's named data map) are not supported",
                  ErrorKind::Unsupported);
    r.skip(11, name + ".reserved");
    ByteReader data = r.sub(size, name);
    r.skip((kAlignment - size % kAlignment) % kAlignment, name + ".padding");
    return {std::move(name), header_pos, data};
}

std::map<std::string, Block> read_blocks(ByteReader& r) {
    const Block first = read_block(r);
    if (first.name != kFirstBlock || first.data.size() != 0)
        r.fail_at(0, "block.name",
                  fmt::format("first block must be an empty '{}', found '{}'", kFirstBlock, first.name));
    std::map<std::string, Block> blocks;
    while (true) {
        if (r.at_end()) r.fail("block.name", fmt::format("no '{}' block ends the stream", kLastBlock));
        Block b = read_block(r);
        if (b.name == kLastBlock) {
            if (b.data.size() != 0) r.fail_at(b.header_pos, b.name, "end block must be empty");
            if (!r.at_end()) r.fail(b.name, fmt::format("{} bytes follow the end block", r.remaining()));
            return blocks;
        }
        if (std::find(std::begin(kKnownBlocks), std::end(kKnownBlocks), b.name) == std::end(kKnownBlocks))
            r.fail_at(b.header_pos, "block.name", fmt::format("unknown block '{}'", b.name));
        if (blocks.contains(b.name)) r.fail_at(b.header_pos, b.name, "block appears twice");
        blocks.emplace(b.name, std::move(b));
    }
}

const Block& required(const std::map<std::string, Block>& blocks, const std::string& name, const ByteReader& r) {
    const auto it = blocks.find(name);
    if (it == blocks.end()) r.fail_at(r.size(), name, "required block missing");
    return it->second;
}

// The scratch region's size and the block that gives it.
std::pair<uint64_t, ErrorLocation> scratch_size(const std::map<std::string, Block>& blocks, const ByteReader& r) {
    const bool sized = blocks.contains("scratch_size"), data = blocks.contains("scratch_data");
    if (sized == data) r.fail_at(r.size(), "scratch_size", "expected exactly one of 'scratch_size' and 'scratch_data'");
    if (data) {  // older versions: a zero block of that size
        const ByteReader& b = blocks.at("scratch_data").data;
        return {b.size(), {r.label(), b.file_offset(), "scratch_data"}};
    }
    ByteReader b = blocks.at("scratch_size").data;
    const ErrorLocation where{r.label(), b.file_offset(), "scratch_size"};
    b.expect(b.size() == 4, "scratch_size", fmt::format("block of {} bytes, expected 4", b.size()));
    return {b.u32("scratch_size"), where};
}

std::vector<TensorInfo> feature_maps(const Block& block, const std::string& path) {
    ByteReader r = block.data;
    const int32_t count = r.i32(block.name + ".count");
    r.expect(count >= 0, block.name + ".count", fmt::format("negative count {}", count));
    const auto rank = std::find_if(std::begin(kIoRanks), std::end(kIoRanks), [&](size_t rank) {
        return r.remaining() == static_cast<uint64_t>(count) * io_entry_size(rank);
    });
    if (rank == std::end(kIoRanks))
        r.fail(block.name, fmt::format("{} bytes hold neither {} 6-D entries ({} bytes each) nor 4-D ones ({})",
                                       r.remaining(), count, io_entry_size(6), io_entry_size(4)));
    std::vector<TensorInfo> out;
    for (int32_t i = 0; i < count; ++i) {
        const std::string field = fmt::format("{}[{}]", block.name, i);
        const uint64_t entry_offset = r.file_offset();
        std::vector<int64_t> shape;
        for (size_t d = 0; d < *rank; ++d) shape.push_back(r.i32(field + ".shape"));
        const int32_t element_bytes = r.i32(field + ".elem_size");
        const int32_t offset = r.i32(field + ".offset");
        const int32_t region = r.i32(field + ".region");
        out.push_back(make_feature_map(std::move(shape), element_bytes, region, offset, {path, entry_offset, field}));
    }
    return out;
}

// Vela's --separate-io-regions (COP2 local addressing) places the inputs in region 3 and the
// outputs in region 4, which the driver points at the caller's buffers (Arm's direct-drive
// kernel: the first IFM and the first OFM buffer). Each such region spans its tensors.
void add_io_regions(NpuInvocation& invocation, const ErrorLocation& where) {
    std::map<int, std::pair<RegionRole, uint64_t>> io_regions;
    for (const auto& [tensors, role] : {std::pair{&invocation.inputs, RegionRole::Input}, std::pair{&invocation.outputs, RegionRole::Output}})
        for (const auto& t : *tensors) {
            if (t.region <= 1) continue;  // unplaced, the weights or scratch
            auto& [region_role, end] = io_regions.try_emplace(t.region, role, 0).first->second;
            end = std::max(end, t.offset + t.size_bytes);
        }
    for (const auto& [index, io] : io_regions)
        invocation.regions.push_back(scratch_region(index, io.first, checked_region_size(static_cast<int64_t>(io.second), where), where));
}

}  // namespace

NpuInvocation vela_bin_stream_invocation(const std::string& path, const FileBytes& file,
                                         std::span<const uint8_t> stream, uint64_t file_offset,
                                         uint64_t max_stream_words) {
    ByteReader r(path, stream, file_offset);
    const auto blocks = read_blocks(r);
    const ByteReader& cmd = required(blocks, "cmd_data", r).data;
    const ByteReader& weights = required(blocks, "weight_data", r).data;

    NpuInvocation invocation;
    invocation.stream =
        parse_driver_payload(path, cmd.data().data(), cmd.size(), cmd.file_offset(), max_stream_words);
    invocation.regions.push_back(
        initialised_region(0, RegionRole::Weights, weights.data(), file, {path, weights.file_offset(), "weight_data"}));
    const auto [scratch_bytes, scratch_where] = scratch_size(blocks, r);
    invocation.regions.push_back(scratch_region(
        1, RegionRole::Scratch, checked_region_size(static_cast<int64_t>(scratch_bytes), scratch_where), scratch_where));
    invocation.inputs = feature_maps(required(blocks, "inputs", r), path);
    invocation.outputs = feature_maps(required(blocks, "outputs", r), path);
    add_io_regions(invocation, {path, cmd.file_offset(), "cmd_data"});
    return invocation;
}

std::unique_ptr<LoadedModel> load_executorch_bin(const std::string& path, const FileBytes& data,
                                                 const LoadOptions& options) {
    return single_invocation_model(path, ModelFormat::ExecuTorchBin,
                                   vela_bin_stream_invocation(path, data, data.bytes, 0, options.max_stream_words), options);
}

}  // namespace ethosu
