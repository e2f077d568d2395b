#include "frontend/cli/tensor_files.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "emulator/isa/bounded_file.h"
#include "emulator/isa/error.h"
#include "frontend/loaders/npy.h"

namespace ethosu {
// An .npy header is a few hundred bytes; 64 KiB is the most format 1.0 can declare.
constexpr uint64_t kMaxNpyHeader = 65536 + 10;

bool is_npy_path(const std::string& path) { return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0; }

std::vector<uint8_t> read_tensor_file(const std::string& path, const TensorInfo& t, size_t index, TensorFileRole role) {
    const bool input = role == TensorFileRole::Input;
    const char* option = input ? "--input" : "--expect";
    const char* noun = input ? "input" : "output";
    const std::string why = fmt::format("the model's {} {} has {} bytes", noun, index, t.size_bytes);
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored))
        throw Error({path, std::nullopt, option}, "is a directory, not a tensor file", ErrorKind::Io);
    if (!is_npy_path(path)) {
        const std::string bytes = read_bounded_file(path, t.size_bytes, option, why);
        // The file is at fault, not the model: it names the tensor it should hold.
        if (bytes.size() != t.size_bytes)
            throw Error({path, std::nullopt, option},
                        fmt::format("holds {} bytes; {} {}{} ({} {}) takes {}", bytes.size(), noun, index,
                                    t.name.empty() ? "" : " '" + t.name + "'", element_type_name(t.type),
                                    shape_tuple(t.shape), t.size_bytes));
        return {bytes.begin(), bytes.end()};
    }
    const std::string file = read_bounded_file(path, t.size_bytes + kMaxNpyHeader, option, why);
    const NpyArray array = parse_npy(ByteReader(path, {reinterpret_cast<const uint8_t*>(file.data()), file.size()}), "array");
    const std::string want = npy_descr(t.type);
    const std::string tensor = fmt::format("{} {} '{}' is {} {}", noun, index, t.name, element_type_name(t.type), shape_tuple(t.shape));
    if (array.descr != want)
        throw Error({path, std::nullopt, option},
                    fmt::format("holds dtype '{}'; {} (dtype '{}')", array.descr, tensor, want.empty() ? "none" : want));
    const std::vector<int64_t> shape(array.shape.begin(), array.shape.end());
    if (!same_element_order(shape, t.shape))
        throw Error({path, std::nullopt, option}, fmt::format("holds shape {}; {}", shape_tuple(shape), tensor));
    const auto elements = array.elements.data();
    return {elements.begin(), elements.end()};
}

void write_tensor_file(const std::string& path, const TensorInfo& t, std::span<const uint8_t> bytes) {
    std::vector<uint8_t> npy;
    if (is_npy_path(path)) {
        const std::string descr = npy_descr(t.type);
        if (descr.empty())
            throw Error({path, std::nullopt, "--output"},
                        fmt::format("output '{}' is of a type numpy has no dtype for", t.name));
        if (t.shape.size() > kMaxNpyDimensions)
            throw Error({path, std::nullopt, "--output"},
                        fmt::format("output '{}' has {} dimensions; numpy takes at most {}", t.name, t.shape.size(),
                                    kMaxNpyDimensions));
        npy = npy_file(descr, t.shape, bytes);
        bytes = npy;
    }
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw Error({path, std::nullopt, {}}, "cannot write file", ErrorKind::Io);
}

}  // namespace ethosu
