// A bare command stream: little-endian words, or a COP1/COP2 payload saved on its own. Bare
// words carry no signature, so they are taken for a stream only when --npu says which NPU reads
// them; without it the file is reported as not a model.

#include <fmt/format.h>

#include "frontend/loaders/byte_reader.h"
#include "frontend/loaders/loader_common.h"

namespace ethosu {
namespace {

bool is_driver_payload(std::span<const uint8_t> data) {
    return data.size() >= 4 && data[0] == 'C' && data[1] == 'O' && data[2] == 'P' && (data[3] == '1' || data[3] == '2');
}

}  // namespace

std::unique_ptr<LoadedModel> load_raw_command_stream(const std::string& path, const FileBytes& file,
                                                     const LoadOptions& options) {
    const std::span<const uint8_t> data = file.bytes;
    NpuInvocation invocation;
    if (is_driver_payload(data)) {
        invocation.stream = parse_driver_payload(path, data.data(), data.size(), 0, options.max_stream_words);
    } else {
        ByteReader r(path, data);
        if (!options.npu)
            r.fail_at(0, "format",
                      "not a model ethosu-emu reads (expected a Vela .tflite, .npz, ExecuTorch .pte or "
                      "vela_bin_stream, or a COP1 command stream); a bare command stream without a COP header "
                      "is read only with --npu");
        r.expect(!data.empty(), "command stream", "file is empty");
        r.expect(data.size() % 4 == 0, "command stream",
                 fmt::format("{} bytes is not a whole number of 32-bit words", data.size()));
        check_stream_length(r, 0, data.size() / 4, options.max_stream_words, "command stream");
        invocation.stream.payload_kind = "raw";
        invocation.stream.words = r.words(data.size() / 4, "command stream");
    }
    return single_invocation_model(path, ModelFormat::RawCommandStream, std::move(invocation), options);
}

}  // namespace ethosu
