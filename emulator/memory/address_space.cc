#include "emulator/memory/address_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include <sys/mman.h>
#include <unistd.h>

#include "emulator/isa/error.h"

namespace ethosu {

std::string_view region_role_name(RegionRole role) {
    switch (role) {
        case RegionRole::Weights: return "weights";
        case RegionRole::Scratch: return "scratch";
        case RegionRole::ScratchFast: return "scratch_fast";
        case RegionRole::Input: return "input";
        case RegionRole::Output: return "output";
    }
    return "?";
}

void MemoryMap::map(uint64_t address, std::span<uint8_t> bytes, std::string name) {
    const uint64_t end = address + bytes.size();
    if (end < address) throw std::invalid_argument(fmt::format("{}: mapping wraps the address space", name));
    for (const auto& m : mappings_) {
        if (address < m.address + m.bytes.size() && m.address < end) {
            throw std::invalid_argument(fmt::format("{} at 0x{:x} overlaps {} at 0x{:x}", name, address, m.name,
                                                    m.address));
        }
    }
    mappings_.push_back({address, bytes, std::move(name)});
}

void MemoryMap::map_read_only(uint64_t address, std::span<const uint8_t> bytes, std::string name,
                              bool file_mapped) {
    // AddressSpace::write refuses read-only mappings, so these bytes are only ever read.
    map(address, {const_cast<uint8_t*>(bytes.data()), bytes.size()}, std::move(name));
    mappings_.back().read_only = true;
    mappings_.back().file_mapped = file_mapped;
}

std::span<uint8_t> MemoryMap::allocate(uint64_t address, uint64_t size, std::string name) {
    // calloc, not new[](): a large block comes zeroed from the OS untouched, so a region the stream
    // never writes (a hostile file can claim an arena of hundreds of MB) costs no resident memory.
    auto* block = static_cast<uint8_t*>(std::calloc(std::max<uint64_t>(size, 1), 1));
    if (!block) throw std::bad_alloc();
    owned_.emplace_back(block);
    std::span<uint8_t> bytes(block, size);
    map(address, bytes, std::move(name));
    return bytes;
}

const MemoryMap::Mapping* MemoryMap::find(uint64_t address, uint64_t length) const {
    for (const auto& m : mappings_) {
        if (address >= m.address && address - m.address <= m.bytes.size() &&
            length <= m.bytes.size() - (address - m.address)) {
            return &m;
        }
    }
    return nullptr;
}

const MemoryMap::Mapping* MemoryMap::holding(std::span<const uint8_t> bytes) const {
    for (const auto& m : mappings_)
        if (bytes.data() >= m.bytes.data() && bytes.data() + bytes.size() <= m.bytes.data() + m.bytes.size()) return &m;
    return nullptr;
}

const MemoryMap::Mapping& AddressSpace::mapping(int region, uint64_t offset, uint64_t length,
                                                const AccessContext& who) const {
    if (region < 0 || region >= kRegions) {
        throw Error(who.location(), fmt::format("{} uses region {}, outside 0..{}", who.what, region, kRegions - 1));
    }
    const uint64_t address = base_[static_cast<size_t>(region)] + offset;
    const MemoryMap::Mapping* m = address >= offset ? map_.find(address, length) : nullptr;
    if (!m) {
        throw BusError(who.location(), fmt::format("{} accesses region {} bytes [0x{:x}, 0x{:x}) (address 0x{:x}), outside every "
                                       "mapped memory",
                                       who.what, region, offset, offset + length, address),
                       std::string(who.what));
    }
    return *m;
}

bool AddressSpace::is_read_only(std::span<const uint8_t> bytes) const {
    const MemoryMap::Mapping* m = map_.holding(bytes);
    return m && m->read_only;
}

void AddressSpace::release(std::span<const uint8_t> bytes) const {
#if defined(MADV_DONTNEED)
    if (bytes.empty()) return;
    if (const MemoryMap::Mapping* m = map_.holding(bytes); m && m->file_mapped) {
        // A page fault on a file mapping also maps the cached pages around it (Linux's fault-around,
        // 64 KiB by default), so the bytes' whole 64 KiB blocks go, kept inside the mapping's pages.
        // Every page there is file-backed: dropping one that other data shares costs a page fault.
        constexpr uintptr_t kFaultAroundBytes = 64 * 1024;
        static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
        const auto down = [](uintptr_t at, uintptr_t to) { return at & ~(to - 1); };
        const auto up = [](uintptr_t at, uintptr_t to) { return (at + to - 1) & ~(to - 1); };
        const auto address = [](const uint8_t* p) { return reinterpret_cast<uintptr_t>(p); };
        const uintptr_t first =
            std::max(down(address(bytes.data()), kFaultAroundBytes), down(address(m->bytes.data()), page));
        const uintptr_t end = std::min(up(address(bytes.data() + bytes.size()), kFaultAroundBytes),
                                       up(address(m->bytes.data() + m->bytes.size()), page));
        ::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
    }
#else
    (void)bytes;
#endif
}

std::span<const uint8_t> AddressSpace::read(int region, uint64_t offset, uint64_t length,
                                            const AccessContext& who) const {
    const auto& m = mapping(region, offset, length, who);
    return m.bytes.subspan(base_[static_cast<size_t>(region)] + offset - m.address, length);
}

std::span<uint8_t> AddressSpace::write(int region, uint64_t offset, uint64_t length, const AccessContext& who) const {
    const auto& m = mapping(region, offset, length, who);
    if (m.read_only) {
        throw BusError(who.location(), fmt::format("{} writes region {} bytes [0x{:x}, 0x{:x}), which lie in read-only {}", who.what,
                                   region, offset, offset + length, m.name),
                       std::string(who.what));
    }
    return m.bytes.subspan(base_[static_cast<size_t>(region)] + offset - m.address, length);
}

}  // namespace ethosu
