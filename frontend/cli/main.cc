// ethosu-emu: command-line front end.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <new>
#include <optional>
#include <system_error>
#include <thread>

#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/disasm.h"
#include "emulator/isa/error.h"
#include "frontend/cli/check.h"
#include "frontend/cli/example_model.h"
#include "frontend/cli/fvp_command.h"
#include "frontend/cli/graph_info.h"
#include "frontend/cli/manifest.h"
#include "frontend/cli/pmu_report.h"
#include "frontend/runner/run_model.h"
#include "frontend/cli/output_file.h"
#include "frontend/cli/run_figures.h"
#include "frontend/cli/sweep.h"
#include "frontend/cli/system_command.h"
#include "frontend/cli/tensor_files.h"
#include "frontend/device_server/device_server.h"
#include "frontend/graph/graph_runner.h"
#include "frontend/loaders/model.h"
#include "traces/chrome_trace.h"
#include "traces/html_report.h"
#include "traces/layer_summary.h"
#include "traces/per_layer_csv.h"

namespace ethosu {
namespace {

using json = nlohmann::ordered_json;

std::string shape_text(const std::vector<int64_t>& shape) {
    return fmt::format("[{}]", fmt::join(shape, "x"));
}

// A tensor's quantisation as TFLite gives it: a scale and zero point per tensor, or per channel.
json quantization_json(const TensorInfo& t) {
    if (t.scale.empty() && t.zero_point.empty()) return nullptr;
    return {{"scale", t.scale}, {"zero_point", t.zero_point}};
}

std::string quantization_text(const TensorInfo& t) {
    if (t.scale.empty() && t.zero_point.empty()) return "";
    if (t.scale.size() <= 1 && t.zero_point.size() <= 1)
        return fmt::format("  scale {} zero point {}", t.scale.empty() ? 0.0f : t.scale[0],
                           t.zero_point.empty() ? 0 : t.zero_point[0]);
    return fmt::format("  scale [{}] zero point [{}] (per channel)", fmt::join(t.scale, ", "), fmt::join(t.zero_point, ", "));
}

json tensor_json(const TensorInfo& t) {
    return {{"name", t.name},     {"shape", t.shape},   {"type", element_type_name(t.type)},
            {"region", t.region}, {"offset", t.offset}, {"bytes", t.size_bytes},
            {"quantization", quantization_json(t)}};
}

void print_tensors(const char* title, const std::vector<TensorInfo>& tensors) {
    fmt::print("{}:\n", title);
    for (size_t i = 0; i < tensors.size(); ++i) {
        const auto& t = tensors[i];
        fmt::print("  [{}] {} {} {}  region {} offset 0x{:x} ({} bytes){}\n", i, t.name.empty() ? "-" : t.name,
                   shape_text(t.shape), element_type_name(t.type), t.region, t.offset, t.size_bytes,
                   quantization_text(t));
    }
}

// An AXI port as the timing model takes it: the memory behind it, its bandwidth, the spans a read
// fetches and the bursts that carry them, its latencies. info prints it and --json gives it.
struct PortFigures {
    int port = 0;
    MemoryKind memory = MemoryKind::Sram;
    double bytes_per_cycle = 0;
    int span_bytes = 0, burst_bytes = 0, read_latency = 0, write_latency = 0;

