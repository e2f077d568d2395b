// ethosu_emu: the emulator as a Python module, numpy arrays in and out. A model runs through
// run_whole_model as `ethosu-emu run` does, so its outputs and cycles are the CLI's.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/error.h"
#include "frontend/runner/run_model.h"
#include "frontend/graph/graph_runner.h"
#include "frontend/loaders/model.h"
#include "traces/chrome_trace.h"
#include "traces/per_layer_csv.h"
#include "traces/vela_per_layer.h"

namespace py = pybind11;

namespace ethosu {
namespace {

// What numpy calls a tensor's element type; a type the loaders do not name is raw bytes.
py::dtype element_dtype(ElementType type) {
    switch (type) {
        case ElementType::Int8: return py::dtype::of<int8_t>();
        case ElementType::UInt8: return py::dtype::of<uint8_t>();
        case ElementType::Int16: return py::dtype::of<int16_t>();
        case ElementType::UInt16: return py::dtype::of<uint16_t>();
        case ElementType::Int32: return py::dtype::of<int32_t>();
        case ElementType::Int64: return py::dtype::of<int64_t>();
        case ElementType::Float32: return py::dtype::of<float>();
        case ElementType::Bool: return py::dtype::of<bool>();
        case ElementType::Int4:  // packed two to a byte: numpy has no such type
        case ElementType::Other: break;
    }
    return py::dtype::of<uint8_t>();
}

// The numpy shape of a tensor's bytes. The loaders made its size from its shape
// (tensor_byte_size: no negative dimension, no overflow), so the shape holds exactly its bytes; a
// type they do not name has no element size and is a flat array of its (zero) bytes, as is int4's
// packed pairs.
std::vector<py::ssize_t> array_shape(const TensorInfo& t) {
    if (t.type == ElementType::Other || t.type == ElementType::Int4) return {static_cast<py::ssize_t>(t.size_bytes)};
    return {t.shape.begin(), t.shape.end()};
}

// A shape as Python prints a tuple: (9216,), (1, 96, 96, 1).
template <typename Dimension>
std::string shape_text(const std::vector<Dimension>& shape) {
    return fmt::format("({}{})", fmt::join(shape, ", "), shape.size() == 1 ? "," : "");
}

std::string str(py::handle object) { return py::str(object).cast<std::string>(); }

// The raw bytes run_whole_model takes: per model input a numpy array of the tensor's dtype and
// shape, or None for zeros. A single array stands for the inputs of a one-input model.
std::vector<std::vector<uint8_t>> input_bytes(const LoadedModel& model, const py::object& inputs) {
    if (inputs.is_none()) return {};
    const py::list given = py::isinstance<py::array>(inputs) ? py::list(py::make_tuple(inputs)) : py::list(inputs);
    if (given.size() != model.inputs.size()) {
        throw py::value_error(fmt::format("{}: {} inputs given, the model has {}", model.path, given.size(),
                                          model.inputs.size()));
    }
    std::vector<std::vector<uint8_t>> bytes(given.size());
    for (size_t i = 0; i < given.size(); ++i) {
        const py::handle item = given[i];
        if (item.is_none()) continue;
        const TensorInfo& t = model.inputs[i];
        const std::string which = fmt::format("{}: input {} ({})", model.path, i, t.name);
        if (!py::isinstance<py::array>(item))
            throw py::type_error(fmt::format("{}: a numpy array or None, not {}", which, str(item.get_type())));
        const auto array = py::reinterpret_borrow<py::array>(item);
        const py::dtype dtype = element_dtype(t.type);
        if (!array.dtype().equal(dtype)) {
            throw py::type_error(
                fmt::format("{}: dtype {} given, the model expects {}", which, str(array.dtype()), str(dtype)));
        }
        const std::vector<py::ssize_t> shape = array_shape(t);
        const std::vector<py::ssize_t> given_shape(array.shape(), array.shape() + array.ndim());
        if (!same_element_order(std::vector<int64_t>(given_shape.begin(), given_shape.end()),
                                std::vector<int64_t>(shape.begin(), shape.end()))) {
            throw py::value_error(fmt::format("{}: shape {} given, the model expects {}", which, shape_text(given_shape),
                                              shape_text(shape)));
        }
        const auto contiguous = py::array::ensure(array, py::array::c_style);
        const auto* data = static_cast<const uint8_t*>(contiguous.data());
        bytes[i].assign(data, data + contiguous.nbytes());
    }
    return bytes;
}

py::dict memory_traffic(const MemoryTraffic& traffic) {
    py::dict per_memory;
    for (int m = 0; m < kMemoryKinds; ++m) {
        if (traffic.read[m] == 0 && traffic.write[m] == 0) continue;
        py::dict bytes;
        bytes["read_bytes"] = traffic.read[m];
        bytes["write_bytes"] = traffic.write[m];
        per_memory[py::str(std::string(memory_kind_name(static_cast<MemoryKind>(m))))] = bytes;
    }
    return per_memory;
}

// One run's figures; the model stays loaded while a result refers to it (traces name its ops).
class Result {
public:
    Result(std::shared_ptr<const LoadedModel> model, RunResult run, bool timed)
        : model_(std::move(model)), run_(std::move(run)), timed_(timed) {
        for (size_t k = 0; k < run_.outputs.size(); ++k) {
            const TensorInfo& t = model_->outputs[k];
            // py::array copies the bytes: the array owns its data.
            outputs_.append(py::array(element_dtype(t.type), array_shape(t), run_.outputs[k].data()));
        }
    }

