#include "frontend/cli/check.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "emulator/isa/bounded_file.h"
#include "frontend/cli/run_figures.h"
#include "frontend/graph/graph_runner.h"

namespace ethosu {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

// One element as a number; integers sign-extended as their type says.
double element_value(const uint8_t* p, ElementType type) {
    switch (type) {
        case ElementType::Int8: return static_cast<int8_t>(*p);
        case ElementType::Int16: { int16_t v; std::memcpy(&v, p, 2); return v; }
        case ElementType::UInt16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
        case ElementType::Int32: { int32_t v; std::memcpy(&v, p, 4); return v; }
        case ElementType::Int64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
        case ElementType::Float32: { float v; std::memcpy(&v, p, 4); return v; }
        default: return *p;
    }
}

}  // namespace

namespace {

std::string size_mismatch_text(uint64_t actual, uint64_t expected) {
    return fmt::format("{} bytes, the expected file has {}", actual, expected);
}

}  // namespace

OutputComparison compare_output(std::span<const uint8_t> actual, std::span<const uint8_t> expected, ElementType type,
                                const OutputExpectation& expectation) {
    OutputComparison c;
    if (actual.size() != expected.size()) {
        c.size_mismatch = size_mismatch_text(actual.size(), expected.size());
        return c;
    }
    const size_t size = std::max(1, element_size(type));
    const ElementType as = element_size(type) ? type : ElementType::UInt8;
    c.elements = actual.size() / size;
    for (size_t i = 0; i + size <= actual.size(); i += size) {
        if (std::memcmp(&actual[i], &expected[i], size) == 0) continue;
        ++c.differing;
        const double diff = std::fabs(element_value(&actual[i], as) - element_value(&expected[i], as));
        // A NaN on one side only is as far off as can be.
        c.max_abs_diff = std::max(c.max_abs_diff, std::isnan(diff) ? INFINITY : diff);
    }
    const auto& abs_limit = expectation.max_abs_diff;
    const auto& count_limit = expectation.max_differing;
    if (!abs_limit && !count_limit) c.pass = c.differing == 0;
    else c.pass = (!abs_limit || c.max_abs_diff <= *abs_limit) && (!count_limit || c.differing <= *count_limit);
    return c;
}