    PortFigures(const MemorySystem& system, int p) : port(p), memory(system.port_memory(p)) {
        const MemoryTiming& t = system.timing(memory);
        bytes_per_cycle = system.bytes_per_cycle(memory);
        span_bytes = t.burst_length;
        burst_bytes = t.axi_burst_bytes();
        read_latency = t.read_latency;
        write_latency = t.write_latency;
    }
    std::string text() const {
        return fmt::format("AXI{}: {} {:.3g} B/cycle, {}-byte spans in {}-byte bursts, latency {} read / {} write",
                           port, memory_kind_name(memory), bytes_per_cycle, span_bytes, burst_bytes, read_latency,
                           write_latency);
    }
    json to_json() const {
        return {{"port", fmt::format("AXI{}", port)}, {"memory", memory_kind_name(memory)},
                {"bytes_per_cycle", bytes_per_cycle}, {"burst_length", span_bytes},
                {"axi_burst_bytes", burst_bytes},     {"read_latency", read_latency},
                {"write_latency", write_latency}};
    }
};

int run_info(const std::string& path, const LoadOptions& options, const SystemSelection& system, bool as_json) {
    const auto model = load_model(path, options);
    json streams = json::array();
    size_t total_commands = 0, total_ops = 0;
    for (size_t i = 0; i < model->invocations.size(); ++i) {
        const auto& inv = model->invocations[i];
        // info describes what it is given: never-written registers are warnings here, errors in a run.
        // Ops are counted as they are decoded, not kept: memory stays that of the stream.
        std::map<std::string, int> kinds;
        size_t ops = 0;
        const auto decoded = decode_stream(
            model->config, inv.stream.words, path,
            [&](const DecodedOp& op) {
                ++kinds[std::string(op_kind_name(op.kind))];
                ++ops;
            },
            {.lenient = true});
        total_commands += decoded.command_count;
        total_ops += ops;
        json regions = json::array();
        for (const auto& r : inv.regions)
            regions.push_back({{"index", r.index}, {"role", region_role_name(r.role)}, {"size", r.size}, {"initialised", r.bytes.size()}});
        streams.push_back({{"payload", inv.stream.payload_kind}, {"words", inv.stream.words.size()},
                           {"commands", decoded.command_count}, {"ops", ops}, {"op_kinds", kinds},
                           {"regions", regions}, {"warnings", decoded.warnings}});
    }
    // The memory system a run with these options takes, and why.
    const CompiledFor& compiled = model->compiled_for;
    const SystemChoice choice = choose_system(*model, system);
    const MemorySystem memory = make_memory_system(model->config, choice.selection);
    const bool user_gave_both = !system.system_config.empty() && !system.memory_mode.empty();
    const bool user_gave_one = !user_gave_both && (!system.system_config.empty() || !system.memory_mode.empty());
    if (as_json) {
        json inputs = json::array(), outputs = json::array();
        for (const auto& t : model->inputs) inputs.push_back(tensor_json(t));
        for (const auto& t : model->outputs) outputs.push_back(tensor_json(t));
        json out = {{"model", path},
                    {"format", model_format_name(model->format)},
                    {"npu", model->config.name},
                    {"config_word", fmt::format("0x{:08x}", model->config.config_word)},
                    {"inputs", inputs},
                    {"outputs", outputs},
                    {"cpu_operators", model->cpu_operators},
                    {"streams", streams},
                    {"commands", total_commands},
                    {"ops", total_ops}};
        if (!model->invocations.empty()) {
            json ports = json::array();
            for (int port = 0; port < 2; ++port) ports.push_back(PortFigures(memory, port).to_json());
            out["memory_system"] = {{"system_config", memory.system.name},
                                    {"memory_mode", memory.mode.name},
                                    {"core_clock_hz", memory.system.core_clock},
                                    {"ports", ports}};
        }
        if (!compiled.source.empty())
            out["compiled_for"] = {{"system_config", compiled.system_config}, {"memory_mode", compiled.memory_mode},
                                   {"source", compiled.source}, {"followed", choice.followed},
                                   {"not_followed", choice.not_followed}};
        if (model->graph) out["graph"] = graph_info_json(*model);
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    fmt::print("model:    {} ({})\n", path, model_format_name(model->format));
    if (model->invocations.empty())
        fmt::print("npu:      none (no ethos-u operator: run executes it on the host's reference kernels)\n");
    else
        fmt::print("npu:      {} ({} MACs/cycle, CONFIG 0x{:08x})\n", model->config.name, model->config.macs,
                   model->config.config_word);
    if (!model->invocations.empty()) {
        fmt::print("memory:   {}, {} ({})\n", memory.system.name, memory.mode.name,
                   user_gave_both ? "as given"
                   : user_gave_one ? "as given; the other as compiled, else Vela's default"
                                   : "a run's default; --system-config and --memory-mode choose others");
        for (int port = 0; port < 2; ++port) fmt::print("          {}\n", PortFigures(memory, port).text());
        if (!user_gave_both && compiled.source.empty())
            fmt::print("          the file does not record what it was compiled for: Vela's default for {}\n",
                       model->config.name);
        if (!choice.followed.empty())
            fmt::print("          as compiled ({}): {}\n", compiled.source, fmt::join(choice.followed, ", "));
        for (const auto& note : choice.not_followed) fmt::print("          {}\n", note);
    }
    print_tensors("inputs", model->inputs);
    print_tensors("outputs", model->outputs);
    if (model->cpu_operators) fmt::print("cpu operators: {}\n", model->cpu_operators);
    for (size_t i = 0; i < streams.size(); ++i) {
        const auto& s = streams[i];
        fmt::print("stream {}: {} payload, {} commands, {} ops (", i, s["payload"].get<std::string>(),
                   s["commands"].get<size_t>(), s["ops"].get<size_t>());
        bool first = true;
        for (const auto& [kind, n] : s["op_kinds"].items()) {
            fmt::print("{}{} {}", first ? "" : ", ", n.get<int>(), kind);
            first = false;
        }
        fmt::print(")\n");
        for (const auto& r : s["regions"])
            fmt::print("  region {}: {:<12} {} bytes\n", r["index"].get<int>(), r["role"].get<std::string>(),
                       r["size"].get<uint64_t>());
        for (const auto& w : s["warnings"]) fmt::print("  warning: {}\n", w.get<std::string>());
    }
    fmt::print("total: {} commands, {} ops\n", total_commands, total_ops);
    if (model->graph) fmt::print("{}", graph_info_text(*model));
    return 0;
}

// nlohmann's dump(1) of the whole array, written one element at a time.
void print_json_array_element(const json& element, bool first) {
    std::string text = element.dump(1);
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 2)) text.insert(at + 1, " ");
    fmt::print("{} {}", first ? "[\n" : ",\n", text);
}

int run_disasm(const std::string& path, const LoadOptions& options, bool as_json) {
    const auto model = load_model(path, options);
    bool first = true;
    for (size_t s = 0; s < model->invocations.size(); ++s) {
        const auto& words = model->invocations[s].stream.words;
        if (!as_json) fmt::print("// stream {}: {} ({} words)\n", s, model->config.name, words.size());
        // Each command is printed as it is disassembled: memory stays that of the stream.
        disassemble_stream(model->config.generation, words, path, [&](const DisassembledCommand& c) {
            if (!as_json) {
                fmt::print("{}\n", format_listing_line(c));
                return;
            }
            json fields = json::object();
            for (const auto& f : c.fields) {
                if (!f.enum_value.empty()) fields[std::string(f.name)] = f.enum_value;
                else fields[std::string(f.name)] = f.value;
            }
            print_json_array_element({{"stream", s}, {"offset", c.offset}, {"name", c.name}, {"param", c.param},
                                      {"payload", c.payload ? json(*c.payload) : json(nullptr)}, {"fields", fields}},
                                     first);
            first = false;
        });
    }
    if (as_json) fmt::print("{}\n", first ? "[]" : "\n]");
    return 0;
}

// run --json's layout (docs/schemas/run.schema.json): a new version when a key changes meaning or goes.
constexpr int kRunJsonVersion = 1;

struct RunCliOptions {
    std::vector<std::string> pmu;
    std::vector<std::string> input_files;
    std::vector<std::string> output_files;  // output k's file; the others PREFIX.out<k>.bin
    std::string output_prefix = "out";
    bool timing_only = false;
    bool no_timing = false;
    SystemSelection system;
    std::string trace_file;      // Chrome/Perfetto trace
    std::string per_layer_file;  // Vela-style per-layer CSV
    std::string debug_db_file;   // Vela's model_debug.xml, for operator names
    std::string vela_per_layer_file;  // Vela's per-layer report; default: the one beside the model
    std::string report_file;          // HTML report
    bool lenient = false;        // registers never written read as 0, with a warning
    WorkLimits limits{};
};

// The writers of traces/ take a path: stdout's for "-".
std::string writable_path(const std::string& option_value) {
    if (option_value != kStdoutPath) return option_value;
    std::fflush(stdout);
    return "/dev/stdout";
}

// A sentence when the run's memory system is not the one the model was compiled for (what the
// model records, else Vela's summary beside it): a memory mode can change the cycles severalfold.
std::string compiled_system_mismatch(const LoadedModel& model, const MemorySystem& memory) {
    std::string system_config = model.compiled_for.system_config, memory_mode = model.compiled_for.memory_mode;
    std::string source = model.compiled_for.source;
    if (system_config.empty() && memory_mode.empty()) {
        const auto summary = find_vela_compiled_system(model.path);
        if (!summary) return {};
        system_config = summary->system_config;
        memory_mode = summary->memory_mode;
        source = summary->source;
    }
    const bool system_differs = !system_config.empty() && system_config != memory.system.name;
    const bool mode_differs = !memory_mode.empty() && memory_mode != memory.mode.name;
    if (!system_differs && !mode_differs) return {};
    return fmt::format("the model was compiled for {} {} ({}), the run uses {} {}: its cycles are for a memory system "
                       "Vela did not compile it for (choose with --system-config and --memory-mode)",
                       system_config.empty() ? "-" : system_config, memory_mode.empty() ? "-" : memory_mode, source,
                       memory.system.name, memory.mode.name);
}

// One operator of a graph run: an ethos-u one with its NPU cycles (when timed), a CPU one with its
// element count (no cycle model prices the CPU).
struct RunOperator {
    size_t index = 0;
    std::string name;  // "ethos-u", or the CPU operator's builtin name
    bool on_npu = false;
    std::optional<int64_t> cycles{};  // NPU operators of a timed run
    uint64_t elements = 0;          // CPU operators
};

// A graph run's operators in graph order: the NPU's streams and the CPU's operators merged.
std::vector<RunOperator> run_operators(const RunResult& result, bool timed) {
    std::vector<RunOperator> ops;
    size_t stream = 0, cpu = 0;
    while (stream < result.stream_operators.size() || cpu < result.cpu_operators.size()) {
        const bool npu_next = cpu == result.cpu_operators.size() ||
                              (stream < result.stream_operators.size() &&
                               result.stream_operators[stream] < result.cpu_operators[cpu].operator_index);
        if (npu_next) {
            ops.push_back({.index = result.stream_operators[stream], .name = "ethos-u", .on_npu = true,
                           .cycles = timed ? std::optional(result.timing[stream].totals.cycles) : std::nullopt});
            ++stream;
        } else {
            const CpuOperatorRun& c = result.cpu_operators[cpu++];
            ops.push_back({.index = c.operator_index, .name = c.name, .elements = c.elements});
        }
    }
    return ops;
}

// --pmu's events, what the counters read and the profiler's lines from them.
struct RunPmu {
    std::vector<uint32_t> events;
    PmuReading reading;
    std::vector<ProfilerLine> profile;
};

// What a run produced, gathered once after the run wrote its files; print_run_text and
// print_run_json lay it out.
struct RunReport {
    const LoadedModel& model;
    const RunResult& result;
    const TracedRun& traced;                  // what the layer summary reads
    bool timing_only = false;
    bool timed = false;                       // the timing model ran (no --no-timing)
    json outputs{};                           // each output tensor with the file written for it
    std::vector<std::string> output_files{};  // output k's file
    json timing{};                            // timing_json; empty untimed
    std::vector<RunOperator> operators{};     // a graph run's; empty for a model of NPU work alone
    std::optional<RunPmu> pmu{};              // with --pmu
    std::string report_file{};                // --report's file, else empty
};

void print_run_text(const RunReport& r) {
    const LoadedModel& model = r.model;
    size_t ops = 0, kernel_ops = 0, dmas = 0;
    for (const auto& s : r.result.streams) {
        ops += s.ops.size();
        for (const DecodedOp& op : s.ops) {
            kernel_ops += is_kernel_op(op.kind);
            dmas += op.kind == OpKind::DmaStart;
        }
    }
    const bool npu_work = !model.invocations.empty();
    if (npu_work)
        fmt::print("{}: {} NPU commands ({} kernel ops, {} DMA, {} waits and others) on {}", r.traced.model, ops,
                   kernel_ops, dmas, ops - kernel_ops - dmas, model.config.name);
    else
        fmt::print("{}: no NPU work, every operator on the host's reference kernels", r.traced.model);
    if (!r.output_files.empty()) fmt::print("; wrote {}", fmt::join(r.output_files, ", "));
    fmt::print("\n");
    if (r.timed && npu_work) {
        const MemorySystem& memory = r.result.memory;
        fmt::print("{} cycles ({:.3f} ms at {:g} MHz, {}, {})\n", r.timing["cycles"]["total"].get<int64_t>(),
                   r.timing["inference_seconds"].get<double>() * 1e3, memory.system.core_clock / 1e6,
                   memory.system.name, memory.mode.name);
        fmt::print("{}", layer_summary_text(r.traced, per_layer_rows(r.traced), 10));
    }
    if (runs_as_graph(model)) {
        for (const RunOperator& op : r.operators) {
            if (op.on_npu)
                fmt::print("  operator {} ethos-u on the NPU{}\n", op.index,
                           op.cycles ? fmt::format(": {} cycles", *op.cycles) : "");
            else
                fmt::print("  operator {} {} on the CPU: {} elements\n", op.index, op.name, op.elements);
        }
        if (!r.result.cpu_operators.empty())
            fmt::print("  (CPU operators have no cycle model: the cycles are the NPU's)\n");
    }
    if (!r.report_file.empty()) fmt::print("report: {}\n", r.report_file);
    if (r.pmu) {
        fmt::print("ethosu_pmu_cycle_cntr : {}\n", r.pmu->reading.cycle_counter);
        for (size_t i = 0; i < r.pmu->events.size(); ++i) {
            fmt::print("ethosu_pmu_cntr{} : {} ({})\n", i, r.pmu->reading.counters[i],
                       pmu_event_name(model.config.generation, r.pmu->events[i]));
        }
        fmt::print("Profile for Inference:\n");
        for (const auto& line : r.pmu->profile) fmt::print("{} {}: {}\n", line.name, line.unit, line.count);
    }
}

void print_run_json(const RunReport& r) {
    json ops = json::array();
    for (size_t s = 0; s < r.result.timing.size(); ++s)
        for (auto& op : ops_json(r.result.streams[s], r.result.timing[s])) ops.push_back(std::move(op));
    json out = {{"format", "ethosu-emu-run"}, {"version", kRunJsonVersion},  {"model", r.traced.model},
                {"npu", r.model.config.name}, {"timing_only", r.timing_only}, {"outputs", r.outputs}};
    out.update(r.timing);
    if (r.pmu) {
        out["pmu"] = pmu_json(r.model.config, r.pmu->events, r.pmu->reading);
        out["pmu"]["profile"] = profile_json(r.pmu->profile);
    }
    out["ops"] = ops;
    if (runs_as_graph(r.model)) {
        json operators = json::array();
        for (const RunOperator& op : r.operators) {
            if (op.on_npu) {
                json o = {{"index", op.index}, {"name", op.name}, {"on", "npu"}};
                if (op.cycles) o["cycles"] = *op.cycles;
                operators.push_back(o);
            } else {
                operators.push_back({{"index", op.index}, {"name", op.name}, {"on", "cpu"}, {"elements", op.elements}});
            }
        }
        out["operators"] = operators;
        out["cpu_cycle_model"] = false;  // CPU operators are listed, not timed
    }
    std::cout << out.dump(2) << "\n";
}

// Vela's side files that name and line up the layers: the debug database (the one given, else the
// one Vela wrote beside the model) and the per-layer report.
struct LayerNames {
    std::optional<DebugDatabase> debug_db;
    bool debug_db_found = false;  // beside the model, not named by the user
    std::optional<VelaPerLayer> vela_per_layer;

