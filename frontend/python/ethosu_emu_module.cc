// ethosu_emu: the emulator as a Python module, numpy arrays in and out. A model runs through
// run_whole_model as `ethosu-emu run` does, so its outputs and cycles are the CLI's.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/eval.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <regex>

#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/error.h"
#include "frontend/cli/pmu_report.h"
#include "frontend/graph/graph_runner.h"
#include "frontend/loaders/model.h"
#include "frontend/runner/run_model.h"
#include "traces/chrome_trace.h"
#include "traces/debug_db.h"
#include "traces/html_report.h"
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

py::dict access_cycles(const std::array<int64_t, kMemoryKinds>& cycles) {
    py::dict per_memory;
    for (int m = 0; m < kMemoryKinds; ++m)
        if (cycles[m] != 0) per_memory[py::str(std::string(memory_kind_name(static_cast<MemoryKind>(m))))] = cycles[m];
    return per_memory;
}

// What a model was loaded with besides the file: the debug database naming its ops, and the
// per-layer report of Vela's to line rows up with (empty: the one beside the model, if any).
struct Annotations {
    std::optional<DebugDatabase> debug_db;
    bool debug_db_found = false;  // the one Vela wrote beside the model, not one given: a misfit only warns
    std::string vela_per_layer_file;
};

// As the CLI: a database the caller did not name only loses its names when it does not fit.
void warn_unused_debug_db(const Error& e) {
    PyErr_WarnEx(PyExc_UserWarning,
                 fmt::format("not using the debug database beside the model: {}", e.what()).c_str(), 2);
}

// The untimed-run rule: every timing figure of a run without timing is None; an artefact that
// only timing makes (a trace, a per-layer CSV, a report) raises this error.
Error untimed_error(const std::string& model, const char* what) {
    return Error({model, std::nullopt, {}}, fmt::format("{} needs the timing model; this run had timing=False", what),
                 ErrorKind::Usage);
}

// One run's figures; the model stays loaded while a result refers to it (traces name its ops).
class Result {
public:
    Result(std::shared_ptr<const LoadedModel> model, RunResult run, bool timed, std::vector<uint32_t> pmu_events,
           const Annotations& annotations)
        : model_(std::move(model)), run_(std::move(run)), timed_(timed), pmu_events_(std::move(pmu_events)),
          vela_per_layer_file_(annotations.vela_per_layer_file) {
        for (size_t k = 0; k < run_.outputs.size(); ++k) {
            const TensorInfo& t = model_->outputs[k];
            // py::array copies the bytes: the array owns its data.
            outputs_.append(py::array(element_dtype(t.type), array_shape(t), run_.outputs[k].data()));
        }
        // As the CLI: the database's queue moved onto this run's streams, and refused when it
        // does not list exactly their kernel ops.
        if (annotations.debug_db && timed_) {
            debug_db_ = std::make_shared<DebugDatabase>(*annotations.debug_db);
            debug_db_->align_queue_to(run_.streams);
            try {
                traced().check_debug_db();
            } catch (const Error& e) {
                if (!annotations.debug_db_found) throw;
                warn_unused_debug_db(e);
                debug_db_.reset();
            }
        }
    }

    const py::list& outputs() const { return outputs_; }
    bool timed() const { return timed_; }

    std::optional<int64_t> npu_cycles() const {
        if (!timed_) return std::nullopt;
        return traced().total_cycles();
    }

