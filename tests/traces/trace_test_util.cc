#include "tests/traces/trace_test_util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "frontend/cli/example_model.h"

namespace ethosu::test {

std::filesystem::path vectors_dir() { return ETHOSU_VECTORS_DIR; }

bool have_vectors() { return std::filesystem::is_directory(vectors_dir()); }

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TimedRun run_example() {
    TimedRun run;
    run.model = load_executorch_bin("example.bin", build_example_model(), {});
    run.result = run_model(*run.model, {}, {.pipeline = {.execute = false}});
    return run;
}

TimedRun run_corpus_model(const std::string& name, const std::string& config, bool with_debug_db) {
    const auto dir = vectors_dir() / name / config;
    TimedRun run;
    run.model = load_model((dir / "model_vela.tflite").string(), {});
    run.result = run_model(*run.model, {}, {.pipeline = {.execute = false}});
    if (with_debug_db) {
        const uint64_t stream_bytes = run.model->invocations.at(0).stream.words.size() * 4;
        run.debug_db =
            DebugDatabase::load((dir / "model_debug.xml").string(), DebugDatabase::max_file_bytes(stream_bytes));
    }
    return run;
}

int for_each_runnable_compilation(
    const std::function<void(const std::string& name, const std::string& config, const TimedRun& run)>& check,
    const std::vector<std::string>& configs) {
    int compilations = 0;
    for (const auto& model_dir : std::filesystem::directory_iterator(vectors_dir())) {
        for (const std::string& config : configs) {
            const auto dir = model_dir.path() / config;
            if (!std::filesystem::exists(dir / "model_debug.xml")) continue;
            const auto model = load_model((dir / "model_vela.tflite").string(), {});
            if (model->invocations.size() != 1 || model->cpu_operators) continue;
            const std::string name = model_dir.path().filename().string();
            SCOPED_TRACE(name + " " + config);
            ++compilations;
            check(name, config, run_corpus_model(name, config, true));
        }
    }
    return compilations;
}

}  // namespace ethosu::test
