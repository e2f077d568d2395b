#!/usr/bin/env python3
"""Runs the benchmark suite (bench/ethosu_bench) and prints one table.

Usage: scripts/bench_report.py [--bench build/bench/ethosu_bench] [--filter REGEX] [--min-time SECONDS]
                               [--cli build/frontend/cli/ethosu-emu] [--vectors ../shared/vectors]
Each row: benchmark, wall time per iteration, CPU time, and its counters (GMAC/s, GB/s, MB/s,
NPU cycles per wall second, peak RSS of the benchmark process, model file + arena). Each benchmark runs in a process of its
own, so that its peak RSS is its own. Skipped benchmarks show their message.

A second table is what a user sees: one `ethosu-emu run` per network (bit-exact run with timing,
golden input, output compared with the golden), its wall and CPU time (user + system, all
threads: on a loaded machine the wall time carries other processes) and peak RSS (GNU time), the model
file plus the arena it runs in, and the peak over that yardstick, whole and above the fixed cost
every run has whatever its model (the executable, its libraries and its thread pool: taken as the
smallest network's peak).
"""

import argparse
import json
import tempfile
import time
import re
import subprocess
import sys
from pathlib import Path

COUNTERS = ["GMAC/s", "GB/s", "MB/s", "NPU_cycles", "NPU_cycles/s", "peak_RSS_MB", "file+arena_MB"]


def fmt_number(value):
    if value is None:
        return ""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.2f}{suffix}"
    return f"{value:.3g}"


def to_ms(value, unit):
    return value * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def main():
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", default=str(root / "build" / "bench" / "ethosu_bench"))
    parser.add_argument("--filter", default="", help="--benchmark_filter regex")
    parser.add_argument("--min-time", default="", help="--benchmark_min_time in seconds")
    parser.add_argument("--cli", default=str(root / "build" / "frontend" / "cli" / "ethosu-emu"))
    parser.add_argument("--vectors", default=str(root.parent / "shared" / "vectors"))
    args = parser.parse_args()

    def run_bench(extra):
        command = [args.bench] + extra
        if args.min_time:
            command.append(f"--benchmark_min_time={args.min_time}")
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            sys.stderr.write(run.stderr)
            sys.exit(f"{args.bench} exited with {run.returncode}")
        return run.stdout

    listing = run_bench(["--benchmark_list_tests"] + ([f"--benchmark_filter={args.filter}"] if args.filter else []))
    report = {"benchmarks": []}
    for name in listing.split():
        one = json.loads(run_bench(["--benchmark_format=json", f"--benchmark_filter=^{re.escape(name)}$"]))
        report["context"] = one.get("context", {})
        report["benchmarks"] += one["benchmarks"]

    header = ["benchmark", "wall ms", "cpu ms"] + COUNTERS
    rows = []
    for b in report["benchmarks"]:
        name = b["name"]
        for suffix in ("/process_time", "/real_time"):
            name = name.removesuffix(suffix)
        if b.get("error_occurred"):
            rows.append([name, "skipped: " + b.get("error_message", "")] + [""] * (len(header) - 2))
            continue
        unit = b.get("time_unit", "ns")
        rows.append([name, f"{to_ms(b['real_time'], unit):.3f}", f"{to_ms(b['cpu_time'], unit):.3f}"] +
                    [fmt_number(b.get(c)) for c in COUNTERS])
    context = report.get("context", {})
    print(f"{context.get('num_cpus', '?')} CPUs, load average {context.get('load_avg', '?')}, "
          f"library build {context.get('library_build_type', '?')}")
    print_table(header, rows)
    cli_table(args.cli, Path(args.vectors))


NETWORKS = ["coral_tf2_mobilenet_v2_224_ptq", "person_detect", "mlzoo_rnnoise_int8", "mlperftiny_ad01_int8",
            "mlperftiny_kws_dscnn_int8", "mlperftiny_str_ww_int8", "mlperftiny_vww_96_int8"]
CONFIG = "ethos-u55-128"


def run_measured(command):
    """Runs command; returns (exit status, wall seconds, CPU seconds, peak RSS in MiB).

    GNU time starts it: a child forked from this Python process would count Python's own pages in
    its peak before exec replaced them.
    """
    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        run = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", rss.name] + command, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        user, system, peak = rss.read().split()[-3:]
        return run.returncode, wall, float(user) + float(system), int(peak) / 1024.0


def arena_bytes(cli, model):
    info = json.loads(subprocess.run([cli, "info", "--json", model], capture_output=True, text=True, check=True).stdout)
    return sum(r["size"] for stream in info["streams"] for r in stream["regions"] if not r["initialised"])


def cli_table(cli, vectors):
    _, _, _, help_peak = run_measured([cli, "--help"])
    runs = []
    for name in NETWORKS:
        model = vectors / name / CONFIG / "model_vela.tflite"
        if not model.exists():
            runs.append((name, None))
            continue
        golden = vectors / name / "golden"
        with tempfile.TemporaryDirectory() as out:
            command = [cli, "run", str(model), "--output-prefix", str(Path(out) / "out")]
            inputs = sorted(golden.glob("seed1.in*.bin"))
            for i in inputs:
                command += ["--input", str(i)]
            status, wall, cpu, peak = run_measured(command)
            outputs = sorted(Path(out).glob("out.out*.bin"))
            exact = status == 0 and bool(inputs) and len(outputs) > 0 and all(
                o.read_bytes() == (golden / o.name.replace("out.out", "seed1.out")).read_bytes() for o in outputs)
        yardstick = (model.stat().st_size + arena_bytes(cli, str(model))) / (1024.0 * 1024.0)
        runs.append((name, (wall, cpu, peak, yardstick, exact)))
    measured = [r for _, r in runs if r]
    # What every run costs whatever the model: the executable, its libraries and its threads.
    fixed = min(r[2] for r in measured) if measured else 0.0
    header = ["network (one CLI run)", "wall s", "cpu s", "peak RSS MB", "file+arena MB", "peak / (file+arena)",
              "(peak - fixed) / (file+arena)", "bit-exact"]
    rows = []
    for name, r in runs:
        if not r:
            rows.append([name, "skipped: not in the vectors"] + [""] * (len(header) - 2))
            continue
        wall, cpu, peak, yardstick, exact = r
        rows.append([name, f"{wall:.3f}", f"{cpu:.3f}", f"{peak:.1f}", f"{yardstick:.2f}", f"{peak / yardstick:.1f}",
                     f"{(peak - fixed) / yardstick:.1f}", "yes" if exact else "NO"])
    print(f"\n{CONFIG}; fixed cost = the smallest run's peak, {fixed:.1f} MB "
          f"(`ethosu-emu --help` alone: {help_peak:.1f} MB)")
    print_table(header, rows)


def print_table(header, rows):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))


if __name__ == "__main__":
    main()
