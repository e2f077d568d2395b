#include "tests/fuzz/run_harness.h"

#include <tbb/global_control.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "emulator/isa/error.h"
#include "frontend/cli/example_model.h"
#include "frontend/runner/run_model.h"

namespace ethosu::fuzz {
namespace {

// One thread per fuzz process: a campaign runs one target per core, and TBB's workers would
// spin on the other target's core. The thread count changes neither outputs nor cycles
// (tests/engine/test_threads.cc).
const tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);

const LoadedModel& example_model() {
    static const auto model = load_executorch_bin("example.bin", build_example_model(), {});
    return *model;
}

}  // namespace

RunOptions fuzz_run_options(bool execute) {
    return {.pipeline = {.execute = execute,
                         .limits = {.max_op_work = uint64_t{1} << 16,
                                    .max_run_work = uint64_t{1} << 18,
                                    .max_commands = uint64_t{1} << 12,
                                    .max_allocation_bytes = uint64_t{1} << 20}}};
}

void run_example_with_stream(const uint8_t* data, size_t size) {
    if (size < 1) return;
    LoadedModel model = example_model();
    const auto configs = all_npu_configs();
    model.config = configs[data[0] % configs.size()];
    auto& words = model.invocations.at(0).stream.words;
    words.assign((size - 1) / 4, 0);
    if (!words.empty()) std::memcpy(words.data(), data + 1, words.size() * 4);
    try {
        run_model(model, {}, fuzz_run_options(true));
    } catch (const Error&) {
    }
    try {
        run_model(model, {}, fuzz_run_options(false));
    } catch (const Error&) {
    }
}

std::vector<uint8_t> example_input() {
    const LoadedModel& model = example_model();
    const auto configs = all_npu_configs();
    uint8_t config = 0;
    while (configs[config].name != model.config.name) ++config;
    const auto& words = model.invocations.at(0).stream.words;
    std::vector<uint8_t> out(1 + words.size() * 4, config);
    std::memcpy(out.data() + 1, words.data(), words.size() * 4);
    return out;
}

void seed_empty_corpus(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (argv[i][0] == '-') continue;
        const std::filesystem::path dir(argv[i]);
        std::error_code ec;
        if (!std::filesystem::is_directory(dir, ec) || !std::filesystem::is_empty(dir, ec)) return;
        const auto bytes = example_input();
        std::ofstream((dir / "example_stream").string(), std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        return;
    }
}

}  // namespace ethosu::fuzz
