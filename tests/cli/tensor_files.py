#!/usr/bin/env python3
"""run's tensor files as a user gives them: inputs and outputs as .npy (chosen by the file name,
written and read here with the standard library's own small .npy codec, no numpy) or raw bytes,
checked against the corpus's TFLite Micro goldens, also of a shape that differs only in dimensions
of 1; and an .npy of the wrong dtype or shape, or a broken one, refused naming the file. Usage: tensor_files.py EMU VECTORS_DIR (exit 77: skipped
when the corpus is absent)."""
import ast
import os
import struct
import subprocess
import sys
import tempfile

emu, vectors = sys.argv[1], sys.argv[2]
ADD16 = os.path.join(vectors, "add_8x8x32_i16")
KWS = os.path.join(vectors, "arm_kws_dnn_s")
if not (os.path.isdir(ADD16) and os.path.isdir(KWS)):
    print(f"SKIP: the corpus is not at {vectors}")
    sys.exit(77)

failures = []


def npy_bytes(descr, shape, data):
    header = repr({"descr": descr, "fortran_order": False, "shape": tuple(shape)}).encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data


def read_npy(path):
    with open(path, "rb") as f:
        blob = f.read()
    assert blob[:8] == b"\x93NUMPY\x01\x00", "not an .npy 1.0"
    (length,) = struct.unpack("<H", blob[8:10])
    header = ast.literal_eval(blob[10 : 10 + length].decode())
    if (10 + length) % 64:
        failures.append(f"{path}: data not 64-byte aligned")
    return header["descr"], header["shape"], blob[10 + length :]


def golden(model, name):
    with open(os.path.join(model, "golden", name), "rb") as f:
        return f.read()


def run(args, want_rc=0, want_err=None):
    r = subprocess.run([emu, "run", *args], capture_output=True, text=True, timeout=60)
    what = " ".join(os.path.basename(a) for a in args)
    if r.returncode != want_rc:
        failures.append(f"{what}: exit {r.returncode}, expected {want_rc}: {r.stderr.strip()}")
    if want_err is not None and want_err not in r.stderr:
        failures.append(f"{what}: stderr {r.stderr.strip()!r} lacks {want_err!r}")
    return r


with tempfile.TemporaryDirectory() as tmp:
    at = lambda name: os.path.join(tmp, name)

    # int16 ADD on the CPU: .npy in, .npy and raw out, both equal to the golden.
    for k in (0, 1):
        with open(at(f"in{k}.npy"), "wb") as f:
            f.write(npy_bytes("<i2", (1, 8, 8, 32), golden(ADD16, f"seed1.in{k}.bin")))
    run([os.path.join(ADD16, "model.tflite"), "--input", at("in0.npy"), "--input", at("in1.npy"),
         "--output", at("out.npy"), "--no-timing"])
    descr, shape, data = read_npy(at("out.npy"))
    if (descr, shape) != ("<i2", (1, 8, 8, 32)):
        failures.append(f"int16 output is {descr} {shape}")
    if data != golden(ADD16, "seed1.out0.bin"):
        failures.append("int16 .npy output differs from the golden")
    # Raw input next to an .npy one; without --output the raw PREFIX.out0.bin.
    run([os.path.join(ADD16, "model.tflite"), "--input", os.path.join(ADD16, "golden", "seed1.in0.bin"),
         "--input", at("in1.npy"), "--output-prefix", at("raw"), "--no-timing"])
    with open(at("raw.out0.bin"), "rb") as f:
        if f.read() != golden(ADD16, "seed1.out0.bin"):
            failures.append("raw output after a mixed raw/.npy input differs from the golden")

    # An array whose shape differs only in dimensions of 1 holds the same bytes: taken as the input.
    for k in (0, 1):
        with open(at(f"sq{k}.npy"), "wb") as f:
            f.write(npy_bytes("<i2", (8, 1, 8, 32, 1), golden(ADD16, f"seed1.in{k}.bin")))
    run([os.path.join(ADD16, "model.tflite"), "--input", at("sq0.npy"), "--input", at("sq1.npy"),
         "--output", at("sq_out.npy"), "--no-timing"])
    if read_npy(at("sq_out.npy"))[2] != golden(ADD16, "seed1.out0.bin"):
        failures.append("an input of shape (8, 1, 8, 32, 1) for (1, 8, 8, 32) gives another output")

    # float32 in and out through a Vela model (QUANTIZE and DEQUANTIZE on the CPU).
    with open(at("x.npy"), "wb") as f:
        f.write(npy_bytes("<f4", (1, 250), golden(KWS, "seed1.in0.bin")))
    run([os.path.join(KWS, "ethos-u55-128", "model_vela.tflite"), "--input", at("x.npy"), "--output", at("y.npy"),
         "--no-timing"])
    descr, shape, data = read_npy(at("y.npy"))
    if (descr, shape) != ("<f4", (1, 12)) or data != golden(KWS, "seed1.out0.bin"):
        failures.append(f"float32 output {descr} {shape} or its data differs from the golden")

    # Refusals, each naming the file.
    with open(at("int8.npy"), "wb") as f:
        f.write(npy_bytes("|i1", (1, 8, 8, 32), bytes(2048)))
    run([os.path.join(ADD16, "model.tflite"), "--input", at("int8.npy")], 1,
        "int8.npy: --input: holds dtype '|i1'; input 0 'input1' is int16 (1, 8, 8, 32)")
    with open(at("flat.npy"), "wb") as f:
        f.write(npy_bytes("<i2", (2048,), golden(ADD16, "seed1.in0.bin")))
    run([os.path.join(ADD16, "model.tflite"), "--input", at("flat.npy")], 1, "flat.npy: --input: holds shape (2048,)")
    with open(at("short.npy"), "wb") as f:
        f.write(npy_bytes("<i2", (1, 8, 8, 32), bytes(100)))
    run([os.path.join(ADD16, "model.tflite"), "--input", at("short.npy")], 1, "short.npy")
    with open(at("big_endian.npy"), "wb") as f:
        f.write(npy_bytes(">i2", (1, 8, 8, 32), bytes(4096)))
    run([os.path.join(ADD16, "model.tflite"), "--input", at("big_endian.npy")], 1, "only little-endian")
    run([os.path.join(ADD16, "model.tflite"), "--output", at("a.npy"), "--output", at("b.npy")], 1,
        "2 output files for the model's 1 outputs")

for f in failures:
    print("FAIL", f)
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