namespace {

// What an entry's run gives: the outputs with their tensors, the timing figures.
struct EntryRun {
    std::vector<std::vector<uint8_t>> outputs;
    std::vector<TensorInfo> output_tensors;
    json timing;
};

EntryRun run_entry(const ManifestEntry& entry) {
    LoadOptions load;
    if (!entry.npu.empty()) load.npu = entry.npu;
    const auto model = load_model(entry.model, load);
    // A forgotten input would run on zeros and compare against the wrong thing.
    if (entry.inputs.size() != model->inputs.size())
        throw Error({entry.model, std::nullopt, "inputs"},
                    fmt::format("{} input files given; the model has {} inputs", entry.inputs.size(), model->inputs.size()));
    if (entry.outputs.size() > model->outputs.size())
        throw Error({entry.model, std::nullopt, "outputs"},
                    fmt::format("{} expected outputs given; the model has {} outputs", entry.outputs.size(),
                                model->outputs.size()));
    RunResult result = run_whole_model(*model, read_input_files(*model, entry.inputs), {.system = entry.system});
    return {std::move(result.outputs), model->outputs, timing_json(result)};
}

std::string number_text(const json& value) {
    return value.is_number_float() ? fmt::format("{:g}", value.get<double>()) : value.dump();
}

std::string limits_text(const OutputExpectation& e) {
    if (!e.max_abs_diff && !e.max_differing) return "none (exact)";
    std::string text;
    if (e.max_abs_diff) text = fmt::format("max |diff| {:g}", *e.max_abs_diff);
    if (e.max_differing) text += fmt::format("{}{} differing", text.empty() ? "" : ", ", *e.max_differing);
    return text;
}

std::string drift_text(const json& actual, const json& baseline) {
    const double base = baseline.get<double>(), value = actual.get<double>();
    if (base == 0) return value == 0 ? "+0.0%" : "new";
    return fmt::format("{:+.1f}%", (value - base) * 100 / base);
}

EntryResult check_entry(const ManifestEntry& entry) {
    EntryResult r;
    if (!entry.skip.empty()) {
        r.status = EntryResult::Status::Skipped;
        r.problems.push_back(entry.skip);
        return r;
    }
    const auto start = std::chrono::steady_clock::now();
    try {
        const EntryRun run = run_entry(entry);
        for (size_t k = 0; k < entry.outputs.size(); ++k) {
            const OutputExpectation& e = entry.outputs[k];
            if (e.file.empty()) continue;
            // A file of another size is told by its size, without reading more than the output holds.
            std::error_code ec;
            const uint64_t file_size = fs::file_size(e.file, ec);
            OutputComparison c;
            if (!ec && file_size != run.outputs[k].size()) {
                c.size_mismatch = size_mismatch_text(run.outputs[k].size(), file_size);
            } else {
                const std::string bytes = read_bounded_file(e.file, run.outputs[k].size(), "expected output",
                                                            fmt::format("output {} has that many bytes", k));
                c = compare_output(run.outputs[k], std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                                   run.output_tensors[k].type, e);
            }
            c.index = k;
            if (!c.size_mismatch.empty()) r.problems.push_back(fmt::format("output {}: {}", k, c.size_mismatch));
            else if (!c.pass)
                r.problems.push_back(fmt::format("output {}: {} of {} elements differ, max |diff| {:g}; allowed: {}", k,
                                                 c.differing, c.elements, c.max_abs_diff, limits_text(e)));
            r.outputs.push_back(c);
        }
        const json figures = baseline_json(run.timing);
        r.cycles = figures["cycles"].get<int64_t>();
        if (entry.baseline) {
            const double drift = entry.baseline->drift_percent;
            std::map<std::string, json> actual;
            for (auto& f : baseline_figures(figures)) actual[f.name] = f.value;
            for (const Figure& base : baseline_figures(entry.baseline->figures)) {
                FigureComparison c{base, actual.count(base.name) ? actual[base.name] : json(0), false};
                if (base.value.is_string()) {
                    c.pass = c.actual == base.value;
                    if (!c.pass)
                        r.problems.push_back(fmt::format("{}: {} vs baseline {}", base.name, c.actual.dump(), base.value.dump()));
                } else {
                    const double b = base.value.get<double>(), a = c.actual.get<double>();
                    c.pass = std::fabs(a - b) <= b * drift / 100;
                    if (!c.pass)
                        r.problems.push_back(fmt::format("{}: {} vs baseline {} ({}, allowed ±{:g}%)", base.name,
                                                         number_text(c.actual), number_text(base.value),
                                                         drift_text(c.actual, base.value), drift));
                }
                r.figures.push_back(std::move(c));
            }
        }
        r.status = r.problems.empty() ? EntryResult::Status::Pass : EntryResult::Status::Fail;
    } catch (const std::exception& e) {  // ethosu::Error, or an allocation the host cannot make
        r.status = EntryResult::Status::Error;
        r.problems.push_back(e.what());
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

// f(i) for i in [0, n) on `jobs` threads; the results in index order whatever order they finish in.
template <typename F>
auto in_parallel(size_t n, int jobs, F f) {
    std::vector<decltype(f(size_t{0}))> results(n);
    tbb::task_arena arena(std::max(1, jobs));
    arena.execute([&] {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1),
                          [&](const tbb::blocked_range<size_t>& range) {
                              for (size_t i = range.begin(); i < range.end(); ++i) results[i] = f(i);
                          },
                          tbb::simple_partitioner());
    });
    return results;
}

std::string_view status_text(EntryResult::Status s) {
    switch (s) {
        case EntryResult::Status::Pass: return "pass";
        case EntryResult::Status::Fail: return "FAIL";
        case EntryResult::Status::Error: return "ERROR";
        case EntryResult::Status::Skipped: return "skip";
    }
    return "";
}

std::string cycles_text(const EntryResult& r) {
    if (!r.cycles) return "-";
    for (const auto& f : r.figures)
        if (f.baseline.name == "cycles") return fmt::format("{} ({})", *r.cycles, drift_text(f.actual, f.baseline.value));
    return std::to_string(*r.cycles);
}

std::string outputs_text(const EntryResult& r) {
    if (r.status == EntryResult::Status::Skipped) return r.problems.front();
    std::string text;
    for (const auto& c : r.outputs) {
        text += fmt::format("{}out{} ", text.empty() ? "" : ", ", c.index);
        if (!c.size_mismatch.empty()) text += "size differs";
        else if (c.differing == 0) text += "exact";
        else text += fmt::format("{}/{} differ, max {:g}", c.differing, c.elements, c.max_abs_diff);
    }
    return text.empty() ? "-" : text;
}

struct Counts {
    size_t passed = 0, failed = 0, errors = 0, skipped = 0;
    double seconds = 0;
};

Counts count(const std::vector<EntryResult>& results) {
    Counts c;
    for (const auto& r : results) {
        c.seconds += r.seconds;
        switch (r.status) {
            case EntryResult::Status::Pass: ++c.passed; break;
            case EntryResult::Status::Fail: ++c.failed; break;
            case EntryResult::Status::Error: ++c.errors; break;
            case EntryResult::Status::Skipped: ++c.skipped; break;
        }
    }
    return c;
}

std::string counts_text(const Counts& c, size_t entries) {
    return fmt::format("{} {}: {} passed, {} failed, {} errors, {} skipped", entries, entries == 1 ? "entry" : "entries",
                       c.passed, c.failed, c.errors, c.skipped);
}

bool failed(const EntryResult& r) {
    return r.status == EntryResult::Status::Fail || r.status == EntryResult::Status::Error;
}

void print_text(const Manifest& m, const std::vector<EntryResult>& results) {
    size_t name_width = 5, cycles_width = 10;
    for (size_t i = 0; i < results.size(); ++i) {
        name_width = std::max(name_width, m.entries[i].name.size());
        cycles_width = std::max(cycles_width, cycles_text(results[i]).size());
    }
    fmt::print("{:<{}}  {:<6} {:<{}}  {}\n", "ENTRY", name_width, "RESULT", "NPU CYCLES", cycles_width, "OUTPUTS");
    for (size_t i = 0; i < results.size(); ++i) {
        const EntryResult& r = results[i];
        fmt::print("{:<{}}  {:<6} {:<{}}  {}\n", m.entries[i].name, name_width, status_text(r.status), cycles_text(r),
                   cycles_width, outputs_text(r));
        if (failed(r))
            for (const auto& p : r.problems) fmt::print("    {}\n", p);
    }
    fmt::print("{} ({})\n", counts_text(count(results), results.size()), m.label);
}

std::string markdown_cell(std::string text) {
    for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

void write_markdown(const Manifest& m, const std::vector<EntryResult>& results, const std::string& path) {
    std::ofstream out(path);
    out << fmt::format("## ethosu-emu check: {}\n\n**{}**\n\n", markdown_cell(m.label),
                       counts_text(count(results), results.size()));
    out << "| entry | result | NPU cycles | outputs | problems |\n| --- | --- | --- | --- | --- |\n";
    for (size_t i = 0; i < results.size(); ++i) {
        const EntryResult& r = results[i];
        std::string problems;
        if (failed(r))
            for (const auto& p : r.problems) problems += (problems.empty() ? "" : "; ") + p;
        out << fmt::format("| {} | {} | {} | {} | {} |\n", markdown_cell(m.entries[i].name),
                           failed(r) ? fmt::format("**{}**", status_text(r.status)) : std::string(status_text(r.status)),
                           cycles_text(r), markdown_cell(outputs_text(r)), markdown_cell(problems));
    }
    if (!out) throw Error({path, std::nullopt, "--markdown"}, "cannot write file", ErrorKind::Io);
}

std::string xml_escape(std::string_view text) {
    std::string out;
    for (const char ch : text) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default:
                // XML 1.0 has no other control characters than tab, newline and return.
                if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\n' || ch == '\t' || ch == '\r') out += ch;
        }
    }
    return out;
}

