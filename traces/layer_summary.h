#pragma once
// What a performance engineer reads first after a run: the layers that took the most cycles, with
// what bounds each, and the time per operator type. From per_layer_rows, nothing recomputed.

#include <string>
#include <vector>

#include "traces/per_layer_csv.h"

namespace ethosu {

// What limits a layer, from the timing model's figures for it: "compute" when its compute cycles
// are at least every memory's access cycles, else the memory (with its AXI port) with the most.
std::string bound_by(const TracedRun& run, const PerLayerRow& row);

struct OperatorTypeTime {
    std::string type;  // the row's operator (Vela's scheduled one when named, else our op kind)
    int64_t cycles = 0;
    int layers = 0;
};
// Rows with cycles grouped by operator type, most cycles first.
std::vector<OperatorTypeTime> time_by_operator_type(const std::vector<PerLayerRow>& rows);

// The text `run` prints: the `top` layers by cycles, then the time by operator type.
std::string layer_summary_text(const TracedRun& run, const std::vector<PerLayerRow>& rows, size_t top);

}  // namespace ethosu
