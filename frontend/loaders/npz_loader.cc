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

class NpzReader {
public:
    NpzReader(const std::string& path, std::span<const uint8_t> data) : archive_(path, data) {
        for (ZipMember& m : read_zip_members(archive_)) {
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
            throw Error({archive_.label(), std::nullopt, key + ".npy"}, "member missing from the archive");
        return parse_npy(open_zip_member(archive_, it->second, inflated_.emplace_back()), it->second.name);
    }

    // An int64 scalar, stored with shape () or (1,).
    int64_t int_scalar(const std::string& key) {
        NpyArray a = array(key);
        require_int64(a, key);
        if (a.shape.size() > 1 || (a.shape.size() == 1 && a.shape[0] != 1)) fail(a, key, "expected a single value");
        return a.elements.i64(key);
    }

    // The rows of an integer array of shape (n,) (one value per row) or (n, k).
    std::vector<std::vector<int64_t>> int_rows(const std::string& key) {
        NpyArray a = array(key);
        if (a.descr != "<i8" && a.descr != "<f8") fail(a, key, "expected int64 ('<i8') or integral float64 ('<f8')");
        const uint64_t columns = a.shape.size() == 2 ? a.shape[1] : 1;
        if (a.shape.empty() || a.shape.size() > 2 || columns == 0)
            fail(a, key, "expected an array of shape (n,) or (n, k) with k > 0");
        std::vector<std::vector<int64_t>> rows(a.shape[0]);  // bounded: parse_npy found n * k values
        for (auto& row : rows)
            for (uint64_t c = 0; c < columns; ++c)
                row.push_back(a.descr == "<i8" ? a.elements.i64(key) : integral_double(a.elements, key));
        return rows;
    }

    // A bytes scalar ("|S<n>", shape ()): the reader over its n bytes.
    ByteReader byte_string(const std::string& key) {
        NpyArray a = array(key);
        if (!a.descr.starts_with("|S") || !a.shape.empty()) fail(a, key, "expected a bytes scalar ('|S<n>', shape ())");
        return a.elements;
    }

private:
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
    std::map<std::string, ZipMember> members_;
    std::list<std::vector<uint8_t>> inflated_;  // backing store of DEFLATE members, stable addresses
};

RegionImage weights_region(NpzReader& npz, const std::string& path, const FileBytes& file) {
    const ByteReader data = npz.byte_string("weight_data");
    auto bytes = data.data();
    // numpy cannot store an empty bytes scalar: it writes one NUL byte with descr '|S1'.
    if (bytes.size() == 1 && bytes[0] == 0) bytes = {};
    const int index = checked_region_index(npz.int_scalar("weight_region"), {path, std::nullopt, "weight_region"});
    return initialised_region(index, "weights", bytes, file);
}

RegionImage npz_scratch_region(NpzReader& npz, const std::string& prefix, const std::string& path) {
    const int index =
        checked_region_index(npz.int_scalar(prefix + "_region"), {path, std::nullopt, prefix + "_region"});
    const uint64_t size = checked_region_size(npz.int_scalar(prefix + "_size"), {path, std::nullopt, prefix + "_size"});
    return ethosu::scratch_region(index, prefix, size);
}

std::vector<RegionImage> regions(NpzReader& npz, const std::string& path, const FileBytes& file) {
    std::vector<RegionImage> out{weights_region(npz, path, file), npz_scratch_region(npz, "scratch", path)};
    // U55 systems have no separate fast scratch: Vela writes size 0 (or, in older versions, nothing).
    if (npz.has("scratch_fast_size")) {
        RegionImage fast = npz_scratch_region(npz, "scratch_fast", path);
        if (fast.size > 0) out.push_back(std::move(fast));
    }
    for (size_t i = 0; i < out.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (out[i].index == out[j].index)
                throw Error({path, std::nullopt, out[i].role + "_region"},
                            fmt::format("{} and {} both claim region {}", out[j].role, out[i].role, out[i].index));
    return out;
}

std::vector<TensorInfo> feature_maps(NpzReader& npz, const std::string& prefix, const std::string& path) {
    const auto shapes = npz.int_rows(prefix + "_shape");
    const auto element_sizes = npz.int_rows(prefix + "_elem_size");
    const auto region_indices = npz.int_rows(prefix + "_region");
    const auto offsets = npz.int_rows(prefix + "_offset");
    for (const auto* column : {&element_sizes, &region_indices, &offsets})
        if (column->size() != shapes.size() || (!column->empty() && column->front().size() != 1))
            throw Error(
                {path, std::nullopt, prefix + "_*"},
                fmt::format("{}_shape has {} rows but the other {} arrays disagree", prefix, shapes.size(), prefix));
    std::vector<TensorInfo> out;
    for (size_t i = 0; i < shapes.size(); ++i)
        out.push_back(make_feature_map(shapes[i], element_sizes[i][0], region_indices[i][0], offsets[i][0],
                                       {path, std::nullopt, fmt::format("{}[{}]", prefix, i)}));
    return out;
}

}  // namespace

std::unique_ptr<LoadedModel> load_vela_npz(const std::string& path, const FileBytes& data,
                                           const LoadOptions& options) {
    NpzReader npz(path, data.bytes);
    NpuInvocation invocation;
    const ByteReader cmd = npz.byte_string("cmd_data");
    invocation.stream = parse_driver_payload(cmd.label(), cmd.data().data(), cmd.size(), cmd.file_offset());
    invocation.regions = regions(npz, path, data);
    invocation.inputs = feature_maps(npz, "input", path);
    invocation.outputs = feature_maps(npz, "output", path);
    return single_invocation_model(path, ModelFormat::VelaNpz, std::move(invocation), options);
}

}  // namespace ethosu
