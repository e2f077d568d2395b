// Whole networks of the corpus on ethos-u55-128: inferences of a ModelSession (functional
// execution with timing; weights decoded once, nothing allocated per inference), one fresh
// run_model per iteration (what one `ethosu-emu run` does), and timing-only runs, each reporting
// simulated NPU cycles per wall second and peak RSS.

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/runner/run_model.h"

namespace fs = std::filesystem;

namespace ethosu {
namespace {

constexpr const char* kConfig = "ethos-u55-128";

std::vector<uint8_t> read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Restarts the peak-RSS count (Linux: "5" to clear_refs resets the high-water mark that
// getrusage reports), so each benchmark reports its own peak; elsewhere it stays the process's.
void reset_peak_rss() {
    std::ofstream("/proc/self/clear_refs") << "5";
}

// The peak since that reset: Linux's VmHWM. getrusage's ru_maxrss would also count the image the
// process had before exec (a Python script's, when one starts the benchmark), so it is the fallback.
double peak_rss_mb() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // in kB
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// How a benchmark runs its network: inferences of one session, afresh each run (what one
// `ethosu-emu run` does, and what its memory is), or timing only.
enum class NetworkRun { Session, Fresh, TimingOnly };

void run_network(benchmark::State& state, const std::string& name, NetworkRun how) {
    const fs::path dir = fs::path(ETHOSU_VECTORS_DIR) / name;
    const fs::path model_path = dir / kConfig / "model_vela.tflite";
    if (!fs::exists(model_path)) {
        state.SkipWithError(("test vectors not found: " + model_path.string()).c_str());
        return;
    }
    reset_peak_rss();
    std::unique_ptr<LoadedModel> model;
    try {
        model = load_model(model_path.string(), {});
    } catch (const Error& e) {
        state.SkipWithError(e.what());
        return;
    }
    std::vector<std::vector<uint8_t>> inputs;
    for (size_t k = 0; k < model->inputs.size(); ++k) {
        const fs::path input = dir / "golden" / ("seed1.in" + std::to_string(k) + ".bin");
        inputs.push_back(fs::exists(input) ? read_bytes(input) : std::vector<uint8_t>{});
    }
    RunOptions options;
    options.pipeline.execute = how != NetworkRun::TimingOnly;
    std::unique_ptr<ModelSession> session;
    int64_t cycles = 0;
    try {
        if (how == NetworkRun::Session) {
            session = std::make_unique<ModelSession>(*model);
            session->run(inputs);  // untimed: decodes the weights and the stream
        } else {
            run_model(*model, inputs, options);  // untimed: the file's pages in the page cache
        }
    } catch (const Error& e) {
        state.SkipWithError(e.what());
        return;
    }
    for (auto _ : state) {
        if (session) {
            session->run(inputs);
            cycles = session->timing()->totals.cycles;
            benchmark::DoNotOptimize(session->outputs().data());
        } else {
            const RunResult result = run_model(*model, inputs, options);
            cycles = result.timing.at(0).totals.cycles;
            benchmark::DoNotOptimize(result.outputs.data());
        }
    }
    state.counters["NPU_cycles/s"] =
        benchmark::Counter(static_cast<double>(cycles), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["NPU_cycles"] = static_cast<double>(cycles);
    state.counters["peak_RSS_MB"] = peak_rss_mb();
    // The memory target's yardstick: the model file plus the arena (scratch regions) it runs in.
    uint64_t arena = 0;
    for (const RegionImage& r : model->invocations.at(0).regions)
        if (r.bytes.empty()) arena += r.size;
    state.counters["file+arena_MB"] = static_cast<double>(fs::file_size(model_path) + arena) / (1024.0 * 1024.0);
}

void register_networks() {
    const char* networks[] = {"coral_tf2_mobilenet_v2_224_ptq", "person_detect",
                              "mlzoo_rnnoise_int8",             "mlperftiny_ad01_int8",
                              "mlperftiny_kws_dscnn_int8",      "mlperftiny_str_ww_int8",
                              "mlperftiny_vww_96_int8"};
    const std::pair<NetworkRun, const char*> runs[] = {
        {NetworkRun::Session, "full"}, {NetworkRun::Fresh, "full_fresh"}, {NetworkRun::TimingOnly, "timing_only"}};
    for (const char* name : networks) {
        for (const auto& run : runs) {
            const NetworkRun how = run.first;  // a plain variable: clang 14 cannot capture a structured binding
            const std::string label = std::string("BM_Network/") + name + "/" + run.second;
            benchmark::RegisterBenchmark(label.c_str(), [name = std::string(name), how](benchmark::State& s) {
                run_network(s, name, how);
            })->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
        }
    }
}

const bool registered = (register_networks(), true);

}  // namespace
}  // namespace ethosu