    const py::list& outputs() const { return outputs_; }

    std::optional<int64_t> npu_cycles() const {
        if (!timed_) return std::nullopt;
        return traced().total_cycles();
    }

    // Per op of every stream, in the CLI's `run --json` terms: start and end cycles on its stream's
    // timeline, compute cycles and MACs for kernel ops, bytes per memory.
    py::list ops() const {
        require_timing("per-op figures");
        py::list ops;
        for (size_t s = 0; s < run_.timing.size(); ++s) {
            const auto& decoded = run_.streams[s].ops;
            const auto& timed = run_.timing[s].ops;
            for (size_t i = 0; i < timed.size(); ++i) {
                const OpTiming& t = timed[i];
                py::dict op;
                op["stream"] = s;
                op["index"] = i;
                op["offset"] = decoded[i].offset;
                op["kind"] = std::string(op_kind_name(decoded[i].kind));
                op["start"] = t.start;
                op["end"] = t.end;
                op["cycles"] = t.end - t.start;
                if (t.unit == Unit::Kernel) {
                    op["compute_cycles"] = t.cost.compute_cycles;
                    op["macs"] = t.cost.macs;
                }
                if (t.unit != Unit::Command) op["traffic"] = memory_traffic(t.cost.traffic);
                ops.append(op);
            }
        }
        return ops;
    }

    // Bytes read and written per memory over the whole run.
    py::dict traffic() const {
        require_timing("traffic");
        MemoryTraffic sum;
        for (const auto& t : run_.timing) {
            for (int m = 0; m < kMemoryKinds; ++m) {
                sum.read[m] += t.totals.traffic.read[m];
                sum.write[m] += t.totals.traffic.write[m];
            }
        }
        return memory_traffic(sum);
    }

    int64_t macs() const {
        require_timing("MACs");
        int64_t macs = 0;
        for (const auto& t : run_.timing) macs += t.totals.macs;
        return macs;
    }

    // The PMU's cycle counter and every event the model counts, as the core driver would read them.
    py::dict pmu() const {
        require_timing("PMU counters");
        const std::vector<uint32_t> events = pmu_modelled_events(model_->config.generation);
        const PmuReading reading = read_pmu(run_.memory, run_.timing, events);
        py::dict counters;
        counters["cycle_counter"] = reading.cycle_counter;
        for (size_t i = 0; i < events.size(); ++i)
            counters[py::str(std::string(pmu_event_name(model_->config.generation, events[i])))] = reading.counters[i];
        return counters;
    }

    py::list cpu_operators() const {
        py::list ops;
        for (const CpuOperatorRun& c : run_.cpu_operators) {
            py::dict op;
            op["index"] = c.operator_index;
            op["name"] = c.name;
            op["elements"] = c.elements;
            ops.append(op);
        }
        return ops;
    }

    std::vector<std::string> warnings() const {
        std::vector<std::string> all;
        for (const auto& s : run_.streams) all.insert(all.end(), s.warnings.begin(), s.warnings.end());
        return all;
    }

    const RunResult& run() const { return run_; }

    void write_trace(const std::string& path) const {
        require_timing("a trace");
        write_chrome_trace(traced(), path);
    }

    void write_per_layer_csv(const std::string& path) const {
        require_timing("a per-layer CSV");
        // As the CLI does: rows lined up with Vela's per-layer report beside the model, if any.
        const std::optional<VelaPerLayer> vela = find_vela_per_layer(model_->path, {}, command_stream_bytes(*model_));
        TracedRun run = traced();
        if (vela) run.vela_per_layer = &*vela;
        ethosu::write_per_layer_csv(run, path);
    }

private:
    TracedRun traced() const { return {model_->path, model_->config, run_.memory, run_.streams, run_.timing}; }

