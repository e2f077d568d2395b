#include "frontend/loaders/loader_common.h"

#include <fmt/format.h>

namespace ethosu {

uint64_t tensor_byte_size(std::span<const int64_t> shape, int element_bytes, const ErrorLocation& where) {
    uint64_t bytes = static_cast<uint64_t>(element_bytes);
    for (const int64_t dim : shape) {
        if (dim < 0) throw Error(where, fmt::format("negative dimension {} in the shape", dim));
        // Division instead of multiplication, so the check itself cannot overflow.
        if (dim != 0 && bytes > kMaxRegionBytes / static_cast<uint64_t>(dim))
            throw Error(where, fmt::format("tensor is larger than {} bytes", kMaxRegionBytes));
        bytes *= static_cast<uint64_t>(dim);
    }
    return bytes;
}

void check_stream_length(const ByteReader& r, size_t pos, uint64_t words, uint64_t max_words, std::string_view field) {
    if (words > max_words)
        r.fail_at(pos, field,
                  fmt::format("command stream of {} words is over the limit of {} (--max-stream-words raises it)", words,
                              max_words),
                  ErrorKind::LimitExceeded);
}

uint64_t checked_region_size(int64_t size, const ErrorLocation& where) {
    if (size < 0 || static_cast<uint64_t>(size) > kMaxRegionBytes)
        throw Error(where, fmt::format("region size {} is outside 0..{}", size, kMaxRegionBytes));
    return static_cast<uint64_t>(size);
}

int checked_region_index(int64_t index, const ErrorLocation& where) {
    if (index < 0 || index >= kRegionCount)
        throw Error(where, fmt::format("region {} is not a base-pointer index 0..{}", index, kRegionCount - 1));
    return static_cast<int>(index);
}

RegionImage scratch_region(int index, RegionRole role, uint64_t size, ErrorLocation where) {
    RegionImage region;
    region.index = index;
    region.role = role;
    region.size = size;
    region.where = std::move(where);
    return region;
}

RegionImage initialised_region(int index, RegionRole role, std::span<const uint8_t> bytes, const FileBytes& file,
                               ErrorLocation where) {
    const bool inside_file = !bytes.empty() && bytes.data() >= file.bytes.data() &&
                             bytes.data() + bytes.size() <= file.bytes.data() + file.bytes.size();
    RegionImage region{index,      role, bytes.size(), bytes, file.owner, inside_file && file.file_mapped,
                       std::move(where)};
    if (!(inside_file && file.owner)) {
        auto copy = std::make_shared<const std::vector<uint8_t>>(bytes.begin(), bytes.end());
        region.bytes = *copy;
        region.owner = std::move(copy);
        region.file_mapped = false;
    }
    return region;
}

namespace {

ElementType element_type_from_width(int64_t element_bytes, const ErrorLocation& where) {
    switch (element_bytes) {
        case 1: return ElementType::Int8;
        case 2: return ElementType::Int16;
        case 4: return ElementType::Int32;
        default: throw Error(where, fmt::format("element size {} is not 1, 2 or 4 bytes", element_bytes));
    }
}

}  // namespace

TensorInfo make_feature_map(std::vector<int64_t> shape, int64_t element_bytes, int64_t region, int64_t offset,
                            const ErrorLocation& where) {
    TensorInfo t;
    t.where = where;
    t.type = element_type_from_width(element_bytes, where);
    t.size_bytes = tensor_byte_size(shape, element_size(t.type), where);
    t.shape = std::move(shape);
    if (offset == kUnplacedOffset) return t;  // e.g. a shape operand the NPU never reads
    t.region = checked_region_index(region, where);
    if (offset < 0 || static_cast<uint64_t>(offset) > kMaxRegionBytes)
        throw Error(where, fmt::format("offset {} is outside 0..{}", offset, kMaxRegionBytes));
    t.offset = static_cast<uint64_t>(offset);
    return t;
}

NpuConfig common_npu_config(const std::string& path, const std::vector<NpuInvocation>& invocations,
                            std::string_view what, const LoadOptions& options) {
    // No NPU work: nothing to check an override against, but its name must still be valid.
    if (invocations.empty()) return options.npu ? resolve_npu_config(path, CommandStream{}, options) : NpuConfig{};
    const NpuConfig first = resolve_npu_config(path, invocations[0].stream, options);
    for (size_t i = 1; i < invocations.size(); ++i) {
        const NpuConfig config = resolve_npu_config(path, invocations[i].stream, options);
        if (config.name != first.name)
            throw Error({path, invocations[i].stream.file_offset, "CONFIG"},
                        fmt::format("{} {} targets {} but the first targets {}", what, i, config.name, first.name));
    }
    return first;
}

std::unique_ptr<LoadedModel> single_invocation_model(const std::string& path, ModelFormat format,
                                                     NpuInvocation invocation, const LoadOptions& options) {
    auto model = std::make_unique<LoadedModel>();
    model->path = path;
    model->format = format;
    model->config = resolve_npu_config(path, invocation.stream, options);
    model->inputs = invocation.inputs;
    model->outputs = invocation.outputs;
    model->invocations.push_back(std::move(invocation));
    return model;
}

}  // namespace ethosu
