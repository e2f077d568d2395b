#!/usr/bin/env python3
"""What run and info tell a first-time user: a warning for each input not given, the output files by
their real names, --pmu counts also in the layout of MLEK's profiler and the core driver's event
names (ETHOSU_PMU_*) accepted, a system configuration of another NPU generation refused, the memory
system info shows for the run's options (port by port, from a --config file too), and the
quantisation of every tensor in info (text and --json). Usage: run_options.py EMU [VECTORS_DIR]."""
import json
import os
import re
import subprocess
import sys
import tempfile

import harness
from harness import run, expect, finish

emu = sys.argv[1]
harness.emu = emu
vectors = sys.argv[2] if len(sys.argv) > 2 else ""




with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "example.bin")
    run(["example", model])
    info = json.loads(run(["info", model, "--json"]).stdout)
    prefix = os.path.join(tmp, "res")

    # Inputs not given: one warning each, naming the input; none when all are given or no data is computed.
    r = run(["run", model, "--output-prefix", prefix])
    warnings = [l for l in r.stderr.splitlines() if l.startswith("ethosu-emu: warning: no --input for input")]
    expect(len(warnings) == len(info["inputs"]) > 0, f"missing-input warnings: {r.stderr!r}")
    expect(all(f"input {i} (" in w for i, w in enumerate(warnings)), f"warnings do not name the inputs: {warnings}")
    inputs = []
    for i, t in enumerate(info["inputs"]):
        inputs += ["--input", os.path.join(tmp, f"in{i}.bin")]
        with open(inputs[-1], "wb") as f:
            f.write(bytes(t["bytes"]))
    r = run(["run", model, "--output-prefix", prefix, *inputs])
    expect("warning" not in r.stderr, f"a warning with every input given: {r.stderr!r}")
    r = run(["run", model, "--timing-only"])
    expect("warning" not in r.stderr, f"a warning in a timing-only run: {r.stderr!r}")

    # The real output file names, which exist.
    r = run(["run", model, "--output-prefix", prefix, *inputs])
    files = [f"{prefix}.out{k}.bin" for k in range(len(info["outputs"]))]
    expect(f"wrote {', '.join(files)}" in r.stdout, f"output names not printed: {r.stdout!r}")
    expect("<k>" not in r.stdout, f"a template in {r.stdout!r}")
    expect(all(os.path.getsize(f) == t["bytes"] for f, t in zip(files, info["outputs"])), "output files missing")

    # --pmu: the driver's names, and MLEK's profiler layout after the driver-style lines.
    events = ["ETHOSU_PMU_AXI0_RD_DATA_BEAT_RECEIVED", "AXI0_WR_DATA_BEAT_WRITTEN", "ETHOSU_PMU_NPU_IDLE",
              "ETHOSU_PMU_MAC_ACTIVE"]
    r = run(["run", model, "--timing-only", "--pmu", ",".join(events)])
    lines = r.stdout.splitlines()
    expect("Profile for Inference:" in lines, f"no MLEK profile in {r.stdout!r}")
    profile = {}
    for line in lines[lines.index("Profile for Inference:") + 1:] if "Profile for Inference:" in lines else []:
        m = re.fullmatch(r"NPU (\S+) (beats|cycles|transactions): (\d+)", line)
        if m:
            profile[m.group(1)] = int(m.group(3))
    expect(list(profile) == ["AXI0_RD_DATA_BEAT_RECEIVED", "AXI0_WR_DATA_BEAT_WRITTEN", "MAC_ACTIVE", "ACTIVE", "IDLE",
                             "TOTAL"], f"MLEK profile lines: {profile}")
    driver = {name: int(count) for count, name in re.findall(r"ethosu_pmu_cntr\d : (\d+) \((\w+)\)", r.stdout)}
    expect(profile.get("AXI0_RD_DATA_BEAT_RECEIVED") == driver.get("AXI0_RD_DATA_BEAT_RECEIVED"),
           "the profile's beats are not the counter's")
    cycle_counter = int(re.search(r"ethosu_pmu_cycle_cntr : (\d+)", r.stdout).group(1))
    expect(profile.get("TOTAL") == cycle_counter and profile.get("ACTIVE", 0) + profile.get("IDLE", 0) == cycle_counter,
           f"ACTIVE + IDLE != TOTAL: {profile}")
    out = json.loads(run(["run", model, "--timing-only", "--json", "--pmu", ",".join(events)]).stdout)
    expect(out["pmu"]["profile"].get("npu_total_cycles") == cycle_counter and
           "npu_axi0_rd_data_beat_received" in out["pmu"]["profile"], f"pmu.profile: {out['pmu']}")
    r = run(["run", model, "--timing-only", "--pmu", "ETHOSU_PMU_NO_SUCH_EVENT"], want_rc=1)
    expect("ETHOSU_PMU_NO_SUCH_EVENT" in r.stderr and "no such event" in r.stderr, f"unknown event: {r.stderr!r}")

    # A system configuration of another generation is refused, naming this NPU's; its own is taken.
    r = run(["run", model, "--timing-only", "--system-config", "Ethos_U85_SYS_DRAM_Mid"], want_rc=1)
    expect(r.stderr.startswith("ethosu-emu: error: --system-config: Ethos_U85_SYS_DRAM_Mid:") and
           "another NPU generation" in r.stderr and "Ethos_U55_Deep_Embedded" in r.stderr, f"{r.stderr!r}")
    r = run(["run", model, "--timing-only", "--system-config", "Ethos_U55_Deep_Embedded"])
    expect("Ethos_U55_Deep_Embedded" in r.stdout, f"{r.stdout!r}")

    # info takes the run's system options and shows what the timing model takes, port by port;
    # it refuses what run refuses.
    fvp = ["--system-config", "Ethos_U55_High_End_Corstone300_FVP"]
    text = run(["info", model, *fvp]).stdout
    expect("memory:   Ethos_U55_High_End_Corstone300_FVP, Shared_Sram (as given" in text and
           "AXI0: Sram 8 B/cycle, 32-byte spans in 32-byte bursts, latency 32 read / 32 write" in text and
           "AXI1: OffChipFlash 1.12 B/cycle, 128-byte spans in 64-byte bursts, latency 64 read / 0 write" in text,
           f"info text: {text!r}")
    default_ports = json.loads(run(["info", model, "--json"]).stdout)["memory_system"]["ports"]
    expect(default_ports[1]["bytes_per_cycle"] == 1.0 and default_ports[1]["axi_burst_bytes"] == 128,
           f"Vela's default: {default_ports}")
    r = run(["info", model, "--system-config", "Ethos_U85_SYS_DRAM_Mid"], want_rc=1)
    expect("another NPU generation" in r.stderr, f"{r.stderr!r}")
    # A board of the user's: a flash behind a timing adapter whose cap counts 64-byte bursts.
    board = os.path.join(tmp, "board.ini")
    with open(board, "w") as f:
        f.write("[System_Config.My_Board]\ninherit=System_Config.Ethos_U55_High_End_Embedded\n"
                "OffChipFlash_clock_scale=1.0\nOffChipFlash_burst_split=64\n"
                "OffChipFlash_bandwidth_cap_words=100\nOffChipFlash_bandwidth_cap_period=400\n")
    ports = json.loads(run(["info", model, "--json", "--config", board, "--system-config", "My_Board"]).stdout)[
        "memory_system"]["ports"]
    expect(ports[1]["bytes_per_cycle"] == 13 * 64 / 400 and ports[1]["burst_length"] == 128, f"My_Board: {ports}")
    r = run(["run", model, "--timing-only", "--config", board, "--system-config", "My_Board"])
    expect("My_Board" in r.stdout, f"{r.stdout!r}")

    # Quantisation in info: every tensor has the key; the corpus model's values, in text and JSON.
    expect(all("quantization" in t for t in info["inputs"] + info["outputs"]), "no quantization key in info --json")
    if vectors and os.path.isdir(vectors):
        pd = os.path.join(vectors, "person_detect", "ethos-u55-128", "model_vela.tflite")
        info = json.loads(run(["info", pd, "--json"]).stdout)
        q = info["inputs"][0]["quantization"]
        expect(q and len(q["scale"]) == 1 and q["zero_point"] == [-1] and abs(q["scale"][0] - 1 / 127.5) < 1e-7,
               f"person_detect input quantization: {q}")
        expect(info["outputs"][0]["quantization"]["zero_point"] == [-128], f"{info['outputs'][0]}")
        text = run(["info", pd]).stdout
        expect(re.search(r"\[0\] input \[1x96x96x1\] int8 .* scale 0\.00784\d* zero point -1\n", text),
               f"info text: {text!r}")
    else:
        print("corpus absent: quantisation values not checked")

finish()
