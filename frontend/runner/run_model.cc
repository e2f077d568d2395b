#include "frontend/runner/run_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <type_traits>

#include "emulator/isa/error.h"

namespace ethosu {
namespace {

// Regions sit 256 MiB apart in the NPU's address space (inside U55's 32-bit range).
constexpr uint64_t kRegionSpacing = uint64_t{1} << 28;

// One NPU operator and nothing on the CPU, with at most one input per model input.
const NpuInvocation& runnable_invocation(const LoadedModel& model, size_t inputs) {
    if (model.invocations.size() != 1) {
        throw Error({model.path, std::nullopt, "ethos-u"},
                    fmt::format("run needs a model whose graph is one NPU operator; this one has {} NPU and {} CPU "
                                "operators",
                                model.invocations.size(), model.cpu_operators),
                    ErrorKind::Unsupported);
    }
    if (model.cpu_operators) {
        throw Error({model.path, std::nullopt, "operators"},
                    fmt::format("{} operators run on the CPU; run executes NPU work only", model.cpu_operators),
                    ErrorKind::Unsupported);
    }
    if (inputs > model.inputs.size()) {
        throw Error({model.path, std::nullopt, "--input"},
                    fmt::format("{} input files for {} model inputs", inputs, model.inputs.size()));
    }
    return model.invocations[0];
}

std::array<MemoryKind, AddressSpace::kRegions> invocation_memories(const MemorySystem& memory, const NpuInvocation& inv) {
    std::vector<std::pair<int, RegionRole>> roles;
    for (const auto& r : inv.regions) roles.emplace_back(r.index, r.role);
    return region_memories(memory, roles);
}

// Maps the invocation's regions into `map` and points `space`'s base pointers at them. Constant
// data stays where the model holds it; the other regions get memory of their own, whose spans
// and initial contents (empty: zeros) are returned.
std::vector<std::pair<std::span<uint8_t>, std::span<const uint8_t>>> map_regions(
    const LoadedModel& model, const NpuInvocation& inv, MemoryMap& map, AddressSpace& space) {
    std::vector<std::pair<std::span<uint8_t>, std::span<const uint8_t>>> writable;
    for (const auto& r : inv.regions) {
        const std::string role(region_role_name(r.role));
        if (r.index < 0 || r.index >= AddressSpace::kRegions || r.size >= kRegionSpacing) {
            throw Error(definition_site(model, r.where, role),
                        fmt::format("region {} ({}) of {} bytes cannot be mapped", r.index, role, r.size));
        }
        const uint64_t base = kRegionSpacing * static_cast<uint64_t>(r.index + 1);
        if (!r.bytes.empty() && r.size <= r.bytes.size()) {
            // Constant data (the weights): read where the model holds it, as the NPU reads flash.
            map.map_read_only(base, r.bytes, role, r.file_mapped);
        } else {
            const uint64_t size = std::max<uint64_t>({r.size, r.bytes.size(), 16});
            std::span<uint8_t> bytes;
            try {
                bytes = map.allocate(base, size, role);
            } catch (const std::bad_alloc&) {
                throw Error(definition_site(model, r.where, role),
                            fmt::format("cannot allocate the {} bytes of region {} ({})", size, r.index, role));
            }
            if (!r.bytes.empty()) std::memcpy(bytes.data(), r.bytes.data(), r.bytes.size());
            writable.emplace_back(bytes, r.bytes);
        }
        space.set_base(r.index, base);
    }
    return writable;
}

// The host copies of a run's input and output tensors (what place_inputs and read_outputs move),
// checked before any is made: each, and all of them together, within max_allocation_bytes. Their
// sizes come from the model file alone (a 2.4 KB file declared a 200 MB output and the run copied
// it out, 200 MB of memory), so they are bounded like the buffers the engine sizes from registers;
// timing-only runs check them too, and refuse the same models.
void check_host_tensors(const LoadedModel& model, const std::vector<TensorInfo>& inputs,
                        const std::vector<TensorInfo>& outputs, const WorkLimits& limits) {
    uint64_t total = 0;
    for (const auto* tensors : {&inputs, &outputs}) {
        for (const TensorInfo& t : *tensors) {
            if (tensors == &inputs && t.region < 0) continue;  // not placed: the stream cannot address it
            if (const std::string refusal = host_allocation_refusal(t, limits); !refusal.empty())
                throw Error(definition_site(model, t.where, t.name), refusal, ErrorKind::LimitExceeded);
            total += t.size_bytes;  // below twice the limit: no overflow
            if (total > limits.max_allocation_bytes) {
                throw Error(definition_site(model, t.where, t.name),
                            fmt::format("with '{}' the input and output tensors need {} bytes on the host, above the "
                                        "limit of {} (raise it with --max-allocation)",
                                        t.name, total, limits.max_allocation_bytes),
                            ErrorKind::LimitExceeded);
            }
        }
    }
}

// The host's access to a tensor: errors point at its definition in the model file.
AccessContext host_access(const LoadedModel& model, const TensorInfo& t, std::string_view what) {
    if (t.where.file.empty()) return {&model.path, std::nullopt, t.name, what, OffsetKind::File};
    return {&t.where.file, t.where.offset, t.where.field, what, OffsetKind::File};
}

// Places the inputs (and the variable tensors' initial state) in the model's memory: inputs[i]
// is the bytes of tensors[i].
template <typename Inputs>
void place_inputs(const LoadedModel& model, const NpuInvocation& inv, const std::vector<TensorInfo>& tensors,
                  const AddressSpace& space, Inputs& inputs) {
    auto tensor_bytes = [&](const TensorInfo& t, std::string_view what) {
        return space.write(t.region, t.offset, t.size_bytes, host_access(model, t, what));
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
        if (inputs[i].empty() || tensors[i].region < 0) continue;
        auto dst = tensor_bytes(tensors[i], "input tensor");
        if (inputs[i].size() != dst.size()) {
            throw Error(definition_site(model, tensors[i].where, tensors[i].name), fmt::format("input {} ({}) has {} bytes, the model expects {}", i,
                                                      tensors[i].name, inputs[i].size(), dst.size()));
        }
        std::memcpy(dst.data(), inputs[i].data(), dst.size());
        if constexpr (!std::is_const_v<Inputs>) std::vector<uint8_t>().swap(inputs[i]);
    }
}

// Copies the tensors (the model's outputs) into `outputs`, reusing its buffers.
void read_outputs(const LoadedModel& model, const std::vector<TensorInfo>& tensors, const AddressSpace& space,
                  std::vector<std::vector<uint8_t>>& outputs) {
    outputs.resize(tensors.size());
    for (size_t k = 0; k < tensors.size(); ++k) {
        const TensorInfo& t = tensors[k];
        const auto bytes = space.read(t.region, t.offset, t.size_bytes, host_access(model, t, "output tensor"));
        outputs[k].assign(bytes.begin(), bytes.end());
    }
}

}  // namespace

std::string host_allocation_refusal(const TensorInfo& info, const WorkLimits& limits) {
    if (info.size_bytes <= limits.max_allocation_bytes) return {};
    return fmt::format("'{}' needs {} bytes on the host, above the limit of {} per buffer (raise it with "
                       "--max-allocation)",
                       info.name, info.size_bytes, limits.max_allocation_bytes);
}

SystemChoice choose_system(const LoadedModel& model, const SystemSelection& user) {
    SystemChoice choice{.selection = user, .followed = {}, .not_followed = {}};
    const CompiledFor& compiled = model.compiled_for;
    const auto follow = [&](std::string SystemSelection::*part, const std::string& recorded, std::string_view option) {
        if (!(user.*part).empty() || recorded.empty()) return;
        SystemSelection trial = choice.selection;
        trial.*part = recorded;
        try {
            make_memory_system(model.config, trial);  // the one judge of what a run may take
        } catch (const Error& e) {
            choice.not_followed.push_back(
                fmt::format("{} records {} {}, which this run cannot take ({}); it uses Vela's default for {} instead "
                            "(choose with {}, or give the section with --config FILE)",
                            compiled.source, option, recorded, e.what(), model.config.name, option));
            return;
        }
        choice.selection = trial;
        choice.followed.push_back(fmt::format("{} {}", option, recorded));
    };
    follow(&SystemSelection::system_config, compiled.system_config, "--system-config");
    follow(&SystemSelection::memory_mode, compiled.memory_mode, "--memory-mode");
    return choice;
}

MemorySystem model_memory_system(const LoadedModel& model, const SystemSelection& system) {
    return make_memory_system(model.config, choose_system(model, system).selection);
}

MemorySystem run_memory_system(const LoadedModel& model, const RunOptions& options) {
    return options.memory ? *options.memory : model_memory_system(model, options.system);
}

RunResult run_model(const LoadedModel& model, std::vector<std::vector<uint8_t>> inputs, const RunOptions& options) {
    const NpuInvocation& inv = runnable_invocation(model, inputs.size());
    RunResult result;
    result.memory = run_memory_system(model, options);
    result.outputs = run_invocation(model, inv, model.inputs, std::move(inputs), model.outputs, options, result);
    return result;
}

std::vector<std::vector<uint8_t>> run_invocation(const LoadedModel& model, const NpuInvocation& inv,
                                                 const std::vector<TensorInfo>& input_tensors,
                                                 std::vector<std::vector<uint8_t>> inputs,
                                                 const std::vector<TensorInfo>& output_tensors,
                                                 const RunOptions& options, RunResult& result) {
    check_host_tensors(model, input_tensors, output_tensors, options.pipeline.limits);
    const TimedMemory timed{result.memory, invocation_memories(result.memory, inv)};
    MemoryMap map;
    AddressSpace space(map);
    if (options.pipeline.execute) {
        map_regions(model, inv, map, space);
        place_inputs(model, inv, input_tensors, space, inputs);
    }
    StreamOutcome outcome = run_stream(model.config, inv.stream.words, model.path,
                                       options.pipeline.execute ? &space : nullptr, timed, options.pipeline);
    result.streams.push_back(std::move(outcome.stream));
    if (outcome.timing) result.timing.push_back(std::move(*outcome.timing));
    std::vector<std::vector<uint8_t>> outputs;
    if (options.pipeline.execute) read_outputs(model, output_tensors, space, outputs);
    return outputs;
}

ModelSession::ModelSession(const LoadedModel& model, const SystemSelection& system, bool timing)
    : model_(model), invocation_(runnable_invocation(model, 0)), memory_(model_memory_system(model, system)),
      timed_{memory_, invocation_memories(memory_, invocation_)}, space_(map_) {
    check_host_tensors(model_, model_.inputs, model_.outputs, WorkLimits{});  // the session runs with the default limits
    writable_ = map_regions(model_, invocation_, map_, space_);
    stream_ = std::make_unique<StreamSession>(model_.config, invocation_.stream.words, model_.path, space_, timed_, timing);
}

ModelSession::~ModelSession() = default;

void ModelSession::run(const std::vector<std::vector<uint8_t>>& inputs) {
    runnable_invocation(model_, inputs.size());
    // Every inference starts from the model's initial memory and a freshly reset NPU (StreamSession).
    for (const auto& [bytes, initial] : writable_) {
        if (!initial.empty()) std::memcpy(bytes.data(), initial.data(), initial.size());
        std::fill(bytes.begin() + static_cast<ptrdiff_t>(initial.size()), bytes.end(), uint8_t{0});
    }
    place_inputs(model_, invocation_, model_.inputs, space_, inputs);
    stream_->run();
    read_outputs(model_, model_.outputs, space_, outputs_);
}

}  // namespace ethosu
