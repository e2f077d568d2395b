#pragma once
// One error type for every hostile-input path: it names where (file, byte offset)
// and what (field) so a user can find the bad byte without a debugger.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ethosu {

// What an offset counts from; the message says which (see format_error).
enum class OffsetKind : uint8_t {
    File,     // bytes from the start of the file (or of an archive member, named "archive:member")
    Command,  // bytes from the start of the command stream, as disasm prints them
};

struct ErrorLocation {
    std::string file;              // path, or a label such as "<command stream>"
    std::optional<uint64_t> offset;  // byte offset inside that file or stream
    std::string field;             // the field, command or key at fault
    OffsetKind kind = OffsetKind::File;
};

// An op's place (a command offset) named by reference, for code that runs per op or per access:
// it becomes an ErrorLocation (copying the strings) only when an error is thrown. `file` must
// outlive it.
struct LazyLocation {
    const std::string* file;
    std::optional<uint64_t> offset;
    std::string_view field;

    operator ErrorLocation() const { return {*file, offset, std::string(field), OffsetKind::Command}; }
};

// What went wrong, for callers that act on it (the register front turns it into the NPU's fault
// status); the message says the rest. Set where the error is thrown.
enum class ErrorKind : uint8_t {
    Malformed,      // the input breaks its format or the hardware's rules: a malformed file, stream or key
    Unsupported,    // well-formed, but what it asks is undetermined by any source or not modelled
    OutOfBounds,    // an access outside the memory mapped for it: the NPU's bus error
    LimitExceeded,  // more work, commands, bytes or memory than a limit allows
    BranchFault,    // a branch to a target outside the stream or inside a command (U85)
    Io,             // a file that cannot be opened, read or written
    Usage,          // a command line or manifest that cannot be used
};
// "malformed", "unsupported", "out_of_bounds", "limit_exceeded", "branch_fault", "io", "usage".
std::string_view error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
public:
    Error(ErrorLocation where, const std::string& what, ErrorKind kind = ErrorKind::Malformed);

    const ErrorLocation& where() const { return where_; }
    const std::string& reason() const { return reason_; }
    ErrorKind kind() const { return kind_; }

private:
    ErrorLocation where_;
    std::string reason_;
    ErrorKind kind_;
};

// Formats "file: file@0x..: field: reason" (a file offset) or "file: cmd@0x..: field: reason" (a
// command-stream offset), with the empty parts left out.
std::string format_error(const ErrorLocation& where, const std::string& reason);

}  // namespace ethosu