    // One the user did not name only loses its names: a stale file beside a recompiled model must
    // not stop the run (a database given with --debug-db that does not fit is an error).
    void drop_found_debug_db(const Error& e) {
        fmt::print(stderr, "ethosu-emu: warning: not using the debug database beside the model: {}\n", e.what());
        debug_db.reset();
    }
};

LayerNames find_layer_names(const std::string& path, const LoadedModel& model, const RunCliOptions& cli, bool as_json) {
    LayerNames names;
    const uint64_t debug_db_limit = DebugDatabase::max_file_bytes(command_stream_bytes(model));
    const auto debug_db_beside = debug_db_path(path);
    names.debug_db_found = cli.debug_db_file.empty() && debug_db_beside && !cli.no_timing &&
                           std::filesystem::is_regular_file(*debug_db_beside);
    if (!cli.debug_db_file.empty()) names.debug_db = DebugDatabase::load(cli.debug_db_file, debug_db_limit);
    if (names.debug_db_found) {
        try {
            names.debug_db = DebugDatabase::load(*debug_db_beside, debug_db_limit);
        } catch (const Error& e) {
            names.drop_found_debug_db(e);
        }
    }
    // Vela's per-layer report lines the CSV's rows up with Vela's when no debug database does.
    // For the summary on stdout alone, a malformed report beside the model costs only Vela's column.
    if (!cli.per_layer_file.empty() || !cli.report_file.empty() || !cli.vela_per_layer_file.empty()) {
        names.vela_per_layer = find_vela_per_layer(path, cli.vela_per_layer_file, command_stream_bytes(model));
    } else if (!cli.no_timing && !as_json) {
        try {
            names.vela_per_layer = find_vela_per_layer(path, {}, command_stream_bytes(model));
        } catch (const Error& e) {
            fmt::print(stderr, "ethosu-emu: warning: not using Vela's per-layer report beside the model: {}\n", e.what());
        }
    }
    return names;
}

// Refuses options that do not go together (at most one output on stdout, "-"); true when a file
// other than the summary goes there, which then stays off it.
bool check_run_request(const RunCliOptions& cli, bool as_json) {
    if (cli.no_timing && (cli.timing_only || !cli.pmu.empty() || !cli.trace_file.empty() || !cli.per_layer_file.empty() ||
                          !cli.report_file.empty()))
        throw Error({"--no-timing", std::nullopt, {}},
                    "--timing-only, --pmu, --trace, --per-layer and --report need the timing model");
    int on_stdout = as_json ? 1 : 0;
    for (const std::string* file : {&cli.trace_file, &cli.per_layer_file, &cli.report_file})
        on_stdout += *file == kStdoutPath ? 1 : 0;
    if (on_stdout > 1)
        throw UsageError({"-", std::nullopt, {}}, "only one of --json, --trace, --per-layer and --report can go to stdout");
    return on_stdout == 1 && !as_json;
}

int run_run(const std::string& path, const LoadOptions& options, const RunCliOptions& cli, bool as_json) {
    const auto model = load_model(path, options);
    if (cli.output_files.size() > model->outputs.size())
        throw Error({"--output", std::nullopt, {}},
                    fmt::format("{} output files for the model's {} outputs", cli.output_files.size(), model->outputs.size()));
    // An operator the host cannot run is reported now, before any input is read or op run.
    if (runs_as_graph(*model)) check_graph(*model, cli.limits);
    std::vector<std::vector<uint8_t>> inputs = read_input_files(*model, cli.input_files);
    const bool stdout_taken = check_run_request(cli, as_json);
    const std::vector<uint32_t> events = pmu_events(model->config, cli.pmu);
    LayerNames names = find_layer_names(path, *model, cli, as_json);
    // A forgotten --input would otherwise pass unnoticed: the run is as valid on zeros.
    for (size_t i = cli.input_files.size(); i < model->inputs.size() && !cli.timing_only; ++i) {
        const TensorInfo& t = model->inputs[i];
        fmt::print(stderr, "ethosu-emu: warning: no --input for input {} ({} {} {}): it holds zeros\n", i,
                   t.name.empty() ? "-" : t.name, shape_text(t.shape), element_type_name(t.type));
    }
    for (const auto& note : choose_system(*model, cli.system).not_followed)
        fmt::print(stderr, "ethosu-emu: warning: {}\n", note);
    const RunResult result = run_whole_model(*model, std::move(inputs),
                                       {.system = cli.system,
                                        .pipeline = {.execute = !cli.timing_only, .timing = !cli.no_timing,
                                                     .decode = {.lenient = cli.lenient}, .limits = cli.limits}});
    for (const auto& stream : result.streams)
        for (const auto& warning : stream.warnings) fmt::print(stderr, "ethosu-emu: warning: {}\n", warning);
    const PmuReading pmu = read_pmu(result.memory, result.timing, events);
    if (names.debug_db) names.debug_db->align_queue_to(result.streams);
    if (names.debug_db && names.debug_db_found) {
        try {
            TracedRun{path, model->config, result.memory, result.streams, result.timing, &*names.debug_db}.check_debug_db();
        } catch (const Error& e) {
            names.drop_found_debug_db(e);
        }
    }
    const std::string system_mismatch = cli.no_timing || model->invocations.empty() ? std::string() : compiled_system_mismatch(*model, result.memory);
    if (!system_mismatch.empty()) fmt::print(stderr, "ethosu-emu: warning: {}\n", system_mismatch);
    std::vector<HostOperator> host_operators;
    for (const CpuOperatorRun& c : result.cpu_operators) host_operators.push_back({c.operator_index, c.name, c.elements});
    const TracedRun traced{path,
                           model->config,
                           result.memory,
                           result.streams,
                           result.timing,
                           names.debug_db ? &*names.debug_db : nullptr,
                           names.vela_per_layer ? &*names.vela_per_layer : nullptr,
                           nullptr,
                           &host_operators,
                           system_mismatch};
    traced.check_debug_db();
    if (!cli.trace_file.empty()) write_chrome_trace(traced, writable_path(cli.trace_file));
    if (!cli.per_layer_file.empty()) write_per_layer_csv(traced, writable_path(cli.per_layer_file));
    if (!cli.report_file.empty()) write_html_report(traced, writable_path(cli.report_file));
    RunReport report{.model = *model, .result = result, .traced = traced, .timing_only = cli.timing_only,
                     .timed = !cli.no_timing, .outputs = json::array(), .report_file = cli.report_file};
    for (size_t i = 0; i < result.outputs.size(); ++i) {
        const std::string& file = report.output_files.emplace_back(
            i < cli.output_files.size() ? cli.output_files[i] : fmt::format("{}.out{}.bin", cli.output_prefix, i));
        write_tensor_file(file, model->outputs[i], result.outputs[i]);
        json t = tensor_json(model->outputs[i]);
        t["file"] = file;
        report.outputs.push_back(t);
    }
    report.timing = cli.no_timing ? json::object() : timing_json(result);
    if (stdout_taken) return 0;  // the file written there is the output
    if (runs_as_graph(*model)) report.operators = run_operators(result, !cli.no_timing);
    if (!cli.pmu.empty())
        report.pmu = RunPmu{events, pmu, mlek_profile(result.memory, result.timing, model->config, events, pmu)};
    if (as_json) print_run_json(report);
    else print_run_text(report);
    return 0;
}

struct SweepCliOptions {
    std::vector<SweepAxis> axes;  // in command-line order, --vary and --scale interleaved
    std::string csv_file, json_file, plot_file;
    int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
};

int run_sweep_command(const std::string& path, const LoadOptions& options, const SystemSelection& base,
                      const SweepCliOptions& cli, const WorkLimits& limits) {
    if (cli.axes.empty())
        throw UsageError({"--vary", std::nullopt, {}}, "sweep needs at least one --vary or --scale axis");
    const bool svg = cli.plot_file.ends_with(".svg"), html = cli.plot_file.ends_with(".html");
    if (!cli.plot_file.empty() && !svg && !html)
        throw UsageError({"--plot", std::nullopt, cli.plot_file}, "the file name must end in .svg or .html");
    const auto model = load_model(path, options);
    if (model->invocations.empty())
        throw UsageError({path, std::nullopt, {}}, "no ethos-u operator: nothing for the memory system to time");
    for (const auto& note : choose_system(*model, base).not_followed) fmt::print(stderr, "ethosu-emu: warning: {}\n", note);
    const std::vector<SweepResult> results = run_sweep(*model, sweep_points(*model, base, cli.axes), limits, cli.jobs);
    const std::string title = fmt::format("{} on {}", path, model->config.name);
    if (!cli.csv_file.empty()) write_output_file(cli.csv_file, sweep_csv(cli.axes, results), "--csv");
    if (!cli.json_file.empty())
        write_output_file(cli.json_file, sweep_json(*model, cli.axes, results).dump(2) + "\n", "--json");
    if (!cli.plot_file.empty())
        write_output_file(cli.plot_file, svg ? sweep_svg(title, cli.axes, results) : sweep_html(title, cli.axes, results),
                          "--plot");
    // The table unless a file went to stdout in its place.
    if (cli.csv_file != kStdoutPath && cli.json_file != kStdoutPath) fmt::print("{}", sweep_table(cli.axes, results));
    return 0;
}

// Levenshtein distance: insertions, deletions and substitutions.
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            diagonal = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
        }
    }
    return row[b.size()];
}

