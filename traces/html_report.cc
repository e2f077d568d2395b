#include "traces/html_report.h"
#include "traces/layer_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "traces/per_layer_csv.h"

namespace ethosu {
namespace {

std::string escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

// 1234567 -> "1,234,567"
std::string grouped(int64_t value) {
    std::string digits = std::to_string(value < 0 ? -value : value), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return value < 0 ? "-" + out : out;
}

// 1234567 -> "1.23M"; for axis ticks.
std::string short_count(double value) {
    if (value >= 1e9) return fmt::format("{:.3g}G", value / 1e9);
    if (value >= 1e6) return fmt::format("{:.3g}M", value / 1e6);
    if (value >= 1e3) return fmt::format("{:.3g}k", value / 1e3);
    return fmt::format("{:.3g}", value);
}

std::string bytes_text(double bytes) {
    if (bytes >= 1 << 20) return fmt::format("{:.2f} MiB", bytes / (1 << 20));
    if (bytes >= 1 << 10) return fmt::format("{:.1f} KiB", bytes / (1 << 10));
    return fmt::format("{:.0f} B", bytes);
}

std::string seconds_text(double seconds) {
    if (seconds >= 1) return fmt::format("{:.3f} s", seconds);
    if (seconds >= 1e-3) return fmt::format("{:.3f} ms", seconds * 1e3);
    return fmt::format("{:.2f} µs", seconds * 1e6);
}

// Colours of the op kinds on the timeline, and of the memories in the traffic charts.
struct Family {
    const char* name;
    const char* colour;
};
constexpr Family kFamilies[] = {{"conv", "#4c78a8"},        {"depthwise", "#72b7b2"}, {"pool", "#f58518"},
                                {"elementwise", "#b279a2"}, {"resize", "#54a24b"},    {"dma", "#9d755d"}};
constexpr const char* kOtherColour = "#bab0ac";
// The memories' lanes in colours no op family uses, so a blue area is never both conv and SRAM.
constexpr const char* kMemoryColours[kMemoryKinds] = {"#3b3b98", "#e45756", "#ff9da6", "#eeca3b"};
constexpr const char* kVelaColour = "#f58518";

const char* family_colour(const std::string& description) {
    for (const auto& f : kFamilies) {
        if (description.starts_with(f.name)) return f.colour;
    }
    return kOtherColour;
}

// A tick step of 1, 2 or 5 times a power of ten giving at most `most` ticks over `span`.
double tick_step(double span, int most) {
    double step = std::pow(10.0, std::floor(std::log10(std::max(span, 1.0) / most)));
    for (const double m : {1.0, 2.0, 5.0, 10.0}) {
        if (span / (step * m) <= most) return step * m;
    }
    return step * 10;
}

std::string percent_text(double value) { return fmt::format("{:.1f}%", value); }

constexpr const char* kStyle = R"(
:root { --ink: #1f2430; --muted: #6b7280; --line: #e5e7eb; --panel: #f8fafc; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--ink); background: #fff; }
h1 { font-size: 22px; margin: 0 0 2px; }
h2 { font-size: 17px; margin: 32px 0 8px; }
.sub { color: var(--muted); margin-bottom: 18px; word-break: break-all; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 10px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
.card .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .v { font-size: 19px; font-weight: 600; margin-top: 2px; overflow-wrap: anywhere; }
.card .d { color: var(--muted); font-size: 12px; }
.note { color: var(--muted); font-size: 12px; margin: 4px 0 0; max-width: 1200px; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font: 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; fill: var(--ink); }
svg .lane { font-weight: 600; }
svg .axis { fill: var(--muted); }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 6px 0 0 140px; font-size: 12px; color: var(--muted); }
.legend i { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
.scroll { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; max-height: 640px; }
.scroll.short { max-height: 320px; }
.warn { background: #fef3c7; border: 1px solid #f59e0b; border-radius: 8px; padding: 8px 14px; max-width: 1200px; }
.pair { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.pair table { width: auto; border: 1px solid var(--line); }
table { border-collapse: collapse; font-size: 12.5px; white-space: nowrap; width: 100%; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: right; }
th { position: sticky; top: 0; background: #eef2f7; cursor: pointer; user-select: none; font-weight: 600; }
th:hover { background: #e2e8f0; }
td.t, th.t { text-align: left; }
td.t { max-width: 420px; overflow: hidden; text-overflow: ellipsis; }
tr:nth-child(even) td { background: #fbfcfe; }
tr.idle td { color: #a1a7b3; }
.bar { display: inline-block; width: 60px; height: 8px; background: var(--line); border-radius: 4px; margin-left: 6px;
       vertical-align: 0; overflow: hidden; }
.bar b { display: block; height: 100%; background: #4c78a8; }
.over { color: #b42318; }
.under { color: #027a48; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; }
)";

// Sorts the per-layer table by the column clicked (numbers by data-v, text by content).
constexpr const char* kScript = R"(
document.querySelectorAll("table.sortable th").forEach(function (th, column) {
  th.addEventListener("click", function () {
    var body = th.closest("table").tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var up = th.getAttribute("data-dir") !== "up";
    th.setAttribute("data-dir", up ? "up" : "down");
    function key(row) {
      var cell = row.cells[column];
      var v = cell.getAttribute("data-v");
      return v === null ? cell.textContent : parseFloat(v);
    }
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      var order = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
      return up ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
)";

class ReportWriter {
public:
    ReportWriter(const TracedRun& run, const std::vector<InferenceRow>* inferences)
        : run_(run), inferences_(inferences), rows_(per_layer_rows(run)), total_(std::max<int64_t>(run.total_cycles(), 1)),
          clock_(run.memory.system.core_clock) {
        for (const auto& row : rows_) {
            for (int m = 0; m < kMemoryKinds; ++m) used_[m] = used_[m] || row.traffic.read[m] || row.traffic.write[m];
            if (row.vela) {
                have_vela_ = true;
                vela_cycles_ += row.vela->op_cycles;
            }
        }
    }

    std::string write() {
        out_ += fmt::format(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"generator\" content=\"ethosu-emu {}; report format {}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>ethosu-emu report: {}</title>\n<style>{}</style>\n</head>\n<body>\n",
            ETHOSU_EMU_VERSION, kHtmlReportVersion, escape(run_.model), kStyle);
        out_ += fmt::format("<h1>{} on {}</h1>\n<div class=\"sub\">{}</div>\n", escape(model_name()),
                            escape(run_.npu.name), escape(run_.model));
        if (!run_.system_mismatch.empty())
            out_ += fmt::format("<p class=\"warn\">{}</p>\n", escape(run_.system_mismatch));
        if (inferences_) inference_table();
        if (!inferences_ || !inferences_->empty()) {
            summary();
            where_time_goes();
            timeline();
            layer_table();
            host_operator_table();
            utilisation_chart();
            traffic_chart();
        }
        out_ += fmt::format(
            "<footer>Written by ethosu-emu {} (report format {}) from the run's timing results: the same figures as "
            "<code>--trace</code> and <code>--per-layer</code>. No network access; everything is in this file."
            "</footer>\n<script>{}</script>\n</body>\n</html>\n",
            ETHOSU_EMU_VERSION, kHtmlReportVersion, kScript);
        return std::move(out_);
    }

private:
    static constexpr double kWidth = 1200, kLeft = 140, kRight = 16;
    static constexpr double kPlot = kWidth - kLeft - kRight;

    std::string model_name() const {
        const size_t slash = run_.model.find_last_of('/');
        return slash == std::string::npos ? run_.model : run_.model.substr(slash + 1);
    }

    double x_of(int64_t cycle) const { return kLeft + double(cycle) / double(total_) * kPlot; }

    void card(const std::string& key, const std::string& value, const std::string& detail) {
        out_ += fmt::format("<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"d\">{}"
                            "</div></div>\n",
                            key, value, detail);
    }

    void summary() {
        int64_t macs = 0;
        MemoryTraffic traffic;
        for (const auto& t : run_.timing) {
            macs += t.totals.macs;
            for (int m = 0; m < kMemoryKinds; ++m) {
                traffic.read[m] += t.totals.traffic.read[m];
                traffic.write[m] += t.totals.traffic.write[m];
            }
        }
        const MemorySystem& memory = run_.memory;
        out_ += "<div class=\"cards\">\n";
        card("NPU cycles", grouped(run_.total_cycles()),
             fmt::format("{} at {:g} MHz", seconds_text(double(run_.total_cycles()) / clock_), clock_ / 1e6));
        if (have_vela_) {
            const double ratio = double(run_.total_cycles()) / double(std::max<int64_t>(vela_cycles_, 1));
            card("Vela's estimate", grouped(vela_cycles_), fmt::format("ours / Vela = {:.3f}", ratio));
        }
        card("NPU", escape(run_.npu.name), fmt::format("{} MACs per cycle", run_.npu.macs));
        card("System", escape(memory.system.name), escape(memory.mode.name));
        card("MACs", grouped(macs),
             fmt::format("{} of the MAC array's peak",
                         percent_text(100.0 * double(macs) / (double(total_) * run_.npu.macs))));
        for (int m = 0; m < kMemoryKinds; ++m) {
            if (!traffic.read[m] && !traffic.write[m]) continue;
            const auto kind = static_cast<MemoryKind>(m);
            const int port = memory_port(memory, kind);
            card(fmt::format("{} traffic{}", memory_kind_name(kind), port < 0 ? "" : fmt::format(" (AXI{})", port)),
                 bytes_text(double(traffic.read[m] + traffic.write[m])),
                 fmt::format("read {}, written {}", bytes_text(double(traffic.read[m])),
                             bytes_text(double(traffic.write[m]))));
        }
        out_ += "</div>\n";
        if (run_.vela_per_layer && !have_vela_) {
            out_ += fmt::format("<p class=\"note\">Vela's per-layer report {} does not line up with this run's kernel "
                                "ops (see <code>Alignment</code> in traces/README.md): the rows below are our kernel "
                                "ops, without Vela's figures.</p>\n",
                                escape(run_.vela_per_layer->source()));
        } else if (!have_vela_) {
            out_ += "<p class=\"note\">No Vela figures: give <code>--vela-per-layer</code> (Vela's "
                    "<code>&lt;model&gt;_per-layer.csv</code>, found beside <code>&lt;model&gt;_vela.tflite</code> "
                    "by default) or <code>--debug-db</code> to compare with Vela's estimate.</p>\n";
        }
    }

    // A firmware run: every inference, when the firmware started it and the NPU time between
    // inferences (the CPU's share), before the sections of the streams they ran.
    void inference_table() {
        const std::vector<InferenceRow>& inferences = *inferences_;
        if (inferences.empty()) {
            out_ += "<p class=\"note\">The firmware ran no command stream to its end on the NPU.</p>\n";
            return;
        }
        int64_t npu = 0;
        for (const auto& row : inferences) npu += row.cycles;
        const InferenceRow& last = inferences.back();
        const int64_t span = last.start + last.cycles - inferences.front().start;
        out_ += "<div class=\"cards\">\n";
        card("Inferences", grouped(int64_t(inferences.size())),
             fmt::format("{} distinct command stream{}", run_.streams.size(), run_.streams.size() == 1 ? "" : "s"));
        card("NPU cycles, all inferences", grouped(npu),
             fmt::format("{} at {:g} MHz", seconds_text(double(npu) / clock_), clock_ / 1e6));
        card("First start to last end", grouped(span),
             fmt::format("NPU busy {} of it", percent_text(100.0 * double(npu) / double(std::max<int64_t>(span, 1)))));
        out_ += "</div>\n<h2>Inferences</h2>\n<div class=\"scroll short\"><table class=\"sortable\">\n<thead><tr>"
                "<th>#</th><th>Start (cycle)</th><th>Start (time)</th><th>Cycles</th><th>Since previous end</th>"
                "<th>MACs</th><th class=\"t\">Command stream</th></tr></thead>\n<tbody>\n";
        int64_t previous_end = 0;
        for (size_t i = 0; i < inferences.size(); ++i) {
            const InferenceRow& row = inferences[i];
            const int64_t gap = i ? row.start - previous_end : -1;
            out_ += fmt::format("<tr><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td>"
                                "<td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td>"
                                "<td class=\"t\">{}</td></tr>\n",
                                i, i, row.start, grouped(row.start), row.start, seconds_text(double(row.start) / clock_),
                                row.cycles, grouped(row.cycles), gap, i ? grouped(gap) : "–", row.macs, grouped(row.macs),
                                escape(row.label));
            previous_end = row.start + row.cycles;
        }
        out_ += "</tbody></table></div>\n";
        out_ += fmt::format("<p class=\"note\">Start: NPU cycles since power-on when the firmware started the stream; "
                            "since previous end: the cycles the NPU was idle before it (the CPU's work between "
                            "inferences). The sections below are those of the {} distinct stream{} these inferences "
                            "ran, once each, back to back, as <code>run</code> reports a model.</p>\n",
                            run_.streams.size(), run_.streams.size() == 1 ? "" : "s");
        out_ += fmt::format("<h2>{}</h2>\n", run_.streams.size() == 1
                                                  ? std::string("The command stream, one inference")
                                                  : fmt::format("The {} distinct command streams, one inference each",
                                                                run_.streams.size()));
    }

    void rect(double x0, double x1, double y, double h, const char* colour, const std::string& title) {
        out_ += fmt::format("<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}</title>"
                            "</rect>\n",
                            x0, y, std::max(x1 - x0, 0.6), h, colour, escape(title));
    }

    void timeline() {
        constexpr double kLane = 22, kGap = 6, kChart = 64, kTop = 8;
        const char* lanes[] = {"kernel ops", "MAC array", "weight decoder", "output stage", "DMA"};
        const CappedBandwidth capped = capped_at_peak(bandwidth_over_time(run_, run_.stream_starts()), run_.memory, total_);
        const Bandwidth& bandwidth = capped.bandwidth;
        int charts = 0;
        for (int m = 0; m < kMemoryKinds; ++m) charts += bandwidth.used[m];
        const double lanes_bottom = kTop + 5 * (kLane + kGap);
        const double height = lanes_bottom + charts * (kChart + kGap + 8) + 36;

        out_ += "<h2>Timeline</h2>\n";
        out_ += fmt::format("<svg viewBox=\"0 0 {} {:.0f}\" width=\"{}\" role=\"img\" aria-label=\"timeline\">\n", kWidth,
                            height, kWidth);
        // Grid and time axis.
        const double step = tick_step(double(total_), 10);
        for (double at = 0; at <= double(total_) + 0.5; at += step) {
            const double x = x_of(int64_t(at));
            out_ += fmt::format("<line x1=\"{0:.2f}\" x2=\"{0:.2f}\" y1=\"{1}\" y2=\"{2:.1f}\" stroke=\"#e5e7eb\"/>\n", x,
                                kTop, height - 30);
            // The first label starts at its tick, clear of the axis titles; the last ends at its
            // tick, inside the drawing.
            const char* anchor = at == 0 ? "start" : at + step > double(total_) + 0.5 ? "end" : "middle";
            out_ += fmt::format("<text class=\"axis\" x=\"{:.2f}\" y=\"{:.1f}\" text-anchor=\"{}\">{}</text>\n", x,
                                height - 17, anchor, short_count(at));
            out_ += fmt::format("<text class=\"axis\" x=\"{:.2f}\" y=\"{:.1f}\" text-anchor=\"{}\">{}</text>\n", x,
                                height - 4, anchor, seconds_text(at / clock_));
        }
        out_ += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">cycles</text>\n", kLeft - 8,
                            height - 17);
        out_ += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">time</text>\n", kLeft - 8,
                            height - 4);
        for (int lane = 0; lane < 5; ++lane) {
            const double y = kTop + lane * (kLane + kGap);
            out_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3f4f6\"/>\n", kLeft, y, kPlot,
                                kLane);
            out_ += fmt::format("<text class=\"lane\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 8,
                                y + kLane / 2 + 4, lanes[lane]);
        }

        const auto starts = run_.stream_starts();
        for (size_t s = 0; s < run_.timing.size(); ++s) {
            const auto& timed = run_.timing[s].ops;
            for (size_t i = 0; i < timed.size(); ++i) {
                const OpTiming& t = timed[i];
                if (t.unit == Unit::Command) continue;
                const DecodedOp& op = run_.streams.at(s).ops.at(i);
                const std::string label = op_label(run_, s, op);
                const std::string description = op_description(op);
                const int64_t start = starts[s] + t.start, end = starts[s] + t.end;
                const std::string when = fmt::format("cycles {} to {} ({} cycles)", grouped(start), grouped(end),
                                                     grouped(end - start));
                if (t.unit == Unit::Dma) {
                    rect(x_of(start), x_of(end), kTop + 4 * (kLane + kGap), kLane, family_colour("dma"),
                         fmt::format("{}\n{}\nread {}, written {}", label, when, bytes_text(double(sum(t.cost.traffic.read))),
                                     bytes_text(double(sum(t.cost.traffic.write)))));
                    continue;
                }
                const char* colour = family_colour(description);
                rect(x_of(start), x_of(end), kTop, kLane, colour,
                     fmt::format("{}\n{}\n{} MACs, {} compute cycles", label, when, grouped(t.cost.macs),
                                 grouped(t.cost.compute_cycles)));
                // The model gives each unit's busy cycles within the op, not when they fall: drawn
                // from the op's start, as in the Chrome trace.
                const int64_t busy[] = {t.cost.mac_cycles, t.cost.weight_decode_cycles, t.cost.output_cycles};
                for (int unit = 0; unit < 3; ++unit) {
                    if (busy[unit] <= 0) continue;
                    rect(x_of(start), x_of(start + std::min(busy[unit], end - start)), kTop + (unit + 1) * (kLane + kGap),
                         kLane, colour,
                         fmt::format("{}\n{} busy {} of the op's {} cycles", label, lanes[unit + 1], grouped(busy[unit]),
                                     grouped(end - start)));
                }
            }
        }

        // Bandwidth per memory, read below write, against what the memory can carry.
        double y = lanes_bottom + 8;
        for (int m = 0; m < kMemoryKinds; ++m) {
            if (!bandwidth.used[m]) continue;
            const auto kind = static_cast<MemoryKind>(m);
            const double capacity = run_.memory.bytes_per_cycle(kind);
            // AXI's read and write channels each carry the capacity: the busier one is the figure.
            double peak = 0, stacked = 0;
            for (const auto& s : bandwidth.steps) {
                peak = std::max({peak, s.read[m], s.write[m]});
                stacked = std::max(stacked, s.read[m] + s.write[m]);
            }
            const double top = std::max({capacity, stacked, 1e-9});
            auto y_of = [&](double rate) { return y + kChart - rate / top * kChart; };
            std::string read_path = fmt::format("M{:.2f},{:.2f}", kLeft, y + kChart);
            std::string total_path = read_path;
            for (size_t k = 0; k < bandwidth.steps.size(); ++k) {
                const auto& s = bandwidth.steps[k];
                const double x0 = x_of(s.cycle);
                const double x1 = k + 1 < bandwidth.steps.size() ? x_of(bandwidth.steps[k + 1].cycle) : x_of(total_);
                read_path += fmt::format(" L{:.2f},{:.2f} L{:.2f},{:.2f}", x0, y_of(s.read[m]), x1, y_of(s.read[m]));
                total_path += fmt::format(" L{:.2f},{:.2f} L{:.2f},{:.2f}", x0, y_of(s.read[m] + s.write[m]), x1,
                                          y_of(s.read[m] + s.write[m]));
            }
            const std::string close = fmt::format(" L{:.2f},{:.2f} Z", kLeft + kPlot, y + kChart);
            out_ += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" fill=\"#f8fafc\"/>\n", kLeft, y,
                                kPlot, kChart);
            out_ += fmt::format("<path d=\"{}{}\" fill=\"{}\" fill-opacity=\"0.45\"><title>{} written</title></path>\n",
                                total_path, close, kMemoryColours[m], memory_kind_name(kind));
            out_ += fmt::format("<path d=\"{}{}\" fill=\"{}\"><title>{} read</title></path>\n", read_path, close,
                                kMemoryColours[m], memory_kind_name(kind));
            out_ += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#6b7280\" "
                                "stroke-dasharray=\"4 3\"><title>{} peak: {:.3g} bytes/cycle</title></line>\n",
                                kLeft, kLeft + kPlot, y_of(capacity), y_of(capacity), memory_kind_name(kind), capacity);
            const int port = memory_port(run_.memory, kind);
            out_ += fmt::format("<text class=\"lane\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}{}</text>\n", kLeft - 8,
                                y + 14, port < 0 ? "" : fmt::format("AXI{} ", port), memory_kind_name(kind));
            out_ += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">peak {:.2f} GB/s</text>\n",
                                kLeft - 8, y + 28, capacity * clock_ / 1e9);
            // Two lines: one would run past the left edge.
            out_ += fmt::format("<text class=\"axis\" x=\"{0}\" y=\"{1:.1f}\" text-anchor=\"end\">busiest channel</text>\n"
                                "<text class=\"axis\" x=\"{0}\" y=\"{2:.1f}\" text-anchor=\"end\">at {3:.0f}% of peak</text>\n",
                                kLeft - 8, y + 42, y + 55, 100.0 * peak / capacity);
            y += kChart + kGap + 8;
        }
        out_ += "</svg>\n<div class=\"legend\">";
        for (const auto& f : kFamilies) out_ += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", f.colour, f.name);
        out_ += "<span><i style=\"background:#6b7280\"></i>read</span>"
                "<span><i style=\"background:#6b7280;opacity:.45\"></i>written (each in its memory's colour)</span>"
                "<span>- - - the memory's peak bandwidth, reads and writes each</span></div>\n";
        out_ += "<p class=\"note\">Hover over a bar for the op. The MAC array, weight decoder and output stage lanes show "
                "each unit's busy cycles within an op, drawn from the op's start (the model does not say when they "
                "fall); a short bar means the unit waited. Bandwidth: each op is taken to move its bytes evenly over "
                "its duration; where overlapping ops ask for more than a channel's peak, the excess is drawn as "
                "moving later, at the peak.";
        double past_end = 0;
        for (int m = 0; m < kMemoryKinds; ++m) past_end += capped.read_past_end[m] + capped.write_past_end[m];
        if (past_end >= 1) out_ += fmt::format(" {} bytes would still be waiting at the run's end.", grouped(int64_t(past_end)));
        out_ += "</p>\n";
    }

    static int64_t sum(const std::array<int64_t, kMemoryKinds>& values) {
        int64_t total = 0;
        for (const int64_t v : values) total += v;
        return total;
    }

    double utilisation(int64_t macs, int64_t cycles) const {
        return cycles > 0 ? 100.0 * double(macs) / (double(cycles) * run_.npu.macs) : 0.0;
    }

    // Near the top: the layers with most cycles and the cycles per operator type, as `run` prints them.
    void where_time_goes() {
        std::vector<size_t> order(rows_.size());
        for (size_t r = 0; r < order.size(); ++r) order[r] = r;
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return rows_[a].op_cycles > rows_[b].op_cycles; });
        out_ += "<h2>Where the time goes</h2>\n<div class=\"pair\"><table>\n<thead><tr><th>#</th>"
                "<th class=\"t\">Layer</th><th class=\"t\">Operator</th><th>Cycles</th><th>Share</th>";
        if (have_vela_) out_ += "<th>Ours / Vela</th>";
        out_ += "<th class=\"t\">Bound by</th></tr></thead>\n<tbody>\n";
        for (size_t k = 0; k < std::min<size_t>(10, order.size()) && rows_[order[k]].op_cycles > 0; ++k) {
            const PerLayerRow& row = rows_[order[k]];
            out_ += fmt::format("<tr><td>{}</td><td class=\"t\" title=\"{}\">{}</td><td class=\"t\">{}</td><td>{}</td>"
                                "<td>{}</td>",
                                order[k], escape(row.name), escape(short_layer_name(row.name)), escape(row.op),
                                grouped(row.op_cycles), percent_text(100.0 * double(row.op_cycles) / double(total_)));
            if (have_vela_)
                out_ += row.vela && row.vela->op_cycles
                            ? fmt::format("<td>{:.2f}</td>", double(row.op_cycles) / double(row.vela->op_cycles))
                            : std::string("<td>–</td>");
            out_ += fmt::format("<td class=\"t\">{}</td></tr>\n", escape(bound_by(run_, row)));
        }
        out_ += "</tbody></table>\n<table>\n<thead><tr><th class=\"t\">Operator type</th><th>Layers</th>"
                "<th>Cycles</th><th>Share</th></tr></thead>\n<tbody>\n";
        for (const OperatorTypeTime& t : time_by_operator_type(rows_))
            out_ += fmt::format("<tr><td class=\"t\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", escape(t.type),
                                t.layers, grouped(t.cycles), percent_text(100.0 * double(t.cycles) / double(total_)));
        out_ += "</tbody></table></div>\n<p class=\"note\">The ten layers with most cycles, and the cycles per operator "
                "type. A layer is bound by compute when its compute cycles are at least each memory's access cycles "
                "(bytes over the memory's bandwidth), else by the memory with the most.</p>\n";
    }

    void layer_table() {
        out_ += "<h2>Per layer</h2>\n<div class=\"scroll\"><table class=\"sortable\">\n<thead><tr>"
                "<th>#</th><th class=\"t\">Layer</th><th class=\"t\">Operator</th><th>Cycles</th>";
        if (have_vela_) out_ += "<th>Vela cycles</th><th>Ours / Vela</th>";
        out_ += "<th>NPU cycles</th><th>MACs</th><th>MAC util.</th>";
        if (have_vela_) out_ += "<th>Vela util.</th>";
        out_ += "<th class=\"t\">Bound by</th>";
        for (int m = 0; m < kMemoryKinds; ++m) {
            if (!used_[m]) continue;
            const auto name = memory_kind_name(static_cast<MemoryKind>(m));
            out_ += fmt::format("<th>{} read</th><th>{} written</th>", name, name);
        }
        out_ += "<th class=\"t\">Alignment</th></tr></thead>\n<tbody>\n";
        for (size_t r = 0; r < rows_.size(); ++r) {
            const PerLayerRow& row = rows_[r];
            const bool idle = row.op_cycles == 0 && (!row.vela || row.vela->op_cycles == 0);
            out_ += fmt::format("<tr{}><td data-v=\"{}\">{}</td><td class=\"t\" title=\"{}\">{}</td>"
                                "<td class=\"t\">{}</td><td data-v=\"{}\">{}</td>",
                                idle ? " class=\"idle\"" : "", r, r, escape(row.name), escape(short_layer_name(row.name)),
                                escape(row.original_operator == row.op ? row.op : row.original_operator + " / " + row.op),
                                row.op_cycles, grouped(row.op_cycles));
            if (have_vela_) {
                if (row.vela) {
                    const double ratio = row.vela->op_cycles ? double(row.op_cycles) / double(row.vela->op_cycles) : 0;
                    const char* tone = !row.vela->op_cycles ? "" : ratio > 1.25 ? " class=\"over\"" : ratio < 0.8 ? " class=\"under\"" : "";
                    out_ += fmt::format("<td data-v=\"{}\">{}</td><td data-v=\"{}\"{}>{}</td>", row.vela->op_cycles,
                                        grouped(row.vela->op_cycles), ratio, tone,
                                        row.vela->op_cycles ? fmt::format("{:.2f}", ratio) : "–");
                } else {
                    out_ += "<td data-v=\"-1\">–</td><td data-v=\"-1\">–</td>";
                }
            }
            const double util = utilisation(row.macs, row.op_cycles);
            out_ += fmt::format("<td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}<span class=\"bar\">"
                                "<b style=\"width:{:.1f}%\"></b></span></td>",
                                row.npu_cycles, grouped(row.npu_cycles), row.macs, grouped(row.macs), util,
                                percent_text(util), std::min(util, 100.0));
            if (have_vela_) {
                const double vela_util = row.vela ? utilisation(row.vela->macs, row.vela->op_cycles) : -1;
                out_ += fmt::format("<td data-v=\"{}\">{}</td>", vela_util, row.vela ? percent_text(vela_util) : "–");
            }
            out_ += fmt::format("<td class=\"t\">{}</td>", row.op_cycles ? escape(bound_by(run_, row)) : "");
            for (int m = 0; m < kMemoryKinds; ++m) {
                if (!used_[m]) continue;
                out_ += fmt::format("<td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td>", row.traffic.read[m],
                                    grouped(row.traffic.read[m]), row.traffic.write[m], grouped(row.traffic.write[m]));
            }
            out_ += fmt::format("<td class=\"t\">{}</td></tr>\n", row.alignment);
        }
        out_ += "</tbody></table></div>\n";
        out_ += "<p class=\"note\">The rows of <code>--per-layer</code>: cycles are each row's share of the timeline "
                "(from the end of the previous layer to its own end), so they add up to the run; traffic in bytes "
                "includes the DMA transfers issued for the layer. Ours / Vela in red above 1.25, in green below 0.8. "
                "Click a heading to sort.</p>\n";
    }

    void host_operator_table() {
        if (!run_.host_operators || run_.host_operators->empty()) return;
        out_ += "<h2>On the CPU</h2>\n<table class=\"host\">\n<thead><tr><th>Operator #</th><th class=\"t\">Operator</th>"
                "<th>Output elements</th><th>Cycles</th></tr></thead>\n<tbody>\n";
        for (const HostOperator& op : *run_.host_operators)
            out_ += fmt::format("<tr><td>{}</td><td class=\"t\">{}</td><td>{}</td><td>–</td></tr>\n", op.index,
                                escape(op.name), grouped(int64_t(op.elements)));
        out_ += "</tbody></table>\n<p class=\"note\">The model's operators the host ran, with their output elements. "
                "They have no cycle model: the cycles above are the NPU's alone.</p>\n";
    }

    // The rows a chart shows: those with cycles (ours or Vela's).
    std::vector<size_t> busy_rows() const {
        std::vector<size_t> out;
        for (size_t r = 0; r < rows_.size(); ++r) {
            if (rows_[r].op_cycles > 0 || (rows_[r].vela && rows_[r].vela->op_cycles > 0)) out.push_back(r);
        }
        return out;
    }

    // A bar chart over the busy rows: bars(row index, x, width, y_of) draws one row; y from 0 to top.
    template <typename Bars>
    void bar_chart(const std::string& title, double top, const std::string& unit, Bars bars) {
        constexpr double kHeight = 180, kTop = 10, kBottom = 22;
        const auto rows = busy_rows();
        if (rows.empty()) return;
        const double slot = kPlot / double(rows.size());
        out_ += fmt::format("<h2>{}</h2>\n<svg viewBox=\"0 0 {} {}\" width=\"{}\" role=\"img\" aria-label=\"{}\">\n",
                            title, kWidth, kHeight + kTop + kBottom, kWidth, title);
        auto y_of = [&](double v) { return kTop + kHeight - std::min(v / top, 1.0) * kHeight; };
        const double step = tick_step(top, 5);
        for (double v = 0; v <= top * 1.0001; v += step) {
            out_ += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e5e7eb\"/>"
                                "<text class=\"axis\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}{}</text>\n",
                                kLeft, kLeft + kPlot, y_of(v), y_of(v), kLeft - 8, y_of(v) + 4, short_count(v), unit);
        }
        for (size_t k = 0; k < rows.size(); ++k) bars(rows[k], kLeft + double(k) * slot, slot, y_of);
        const double label_step = std::ceil(double(rows.size()) / 24.0);
        for (size_t k = 0; k < rows.size(); k += size_t(label_step)) {
            out_ += fmt::format("<text class=\"axis\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                                kLeft + (double(k) + 0.5) * slot, kTop + kHeight + 15, rows[k]);
        }
        out_ += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">layer #</text>\n", kLeft - 8,
                            kTop + kHeight + 15);
        out_ += "</svg>\n";
    }

    void utilisation_chart() {
        // Scaled to the busiest layer (at least 1%), so that models far from the array's peak
        // (recurrent and elementwise networks) still show their shape.
        double peak = 1;
        for (const auto& row : rows_) {
            peak = std::max(peak, utilisation(row.macs, row.op_cycles));
            if (row.vela) peak = std::max(peak, utilisation(row.vela->macs, row.vela->op_cycles));
        }
        const double step = tick_step(peak, 5);
        const double top = std::min(std::ceil(peak / step) * step, std::max(100.0, peak));
        bar_chart("MAC utilisation per layer", top, "%", [&](size_t r, double x, double slot, auto y_of) {
            const PerLayerRow& row = rows_[r];
            const double util = utilisation(row.macs, row.op_cycles);
            const double width = std::max(slot * (have_vela_ ? 0.42 : 0.8), 0.6);
            rect(x + slot * 0.1, x + slot * 0.1 + width, y_of(util), y_of(0) - y_of(util), "#4c78a8",
                 fmt::format("#{} {}\nMAC utilisation {}", r, row.name, percent_text(util)));
            if (row.vela) {
                const double vela = utilisation(row.vela->macs, row.vela->op_cycles);
                rect(x + slot * 0.1 + width, x + slot * 0.1 + 2 * width, y_of(vela), y_of(0) - y_of(vela), kVelaColour,
                     fmt::format("#{} {}\nVela's MAC utilisation {}", r, row.name, percent_text(vela)));
            }
        });
        out_ += fmt::format("<div class=\"legend\"><span><i style=\"background:#4c78a8\"></i>ours</span>{}</div>\n",
                            have_vela_ ? fmt::format("<span><i style=\"background:{}\"></i>Vela's estimate</span>", kVelaColour)
                                       : "");
        out_ += "<p class=\"note\">MACs over (the layer's cycles × the NPU's MACs per cycle).</p>\n";
    }

    void traffic_chart() {
        double top = 0;
        for (const auto& row : rows_) top = std::max(top, double(sum(row.traffic.read) + sum(row.traffic.write)));
        if (top <= 0) return;
        bar_chart("Traffic per layer", top, "B", [&](size_t r, double x, double slot, auto y_of) {
            const PerLayerRow& row = rows_[r];
            double below = 0;
            for (int m = 0; m < kMemoryKinds; ++m) {
                const auto kind = static_cast<MemoryKind>(m);
                const double parts[] = {double(row.traffic.read[m]), double(row.traffic.write[m])};
                for (int w = 0; w < 2; ++w) {
                    if (parts[w] <= 0) continue;
                    out_ += fmt::format("<g{}>", w ? " fill-opacity=\"0.45\"" : "");
                    rect(x + slot * 0.1, x + slot * 0.9, y_of(below + parts[w]), y_of(below) - y_of(below + parts[w]),
                         kMemoryColours[m],
                         fmt::format("#{} {}\n{} {} {}", r, row.name, memory_kind_name(kind), w ? "written" : "read",
                                     bytes_text(parts[w])));
                    out_ += "</g>";
                    below += parts[w];
                }
            }
        });
        out_ += "<div class=\"legend\">";
        for (int m = 0; m < kMemoryKinds; ++m) {
            if (used_[m])
                out_ += fmt::format("<span><i style=\"background:{}\"></i>{} read</span><span><i style=\"background:{};"
                                    "opacity:.45\"></i>{} written</span>",
                                    kMemoryColours[m], memory_kind_name(static_cast<MemoryKind>(m)), kMemoryColours[m],
                                    memory_kind_name(static_cast<MemoryKind>(m)));
        }
        out_ += "</div>\n";
    }

    const TracedRun& run_;
    const std::vector<InferenceRow>* inferences_;
    const std::vector<PerLayerRow> rows_;
    const int64_t total_;
    const double clock_;
    std::array<bool, kMemoryKinds> used_{};
    bool have_vela_ = false;
    int64_t vela_cycles_ = 0;
    std::string out_;
};

}  // namespace

std::string html_report(const TracedRun& run, const std::vector<InferenceRow>* inferences) {
    return ReportWriter(run, inferences).write();
}

void write_html_report(const TracedRun& run, const std::string& path, const std::vector<InferenceRow>* inferences) {
    write_trace_file(path, html_report(run, inferences), "--report");
}

}  // namespace ethosu
