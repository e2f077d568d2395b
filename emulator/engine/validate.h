#pragma once
// What the engine refuses in an op without looking at data: register combinations it does not
// model or the hardware leaves undefined, read from the decoded op and the configuration alone
// (shapes, formats, strides, block sizes, scales, enumerated modes). Full runs, timing-only runs
// and the device model all pass every op through it (check_op, executor.h) before the op is timed
// or executed, so they refuse the same streams. What depends on the data (weight streams, indices,
// memory behind the regions, what an earlier op left inside the NPU) is refused where it is read.

#include <string>

#include "emulator/isa/decoded_op.h"

namespace ethosu {

// The ops whose accumulators may start from kept ones or IFM2 and stay inside the NPU (Vela 5.1
// splits convolutions that way and loads 32/64-bit maps through POOL NONE).
bool uses_accumulator_control(const DecodedOp& op);

// Throws ethosu::Error naming source, the op's command offset and the register field for an op the
// engine refuses whatever the data.
void validate(const DecodedOp& op, const NpuConfig& config, const std::string& source);

}  // namespace ethosu
