#!/usr/bin/env python3
"""The README's quick start, command by command, as a new user runs it: every `ethosu-emu` line of
its shell block on a corpus model (person_detect: the original .tflite for "my_model.tflite", Vela
5.1's compilation for ethos-u55-128 for "out/my_model_vela.tflite", the golden input as
"input.npy"). The set-up lines (scripts/demo.sh, export) are what CI has already done; Vela is not
run (no network for pip here): the corpus's compilation stands in for its output. Every command
must succeed and write what it names, the NPU's output must equal TFLite Micro's reference, and no
`ethosu-emu` line of the block may go unrecognised, so the README cannot drift from what runs.
Usage: quickstart.py EMU README VECTORS_DIR. Exits 77 (skipped) without the corpus."""
import os
import re
import shlex
import subprocess
import sys
import tempfile

emu, readme, vectors = os.path.abspath(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3])
model_dir = os.path.join(vectors, "person_detect")
if not os.path.isdir(model_dir):
    print(f"SKIP: no {model_dir}: the quick start needs the corpus")
    sys.exit(77)

with open(readme) as f:
    text = f.read()
section = text[text.index("## Quick start"):]
section = section[:section.index("\n## ", 3)]
block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
lines = [line.split("  #")[0].strip() for line in block.splitlines()]
commands = [line for line in lines if line and not line.startswith("#")]

failures = []
substitutions = {"my_model.tflite": os.path.join(model_dir, "model.tflite"),
                 "out/my_model_vela.tflite": os.path.join(model_dir, "ethos-u55-128", "model_vela.tflite")}
setup = ("scripts/demo.sh", "export PATH=", "vela ")

with tempfile.TemporaryDirectory() as tmp:
    # input.npy: the golden input as numpy writes an int8 (1, 96, 96, 1) array.
    with open(os.path.join(model_dir, "golden", "seed1.in0.bin"), "rb") as f:
        data = f.read()
    header = "{'descr': '|i1', 'fortran_order': False, 'shape': (1, 96, 96, 1), }"
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(os.path.join(tmp, "input.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + data)
    ran = 0
    for command in commands:
        if command.startswith(setup):
            continue
        args = shlex.split(command)
        if args[0] != "ethosu-emu":
            failures.append(f"a quick-start line this test does not know: {command!r}")
            continue
        args = [emu] + [substitutions.get(a, a) for a in args[1:]]
        run = subprocess.run(args, capture_output=True, text=True, cwd=tmp, timeout=300)
        ran += 1
        if run.returncode != 0:
            failures.append(f"{command!r}: exit {run.returncode}: {(run.stderr or run.stdout).strip()[-400:]}")
        for option in ("--output", "--report", "--manifest", "--junit", "--summary-md"):
            if option in args and not os.path.exists(os.path.join(tmp, args[args.index(option) + 1])):
                failures.append(f"{command!r}: wrote no {args[args.index(option) + 1]}")
    if ran < 5:
        failures.append(f"only {ran} ethosu-emu commands in the quick start")
    paths = [os.path.join(tmp, name) for name in ("output.npy", "reference.npy")]
    if all(os.path.exists(p) for p in paths):
        with open(paths[0], "rb") as a, open(paths[1], "rb") as b:
            if a.read() != b.read():
                failures.append("the NPU's output.npy differs from TFLite Micro's reference.npy")

for failure in failures:
    print("FAIL", failure)
print(f"quick start: {len(commands)} lines, {len(failures)} failures")
sys.exit(1 if failures else 0)
