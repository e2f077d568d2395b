// Vela's per-layer report reader on arbitrary bytes, and the alignment of a few kernel ops with
// whatever rows it reads. Only ethosu::Error may escape (and is caught); anything else, or a
// crash, is a finding.

#include <cstdint>
#include <string_view>

#include "emulator/isa/error.h"
#include "traces/vela_per_layer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto report =
            ethosu::VelaPerLayer::parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.csv");
        static const std::vector<ethosu::KernelOpSummary> ops = {
            {"conv", 1000}, {"conv", 2000}, {"elementwise.add", 0}, {"pool.average", 24}, {"depthwise", 512}};
        ethosu::align_with_vela(ops, report.layers());
    } catch (const ethosu::Error&) {
    }
    return 0;
}
