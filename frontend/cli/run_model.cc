#include "frontend/cli/run_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "emulator/engine/executor.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// Regions sit 256 MiB apart in the NPU's address space (inside U55's 32-bit range).
constexpr uint64_t kRegionSpacing = uint64_t{1} << 28;

}  // namespace

RunResult run_model(const LoadedModel& model, std::vector<std::vector<uint8_t>> inputs, const RunOptions& options) {
    if (model.invocations.size() != 1) {
        throw Error({model.path, std::nullopt, "ethos-u"},
                    fmt::format("run needs a model whose graph is one NPU operator; this one has {} NPU and {} CPU "
                                "operators",
                                model.invocations.size(), model.cpu_operators));
    }
    if (model.cpu_operators) {
        throw Error({model.path, std::nullopt, "operators"},
                    fmt::format("{} operators run on the CPU; run executes NPU work only", model.cpu_operators));
    }
    if (inputs.size() > model.inputs.size()) {
        throw Error({model.path, std::nullopt, "--input"},
                    fmt::format("{} input files for {} model inputs", inputs.size(), model.inputs.size()));
    }
    const NpuInvocation& inv = model.invocations[0];
    RunResult result;
    result.memory = make_memory_system(model.config, options.system);
    std::vector<std::pair<int, std::string>> roles;
    for (const auto& r : inv.regions) roles.emplace_back(r.index, r.role);
    const auto memories = region_memories(result.memory, roles);
    auto time_it = [&] {
        if (options.timing) result.timing.push_back(TimingModel(model.config, result.memory, memories).run(result.streams.back()));
    };
    if (!options.execute) {
        // Without data only unconditional branches can be followed.
        auto no_data = [&](const DecodedOp& branch) -> bool {
            throw Error({model.path, branch.offset, "NPU_OP_BRANCH.branch_cond"},
                        "an RF_TRUE branch depends on the data: a timing-only run cannot follow it");
        };
        result.streams.push_back(follow_stream(model.config, inv.stream.words, model.path, [](const DecodedOp&, std::span<const DecodedOp>) {}, no_data));
        time_it();
        return result;
    }

    MemoryMap map;
    AddressSpace space(map);
    for (const auto& r : inv.regions) {
        if (r.index < 0 || r.index >= AddressSpace::kRegions || r.size >= kRegionSpacing) {
            throw Error({model.path, std::nullopt, r.role}, fmt::format("region {} of {} bytes cannot be mapped", r.index,
                                                                        r.size));
        }
        const uint64_t base = kRegionSpacing * static_cast<uint64_t>(r.index + 1);
        const MemoryKind kind = memories[static_cast<size_t>(r.index)];
        if (!r.bytes.empty() && r.size <= r.bytes.size()) {
            // Constant data (the weights): read where the model holds it, as the NPU reads flash.
            map.map_read_only(base, r.bytes, r.role, kind, r.file_mapped);
        } else {
            auto bytes = map.allocate(base, std::max<uint64_t>({r.size, r.bytes.size(), 16}), r.role, kind);
            if (!r.bytes.empty()) std::memcpy(bytes.data(), r.bytes.data(), r.bytes.size());
        }
        space.set_base(r.index, base);
    }
    auto tensor_bytes = [&](const TensorInfo& t, std::string_view what) {
        return space.write(t.region, t.offset, t.size_bytes, {&model.path, std::nullopt, t.name, what});
    };
    // Variable tensors start as TFLM's allocation leaves them: int8 ones hold their zero point,
    // the others zeros (as the zero-filled scratch already does).
    for (const auto& t : inv.inputs) {
        if (!t.is_variable || t.region < 0 || t.type != ElementType::Int8 || t.zero_point.empty()) continue;
        auto bytes = tensor_bytes(t, "variable tensor");
        std::fill(bytes.begin(), bytes.end(), static_cast<uint8_t>(t.zero_point[0]));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        // An input Vela planned no memory for (TRANSPOSE_CONV's output shape, folded into the
        // command stream) is one the command stream cannot address.
        if (inputs[i].empty() || model.inputs[i].region < 0) continue;
        auto dst = tensor_bytes(model.inputs[i], "input tensor");
        if (inputs[i].size() != dst.size()) {
            throw Error({model.path, std::nullopt, model.inputs[i].name},
                        fmt::format("input {} has {} bytes, the model expects {}", i, inputs[i].size(), dst.size()));
        }
        std::memcpy(dst.data(), inputs[i].data(), dst.size());
        std::vector<uint8_t>().swap(inputs[i]);
    }

    Executor executor(model.config, space, model.path, options.weight_cache);
    result.streams.push_back(executor.run(inv.stream.words));
    time_it();
    for (const auto& t : model.outputs) {
        const auto bytes = tensor_bytes(t, "output tensor");
        result.outputs.emplace_back(bytes.begin(), bytes.end());
    }
    return result;
}

}  // namespace ethosu
