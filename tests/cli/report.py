#!/usr/bin/env python3
"""The HTML report's structure: one well-formed, self-contained page (no http:// or https://
reference, no external script, style, image or font) with its generator line, the timeline's lanes,
a bandwidth chart per memory, and the per-layer table with one row per row of --per-layer (Vela's
figures beside ours when Vela's per-layer report is there). `run --report` writes the same page
as `report`. Usage: report.py EMU VERSION [VECTORS_DIR]."""
import csv
import html.parser
import os
import re
import subprocess
import sys
import tempfile

emu, version = sys.argv[1], sys.argv[2]
vectors = sys.argv[3] if len(sys.argv) > 3 else ""
failures = []
VOID = {"meta", "br", "img", "input", "link", "hr", "wbr", "col", "source"}
SVG_EMPTY = {"rect", "line", "path", "circle", "polyline", "polygon"}


class Structure(html.parser.HTMLParser):
    """Checks that every element is closed in order and collects what the checks need."""

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.text = [], [], []
        self.lanes, self.rows, self.headers, self.meta, self.external = [], 0, [], {}, []
        self.in_thead = False
        self.tables = []  # per open <table>: whether it is a sortable (per-layer) one

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href", "xlink:href"):
            if name in attrs:
                self.external.append(f"<{tag} {name}={attrs[name]!r}>")
        if tag == "meta" and "name" in attrs:
            self.meta[attrs["name"]] = attrs.get("content", "")
        if tag == "thead":
            self.in_thead = True
        if tag == "table":
            self.tables.append("sortable" in attrs.get("class", ""))
        if tag == "tr" and not self.in_thead and self.tables and self.tables[-1]:
            self.rows += 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag == "table" and self.tables:
            self.tables.pop()
        if tag == "thead":
            self.in_thead = False
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "th":
            self.headers.append(data)
        if self.stack and self.stack[-1] == "text" and "lane" in self.get_starttag_text():
            self.lanes.append(data)
        self.text.append(data)


def run(args):
    r = subprocess.run([emu, *args], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        failures.append(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def check_page(path, what, per_layer_csv, vela):
    page = open(path, encoding="utf-8").read()
    s = Structure()
    s.feed(page)
    s.close()
    if not page.startswith("<!DOCTYPE html>"):
        failures.append(f"{what}: no doctype")
    if s.errors or s.stack:
        failures.append(f"{what}: not well-formed: {s.errors[:3]} unclosed {s.stack}")
    for scheme in ("http://", "https://", "//fonts", "url("):
        if scheme in page:
            failures.append(f"{what}: refers to {scheme!r}")
    if s.external:
        failures.append(f"{what}: external references {s.external[:3]}")
    if s.meta.get("generator") != f"ethosu-emu {version}; report format 1":
        failures.append(f"{what}: generator {s.meta.get('generator')!r}")
    for lane in ("kernel ops", "MAC array", "weight decoder", "output stage", "DMA"):
        if lane not in s.lanes:
            failures.append(f"{what}: no lane {lane!r} in {s.lanes}")
    if not any(re.fullmatch(r"(AXI\d )?(Sram|Dram|OnChipFlash|OffChipFlash)", lane) for lane in s.lanes):
        failures.append(f"{what}: no bandwidth chart in {s.lanes}")
    rows = list(csv.reader(open(per_layer_csv)))[1:]
    if s.rows != len(rows):
        failures.append(f"{what}: {s.rows} table rows, --per-layer has {len(rows)}")
    for header in ["Layer", "Cycles", "MACs", "MAC util.", "Bound by", "Operator type"] + (["Vela cycles", "Vela util."] if vela else []):
        if header not in s.headers:
            failures.append(f"{what}: no column {header!r} in {s.headers}")
    if not vela and "Vela cycles" in s.headers:
        failures.append(f"{what}: Vela columns without Vela's figures")
    for title in ("Timeline", "Per layer", "MAC utilisation per layer", "Traffic per layer"):
        if title not in s.text:
            failures.append(f"{what}: no section {title!r}")
    # One colour for one thing: no memory's bandwidth lane in an op family's colour.
    families = set(re.findall(r'<span><i style="background:(#[0-9a-f]{6})"></i>(?:conv|depthwise|pool|elementwise|'
                              r'resize|dma)</span>', page))
    lanes = set(re.findall(r'fill="(#[0-9a-f]{6})"><title>\w+ read</title>', page))
    if not families or not lanes or families & lanes:
        failures.append(f"{what}: op families {sorted(families)} and bandwidth lanes {sorted(lanes)} share a colour")


with tempfile.TemporaryDirectory() as tmp:
    example = os.path.join(tmp, "example.bin")
    run(["example", example])
    cases = [("example", example, False)]
    if vectors and os.path.isdir(vectors):
        d = os.path.join(vectors, "person_detect", "ethos-u55-128")
        cases.append(("person_detect", os.path.join(d, "model_vela.tflite"), True))
        d = os.path.join(vectors, "mlperftiny_kws_dscnn_int8", "ethos-u85-256")
        cases.append(("kws on U85", os.path.join(d, "model_vela.tflite"), True))
    else:
        print("corpus absent: only the bundled example is checked")
    for what, model, vela in cases:
        page, csv_file = os.path.join(tmp, "r.html"), os.path.join(tmp, "p.csv")
        r = run(["report", model, "-o", page, "--per-layer", csv_file])
        if f"report: {page}" not in r.stdout:
            failures.append(f"{what}: report does not name its file: {r.stdout!r}")
        check_page(page, what, csv_file, vela)
        again = os.path.join(tmp, "again.html")
        run(["run", model, "--report", again, "--output-prefix", os.path.join(tmp, "out")])
        if open(page, "rb").read() != open(again, "rb").read():
            failures.append(f"{what}: run --report differs from report")
    r = subprocess.run([emu, "report", example], capture_output=True, text=True, timeout=30)
    if r.returncode != 2 or "--output is required" not in r.stderr:
        failures.append(f"report without -o: exit {r.returncode}, {r.stderr.strip()!r}")
    r = subprocess.run([emu, "report", example, "-o", os.path.join(tmp, "no", "such", "dir.html")], capture_output=True,
                       text=True, timeout=30)
    if r.returncode != 1 or "cannot write file" not in r.stderr:
        failures.append(f"report to a missing directory: exit {r.returncode}, {r.stderr.strip()!r}")

for f in failures:
    print("FAIL", f)
print("report: " + ("ok" if not failures else f"{len(failures)} failures"))
sys.exit(1 if failures else 0)