    // Per op of every stream, in the CLI's `run --json` terms: start and end cycles on its stream's
    // timeline, compute cycles and MACs for kernel ops, bytes per memory; and the op's name as
    // traces show it.
    std::optional<py::list> ops() const {
        if (!timed_) return std::nullopt;
        const TracedRun run = traced();
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
                op["name"] = op_label(run, s, decoded[i]);
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

    // The rows of `run --per-layer`, with the layer names of the debug database when there is one.
    std::optional<py::list> per_layer() {
        if (!timed_) return std::nullopt;
        py::list rows;
        for (const PerLayerRow& r : per_layer_rows(traced_with_vela())) {
            py::dict row;
            row["name"] = r.name;
            row["original_operator"] = r.original_operator;
            row["op"] = r.op;
            row["target"] = r.target;
            row["op_cycles"] = r.op_cycles;
            row["npu_cycles"] = r.npu_cycles;
            row["access_cycles"] = access_cycles(r.access_cycles);
            row["macs"] = r.macs;
            row["traffic"] = memory_traffic(r.traffic);
            row["alignment"] = std::string(r.alignment);
            if (r.vela) {
                py::dict vela;
                vela["op_cycles"] = r.vela->op_cycles;
                vela["npu_cycles"] = r.vela->npu_cycles;
                vela["access_cycles"] = access_cycles(r.vela->access_cycles);
                vela["macs"] = r.vela->macs;
                row["vela"] = vela;
            } else {
                row["vela"] = py::none();
            }
            rows.append(row);
        }
        return rows;
    }

    // Bytes read and written per memory over the whole run.
    std::optional<py::dict> traffic() const {
        if (!timed_) return std::nullopt;
        MemoryTraffic sum;
        for (const auto& t : run_.timing) {
            for (int m = 0; m < kMemoryKinds; ++m) {
                sum.read[m] += t.totals.traffic.read[m];
                sum.write[m] += t.totals.traffic.write[m];
            }
        }
        return memory_traffic(sum);
    }

    std::optional<int64_t> macs() const {
        if (!timed_) return std::nullopt;
        int64_t macs = 0;
        for (const auto& t : run_.timing) macs += t.totals.macs;
        return macs;
    }

    // The PMU's cycle counter and the events asked for (default: every event the model counts),
    // as the core driver would read them.
    std::optional<py::dict> pmu() const {
        if (!timed_) return std::nullopt;
        const PmuReading reading = read_pmu(run_.memory, run_.timing, pmu_events_);
        py::dict counters;
        counters["cycle_counter"] = reading.cycle_counter;
        for (size_t i = 0; i < pmu_events_.size(); ++i)
            counters[py::str(std::string(pmu_event_name(model_->config.generation, pmu_events_[i])))] =
                reading.counters[i];
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
        if (!timed_) throw untimed_error(model_->path, "a trace");
        write_chrome_trace(traced(), path);
    }

    void write_per_layer_csv(const std::string& path) {
        if (!timed_) throw untimed_error(model_->path, "a per-layer CSV");
        ethosu::write_per_layer_csv(traced_with_vela(), path);
    }

    std::string report_html() {
        if (!timed_) throw untimed_error(model_->path, "a report");
        return html_report(traced_with_vela());
    }

    void write_report(const std::string& path) {
        if (!timed_) throw untimed_error(model_->path, "a report");
        write_html_report(traced_with_vela(), path);
    }

private:
    TracedRun traced() const {
        return {model_->path, model_->config, run_.memory, run_.streams, run_.timing, debug_db_.get()};
    }

    // As the CLI's --per-layer and --report: rows lined up with Vela's per-layer report, the one
    // given or the one beside the model; read once.
    TracedRun traced_with_vela() {
        if (!vela_per_layer_read_) {
            vela_per_layer_ = find_vela_per_layer(model_->path, vela_per_layer_file_, command_stream_bytes(*model_));
            vela_per_layer_read_ = true;
        }
        TracedRun run = traced();
        if (vela_per_layer_) run.vela_per_layer = &*vela_per_layer_;
        return run;
    }

    std::shared_ptr<const LoadedModel> model_;
    RunResult run_;
    bool timed_;
    std::vector<uint32_t> pmu_events_;
    std::shared_ptr<DebugDatabase> debug_db_;
    std::string vela_per_layer_file_;
    bool vela_per_layer_read_ = false;
    std::optional<VelaPerLayer> vela_per_layer_;
    py::list outputs_;
};

// What run() writes besides returning the result, as `run --trace/--per-layer/--report` do.
struct RunFiles {
    std::optional<std::string> trace, per_layer, report;
    bool any() const { return trace || per_layer || report; }
};

// A loaded model for any number of runs; its decoded weights are kept between runs. (A
// ModelSession would save little more: MobileNetV2 takes 36 ms of CPU per inference on one,
// 38 ms here, and it takes neither graphs nor lenient runs.)
class Model {
public:
    Model(const std::string& path, std::optional<std::string> npu, const SystemSelection& system, bool lenient,
          uint64_t max_stream_words, const WorkLimits& limits, const std::optional<std::string>& debug_db,
          std::string vela_per_layer)
        : system_(system), decode_{.lenient = lenient}, limits_(limits) {
        model_ = load_model(path, {.npu = std::move(npu), .max_stream_words = max_stream_words});
        // As the CLI: an operator the host cannot run, or an unknown system config, is refused
        // now rather than at the first run.
        if (runs_as_graph(*model_)) check_graph(*model_, limits_);
        model_memory_system(*model_, system_);
        const uint64_t limit = DebugDatabase::max_file_bytes(command_stream_bytes(*model_));
        if (debug_db) {
            annotations_.debug_db = DebugDatabase::load(*debug_db, limit);
        } else if (const auto beside = debug_db_path(path); beside && std::filesystem::is_regular_file(*beside)) {
            // The CLI's default: the database Vela wrote beside the model names the layers.
            try {
                annotations_.debug_db = DebugDatabase::load(*beside, limit);
                annotations_.debug_db_found = true;
            } catch (const Error& e) {
                warn_unused_debug_db(e);
            }
        }
        annotations_.vela_per_layer_file = std::move(vela_per_layer);
    }

