#pragma once
// Checks and constructors shared by the loaders (internal; model.h is the contract).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/loaders/byte_reader.h"
#include "frontend/loaders/model.h"

namespace ethosu {

// A mapping report_shrunk_mapped_files recognises (mapped_file_guard.cc): the slot to hand to
// unguard_mapping before the bytes are unmapped, or -1 when the table is full.
int guard_mapping(const uint8_t* begin, size_t size, const std::string& path);
void unguard_mapping(int slot);

constexpr int kRegionCount = 8;  // BASEP0..7 on every generation
// No Vela model needs a region or tensor this large; refusing it keeps consumers from
// allocating whatever a hostile file claims.
constexpr uint64_t kMaxRegionBytes = uint64_t{1} << 32;

// Bytes of a tensor: an Error at `where` for a negative dimension or a size over kMaxRegionBytes.
uint64_t tensor_byte_size(std::span<const int64_t> shape, int element_bytes, const ErrorLocation& where);

// Refuses (at `pos` of `r`, naming `field`) a command stream of more than max_words words.
void check_stream_length(const ByteReader& r, size_t pos, uint64_t words, uint64_t max_words, std::string_view field);

// A region size read from the file, checked against kMaxRegionBytes.
uint64_t checked_region_size(int64_t size, const ErrorLocation& where);

// A BASEP index read from the file, checked to be 0..7.
int checked_region_index(int64_t index, const ErrorLocation& where);

// A region whose initial contents are `bytes`: pointing into the file when `bytes` lie inside it
// and the file has an owner, else a copy the region owns. `where`: the file's definition of it.
RegionImage initialised_region(int index, RegionRole role, std::span<const uint8_t> bytes, const FileBytes& file,
                               ErrorLocation where);
// A region that starts zero-filled (scratch), its size defined at `where`.
RegionImage scratch_region(int index, RegionRole role, uint64_t size, ErrorLocation where);

// Offset Vela gives a feature map it did not place in any region.
constexpr int64_t kUnplacedOffset = -1;

// A feature map described the npz/ExecuTorch way (shape, element width, region, offset).
// Those formats record only the width, so 1/2/4 bytes read as Int8/Int16/Int32. An
// unplaced one (kUnplacedOffset) gets region -1.
TensorInfo make_feature_map(std::vector<int64_t> shape, int64_t element_bytes, int64_t region, int64_t offset,
                            const ErrorLocation& where);

// The NPU invocation of an ExecuTorch vela_bin_stream: `stream` lies in `file` at `file_offset`
// (a whole .bin file, or an Ethos-U delegate's processed bytes inside a .pte); a command stream of
// more than max_stream_words is refused before it is copied.
NpuInvocation vela_bin_stream_invocation(const std::string& path, const FileBytes& file,
                                         std::span<const uint8_t> stream, uint64_t file_offset,
                                         uint64_t max_stream_words);

// The one NPU configuration all invocations target (each resolved from its stream and the
// options); an Error naming `what` and the first invocation that disagrees.
NpuConfig common_npu_config(const std::string& path, const std::vector<NpuInvocation>& invocations,
                            std::string_view what, const LoadOptions& options);

// A model made of one NPU invocation whose feature maps are the model's inputs/outputs,
// its configuration resolved from the stream and the options.
std::unique_ptr<LoadedModel> single_invocation_model(const std::string& path, ModelFormat format,
                                                     NpuInvocation invocation, const LoadOptions& options);

}  // namespace ethosu
