#!/usr/bin/env python3
"""Compares ethosu-emu's cycle counts with Vela's estimates over the test corpus.

For every fully-NPU model x configuration in VECTORS/index.csv it runs
`ethosu-emu run --timing-only --json` and prints, per model and config, the emulator's total
cycles beside Vela's (index.csv total_cycles, from Vela's model summary) and their ratio; then,
per config, the share of pairs within 10% and 25%, the median ratio and the outliers; and, with
--per-op, the distribution of per-op ratios against Vela's debug database (model_debug.xml).

usage: scripts/timing_report.py [--emu build/frontend/cli/ethosu-emu] [--vectors ../shared/vectors]
                                [--config ethos-u55-128 ...] [--per-op] [--csv FILE]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET


def load_index(vectors):
    with open(os.path.join(vectors, "index.csv"), newline="") as f:
        return [r for r in csv.DictReader(f) if r["fully_npu"] == "True" and r["raw_ok"] == "True"]


def run_emulator(emu, model_path):
    proc = subprocess.run([emu, "run", model_path, "--timing-only", "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
    return json.loads(proc.stdout), None


def vela_op_cycles(debug_xml):
    """Vela's per-op cycles keyed by command-stream byte offset (first offset of each op)."""
    tables = {}
    for table in ET.parse(debug_xml).getroot().iter("table"):
        text = (table.text or "").strip()
        if text:
            tables[table.get("name")] = list(csv.DictReader(text.splitlines()))
    perf = {row["id"]: row for row in tables.get("perf", [])}
    cycles = {}
    for row in tables.get("queue", []):
        op = perf.get(row.get("optimised_id") or row.get("id"))
        if op is not None:
            cycles.setdefault(int(row["offset"]), int(float(op["op_cycles"])))
    return cycles


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--emu", default=os.path.join(here, "..", "build", "frontend", "cli", "ethosu-emu"))
    ap.add_argument("--vectors", default=os.path.join(here, "..", "..", "shared", "vectors"))
    ap.add_argument("--config", action="append", help="only these NPU configs (repeatable)")
    ap.add_argument("--csv", help="also write the per-model table to this CSV file")
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(args.vectors, "index.csv")):
        sys.exit(f"timing_report: no corpus at {args.vectors} (index.csv missing)")

    rows = []
    for entry in load_index(args.vectors):
        if args.config and entry["config"] not in args.config:
            continue
        model = os.path.join(args.vectors, entry["model"], entry["config"], "model_vela.tflite")
        result, error = run_emulator(args.emu, model)
        vela = int(entry["total_cycles"])
        emu = result["cycles"]["total"] if result else None
        rows.append({"model": entry["model"], "config": entry["config"], "vela_cycles": vela,
                     "emu_cycles": emu, "ratio": (emu / vela) if emu and vela else None, "error": error or ""})

    width = max(len(r["model"]) for r in rows) if rows else 10
    print(f"{'model':<{width}} {'config':<15} {'vela':>11} {'emulator':>11} {'ratio':>7}")
    for r in rows:
        ratio = f"{r['ratio']:.3f}" if r["ratio"] else r["error"][:60]
        emu = r["emu_cycles"] if r["emu_cycles"] is not None else "-"
        print(f"{r['model']:<{width}} {r['config']:<15} {r['vela_cycles']:>11} {emu:>11} {ratio:>7}")

    print("\nper config: pairs, within 10%, within 25%, median ratio, failed")
    configs = sorted({r["config"] for r in rows})
    for cfg in configs + ["all"]:
        sel = [r for r in rows if cfg in ("all", r["config"])]
        ratios = [r["ratio"] for r in sel if r["ratio"]]
        within = lambda tol: sum(1 for x in ratios if abs(x - 1) <= tol)
        median = statistics.median(ratios) if ratios else float("nan")
        print(f"  {cfg:<15} {len(sel):>4} {within(0.10):>4} ({within(0.10) / max(1, len(sel)):.0%})"
              f" {within(0.25):>4} ({within(0.25) / max(1, len(sel)):.0%})  median {median:.3f}"
              f"  failed {len(sel) - len(ratios)}")
    outliers = sorted((r for r in rows if r["ratio"] and abs(r["ratio"] - 1) > 0.25), key=lambda r: -abs(r["ratio"] - 1))
    if outliers:
        print("\noutliers (|ratio - 1| > 25%):")
        for r in outliers:
            print(f"  {r['model']} {r['config']}: {r['ratio']:.3f}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