    const LoadedModel& model() const { return *model_; }
    const Annotations& annotations() const { return annotations_; }

    Result run(const py::object& inputs, bool timing, bool timing_only, const std::optional<std::vector<std::string>>& pmu,
               const RunFiles& files) {
        if (timing_only && !timing) throw py::value_error("timing_only=True needs timing=True");
        if (!timing && (pmu || files.any()))
            throw py::value_error("pmu=, trace=, per_layer= and report= need timing=True");
        std::vector<uint32_t> events = pmu ? pmu_events(model_->config, *pmu) : pmu_modelled_events(model_->config.generation);
        std::vector<std::vector<uint8_t>> bytes = timing_only ? std::vector<std::vector<uint8_t>>{} : input_bytes(*model_, inputs);
        RunResult run;
        {
            py::gil_scoped_release release;
            // The weight cache serves one run at a time.
            std::lock_guard lock(mutex_);
            run = run_whole_model(*model_, std::move(bytes),
                                  {.system = system_,
                                   .pipeline = {.execute = !timing_only, .timing = timing, .decode = decode_,
                                                .limits = limits_, .weight_cache = &weights_}});
        }
        Result result(model_, std::move(run), timing, std::move(events), annotations_);
        if (files.trace) result.write_trace(*files.trace);
        if (files.per_layer) result.write_per_layer_csv(*files.per_layer);
        if (files.report) result.write_report(*files.report);
        return result;
    }

private:
    std::shared_ptr<const LoadedModel> model_;
    SystemSelection system_;
    DecodeOptions decode_;
    WorkLimits limits_;
    Annotations annotations_;
    std::mutex mutex_;
    WeightCache weights_;
};

py::dict tensor_quantization(const TensorInfo& t) {
    py::dict q;
    q["scale"] = t.scale;
    q["zero_point"] = t.zero_point;
    return q;
}

// A path or a list of paths, as Python callers write them.
std::vector<std::string> path_list(const py::object& paths) {
    if (paths.is_none()) return {};
    if (py::isinstance<py::str>(paths) || py::hasattr(paths, "__fspath__"))
        return {py::module_::import("os").attr("fspath")(paths).cast<std::string>()};
    std::vector<std::string> list;
    for (const py::handle item : paths) list.push_back(py::module_::import("os").attr("fspath")(item).cast<std::string>());
    return list;
}

std::optional<std::string> optional_path(const py::object& path) {
    if (path.is_none()) return std::nullopt;
    return py::module_::import("os").attr("fspath")(path).cast<std::string>();
}

void deprecated(const std::string& message) {
    if (PyErr_WarnEx(PyExc_DeprecationWarning, message.c_str(), 1) != 0) throw py::error_already_set();
}

// The messages of the emulator's core name the CLI's options; a Python caller gave parameters.
std::string in_python_terms(std::string text) {
    static const std::pair<std::regex, const char*> kParameters[] = {
        {std::regex("--npu(?![\\w-])"), "npu="},
        {std::regex("--system-config(?![\\w-])"), "system_config="},
        {std::regex("--memory-mode(?![\\w-])"), "memory_mode="},
        {std::regex("--config(?![\\w-])"), "config="},
        {std::regex("--lenient(?![\\w-])"), "lenient=True"},
        {std::regex("--pmu(?![\\w-])"), "pmu="},
        {std::regex("--debug-db(?![\\w-])"), "debug_db="},
        {std::regex("--vela-per-layer(?![\\w-])"), "vela_per_layer="},
        {std::regex("--per-layer(?![\\w-])"), "per_layer="},
        {std::regex("--trace(?![\\w-])"), "trace="},
        {std::regex("--report(?![\\w-])"), "report="},
        {std::regex("--max-stream-words(?![\\w-])"), "max_stream_words="},
        {std::regex("--max-op-work(?![\\w-])"), "max_op_work="},
        {std::regex("--max-run-work(?![\\w-])"), "max_run_work="},
        {std::regex("--max-commands(?![\\w-])"), "max_commands="},
        {std::regex("--max-allocation(?![\\w-])"), "max_allocation="},
    };
    if (text.find("--") == std::string::npos) return text;
    for (const auto& [flag, parameter] : kParameters) text = std::regex_replace(text, flag, parameter);
    return text;
}

// The classes of the module's errors: an Error is a ValueError (the model, a stream or an
// argument is at fault), one about a file also an OSError with its filename, a missing file a
// FileNotFoundError.
constexpr const char* kErrorClasses = R"(
class Error(ValueError):
    """A model, command stream, option or file the emulator refuses.

    str() is "file: file@0x..: field: reason" (cmd@0x.. for an offset in the command stream).
    Attributes: file, offset (int or None), field, reason, and kind: what went wrong, one of
    'malformed', 'unsupported', 'out_of_bounds', 'limit_exceeded', 'branch_fault', 'io', 'usage'.
    """


class FileError(Error, OSError):
    """An Error (kind 'io') about a file that could not be read or written; filename names it."""