// JUnit XML as GitLab, GitHub's test reporters and Jenkins read it: one testsuite, one testcase
// per entry, <failure>/<error>/<skipped> with the figures in the message.
void write_junit(const Manifest& m, const std::vector<EntryResult>& results, const std::string& path) {
    const Counts c = count(results);
    std::ofstream out(path);
    const std::string totals = fmt::format(R"(tests="{}" failures="{}" errors="{}" skipped="{}" time="{:.3f}")",
                                           results.size(), c.failed, c.errors, c.skipped, c.seconds);
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << fmt::format("<testsuites name=\"ethosu-emu check\" {}>\n", totals);
    out << fmt::format("  <testsuite name=\"{}\" {}>\n", xml_escape(m.label), totals);
    for (size_t i = 0; i < results.size(); ++i) {
        const EntryResult& r = results[i];
        out << fmt::format("    <testcase name=\"{}\" classname=\"ethosu-emu.check\" time=\"{:.3f}\"",
                           xml_escape(m.entries[i].name), r.seconds);
        std::string all;
        for (const auto& p : r.problems) all += p + "\n";
        const std::string first = r.problems.empty() ? "" : xml_escape(r.problems.front());
        switch (r.status) {
            case EntryResult::Status::Pass:
                out << fmt::format(">\n      <system-out>{}; NPU cycles {}</system-out>\n    </testcase>\n",
                                   xml_escape(outputs_text(r)), cycles_text(r));
                break;
            case EntryResult::Status::Skipped:
                out << fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", first);
                break;
            case EntryResult::Status::Fail:
            case EntryResult::Status::Error: {
                const char* tag = r.status == EntryResult::Status::Fail ? "failure" : "error";
                out << fmt::format(">\n      <{} message=\"{}\" type=\"{}\">{}</{}>\n    </testcase>\n", tag, first,
                                   tag, xml_escape(all), tag);
                break;
            }
        }
    }
    out << "  </testsuite>\n</testsuites>\n";
    if (!out) throw Error({path, std::nullopt, "--junit"}, "cannot write file", ErrorKind::Io);
}

}  // namespace

