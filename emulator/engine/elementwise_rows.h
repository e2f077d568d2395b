#pragma once
// The row loop both elementwise kernels share (elementwise.cc for U55/U65, elementwise_u85.cc).

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <initializer_list>

#include "emulator/engine/kernel_context.h"

namespace ethosu {

// Runs job.rows(first, last, operand scratch) over the OFM's rows: in parallel when
// parallel_allowed and no OFM byte is one another row writes or reads (an input the op overwrites
// in place, element by element, is read by the row that writes it), else in OFM order. inputs:
// the maps the op reads, nullptr for an operand without one (a scalar).
template <class Job>
void run_elementwise_rows(const DecodedOp& op, ExecutionContext& ctx, const FeatureMapView& ofm,
                          std::initializer_list<const FeatureMapView*> inputs, bool parallel_allowed, const Job& job) {
    ctx.scratch.operands.fit(OperandRows::kRows * static_cast<size_t>(op.kernel().ofm.depth));
    const auto run_rows = [&](const tbb::blocked_range<int>& rows) {
        job.rows(rows.begin(), rows.end(), ctx.scratch.operands.local());
    };
    bool apart = parallel_allowed && ofm.rows_are_disjoint();
    for (const FeatureMapView* input : inputs)
        apart = apart && (!input || !ofm.shares_bytes_with(*input) || ofm.same_elements_as(*input));
    const tbb::blocked_range<int> rows(0, op.kernel().ofm.height);
    if (apart) tbb::parallel_for(rows, run_rows);
    else run_rows(rows);
}

}  // namespace ethosu
