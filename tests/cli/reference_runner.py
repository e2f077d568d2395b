#!/usr/bin/env python3
"""The reference runner as a user meets it: `ethosu-emu run` on an original, un-Vela'd corpus
model.tflite (no ethos-u operator) runs every operator on the host's kernels and writes TFLite
Micro's golden outputs; `info` says there is no NPU (tests/graph refuses the operators not
implemented on the host). Usage: reference_runner.py EMU VECTORS_DIR (exit 77 without the corpus)."""
import json
import pathlib
import subprocess
import sys
import tempfile

emu, vectors = sys.argv[1], pathlib.Path(sys.argv[2])
if not (vectors / "arm_kws_ds_cnn_l" / "model.tflite").exists():
    print(f"no corpus at {vectors}")
    sys.exit(77)
failures = []


def run(args):
    return subprocess.run([emu, *args], capture_output=True, text=True, timeout=120)


# Float input and output (QUANTIZE ... DEQUANTIZE), and two inputs (an int32 shape and int16 data).
for model in ["arm_kws_ds_cnn_l", "seanet_transpose_conv0", "neg_fc_64to16_w4"]:
    golden = vectors / model / "golden"
    seed = json.loads((golden / "meta.json").read_text())["seeds"]["seed1"]
    with tempfile.TemporaryDirectory() as out:
        inputs = [arg for name in seed["inputs"] for arg in ("--input", str(golden / name))]
        r = run(["run", str(vectors / model / "model.tflite"), *inputs, "--output-prefix", f"{out}/o"])
        if r.returncode != 0 or "no NPU work, every operator on the host's reference kernels" not in r.stdout:
            failures.append(f"{model}: exit {r.returncode}: {r.stdout.strip()!r} {r.stderr.strip()!r}")
            continue
        for k, name in enumerate(seed["outputs"]):
            if pathlib.Path(f"{out}/o.out{k}.bin").read_bytes() != (golden / name).read_bytes():
                failures.append(f"{model}: output {k} differs from the golden")

r = run(["info", str(vectors / "fc_64to10" / "model.tflite")])
if r.returncode != 0 or "npu:      none (no ethos-u operator" not in r.stdout:
    failures.append(f"info fc_64to10: {r.stdout.strip()!r}")

for f in failures:
    print("FAIL", f)
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
