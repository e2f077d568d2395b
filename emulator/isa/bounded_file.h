#pragma once
// Side files (input tensors, vela.ini, Vela's debug database) are read whole, but never past a
// limit stated by the caller: /dev/zero or a FIFO given as one ends in an Error, not in memory
// exhaustion.

#include <cstdint>
#include <string>
#include <string_view>

namespace ethosu {

// The file's bytes. Throws ethosu::Error naming the file and `field` when it cannot be read or
// holds more than max_bytes (offset: max_bytes, the first byte past the limit; `why` says where
// the limit comes from).
std::string read_bounded_file(const std::string& path, uint64_t max_bytes, std::string_view field,
                              std::string_view why);

}  // namespace ethosu
