#pragma once
// The run in the layout of Vela's per-layer CSV (--verbose-performance), so the two can be
// diffed. With a debug database: one row per op of Vela's `perf` table, in its order, summing the
// kernel ops its queue maps to that op. Without one but with Vela's per-layer report: Vela's rows,
// the kernel ops lined up with them by order, kind and MACs (align_with_vela). Otherwise, or when
// they do not line up: one row per kernel op. A last column says which. See traces/README.md for
// what each column holds and which ones we leave empty.

#include <array>
#include <string>
#include <string_view>
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
    MemoryTraffic traffic;  // bytes read and written per memory by the row's kernel ops and DMAs
    std::string alignment;  // how the row was found: see kAlignment*
    const VelaLayer* vela = nullptr;  // Vela's row of the same op, when the run has its report and lines up
};

// The Alignment column: the rows are Vela's, named by its debug database, or lined up with its
// per-layer report; or one per kernel op, as the report did not line up or none was given.
inline constexpr std::string_view kAlignmentDebugDb = "debug_db";
inline constexpr std::string_view kAlignmentVelaReport = "vela_per_layer";
inline constexpr std::string_view kAlignmentUnaligned = "unaligned";
inline constexpr std::string_view kAlignmentNone = "none";

// The header Vela writes, column for column (kVelaColumns), then Alignment.
inline constexpr size_t kVelaColumns = 16;
const std::vector<std::string>& per_layer_header();

// Throws ethosu::Error naming the debug database when a kernel op of the run has no entry in
// its queue (the database belongs to another compilation).
std::vector<PerLayerRow> per_layer_rows(const TracedRun& run);

std::string per_layer_csv(const TracedRun& run);
void write_per_layer_csv(const TracedRun& run, const std::string& path);

}  // namespace ethosu
