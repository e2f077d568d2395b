#pragma once
// The NPU's view of memory: a physical address map of host buffers, the eight region base
// pointers (BASEP) into it, and bounds-checked access that names the op on a fault.

#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emulator/isa/error.h"

namespace ethosu {

// Where the memory sits, as Vela's memory modes place it; the timing model prices accesses by it.
enum class MemoryKind : uint8_t { Sram, Dram, OnChipFlash, OffChipFlash };

// What a region (base pointer) holds, as its loader knows it from the file's layout: the timing
// model puts its memory behind the AXI port for it (MemorySystem::port_for_role).
enum class RegionRole : uint8_t {
    Weights,      // constant data: Vela's const_mem_area
    Scratch,      // the arena: feature maps and scratch
    ScratchFast,  // the arena's fast part: Vela's cache_mem_area
    Input,        // the caller's input buffers (--separate-io-regions, the Linux driver's IFM buffer)
    Output,       // the caller's output buffers
};
// "weights", "scratch", "scratch_fast", "input", "output".
std::string_view region_role_name(RegionRole role);

// Who is accessing, for error messages: "model.tflite: cmd@0x120: NPU_OP_CONV: IFM ...".
struct AccessContext {
    const std::string* source = nullptr;
    // The op's command offset; for host-side accesses (placing inputs) the file offset of the
    // tensor's definition, with kind File.
    std::optional<uint64_t> offset;
    std::string_view op;    // e.g. "NPU_OP_CONV", or the tensor's field in the file
    std::string_view what;  // e.g. "IFM", "weights", "DMA source"
    OffsetKind kind = OffsetKind::Command;

    ErrorLocation location() const {
        return {source ? *source : std::string("<command stream>"), offset, std::string(op), kind};
    }
};

// An access outside every mapped memory: what the hardware reports as a bus error.
class BusError : public Error {
public:
    BusError(ErrorLocation where, const std::string& what, std::string access)
        : Error(std::move(where), what, ErrorKind::OutOfBounds), access_(std::move(access)) {}
    const std::string& access() const { return access_; }  // what was accessed: "IFM", "DMA source", ...

private:
    std::string access_;
};

// Host buffers mapped at physical addresses. Buffers are borrowed (the host owns them) or owned.
class MemoryMap {
public:
    struct Mapping {
        uint64_t address = 0;
        std::span<uint8_t> bytes;  // never written through when read_only
        std::string name;
        bool read_only = false;
        // The bytes lie in a read-only private file mapping: a page the process drops is read
        // back from the file on its next access (AddressSpace::release).
        bool file_mapped = false;
    };

    // Maps host memory at address; throws std::invalid_argument if it overlaps a mapping.
    void map(uint64_t address, std::span<uint8_t> bytes, std::string name);
    // Maps memory the NPU may only read (a model's constant data, kept where the host has it);
    // a write to it is an access error. file_mapped: the bytes lie in a read-only private file
    // mapping (every page of it file-backed), whose pages release() may drop.
    void map_read_only(uint64_t address, std::span<const uint8_t> bytes, std::string name, bool file_mapped = false);
    // Allocates zero-filled memory owned by the map and maps it.
    std::span<uint8_t> allocate(uint64_t address, uint64_t size, std::string name);

    // The mapping holding [address, address + length), or nullptr.
    const Mapping* find(uint64_t address, uint64_t length) const;
    // The mapping whose host bytes hold `bytes`, or nullptr.
    const Mapping* holding(std::span<const uint8_t> bytes) const;
    const std::vector<Mapping>& mappings() const { return mappings_; }

private:
    std::vector<Mapping> mappings_;
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    std::vector<std::unique_ptr<uint8_t[], Free>> owned_;
};

class AddressSpace {
public:
    static constexpr int kRegions = 8;

    explicit AddressSpace(const MemoryMap& map) : map_(map) {}

    void set_base(int region, uint64_t address) { base_.at(static_cast<size_t>(region)) = address; }
    uint64_t base(int region) const { return base_.at(static_cast<size_t>(region)); }

    // The bytes at region + offset. Throws ethosu::Error naming the access when the region
    // index is invalid or the range is not inside one mapped buffer.
    std::span<const uint8_t> read(int region, uint64_t offset, uint64_t length, const AccessContext& who) const;
    std::span<uint8_t> write(int region, uint64_t offset, uint64_t length, const AccessContext& who) const;

    // Whether bytes obtained from read() lie in a read-only mapping, and so stay as they are.
    bool is_read_only(std::span<const uint8_t> bytes) const;
    // Hands back to the OS the pages holding bytes obtained from read(), when they lie in a file
    // mapping: the content stays the same and a later read faults it back in from the file. A
    // run that reads each constant once keeps the model file from staying resident this way.
    // Anything else is left as it is.
    void release(std::span<const uint8_t> bytes) const;

private:
    // The mapping holding an access; throws as read() and write() do.
    const MemoryMap::Mapping& mapping(int region, uint64_t offset, uint64_t length, const AccessContext& who) const;

    const MemoryMap& map_;
    std::array<uint64_t, kRegions> base_{};
};

}  // namespace ethosu
