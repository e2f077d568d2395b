// Decoder, branch follower and disassembler on arbitrary words: the first byte picks the NPU
// config, its top bit the outcome of every RF_TRUE branch. Only ethosu::Error may escape (and is
// caught); anything else is a finding.

#include <cstring>
#include <vector>

#include "emulator/isa/control_flow.h"
#include "emulator/isa/disasm.h"
#include "emulator/isa/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const auto configs = ethosu::all_npu_configs();
    const ethosu::NpuConfig& config = configs[data[0] % configs.size()];
    std::vector<uint32_t> words((size - 1) / 4);
    if (!words.empty()) std::memcpy(words.data(), data + 1, words.size() * 4);
    try {
        ethosu::decode_stream(config, words, "fuzz");
        ethosu::disassemble_stream(config.generation, words, "fuzz");
        const bool flag = (data[0] & 0x80) != 0;
        ethosu::follow_stream(config, words, "fuzz", [](const ethosu::DecodedOp&, std::span<const ethosu::DecodedOp>) {},
                              [flag](const ethosu::DecodedOp&) { return flag; },
                              {.decode = {}, .max_commands = 1u << 16, .max_ops = 1u << 12});
    } catch (const ethosu::Error&) {
    }
    return 0;
}
