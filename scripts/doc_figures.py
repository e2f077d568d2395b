#!/usr/bin/env python3
"""The figures the docs quote that a run can regenerate cheaply: each is found in its file by a
pattern, computed again with ethosu-emu (timing only) on the shared corpus and anchors, and
either checked (--check, CI's ctest `docs_figures`: exit 1 naming each one that differs) or
written back (--write). Wall times and benchmark figures are not among them: they depend on the
machine (docs/performance.md says how they were measured).

  scripts/doc_figures.py --emu build/frontend/cli/ethosu-emu [--shared ../shared] (--check | --write)

Exits 77 (skipped) when the corpus or the anchors are absent."""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from timing_report import ANCHOR_SETS, FVP_SYSTEM  # noqa: E402  (the anchors as the timing report runs them)

MOBILENET = "coral_tf2_mobilenet_v2_224_ptq"


def timing(emu, model, *options):
    run = subprocess.run([emu, "run", model, "--timing-only", "--json", *options], capture_output=True, text=True,
                         check=True)
    return json.loads(run.stdout)


def corpus_cycles(emu, shared, model, npu):
    return timing(emu, os.path.join(shared, "vectors", model, npu, "model_vela.tflite"))["cycles"]["total"]


def anchor_active_errors(emu, shared, folder):
    """NPU ACTIVE against the FVP's, per anchor in anchors.csv's order: '+1.3% / -4.5% / -3.2%'."""
    default_npu = next(npu for f, npu, _ in ANCHOR_SETS if f == folder)
    set_dir = os.path.join(shared, "anchors", folder)
    with open(os.path.join(set_dir, "anchors.csv"), newline="") as f:
        anchors = list(csv.DictReader(f))
    errors = []
    for a in anchors:
        model_dir = os.path.join(set_dir, a["name"], "vela-" + a["vela_version"]) if a.get("vela_version") \
            else os.path.join(set_dir, a["name"])
        run = timing(emu, os.path.join(model_dir, "model_vela.tflite"), "--npu", a.get("npu") or default_npu,
                     "--system-config", FVP_SYSTEM, "--memory-mode", "Shared_Sram")
        errors.append(run["cycles"]["npu_active"] / int(a["published_fvp_npu_active"]) - 1)
    return " / ".join(f"{e:+.1%}" for e in errors)


# (file, pattern with the figure as group "v", how to compute it)
FIGURES = [
    ("README.md", r"\((?P<v>[\d,]+) NPU cycles, bit-exact\)",
     lambda emu, shared: f"{corpus_cycles(emu, shared, MOBILENET, 'ethos-u55-128'):,}"),
    ("docs/status.md", r"MobileNetV2 on U55-128: (?P<v>[\d.]+) M cycles",
     lambda emu, shared: f"{corpus_cycles(emu, shared, MOBILENET, 'ethos-u55-128') / 1e6:.2f}"),
    ("docs/status.md", r"on U85-256: (?P<v>[\d.]+) M \(Vela",
     lambda emu, shared: f"{corpus_cycles(emu, shared, MOBILENET, 'ethos-u85-256') / 1e6:.2f}"),
    ("docs/status.md", r"Corstone300_FVP`\): NPU ACTIVE (?P<v>[-+\d.%/ ]+?), AXI0",
     lambda emu, shared: anchor_active_errors(emu, shared, "")),
    ("docs/status.md", r"YOLOv8n\): NPU ACTIVE (?P<v>[-+\d.%/ ]+?), every",
     lambda emu, shared: anchor_active_errors(emu, shared, "himax_u55_64")),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--emu", required=True)
    parser.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    args = parser.parse_args()
    for needed in ("vectors", "anchors"):
        if not os.path.isdir(os.path.join(args.shared, needed)):
            print(f"SKIP: no {os.path.join(args.shared, needed)}: the docs' figures come from it")
            return 77
    wrong = 0
    for name, pattern, compute in FIGURES:
        path = os.path.join(ROOT, name)
        with open(path) as f:
            text = f.read()
        match = re.search(pattern, text)
        if not match:
            print(f"FAIL {name}: no figure matches {pattern!r}")
            wrong += 1
            continue
        value = compute(args.emu, args.shared)
        if value == match.group("v"):
            print(f"ok   {name}: {value}")
            continue
        if args.write:
            text = text[:match.start("v")] + value + text[match.end("v"):]
            with open(path, "w") as f:
                f.write(text)
            print(f"new  {name}: {match.group('v')} -> {value}")
        else:
            print(f"FAIL {name}: says {match.group('v')}, a run gives {value} (scripts/doc_figures.py --write)")
            wrong += 1
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