// The error for a first argument that is no option and no subcommand (CLI11 would say only that
// a subcommand is required), with the nearest subcommand names; empty when the first is fine.
std::string unknown_subcommand_error(CLI::App& app, int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-') return {};
    const std::string given = argv[1];
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::ranges::find(names, given) != names.end()) return {};
    size_t best = std::string::npos;
    for (const auto& n : names) best = std::min(best, edit_distance(given, n));
    std::vector<std::string> near;
    // A slip of a key or two; a name in which the given one is a prefix.
    for (const auto& n : names)
        if ((edit_distance(given, n) == best && best <= std::max<size_t>(2, given.size() / 3)) || n.starts_with(given))
            near.push_back(n);
    std::string message = fmt::format("unknown command '{}'", given);
    for (auto& n : near) n = "'" + n + "'";
    if (!near.empty()) message += fmt::format("; did you mean {}?", fmt::join(near, " or "));
    return message + fmt::format(" (commands: {})", fmt::join(names, ", "));
}

}  // namespace
}  // namespace ethosu

int main(int argc, char** argv) {
    using namespace ethosu;
#if defined(__GLIBC__)
    // One malloc arena: the weights a worker thread decodes ahead are freed by the main thread, and
    // an arena of the worker's own would keep that memory from the rest of the run.
    mallopt(M_ARENA_MAX, 1);
#endif
    // Called by one of the FVPs' names (the links the build and the install make): the FVP's syntax.
    if (const auto model = fvp_model_named(argv[0])) return run_fvp(*model, argc, argv, ETHOSU_EMU_VERSION);
    CLI::App app{"ethosu-emu: emulator of Arm Ethos-U55/U65/U85 NPUs"};
    app.require_subcommand(1);
    std::string model_path, npu, out_path;
    uint64_t max_stream_words = kDefaultMaxStreamWords;
    bool as_json = false;
    auto add_model_options = [&](CLI::App* cmd) {
        cmd->add_option("MODEL", model_path, "Vela .tflite, Vela raw .npz, ExecuTorch .pte or vela_bin_stream, "
                                             "or a command stream (COP1/COP2 payload, or bare words with --npu)")
            ->required();
        cmd->add_option("--npu", npu, "NPU configuration (Vela name, e.g. ethos-u55-128); default: the model's");
        cmd->add_flag("--json", as_json, "machine-readable output");
        cmd->add_option("--max-stream-words", max_stream_words,
                        fmt::format("refuse command streams longer than this (default {}, 400 times MobileNetV2's)",
                                    kDefaultMaxStreamWords));
    };
    auto* info = app.add_subcommand("info", "NPU config, tensors, regions, streams, commands and ops");
    add_model_options(info);
    auto* disasm = app.add_subcommand("disasm", "one line per command, in the layout of Vela's listing");
    add_model_options(disasm);
    RunCliOptions run_options;
    auto add_system_options = [&](CLI::App* cmd) {
        cmd->add_option("--system-config", run_options.system.system_config,
                        "Vela system configuration (default: the one an ExecuTorch program was compiled for, else Vela's "
                        "for the NPU, e.g. Ethos_U55_High_End_Embedded; "
                        "Ethos_U55_High_End_Corstone300_FVP: the Corstone-300 FVP as Arm's evaluation kit runs it)");
        cmd->add_option("--memory-mode", run_options.system.memory_mode,
                        "Vela memory mode (default: the one an ExecuTorch program was compiled for, else Shared_Sram on "
                        "U55, Dedicated_Sram_384KB on U65/U85)");
        cmd->add_option("--config", run_options.system.config_files,
                        "vela.ini-format file with more System_Config/Memory_Mode sections");
    };
    add_system_options(info);
    // What run and report share: the inputs, the system, the decoding, the traces and the limits.
    auto add_run_options = [&](CLI::App* cmd) {
        add_model_options(cmd);
        cmd->add_option("--input", run_options.input_files,
                        "input tensor file, in the model's input order (omitted: zeros, with a warning): raw bytes, "
                        "or a numpy array of the tensor's dtype and shape (dimensions of 1 aside) if the name ends in "
                        ".npy; repeat it for each input")
            ->allow_extra_args(false);  // one file each, so that a MODEL after it is not taken for an input
        cmd->add_flag("--lenient", run_options.lenient,
                      "run ops that read registers the stream never wrote, reading them as 0 (a warning each); "
                      "by default such a stream is refused");
        cmd->add_option("--pmu", run_options.pmu,
                        "PMU events to count, e.g. NPU_ACTIVE,MAC_ACTIVE or the driver's ETHOSU_PMU_NPU_ACTIVE "
                        "(4 on U55/U65, 8 on U85)")
            ->delimiter(',');
        add_system_options(cmd);
        cmd->add_option("--trace", run_options.trace_file,
                        "write a Chrome/Perfetto trace (Trace Event JSON): one track per NPU unit, bandwidth counters (- for stdout)");
        cmd->add_option("--per-layer", run_options.per_layer_file,
                        "write per-layer cycles, access cycles and MACs as CSV in the columns of Vela's per-layer CSV (- for stdout)");
        cmd->add_option("--debug-db", run_options.debug_db_file,
                        "Vela's model_debug.xml (--enable-debug-db; by default <stem>_debug.xml beside <stem>_vela.tflite): names ops after the original operators and "
                        "groups --per-layer rows by Vela op");
        cmd->add_option("--vela-per-layer", run_options.vela_per_layer_file,
                        "Vela's per-layer CSV (--verbose-performance) to line --per-layer rows up with and compare; "
                        "default: <stem>_per-layer.csv beside <stem>_vela.tflite, when there");
        // Work limits: a hostile stream ends in an error naming the op instead of running for hours.
        WorkLimits& limits = run_options.limits;
        cmd->add_option("--max-op-work", limits.max_op_work, "refuse an op of more work (elements x taps; DMA: bytes; a CPU operator: its MACs or elements in and out)")
            ->capture_default_str();
        cmd->add_option("--max-run-work", limits.max_run_work, "stop a run whose ops add up to more work (a branch loop)")
            ->capture_default_str();
        cmd->add_option("--max-commands", limits.max_commands, "stop a run that executes more commands (a branch loop)")
            ->capture_default_str();
        cmd->add_option("--max-allocation", limits.max_allocation_bytes, "refuse an op needing a buffer of more bytes")
            ->capture_default_str();
    };
    auto* run = app.add_subcommand("run", "execute the model's NPU work bit-exactly; write its outputs");
    add_run_options(run);
    run->add_option("--output", run_options.output_files,
                    "file for the next model output, raw or (name ending in .npy) a numpy array of its dtype and shape")
        ->allow_extra_args(false);
    run->add_option("--output-prefix", run_options.output_prefix,
                    "outputs without an --output file are written to PREFIX.out<k>.bin");
    run->add_flag("--timing-only", run_options.timing_only, "cycles, traffic and traces without computing data");
    run->add_flag("--no-timing", run_options.no_timing, "outputs only, without the cycle estimate");
    run->add_option("--report", run_options.report_file,
                    "write an HTML report: timeline, bandwidth, per-layer table beside Vela's figures, charts");
    auto* report = app.add_subcommand(
        "report", "time the model and write a self-contained HTML report (timeline, per-layer table, charts)");
    add_run_options(report);
    report->add_option("-o,--output", run_options.report_file, "the HTML file to write")->required();
    auto* example = app.add_subcommand("example", "write the bundled example model (an ExecuTorch vela_bin_stream)");
    example->add_option("OUTPUT", out_path, "file to write")->required();
    auto* device_server = app.add_subcommand(
        "device-server", "serve one emulated NPU to a system simulator (QEMU) over a UNIX socket (the device protocol)");
    std::string socket_path;
    DeviceServerOptions server_options;
    device_server->add_option("--socket", socket_path, "the UNIX socket to listen on for the simulator")->required();
    add_system_options(device_server);
    device_server->add_flag("--verbose", server_options.verbose, "print each register access on stderr");
    auto* system = app.add_subcommand(
        "system", "run Cortex-M firmware on QEMU's mps3-an547 with the emulated NPU (UART0 to stdout, semihosting)");
    SystemRunOptions system_options;
    system->add_option("FIRMWARE", system_options.firmware, "the firmware ELF (Corstone-300, Cortex-M55)")->required();
    system->add_option("--npu", system_options.npu, "NPU configuration (Vela name)")->capture_default_str();
    system->add_option("--qemu", system_options.qemu,
                       "qemu-system-arm built by scripts/build-qemu.sh (default: $ETHOSU_QEMU, else its cache)");
    system->add_option("--timeout", system_options.timeout, "stop the firmware after this many seconds (exit 124)");
    SystemFigures& figures = system_options.figures;
    system->add_option("--trace", figures.trace_file,
                       "write a Chrome/Perfetto trace of the NPU over the whole run: every command stream at the cycle "
                       "the firmware started it");
    system->add_option("--per-layer", figures.per_layer_file,
                       "write per-layer cycles, access cycles and MACs of every stream the NPU ran, as run's CSV");
    system->add_option("--report", figures.report_file,
                       "write an HTML report: a table of the inferences, then each distinct stream as run reports it");
    system->add_option("--json", figures.json_file,
                       "write the inferences' cycles, PMU counts, AXI traffic and ops as JSON to FILE ('-': stdout, "
                       "the firmware's UART then on stderr)");
    system->add_option("--pmu", figures.pmu,
                       "PMU events --json counts for each inference besides the firmware's own counters, as run's "
                       "--pmu (e.g. NPU_ACTIVE,MAC_ACTIVE; 4 on U55/U65)")
        ->delimiter(',');
    std::vector<std::string> data_loads;
    system->add_option("--data", data_loads, "load a raw file into guest memory before the firmware starts: FILE@ADDRESS");
    std::string command_line;
    system->add_option("--cmdline", command_line, "the command line the firmware reads with semihosting's SYS_GET_CMDLINE");
    system->add_option("--semihosting-dir", system_options.semihosting_directory,
                       "the directory semihosting opens relative paths in");
    system->add_option("--uart-out", system_options.uart_out, "write UART0's output to this file ('-': stdout)");
    system->add_option("--shutdown-tag", system_options.shutdown_tag,
                       "end the run (exit 0) when UART0 prints this text, as the FVP's uart0.shutdown_tag");
    system->add_flag("--shutdown-on-eot", system_options.shutdown_on_eot,
                     "end the run (exit 0) when UART0 prints EOT (0x04), as the FVP's uart0.shutdown_on_eot");
    add_system_options(system);
    auto* sweep = app.add_subcommand(
        "sweep", "time the model over a grid of memory systems (clock, each memory's latency and bandwidth, memory "
                 "mode) on all cores: a table, CSV, JSON and a plot");
    SweepCliOptions sweep_options;
    sweep->add_option("MODEL", model_path, "the model, as run takes it")->required();
    sweep->add_option("--npu", npu, "NPU configuration (Vela name); default: the model's");
    add_system_options(sweep);
    // Each occurrence parsed as it is met, so that --vary and --scale axes keep their order.
    for (const char* option : {"--vary", "--scale"}) {
        const bool scale = std::string_view(option) == "--scale";
        sweep->add_option_function<std::string>(
                  option, [&sweep_options, option](const std::string& text) {
                      try {
                          sweep_options.axes.push_back(parse_sweep_axis(option, text));
                      } catch (const UsageError& e) {
                          throw CLI::ValidationError(e.what());  // reported as CLI11's own usage errors are
                      }
                  },
                  scale ? "an axis of factors on the base system's value, e.g. OffChipFlash_clock_scale=0.5,1,2 (a memory's "
                          "bandwidth follows its clock_scale)"
                        : "an axis: a vela.ini System_Config or Memory_Mode key and its values, e.g. core_clock=400e6,500e6 "
                          "or axi1_port=Sram,OffChipFlash; system_config=A,B and memory_mode=A,B take whole sections")
            ->trigger_on_parse()
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
    sweep->add_option("--csv", sweep_options.csv_file, "write the table as CSV (- for stdout)");
    sweep->add_option("--json", sweep_options.json_file, "write the points as JSON (- for stdout)");
    sweep->add_option("--plot", sweep_options.plot_file,
                      "write cycles against the first axis, one line per value of the others: FILE.svg or FILE.html");
    sweep->add_option("-j,--jobs", sweep_options.jobs, "points timed at once (default: the hardware threads)");
    const CheckCommands check_commands(app);
    app.set_version_flag("--version", "ethosu-emu " ETHOSU_EMU_VERSION " (commit " ETHOSU_EMU_COMMIT ")");
    if (const std::string unknown = unknown_subcommand_error(app, argc, argv); !unknown.empty()) {
        fmt::print(stderr, "ethosu-emu: error: {} (see ethosu-emu --help)\n", unknown);
        return 2;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help, --version
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // The project's one error format; exit 2 tells a usage error from a refused model (1).
        fmt::print(stderr, "ethosu-emu: error: {} (see ethosu-emu --help)\n", e.what());
        return 2;
    }
    constexpr std::string_view kErrorPrefix = "ethosu-emu: error: ";
    report_shrunk_mapped_files(kErrorPrefix);

    try {
        LoadOptions options;
        if (!npu.empty()) options.npu = npu;
        options.max_stream_words = max_stream_words;
        if (check_commands.selected()) return check_commands.run();
        if (*info) return run_info(model_path, options, run_options.system, as_json);
        if (*disasm) return run_disasm(model_path, options, as_json);
        if (*run) return run_run(model_path, options, run_options, as_json);
        if (*report) {
            // The timing model never reads data: the report's figures are those of a full run.
            run_options.timing_only = true;
            return run_run(model_path, options, run_options, as_json);
        }
        if (*sweep) return run_sweep_command(model_path, options, run_options.system, sweep_options, run_options.limits);
        if (*system) {
            system_options.system = run_options.system;
            for (const std::string& load : data_loads) system_options.data.push_back(parse_data_load(load));
            if (system->count("--cmdline")) system_options.command_line = command_line;
            return run_system(system_options);
        }
        if (*device_server) {
            server_options.system = run_options.system;
            std::string broken;
            try {
                broken = serve_device_at(socket_path, server_options);
            } catch (const std::system_error& e) {
                broken = e.what();
            }
            if (broken.empty()) return 0;
            fmt::print(stderr, "{}device-server: {}\n", kErrorPrefix, broken);
            return 2;
        }
        if (*example) {
            const auto bytes = build_example_model();
            std::ofstream out(out_path, std::ios::binary);
            out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
            if (!out) throw Error({out_path, std::nullopt, {}}, "cannot write file", ErrorKind::Io);
            fmt::print("wrote {} ({} bytes): {}\n", out_path, bytes.size(), kExampleDescription);
            return 0;
        }
    } catch (const UsageError& e) {
        fmt::print(stderr, "{}{}\n", kErrorPrefix, e.what());
        return 2;
    } catch (const Error& e) {
        fmt::print(stderr, "{}{}\n", kErrorPrefix, e.what());
        return 1;
    } catch (const std::bad_alloc&) {
        // The last resort: the loaders and the engine turn the sizes they take from a file into
        // Errors naming the field; this names at least the file and the command.
        fmt::print(stderr, "{}{}\n", kErrorPrefix,
                   format_error({model_path, std::nullopt, app.get_subcommands().front()->get_name()},
                                "an allocation the host cannot satisfy"));
        return 1;
    }
    return 0;
}