struct CheckCommands::Options {
    // check MODEL ... and baseline MODEL ...: the model, how to run it.
    std::string model;
    std::vector<std::string> inputs;
    std::string npu, system_config, memory_mode;
    std::vector<std::string> config_files;
    std::string manifest;
    int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // check
    std::vector<std::string> expected;
    std::optional<double> max_abs_diff;
    std::optional<uint64_t> max_differing;
    std::string markdown_file, junit_file;
    // baseline
    std::string name;
    double drift_percent = 0;
    bool update = false;
};

CheckCommands::CheckCommands(CLI::App& app) : options_(std::make_unique<Options>()) {
    Options& o = *options_;
    check_ = app.add_subcommand("check", "run models and compare their outputs and NPU figures with expectations");
    baseline_ = app.add_subcommand("baseline", "write a check manifest (outputs, NPU cycles and traffic) from runs");
    for (CLI::App* cmd : {check_, baseline_}) {
        cmd->add_option("MODEL", o.model, "model to run (instead of a manifest's entries)");
        cmd->add_option("--input", o.inputs, "the model's raw input tensor files, in its input order");
        cmd->add_option("--npu", o.npu, "NPU configuration (Vela name); default: the model's");
        cmd->add_option("--system-config", o.system_config, "Vela system configuration, as run takes it");
        cmd->add_option("--memory-mode", o.memory_mode, "Vela memory mode, as run takes it");
        cmd->add_option("--config", o.config_files, "vela.ini-format file, as run takes it");
        cmd->add_option("-j,--jobs", o.jobs, "entries run at once (default: the hardware threads)")
            ->check(CLI::PositiveNumber);
    }
    check_->add_option("--manifest", o.manifest, "manifest of the entries to check (JSON, see the README)");
    check_->add_option("--expect", o.expected, "expected raw output tensor file, in the model's output order");
    check_->add_option("--max-abs-diff", o.max_abs_diff, "with MODEL: the largest |difference| an element may have")
        ->check(CLI::NonNegativeNumber);
    check_->add_option("--max-differing", o.max_differing, "with MODEL: how many elements of an output may differ");
    check_->add_option("--markdown", o.markdown_file, "also write the summary as a Markdown table");
    check_->add_option("--junit", o.junit_file, "also write the results as JUnit XML (one testcase per entry)");
    baseline_->add_option("--manifest", o.manifest, "manifest to add the entry to (created if absent) or --update")
        ->required();
    baseline_->add_option("--name", o.name, "the entry's name (default: the model's path in the manifest)");
    baseline_->add_option("--drift", o.drift_percent, "allowed drift of each figure, percent (default 0: exact)")
        ->check(CLI::NonNegativeNumber);
    baseline_->add_flag("--update", o.update, "rerun every entry of the manifest and rewrite its baseline figures");
}

