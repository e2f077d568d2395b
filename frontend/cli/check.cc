#include "frontend/cli/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <variant>

#include "emulator/isa/bounded_file.h"
#include "frontend/cli/run_figures.h"
#include "frontend/cli/tensor_files.h"
#include "frontend/graph/graph_runner.h"
#include "traces/per_layer_csv.h"
#include "traces/vela_per_layer.h"

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
        const double got = element_value(&actual[i], as), want = element_value(&expected[i], as);
        if (c.first_differences.size() < OutputComparison::kFirstDifferences)
            c.first_differences.push_back({i / size, got, want});
        const double diff = std::fabs(got - want);
        // A NaN on one side only is as far off as can be.
        c.max_abs_diff = std::max(c.max_abs_diff, std::isnan(diff) ? INFINITY : diff);
    }
    const auto& abs_limit = expectation.max_abs_diff;
    const auto& count_limit = expectation.max_differing;
    if (!abs_limit && !count_limit) c.pass = c.differing == 0;
    else c.pass = (!abs_limit || c.max_abs_diff <= *abs_limit) && (!count_limit || c.differing <= *count_limit);
    return c;
}

std::string element_coordinates(uint64_t index, const std::vector<int64_t>& shape) {
    uint64_t elements = 1;
    for (const int64_t d : shape) elements *= static_cast<uint64_t>(std::max<int64_t>(d, 1));
    if (shape.empty() || index >= elements) return fmt::format("[{}]", index);
    std::vector<int64_t> at(shape.size());
    for (size_t k = shape.size(); k-- > 0;) {
        const auto d = static_cast<uint64_t>(std::max<int64_t>(shape[k], 1));
        at[k] = static_cast<int64_t>(index % d);
        index /= d;
    }
    return fmt::format("[{}]", fmt::join(at, ","));
}

size_t shard_of(const std::string& entry_name, size_t count) {
    // FNV-1a: the same on every host and compiler, unlike std::hash.
    uint64_t hash = 14695981039346656037ull;
    for (const char ch : entry_name) hash = (hash ^ static_cast<uint8_t>(ch)) * 1099511628211ull;
    return static_cast<size_t>(hash % count) + 1;
}