    def __str__(self):
        return str(self.args[0])


class MissingFileError(FileError, FileNotFoundError):
    """A FileError for a file that does not exist."""
)";

}  // namespace
}  // namespace ethosu

PYBIND11_MODULE(ethosu_emu, m) {
    using namespace ethosu;
    m.doc() = R"(ethosu-emu: an emulator of Arm's Ethos-U55/U65/U85 NPUs, numpy arrays in and out.

load(path, ...) reads a model (a Vela-compiled .tflite, Vela's .npz, an ExecuTorch .pte or a raw
command stream) and returns a Model; Model.run(inputs) runs it as `ethosu-emu run` does and
returns a Result: the outputs, the NPU cycles, per-op and per-layer figures, traffic, PMU counts,
and the trace, per-layer CSV and HTML report the CLI writes. Parameters are named as the CLI's
options (npu= for --npu, system_config= for --system-config, ...).

On a run without timing (run(timing=False)) every timing figure is None, and asking for an
artefact only timing makes (write_trace, write_per_layer_csv, write_report, report_html) raises
Error. Errors are ethosu_emu.Error, a ValueError; one about a file is also an OSError.)";
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

    py::dict scope;
    scope["__name__"] = "ethosu_emu";
    py::exec(kErrorClasses, scope);
    for (const char* name : {"Error", "FileError", "MissingFileError"}) m.attr(name) = scope[name];
    // The classes live as long as the module (references are kept here).
    static const py::handle error_class = py::object(scope["Error"]).release();
    static const py::handle file_error_class = py::object(scope["FileError"]).release();
    static const py::handle missing_file_class = py::object(scope["MissingFileError"]).release();
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const Error& e) {
            const std::string& file = e.where().file;
            py::handle cls = error_class;
            if (e.kind() == ErrorKind::Io) {
                std::error_code ignored;
                cls = std::filesystem::exists(file, ignored) ? file_error_class : missing_file_class;
            }
            py::object error = py::reinterpret_borrow<py::object>(cls)(in_python_terms(e.what()));
            error.attr("file") = in_python_terms(file);
            error.attr("offset") = e.where().offset;
            error.attr("field") = in_python_terms(e.where().field);
            error.attr("reason") = in_python_terms(e.reason());
            error.attr("kind") = std::string(error_kind_name(e.kind()));
            if (e.kind() == ErrorKind::Io) error.attr("filename") = file;
            PyErr_SetObject(cls.ptr(), error.ptr());
        }
    });

    py::class_<TensorInfo>(m, "Tensor", "A model input or output as the model file describes it.")
        .def_property_readonly("name", [](const TensorInfo& t) { return t.name; }, "the tensor's name in the model")
        .def_property_readonly("shape", [](const TensorInfo& t) { return py::tuple(py::cast(t.shape)); },
                               "the shape, a tuple")
        .def_property_readonly("dtype", [](const TensorInfo& t) { return element_dtype(t.type); },
                               "the numpy dtype (uint8 for int4's packed pairs and types numpy lacks)")
        .def_property_readonly("size_bytes", [](const TensorInfo& t) { return t.size_bytes; }, "bytes of the tensor")
        .def_property_readonly("scale", [](const TensorInfo& t) { return t.scale; },
                               "quantisation scale per channel, a list (empty if not quantised)")
        .def_property_readonly("zero_point", [](const TensorInfo& t) { return t.zero_point; },
                               "quantisation zero point per channel, a list (empty if not quantised)")
        .def_property_readonly("quantization", &tensor_quantization, "{'scale': [...], 'zero_point': [...]}")
        .def("__repr__", [](const TensorInfo& t) {
            return fmt::format("Tensor(name='{}', shape={}, dtype={}, scale={}, zero_point={})", t.name,
                               shape_text(t.shape), element_type_name(t.type), t.scale, t.zero_point);
        });

    py::class_<Result>(m, "Result", R"(The outputs and figures of one run (Model.run).

Timing figures (npu_cycles, macs, ops, per_layer, traffic, pmu) are None when the run had
timing=False; write_trace, write_per_layer_csv, write_report and report_html raise Error then.)")
        .def_property_readonly("outputs", &Result::outputs,
                               "numpy arrays in model output order (own copies; empty for a timing-only run)")
        .def_property_readonly("timed", &Result::timed, "whether the run was timed (timing=True)")
        .def_property_readonly("npu_cycles", &Result::npu_cycles,
                               "NPU cycles of the run, `run --json`'s cycles.total (None without timing)")
        .def_property_readonly("macs", &Result::macs, "multiply-accumulates of the run (None without timing)")
        .def_property_readonly("ops", &Result::ops,
                               "per op of each stream, as `run --json`'s ops: stream, index, offset, kind, name (as "
                               "traces label it: the layer with a debug database), start, end, cycles, and "
                               "compute_cycles, macs (kernel ops), traffic (kernel and DMA ops); None without timing")
        .def_property_readonly("per_layer", &Result::per_layer,
                               "the rows of `run --per-layer`: name, original_operator, op, target, op_cycles, "
                               "npu_cycles, access_cycles {memory: cycles}, macs, traffic, alignment, and vela "
                               "(Vela's figures of the row, or None); None without timing")
        .def_property_readonly("traffic", &Result::traffic,
                               "{memory: {read_bytes, write_bytes}} over the run (None without timing)")
        .def_property_readonly("pmu", &Result::pmu,
                               "{'cycle_counter': n, EVENT: count}: the events run(pmu=...) asked for, by default "
                               "every modelled one (None without timing)")
        .def_property_readonly("cpu_operators", &Result::cpu_operators,
                               "graph operators run on the host: index, name, elements (no cycle model)")
        .def_property_readonly("warnings", &Result::warnings, "the warnings of a lenient run (load(lenient=True))")
        .def_property_readonly("system_config", [](const Result& r) { return r.run().memory.system.name; },
                               "Vela's System_Config the run was timed on")
        .def_property_readonly("memory_mode", [](const Result& r) { return r.run().memory.mode.name; },
                               "Vela's Memory_Mode the run was timed on")
        .def_property_readonly("core_clock_hz", [](const Result& r) { return r.run().memory.system.core_clock; },
                               "the NPU's clock of that system config, in Hz")
        .def("__repr__",
             [](const Result& r) {
                 const auto cycles = r.npu_cycles();
                 return fmt::format("Result(outputs={}, npu_cycles={})", r.outputs().size(),
                                    cycles ? std::to_string(*cycles) : "None");
             })
        .def("write_trace", &Result::write_trace, py::arg("path"),
             "Writes the Chrome/Perfetto trace `ethosu-emu run --trace` writes.")
        .def("write_per_layer_csv", &Result::write_per_layer_csv, py::arg("path"),
             "Writes the Vela-style per-layer CSV `ethosu-emu run --per-layer` writes.")
        .def("write_report", &Result::write_report, py::arg("path"),
             "Writes the HTML report `ethosu-emu run --report` writes.")
        .def("report_html", &Result::report_html, "The HTML report `ethosu-emu run --report` writes, as a string.");

    py::class_<Model>(m, "Model", "A loaded model (ethosu_emu.load), for any number of runs.")
        .def_property_readonly("path", [](const Model& s) { return s.model().path; }, "the model file, as given")
        .def_property_readonly("format", [](const Model& s) { return std::string(model_format_name(s.model().format)); },
                               "the file's format")
        .def_property_readonly("npu_config", [](const Model& s) { return std::string(s.model().config.name); },
                               "Vela's name of the NPU configuration, e.g. 'ethos-u55-128'")
        .def_property_readonly("npu", [](const Model& s) { return std::string(s.model().config.name); },
                               "the same as npu_config, named as load's npu=")
        .def_property_readonly("macs_per_cycle", [](const Model& s) { return s.model().config.macs; },
                               "the NPU configuration's MACs per cycle")
        .def_property_readonly("inputs", [](const Model& s) { return s.model().inputs; }, "the input Tensors")
        .def_property_readonly("outputs", [](const Model& s) { return s.model().outputs; }, "the output Tensors")
        .def_property_readonly("debug_db",
                               [](const Model& s) {
                                   const auto& db = s.annotations().debug_db;
                                   return db ? std::optional<std::string>(db->source()) : std::nullopt;
                               },
                               "the debug database given to load (debug_db=) or found beside the model, or None")
        .def("__repr__",
             [](const Model& s) {
                 return fmt::format("Model('{}', npu_config='{}', inputs={}, outputs={})", s.model().path,
                                    s.model().config.name, s.model().inputs.size(), s.model().outputs.size());
             })
        .def(
            "run",
            [](Model& s, const py::object& inputs, bool timing, bool timing_only,
               const std::optional<std::vector<std::string>>& pmu, const py::object& trace,
               const py::object& per_layer, const py::object& report) {
                return s.run(inputs, timing, timing_only, pmu,
                             {optional_path(trace), optional_path(per_layer), optional_path(report)});
            },
            py::arg("inputs") = py::none(), py::arg("timing") = true, py::arg("timing_only") = false,
            py::arg("pmu") = py::none(), py::arg("trace") = py::none(), py::arg("per_layer") = py::none(),
            py::arg("report") = py::none(),
            R"(Runs the model once, as `ethosu-emu run`, and returns a Result.

inputs: a list of one numpy array per model input, in model input order (exact dtype; the
  tensor's shape up to dimensions of 1; None for zeros), or one array for a one-input model.
timing: False skips the timing model (--no-timing): outputs only, every timing figure None.
timing_only: cycles, ops, traffic and PMU without computing data (--timing-only); no outputs.
pmu: the PMU events to count (--pmu), e.g. ['NPU_ACTIVE', 'MAC_ACTIVE']; default every modelled one.
trace, per_layer, report: files to write, as --trace, --per-layer and --report.)")
        .def("time", [](Model& s) { return s.run(py::none(), true, true, std::nullopt, {}); },
             "Times the model without computing data: run(timing_only=True).");

    m.def(
        "load",
        [](const py::object& path, std::optional<std::string> npu, std::optional<std::string> system_config,
           std::optional<std::string> memory_mode, const py::object& config, bool lenient, uint64_t max_stream_words,
           const py::object& debug_db, const py::object& vela_per_layer, const py::object& vela_ini,
           uint64_t max_op_work, uint64_t max_run_work, uint64_t max_commands, uint64_t max_allocation) {
            std::vector<std::string> config_files;
            // Before the names followed the CLI's, config= named the NPU and vela_ini= the vela.ini files.
            if (py::isinstance<py::str>(config)) {
                const std::string text = config.cast<std::string>();
                std::error_code ignored;
                if (!std::filesystem::exists(text, ignored) && text.starts_with("ethos-u")) {
                    deprecated("load(config=NPU) is deprecated, use npu=: config= now takes vela.ini files, as "
                               "the CLI's --config");
                    if (!npu) npu = text;
                } else {
                    config_files = path_list(config);
                }
            } else {
                config_files = path_list(config);
            }
            if (!vela_ini.is_none()) {
                deprecated("load(vela_ini=...) is deprecated: use config=, as the CLI's --config");
                for (auto& file : path_list(vela_ini)) config_files.push_back(std::move(file));
            }
            SystemSelection system{system_config.value_or(""), memory_mode.value_or(""), std::move(config_files)};
            const auto model_path = optional_path(path);
            if (!model_path) throw py::type_error("load() needs a path");
            const WorkLimits limits{.max_op_work = max_op_work, .max_run_work = max_run_work,
                                    .max_commands = max_commands, .max_allocation_bytes = max_allocation};
            return std::make_unique<Model>(*model_path, std::move(npu), system, lenient, max_stream_words, limits,
                                           optional_path(debug_db), optional_path(vela_per_layer).value_or(""));
        },
        py::arg("path"), py::arg("npu") = py::none(), py::arg("system_config") = py::none(),
        py::arg("memory_mode") = py::none(), py::arg("config") = py::none(), py::arg("lenient") = false,
        py::arg("max_stream_words") = kDefaultMaxStreamWords, py::arg("debug_db") = py::none(),
        py::arg("vela_per_layer") = py::none(), py::kw_only(), py::arg("vela_ini") = py::none(),
        py::arg("max_op_work") = WorkLimits{}.max_op_work, py::arg("max_run_work") = WorkLimits{}.max_run_work,
        py::arg("max_commands") = WorkLimits{}.max_commands,
        py::arg("max_allocation") = WorkLimits{}.max_allocation_bytes,
        R"(Loads a model and returns a Model. Parameters are the CLI's options:

path: the model file (str or path-like): a Vela .tflite or .npz, an ExecuTorch .pte, a raw stream.
npu: the NPU configuration by Vela's name (--npu), e.g. 'ethos-u55-128'; default the model's.
  One that disagrees with the model raises Error.
system_config, memory_mode: Vela's System_Config and Memory_Mode (--system-config,
  --memory-mode); default what the model records it was compiled for, else Vela's default.
config: a vela.ini file or a list of them with more sections (--config).
lenient: ops may read registers the stream never wrote, as 0, with a warning (--lenient).
max_stream_words: the largest command stream taken (--max-stream-words).
debug_db: Vela's model_debug.xml (--debug-db): names ops and per-layer rows after the layers;
  default <stem>_debug.xml beside <stem>_vela.tflite, when there (one that does not fit the
  model is then left out with a UserWarning, as the CLI does).
vela_per_layer: Vela's per-layer CSV to line per-layer rows up with (--vela-per-layer); default
  <stem>_per-layer.csv beside <stem>_vela.tflite, when there.
max_op_work, max_run_work, max_commands, max_allocation (keyword only): the work limits that stop
  a hostile stream (--max-op-work, --max-run-work, --max-commands, --max-allocation).
vela_ini: deprecated name of config.

A graph operator the host cannot run and an unknown system config are refused here. A missing
file raises MissingFileError (a FileNotFoundError); a malformed one Error.)");
}
