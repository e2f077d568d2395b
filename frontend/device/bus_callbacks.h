#pragma once
// The bus a system simulator serves the NPU's memory with (NpuDevice::Options::bus, BusWindow).

#include <cstddef>
#include <cstdint>

namespace ethosu {

// A system simulator's bus: 0 when the access succeeded, anything else a bus error (the AXI
// error the hardware would get). address is an NPU physical address.
struct BusCallbacks {
    int (*mem_read)(void* user, uint64_t address, void* data, size_t size) = nullptr;
    int (*mem_write)(void* user, uint64_t address, const void* data, size_t size) = nullptr;
    void* user = nullptr;
    // Changed runs at most this many unchanged bytes apart are written back as one, the unchanged
    // bytes with the values they were fetched with: fewer, larger writes for a bus where no other
    // master writes while a stream runs (a simulator that waits for the NPU). 0: only changed bytes.
    size_t merge_gap = 0;
};

}  // namespace ethosu
