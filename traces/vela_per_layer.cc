#include "traces/vela_per_layer.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <limits>

#include "emulator/isa/bounded_file.h"
#include "emulator/isa/error.h"
#include "traces/csv_table.h"
#include "traces/debug_db.h"

namespace ethosu {
namespace {

constexpr std::string_view kTable = "per-layer";

// The column of a name one of Vela's two layouts uses, else the Error of the C++ core's name.
std::string column_of(const CsvTable& table, std::string_view cpp_core, std::string_view python_core,
                      const std::string& source) {
    for (const auto& name : table.header) {
        if (name == cpp_core || name == python_core) return name;
    }
    throw Error({source, 0, std::string(kTable)}, fmt::format("no column \"{}\"", cpp_core));
}

// Which of our kernel ops Vela lowers each of its scheduled operators to. Taken from the corpus,
// whose debug databases map every NPU_OP_* to its Vela op: Conv2D and FullyConnected run as conv,
// DepthwiseConv2D as depthwise, MaxPool as pool.max, ReduceSum as pool.reduce_sum, the binary
// and bit ops as their elementwise mode, and the unary ops (AvgPool, MemoryCopy, Quantize, Clamp,
// Tanh, Sigmoid, LUT, ...) as a 1x1 average or sum pool that applies their activation. The
// Python core (Vela 3/4) names the first two Conv2DBias and DepthwiseConv2DBias.
bool lowers_to(const VelaLayer& layer, std::string_view ours) {
    static constexpr std::pair<std::string_view, std::string_view> kinds[] = {
        {"Conv2D", "conv"},           {"Conv2DBias", "conv"},
        {"FullyConnected", "conv"},   {"DepthwiseConv2D", "depthwise"},
        {"DepthwiseConv2DBias", "depthwise"}, {"MaxPool", "pool.max"},
        {"ReduceSum", "pool.reduce_sum"},     {"Add", "elementwise.add"},
        {"Sub", "elementwise.sub"},   {"Mul", "elementwise.mul"},
        {"Minimum", "elementwise.min"},       {"Maximum", "elementwise.max"},
        {"LeakyRelu", "elementwise.lrelu"},   {"Abs", "elementwise.abs"},
        {"CLZ", "elementwise.clz"},   {"SHL", "elementwise.shl"},
        {"Asr", "elementwise.shr"},
    };
    if (layer.target != "NPU" || layer.op == "Passthrough") return false;
    for (const auto& [vela, kind] : kinds) {
        if (layer.op == vela) return ours == kind;
    }
    return ours == "pool.average" || ours == "pool.sum" || ours == "pool.none";
}

// The alignment's table has a cell per (row, op): beyond this many it is not tried (a hundred
// times the largest corpus model's).
constexpr size_t kMaxAlignmentCells = size_t{1} << 22;
// The most consecutive ops one Vela row takes (the corpus: 19, a convolution in IFM depth parts).
constexpr size_t kMaxOpsPerRow = 64;

}  // namespace

VelaPerLayer VelaPerLayer::parse(std::string_view text, const std::string& source) {
    VelaPerLayer report;
    report.source_ = source;
    // A model Vela left wholly on the CPU gets an empty report.
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return report;
    const CsvTable table = read_csv_table(std::string(kTable), text, 0, source);
    const std::string original = column_of(table, "Original Operator", "TFLite_operator", source);
    const std::vector<std::pair<MemoryKind, const char*>> access = {{MemoryKind::Sram, "SRAM AC"},
                                                                   {MemoryKind::Dram, "DRAM AC"},
                                                                   {MemoryKind::OnChipFlash, "OnFlash AC"},
                                                                   {MemoryKind::OffChipFlash, "OffFlash AC"}};
    const TableView view(table, source, 0,
                         {original, "NNG Operator", "Op Cycles", "NPU", "SRAM AC", "DRAM AC", "OnFlash AC",
                          "OffFlash AC", "MAC Count", "Name"});
    // The Python core writes no Target column: its rows are taken as NPU ops.
    const auto target = std::find(table.header.begin(), table.header.end(), "Target");
    // The Python core writes cycles as decimals ("10116.0"): whole numbers either way.
    auto count = [&](size_t row, const char* column) {
        const double value = view.real(row, column);
        if (value < 0 || value > double(std::numeric_limits<int64_t>::max() / 2))
            view.fail(row, column, fmt::format("{} is not a count", value));
        return static_cast<int64_t>(std::llround(value));
    };
    for (size_t r = 0; r < view.size(); ++r) {
        // Vela writes a table per NPU subgraph, each with its header: a row that is the header
        // starts the next one.
        if (table.rows[r] == table.header) continue;
        VelaLayer layer;
        layer.original_operator = view.text(r, original);
        layer.op = view.text(r, "NNG Operator");
        layer.target = target == table.header.end() ? "NPU" : table.rows[r][target - table.header.begin()];
        layer.op_cycles = count(r, "Op Cycles");
        layer.npu_cycles = count(r, "NPU");
        for (const auto& [kind, column] : access) layer.access_cycles[static_cast<size_t>(kind)] = count(r, column);
        layer.macs = count(r, "MAC Count");
        layer.name = view.text(r, "Name");
        report.layers_.push_back(std::move(layer));
    }
    return report;
}

uint64_t VelaPerLayer::max_file_bytes(uint64_t command_stream_bytes) {
    // A row per op is less than the debug database holds (rows per op and per tensor, and the
    // per-layer table again): its bound holds (on the corpus the report is under a tenth of it).
    return DebugDatabase::max_file_bytes(command_stream_bytes);
}

VelaPerLayer VelaPerLayer::load(const std::string& path, uint64_t max_bytes) {
    return parse(read_bounded_file(path, max_bytes, "--vela-per-layer",
                                   "a per-layer report is smaller than the debug database: at most 64 times its command stream, plus 1 MiB"),
                 path);
}

std::optional<std::string> vela_per_layer_path(const std::string& model_path) {
    constexpr std::string_view suffix = "_vela.tflite";
    if (model_path.size() <= suffix.size() || !model_path.ends_with(suffix)) return std::nullopt;
    return model_path.substr(0, model_path.size() - suffix.size()) + "_per-layer.csv";
}

std::optional<VelaPerLayer> find_vela_per_layer(const std::string& model_path, const std::string& given_path,
                                                uint64_t command_stream_bytes) {
    const auto beside_model = vela_per_layer_path(model_path);
    if (given_path.empty() && !(beside_model && std::filesystem::is_regular_file(*beside_model))) return std::nullopt;
    return VelaPerLayer::load(given_path.empty() ? *beside_model : given_path,
                              VelaPerLayer::max_file_bytes(command_stream_bytes));
}

std::optional<VelaCompiledSystem> find_vela_compiled_system(const std::string& model_path) {
    constexpr std::string_view suffix = "_vela.tflite";
    if (model_path.size() <= suffix.size() || !model_path.ends_with(suffix)) return std::nullopt;
    const std::filesystem::path stem_path = model_path.substr(0, model_path.size() - suffix.size());
    const std::string prefix = stem_path.filename().string() + "_summary_";
    const std::filesystem::path dir = stem_path.has_parent_path() ? stem_path.parent_path() : ".";
    std::error_code error;
    std::optional<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with(prefix) || !name.ends_with(".csv") || !entry.is_regular_file()) continue;
        if (found) return std::nullopt;  // summaries of several systems: none says which one
        found = entry.path().string();
    }
    if (!found) return std::nullopt;
    // A summary is one header and one row of figures: a few KB.
    constexpr uint64_t kMaxSummaryBytes = 1 << 20;
    const std::string text = read_bounded_file(*found, kMaxSummaryBytes, "Vela's summary", "a summary is one row of figures");
    const CsvTable table = read_csv_table("summary", text, 0, *found);
    const TableView view(table, *found, 0, {"system_config", "memory_mode"});
    if (view.size() != 1)
        throw Error({*found, std::nullopt, "summary"}, fmt::format("{} rows; Vela writes one", view.size()));
    return VelaCompiledSystem{view.text(0, "system_config"), view.text(0, "memory_mode"), *found};
}

