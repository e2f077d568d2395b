#!/usr/bin/env python3
"""Runs the benchmark suite (bench/ethosu_bench) and prints one table.

Usage: scripts/bench_report.py [--bench build/bench/ethosu_bench] [--filter REGEX] [--min-time SECONDS]
Each row: benchmark, wall time per iteration, CPU time, and its counters (GMAC/s, GB/s, MB/s,
NPU cycles per wall second, peak RSS). Skipped benchmarks show their message.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

COUNTERS = ["GMAC/s", "GB/s", "MB/s", "NPU_cycles", "NPU_cycles/s", "peak_RSS_MB"]


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
    args = parser.parse_args()

    command = [args.bench, "--benchmark_format=json"]
    if args.filter:
        command.append(f"--benchmark_filter={args.filter}")
    if args.min_time:
        command.append(f"--benchmark_min_time={args.min_time}")
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        sys.exit(f"{args.bench} exited with {run.returncode}")
    report = json.loads(run.stdout)

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
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    context = report.get("context", {})
    print(f"{context.get('num_cpus', '?')} CPUs, load average {context.get('load_avg', '?')}, "
          f"library build {context.get('library_build_type', '?')}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))


if __name__ == "__main__":
    main()
