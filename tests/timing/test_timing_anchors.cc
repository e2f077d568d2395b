// The timing model against the FVP anchors: public Vela streams with the NPU ACTIVE cycles and AXI
// beats Arm's Corstone-300 FVP printed for them, in two sets (each folder's README):
// - ../shared/anchors: models compiled by the Vela version whose streams the FVP measured in Arm's
//   evaluation kit (U55-128), one folder per Vela version;
// - ../shared/anchors/himax_u55_64: Himax's streams for U55-64 with the FVP's printout beside them.
// All run on the system the FVP modelled, Ethos_U55_High_End_Corstone300_FVP (its flash behind the
// timing adapter the kit programs), Shared_Sram; scripts/timing_report.py --anchors shows the
// figures beside Vela's configuration too.
// NPU ACTIVE must be within 5% of the FVP and the median of a set's errors within 2%, AXI beats
// within 3% per port, except the figures listed in kKnownGaps with the error they have today:
// those fail when they move (worse, or better without the table following) and when they come
// within bounds, so the table only ever lists real gaps.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "emulator/engine/timing/pmu.h"
#include "frontend/graph/graph_runner.h"
#include "frontend/runner/run_model.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

// The bounds: the FVP's own claim is +-10% against the hardware, so a figure within a few percent
// of it is as close as the anchors can tell.
constexpr double kActiveTolerance = 0.05;
constexpr double kMedianActiveTolerance = 0.02;
constexpr double kBeatTolerance = 0.03;
// A known gap may move by this much either way before its entry must be revised: the rounding of
// its recorded error, not room to get worse.
constexpr double kGapSlack = 0.002;

enum class Figure { NpuActive, Axi0ReadBeats, Axi0WriteBeats, Axi1ReadBeats };
constexpr std::array<const char*, 4> kFigureNames = {"NPU ACTIVE", "AXI0 read beats", "AXI0 write beats",
                                                     "AXI1 read beats"};
// anchors.csv's columns, in Figure order (both sets name them alike).
constexpr std::array<const char*, 4> kFigureColumns = {"published_fvp_npu_active", "published_axi0_rd_beats",
                                                       "published_axi0_wr_beats", "published_axi1_rd_beats"};

double tolerance(Figure f) { return f == Figure::NpuActive ? kActiveTolerance : kBeatTolerance; }

// Figures not yet within bounds, with their error today (ours / FVP - 1); a set's median NPU ACTIVE
// error (by size) is listed under the set's folder name.
struct KnownGap {
    const char* model;
    Figure figure;
    double error;
};
constexpr KnownGap kKnownGaps[] = {
    {.model = "yolov8n_od192", .figure = Figure::NpuActive, .error = 0.060},
    {.model = "anchors", .figure = Figure::NpuActive, .error = 0.033},
    {.model = "himax_u55_64", .figure = Figure::NpuActive, .error = 0.032},
};

std::optional<double> known_gap(const std::string& model, Figure figure) {
    for (const KnownGap& g : kKnownGaps)
        if (g.model == model && g.figure == figure) return g.error;
    return std::nullopt;
}

// Checks one figure against its bound, or against its known gap.
void check_error(const std::string& name, Figure figure, double error, double bound, const std::string& what) {
    std::cout << "[ anchor ] " << what << "\n";
    if (const auto gap = known_gap(name, figure)) {
        EXPECT_GT(std::fabs(error), bound) << what << ": now within bounds, remove it from kKnownGaps";
        EXPECT_NEAR(error, *gap, kGapSlack) << what << ": the known gap was " << fmt::format("{:+.1f}%", 100 * *gap)
                                            << "; if it is better, update kKnownGaps to the new error";
    } else {
        EXPECT_LE(std::fabs(error), bound) << what;
    }
}

// One set of anchors: a folder with anchors.csv, the NPU its rows run on unless a row names one
// (an `npu` column), and where a row's stream sits: <name>/vela-<vela_version>/ when the CSV
// records the Vela version, else <name>/.
struct AnchorSet {
    fs::path dir;
    const char* default_npu;
};

struct Anchor {
    std::string name, npu;
    fs::path model_file{};
    std::array<int64_t, 4> published{};
};

std::vector<Anchor> read_anchors(const AnchorSet& set) {
    const fs::path csv = set.dir / "anchors.csv";
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    std::vector<std::string> header;
    for (std::stringstream names(line); std::getline(names, line, ',');) header.push_back(line);
    auto column = [&](std::string_view name) -> std::optional<size_t> {
        for (size_t i = 0; i < header.size(); ++i)
            if (header[i] == name) return i;
        return std::nullopt;
    };
    std::vector<Anchor> anchors;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        for (std::stringstream ss(line); std::getline(ss, line, ',');) cells.push_back(line);
        auto cell = [&](std::string_view name) -> const std::string& {
            const auto i = column(name);
            if (!i || *i >= cells.size()) throw std::runtime_error(fmt::format("{}: no column {}", csv.string(), name));
            return cells[*i];
        };
        Anchor a{.name = cell("name"), .npu = column("npu") ? cell("npu") : set.default_npu};
        a.model_file = column("vela_version") ? set.dir / a.name / ("vela-" + cell("vela_version")) / "model_vela.tflite"
                                              : set.dir / a.name / "model_vela.tflite";
        for (size_t f = 0; f < kFigureColumns.size(); ++f) a.published[f] = std::stoll(cell(kFigureColumns[f]));
        anchors.push_back(std::move(a));
    }
    return anchors;
}

