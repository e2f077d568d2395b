#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks what `ethosu-emu system --json - --trace T --report R --per-layer P` wrote for a
firmware that ran one command stream N times: N inference records of one stream hash, each of the
cycles, MACs, AXI beats and --pmu counts `ethosu-emu run --timing-only --json` gives for that stream, starts
that never overlap the previous inference; a trace whose slices on each track nest or are
disjoint, with one "command streams" slice per inference at its start cycle; a report that lists
every inference; a per-layer CSV of a row per kernel op of every inference.

Usage: check_system_figures.py SYSTEM_JSON RUN_JSON TRACE REPORT PER_LAYER N
Prints what failed and exits 1, else prints a summary."""
import csv
import json
import sys
from collections import defaultdict


def nesting_errors(events):
    """Complete events on one track must nest or be disjoint (Chrome/Perfetto's rule)."""
    errors = []
    tracks = defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            tracks[(e["pid"], e["tid"])].append(e)
    eps = 1e-6  # microseconds: the cycles' conversion rounds
    for track, slices in tracks.items():
        slices.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in slices:
            end = e["ts"] + e["dur"]
            while stack and e["ts"] >= stack[-1] - eps:
                stack.pop()
            if stack and end > stack[-1] + eps:
                errors.append(f"track {track}: {e['name']!r} at {e['ts']} us ends after its enclosing slice")
            stack.append(end)
    return errors


def main():
    system_json, run_json, trace_file, report_file, per_layer, n = sys.argv[1:7]
    n = int(n)
    doc = json.load(open(system_json))
    run = json.load(open(run_json))
    errors = []
    if doc.get("format") != "ethosu-emu system" or doc.get("format_version") != 1:
        errors.append(f"format {doc.get('format')!r} version {doc.get('format_version')!r}")
    inferences = doc["inferences"]
    if len(inferences) != n:
        errors.append(f"{len(inferences)} inference records, the firmware ran {n}")
    hashes = {i["stream"]["hash"] for i in inferences}
    if len(hashes) != 1:
        errors.append(f"{len(hashes)} stream hashes for one stream")
    want_beats = [(p["read_beats"], p["write_beats"]) for p in run["traffic"]["axi"]]
    previous_end = 0
    for i in inferences:
        if i["cycles"]["total"] != run["cycles"]["total"]:
            errors.append(f"inference {i['index']}: {i['cycles']['total']} cycles, run --timing-only {run['cycles']['total']}")
        if i["macs"] != run["macs"]:
            errors.append(f"inference {i['index']}: {i['macs']} MACs, run {run['macs']}")
        beats = [(p["read_beats"], p["write_beats"]) for p in i["traffic"]["axi"]]
        if beats != want_beats:
            errors.append(f"inference {i['index']}: AXI beats {beats}, run {want_beats}")
        if len(i["ops"]) != len(run["ops"]):
            errors.append(f"inference {i['index']}: {len(i['ops'])} ops, run {len(run['ops'])}")
        if i["pmu"]["cycle_counter"] != run["cycles"]["total"]:
            errors.append(f"inference {i['index']}: PMU cycle counter {i['pmu']['cycle_counter']}")
        if "pmu" in run and i.get("requested_pmu") != run["pmu"]:
            errors.append(f"inference {i['index']}: --pmu counts {i.get('requested_pmu')}, run's {run['pmu']}")
        if i["start_cycle"] < previous_end:
            errors.append(f"inference {i['index']} starts at {i['start_cycle']}, before the previous ended ({previous_end})")
        previous_end = i["start_cycle"] + i["cycles"]["total"]
    if doc["totals"]["cycles"]["total"] != n * run["cycles"]["total"]:
        errors.append(f"totals: {doc['totals']['cycles']['total']} cycles for {n} inferences")

    trace = json.load(open(trace_file))
    events = trace["traceEvents"]
    errors += nesting_errors(events)[:10]
    clock = trace["metadata"]["core_clock_hz"]
    streams = [e for e in events if e.get("cat") == "stream"]
    if len(streams) != n:
        errors.append(f"the trace has {len(streams)} stream slices for {n} inferences")
    for e, i in zip(streams, inferences):
        if abs(e["ts"] - i["start_cycle"] * 1e6 / clock) > 1e-3:
            errors.append(f"trace: {e['name']} at {e['ts']} us, the inference started at cycle {i['start_cycle']}")

    report = open(report_file, encoding="utf-8").read()
    rows = report.count("<td class=\"t\">stream ")
    if rows != n:
        errors.append(f"the report lists {rows} inferences, not {n}")

    # Without Vela's report or debug database, a row per kernel op (the ops with compute cycles).
    layer_rows = len(list(csv.reader(open(per_layer)))) - 1
    kernel_ops = sum("compute_cycles" in op for op in run["ops"])
    if layer_rows != n * kernel_ops:
        errors.append(f"per-layer CSV: {layer_rows} rows, {n} x the stream's {kernel_ops} kernel ops")

    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"{n} inferences of {run['cycles']['total']} cycles, stream {hashes.pop()}, "
          f"{len(events)} trace events nest, report and per-layer CSV complete")
    return 0


if __name__ == "__main__":
    sys.exit(main())
