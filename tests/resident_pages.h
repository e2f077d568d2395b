#pragma once
// How many pages of a span this process has mapped in (Linux /proc/self/pagemap), for tests that
// check which memory stays resident.

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <span>

namespace ethosu {

// The pages overlapping `bytes` that are present in this process's page tables; nullopt where
// /proc/self/pagemap cannot be read.
inline std::optional<size_t> resident_pages(std::span<const uint8_t> bytes) {
    // The file only answers reads of whole 8-byte entries, so it is read unbuffered.
    const int pagemap = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pagemap < 0) return std::nullopt;
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<uintptr_t>(bytes.data()) / page;
    const auto end = (reinterpret_cast<uintptr_t>(bytes.data() + bytes.size()) + page - 1) / page;
    size_t present = 0;
    for (uintptr_t p = begin; p < end; ++p) {
        uint64_t entry = 0;
        if (::pread(pagemap, &entry, sizeof entry, static_cast<off_t>(p * sizeof entry)) != sizeof entry) {
            ::close(pagemap);
            return std::nullopt;
        }
        present += (entry >> 63) & 1;  // bit 63: page present
    }
    ::close(pagemap);
    return present;
}

}  // namespace ethosu
