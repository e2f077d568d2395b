#include "emulator/isa/bounded_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "emulator/isa/error.h"

namespace ethosu {

std::string read_bounded_file(const std::string& path, uint64_t max_bytes, std::string_view field,
                              std::string_view why) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error({path, std::nullopt, std::string(field)}, "cannot open file", ErrorKind::Io);
    std::string bytes;
    constexpr uint64_t kChunk = 64 * 1024;
    // One byte past the limit tells a file at the limit from a longer one (or an endless device).
    while (bytes.size() <= max_bytes) {
        const size_t at = bytes.size();
        bytes.resize(at + static_cast<size_t>(std::min(kChunk, max_bytes + 1 - at)));
        in.read(bytes.data() + at, static_cast<std::streamsize>(bytes.size() - at));
        bytes.resize(at + static_cast<size_t>(in.gcount()));
        if (!in) break;
    }
    if (in.bad()) throw Error({path, bytes.size(), std::string(field)}, "read error", ErrorKind::Io);
    if (bytes.size() > max_bytes)
        throw Error({path, max_bytes, std::string(field)},
                    fmt::format("file is larger than the {}-byte limit ({})", max_bytes, why), ErrorKind::LimitExceeded);
    return bytes;
}

}  // namespace ethosu
