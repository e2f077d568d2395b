// The ExecuTorch .pte loader on arbitrary bytes. Only ethosu::Error may escape (and is caught);
// anything else, or a crash, is a finding.

#include <cstdint>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/loaders/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);
    try {
        ethosu::load_executorch_program("fuzz.pte", bytes, {});
    } catch (const ethosu::Error&) {
    }
    return 0;
}
