#!/usr/bin/env python3
"""The fuzz campaign: each libFuzzer target of tests/fuzz run for a number of executions (1e7 by
default) at the lowest CPU priority, from seeds built at run time from the Vela corpus
(../shared/vectors; nothing of it is committed), then a table of the figures.

  campaign.py --build BUILD --work DIR [--runs N] [--max-seconds S] [--vectors DIR] [--example FILE] TARGET...
  campaign.py --build BUILD --work DIR --replay TARGET...

BUILD is an ETHOSU_FUZZ build (see README.md); DIR gets per target its seeds, its corpus, its log
and any crash-* file; a target stops after N executions or S seconds (0: no limit), whichever
comes first, and a corpus left in DIR is where the next run starts. --example is a vela_bin_stream (`ethosu-emu example FILE`) added to the
seeds of the ExecuTorch loaders, which the corpus has none of. --replay executes every input of
each target's corpus and seeds once and stops: a campaign run on a fast build (UBSan only) is
replayed on an ASan+UBSan one. Exit status 1 if a target reported a finding (a crash, a leak, a
timeout, an out-of-memory or a sanitizer report)."""

import argparse
import os
import re
import signal
import struct
import subprocess
import sys
import time
import zipfile

MAX_LEN = 65536
# The command-stream targets read byte 0 as the index into all_npu_configs()
# (emulator/isa/npu_config.cc): the corpus's configurations there.
CONFIG_INDEX = {"ethos-u55-128": 2, "ethos-u55-256": 3, "ethos-u65-256": 4, "ethos-u85-256": 7, "ethos-u85-1024": 9}
STREAM_TARGETS = {"fuzz_decoder", "fuzz_run_engine", "fuzz_run_structured"}
# The run path executes a whole model per input: seed it with the small ones only, which run
# inside the harness's tight work limits (run_harness.h).
SMALL_MODEL_BYTES = 8192


def npy_data(blob):
    """The data bytes of a .npy member (v1-3 header: magic, version, header length, header)."""
    if blob[:6] != b"\x93NUMPY":
        raise ValueError("not a .npy")
    if blob[6] == 1:
        (length,) = struct.unpack_from("<H", blob, 8)
        return blob[10 + length:]
    (length,) = struct.unpack_from("<I", blob, 8)
    return blob[12 + length:]


def corpus_files(vectors):
    """(model, config, folder) of every compiled model of the corpus."""
    for model in sorted(os.listdir(vectors)):
        for config in CONFIG_INDEX:
            folder = os.path.join(vectors, model, config)
            if os.path.isdir(folder):
                yield model, config, folder


def seeds_for(target, vectors, example):
    """name -> bytes of the seeds of one target."""
    seeds = {}
    for model, config, folder in corpus_files(vectors):
        tflite = os.path.join(folder, "model_vela.tflite")
        npz = os.path.join(folder, "model_vela.npz")
        debug_db = os.path.join(folder, "model_debug.xml")
        per_layer = os.path.join(folder, "model_per-layer.csv")
        name = f"{model}.{config}"
        if target in STREAM_TARGETS | {"fuzz_load_raw"} and os.path.exists(npz):
            with zipfile.ZipFile(npz) as z:
                if "cmd_data.npy" not in z.namelist():
                    continue
                words = npy_data(z.read("cmd_data.npy"))
            seeds[name] = bytes([CONFIG_INDEX[config]]) + words
        elif target in ("fuzz_load_tflite", "fuzz_load_pte") and os.path.exists(tflite):
            seeds[name] = open(tflite, "rb").read()
        elif target == "fuzz_run_tflite" and os.path.exists(tflite) and os.path.getsize(tflite) <= SMALL_MODEL_BYTES:
            seeds[name] = open(tflite, "rb").read()
            # The original model: a graph of host operators only (the graph runner's path).
            original = os.path.join(vectors, model, "model.tflite")
            if os.path.exists(original) and os.path.getsize(original) <= SMALL_MODEL_BYTES:
                seeds[f"{model}.original"] = open(original, "rb").read()
        elif target == "fuzz_load_npz" and os.path.exists(npz):
            seeds[name] = open(npz, "rb").read()
        elif target == "fuzz_debug_db" and os.path.exists(debug_db):
            seeds[name] = open(debug_db, "rb").read()
        elif target == "fuzz_vela_per_layer" and os.path.exists(per_layer):
            seeds[name] = open(per_layer, "rb").read()
    if target in ("fuzz_load_executorch", "fuzz_load_pte") and example:
        seeds["example"] = open(example, "rb").read()
    return {n: b for n, b in seeds.items() if len(b) <= MAX_LEN}


def run_target(build, work, target, runs, max_seconds, vectors, example, replay=False):
    binary = os.path.join(build, "tests", "fuzz", target)
    folder = os.path.join(work, target)
    seed_dir, corpus_dir = os.path.join(folder, "seeds"), os.path.join(folder, "corpus")
    os.makedirs(seed_dir, exist_ok=True)
    os.makedirs(corpus_dir, exist_ok=True)
    seeds = seeds_for(target, vectors, example) if os.path.isdir(vectors) else {}
    for name, data in seeds.items():
        with open(os.path.join(seed_dir, name), "wb") as f:
            f.write(data)
    log = os.path.join(folder, "replay.txt" if replay else "log.txt")
    # -runs=0: libFuzzer executes the corpus and the seeds, then stops before its first mutation.
    argv = ["nice", "-n", "19", binary, f"-runs={0 if replay else runs}", f"-max_len={MAX_LEN}", "-rss_limit_mb=2048",
            "-timeout=10", f"-max_total_time={max_seconds}", "-print_final_stats=1", f"-artifact_prefix={folder}/", corpus_dir, seed_dir]
    start, started = time.monotonic(), time.time()
    with open(log, "w") as out:
        status = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT).returncode
    seconds = time.monotonic() - start
    text = open(log, errors="replace").read()

    def stat(name):
        match = re.search(rf"stat::{name}:\s+(\d+)", text)
        return int(match.group(1)) if match else 0
    coverage = re.findall(r"cov: (\d+) ft: (\d+) corp: (\d+)", text)
    cov, ft, corp = coverage[-1] if coverage else ("?", "?", "?")
    # An artifact of this run (an earlier run's stays in the folder), or libFuzzer's own exit status;
    # a run stopped from outside (SIGINT, SIGTERM) found nothing and says so.
    artifacts = [p for p in os.listdir(folder) if p.startswith(("crash-", "leak-", "timeout-", "oom-"))
                 and os.path.getmtime(os.path.join(folder, p)) >= started]
    interrupted = "run interrupted" in text or status in (-signal.SIGINT, -signal.SIGTERM)
    finding = bool(artifacts) or (status != 0 and not interrupted)
    executions = stat("number_of_executed_units")
    return {"target": target, "executions": executions, "exec/s": round(executions / seconds) if seconds else 0,
            "cov": cov, "ft": ft, "corpus": corp, "seeds": len(seeds), "wall": f"{seconds:.0f} s",
            "findings": f"yes, see {log}" if finding else "interrupted" if interrupted else "none"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--runs", type=int, default=10_000_000)
    parser.add_argument("--max-seconds", type=int, default=0)
    parser.add_argument("--vectors", default=os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                                                          "vectors"))
    parser.add_argument("--example")
    parser.add_argument("--replay", action="store_true")
    parser.add_argument("targets", nargs="+")
    args = parser.parse_args()
    rows = [run_target(args.build, args.work, t, args.runs, args.max_seconds, args.vectors, args.example, args.replay)
            for t in args.targets]
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + " --- |" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    return 1 if any(r["findings"].startswith("yes") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
