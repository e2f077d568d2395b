#include "tests/traces/trace_test_util.h"

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
    run.result = run_model(*run.model, {}, {.execute = false, .system = {}});
    return run;
}

TimedRun run_corpus_model(const std::string& name, const std::string& config, bool with_debug_db) {
    const auto dir = vectors_dir() / name / config;
    TimedRun run;
    run.model = load_model((dir / "model_vela.tflite").string(), {});
    run.result = run_model(*run.model, {}, {.execute = false, .system = {}});
    if (with_debug_db) run.debug_db = DebugDatabase::load((dir / "model_debug.xml").string());
    return run;
}

}  // namespace ethosu::test
