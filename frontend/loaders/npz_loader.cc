// Vela's raw output (--output-format raw): a numpy .npz, i.e. a zip of .npy arrays. Only the
// members the NPU needs are opened; the pickled *_quantization and the variable_* members
// are never read.

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <list>
#include <map>

#include "frontend/loaders/loader_common.h"
#include "frontend/loaders/npy.h"
#include "frontend/loaders/zip_archive.h"

namespace ethosu {
namespace {

constexpr std::string_view kNpySuffix = ".npy";
// Room for the .npy header (Vela's are 128 bytes) and a COP1/COP2 header around a stream.
constexpr uint64_t kStreamMemberSlack = 64 * 1024;
// The members besides cmd_data and weight_data hold a few int64s per feature map.
constexpr uint64_t kMaxTableMemberBytes = uint64_t{1} << 20;

struct IntRows {
    std::string file;  // the archive, or "archive:member" for a DEFLATE member
    uint64_t offset;   // of the first value
    std::vector<uint64_t> row_offsets;
    std::vector<std::vector<int64_t>> rows;
};

class NpzReader {
public:
    NpzReader(const std::string& path, std::span<const uint8_t> data, uint64_t max_stream_words)
        : archive_(path, data), max_stream_words_(max_stream_words) {
        ZipDirectory directory = read_zip_directory(archive_);
        directory_offset_ = directory.offset;
        for (ZipMember& m : directory.members) {
            const std::string key =
                m.name.ends_with(kNpySuffix) ? m.name.substr(0, m.name.size() - kNpySuffix.size()) : m.name;
            if (members_.contains(key))
                throw Error({path, m.data_offset, m.name}, "member appears twice in the archive");
            members_.emplace(key, std::move(m));
        }
    }

    bool has(const std::string& key) const { return members_.contains(key); }

    NpyArray array(const std::string& key) {
        const auto it = members_.find(key);
        if (it == members_.end())
            throw Error({archive_.label(), directory_offset_, key + ".npy"},
                        "member missing from the archive (offset: its central directory)");
        const ZipMember& member = it->second;
        // Checked before a DEFLATE member is inflated: 71 KB can inflate to 73 MB.
        const auto [limit, why] = member_limit(key);
        if (member.size > limit)
            throw Error({archive_.label(), member.data_offset, member.name},
                        fmt::format("member holds {} bytes, over the limit of {} ({})", member.size, limit, why),
                        ErrorKind::LimitExceeded);
        return parse_npy(open_zip_member(archive_, member, inflated_.emplace_back()), member.name);
    }

    // An int64 scalar, stored with shape () or (1,), and where it lies.
    std::pair<int64_t, ErrorLocation> int_scalar(const std::string& key) {
        NpyArray a = array(key);
        require_int64(a, key);
        if (a.shape.size() > 1 || (a.shape.size() == 1 && a.shape[0] != 1)) fail(a, key, "expected a single value");
        const ErrorLocation where{a.elements.label(), a.elements.file_offset(), key};
        return {a.elements.i64(key), where};
    }

    // The rows of an integer array of shape (n,) (one value per row) or (n, k).
    IntRows int_rows(const std::string& key) {
        NpyArray a = array(key);
        if (a.descr != "<i8" && a.descr != "<f8") fail(a, key, "expected int64 ('<i8') or integral float64 ('<f8')");
        const uint64_t columns = a.shape.size() == 2 ? a.shape[1] : 1;
        if (a.shape.empty() || a.shape.size() > 2 || columns == 0)
            fail(a, key, "expected an array of shape (n,) or (n, k) with k > 0");
        IntRows out{a.elements.label(), a.elements.file_offset(), {}, {}};
        out.rows.resize(a.shape[0]);  // bounded: parse_npy found n * k values
        for (auto& row : out.rows) {
            out.row_offsets.push_back(a.elements.file_offset());
            for (uint64_t c = 0; c < columns; ++c)
                row.push_back(a.descr == "<i8" ? a.elements.i64(key) : integral_double(a.elements, key));
        }
        return out;
    }

    // A bytes scalar ("|S<n>", shape ()): the reader over its n bytes.
    ByteReader byte_string(const std::string& key) {
        NpyArray a = array(key);
        if (!a.descr.starts_with("|S") || !a.shape.empty()) fail(a, key, "expected a bytes scalar ('|S<n>', shape ())");
        return a.elements;
    }

private:
    std::pair<uint64_t, std::string_view> member_limit(const std::string& key) const {
        if (key == "cmd_data")
            return {max_stream_words_ * 4 + kStreamMemberSlack, "--max-stream-words words and their headers"};
        if (key == "weight_data") return {kMaxRegionBytes, "the largest region"};
        return {kMaxTableMemberBytes, "a table of a few numbers per feature map"};
    }

