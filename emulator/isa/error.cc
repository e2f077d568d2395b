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

std::string_view error_kind_name(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::Malformed: return "malformed";
        case ErrorKind::Unsupported: return "unsupported";
        case ErrorKind::OutOfBounds: return "out_of_bounds";
        case ErrorKind::LimitExceeded: return "limit_exceeded";
        case ErrorKind::BranchFault: return "branch_fault";
        case ErrorKind::Io: return "io";
        case ErrorKind::Usage: return "usage";
    }
    return "unknown";
}

Error::Error(ErrorLocation where, const std::string& what, ErrorKind kind)
    : std::runtime_error(format_error(where, what)), where_(std::move(where)), reason_(what), kind_(kind) {}

}  // namespace ethosu
