#!/usr/bin/env python3
"""Runs every compiled model of the corpus on two builds of ethosu-emu and reports every byte that
differs: `run --json` (with its trace, per-layer CSV and output files) and `run --timing-only --json`
(with its trace), their exit status and error text. A refactoring that keeps behaviour keeps all
of them byte-equal.

  compare_builds.py --before /work/main/build/frontend/cli/ethosu-emu \\
                    --after build/frontend/cli/ethosu-emu \\
                    --vectors ../shared/vectors --vectors-vela ../shared/vectors-vela [-j 2]

The list of models is read from the corpora's index.csv at run time (every compilation Vela
finished); inputs are the TFLite Micro golden's seed-1 inputs where the original model has one,
else none (zeros). Exit status 0 when nothing differs, 1 otherwise. Python 3 standard library only.
"""

import argparse
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import tempfile


def golden_inputs(vectors, model):
    """The golden's seed-1 input files, or [] when TFLM could not run the model."""
    try:
        with open(os.path.join(vectors, model, "golden", "meta.json")) as f:
            meta = json.load(f)
    except FileNotFoundError:
        return []
    if meta.get("status") != "ok":
        return []
    return [os.path.join(vectors, model, "golden", name) for name in meta["seeds"]["seed1"]["inputs"]]


def compiled_models(vectors, vectors_vela):
    """(name, compiled .tflite, input files) per compilation the corpora's indexes list."""
    with open(os.path.join(vectors, "index.csv")) as f:
        for row in csv.DictReader(f):
            if row["tflite_ok"] == "True":
                yield (f"{row['model']}/{row['config']}",
                       os.path.join(vectors, row["model"], row["config"], "model_vela.tflite"),
                       golden_inputs(vectors, row["model"]))
    if not vectors_vela:
        return
    with open(os.path.join(vectors_vela, "index.csv")) as f:
        for row in csv.DictReader(f):
            if row["ok"] == "True":
                yield (f"vela-{row['vela']}/{row['model']}/{row['config']}",
                       os.path.join(vectors_vela, row["vela"], row["model"], row["config"], "model_vela.tflite"),
                       golden_inputs(vectors, row["model"]))


# Each mode: its extra options, and the files it writes beside the JSON (by suffix).
MODES = {
    "full": (["--per-layer", "{out}/layers.csv", "--output-prefix", "{out}/out"], ["layers.csv"]),
    "timing-only": (["--timing-only"], []),
}


def run_once(exe, model, inputs, mode, out):
    """Everything one run produces, with its output folder's name replaced by a constant."""
    extra, _ = MODES[mode]
    args = [exe, "run", model, "--json", "--trace", f"{out}/trace.json"]
    args += [a.format(out=out) for a in extra]
    for path in inputs:
        args += ["--input", path]
    done = subprocess.run(args, capture_output=True, timeout=600)
    produced = {"status": str(done.returncode).encode(), "stdout": done.stdout, "stderr": done.stderr}
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name), "rb") as f:
            produced[name] = f.read()
    return {k: v.replace(out.encode(), b"<OUT>") for k, v in produced.items()}


def compare(before, after, name, model, inputs, mode):
    """The names of what differs between the builds' runs (empty: byte-equal)."""
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        # Both runs write to folders of the same name length, then the names are replaced.
        old = run_once(before, model, inputs, mode, a)
        new = run_once(after, model, inputs, mode, b)
    return [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)], old["status"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the reference build's ethosu-emu")
    parser.add_argument("--after", required=True, help="the build under test's ethosu-emu")
    parser.add_argument("--vectors", required=True, help="../shared/vectors")
    parser.add_argument("--vectors-vela", help="../shared/vectors-vela")
    parser.add_argument("-j", type=int, default=os.cpu_count() or 1, help="runs in parallel")
    args = parser.parse_args()

    jobs = [(name, model, inputs, mode) for name, model, inputs in compiled_models(args.vectors, args.vectors_vela)
            for mode in MODES]
    differing, statuses = [], {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as pool:
        results = pool.map(lambda job: (job, compare(args.before, args.after, *job)), jobs)
        for (name, _, _, mode), (diffs, status) in results:
            statuses[status] = statuses.get(status, 0) + 1
            if diffs:
                differing.append(f"{name} [{mode}]: {', '.join(diffs)}")
    for line in differing:
        print("DIFFERS", line)
    exits = ", ".join(f"{n} exit {s.decode()}" for s, n in sorted(statuses.items()))
    print(f"{len(jobs)} runs compared ({len(jobs) // len(MODES)} compiled models x {len(MODES)} modes; {exits}): "
          f"{len(differing)} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