    void require_timing(const char* what) const {
        if (!timed_) throw Error({model_->path, std::nullopt, {}}, fmt::format("{} needs a run with timing=True", what));
    }

    std::shared_ptr<const LoadedModel> model_;
    RunResult run_;
    bool timed_;
    py::list outputs_;
};

// A loaded model for any number of runs; its decoded weights are kept between runs. (A
// ModelSession would save little more: MobileNetV2 takes 36 ms of CPU per inference on one,
// 38 ms here, and it takes neither graphs nor lenient runs.)
class Model {
public:
    Model(const std::string& path, std::optional<std::string> npu, const SystemSelection& system, bool lenient,
          uint64_t max_stream_words)
        : system_(system), decode_{.lenient = lenient} {
        model_ = load_model(path, {.npu = std::move(npu), .max_stream_words = max_stream_words});
        // As the CLI: an operator the host cannot run, or an unknown system config, is refused
        // now rather than at the first run.
        if (runs_as_graph(*model_)) check_graph(*model_);
        model_memory_system(*model_, system_);
    }

    const LoadedModel& model() const { return *model_; }

    Result run(const py::object& inputs, bool timing, bool execute) {
        std::vector<std::vector<uint8_t>> bytes = input_bytes(*model_, inputs);
        RunResult run;
        {
            py::gil_scoped_release release;
            // The weight cache serves one run at a time.
            std::lock_guard lock(mutex_);
            run = run_whole_model(*model_, std::move(bytes),
                                  {.system = system_,
                                   .pipeline = {.execute = execute, .timing = timing, .decode = decode_,
                                                .weight_cache = &weights_}});
        }
        return {model_, std::move(run), timing};
    }

private:
    std::shared_ptr<const LoadedModel> model_;
    SystemSelection system_;
    DecodeOptions decode_;
    std::mutex mutex_;
    WeightCache weights_;
};

py::dict tensor_quantization(const TensorInfo& t) {
    py::dict q;
    q["scale"] = t.scale;
    q["zero_point"] = t.zero_point;
    return q;
}

}  // namespace
}  // namespace ethosu