CheckCommands::~CheckCommands() = default;

bool CheckCommands::selected() const { return check_->parsed() || baseline_->parsed(); }

namespace {

const std::string kCommandLine = "command line";

// The command line's MODEL and run options as one manifest entry: paths as the manifest in
// `folder` names them, or as given when there is no manifest file (nullopt).
json entry_json(const CheckCommands::Options& o, const std::optional<fs::path>& manifest_folder) {
    const auto as_written = [&](const std::string& path) {
        return manifest_folder ? path_in_manifest(path, *manifest_folder) : path;
    };
    json entry = json::object();
    if (!o.name.empty()) entry["name"] = o.name;
    entry["model"] = as_written(o.model);
    if (!o.npu.empty()) entry["npu"] = o.npu;
    if (!o.system_config.empty()) entry["system_config"] = o.system_config;
    if (!o.memory_mode.empty()) entry["memory_mode"] = o.memory_mode;
    if (!o.config_files.empty()) {
        entry["config"] = json::array();
        for (const auto& f : o.config_files) entry["config"].push_back(as_written(f));
    }
    entry["inputs"] = json::array();
    for (const auto& f : o.inputs) entry["inputs"].push_back(as_written(f));
    return entry;
}

bool has_run_options(const CheckCommands::Options& o) {
    return !o.inputs.empty() || !o.npu.empty() || !o.system_config.empty() || !o.memory_mode.empty() ||
           !o.config_files.empty();
}

// A name as part of a file name: letters, digits, '.', '-' and '_' kept, the rest '_'.
std::string file_stem(const std::string& name) {
    std::string stem = name;
    for (char& ch : stem)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-' && ch != '_') ch = '_';
    return stem;
}

int run_check(const CheckCommands::Options& o) {
    const bool one_model = !o.model.empty();
    if (one_model == !o.manifest.empty())
        throw UsageError({"check", std::nullopt, {}}, "give either MODEL (with --input and --expect) or --manifest");
    Manifest manifest;
    if (one_model) {
        json entry = entry_json(o, std::nullopt);
        entry["outputs"] = json::array();
        for (const auto& f : o.expected) {
            json out = {{"file", f}};
            if (o.max_abs_diff) out["max_abs_diff"] = *o.max_abs_diff;
            if (o.max_differing) out["max_differing"] = *o.max_differing;
            entry["outputs"].push_back(out);
        }
        json document = empty_manifest_document();
        document["entries"].push_back(entry);
        manifest = parse_manifest(document, kCommandLine, {});
    } else {
        if (has_run_options(o) || !o.expected.empty() || o.max_abs_diff || o.max_differing)
            throw UsageError({"check", std::nullopt, "--manifest"},
                             "--input, --expect, --npu, --system-config, --memory-mode, --config and the tolerances "
                             "go with MODEL; a manifest holds them per entry");
        manifest = read_manifest(o.manifest);
    }
    for (size_t i = 0; i < manifest.entries.size(); ++i) {
        const ManifestEntry& e = manifest.entries[i];
        const bool compares = std::any_of(e.outputs.begin(), e.outputs.end(), [](const auto& x) { return !x.file.empty(); });
        if (e.skip.empty() && !compares && !e.baseline)
            throw UsageError({manifest.label, std::nullopt, fmt::format("entries[{}]", i)},
                             one_model ? "nothing to check: give --expect" : "nothing to check: give outputs or a baseline");
    }
    const auto results = in_parallel(manifest.entries.size(), o.jobs, [&](size_t i) { return check_entry(manifest.entries[i]); });
    print_text(manifest, results);
    if (!o.markdown_file.empty()) write_markdown(manifest, results, o.markdown_file);
    if (!o.junit_file.empty()) write_junit(manifest, results, o.junit_file);
    return std::any_of(results.begin(), results.end(), failed) ? 1 : 0;
}

json baseline_object(const json& timing, double drift_percent) {
    json baseline = {{"drift_percent", drift_percent}};
    baseline.update(baseline_json(timing));
    return baseline;
}

// Reruns every entry and rewrites its baseline's figures (its drift kept; --drift for new ones).
int update_baselines(const CheckCommands::Options& o) {
    if (!o.model.empty() || has_run_options(o) || !o.name.empty())
        throw UsageError({"baseline", std::nullopt, "--update"}, "--update reruns the manifest's entries as they are; "
                                                                   "it takes no MODEL or run options");
    Manifest manifest = read_manifest(o.manifest);
    struct Outcome {
        json timing;
        std::string error;
    };
    const auto outcomes = in_parallel(manifest.entries.size(), o.jobs, [&](size_t i) -> Outcome {
        if (!manifest.entries[i].skip.empty()) return {};
        try {
            return {run_entry(manifest.entries[i]).timing, {}};
        } catch (const std::exception& e) {
            return {{}, e.what()};
        }
    });
    size_t updated = 0;
    for (size_t i = 0; i < outcomes.size(); ++i) {
        if (!outcomes[i].error.empty())
            throw Error({manifest.label, std::nullopt, fmt::format("entries[{}] ({})", i, manifest.entries[i].name)},
                        outcomes[i].error + "; the manifest is left as it was");
        if (outcomes[i].timing.is_null()) continue;
        json& entry = manifest.document["entries"][i];
        const double drift = manifest.entries[i].baseline ? manifest.entries[i].baseline->drift_percent : o.drift_percent;
        entry["baseline"] = baseline_object(outcomes[i].timing, drift);
        ++updated;
    }
    write_manifest(manifest.document, o.manifest);
    fmt::print("{}: the baselines of {} entries rewritten ({} skipped)\n", o.manifest, updated,
               manifest.entries.size() - updated);
    return 0;
}

// Runs MODEL, writes its outputs next to the manifest and adds (or replaces) its entry.
int add_baseline_entry(const CheckCommands::Options& o) {
    if (o.model.empty()) throw UsageError({"baseline", std::nullopt, "MODEL"}, "give a MODEL to add, or --update");
    const fs::path folder = fs::path(o.manifest).parent_path();
    std::error_code ec;
    json document = fs::exists(o.manifest, ec) ? read_manifest(o.manifest).document : empty_manifest_document();
    // The manifest's paths resolve through its folder; a write below names it if this failed.
    if (!folder.empty()) fs::create_directories(folder, ec);
    json entry = entry_json(o, folder);
    const std::string name = entry.value("name", entry["model"].get<std::string>());
    json one = empty_manifest_document();
    one["entries"].push_back(entry);
    const Manifest parsed = parse_manifest(one, kCommandLine, folder);
    const EntryRun run = run_entry(parsed.entries.front());
    entry["outputs"] = json::array();
    for (size_t k = 0; k < run.outputs.size(); ++k) {
        const std::string file = fmt::format("{}.out{}.bin", file_stem(name), k);
        const fs::path path = folder / file;
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(run.outputs[k].data()), static_cast<std::streamsize>(run.outputs[k].size()));
        if (!out) throw Error({path.string(), std::nullopt, {}}, "cannot write file", ErrorKind::Io);
        entry["outputs"].push_back(file);
    }
    entry["baseline"] = baseline_object(run.timing, o.drift_percent);
    json& entries = document["entries"];
    const auto same = std::find_if(entries.begin(), entries.end(), [&](const json& e) {
        return e.value("name", e.value("model", json()).get<std::string>()) == name;
    });
    const bool replaced = same != entries.end();
    if (replaced) *same = entry;
    else entries.push_back(entry);
    parse_manifest(document, o.manifest, folder);  // what is written can be read back
    write_manifest(document, o.manifest);
    fmt::print("{}: entry {:?} {}: {} outputs ({}.out<k>.bin), {} NPU cycles\n", o.manifest, name,
               replaced ? "replaced" : "added", run.outputs.size(), (folder / file_stem(name)).string(),
               entry["baseline"]["cycles"].get<int64_t>());
    return 0;
}

}  // namespace

int CheckCommands::run() const {
    if (check_->parsed()) return run_check(*options_);
    return options_->update ? update_baselines(*options_) : add_baseline_entry(*options_);
}

}  // namespace ethosu
