// The raw command-stream loader and the COP1/COP2 payload parser on arbitrary bytes; the
// first byte picks the --npu override (or none). Only ethosu::Error may escape (and is
// caught); anything else, or a crash, is a finding.

#include <cstdint>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/loaders/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const auto configs = ethosu::all_npu_configs();
    ethosu::LoadOptions options;
    if (data[0] < configs.size()) options.npu = std::string(configs[data[0]].name);
    const std::vector<uint8_t> bytes(data + 1, data + size);
    try {
        ethosu::load_raw_command_stream("fuzz.bin", bytes, options);
    } catch (const ethosu::Error&) {
    }
    try {
        ethosu::parse_driver_payload("fuzz.bin", bytes.data(), bytes.size(), 0);
    } catch (const ethosu::Error&) {
    }
    return 0;
}
