#!/usr/bin/env python3
"""The files a run reads and writes, as a user meets them: `-` is stdout for --trace, --per-layer,
--report and sweep's --json/--csv (and only one output can take it); an --input of the wrong size
or a directory is blamed on that file, not on the model; a truncated .tflite (from the corpus,
skipped without it) names the file and says it is incomplete. Usage: output_files.py EMU [VECTORS_DIR]."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

import harness
from harness import expect, finish

emu = sys.argv[1]
harness.emu = emu
vectors = sys.argv[2] if len(sys.argv) > 2 else ""



def emu_run(*args):
    return subprocess.run([emu, *args], capture_output=True, text=True, timeout=120)


def one_error(r, rc, text, what):
    expect(r.returncode == rc and r.stderr.count("\n") == 1 and text in r.stderr,
           f"{what}: exit {r.returncode}, stderr {r.stderr.strip()!r}, expected exit {rc} and {text!r}")


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "model.bin")
    emu_run("example", model)
    timed = ["run", model, "--timing-only"]

    r = emu_run(*timed, "--trace", "-")
    expect(r.returncode == 0 and "traceEvents" in json.loads(r.stdout), f"--trace -: the trace alone on stdout: {r.stdout[:80]!r}")
    r = emu_run(*timed, "--per-layer", "-")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    expect(r.returncode == 0 and len(rows) == 2 and "Op Cycles" in rows[0], f"--per-layer -: the CSV alone: {r.stdout[:120]!r}")
    r = emu_run(*timed, "--report", "-")
    expect(r.returncode == 0 and r.stdout.lstrip().lower().startswith("<!doctype html"), "--report -: the HTML alone")
    r = emu_run("sweep", model, "--vary", "Sram_read_latency=16,32", "--csv", "-")
    expect(r.returncode == 0 and len(list(csv.DictReader(io.StringIO(r.stdout)))) == 2, f"sweep --csv -: {r.stdout!r}")
    one_error(emu_run(*timed, "--json", "--trace", "-"), 2, "only one of --json, --trace, --per-layer and --report",
              "two outputs on stdout")
    expect(not os.path.exists("-"), "no file named '-' written")

    # Inputs: the file at fault is named, and what it should hold.
    short = os.path.join(tmp, "short.bin")
    with open(short, "wb") as f:
        f.write(bytes(100))
    one_error(emu_run("run", model, "--input", short), 1,
              f"{short}: --input: holds 100 bytes; input 0 (int8 (1, 1, 1, 16, 16, 16)) takes 4096", "a short input")
    empty = os.path.join(tmp, "empty.bin")
    open(empty, "wb").close()
    one_error(emu_run("run", model, "--input", empty), 1, f"{empty}: --input: holds 0 bytes", "an empty input")
    one_error(emu_run("run", model, "--input", tmp), 1, f"{tmp}: --input: is a directory, not a tensor file",
              "a directory as input")

    corpus = os.path.join(vectors, "arm_kws_dnn_s", "ethos-u55-128", "model_vela.tflite") if vectors else ""
    if corpus and os.path.exists(corpus):
        for size in (100, 5000):
            cut = os.path.join(tmp, f"cut{size}.tflite")
            with open(corpus, "rb") as src, open(cut, "wb") as dst:
                dst.write(src.read(size))
            r = emu_run("run", cut)
            one_error(r, 1, f"{cut}: not a complete TFLite model: its {size} bytes end before", f"a .tflite cut at {size}")
            expect("flatbuffer" not in r.stderr, f"no flatbuffer terms: {r.stderr.strip()!r}")
    else:
        print("corpus absent (../shared/vectors): truncated .tflite not tried")

finish()
