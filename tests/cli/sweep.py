#!/usr/bin/env python3
"""sweep on the bundled example and, when the corpus is there, a flash-bound corpus model: each
point's cycles equal those of `run --timing-only` on a vela.ini written with that point's values,
more flash bandwidth never costs cycles, the outputs (table, CSV, JSON, SVG, HTML) agree and the
SVG parses as XML; refusals name the option and key. Usage: sweep.py EMU [VECTORS_DIR]."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import harness
from harness import run, expect, finish

emu = sys.argv[1]
harness.emu = emu
vectors = sys.argv[2] if len(sys.argv) > 2 else ""




def system_keys():
    """The vela.ini keys of each section kind, from the error sweep gives for an unknown key."""
    err = run(["sweep", "x", "--vary", "no_such_key=1"], want_rc=2).stderr
    keys = err.split("valid: ", 1)[1].split(" (see")[0].split(", ")
    mode_keys = {"const_mem_area", "arena_mem_area", "cache_mem_area", "arena_cache_size"}
    return [k for k in keys if k not in mode_keys | {"system_config", "memory_mode"}], sorted(mode_keys)


def check_points_against_run(tmp, model, sweep, label):
    """Each point as a vela.ini section inheriting the base one plus the point's values, timed by run."""
    sys_keys, mode_keys = system_keys()
    for i, point in enumerate(sweep["points"]):
        params = point["parameters"]
        lines = ["[System_Config.SweepPoint]", f"inherit=System_Config.{point['system_config']}"]
        lines += [f"{k}={v}" for k, v in params.items() if k in sys_keys]
        lines += ["[Memory_Mode.SweepPoint]", f"inherit=Memory_Mode.{point['memory_mode']}"]
        lines += [f"{k}={v}" for k, v in params.items() if k in mode_keys]
        ini = os.path.join(tmp, f"point{i}.ini")
        with open(ini, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = run(["run", model, "--timing-only", "--json", "--config", ini, "--system-config", "SweepPoint",
                 "--memory-mode", "SweepPoint", "--output-prefix", os.path.join(tmp, "out")])
        cycles = json.loads(r.stdout)["cycles"]["total"] if r.returncode == 0 else None
        expect(cycles == point["cycles"], f"{label} point {params}: sweep {point['cycles']} cycles, run {cycles}")


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "example.bin")
    run(["example", model])
    out = {ext: os.path.join(tmp, f"sweep.{ext}") for ext in ("json", "csv", "svg", "html")}
    r = run(["sweep", model, "--scale", "Sram_clock_scale=0.5,1,2", "--vary", "memory_mode=Shared_Sram,Sram_Only",
             "--vary", "Sram_read_latency=16,64", "--json", out["json"], "--csv", out["csv"], "--plot", out["svg"]])
    sweep = json.load(open(out["json"]))
    expect(sweep["format"] == "ethosu-emu-sweep" and sweep["version"] == 1, f"format/version: {sweep.get('format')}")
    expect([a["key"] for a in sweep["axes"]] == ["Sram_clock_scale", "memory_mode", "Sram_read_latency"],
           f"axes in command-line order: {sweep['axes']}")
    expect(len(sweep["points"]) == 12, f"{len(sweep['points'])} points, expected 3 x 2 x 2")
    firsts = [p["parameters"]["Sram_clock_scale"] for p in sweep["points"]]
    expect(firsts == ["0.5"] * 4 + ["1"] * 4 + ["2"] * 4, f"first axis outermost, scaled values: {firsts}")
    table = r.stdout.splitlines()
    expect(table[0].split()[:3] == ["Sram_clock_scale", "memory_mode", "Sram_read_latency"] and len(table) == 13,
           f"table: {r.stdout}")
    expect(all(str(p["cycles"]) in row.split() for p, row in zip(sweep["points"], table[1:])), "table rows = JSON points")
    rows = list(csv.DictReader(open(out["csv"])))
    expect([int(row["cycles"]) for row in rows] == [p["cycles"] for p in sweep["points"]], "CSV rows = JSON points")
    svg = ET.parse(out["svg"]).getroot()
    expect(svg.tag == "{http://www.w3.org/2000/svg}svg", f"SVG root {svg.tag}")
    lines = svg.findall("{http://www.w3.org/2000/svg}polyline")
    expect(len(lines) == 4, f"{len(lines)} lines in the plot, expected one per memory_mode x Sram_read_latency")
    expect("<script" not in open(out["svg"]).read(), "the SVG carries no script")
    check_points_against_run(tmp, model, sweep, "example")

    run(["sweep", model, "--vary", "core_clock=400e6,500e6", "--plot", out["html"]])
    html = open(out["html"]).read()
    expect(html.startswith("<!DOCTYPE html>") and "<svg" in html and "inference time (ms)" in html,
           "HTML plot of a clock axis: the SVG of time, inline")

    # - is stdout: the JSON alone.
    r = run(["sweep", model, "--vary", "core_clock=400e6", "--json", "-"])
    expect(json.loads(r.stdout)["points"][0]["core_clock_hz"] == 400e6, "--json - prints the JSON alone")

    # Refusals: usage errors (exit 2) naming the option and key.
    for args, want in [
        (["--vary", "OffChipFlash.bandwidth=1,2"], "--vary: OffChipFlash.bandwidth: not a sweep axis; valid: "
                                                   "system_config, memory_mode, core_clock"),
        (["--scale", "axi1_port=2"], "--scale: axi1_port: takes a memory name"),
        (["--vary", "axi1_port=Flash"], "--vary: axi1_port: 'Flash' is not a memory; valid: Sram"),
        (["--vary", "memory_mode=Nope"], "no such Memory_Mode section; valid:"),
        (["--vary", "core_clock=1", "--plot", "p.png"], "--plot: p.png: the file name must end in .svg or .html"),
        ([], "at least one --vary or --scale"),
    ]:
        r = subprocess.run([emu, "sweep", model, *args], capture_output=True, text=True, timeout=60)
        expect(r.returncode in (1, 2) and want in r.stderr and r.stderr.count("\n") == 1,
               f"sweep {' '.join(args)}: exit {r.returncode}, stderr {r.stderr.strip()!r}, expected {want!r}")

    corpus = os.path.join(vectors, "arm_kws_dnn_s", "ethos-u55-128", "model_vela.tflite") if vectors else ""
    if corpus and os.path.exists(corpus):
        # Fully connected layers: every weight byte read once from flash, so the flash bounds it.
        r = run(["sweep", corpus, "--scale", "OffChipFlash_clock_scale=0.25,0.5,1,2,4", "--vary",
                 "OffChipFlash_read_latency=32,64", "--json", out["json"]])
        sweep = json.load(open(out["json"]))
        for latency in ("32", "64"):
            cycles = [p["cycles"] for p in sweep["points"] if p["parameters"]["OffChipFlash_read_latency"] == latency]
            expect(all(a >= b for a, b in zip(cycles, cycles[1:])) and cycles[0] > 2 * cycles[-1],
                   f"more flash bandwidth, fewer cycles (latency {latency}): {cycles}")
        expect(all(p["busiest"]["resource"] == "OffChipFlash (AXI1)" for p in sweep["points"]),
               f"flash the busiest: {[p['busiest'] for p in sweep['points']]}")
        check_points_against_run(tmp, corpus, sweep, "arm_kws_dnn_s")
    else:
        print("corpus model absent (../shared/vectors): only the example swept")

finish()
