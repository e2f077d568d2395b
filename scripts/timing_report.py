#!/usr/bin/env python3
"""Compares ethosu-emu's cycle counts with Vela's estimates over the test corpus.

For every fully-NPU model x configuration in VECTORS/index.csv it runs
`ethosu-emu run --timing-only --json` and prints, per model and config, the emulator's total
cycles beside Vela's (index.csv total_cycles, from Vela's model summary) and their ratio; then,
per config, the share of pairs within 10% and 25%, the median ratio and the outliers; and, with
--per-op, the distribution of per-op ratios: the emulator's per-layer CSV (run --per-layer with
Vela's debug database, so its rows are Vela's) against Vela's model_per-layer.csv, row by row.

With --anchors DIR (../shared/anchors) it compares instead, per FVP anchor of both sets (DIR's
anchors.csv, U55-128, and DIR/himax_u55_64's, U55-64), NPU ACTIVE cycles and AXI beats per port with
the published FVP counts: the emulator's on the system the FVP measured
(Ethos_U55_High_End_Corstone300_FVP) and, for the first set, on Vela's (Ethos_U55_High_End_Embedded),
and Vela's estimate on the same stream where its summary is there (total cycles, unscaled bytes / 8);
then each set's median error. The published figures are per network, so with --per-op it shows, per
anchor, the emulator's kernel time by op kind (where an error can sit) and the kernel ops moving the
most AXI0 read beats.

usage: scripts/timing_report.py [--emu build/frontend/cli/ethosu-emu] [--vectors ../shared/vectors]
                                [--config ethos-u55-128 ...] [--per-op] [--csv FILE] [--anchors DIR]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile


def load_index(vectors):
    with open(os.path.join(vectors, "index.csv"), newline="") as f:
        return [r for r in csv.DictReader(f) if r["fully_npu"] == "True" and r["raw_ok"] == "True"]


def run_emulator(emu, model_path):
    proc = subprocess.run([emu, "run", model_path, "--timing-only", "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
    return json.loads(proc.stdout), None


def op_cycle_ratios(emu, model_dir):
    """Per Vela op: emulator Op Cycles / Vela Op Cycles, for the rows where Vela's is non-zero."""
    vela_csv = os.path.join(model_dir, "model_per-layer.csv")
    debug_db = os.path.join(model_dir, "model_debug.xml")
    if not (os.path.isfile(vela_csv) and os.path.isfile(debug_db)):
        return []
    with tempfile.TemporaryDirectory() as tmp:
        ours_csv = os.path.join(tmp, "ours.csv")
        proc = subprocess.run([emu, "run", os.path.join(model_dir, "model_vela.tflite"), "--timing-only",
                               "--per-layer", ours_csv, "--debug-db", debug_db], capture_output=True, text=True)
        if proc.returncode != 0:
            return []
        with open(ours_csv, newline="") as f:
            ours = list(csv.DictReader(f))
    with open(vela_csv, newline="") as f:
        vela = list(csv.DictReader(f))
    if len(ours) != len(vela):
        return []
    return [float(o["Op Cycles"]) / float(v["Op Cycles"])
            for o, v in zip(ours, vela) if float(v["Op Cycles"] or 0) > 0 and o["Op Cycles"]]


# The anchor sets (anchors/README.md and its subfolders' READMEs): a folder with anchors.csv, the NPU
# its rows run on unless a row names one (an `npu` column), and the system Vela compiled its streams
# for, when it is one of Vela's own. A row's stream is <name>/vela-<vela_version>/ when the CSV
# records the Vela version, else <name>/. All run on the system the FVP modelled first.
ANCHOR_SETS = [("", "ethos-u55-128", "Ethos_U55_High_End_Embedded"), ("himax_u55_64", "ethos-u55-64", None)]
FVP_SYSTEM = "Ethos_U55_High_End_Corstone300_FVP"
ANCHOR_FIGURES = [("NPU ACTIVE", "published_fvp_npu_active"), ("AXI0 rd beats", "published_axi0_rd_beats"),
                  ("AXI0 wr beats", "published_axi0_wr_beats"), ("AXI1 rd beats", "published_axi1_rd_beats")]


