// The Vela .npz loader, and its .npy parser on its own (the zip CRC keeps most mutations
// from ever reaching it through the archive). Only ethosu::Error may escape (and is caught);
// anything else, or a crash, is a finding.

#include <cstdint>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/loaders/model.h"
#include "frontend/loaders/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);
    try {
        ethosu::load_vela_npz("fuzz.npz", bytes, {});
    } catch (const ethosu::Error&) {
    }
    try {
        ethosu::parse_npy(ethosu::ByteReader("fuzz.npy", bytes), "fuzz.npy");
    } catch (const ethosu::Error&) {
    }
    return 0;
}
