// Names, format detection and NPU-configuration resolution common to all loaders.

#include "frontend/loaders/model.h"
#include "frontend/loaders/model_bytes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/isa/error.h"
#include "frontend/loaders/loader_common.h"

namespace ethosu {

std::string_view model_format_name(ModelFormat f) {
    switch (f) {
        case ModelFormat::VelaTflite: return "vela-tflite";
        case ModelFormat::VelaNpz: return "vela-npz";
        case ModelFormat::ExecuTorchBin: return "executorch-vela-bin";
        case ModelFormat::ExecuTorchProgram: return "executorch-pte";
        case ModelFormat::RawCommandStream: return "raw-command-stream";
    }
    return "?";
}

ErrorLocation definition_site(const LoadedModel& model, const ErrorLocation& where, const std::string& name) {
    return where.file.empty() ? ErrorLocation{model.path, std::nullopt, name} : where;
}

uint64_t command_stream_bytes(const LoadedModel& model) {
    uint64_t bytes = 0;
    for (const auto& invocation : model.invocations) bytes += invocation.stream.words.size() * 4;
    return bytes;
}

bool same_element_order(std::span<const int64_t> a, std::span<const int64_t> b) {
    size_t i = 0, j = 0;
    for (;; ++i, ++j) {
        while (i < a.size() && a[i] == 1) ++i;
        while (j < b.size() && b[j] == 1) ++j;
        if (i == a.size() || j == b.size()) return i == a.size() && j == b.size();
        if (a[i] != b[j]) return false;
    }
}

std::string_view element_type_name(ElementType t) {
    switch (t) {
        case ElementType::Int8: return "int8";
        case ElementType::UInt8: return "uint8";
        case ElementType::Int16: return "int16";
        case ElementType::UInt16: return "uint16";
        case ElementType::Int32: return "int32";
        case ElementType::Int64: return "int64";
        case ElementType::Float32: return "float32";
        case ElementType::Bool: return "bool";
        case ElementType::Int4: return "int4";
        case ElementType::Other: return "other";
    }
    return "?";
}

int element_size(ElementType t) {
    switch (t) {
        case ElementType::Int8:
        case ElementType::UInt8:
        case ElementType::Bool: return 1;
        case ElementType::Int16:
        case ElementType::UInt16: return 2;
        case ElementType::Int32:
        case ElementType::Float32: return 4;
        case ElementType::Int64: return 8;
        case ElementType::Int4:
        case ElementType::Other: return 0;
    }
    return 0;
}

namespace {

bool starts_with(std::span<const uint8_t> data, size_t at, std::string_view bytes) {
    return data.size() >= at + bytes.size() && std::equal(bytes.begin(), bytes.end(), data.begin() + at);
}

constexpr std::string_view kExecuTorchHeader{"vela_bin_stream\0", 16};
constexpr std::string_view kExecuTorchProgramIdentifier{"ET12"};

}  // namespace

FileBytes map_file(const std::string& path) {
    const auto fail = [&](const std::string& what) { throw Error({path, std::nullopt, ""}, what, ErrorKind::Io); };
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) fail(ec ? "cannot open: " + ec.message() : "not a regular file");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int error = errno;
        ::close(fd);
        fail(std::string("cannot read its size: ") + std::strerror(error));
    }
    const auto size = static_cast<size_t>(st.st_size);
    if (size == 0) {
        ::close(fd);
        throw Error({path, 0, ""}, "file is empty");
    }
    void* at = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int error = errno;
    ::close(fd);  // the mapping stays valid
    if (at == MAP_FAILED) fail(std::string("cannot map: ") + std::strerror(error));
    const int guard = guard_mapping(static_cast<const uint8_t*>(at), size, path);
    std::shared_ptr<const void> owner(at, [size, guard](const void* p) {
        unguard_mapping(guard);
        ::munmap(const_cast<void*>(p), size);
    });
    return {{static_cast<const uint8_t*>(at), size}, std::move(owner), true};
}

std::unique_ptr<LoadedModel> load_model(const std::string& path, const LoadOptions& options) {
    return load_model_bytes(path, map_file(path), options);
}

std::unique_ptr<LoadedModel> load_model_bytes(const std::string& path, const FileBytes& file, const LoadOptions& options) {
    const std::span<const uint8_t> data = file.bytes;
    if (starts_with(data, 4, "TFL3")) return load_vela_tflite(path, file, options);
    if (starts_with(data, 0, "PK\x03\x04")) return load_vela_npz(path, file, options);
    if (starts_with(data, 0, kExecuTorchHeader)) return load_executorch_bin(path, file, options);
    if (starts_with(data, 4, kExecuTorchProgramIdentifier)) return load_executorch_program(path, file, options);
    return load_raw_command_stream(path, file, options);
}

NpuConfig resolve_npu_config(const std::string& path, const CommandStream& stream, const LoadOptions& options) {
    const auto stream_config = stream.config_word ? npu_config_from_config_word(*stream.config_word) : std::nullopt;
    if (options.npu) {
        const auto chosen = find_npu_config(*options.npu);
        if (!chosen)
            throw Error({path, std::nullopt, "--npu"},
                        fmt::format("unknown NPU configuration '{}'; valid: {}", *options.npu, npu_config_names()));
        const auto product_and_macs = [](uint32_t word) { return word & 0xF000000Fu; };
        if (stream.config_word && product_and_macs(*stream.config_word) != product_and_macs(chosen->config_word))
            throw Error({path, stream.config_word_offset, "CONFIG"},
                        fmt::format("--npu {} (CONFIG 0x{:08x}) disagrees with the command stream's CONFIG 0x{:08x} "
                                    "({}) in product or MACs",
                                    chosen->name, chosen->config_word, *stream.config_word,
                                    stream_config ? stream_config->name : "unknown configuration"));
        return *chosen;
    }
    if (!stream.config_word)
        throw Error({path, std::nullopt, "--npu"},
                    fmt::format("a {} command stream does not name its NPU; --npu is required (one of {})",
                                stream.payload_kind, npu_config_names()));
    if (!stream_config)
        throw Error({path, stream.config_word_offset, "CONFIG"},
                    fmt::format("CONFIG word 0x{:08x} matches no known NPU configuration; give --npu (one of {})",
                                *stream.config_word, npu_config_names()));
    return *stream_config;
}

}  // namespace ethosu