    // Vela marks an unplaced tensor with offset uint64 -1; numpy stores such an array as float64,
    // where that value rounds to 2^64. It reads back as -1; other values must be whole int64s.
    static int64_t integral_double(ByteReader& r, const std::string& key) {
        const size_t pos = r.position();
        const uint64_t bits = r.u64(key);
        double value;
        std::memcpy(&value, &bits, sizeof value);
        if (value == 0x1p64) return -1;
        if (!(value >= -0x1p63 && value < 0x1p63) || value != std::trunc(value))
            r.fail_at(pos, key + ".npy", fmt::format("value {} is not a whole 64-bit number", value));
        return static_cast<int64_t>(value);
    }
    [[noreturn]] static void fail(const NpyArray& a, const std::string& key, const std::string& reason) {
        a.elements.fail_at(0, key + ".npy",
                           fmt::format("{} (descr '{}', {} dimensions)", reason, a.descr, a.shape.size()));
    }
    static void require_int64(const NpyArray& a, const std::string& key) {
        if (a.descr != "<i8") fail(a, key, "expected int64 ('<i8')");
    }

    ByteReader archive_;
    uint64_t max_stream_words_;
    uint64_t directory_offset_ = 0;
    std::map<std::string, ZipMember> members_;
    std::list<std::vector<uint8_t>> inflated_;  // backing store of DEFLATE members, stable addresses
};

// A region and where its index lies, for the overlap check.
using LocatedRegion = std::pair<RegionImage, ErrorLocation>;

LocatedRegion weights_region(NpzReader& npz, const FileBytes& file) {
    const ByteReader data = npz.byte_string("weight_data");
    auto bytes = data.data();
    // numpy cannot store an empty bytes scalar: it writes one NUL byte with descr '|S1'.
    if (bytes.size() == 1 && bytes[0] == 0) bytes = {};
    const auto [index, where] = npz.int_scalar("weight_region");
    return {initialised_region(checked_region_index(index, where), RegionRole::Weights, bytes, file,
                               {data.label(), data.file_offset(), "weight_data"}),
            where};
}

LocatedRegion npz_scratch_region(NpzReader& npz, RegionRole role) {
    const std::string prefix(region_role_name(role));
    const auto [index, index_where] = npz.int_scalar(prefix + "_region");
    const auto [size, size_where] = npz.int_scalar(prefix + "_size");
    return {ethosu::scratch_region(checked_region_index(index, index_where), role,
                                   checked_region_size(size, size_where), size_where),
            index_where};
}

std::vector<RegionImage> regions(NpzReader& npz, const FileBytes& file) {
    std::vector<RegionImage> out;
    std::vector<ErrorLocation> index_locations;
    const auto add = [&](LocatedRegion region) {
        out.push_back(std::move(region.first));
        index_locations.push_back(std::move(region.second));
    };
    add(weights_region(npz, file));
    add(npz_scratch_region(npz, RegionRole::Scratch));
    // U55 systems have no separate fast scratch: Vela writes size 0 (or, in older versions, nothing).
    if (npz.has("scratch_fast_size")) {
        auto fast = npz_scratch_region(npz, RegionRole::ScratchFast);
        if (fast.first.size > 0) add(std::move(fast));
    }
    for (size_t i = 0; i < out.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (out[i].index == out[j].index)
                throw Error(index_locations[i],
                            fmt::format("{} and {} both claim region {}", region_role_name(out[j].role),
                                        region_role_name(out[i].role), out[i].index));
    return out;
}

// A feature map's errors point at its row of <prefix>_shape; a column that disagrees with the
// shapes, at that column.
std::vector<TensorInfo> feature_maps(NpzReader& npz, const std::string& prefix) {
    const IntRows shapes = npz.int_rows(prefix + "_shape");
    const IntRows element_sizes = npz.int_rows(prefix + "_elem_size");
    const IntRows region_indices = npz.int_rows(prefix + "_region");
    const IntRows offsets = npz.int_rows(prefix + "_offset");
    for (const auto* column : {&element_sizes, &region_indices, &offsets})
        if (column->rows.size() != shapes.rows.size() || (!column->rows.empty() && column->rows.front().size() != 1))
            throw Error({column->file, column->offset, prefix + "_*"},
                        fmt::format("{}_shape has {} rows but the other {} arrays disagree", prefix, shapes.rows.size(),
                                    prefix));
    std::vector<TensorInfo> out;
    for (size_t i = 0; i < shapes.rows.size(); ++i)
        out.push_back(make_feature_map(shapes.rows[i], element_sizes.rows[i][0], region_indices.rows[i][0],
                                       offsets.rows[i][0],
                                       {shapes.file, shapes.row_offsets[i], fmt::format("{}[{}]", prefix, i)}));
    return out;
}

}  // namespace

std::unique_ptr<LoadedModel> load_vela_npz(const std::string& path, const FileBytes& data,
                                           const LoadOptions& options) {
    NpzReader npz(path, data.bytes, options.max_stream_words);
    NpuInvocation invocation;
    const ByteReader cmd = npz.byte_string("cmd_data");
    invocation.stream =
        parse_driver_payload(cmd.label(), cmd.data().data(), cmd.size(), cmd.file_offset(), options.max_stream_words);
    invocation.regions = regions(npz, data);
    invocation.inputs = feature_maps(npz, "input");
    invocation.outputs = feature_maps(npz, "output");
    return single_invocation_model(path, ModelFormat::VelaNpz, std::move(invocation), options);
}

}  // namespace ethosu
