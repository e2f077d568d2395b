#include "emulator/isa/error.h"

#include <fmt/format.h>

namespace ethosu {

std::string format_error(const ErrorLocation& where, const std::string& reason) {
    std::string text;
    auto append = [&text](const std::string& part) {
        if (part.empty()) return;
        if (!text.empty()) text += ": ";
        text += part;
    };
    append(where.file);
    if (where.offset) append(fmt::format("{}@0x{:x}", where.kind == OffsetKind::Command ? "cmd" : "file", *where.offset));
    append(where.field);
    append(reason);
    return text;
}

Error::Error(ErrorLocation where, const std::string& what, ErrorKind kind)
    : std::runtime_error(format_error(where, what)), where_(std::move(where)), reason_(what), kind_(kind) {}

}  // namespace ethosu
