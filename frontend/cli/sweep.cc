#include "frontend/cli/sweep.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <set>

#include "frontend/cli/manifest.h"
#include "frontend/graph/graph_runner.h"

namespace ethosu {
namespace {

using json = nlohmann::ordered_json;

constexpr std::string_view kSystemConfigAxis = "system_config";
constexpr std::string_view kMemoryModeAxis = "memory_mode";
// Every point is a timed run: a grid beyond this is a typo, not a study.
constexpr size_t kMaxPoints = 10000;

std::string valid_axis_keys() {
    std::string keys = fmt::format("{}, {}", kSystemConfigAxis, kMemoryModeAxis);
    for (const auto kind : {"System_Config", "Memory_Mode"})
        for (const auto& k : vela_ini_keys(kind)) keys += ", " + k.name;
    return keys;
}

std::optional<double> number(const std::string& text) {
    try {
        size_t used = 0;
        const double v = std::stod(text, &used);
        if (used == text.size()) return v;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

}  // namespace

SweepAxis parse_sweep_axis(const std::string& option, const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
        throw UsageError({option, std::nullopt, text}, "expected KEY=V1,V2,... (e.g. core_clock=400e6,500e6)");
    SweepAxis axis{.key = text.substr(0, eq), .scale = option == "--scale", .values = {}};
    const ErrorLocation where{option, std::nullopt, axis.key};
    const bool section = axis.key == kSystemConfigAxis || axis.key == kMemoryModeAxis;
    if (!section && !is_system_key(axis.key))
        throw UsageError(where, fmt::format("not a sweep axis; valid: {}", valid_axis_keys()));
    if (section && axis.scale) throw UsageError(where, "names a section: give its names with --vary, not factors");
    std::string rest = text.substr(eq + 1);
    for (size_t start = 0;;) {
        const size_t comma = rest.find(',', start);
        axis.values.push_back(rest.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    std::set<std::string> seen;
    for (const auto& v : axis.values) {
        if (v.empty()) throw UsageError(where, fmt::format("an empty value in '{}'", rest));
        if (!seen.insert(v).second) throw UsageError(where, fmt::format("'{}' given twice", v));
        if (axis.scale && !(number(v).value_or(0) > 0))
            throw UsageError(where, fmt::format("factor '{}' is not a positive number", v));
    }
    return axis;
}

std::vector<SweepPoint> sweep_points(const LoadedModel& model, const SystemSelection& base,
                                     const std::vector<SweepAxis>& axes) {
    size_t count = 1;
    for (const auto& axis : axes) {
        for (const auto& other : axes)
            if (&other != &axis && other.key == axis.key)
                throw UsageError({"--vary", std::nullopt, axis.key}, "is an axis twice");
        count *= axis.values.size();
        if (count > kMaxPoints)
            throw UsageError({"--vary", std::nullopt, axis.key},
                             fmt::format("the grid has more than {} points", kMaxPoints));
    }
    std::vector<SweepPoint> points;
    for (size_t index = 0; index < count; ++index) {
        // index in mixed radix, the first axis the most significant digit.
        std::vector<size_t> pick(axes.size());
        for (size_t a = axes.size(), rest = index; a-- > 0; rest /= axes[a].values.size())
            pick[a] = rest % axes[a].values.size();
        SystemSelection selection = base;
        for (size_t a = 0; a < axes.size(); ++a) {
            if (axes[a].key == kSystemConfigAxis) selection.system_config = axes[a].values[pick[a]];
            if (axes[a].key == kMemoryModeAxis) selection.memory_mode = axes[a].values[pick[a]];
        }
        SweepPoint point{.parameters = {}, .memory = model_memory_system(model, selection)};
        for (size_t a = 0; a < axes.size(); ++a) {
            const SweepAxis& axis = axes[a];
            const std::string& value = axis.values[pick[a]];
            const std::string option = axis.scale ? "--scale" : "--vary";
            if (axis.key == kSystemConfigAxis || axis.key == kMemoryModeAxis) {
                point.parameters.push_back(value);
                continue;
            }
            try {
                if (axis.scale) scale_system_key(point.memory, axis.key, *number(value), option);
                else set_system_key(point.memory, axis.key, value, option);
            } catch (const UsageError&) {
                throw;
            } catch (const Error& e) {
                throw UsageError(e.where(), e.reason());
            }
            point.parameters.push_back(system_key_value(point.memory, axis.key));
        }
        points.push_back(std::move(point));
    }
    return points;
}

namespace {

// "OffChipFlash (AXI1)": a memory and the ports it sits behind.
std::string memory_resource_name(const MemorySystem& memory, MemoryKind m) {
    std::vector<std::string> ports;
    for (int p = 0; p < 2; ++p)
        if (memory.port_memory(p) == m) ports.push_back(fmt::format("AXI{}", p));
    if (ports.empty()) return std::string(memory_kind_name(m));
    return fmt::format("{} ({})", memory_kind_name(m), fmt::join(ports, "+"));
}

SweepResult time_point(const LoadedModel& model, SweepPoint point, const WorkLimits& limits) {
    RunOptions options{.memory = point.memory, .pipeline = {.execute = false, .timing = true, .limits = limits}};
    const RunResult run = run_whole_model(model, {}, options);
    SweepResult r{.point = std::move(point), .resources = {}};
    std::array<int64_t, kMemoryKinds> access{};
    int64_t compute = 0;
    for (const auto& stream : run.timing) {
        r.cycles += stream.totals.cycles;
        r.npu_active += stream.totals.npu_active;
        for (const auto& op : stream.ops) {
            if (op.unit == Unit::Kernel) compute += op.cost.compute_cycles;
            for (int m = 0; m < kMemoryKinds; ++m) access[m] += op.access_cycles[m];
        }
    }
    r.seconds = double(r.cycles) / run.memory.system.core_clock;
    r.resources.push_back({"compute", compute});
    for (int m = 0; m < kMemoryKinds; ++m)
        if (access[m] > 0) r.resources.push_back({memory_resource_name(run.memory, static_cast<MemoryKind>(m)), access[m]});
    return r;
}

}  // namespace

const SweepResource& SweepResult::busiest() const {
    return *std::ranges::max_element(resources, {}, &SweepResource::cycles);  // compute on a tie
}

std::vector<SweepResult> run_sweep(const LoadedModel& model, std::vector<SweepPoint> points, const WorkLimits& limits,
                                   int jobs) {
    std::vector<std::optional<SweepResult>> results(points.size());
    std::vector<std::exception_ptr> errors(points.size());
    tbb::task_arena arena(std::max(1, jobs));
    arena.execute([&] {
        tbb::parallel_for(size_t{0}, points.size(), [&](size_t i) {
            try {
                results[i] = time_point(model, std::move(points[i]), limits);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        });
    });
    // The first point's error in grid order, whichever thread met it first.
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    std::vector<SweepResult> out;
    for (auto& r : results) out.push_back(std::move(*r));
    return out;
}

std::string sweep_table(const std::vector<SweepAxis>& axes, const std::vector<SweepResult>& results) {
    std::vector<std::string> header;
    for (const auto& a : axes) header.push_back(a.key);
    for (const auto* h : {"cycles", "time ms", "NPU active", "busiest"}) header.push_back(h);
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : results) {
        std::vector<std::string> row = r.point.parameters;
        const SweepResource& busiest = r.busiest();
        row.push_back(fmt::format("{}", r.cycles));
        row.push_back(fmt::format("{:.3f}", r.seconds * 1e3));
        row.push_back(fmt::format("{}", r.npu_active));
        row.push_back(fmt::format("{} {:.0f}%", busiest.name, r.cycles ? 100.0 * busiest.cycles / r.cycles : 0.0));
        rows.push_back(std::move(row));
    }
    std::vector<size_t> width(header.size());
    for (size_t c = 0; c < header.size(); ++c) {
        width[c] = header[c].size();
        for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
    }
    // Numbers right-aligned, names left; the last column unpadded.
    const size_t first_figure = axes.size();
    auto line = [&](const std::vector<std::string>& cells) {
        std::string out;
        for (size_t c = 0; c < cells.size(); ++c) {
            if (c + 1 == cells.size()) out += cells[c];
            else if (c >= first_figure) out += fmt::format("{:>{}}  ", cells[c], width[c]);
            else out += fmt::format("{:<{}}  ", cells[c], width[c]);
        }
        return out + "\n";
    };
    std::string out = line(header);
    for (const auto& row : rows) out += line(row);
    return out;
}

namespace {

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

// Busy cycles per resource kind: compute and each memory, 0 where it has no traffic.
int64_t busy_cycles(const SweepResult& r, std::string_view kind) {
    for (const auto& res : r.resources)
        if (res.name == kind || res.name.starts_with(std::string(kind) + " ")) return res.cycles;
    return 0;
}

std::vector<std::string> resource_kinds() {
    std::vector<std::string> kinds{"compute"};
    for (int m = 0; m < kMemoryKinds; ++m) kinds.emplace_back(memory_kind_name(static_cast<MemoryKind>(m)));
    return kinds;
}

}  // namespace

std::string sweep_csv(const std::vector<SweepAxis>& axes, const std::vector<SweepResult>& results) {
    std::vector<std::string> header;
    for (const auto& a : axes) header.push_back(a.key);
    for (const auto* h : {"cycles", "inference_seconds", "npu_active", "busiest", "busiest_cycles"}) header.push_back(h);
    for (const auto& kind : resource_kinds()) header.push_back(kind + "_busy_cycles");
    std::string out = fmt::format("{}\n", fmt::join(header, ","));
    for (const auto& r : results) {
        std::vector<std::string> row;
        for (const auto& p : r.point.parameters) row.push_back(csv_cell(p));
        row.push_back(fmt::format("{}", r.cycles));
        row.push_back(fmt::format("{}", r.seconds));
        row.push_back(fmt::format("{}", r.npu_active));
        row.push_back(csv_cell(r.busiest().name));
        row.push_back(fmt::format("{}", r.busiest().cycles));
        for (const auto& kind : resource_kinds()) row.push_back(fmt::format("{}", busy_cycles(r, kind)));
        out += fmt::format("{}\n", fmt::join(row, ","));
    }
    return out;
}

json sweep_json(const LoadedModel& model, const std::vector<SweepAxis>& axes, const std::vector<SweepResult>& results) {
    json axes_json = json::array();
    for (const auto& a : axes) axes_json.push_back({{"key", a.key}, {"scale", a.scale}, {"values", a.values}});
    json points = json::array();
    for (const auto& r : results) {
        json parameters = json::object();
        for (size_t a = 0; a < axes.size(); ++a) parameters[axes[a].key] = r.point.parameters[a];
        json busy = json::object();
        for (const auto& kind : resource_kinds()) busy[kind] = busy_cycles(r, kind);
        points.push_back({{"parameters", parameters},
                          {"system_config", r.point.memory.system.name},
                          {"memory_mode", r.point.memory.mode.name},
                          {"core_clock_hz", r.point.memory.system.core_clock},
                          {"cycles", r.cycles},
                          {"npu_active", r.npu_active},
                          {"inference_seconds", r.seconds},
                          {"busiest", {{"resource", r.busiest().name}, {"cycles", r.busiest().cycles}}},
                          {"busy_cycles", busy}});
    }
    return {{"format", "ethosu-emu-sweep"}, {"version", kSweepFormatVersion}, {"model", model.path},
            {"npu", model.config.name},     {"axes", axes_json},            {"points", points}};
}

namespace {

std::string xml_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

// Colours told apart in print and by most colour-blind readers (Okabe and Ito's palette).
constexpr std::string_view kLineColours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                             "#CC79A7", "#56B4E9", "#F0E442", "#000000"};

// 1, 2 or 5 times a power of ten: about `count` ticks from 0 to top.
double tick_step(double top, int count) {
    const double raw = top / count;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : {1.0, 2.0, 5.0})
        if (m * power >= raw) return m * power;
    return 10 * power;
}

// 4000000 as "4M", 2500 as "2.5k": axis labels that fit their margin.
std::string tick_label(double v) {
    if (v >= 1e6) return fmt::format("{:g}M", v / 1e6);
    if (v >= 1e3) return fmt::format("{:g}k", v / 1e3);
    return fmt::format("{:g}", v);
}

}  // namespace

std::string sweep_svg(const std::string& title, const std::vector<SweepAxis>& axes,
                      const std::vector<SweepResult>& results) {
    constexpr double kWidth = 760, kHeight = 420, kLeft = 90, kRight = 230, kTop = 40, kBottom = 60;
    const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
    // x: the first axis's values in grid order, placed by value when all are numbers.
    std::vector<std::string> xs;
    for (const auto& r : results)
        if (std::ranges::find(xs, r.point.parameters[0]) == xs.end()) xs.push_back(r.point.parameters[0]);
    const bool numeric = xs.size() > 1 && std::ranges::all_of(xs, [](const std::string& x) { return number(x).has_value(); });
    double x_min = 0, x_max = 1;
    if (numeric) {
        x_min = x_max = *number(xs[0]);
        for (const auto& x : xs) x_min = std::min(x_min, *number(x)), x_max = std::max(x_max, *number(x));
    }
    auto x_of = [&](const std::string& x) {
        if (xs.size() == 1) return kLeft + plot_w / 2;
        if (numeric) return kLeft + plot_w * (*number(x) - x_min) / (x_max - x_min);
        const auto i = std::ranges::find(xs, x) - xs.begin();
        return kLeft + plot_w * double(i) / double(xs.size() - 1);
    };
    // Cycles are the NPU's: where the clock varies, time is what compares.
    const bool by_time = std::ranges::any_of(axes, [](const SweepAxis& a) { return a.key == "core_clock" || a.key == kSystemConfigAxis; });
    auto value_of = [&](const SweepResult& r) { return by_time ? r.seconds * 1e3 : double(r.cycles); };
    double top = 0;
    for (const auto& r : results) top = std::max(top, value_of(r));
    const double step = tick_step(top > 0 ? top : 1, 5);
    const double y_top = std::ceil((top > 0 ? top : 1) / step) * step;
    auto y_of = [&](double cycles) { return kTop + plot_h * (1 - cycles / y_top); };

    // One line per combination of the other axes' values, in grid order.
    std::vector<std::pair<std::string, std::vector<const SweepResult*>>> lines;
    for (const auto& r : results) {
        std::vector<std::string> label;
        for (size_t a = 1; a < axes.size(); ++a) label.push_back(fmt::format("{}={}", axes[a].key, r.point.parameters[a]));
        const std::string name = label.empty() ? axes[0].key : fmt::format("{}", fmt::join(label, ", "));
        auto it = std::ranges::find(lines, name, &decltype(lines)::value_type::first);
        if (it == lines.end()) it = lines.insert(lines.end(), {name, {}});
        it->second.push_back(&r);
    }

    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
        "<text x=\"{2}\" y=\"22\" font-size=\"14\">{3}</text>\n",
        kWidth, kHeight, kLeft, xml_escape(title));
    for (double y = 0; y <= y_top + step / 2; y += step) {
        svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                           "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                           kLeft, kLeft + plot_w, y_of(y), kLeft - 6, y_of(y) + 4, tick_label(y));
    }
    for (const auto& x : xs) {
        svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#999\"/>"
                           "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                           x_of(x), kTop + plot_h, kTop + plot_h + 5, kTop + plot_h + 20, xml_escape(x));
    }
    svg += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"black\"/>"
                       "<line x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" y2=\"{2}\" stroke=\"black\"/>\n",
                       kLeft, kTop, kTop + plot_h, kLeft + plot_w);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", kLeft + plot_w / 2,
                       kHeight - 18, xml_escape(axes[0].key), axes[0].scale ? " (scaled)" : "");
    svg += fmt::format("<text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                       kTop + plot_h / 2, by_time ? "inference time (ms)" : "cycles");
    for (size_t l = 0; l < lines.size(); ++l) {
        const std::string_view colour = kLineColours[l % std::size(kLineColours)];
        std::string path;
        for (const SweepResult* r : lines[l].second)
            path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", x_of(r->point.parameters[0]), y_of(value_of(*r)));
        svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", colour, path);
        for (const SweepResult* r : lines[l].second) {
            svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: {} cycles, {:.4g} ms, busiest {}</title></circle>\n",
                               x_of(r->point.parameters[0]), y_of(value_of(*r)), colour,
                               xml_escape(fmt::format("{}={}", axes[0].key, r->point.parameters[0])), r->cycles, r->seconds * 1e3,
                               xml_escape(r->busiest().name));
        }
        const double legend_y = kTop + 10 + 18.0 * double(l);
        svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" stroke-width=\"2\"/>"
                           "<text x=\"{4}\" y=\"{5:.1f}\">{6}</text>\n",
                           kLeft + plot_w + 14, kLeft + plot_w + 34, legend_y, colour, kLeft + plot_w + 40,
                           legend_y + 4, xml_escape(lines[l].first));
    }
    return svg + "</svg>\n";
}

std::string sweep_html(const std::string& title, const std::vector<SweepAxis>& axes,
                       const std::vector<SweepResult>& results) {
    return fmt::format("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{0}</title></head>\n"
                       "<body style=\"font-family: sans-serif\">\n{1}<pre>{2}</pre>\n</body></html>\n",
                       xml_escape(title), sweep_svg(title, axes, results), xml_escape(sweep_table(axes, results)));
}

}  // namespace ethosu