std::optional<std::vector<size_t>> align_with_vela(const std::vector<KernelOpSummary>& ops,
                                                   const std::vector<VelaLayer>& layers) {
    const size_t rows = layers.size(), n = ops.size();
    if ((rows + 1) * (n + 1) > kMaxAlignmentCells) return std::nullopt;
    // cost[i][j]: the least cost of giving rows [0, i) ops [0, j); taken[i][j]: how many ops row
    // i - 1 took on that path. A row with cycles taking m ops costs (m - 1)^2, one without m^2:
    // ops that could go to several rows (elementwise ops count no MACs) spread one a row, as
    // Vela's queue places a U85 chain's.
    constexpr int64_t kUnreached = std::numeric_limits<int64_t>::max();
    const size_t width = n + 1;
    std::vector<int64_t> cost((rows + 1) * width, kUnreached);
    std::vector<uint8_t> taken((rows + 1) * width, 0);
    cost[0] = 0;
    for (size_t i = 0; i < rows; ++i) {
        const VelaLayer& layer = layers[i];
        const bool has_cycles = layer.op_cycles > 0;
        for (size_t j = 0; j <= n; ++j) {
            if (cost[i * width + j] == kUnreached) continue;
            int64_t macs = 0;
            for (size_t m = 0; m <= kMaxOpsPerRow && j + m <= n; ++m) {
                if (m > 0) {
                    if (!lowers_to(layer, ops[j + m - 1].description)) break;
                    macs += ops[j + m - 1].macs;
                    if (macs > layer.macs) break;
                }
                if (macs != layer.macs || (m == 0 && has_cycles)) continue;
                const int64_t c = cost[i * width + j] + (has_cycles ? int64_t((m - 1) * (m - 1)) : int64_t(m * m));
                int64_t& to = cost[(i + 1) * width + j + m];
                if (c < to) {
                    to = c;
                    taken[(i + 1) * width + j + m] = static_cast<uint8_t>(m);
                }
            }
        }
    }
    if (cost[rows * width + n] == kUnreached) return std::nullopt;
    std::vector<size_t> row_of(n);
    size_t j = n;
    for (size_t i = rows; i > 0; --i) {
        const size_t m = taken[i * width + j];
        for (size_t k = j - m; k < j; ++k) row_of[k] = i - 1;
        j -= m;
    }
    return row_of;
}

}  // namespace ethosu
