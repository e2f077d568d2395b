#pragma once
// A model's NPU streams run each of the three ways a stream runs, for tests that expect every way
// to refuse the same streams at the same place: a full run and a timing-only run (run_model), and
// the device model (NpuDevice, driven through its registers as a driver does).

#include <optional>
#include <string>

#include "frontend/loaders/model.h"

namespace ethosu::test_modes {

enum class Mode { Full, TimingOnly, Device };
const char* mode_name(Mode mode);
constexpr Mode kModes[] = {Mode::Full, Mode::TimingOnly, Mode::Device};

// The error a run of the model in `mode` ends with: the full message, and where it points (the
// device reports only the message, which names the place as ethosu::Error does: FILE: cmd@0x..:
// FIELD: reason). nullopt: the run succeeded. Inputs are zeros; the device runs the first
// invocation's stream on its regions.
struct Refusal {
    std::string message;
    std::optional<uint64_t> offset;  // Full and TimingOnly only
    std::string field;               // Full and TimingOnly only
};
std::optional<Refusal> run_in_mode(const LoadedModel& model, Mode mode);

// Whether a device's message names the same place and reason as a run's error:
// "...cmd@0x<offset>: <field>: <reason>", the file name aside.
bool same_place_and_reason(const std::string& device_message, const std::string& run_message);

}  // namespace ethosu::test_modes
