// ethosu-emu: command-line front end.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "emulator/isa/disasm.h"
#include "emulator/isa/error.h"
#include "frontend/cli/example_model.h"
#include "frontend/cli/run_model.h"
#include "frontend/loaders/model.h"

namespace ethosu {
namespace {

using json = nlohmann::ordered_json;

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
    return s + "]";
}

json tensor_json(const TensorInfo& t) {
    return {{"name", t.name}, {"shape", t.shape}, {"type", element_type_name(t.type)}, {"region", t.region},
            {"offset", t.offset}, {"bytes", t.size_bytes}};
}

void print_tensors(const char* title, const std::vector<TensorInfo>& tensors) {
    fmt::print("{}:\n", title);
    for (size_t i = 0; i < tensors.size(); ++i) {
        const auto& t = tensors[i];
        fmt::print("  [{}] {} {} {}  region {} offset 0x{:x} ({} bytes)\n", i, t.name.empty() ? "-" : t.name,
                   shape_text(t.shape), element_type_name(t.type), t.region, t.offset, t.size_bytes);
    }
}

int run_info(const std::string& path, const LoadOptions& options, bool as_json) {
    const auto model = load_model(path, options);
    json streams = json::array();
    size_t total_commands = 0, total_ops = 0;
    for (size_t i = 0; i < model->invocations.size(); ++i) {
        const auto& inv = model->invocations[i];
        const auto decoded = decode_stream(model->config, inv.stream.words, path);
        total_commands += decoded.command_count;
        total_ops += decoded.ops.size();
        std::map<std::string, int> kinds;
        for (const auto& op : decoded.ops) ++kinds[std::string(op_kind_name(op.kind))];
        json regions = json::array();
        for (const auto& r : inv.regions)
            regions.push_back({{"index", r.index}, {"role", r.role}, {"size", r.size}, {"initialised", r.bytes.size()}});
        streams.push_back({{"payload", inv.stream.payload_kind}, {"words", inv.stream.words.size()},
                           {"commands", decoded.command_count}, {"ops", decoded.ops.size()}, {"op_kinds", kinds},
                           {"regions", regions}, {"warnings", decoded.warnings}});
    }
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
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    fmt::print("model:    {} ({})\n", path, model_format_name(model->format));
    fmt::print("npu:      {} ({} MACs/cycle, CONFIG 0x{:08x})\n", model->config.name, model->config.macs,
               model->config.config_word);
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
    return 0;
}

int run_disasm(const std::string& path, const LoadOptions& options, bool as_json) {
    const auto model = load_model(path, options);
    json out = json::array();
    for (size_t s = 0; s < model->invocations.size(); ++s) {
        const auto& words = model->invocations[s].stream.words;
        const auto commands = disassemble_stream(model->config.generation, words, path);
        if (!as_json) fmt::print("// stream {}: {} ({} words)\n", s, model->config.name, words.size());
        for (const auto& c : commands) {
            if (!as_json) {
                fmt::print("{}\n", format_listing_line(c));
                continue;
            }
            json fields = json::object();
            for (const auto& f : c.fields) {
                if (!f.enum_value.empty()) fields[std::string(f.name)] = f.enum_value;
                else fields[std::string(f.name)] = f.value;
            }
            out.push_back({{"stream", s}, {"offset", c.offset}, {"name", c.name}, {"param", c.param},
                           {"payload", c.payload ? json(*c.payload) : json(nullptr)}, {"fields", fields}});
        }
    }
    if (as_json) std::cout << out.dump(1) << "\n";
    return 0;
}

std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error({path, std::nullopt, {}}, "cannot open file");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int run_run(const std::string& path, const LoadOptions& options, const std::vector<std::string>& input_files,
            const std::string& output_prefix, bool as_json) {
    const auto model = load_model(path, options);
    std::vector<std::vector<uint8_t>> inputs;
    for (const auto& f : input_files) inputs.push_back(read_file(f));
    const RunResult result = run_model(*model, inputs);
    json outputs = json::array();
    for (size_t i = 0; i < result.outputs.size(); ++i) {
        const std::string file = fmt::format("{}.out{}.bin", output_prefix, i);
        std::ofstream out(file, std::ios::binary);
        out.write(reinterpret_cast<const char*>(result.outputs[i].data()),
                  static_cast<std::streamsize>(result.outputs[i].size()));
        if (!out) throw Error({file, std::nullopt, {}}, "cannot write file");
        json t = tensor_json(model->outputs[i]);
        t["file"] = file;
        outputs.push_back(t);
    }
    if (!as_json) {
        size_t ops = 0;
        for (const auto& s : result.streams) ops += s.ops.size();
        fmt::print("{}: {} ops on {}; wrote {} outputs to {}.out<k>.bin\n", path, ops, model->config.name,
                   result.outputs.size(), output_prefix);
        return 0;
    }
    json ops = json::array();
    for (const auto& s : result.streams)
        for (const auto& op : s.ops)
            ops.push_back({{"offset", op.offset}, {"kind", op_kind_name(op.kind)}});
    json out = {{"model", path}, {"npu", model->config.name}, {"outputs", outputs}, {"ops", ops}};
    std::cout << out.dump(2) << "\n";
    return 0;
}

}  // namespace
}  // namespace ethosu

int main(int argc, char** argv) {
    using namespace ethosu;
    CLI::App app{"ethosu-emu: emulator of Arm Ethos-U55/U65/U85 NPUs"};
    app.require_subcommand(1);
    std::string model_path, npu, out_path;
    bool as_json = false;
    auto add_model_options = [&](CLI::App* cmd) {
        cmd->add_option("MODEL", model_path, "Vela .tflite, Vela raw .npz, ExecuTorch vela_bin_stream, or a "
                                             "command stream (COP1/COP2 payload or bare words; needs --npu)")
            ->required();
        cmd->add_option("--npu", npu, "NPU configuration (Vela name, e.g. ethos-u55-128); default: the model's");
        cmd->add_flag("--json", as_json, "machine-readable output");
    };
    auto* info = app.add_subcommand("info", "NPU config, tensors, regions, streams, commands and ops");
    add_model_options(info);
    auto* disasm = app.add_subcommand("disasm", "one line per command, in the layout of Vela's listing");
    add_model_options(disasm);
    auto* run = app.add_subcommand("run", "execute the model's NPU work bit-exactly; write its outputs");
    add_model_options(run);
    std::vector<std::string> input_files;
    std::string output_prefix = "out";
    run->add_option("--input", input_files, "raw input tensor file, in the model's input order (omitted: zeros)");
    run->add_option("--output-prefix", output_prefix, "outputs are written to PREFIX.out<k>.bin");
    auto* example = app.add_subcommand("example", "write the bundled example model (an ExecuTorch vela_bin_stream)");
    example->add_option("OUTPUT", out_path, "file to write")->required();
    CLI11_PARSE(app, argc, argv);

    try {
        LoadOptions options;
        if (!npu.empty()) options.npu = npu;
        if (*info) return run_info(model_path, options, as_json);
        if (*disasm) return run_disasm(model_path, options, as_json);
        if (*run) return run_run(model_path, options, input_files, output_prefix, as_json);
        if (*example) {
            const auto bytes = build_example_model();
            std::ofstream out(out_path, std::ios::binary);
            out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
            if (!out) throw Error({out_path, std::nullopt, {}}, "cannot write file");
            fmt::print("wrote {} ({} bytes): {}\n", out_path, bytes.size(), kExampleDescription);
            return 0;
        }
    } catch (const Error& e) {
        fmt::print(stderr, "ethosu-emu: error: {}\n", e.what());
        return 1;
    }
    return 0;
}