namespace {

// What an entry's run gives: the outputs with their tensors, the timing figures, the cycles per
// layer of its per-layer table.
struct EntryRun {
    std::vector<std::vector<uint8_t>> outputs;
    std::vector<TensorInfo> output_tensors;
    json timing;
    std::vector<LayerCycles> layers;
};

// The run's per-layer rows (Vela's, when its per-layer report is beside the model) as names and
// cycles.
std::vector<LayerCycles> layer_cycles(const std::string& model_path, const LoadedModel& model, const RunResult& result) {
    if (result.streams.empty()) return {};  // wholly on the CPU: no NPU layers (and Vela's report is empty)
    const auto vela = find_vela_per_layer(model_path, "", command_stream_bytes(model));
    const TracedRun traced{model_path, model.config, result.memory, result.streams, result.timing, nullptr,
                           vela ? &*vela : nullptr};
    std::vector<LayerCycles> layers;
    for (const PerLayerRow& row : per_layer_rows(traced))
        layers.push_back({row.name.empty() ? row.op : row.name, row.op_cycles});
    return layers;
}

EntryRun run_entry(const ManifestEntry& entry) {
    LoadOptions load;
    if (!entry.npu.empty()) load.npu = entry.npu;
    const auto model = load_model(entry.model, load);
    if (!model->compiled_for_npu && !entry.allow_cpu_only)
        throw Error({entry.model, std::nullopt, {}},
                    "has no NPU operator and no NPU compiler wrote it (not compiled by Vela?): it would run on the "
                    "host's kernels alone; compile it with Vela, or allow it (--allow-cpu-only, or "
                    "\"allow_cpu_only\": true in the manifest)");
    // A forgotten input would run on zeros and compare against the wrong thing.
    if (entry.inputs.size() != model->inputs.size())
        throw Error({entry.model, std::nullopt, "inputs"},
                    fmt::format("{} input files given; the model has {} inputs", entry.inputs.size(), model->inputs.size()));
    if (entry.outputs.size() > model->outputs.size())
        throw Error({entry.model, std::nullopt, "outputs"},
                    fmt::format("{} expected outputs given; the model has {} outputs", entry.outputs.size(),
                                model->outputs.size()));
    RunResult result = run_whole_model(*model, read_input_files(*model, entry.inputs), {.system = entry.system});
    std::vector<LayerCycles> layers = layer_cycles(entry.model, *model, result);
    return {std::move(result.outputs), model->outputs, timing_json(result), std::move(layers)};
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

std::string differences_text(const OutputComparison& c, const std::vector<int64_t>& shape) {
    std::string text;
    for (const ElementDifference& d : c.first_differences)
        text += fmt::format("{}{} got {:g}, expected {:g}", text.empty() ? "" : "; ", element_coordinates(d.element, shape),
                            d.got, d.expected);
    return text;
}

// The expected bytes of output `k`: an .npy of its type and shape, or a raw file (one of another
// size is told by its size, without reading more than the output holds).
std::variant<std::vector<uint8_t>, std::string> expected_output(const OutputExpectation& e, const TensorInfo& tensor,
                                                                size_t k, uint64_t actual_size) {
    if (is_npy_path(e.file)) return read_tensor_file(e.file, tensor, k, TensorFileRole::ExpectedOutput);
    std::error_code ec;
    const uint64_t file_size = fs::file_size(e.file, ec);
    if (!ec && file_size != actual_size) return size_mismatch_text(actual_size, file_size);
    const std::string bytes = read_bounded_file(e.file, actual_size, "expected output",
                                                fmt::format("output {} has that many bytes", k));
    return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

// The layers whose cycles moved most from the baseline's, matched by position when the layers
// are the same ones, else by name: "conv2d_3 1200 -> 1500 (+300)".
std::string moved_layers_text(const std::vector<LayerCycles>& baseline, const std::vector<LayerCycles>& actual) {
    constexpr size_t kShown = 3;
    struct Move {
        std::string name;
        int64_t before, after;
    };
    std::vector<Move> moves;
    const bool same_layers = baseline.size() == actual.size() &&
                             std::equal(baseline.begin(), baseline.end(), actual.begin(),
                                        [](const auto& a, const auto& b) { return a.name == b.name; });
    if (same_layers) {
        for (size_t i = 0; i < actual.size(); ++i)
            moves.push_back({fmt::format("layer {} {}", i, actual[i].name), baseline[i].cycles, actual[i].cycles});
    } else {
        std::map<std::string, int64_t> before;
        for (const auto& l : baseline) before[l.name] += l.cycles;
        std::map<std::string, int64_t> after;
        for (const auto& l : actual) after[l.name] += l.cycles;
        for (const auto& [name, cycles] : after) moves.push_back({name, before.count(name) ? before[name] : 0, cycles});
        for (const auto& [name, cycles] : before)
            if (!after.count(name)) moves.push_back({name, cycles, 0});
    }
    std::stable_sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
        return std::llabs(a.after - a.before) > std::llabs(b.after - b.before);
    });
    std::string text;
    for (size_t i = 0; i < moves.size() && i < kShown && moves[i].after != moves[i].before; ++i)
        text += fmt::format("{}{} {} -> {} ({:+})", text.empty() ? "" : "; ", moves[i].name, moves[i].before,
                            moves[i].after, moves[i].after - moves[i].before);
    return text;
}

void compare_figures(const Baseline& baseline, const EntryRun& run, bool allow_faster, EntryResult& r) {
    const double drift = baseline.drift_percent;
    allow_faster = allow_faster || baseline.allow_faster;
    std::map<std::string, json> actual;
    for (auto& f : baseline_figures(baseline_json(run.timing))) actual[f.name] = f.value;
    for (const Figure& base : baseline_figures(baseline.figures)) {
        FigureComparison c{base, actual.count(base.name) ? actual[base.name] : json(0), false};
        if (base.value.is_string()) {
            c.pass = c.actual == base.value;
            if (!c.pass) r.problems.push_back(fmt::format("{}: {} vs baseline {}", base.name, c.actual.dump(), base.value.dump()));
        } else {
            const double b = base.value.get<double>(), a = c.actual.get<double>();
            c.pass = std::fabs(a - b) <= b * drift / 100 || (allow_faster && a < b);
            if (!c.pass) {
                std::string problem = fmt::format("{}: {} vs baseline {} ({}, allowed ±{:g}%{})", base.name,
                                                  number_text(c.actual), number_text(base.value),
                                                  drift_text(c.actual, base.value), drift,
                                                  allow_faster ? " or fewer" : "");
                if (base.name == "cycles" && !baseline.layers.empty()) {
                    const std::string moved = moved_layers_text(baseline.layers, run.layers);
                    if (!moved.empty()) problem += "; moved most: " + moved;
                }
                r.problems.push_back(std::move(problem));
            }
        }
        r.figures.push_back(std::move(c));
    }
}

EntryResult check_entry(const ManifestEntry& entry, bool allow_faster) {
    EntryResult r;
    r.name = entry.name;
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
            const TensorInfo& tensor = run.output_tensors[k];
            const auto expected = expected_output(e, tensor, k, run.outputs[k].size());
            OutputComparison c;
            if (const auto* mismatch = std::get_if<std::string>(&expected)) c.size_mismatch = *mismatch;
            else c = compare_output(run.outputs[k], std::get<std::vector<uint8_t>>(expected), tensor.type, e);
            c.index = k;
            if (!c.size_mismatch.empty()) r.problems.push_back(fmt::format("output {}: {}", k, c.size_mismatch));
            else if (!c.pass)
                r.problems.push_back(fmt::format("output {}: {} of {} elements differ, max |diff| {:g} (first: {}); allowed: {}",
                                                 k, c.differing, c.elements, c.max_abs_diff,
                                                 differences_text(c, tensor.shape), limits_text(e)));
            r.outputs.push_back(c);
        }
        r.cycles = run.timing["cycles"]["total"].get<int64_t>();
        if (entry.baseline) compare_figures(*entry.baseline, run, allow_faster, r);
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

void print_text(FILE* out, const std::string& label, const std::vector<EntryResult>& results) {
    size_t name_width = 5, cycles_width = 10;
    for (size_t i = 0; i < results.size(); ++i) {
        name_width = std::max(name_width, results[i].name.size());
        cycles_width = std::max(cycles_width, cycles_text(results[i]).size());
    }
    fmt::print(out, "{:<{}}  {:<6} {:<{}}  {}\n", "ENTRY", name_width, "RESULT", "NPU CYCLES", cycles_width, "OUTPUTS");
    for (size_t i = 0; i < results.size(); ++i) {
        const EntryResult& r = results[i];
        fmt::print(out, "{:<{}}  {:<6} {:<{}}  {}\n", r.name, name_width, status_text(r.status), cycles_text(r),
                   cycles_width, outputs_text(r));
        if (failed(r))
            for (const auto& p : r.problems) fmt::print(out, "    {}\n", p);
    }
    fmt::print(out, "{} ({})\n", counts_text(count(results), results.size()), label);
}

std::string markdown_cell(std::string text) {
    for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

std::string markdown_row(const EntryResult& r) {
    std::string problems;
    if (failed(r))
        for (const auto& p : r.problems) problems += (problems.empty() ? "" : "; ") + p;
    return fmt::format("| {} | {} | {} | {} | {} |\n", markdown_cell(r.name),
                       failed(r) ? fmt::format("**{}**", status_text(r.status)) : std::string(status_text(r.status)),
                       cycles_text(r), markdown_cell(outputs_text(r)), markdown_cell(problems));
}

constexpr std::string_view kMarkdownHeader = "| entry | result | NPU cycles | outputs | problems |\n| --- | --- | --- | --- | --- |\n";

void write_text_file(const std::string& path, const std::string& text, std::string_view option) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw Error({path, std::nullopt, std::string(option)}, "cannot write file", ErrorKind::Io);
}

// Every entry, as a table.
void write_markdown(const std::string& label, const std::vector<EntryResult>& results, const std::string& path) {
    std::string text = fmt::format("## ethosu-emu check: {}\n\n**{}**\n\n", markdown_cell(label),
                                   counts_text(count(results), results.size()));
    text += kMarkdownHeader;
    for (const auto& r : results) text += markdown_row(r);
    write_text_file(path, text, "--markdown");
}

// A pull request's comment: the counts and the failed entries only, within GitHub's 65,536
// characters (the rows that do not fit are counted, not cut in half).
void write_summary_markdown(const std::string& label, const std::vector<EntryResult>& results, const std::string& path,
                            size_t max_chars) {
    const size_t failures = static_cast<size_t>(std::count_if(results.begin(), results.end(), failed));
    std::string text = fmt::format("## ethosu-emu check: {}\n\n**{}**\n", markdown_cell(label),
                                   counts_text(count(results), results.size()));
    if (failures == 0) return write_text_file(path, text, "--summary-md");
    text += fmt::format("\n{}", kMarkdownHeader);
    size_t shown = 0;
    for (const auto& r : results) {
        if (!failed(r)) continue;
        std::string row = markdown_row(r);
        constexpr size_t kRoomForTheLastLine = 120;
        if (text.size() + row.size() + kRoomForTheLastLine > max_chars) break;
        text += row;
        ++shown;
    }
    if (shown < failures)
        text += fmt::format("\n{} more failed entries not shown (the summary is kept under {} characters)\n",
                            failures - shown, max_chars);
    write_text_file(path, text, "--summary-md");
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
void write_junit(const std::string& label, const std::vector<EntryResult>& results, const std::string& path) {
    const Counts c = count(results);
    std::ofstream out(path);
    const std::string totals = fmt::format(R"(tests="{}" failures="{}" errors="{}" skipped="{}" time="{:.3f}")",
                                           results.size(), c.failed, c.errors, c.skipped, c.seconds);
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << fmt::format("<testsuites name=\"ethosu-emu check\" {}>\n", totals);
    out << fmt::format("  <testsuite name=\"{}\" {}>\n", xml_escape(label), totals);
    for (size_t i = 0; i < results.size(); ++i) {
        const EntryResult& r = results[i];
        out << fmt::format("    <testcase name=\"{}\" classname=\"ethosu-emu.check\" time=\"{:.3f}\"",
                           xml_escape(r.name), r.seconds);
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

std::string_view status_key(EntryResult::Status s) {
    switch (s) {
        case EntryResult::Status::Pass: return "pass";
        case EntryResult::Status::Fail: return "fail";
        case EntryResult::Status::Error: return "error";
        case EntryResult::Status::Skipped: return "skipped";
    }
    return "";
}

// JSON has no infinity: a NaN against a number (an infinite difference) is written as null.
json finite_or_null(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

// Where in a summary a value sits, for its errors.
struct SummaryPlace {
    const std::string& label;
    std::string path;
    [[noreturn]] void fail(const std::string& reason) const { throw UsageError({label, std::nullopt, path}, reason); }
    const json& get(const json& object, std::string_view key, bool (json::*is)() const noexcept, std::string_view what) const {
        const std::string at = fmt::format("{}.{}", path, key);
        if (!object.is_object() || !object.contains(key)) SummaryPlace{label, at}.fail("missing");
        const json& value = object[std::string(key)];
        if (!(value.*is)()) SummaryPlace{label, at}.fail(fmt::format("must be {}", what));
        return value;
    }
};

}  // namespace

json entry_result_json(const EntryResult& r) {
    json outputs = json::array();
    for (const OutputComparison& c : r.outputs) {
        json first = json::array();
        for (const auto& d : c.first_differences)
            first.push_back({{"element", d.element}, {"got", finite_or_null(d.got)}, {"expected", finite_or_null(d.expected)}});
        json o = {{"index", c.index},          {"pass", c.pass},
                  {"elements", c.elements},    {"differing", c.differing},
                  {"max_abs_diff", finite_or_null(c.max_abs_diff)}, {"first_differences", first}};
        if (!c.size_mismatch.empty()) o["size_mismatch"] = c.size_mismatch;
        outputs.push_back(o);
    }
    json figures = json::array();
    for (const FigureComparison& f : r.figures)
        figures.push_back({{"name", f.baseline.name}, {"baseline", f.baseline.value}, {"actual", f.actual}, {"pass", f.pass}});
    return {{"name", r.name},
            {"status", status_key(r.status)},
            {"cycles", r.cycles ? json(*r.cycles) : json(nullptr)},
            {"seconds", r.seconds},
            {"problems", r.problems},
            {"outputs", outputs},
            {"figures", figures}};
}

EntryResult entry_result_from_json(const json& entry, const std::string& label, const std::string& at) {
    const SummaryPlace place{label, at};
    if (!entry.is_object()) place.fail("must be an object");
    EntryResult r;
    r.name = place.get(entry, "name", &json::is_string, "a string").get<std::string>();
    const std::string status = place.get(entry, "status", &json::is_string, "a string").get<std::string>();
    const auto statuses = {EntryResult::Status::Pass, EntryResult::Status::Fail, EntryResult::Status::Error,
                           EntryResult::Status::Skipped};
    const auto known = std::find_if(statuses.begin(), statuses.end(), [&](auto s) { return status_key(s) == status; });
    if (known == statuses.end()) SummaryPlace{label, at + ".status"}.fail("must be pass, fail, error or skipped");
    r.status = *known;
    const json& cycles = place.get(entry, "cycles", &json::is_primitive, "an integer or null");
    if (cycles.is_number_integer()) r.cycles = cycles.get<int64_t>();
    else if (!cycles.is_null()) SummaryPlace{label, at + ".cycles"}.fail("must be an integer or null");
    r.seconds = place.get(entry, "seconds", &json::is_number, "a number").get<double>();
    for (const json& p : place.get(entry, "problems", &json::is_array, "a list"))
        r.problems.push_back(p.is_string() ? p.get<std::string>() : p.dump());
    const json& outputs = place.get(entry, "outputs", &json::is_array, "a list");
    for (size_t k = 0; k < outputs.size(); ++k) {
        const SummaryPlace o{label, fmt::format("{}.outputs[{}]", at, k)};
        OutputComparison c;
        c.index = o.get(outputs[k], "index", &json::is_number_unsigned, "a non-negative integer").get<size_t>();
        c.pass = o.get(outputs[k], "pass", &json::is_boolean, "true or false").get<bool>();
        c.elements = o.get(outputs[k], "elements", &json::is_number_unsigned, "a non-negative integer").get<uint64_t>();
        c.differing = o.get(outputs[k], "differing", &json::is_number_unsigned, "a non-negative integer").get<uint64_t>();
        const json& max = o.get(outputs[k], "max_abs_diff", &json::is_primitive, "a number or null");
        c.max_abs_diff = max.is_number() ? max.get<double>() : INFINITY;
        for (const json& d : o.get(outputs[k], "first_differences", &json::is_array, "a list")) {
            const SummaryPlace at_d{label, o.path + ".first_differences"};
            const auto value = [&](std::string_view key) {
                const json& v = at_d.get(d, key, &json::is_primitive, "a number or null");
                return v.is_number() ? v.get<double>() : NAN;
            };
            c.first_differences.push_back(
                {at_d.get(d, "element", &json::is_number_unsigned, "a non-negative integer").get<uint64_t>(), value("got"),
                 value("expected")});
        }
        if (outputs[k].contains("size_mismatch"))
            c.size_mismatch = o.get(outputs[k], "size_mismatch", &json::is_string, "a string").get<std::string>();
        r.outputs.push_back(std::move(c));
    }
    const json& figures = place.get(entry, "figures", &json::is_array, "a list");
    for (size_t k = 0; k < figures.size(); ++k) {
        const SummaryPlace f{label, fmt::format("{}.figures[{}]", at, k)};
        FigureComparison c;
        c.baseline.name = f.get(figures[k], "name", &json::is_string, "a string").get<std::string>();
        c.baseline.value = f.get(figures[k], "baseline", &json::is_primitive, "a number or a string");
        c.actual = f.get(figures[k], "actual", &json::is_primitive, "a number or a string");
        c.pass = f.get(figures[k], "pass", &json::is_boolean, "true or false").get<bool>();
        r.figures.push_back(std::move(c));
    }
    return r;
}

namespace {

struct Shard {
    size_t index = 1, count = 1;
};

json summary_json(const std::string& label, const std::vector<EntryResult>& results, const std::optional<Shard>& shard) {
    const Counts c = count(results);
    json document = {{"format", kCheckSummaryFormat}, {"version", kCheckSummaryVersion}, {"label", label}};
    if (shard) document["shard"] = {{"index", shard->index}, {"count", shard->count}};
    document["counts"] = {{"entries", results.size()}, {"passed", c.passed}, {"failed", c.failed},
                          {"errors", c.errors},        {"skipped", c.skipped}};
    document["entries"] = json::array();
    for (const auto& r : results) document["entries"].push_back(entry_result_json(r));
    return document;
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
    std::string markdown_file, summary_markdown_file, junit_file, json_file;
    size_t summary_max_chars = 65000;
    bool allow_faster = false;  // check: for every entry; baseline: written into the entry
    bool allow_cpu_only = false;
    std::string shard;                // "K/N"
    std::vector<std::string> merge;   // shards' JSON summaries
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
        // One file per --input (repeat it), so that a MODEL after it is not taken for an input.
        cmd->add_option("--input", o.inputs,
                        "an input tensor file (raw, or .npy of the tensor's dtype and shape); repeat it for each input, "
                        "in the model's input order")
            ->allow_extra_args(false);
        cmd->add_option("--npu", o.npu, "NPU configuration (Vela name); default: the model's");
        cmd->add_option("--system-config", o.system_config, "Vela system configuration, as run takes it");
        cmd->add_option("--memory-mode", o.memory_mode, "Vela memory mode, as run takes it");
        cmd->add_option("--config", o.config_files, "vela.ini-format file, as run takes it");
        cmd->add_option("-j,--jobs", o.jobs, "entries run at once (default: the hardware threads)")
            ->check(CLI::PositiveNumber);
        cmd->add_flag("--allow-faster", o.allow_faster,
                      "figures below their baseline pass whatever the drift (check: every entry; baseline: written "
                      "into the entry)");
        cmd->add_flag("--allow-cpu-only", o.allow_cpu_only,
                      "with MODEL: run a model that has no NPU operator (by default refused: it proves nothing about "
                      "the NPU)");
    }
    check_->add_option("--manifest", o.manifest, "manifest of the entries to check (JSON, see the README)");
    check_->add_option("--expect", o.expected,
                       "an expected output tensor file (raw, or .npy of the tensor's dtype and shape); repeat it for "
                       "each output, in the model's output order")
        ->allow_extra_args(false);
    check_->add_option("--max-abs-diff", o.max_abs_diff, "with MODEL: the largest |difference| an element may have")
        ->check(CLI::NonNegativeNumber);
    check_->add_option("--max-differing", o.max_differing, "with MODEL: how many elements of an output may differ");
    check_->add_option("--markdown", o.markdown_file, "also write the summary as a Markdown table");
    check_->add_option("--junit", o.junit_file, "also write the results as JUnit XML (one testcase per entry)");
    check_->add_option("--summary-md", o.summary_markdown_file,
                       "also write a Markdown summary for a pull request's comment: the counts and the failed entries, "
                       "under --summary-max-chars");
    check_->add_option("--summary-max-chars", o.summary_max_chars,
                       "the --summary-md file's size limit in characters (default 65000; GitHub's comments take 65536)")
        ->check(CLI::Range(size_t{1000}, size_t{1} << 30));
    check_->add_option("--json", o.json_file,
                       "also write the results as JSON (docs/schemas/check-summary.schema.json); '-' for stdout");
    check_->add_option("--shard", o.shard,
                       "K/N: run shard K of N (1-based) of the entries, chosen by a hash of each entry's name; "
                       "combine the shards' --json files with --merge");
    check_->add_option("--merge", o.merge, "combine these --json summaries of shards into one result (no model runs)");
    baseline_->add_option("--manifest", o.manifest, "manifest to add the entry to (created if absent) or --update")
        ->required();
    baseline_->add_option("--name", o.name,
                          "the entry's name (default: the model's path without leading ../ and its extension, at most "
                          "its last three parts)");
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
    if (o.allow_cpu_only) entry["allow_cpu_only"] = true;
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
           !o.config_files.empty() || o.allow_cpu_only;
}

// A name as part of a file name: letters, digits, '.', '-' and '_' kept, the rest '_'.
std::string file_stem(const std::string& name) {
    std::string stem = name;
    for (char& ch : stem)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-' && ch != '_') ch = '_';
    return stem;
}

// A summary of every corpus entry is about 1 MB.
constexpr uint64_t kMaxSummaryBytes = 64ull << 20;

std::optional<Shard> parse_shard(const std::string& text) {
    if (text.empty()) return std::nullopt;
    Shard shard;
    char slash = 0, rest = 0;
    if (std::sscanf(text.c_str(), "%zu%c%zu%c", &shard.index, &slash, &shard.count, &rest) != 3 || slash != '/' ||
        shard.count == 0 || shard.index == 0 || shard.index > shard.count)
        throw UsageError({"--shard", std::nullopt, {}}, fmt::format("{:?}: give K/N with 1 <= K <= N, e.g. 2/4", text));
    return shard;
}

// Writes what the results were asked to be reported as; the text table on stdout unless the
// JSON goes there. Returns the exit status: 1 when an entry failed.
int report(const CheckCommands::Options& o, const std::string& label, const std::vector<EntryResult>& results,
           const std::optional<Shard>& shard) {
    const bool json_on_stdout = o.json_file == "-";
    print_text(json_on_stdout ? stderr : stdout,
               shard ? fmt::format("{}, shard {}/{}", label, shard->index, shard->count) : label, results);
    if (!o.markdown_file.empty()) write_markdown(label, results, o.markdown_file);
    if (!o.summary_markdown_file.empty())
        write_summary_markdown(label, results, o.summary_markdown_file, o.summary_max_chars);
    if (!o.junit_file.empty()) write_junit(label, results, o.junit_file);
    if (!o.json_file.empty()) {
        const std::string text = summary_json(label, results, shard).dump(1) + "\n";
        if (json_on_stdout) fmt::print("{}", text);
        else write_text_file(o.json_file, text, "--json");
    }
    return std::any_of(results.begin(), results.end(), failed) ? 1 : 0;
}

// The shards' summaries as one result: every shard of one split there once, no entry twice.
int merge_summaries(const CheckCommands::Options& o) {
    if (!o.model.empty() || !o.manifest.empty() || has_run_options(o) || !o.expected.empty() || !o.shard.empty())
        throw UsageError({"check", std::nullopt, "--merge"}, "--merge combines summaries; it runs no MODEL or manifest");
    std::vector<EntryResult> results;
    std::string label;
    std::set<std::string> names;
    std::map<size_t, std::string> shards;  // index -> file
    size_t shard_count = 0;
    for (const std::string& file : o.merge) {
        json document;
        try {
            document = json::parse(read_bounded_file(file, kMaxSummaryBytes, "--merge", "a summary of a whole corpus is under 10 MB"));
        } catch (const json::parse_error& e) {
            throw UsageError({file, std::nullopt, "JSON"}, e.what());
        }
        const SummaryPlace top{file, ""};
        if (!document.is_object() || document.value("format", json()) != kCheckSummaryFormat)
            SummaryPlace{file, "format"}.fail(fmt::format("must be {:?}: not a check --json summary", kCheckSummaryFormat));
        if (document.value("version", json()) != kCheckSummaryVersion)
            SummaryPlace{file, "version"}.fail(fmt::format("not a version this ethosu-emu reads ({})", kCheckSummaryVersion));
        if (label.empty()) label = document.value("label", file);
        if (document.contains("shard")) {
            const json& shard = document["shard"];
            const size_t index = top.get(shard, "index", &json::is_number_unsigned, "a positive integer").get<size_t>();
            const size_t count = top.get(shard, "count", &json::is_number_unsigned, "a positive integer").get<size_t>();
            if (shard_count && count != shard_count)
                SummaryPlace{file, "shard.count"}.fail(fmt::format("{} shards; the others were split into {}", count, shard_count));
            shard_count = count;
            if (!shards.emplace(index, file).second)
                SummaryPlace{file, "shard.index"}.fail(fmt::format("shard {} is {} too", index, shards[index]));
        }
        const json& entries = top.get(document, "entries", &json::is_array, "a list");
        for (size_t i = 0; i < entries.size(); ++i) {
            EntryResult r = entry_result_from_json(entries[i], file, fmt::format("entries[{}]", i));
            if (!names.insert(r.name).second)
                SummaryPlace{file, fmt::format("entries[{}].name", i)}.fail(fmt::format("{:?} is in an earlier summary too", r.name));
            results.push_back(std::move(r));
        }
    }
    for (size_t k = 1; k <= shard_count; ++k)
        if (!shards.count(k))
            throw Error({"--merge", std::nullopt, {}},
                        fmt::format("shard {}/{} is missing (its job failed?): merged {} of {} shards", k, shard_count,
                                    shards.size(), shard_count));
    return report(o, label, results, std::nullopt);
}

int run_check(const CheckCommands::Options& o) {
    if (!o.merge.empty()) return merge_summaries(o);
    const bool one_model = !o.model.empty();
    if (one_model == !o.manifest.empty())
        throw UsageError({"check", std::nullopt, {}}, "give either MODEL (with --input and --expect) or --manifest");
    const std::optional<Shard> shard = parse_shard(o.shard);
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
                             "--input, --expect, --npu, --system-config, --memory-mode, --config, --allow-cpu-only and "
                             "the tolerances go with MODEL; a manifest holds them per entry");
        manifest = read_manifest(o.manifest);
    }
    std::vector<const ManifestEntry*> chosen;
    for (size_t i = 0; i < manifest.entries.size(); ++i) {
        const ManifestEntry& e = manifest.entries[i];
        const bool compares = std::any_of(e.outputs.begin(), e.outputs.end(), [](const auto& x) { return !x.file.empty(); });
        if (e.skip.empty() && !compares && !e.baseline)
            throw UsageError({manifest.label, std::nullopt, fmt::format("entries[{}]", i)},
                             one_model ? "nothing to check: give --expect" : "nothing to check: give outputs or a baseline");
        if (!shard || shard_of(e.name, shard->count) == shard->index) chosen.push_back(&e);
    }
    const auto results = in_parallel(chosen.size(), o.jobs, [&](size_t i) { return check_entry(*chosen[i], o.allow_faster); });
    return report(o, manifest.label, results, shard);
}

json baseline_object(const EntryRun& run, double drift_percent, bool allow_faster) {
    json baseline = {{"drift_percent", drift_percent}};
    if (allow_faster) baseline["allow_faster"] = true;
    baseline.update(baseline_json(run.timing));
    baseline["layers"] = json::array();
    for (const auto& layer : run.layers) baseline["layers"].push_back({{"name", layer.name}, {"cycles", layer.cycles}});
    return baseline;
}

// Reruns every entry and rewrites its baseline's figures (its drift kept; --drift for new ones).
int update_baselines(const CheckCommands::Options& o) {
    if (!o.model.empty() || has_run_options(o) || !o.name.empty())
        throw UsageError({"baseline", std::nullopt, "--update"}, "--update reruns the manifest's entries as they are; "
                                                                   "it takes no MODEL or run options");
    Manifest manifest = read_manifest(o.manifest);
    struct Outcome {
        std::optional<EntryRun> run;
        std::string error;
    };
    const auto outcomes = in_parallel(manifest.entries.size(), o.jobs, [&](size_t i) -> Outcome {
        if (!manifest.entries[i].skip.empty()) return {};
        try {
            return {run_entry(manifest.entries[i]), {}};
        } catch (const std::exception& e) {
            return {std::nullopt, e.what()};
        }
    });
    size_t updated = 0;
    for (size_t i = 0; i < outcomes.size(); ++i) {
        if (!outcomes[i].error.empty())
            throw Error({manifest.label, std::nullopt, fmt::format("entries[{}] ({})", i, manifest.entries[i].name)},
                        outcomes[i].error + "; the manifest is left as it was");
        if (!outcomes[i].run) continue;
        json& entry = manifest.document["entries"][i];
        const auto& kept = manifest.entries[i].baseline;
        entry["baseline"] = baseline_object(*outcomes[i].run, kept ? kept->drift_percent : o.drift_percent,
                                            kept ? kept->allow_faster : o.allow_faster);
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
    const auto name_of = [](const json& e) {
        return e.value("name", default_entry_name(e.value("model", json("")).get<std::string>()));
    };
    const std::string name = name_of(entry);
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
    entry["baseline"] = baseline_object(run, o.drift_percent, o.allow_faster);
    json& entries = document["entries"];
    const auto same = std::find_if(entries.begin(), entries.end(), [&](const json& e) { return name_of(e) == name; });
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