def vela_anchor_estimate(summary_csv):
    """Vela's figures in ANCHOR_FIGURES order: total cycles, then SRAM read, SRAM write and off-chip
    flash read bytes (unscaled, as its summary gives them) in 8-byte beats."""
    with open(summary_csv, newline="") as f:
        r = next(csv.DictReader(f))
    num = lambda *keys: sum(float(r.get(k) or 0) for k in keys)
    return [num("cycles_total"),
            num("sram_feature_map_read_bytes", "sram_weight_read_bytes") / 8,
            num("sram_feature_map_write_bytes", "sram_weight_write_bytes") / 8,
            num("off_chip_flash_feature_map_read_bytes", "off_chip_flash_weight_read_bytes") / 8]


def run_anchor(emu, model, npu, system):
    proc = subprocess.run([emu, "run", model, "--timing-only", "--json", "--npu", npu, "--system-config", system,
                           "--memory-mode", "Shared_Sram"], capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"{os.path.basename(os.path.dirname(model)):<34} failed on {system}: {proc.stderr.strip()[-200:]}")
        return None
    return json.loads(proc.stdout)


def anchors_report(emu, anchors_dir, per_op):
    print(f"{'anchor':<34} {'figure':<14} {'FVP':>10} {'emu (FVP)':>10} {'vs FVP':>8} {'emu (Vela)':>10} {'vs FVP':>8}"
          f" {'Vela':>10} {'vs FVP':>8}")
    for folder, default_npu, vela_system in ANCHOR_SETS:
        set_dir = os.path.join(anchors_dir, folder)
        if not os.path.isfile(os.path.join(set_dir, "anchors.csv")):
            print(f"(no anchors at {set_dir}: anchors.csv missing)")
            continue
        with open(os.path.join(set_dir, "anchors.csv"), newline="") as f:
            anchors = list(csv.DictReader(f))
        active_errors = []
        for a in anchors:
            npu = a.get("npu") or default_npu
            model_dir = os.path.join(set_dir, a["name"], "vela-" + a["vela_version"]) if a.get("vela_version") \
                else os.path.join(set_dir, a["name"])
            model = os.path.join(model_dir, "model_vela.tflite")
            on_fvp = run_anchor(emu, model, npu, FVP_SYSTEM)
            on_vela = run_anchor(emu, model, npu, vela_system) if vela_system else None
            if on_fvp is None or (vela_system and on_vela is None):
                continue
            figures = lambda run: [run["cycles"]["npu_active"]] + [run["traffic"]["axi"][port][key] for port, key in
                                                                   ((0, "read_beats"), (0, "write_beats"), (1, "read_beats"))]
            summaries = [n for n in os.listdir(model_dir) if n.startswith("model_summary") and n.endswith(".csv")]
            vela = vela_anchor_estimate(os.path.join(model_dir, summaries[0])) if summaries else [None] * 4
            ours_vela = figures(on_vela) if on_vela else [None] * 4
            name = f"{a['name']} ({npu.removeprefix('ethos-')})"
            for (label, column), ours, ours_on_vela, theirs in zip(ANCHOR_FIGURES, figures(on_fvp), ours_vela, vela):
                fvp = int(a[column])
                beside = lambda x: f"{x:>10.0f} {x / fvp - 1:>+8.1%}" if x is not None else f"{'-':>10} {'':>8}"
                print(f"{name:<34} {label:<14} {fvp:>10} {ours:>10} {ours / fvp - 1:>+8.1%}"
                      f" {beside(ours_on_vela)} {beside(theirs)}")
            active_errors.append(abs(figures(on_fvp)[0] / int(a["published_fvp_npu_active"]) - 1))
            if per_op:
                print_op_kinds(on_fvp)
                print_top_read_ops(on_fvp)
        if active_errors:
            print(f"{folder or 'anchors':<34} median NPU ACTIVE error {statistics.median(active_errors):.1%}"
                  f", largest {max(active_errors):.1%}")


