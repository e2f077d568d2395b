#!/usr/bin/env python3
"""What run tells a performance engineer about a Vela model from the files Vela wrote beside it:
layer names from the debug database found automatically (a stale one only warned about, a given one
that does not fit refused). Usage: run_report.py EMU VECTORS_DIR."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

emu, vectors = sys.argv[1], sys.argv[2]
if not os.path.isdir(vectors):
    print(f"skipped: no Vela corpus at {vectors}")
    sys.exit(0)
failures = []
checks = 0


def run(args, want_rc=0):
    r = subprocess.run([emu, *args], capture_output=True, text=True, timeout=300)
    if r.returncode != want_rc:
        failures.append(f"{' '.join(args)}: exit {r.returncode}, expected {want_rc}: {r.stderr.strip()}")
    return r


def expect(condition, what):
    global checks
    checks += 1
    if not condition:
        failures.append(what)


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

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"{checks} checks passed")
