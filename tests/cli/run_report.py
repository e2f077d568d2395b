#!/usr/bin/env python3
"""What run tells a performance engineer about a Vela model from the files Vela wrote beside it:
layer names from the debug database found automatically (a stale one only warned about, a given one
that does not fit refused); the top layers by cycles with Vela's figures and what bounds each, the
time per operator type, and what the op count counts; a memory system other than the one Vela
compiled for named in one line and in the report. Usage: run_report.py EMU VECTORS_DIR."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import harness
from harness import run, expect, finish

emu, vectors = sys.argv[1], sys.argv[2]
harness.emu = emu
if not os.path.isdir(vectors):
    print(f"skipped: no Vela corpus at {vectors}")
    sys.exit(0)




def kernel_names(trace_file):
    with open(trace_file) as f:
        return [e["name"] for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"]


def copy_compilation(name, config, into, files):
    os.makedirs(into, exist_ok=True)
    for f in files:
        shutil.copy(os.path.join(vectors, name, config, f), into)
    return os.path.join(into, "model_vela.tflite")


with tempfile.TemporaryDirectory() as tmp:
    trace = os.path.join(tmp, "t.json")

    # The debug database beside the model names the layers, short: the layer's own name, no ';' list.
    model = copy_compilation("arm_kws_ds_cnn_s", "ethos-u55-128", os.path.join(tmp, "kws"),
                             ["model_vela.tflite", "model_debug.xml"])
    r = run(["run", model, "--timing-only", "--trace", trace])
    names = kernel_names(trace)
    expect(names and all("@0x" not in n and ";" not in n for n in names), f"names without Vela's: {names[:3]}")
    expect("Conv2D functional_1/re_lu/Relu" in names, f"no short conv layer name: {names[:3]}")
    expect("warning" not in r.stderr, f"a warning with the model's own database: {r.stderr!r}")

    # One from another compilation beside the model: a warning naming it, and the run goes on unnamed.
    shutil.copy(os.path.join(vectors, "arm_kws_cnn_s", "ethos-u55-128", "model_debug.xml"),
                os.path.join(tmp, "kws", "model_debug.xml"))
    r = run(["run", model, "--timing-only", "--trace", trace])
    expect("warning: not using the debug database beside the model" in r.stderr and "model_debug.xml" in r.stderr,
           f"no warning for a stale database: {r.stderr!r}")
    expect(all("@0x" in n for n in kernel_names(trace)), "a stale database's names used")
    # Given with --debug-db, the same file is refused.
    r = run(["run", model, "--timing-only", "--trace", trace, "--debug-db", os.path.join(tmp, "kws", "model_debug.xml")],
            want_rc=1)
    expect("model_debug.xml" in r.stderr and "not from" in r.stderr, f"a given stale database not refused: {r.stderr!r}")

    # The top layers and the time per operator type, after the totals.
    model = copy_compilation("arm_kws_ds_cnn_l", "ethos-u55-128", os.path.join(tmp, "kws_l"),
                             ["model_vela.tflite", "model_debug.xml", "model_per-layer.csv"])
    out = run(["run", model, "--timing-only"]).stdout.splitlines()
    expect(re.search(r": \d+ NPU commands \((\d+) kernel ops, (\d+) DMA, \d+ waits and others\)", out[0]),
           f"the op count does not say what it counts: {out[0]!r}")
    total = int(out[1].split()[0])
    top = out.index(next(l for l in out if l.startswith("top 10 layers by cycles")))
    header = out[top + 1].split()
    expect(header[-4:] == ["Vela", "ours/V", "bound", "by"], f"no Vela columns: {header}")
    rows = out[top + 2:top + 12]
    cycles = [int(re.match(r" +\d+  .{40} \S+ +(\d+) ", r).group(1)) for r in rows]
    expect(cycles == sorted(cycles, reverse=True) and cycles[0] <= total, f"top layers not by cycles: {cycles}")
    expect(all(re.search(r"(compute|AXI\d \w+)$", r) for r in rows), f"no bound-by: {rows}")
    expect("functional_1/re_lu/Relu" in rows[0] and "Conv2D" in rows[0], f"first layer: {rows[0]!r}")
    by_type = out.index("time by operator type:")
    types = [l for l in out[by_type + 1:] if re.match(r"  \S+ +\d+ cycles", l)]
    type_cycles = sum(int(l.split()[1]) for l in types)
    expect(types and type_cycles <= total and type_cycles > 0.95 * total, f"types {type_cycles} of {total}: {types}")

    # The report names the CPU operators of a graph run, with their elements and no cycles.
    report = os.path.join(tmp, "r.html")
    run(["run", model, "--timing-only", "--report", report])
    page = open(report).read()
    cpu = page[page.find("<h2>On the CPU</h2>"):]
    expect("<h2>On the CPU</h2>" in page and "QUANTIZE" in cpu and ">490<" in cpu and "DEQUANTIZE" in cpu,
           "the report does not list the CPU operators with their elements")
    expect("<h2>Where the time goes</h2>" in page and page.find("Where the time goes") < page.find("<h2>Timeline"),
           "no top layers before the timeline")

    # A memory system other than the one Vela's summary beside the model names: one line, and the report says so.
    summary = "model_summary_Ethos_U55_High_End_Embedded.csv"
    shutil.copy(os.path.join(vectors, "arm_kws_ds_cnn_l", "ethos-u55-128", summary), os.path.join(tmp, "kws_l"))
    r = run(["run", model, "--timing-only"])
    expect("compiled for" not in r.stderr, f"a warning on the system Vela compiled for: {r.stderr!r}")
    r = run(["run", model, "--timing-only", "--memory-mode", "Dedicated_Sram", "--report", report])
    lines = [l for l in r.stderr.splitlines() if "compiled for" in l]
    expect(len(lines) == 1 and "Shared_Sram" in lines[0] and "Dedicated_Sram" in lines[0] and summary in lines[0],
           f"no one-line warning for another memory mode: {r.stderr!r}")
    page = open(report).read()
    expect('class="warn"' in page and "Dedicated_Sram" in page[page.find('class="warn"'):][:600],
           "the report does not say the memory mode is not Vela's")

    # A malformed per-layer report beside the model: the summary goes on without Vela's column.
    with open(os.path.join(tmp, "kws_l", "model_per-layer.csv"), "w") as f:
        f.write("not,a\nper-layer report\n")
    r = run(["run", model, "--timing-only"])
    expect("warning: not using Vela's per-layer report" in r.stderr and "top 10 layers" in r.stdout,
           f"a malformed per-layer report stops the summary: {r.stderr!r}")

finish()
