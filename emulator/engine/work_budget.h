#pragma once
// Bounds on the work and memory a command stream may ask for. A few hostile register values
// describe ops no NPU could run (a 65536 x 65536 x 16 pool over one aliased row, a branch loop
// that never ends, an upscaled IFM of 256 GiB); every op is charged against these limits before it
// starts, in full runs and timing-only runs alike, so such a stream ends in an ethosu::Error
// naming the op, its command offset and the figure instead of running for hours or aborting.
// The defaults leave a wide margin over the 890 streams of the Vela corpus (vectors/ and
// vectors-vela/; tests/engine/test_work_budget.cc measures them); the options raise them.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "emulator/isa/control_flow.h"
#include "emulator/isa/decoded_op.h"

namespace ethosu {

struct WorkLimits {
    // One op's work (op_work). The largest corpus op does 20,070,400 (2^24.3: a MobileNetV2 CONV),
    // so 2^30 leaves a margin of 53.
    uint64_t max_op_work = uint64_t{1} << 30;
    // The work of all ops of one run. The largest corpus run does 303,462,732 (2^28.2:
    // MobileNetV2 224), so 2^32 leaves a margin of 14.
    uint64_t max_run_work = uint64_t{1} << 32;
    // Commands executed in one run (FollowOptions::max_commands). A stream without branches
    // executes each command once and the largest corpus stream has 7714, so 2^17 leaves a margin
    // of 17; a branch loop over person_detect (1329 commands) stops after 98 passes, about 1 s.
    uint64_t max_commands = uint64_t{1} << 17;
    // One buffer the engine sizes from an op's registers (an upscaled IFM, a chained OFM,
    // accumulators loaded from IFM2, dense IFM rows, an IFM patch). Every model of vectors/ runs
    // with a limit of 512 KiB, so 64 MiB leaves a margin of 128 and keeps a hostile op's buffers
    // far below the memory of a CI machine.
    uint64_t max_allocation_bytes = uint64_t{64} << 20;
};

// An op's work, in steps of the kernel's inner loop: CONV multiply-accumulates (OFM elements x
// kernel taps x IFM depth), DEPTHWISE and POOL OFM elements x taps, ELEMENTWISE and RESIZE OFM
// elements, DMA bytes moved; 0 for the others. Saturates at UINT64_MAX.
uint64_t op_work(const DecodedOp& op);

// The limits applied to one run: charge() every op as it is reached (the command limit is
// follow_stream's: pass it with follow_options()).
class WorkBudget {
public:
    // source: the file named in errors.
    WorkBudget(const WorkLimits& limits, std::string source) : limits_(limits), source_(std::move(source)) {}

    // Throws ethosu::Error when op's work exceeds max_op_work, the run's work so far max_run_work,
    // or a buffer the engine sizes from op's registers alone (a chained OFM, an upscaled IFM,
    // weights or accumulators read from IFM2, a kernel's IFM patch) max_allocation_bytes. Those
    // buffers are checked here rather than where they are allocated, so that a timing-only run,
    // which allocates none of them, refuses the ops a full run refuses.
    void charge(const DecodedOp& op);
    // A new run: its work starts from 0.
    void start_run() { run_work_ = 0; }
    // Throws ethosu::Error when a buffer of `bytes` (`what`, sized from op's registers and the
    // kernel's own choices, such as a band of IFM rows) exceeds max_allocation_bytes.
    void check_allocation(const DecodedOp& op, uint64_t bytes, std::string_view what) const;

    const WorkLimits& limits() const { return limits_; }
    // options with the command limit lowered to this budget's.
    FollowOptions follow_options(FollowOptions options) const {
        options.max_commands = std::min(options.max_commands, limits_.max_commands);
        return options;
    }

private:
    void check_register_sized_buffers(const DecodedOp& op) const;

    WorkLimits limits_;
    std::string source_;
    uint64_t run_work_ = 0;
};

}  // namespace ethosu
