// The installed C++ API (ethosu_emu/model_runner.hpp) over the loaders and run_whole_model, with
// ethosu::Error turned into ethosu_emu::Error at the boundary.

#include "ethosu_emu/model_runner.hpp"

#include <fmt/format.h>

#include <mutex>
#include <utility>

#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/error.h"
#include "frontend/graph/graph_runner.h"
#include "frontend/loaders/model.h"
#include "frontend/loaders/model_bytes.h"
#include "frontend/runner/run_model.h"

namespace ethosu_emu {

Error::Error(const std::string& what, std::string file, std::optional<uint64_t> offset, std::string field,
             std::string reason, std::string kind)
    : std::runtime_error(what), file_(std::move(file)), offset_(offset), field_(std::move(field)),
      reason_(std::move(reason)), kind_(std::move(kind)) {}

namespace {

Error public_error(const ethosu::Error& e) {
    return Error(e.what(), e.where().file, e.where().offset, e.where().field, e.reason(),
                 std::string(ethosu::error_kind_name(e.kind())));
}

// Runs f, giving any ethosu::Error it throws as the public Error.
template <typename F>
auto translating_errors(F&& f) {
    try {
        return f();
    } catch (const ethosu::Error& e) {
        throw public_error(e);
    }
}

Tensor public_tensor(const ethosu::TensorInfo& t) {
    return {t.name, t.shape, std::string(ethosu::element_type_name(t.type)), t.size_bytes};
}

}  // namespace

struct ModelRunner::Impl {
    std::unique_ptr<ethosu::LoadedModel> model;
    ethosu::SystemSelection system;
    ethosu::DecodeOptions decode;
    std::string npu;
    std::vector<Tensor> inputs, outputs;
    // The decoded weights, kept between runs; they serve one run at a time.
    std::mutex mutex;
    ethosu::WeightCache weights;

    Impl(std::unique_ptr<ethosu::LoadedModel> loaded, const ModelOptions& options)
        : model(std::move(loaded)),
          system{options.system_config, options.memory_mode, options.config_files},
          decode{.lenient = options.lenient},
          npu(model->config.name) {
        // As the CLI: an operator the host cannot run, or an unknown system config, is refused
        // at load rather than at the first run.
        if (ethosu::runs_as_graph(*model)) ethosu::check_graph(*model);
        ethosu::model_memory_system(*model, system);
        for (const auto& t : model->inputs) inputs.push_back(public_tensor(t));
        for (const auto& t : model->outputs) outputs.push_back(public_tensor(t));
    }
};

namespace {

ethosu::LoadOptions load_options(const ModelOptions& options) {
    ethosu::LoadOptions load;
    if (!options.npu.empty()) load.npu = options.npu;
    return load;
}

}  // namespace

ModelRunner ModelRunner::load_file(const std::string& path, const ModelOptions& options) {
    return translating_errors([&] {
        return ModelRunner(std::make_unique<Impl>(ethosu::load_model(path, load_options(options)), options));
    });
}

ModelRunner ModelRunner::load_bytes(std::vector<uint8_t> bytes, const std::string& name, const ModelOptions& options) {
    return translating_errors([&] {
        auto owner = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
        const ethosu::FileBytes file(std::span<const uint8_t>(*owner), owner);
        return ModelRunner(std::make_unique<Impl>(ethosu::load_model_bytes(name, file, load_options(options)), options));
    });
}

ModelRunner::ModelRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ModelRunner::ModelRunner(ModelRunner&&) noexcept = default;
ModelRunner& ModelRunner::operator=(ModelRunner&&) noexcept = default;
ModelRunner::~ModelRunner() = default;

const std::string& ModelRunner::npu() const { return impl_->npu; }
const std::vector<Tensor>& ModelRunner::inputs() const { return impl_->inputs; }
const std::vector<Tensor>& ModelRunner::outputs() const { return impl_->outputs; }

RunResult ModelRunner::run(const std::vector<std::vector<uint8_t>>& inputs) const {
    return translating_errors([&] {
        const ethosu::LoadedModel& model = *impl_->model;
        if (inputs.size() > model.inputs.size())
            throw ethosu::Error({model.path, std::nullopt, "inputs"},
                                fmt::format("{} inputs given, the model has {}", inputs.size(), model.inputs.size()),
                                ethosu::ErrorKind::Usage);
        for (size_t i = 0; i < inputs.size(); ++i) {
            if (!inputs[i].empty() && inputs[i].size() != model.inputs[i].size_bytes)
                throw ethosu::Error({model.path, std::nullopt, fmt::format("input {}", i)},
                                    fmt::format("{} bytes given, the tensor holds {}", inputs[i].size(),
                                                model.inputs[i].size_bytes),
                                    ethosu::ErrorKind::Usage);
        }
        ethosu::RunResult run;
        {
            std::lock_guard lock(impl_->mutex);
            run = ethosu::run_whole_model(model, inputs,
                                          {.system = impl_->system,
                                           .pipeline = {.decode = impl_->decode, .weight_cache = &impl_->weights}});
        }
        RunResult result;
        result.outputs = std::move(run.outputs);
        result.system_config = run.memory.system.name;
        result.memory_mode = run.memory.mode.name;
        for (size_t s = 0; s < run.timing.size(); ++s) {
            result.npu_cycles += run.timing[s].totals.cycles;
            result.macs += run.timing[s].totals.macs;
            const auto& decoded = run.streams[s].ops;
            const auto& timed = run.timing[s].ops;
            for (size_t i = 0; i < timed.size(); ++i) {
                const ethosu::OpTiming& t = timed[i];
                const bool kernel = t.unit == ethosu::Unit::Kernel;
                result.ops.push_back({s, i, decoded[i].offset, std::string(ethosu::op_kind_name(decoded[i].kind)),
                                      t.start, t.end, kernel ? t.cost.compute_cycles : 0, kernel ? t.cost.macs : 0});
            }
        }
        const auto generation = model.config.generation;
        const std::vector<uint32_t> events = ethosu::pmu_modelled_events(generation);
        const ethosu::PmuReading reading = ethosu::read_pmu(run.memory, run.timing, events);
        result.pmu_cycle_counter = reading.cycle_counter;
        for (size_t i = 0; i < events.size(); ++i)
            result.pmu.push_back({std::string(ethosu::pmu_event_name(generation, events[i])), reading.counters[i]});
        return result;
    });
}

}  // namespace ethosu_emu
