#pragma once
// The run in the layout of Vela's per-layer CSV (--verbose-performance), so the two can be
// diffed. Without a debug database: one row per kernel op. With one: one row per op of Vela's
// `perf` table, in its order, summing the kernel ops its queue maps to that op. See
// traces/README.md for what each column holds and which ones we leave empty.

#include <array>
#include <string>
#include <vector>

#include "traces/traced_run.h"

namespace ethosu {

struct PerLayerRow {
    std::string original_operator;
    std::string op;      // "NNG Operator"
    std::string target;  // "NPU", or Vela's "CPU" for a Passthrough op
    // Staging Usage and Peak% (Staging) are compiler memory-planning figures we do not have:
    // the CSV leaves them empty.
    int64_t op_cycles = 0;  // the row's share of the run's timeline; the rows sum to the run's cycles
    int64_t npu_cycles = 0;  // compute cycles without memory stalls
    std::array<int64_t, kMemoryKinds> access_cycles{};  // by MemoryKind
    int64_t macs = 0;
    std::string name;
};

// The header Vela writes, column for column.
const std::vector<std::string>& per_layer_header();

// Throws ethosu::Error naming the debug database when a kernel op of the run has no entry in
// its queue (the database belongs to another compilation).
std::vector<PerLayerRow> per_layer_rows(const TracedRun& run);

std::string per_layer_csv(const TracedRun& run);
void write_per_layer_csv(const TracedRun& run, const std::string& path);

}  // namespace ethosu
