#pragma once
// Runs for the trace tests: the bundled example, and corpus models with Vela's debug database
// (tests needing the corpus skip when ETHOSU_VECTORS_DIR is absent).

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/runner/run_model.h"
#include "frontend/loaders/model.h"
#include "traces/traced_run.h"

namespace ethosu::test {

std::filesystem::path vectors_dir();
bool have_vectors();
std::string read_text(const std::filesystem::path& path);

// A timing-only run and what a trace reads of it.
struct TimedRun {
    std::unique_ptr<LoadedModel> model;
    RunResult result;
    std::optional<DebugDatabase> debug_db;

    TracedRun traced() const {
        return {model->path, model->config, result.memory, result.streams, result.timing,
                debug_db ? &*debug_db : nullptr};
    }
};

TimedRun run_example();
// <vectors>/<name>/<config>/model_vela.tflite, with its model_debug.xml when with_debug_db.
TimedRun run_corpus_model(const std::string& name, const std::string& config, bool with_debug_db);

// Calls check(name, config, run with its debug database) for every corpus compilation of one NPU
// graph without CPU operators on the given configurations; returns how many.
int for_each_runnable_compilation(
    const std::function<void(const std::string& name, const std::string& config, const TimedRun& run)>& check,
    const std::vector<std::string>& configs = {"ethos-u55-128", "ethos-u55-256", "ethos-u65-256"});

}  // namespace ethosu::test
