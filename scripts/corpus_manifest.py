#!/usr/bin/env python3
"""Writes an `ethosu-emu check` manifest covering the test corpus: every compiled model of
../shared/vectors (Vela 5.1, 5 configurations) and ../shared/vectors-vela (Vela 3.10.0 and 4.1.0,
4 configurations each) whose original model has a TFLite Micro golden, both seeds, against that
golden. The outputs Vela's lowering does not make bit-exact with TFLM get a declared tolerance with
the reason.

  corpus_manifest.py --vectors ../shared/vectors [--vectors-vela ../shared/vectors-vela] -o corpus.json
  ethosu-emu check --manifest corpus.json

Python 3 standard library only. Paths in the manifest are relative to its folder."""

import argparse
import csv
import json
import os
import sys

# (model, seed) -> (max_abs_diff, max_differing, why). The same list as
# tests/engine/test_conformance.cc's kKnownDifferences, which holds the elements themselves; it
# applies to every configuration and compiler version there.
KNOWN_DIFFERENCES = {
    ("sub_8x8x32_i16", seed): (1, count, "int16 SUB: TFLM forms the input/output multipliers in float, Vela in "
                                         "double (TFLM 1477640064 / 1397416448 vs Vela 1477640047 / 1397416498): "
                                         f"{count} element(s) of output 0 differ by one LSB")
    for seed, count in ((1, 1), (2, 3))
}

# Models whose compiled graph keeps an operator on the CPU that the emulator's host kernels do not
# run (frontend/graph/README.md; tests/graph checks that they are refused naming the operator).
SEEDS = (1, 2)


def golden_files(vectors, model):
    """The golden's input and output file names per seed, or None when TFLM could not run it."""
    try:
        with open(os.path.join(vectors, model, "golden", "meta.json")) as f:
            meta = json.load(f)
    except FileNotFoundError:
        return None
    if meta.get("status") != "ok":
        return None
    return {seed: (meta["seeds"][f"seed{seed}"]["inputs"], meta["seeds"][f"seed{seed}"]["outputs"]) for seed in SEEDS}


def compiled_models(vectors, vectors_vela):
    """(entry name prefix, model, compiled .tflite) per index row Vela compiled."""
    with open(os.path.join(vectors, "index.csv")) as f:
        for row in csv.DictReader(f):
            if row["tflite_ok"] == "True":
                yield (f"{row['model']}/{row['config']}", row["model"],
                       os.path.join(vectors, row["model"], row["config"], "model_vela.tflite"))
    if not vectors_vela:
        return
    with open(os.path.join(vectors_vela, "index.csv")) as f:
        for row in csv.DictReader(f):
            if row["ok"] == "True":
                yield (f"vela-{row['vela']}/{row['model']}/{row['config']}", row["model"],
                       os.path.join(vectors_vela, row["vela"], row["model"], row["config"], "model_vela.tflite"))


def manifest(vectors, vectors_vela, folder):
    def rel(path):
        return os.path.relpath(path, folder)

    entries = []
    for prefix, model, tflite in compiled_models(vectors, vectors_vela):
        golden = golden_files(vectors, model)
        if golden is None:
            continue
        for seed in SEEDS:
            inputs, outputs = golden[seed]
            entry = {
                "name": f"{prefix}/seed{seed}",
                "model": rel(tflite),
                "inputs": [rel(os.path.join(vectors, model, "golden", name)) for name in inputs],
                "outputs": [rel(os.path.join(vectors, model, "golden", name)) for name in outputs],
            }
            if (model, seed) in KNOWN_DIFFERENCES:
                max_abs_diff, max_differing, why = KNOWN_DIFFERENCES[(model, seed)]
                entry["outputs"][0] = {"file": entry["outputs"][0], "max_abs_diff": max_abs_diff,
                                       "max_differing": max_differing, "comment": why}
            entries.append(entry)
    return {
        "format": "ethosu-emu-manifest",
        "version": 1,
        "comment": "Written by scripts/corpus_manifest.py: the corpus against its TFLite Micro goldens",
        "entries": entries,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vectors", required=True, help="the Vela 5.1 corpus (../shared/vectors)")
    parser.add_argument("--vectors-vela", help="the Vela 3.10/4.1 corpus (../shared/vectors-vela)")
    parser.add_argument("-o", "--output", required=True, help="manifest to write")
    args = parser.parse_args()
    for corpus in filter(None, (args.vectors, args.vectors_vela)):
        if not os.path.isfile(os.path.join(corpus, "index.csv")):
            sys.exit(f"corpus_manifest.py: error: {corpus}: no index.csv")
    folder = os.path.dirname(os.path.abspath(args.output))
    result = manifest(os.path.abspath(args.vectors), args.vectors_vela and os.path.abspath(args.vectors_vela), folder)
    with open(args.output, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    skipped = sum("skip" in e for e in result["entries"])
    print(f"{args.output}: {len(result['entries'])} entries ({skipped} skipped)")


if __name__ == "__main__":
    main()