PYBIND11_MODULE(ethosu_emu, m) {
    using namespace ethosu;
    m.doc() = "ethosu-emu: an emulator of Arm's Ethos-U55/U65/U85 NPUs; numpy arrays in and out";
    m.attr("__version__") = ETHOSU_EMU_VERSION;
    // Another interpreter of the same ABI (a pyenv build next to Debian's) imports the module but
    // may lack numpy: say so at import rather than at the first array.
    try {
        py::module_::import("numpy");
    } catch (py::error_already_set& e) {
        throw py::import_error(fmt::format(
            "ethosu_emu needs numpy, which {} cannot import ({}); use the interpreter the module was built for "
            "(CMake names it: 'ETHOSU_BUILD_PYTHON: module ethosu_emu for ...')",
            py::module_::import("sys").attr("executable").cast<std::string>(), e.what()));
    }

    // ethosu::Error -> ethosu_emu.Error: str() is "file: file@0x..: field: reason" (cmd@0x.. for a
    // command-stream offset), and the parts are attributes. The class lives as long as the module (a reference is kept here).
    static const py::handle error_class = py::exception<Error>(m, "Error").release();
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const Error& e) {
            py::object error = py::reinterpret_borrow<py::object>(error_class)(e.what());
            error.attr("file") = e.where().file;
            error.attr("offset") = e.where().offset;
            error.attr("field") = e.where().field;
            error.attr("reason") = e.reason();
            error.attr("kind") = std::string(error_kind_name(e.kind()));
            PyErr_SetObject(error_class.ptr(), error.ptr());
        }
    });

    py::class_<TensorInfo>(m, "Tensor", "A model input or output as the model file describes it.")
        .def_property_readonly("name", [](const TensorInfo& t) { return t.name; })
        .def_property_readonly("shape", [](const TensorInfo& t) { return py::tuple(py::cast(t.shape)); })
        .def_property_readonly("dtype", [](const TensorInfo& t) { return element_dtype(t.type); })
        .def_property_readonly("size_bytes", [](const TensorInfo& t) { return t.size_bytes; })
        .def_property_readonly("scale", [](const TensorInfo& t) { return t.scale; },
                               "quantisation scale per channel (empty if not quantised)")
        .def_property_readonly("zero_point", [](const TensorInfo& t) { return t.zero_point; })
        .def_property_readonly("quantization", &tensor_quantization)
        .def("__repr__", [](const TensorInfo& t) {
            return fmt::format("Tensor(name='{}', shape={}, dtype={}, scale={}, zero_point={})", t.name,
                               shape_text(t.shape), element_type_name(t.type), t.scale, t.zero_point);
        });

    py::class_<Result>(m, "Result", "The outputs and figures of one run.")
        .def_property_readonly("outputs", &Result::outputs,
                               "numpy arrays in model output order (empty for a timing-only run)")
        .def_property_readonly("npu_cycles", &Result::npu_cycles, "NPU cycles of the run (None without timing)")
        .def_property_readonly("ops", &Result::ops,
                               "per op of each stream: stream, index, offset, kind, start, end, cycles, and "
                               "compute_cycles, macs (kernel ops), traffic (kernel and DMA ops)")
        .def_property_readonly("traffic", &Result::traffic, "{memory: {read_bytes, write_bytes}} over the run")
        .def_property_readonly("macs", &Result::macs)
        .def_property_readonly("pmu", &Result::pmu, "{'cycle_counter': n, EVENT: count} for every modelled event")
        .def_property_readonly("cpu_operators", &Result::cpu_operators,
                               "graph operators run on the host: index, name, elements (no cycle model)")
        .def_property_readonly("warnings", &Result::warnings)
        .def_property_readonly("system_config", [](const Result& r) { return r.run().memory.system.name; })
        .def_property_readonly("memory_mode", [](const Result& r) { return r.run().memory.mode.name; })
        .def_property_readonly("core_clock_hz", [](const Result& r) { return r.run().memory.system.core_clock; })
        .def("__repr__",
             [](const Result& r) {
                 const auto cycles = r.npu_cycles();
                 return fmt::format("Result(outputs={}, npu_cycles={})", r.outputs().size(),
                                    cycles ? std::to_string(*cycles) : "None");
             })
        .def("write_trace", &Result::write_trace, py::arg("path"),
             "writes the Chrome/Perfetto trace `ethosu-emu run --trace` writes")
        .def("write_per_layer_csv", &Result::write_per_layer_csv, py::arg("path"),
             "writes the Vela-style per-layer CSV `ethosu-emu run --per-layer` writes");

    py::class_<Model>(m, "Model", "A loaded model, for any number of runs.")
        .def_property_readonly("path", [](const Model& s) { return s.model().path; })
        .def_property_readonly("format", [](const Model& s) { return std::string(model_format_name(s.model().format)); })
        .def_property_readonly("npu_config", [](const Model& s) { return std::string(s.model().config.name); },
                               "Vela's name of the NPU configuration, e.g. 'ethos-u55-128'")
        .def_property_readonly("macs_per_cycle", [](const Model& s) { return s.model().config.macs; })
        .def_property_readonly("inputs", [](const Model& s) { return s.model().inputs; })
        .def_property_readonly("outputs", [](const Model& s) { return s.model().outputs; })
        .def("__repr__",
             [](const Model& s) {
                 return fmt::format("Model('{}', npu_config='{}', inputs={}, outputs={})", s.model().path,
                                    s.model().config.name, s.model().inputs.size(), s.model().outputs.size());
             })
        .def("run", [](Model& s, const py::object& inputs, bool timing) { return s.run(inputs, timing, true); },
             py::arg("inputs") = py::none(), py::arg("timing") = true,
             "runs the model: inputs is a list of numpy arrays in model input order (None: zeros), or one "
             "array for a one-input model")
        .def("time", [](Model& s) { return s.run(py::none(), true, false); },
             "cycles, traffic and traces without computing data");

    m.def(
        "load",
        [](const std::string& path, std::optional<std::string> config, std::optional<std::string> system_config,
           std::optional<std::string> memory_mode, std::vector<std::string> vela_ini, bool lenient,
           uint64_t max_stream_words) {
            SystemSelection system{system_config.value_or(""), memory_mode.value_or(""), std::move(vela_ini)};
            return std::make_unique<Model>(path, std::move(config), system, lenient, max_stream_words);
        },
        py::arg("path"), py::arg("config") = py::none(), py::arg("system_config") = py::none(),
        py::arg("memory_mode") = py::none(), py::arg("vela_ini") = std::vector<std::string>{},
        py::arg("lenient") = false, py::arg("max_stream_words") = kDefaultMaxStreamWords,
        "loads a model: config is the NPU configuration (Vela's name; default the model's), system_config "
        "and memory_mode Vela's names (default Vela's), vela_ini extra vela.ini files, lenient runs ops "
        "reading never-written registers as 0");
}
