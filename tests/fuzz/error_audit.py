#!/usr/bin/env python3
"""Audits the CLI's error lines as a hostile user meets them: every reproducer of
../shared/hostile (as tests/cli/hostile_inputs.py runs them), then corpus models
(../shared/vectors, nothing of it committed) with a few bytes or words overwritten, each run in
full and timing only. Counts the outcomes, and lists the errors whose line names no offset
(grouped by field and the start of the reason) so that each can be judged: does it concern a
place in the file?

  error_audit.py EMU HOSTILE_DIR VECTORS_DIR [--mutants N] [--seed S]

Exit status 1 when a run crashed (a status other than 0 and 1), printed more than one error line
or printed a line that does not read FILE: PLACE: FIELD: reason."""

import argparse
import collections
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
import hostile_inputs  # noqa: E402  (the reproducers' commands)

ERROR_PREFIX = "ethosu-emu: error: "
# A place in a file: a file offset or a command-stream offset (builds before these labels printed
# "offset 0x..").
PLACE = re.compile(r": (?:file@|cmd@|offset )0x[0-9a-f]+: ")
# The corpus models mutated: small ones, of each kind of file the loaders read.
MUTATED_MODELS = ["hello_world_int8", "add_8x8x32", "conv_k3s1_same_8x8x16", "person_detect", "mlperftiny_kws_dscnn_int8"]
CONFIGS = ["ethos-u55-128", "ethos-u65-256", "ethos-u85-256"]


def run(argv):
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return "timeout", []
    lines = [line for line in done.stderr.decode(errors="replace").splitlines() if line.startswith(ERROR_PREFIX)]
    return done.returncode, lines


def mutate(data, rng):
    """1 to 4 changes: a byte set at random, or a little-endian word set to 0, all ones, the sign
    bit or a small number, at a random aligned place."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data) - 4) & ~3
        if rng.random() < 0.5:
            data[at + rng.randrange(4)] = rng.randrange(256)
        else:
            value = rng.choice([0, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, rng.randrange(64)])
            data[at:at + 4] = value.to_bytes(4, "little")
    return bytes(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("emu")
    parser.add_argument("hostile")
    parser.add_argument("vectors")
    parser.add_argument("--mutants", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    outcomes = collections.Counter()
    without_place = collections.Counter()
    problems = []

    def record(what, status, lines):
        if status == "timeout" or status not in (0, 1):
            problems.append(f"{what}: status {status}")
            outcomes["crash or timeout"] += 1
            return
        if status == 0:
            outcomes["ran"] += 1
            return
        outcomes["error"] += 1
        if len(lines) != 1:
            problems.append(f"{what}: {len(lines)} error lines")
            return
        line = lines[0][len(ERROR_PREFIX):]
        place = PLACE.search(line)
        if place:
            outcomes[f"error at {place.group(0).strip(': ').split('0x')[0]}"] += 1
        else:
            parts = line.split(": ")
            without_place[": ".join(parts[1:3])[:90]] += 1

    with tempfile.TemporaryDirectory() as scratch:
        example = os.path.join(scratch, "example.bin")
        subprocess.run([args.emu, "example", example], check=True, capture_output=True)
        fill = {"{V}": args.vectors, "{T}": scratch, "{M}": example}
        for name, (reproducer, argv, _, _, _) in hostile_inputs.CASES.items():
            if argv is None or (reproducer and not os.path.exists(os.path.join(args.hostile, reproducer))):
                continue
            values = dict(fill, **{"{F}": os.path.join(args.hostile, reproducer or "")})
            expanded = []
            for a in argv:
                for k, v in values.items():
                    a = a.replace(k, v)
                expanded.append(a)
            if name == "raw_stream_2500M":
                continue  # its 2.5 GB file is hostile_inputs.py's own
            record(name, *run([args.emu, *expanded]))
        rng = random.Random(args.seed)
        models = [os.path.join(args.vectors, m, c, f) for m in MUTATED_MODELS for c in CONFIGS
                  for f in ("model_vela.tflite", "model_vela.npz")]
        models = [m for m in models if os.path.exists(m)]
        for i in range(args.mutants):
            model = rng.choice(models)
            path = os.path.join(scratch, f"m{i}{os.path.splitext(model)[1]}")
            with open(model, "rb") as f:
                data = mutate(f.read(), rng)
            with open(path, "wb") as f:
                f.write(data)
            for mode in ([], ["--timing-only"]):
                record(f"{model} mutant {i} {mode}", *run([args.emu, "run", path, *mode, "--output-prefix",
                                                           os.path.join(scratch, "o")]))
            os.remove(path)
    print("outcomes:", dict(outcomes))
    print(f"errors naming no place: {sum(without_place.values())}")
    for text, count in without_place.most_common():
        print(f"  {count:5d}  {text}")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