struct Measured {
    std::array<int64_t, 4> figures{};
    std::vector<uint64_t> pmu_beats;  // AXI0 read, AXI0 write, AXI1 read, as the PMU counts them
};

Measured measure(const Anchor& a) {
    const auto model = load_model(a.model_file.string(), {.npu = a.npu});
    // run_whole_model: a stream of several NPU operators (CPU operators between them) is timed whole.
    const RunResult r = run_whole_model(*model, {}, {.system = {"Ethos_U55_High_End_Corstone300_FVP", "Shared_Sram", {}}, .pipeline = {.execute = false}});
    Measured m;
    PortBeats beats;
    for (const TimingResult& t : r.timing) {
        m.figures[static_cast<size_t>(Figure::NpuActive)] += t.totals.npu_active;
        beats += t.totals.beats;
    }
    m.figures[static_cast<size_t>(Figure::Axi0ReadBeats)] = beats.read[0];
    m.figures[static_cast<size_t>(Figure::Axi0WriteBeats)] = beats.write[0];
    m.figures[static_cast<size_t>(Figure::Axi1ReadBeats)] = beats.read[1];
    const Generation g = model->config.generation;
    const std::vector<uint32_t> events = {*pmu_event_id(g, "AXI0_RD_DATA_BEAT_RECEIVED"),
                                          *pmu_event_id(g, "AXI0_WR_DATA_BEAT_WRITTEN"),
                                          *pmu_event_id(g, "AXI1_RD_DATA_BEAT_RECEIVED")};
    m.pmu_beats = read_pmu(r.memory, r.timing, events).counters;
    return m;
}

fs::path anchors_dir() { return ETHOSU_ANCHORS_DIR; }

const std::array<AnchorSet, 2>& anchor_sets() {
    static const std::array<AnchorSet, 2> sets = {AnchorSet{anchors_dir(), "ethos-u55-128"},
                                                  AnchorSet{anchors_dir() / "himax_u55_64", "ethos-u55-64"}};
    return sets;
}

class TimingAnchors : public ::testing::TestWithParam<size_t> {
protected:
    const AnchorSet& set() const { return anchor_sets()[GetParam()]; }
    void SetUp() override {
        if (!fs::exists(set().dir / "anchors.csv"))
            GTEST_SKIP() << "FVP anchors not found at " << set().dir << " (anchors.csv missing)";
    }
};

TEST_P(TimingAnchors, NpuActiveAndAxiBeatsMatchTheFvp) {
    const std::vector<Anchor> anchors = read_anchors(set());
    ASSERT_FALSE(anchors.empty());
    std::vector<double> active_errors;
    for (const Anchor& a : anchors) {
        ASSERT_TRUE(fs::exists(a.model_file)) << a.model_file;
        const Measured m = measure(a);
        for (size_t f = 0; f < kFigureNames.size(); ++f) {
            const auto figure = static_cast<Figure>(f);
            const double error = double(m.figures[f]) / double(a.published[f]) - 1.0;
            if (figure == Figure::NpuActive) active_errors.push_back(error);
            check_error(a.name, figure, error, tolerance(figure),
                        fmt::format("{} {} on {}: {} vs FVP {} ({:+.1f}%)", a.name, kFigureNames[f], a.npu,
                                    m.figures[f], a.published[f], 100 * error));
        }
    }
    // The median of the set's NPU ACTIVE errors by size.
    std::vector<double> sizes;
    for (double e : active_errors) sizes.push_back(std::fabs(e));
    std::sort(sizes.begin(), sizes.end());
    const size_t n = sizes.size();
    const double median = n % 2 ? sizes[n / 2] : (sizes[n / 2 - 1] + sizes[n / 2]) / 2;
    const std::string set_name = set().dir.filename().string();
    check_error(set_name, Figure::NpuActive, median, kMedianActiveTolerance,
                fmt::format("{}: median NPU ACTIVE error {:.1f}%", set_name, 100 * median));
}

// The PMU's beat counters and the run's totals (run --json's figures) count the same beats.
TEST_P(TimingAnchors, PmuBeatsEqualTheRunTotals) {
    for (const Anchor& a : read_anchors(set())) {
        const Measured m = measure(a);
        const std::vector<uint64_t> totals = {uint64_t(m.figures[1]), uint64_t(m.figures[2]), uint64_t(m.figures[3])};
        EXPECT_EQ(m.pmu_beats, totals) << a.name;
    }
}

INSTANTIATE_TEST_SUITE_P(AnchorSets, TimingAnchors, ::testing::Values(size_t{0}, size_t{1}),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                             return info.param == 0 ? std::string("EvaluationKitU55_128") : std::string("HimaxU55_64");
                         });

}  // namespace
}  // namespace ethosu