def print_op_kinds(run):
    """The kernel ops of a run --json grouped by kind: count, cycles from start to end, their share."""
    ops = [o for o in run.get("ops", []) if "compute_cycles" in o]
    kinds = {}
    for o in ops:
        count, cycles = kinds.get(o["kind"], (0, 0))
        kinds[o["kind"]] = (count + 1, cycles + o["end"] - o["start"])
    total = sum(c for _, c in kinds.values()) or 1
    print(f"  kernel time by kind ({total} cycles):")
    for kind, (count, cycles) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        print(f"    {kind:<24} {count:>4} ops {cycles:>10} cycles ({cycles / total:.1%})")


def print_top_read_ops(run, count=8):
    """The kernel ops of a run --json with the most SRAM (AXI0) read bytes: offset, kind, cycles, beats."""
    ops = [o for o in run.get("ops", []) if "compute_cycles" in o]
    sram_read = lambda o: o.get("traffic", {}).get("Sram", {}).get("read_bytes", 0)
    total = sum(sram_read(o) for o in ops) or 1
    print(f"  top AXI0 readers of {total // 8} beats:")
    for o in sorted(ops, key=sram_read, reverse=True)[:count]:
        print(f"    @0x{o['offset']:06x} {o['kind']:<12} {o['end'] - o['start']:>9} cycles"
              f" {sram_read(o) // 8:>8} beats ({sram_read(o) / total:.1%})")


def percentiles(values, points=(10, 25, 50, 75, 90)):
    ordered = sorted(values)
    return [ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] for p in points]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--emu", default=os.path.join(here, "..", "build", "frontend", "cli", "ethosu-emu"))
    ap.add_argument("--vectors", default=os.path.join(here, "..", "..", "shared", "vectors"))
    ap.add_argument("--config", action="append", help="only these NPU configs (repeatable)")
    ap.add_argument("--csv", help="also write the per-model table to this CSV file")
    ap.add_argument("--per-op", action="store_true", help="also compare each op with Vela's per-layer estimate")
    ap.add_argument("--anchors", help="compare with the FVP anchors in this folder (anchors.csv) instead")
    args = ap.parse_args()
    if args.anchors:
        if not os.path.isdir(args.anchors):
            sys.exit(f"timing_report: no anchors at {args.anchors}")
        anchors_report(args.emu, args.anchors, args.per_op)
        return
    if not os.path.isfile(os.path.join(args.vectors, "index.csv")):
        sys.exit(f"timing_report: no corpus at {args.vectors} (index.csv missing)")

    rows, op_ratios = [], {}
    for entry in load_index(args.vectors):
        if args.config and entry["config"] not in args.config:
            continue
        model = os.path.join(args.vectors, entry["model"], entry["config"], "model_vela.tflite")
        result, error = run_emulator(args.emu, model)
        vela = int(entry["total_cycles"])
        emu = result["cycles"]["total"] if result else None
        if args.per_op:
            model_dir = os.path.join(args.vectors, entry["model"], entry["config"])
            op_ratios.setdefault(entry["config"], []).extend(op_cycle_ratios(args.emu, model_dir))
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
    if args.per_op:
        print("\nper op (emulator / Vela Op Cycles): ops, P10, P25, median, P75, P90, within 25%")
        for cfg in sorted(op_ratios):
            r = op_ratios[cfg]
            if not r:
                continue
            p = percentiles(r)
            within = sum(1 for x in r if abs(x - 1) <= 0.25) / len(r)
            print(f"  {cfg:<15} {len(r):>5} " + " ".join(f"{x:6.3f}" for x in p) + f"  {within:.0%}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
