#!/usr/bin/env python3
"""info's graph section on corpus models: every operator in order with where it runs and its
tensors, each tensor's quantization (one scale and zero point, or per channel their count and
ranges), in text and --json. Usage: info_graph.py EMU VECTORS_DIR (exit 77: skipped when the
corpus is absent)."""
import json
import os
import subprocess
import sys

emu, vectors = sys.argv[1], sys.argv[2]
KWS = os.path.join(vectors, "arm_kws_dnn_s", "ethos-u55-128", "model_vela.tflite")
CONV = os.path.join(vectors, "conv_k1s1_16x16x16to32", "model.tflite")
if not (os.path.isfile(KWS) and os.path.isfile(CONV)):
    print(f"SKIP: the corpus is not at {vectors}")
    sys.exit(77)

failures = []


def info(model, *args):
    r = subprocess.run([emu, "info", model, *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        failures.append(f"info {model}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def expect(what, got, want):
    if got != want:
        failures.append(f"{what}: {got!r}, expected {want!r}")


graph = json.loads(info(KWS, "--json"))["graph"]
ops = graph["operators"]
expect("KWS operators", [(o["index"], o["name"], o["on"]) for o in ops],
       [(0, "QUANTIZE", "cpu"), (1, "ethos-u", "npu"), (2, "DEQUANTIZE", "cpu")])
expect("QUANTIZE input", {k: ops[0]["inputs"][0][k] for k in ("name", "shape", "type", "quantization")},
       {"name": "input", "shape": [1, 250], "type": "float32", "quantization": None})
out = ops[0]["outputs"][0]
expect("QUANTIZE output", (out["type"], out["quantization"]["zero_point"]), ("int8", 101))
# The ethos-u operator lists its feature maps, not its stream, weights and scratch inputs.
expect("ethos-u inputs", [t["name"] for t in ops[1]["inputs"]], ["input_int8"])
expect("ethos-u stream", ops[1]["stream"], 0)

text = info(KWS)
for line in ("graph: 3 operators (2 on the CPU), 7 tensors", "  operator 0 QUANTIZE on the CPU",
             "    out 1 'input_int8' [1x250] int8 scale 1.08091 zero point 101",
             "  operator 1 ethos-u on the NPU (stream 0)", "    out 6 'Identity' [1x12] float32"):
    if line not in text.splitlines():
        failures.append(f"info text lacks {line!r}")

weights = json.loads(info(CONV, "--json"))["graph"]["operators"][0]["inputs"][1]
expect("per-channel weights", (weights["constant"], weights["quantization"]["channels"],
                               weights["quantization"]["zero_point"]), (True, 32, [0, 0]))
scale = weights["quantization"]["scale"]
if not 0 < scale[0] <= scale[1]:
    failures.append(f"per-channel scale range {scale}")
if "32 channels: scale " not in info(CONV):
    failures.append("info text lacks the per-channel summary")

for f in failures:
    print("FAIL", f)
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
