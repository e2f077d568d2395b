#include "tests/device/run_modes.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/device/npu_device.h"
#include "frontend/runner/run_model.h"

namespace ethosu::test_modes {
namespace {

// The hardware's register offsets, written here independently of our description.
constexpr uint32_t CMD = 0x008, QBASE = 0x010, QSIZE = 0x020, BASEP = 0x080;
constexpr uint64_t kStreamAddress = 0x10000000, kRegionStride = 0x1000000;

std::optional<Refusal> run_on_device(const LoadedModel& model) {
    NpuDevice::Options options;
    options.npu = model.config;
    NpuDevice device(std::move(options));
    const NpuInvocation& inv = model.invocations.at(0);
    std::vector<uint8_t> stream(inv.stream.words.size() * 4);
    if (!stream.empty()) std::memcpy(stream.data(), inv.stream.words.data(), stream.size());
    stream.resize(std::max<size_t>(stream.size(), 16));
    device.map(kStreamAddress, stream, "stream");
    std::vector<std::vector<uint8_t>> regions;
    regions.reserve(inv.regions.size());
    for (const RegionImage& r : inv.regions) {
        auto& bytes = regions.emplace_back(std::max<uint64_t>(r.size, 16), 0);
        std::copy(r.bytes.begin(), r.bytes.end(), bytes.begin());
        const uint64_t address = kStreamAddress + kRegionStride * regions.size();
        device.map(address, bytes, "region");
        device.write(BASEP + 8 * static_cast<uint32_t>(r.index), 8, address);
    }
    device.write(QBASE, 8, kStreamAddress);
    device.write(QSIZE, static_cast<uint32_t>(inv.stream.words.size() * 4));
    device.write(CMD, 1);
    device.run_until_idle();
    if (device.last_error().empty()) return std::nullopt;
    return Refusal{device.last_error(), std::nullopt, {}};
}

}  // namespace

const char* mode_name(Mode mode) {
    switch (mode) {
        case Mode::Full: return "full run";
        case Mode::TimingOnly: return "timing-only run";
        case Mode::Device: return "device model";
    }
    return "?";
}

std::optional<Refusal> run_in_mode(const LoadedModel& model, Mode mode) {
    if (mode == Mode::Device) return run_on_device(model);
    try {
        RunOptions options;
        options.pipeline.execute = mode == Mode::Full;
        run_model(model, {}, options);
        return std::nullopt;
    } catch (const Error& e) {
        return Refusal{e.what(), e.where().offset, e.where().field};
    }
}

bool same_place_and_reason(const std::string& device_message, const std::string& run_message) {
    const size_t place = run_message.find("cmd@0x");
    return place != std::string::npos && device_message.ends_with(run_message.substr(place));
}

}  // namespace ethosu::test_modes
