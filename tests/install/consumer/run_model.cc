// Uses the installed C++ API (ethosu_emu/model_runner.hpp): loads a model from its file and from
// its bytes, runs it on the given inputs and checks every output byte for byte against the golden
// files, and that both loads give the same cycles; then that errors carry the place and reason.
// Usage: run_model MODEL in=FILE... out=FILE...
#include <ethosu_emu/model_runner.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

static std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: run_model MODEL in=FILE... out=FILE...\n");
        return 2;
    }
    std::vector<std::vector<uint8_t>> inputs, goldens;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        (arg.rfind("in=", 0) == 0 ? inputs : goldens).push_back(read_file(arg.substr(arg.find('=') + 1)));
    }
    try {
        const auto from_file = ethosu_emu::ModelRunner::load_file(argv[1]);
        const auto from_bytes = ethosu_emu::ModelRunner::load_bytes(read_file(argv[1]), "in-memory model",
                                                                    {.npu = from_file.npu()});
        const ethosu_emu::RunResult result = from_file.run(inputs);
        const ethosu_emu::RunResult again = from_bytes.run(inputs);
        if (result.outputs.size() != goldens.size()) {
            std::fprintf(stderr, "%zu outputs, %zu golden files\n", result.outputs.size(), goldens.size());
            return 1;
        }
        for (size_t k = 0; k < goldens.size(); ++k) {
            if (result.outputs[k] != goldens[k] || again.outputs[k] != goldens[k]) {
                std::fprintf(stderr, "output %zu differs from its golden\n", k);
                return 1;
            }
        }
        uint64_t npu_active = 0;
        for (const auto& p : result.pmu)
            if (p.event == "NPU_ACTIVE") npu_active = p.count;
        if (result.npu_cycles <= 0 || again.npu_cycles != result.npu_cycles || result.ops.empty() ||
            result.pmu_cycle_counter != static_cast<uint64_t>(result.npu_cycles) || npu_active == 0) {
            std::fprintf(stderr, "figures: %lld cycles (%lld from bytes), %zu ops, PMU cycle counter %llu\n",
                         static_cast<long long>(result.npu_cycles), static_cast<long long>(again.npu_cycles),
                         result.ops.size(), static_cast<unsigned long long>(result.pmu_cycle_counter));
            return 1;
        }
        std::printf("%s on %s: %zu outputs as their goldens, %lld NPU cycles, %zu ops, %lld MACs (%s, %s)\n", argv[1],
                    from_file.npu().c_str(), result.outputs.size(), static_cast<long long>(result.npu_cycles),
                    result.ops.size(), static_cast<long long>(result.macs), result.system_config.c_str(),
                    result.memory_mode.c_str());
    } catch (const ethosu_emu::Error& e) {
        std::fprintf(stderr, "ethosu_emu::Error: %s\n", e.what());
        return 1;
    }
    try {
        ethosu_emu::ModelRunner::load_file("/nonexistent/model.tflite");
        std::fprintf(stderr, "a missing model loaded\n");
        return 1;
    } catch (const ethosu_emu::Error& e) {
        if (e.kind() != "io" || e.file() != "/nonexistent/model.tflite" || e.reason().empty()) {
            std::fprintf(stderr, "missing model: kind %s, file %s\n", e.kind().c_str(), e.file().c_str());
            return 1;
        }
        std::printf("a missing model: %s\n", e.what());
    }
    return 0;
}
