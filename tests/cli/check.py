#!/usr/bin/env python3
"""`ethosu-emu check` and `ethosu-emu baseline` on the bundled example model (no corpus needed):
a pass, output drift within and beyond the tolerances, cycle and traffic drift, every class of bad
manifest (exit 2, one error line naming the manifest, entry and key), a baseline -> check round
trip and --update, JUnit XML and Markdown reports, the same output at -j 1 and -j 4.
Usage: check.py EMU."""
import copy
import json
import os
import random
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

emu = os.path.abspath(sys.argv[1])
failures = []
passed = 0


def emu_run(*args, cwd):
    return subprocess.run([emu, *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def expect(what, condition, detail=""):
    global passed
    if condition:
        passed += 1
    else:
        failures.append(f"{what}{': ' + detail if detail else ''}")


def expect_exit(what, run, code, *needles, stream="stdout"):
    text = run.stdout if stream == "stdout" else run.stderr
    ok = run.returncode == code and all(n in text for n in needles)
    expect(what, ok, f"exit {run.returncode} (expected {code}), {stream} {text!r}, expected {needles}")


def expect_usage_error(what, run, *needles):
    lines = run.stderr.strip().splitlines()
    ok = (run.returncode == 2 and len(lines) == 1 and lines[0].startswith("ethosu-emu: error: ")
          and all(n in lines[0] for n in needles))
    expect(what, ok, f"exit {run.returncode}, stderr {run.stderr.strip()!r}, expected one error line with {needles}")


def write_json(path, document):
    with open(path, "w") as f:
        json.dump(document, f, indent=1)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


with tempfile.TemporaryDirectory() as tmp:
    emu_run("example", "model.bin", cwd=tmp)
    rng = random.Random(16)
    write_bytes(os.path.join(tmp, "in.bin"), bytes(rng.randrange(256) for _ in range(16 * 16 * 16)))
    # The expected output comes from `run`, the command check's comparison is measured against.
    emu_run("run", "model.bin", "--input", "in.bin", "--output-prefix", "ref", cwd=tmp)
    reference = read_bytes(os.path.join(tmp, "ref.out0.bin"))
    one = ["check", "model.bin", "--input", "in.bin"]

    # One model on the command line.
    expect_exit("check MODEL passes", emu_run(*one, "--expect", "ref.out0.bin", cwd=tmp), 0,
                "model.bin", "pass", "out0 exact", "1 entry: 1 passed, 0 failed")
    # Output drift: one element off by 128 as an int8 (its top bit flipped), one byte of 1024.
    drifted = bytearray(reference)
    drifted[100] ^= 0x80
    write_bytes(os.path.join(tmp, "drift.bin"), drifted)
    expect_exit("output drift fails", emu_run(*one, "--expect", "drift.bin", cwd=tmp), 1, "FAIL",
                "output 0: 1 of 1024 elements differ, max |diff| 128; allowed: none (exact)", "1 failed")
    expect_exit("output drift within max-abs-diff", emu_run(*one, "--expect", "drift.bin", "--max-abs-diff", "128",
                                                            cwd=tmp), 0, "out0 1/1024 differ, max 128")
    expect_exit("output drift beyond max-abs-diff", emu_run(*one, "--expect", "drift.bin", "--max-abs-diff", "127",
                                                            cwd=tmp), 1, "allowed: max |diff| 127")
    expect_exit("output drift within max-differing", emu_run(*one, "--expect", "drift.bin", "--max-differing", "1",
                                                             cwd=tmp), 0, "pass")
    expect_exit("both limits: count beyond", emu_run(*one, "--expect", "drift.bin", "--max-differing", "0",
                                                     "--max-abs-diff", "200", cwd=tmp), 1,
                "allowed: max |diff| 200, 0 differing")
    write_bytes(os.path.join(tmp, "short.bin"), reference[:-1])
    expect_exit("output of another size", emu_run(*one, "--expect", "short.bin", cwd=tmp), 1,
                "output 0: 1024 bytes, the expected file has 1023")
    expect_exit("a missing input is an error of the entry", emu_run("check", "model.bin", "--expect", "ref.out0.bin",
                                                                    cwd=tmp), 1, "ERROR",
                "0 input files given; the model has 1 inputs")

    # baseline, then check on what it wrote; then a cycle and a traffic drift.
    expect_exit("baseline writes a manifest", emu_run("baseline", "--manifest", "m/base.json", "model.bin", "--input",
                                                      "in.bin", "--name", "example", cwd=tmp), 0,
                "entry \"example\" added")
    manifest_path = os.path.join(tmp, "m", "base.json")
    with open(manifest_path) as f:
        base = json.load(f)
    entry = base["entries"][0]
    expect("baseline: format and version", base["format"] == "ethosu-emu-manifest" and base["version"] == 1)
    expect("baseline: paths relative to the manifest", entry["model"] == "../model.bin"
           and entry["inputs"] == ["../in.bin"] and entry["outputs"] == ["example.out0.bin"], str(entry))
    expect("baseline: the output written next to it",
           read_bytes(os.path.join(tmp, "m", "example.out0.bin")) == reference)
    run_json = json.loads(emu_run("run", "model.bin", "--input", "in.bin", "--json", "--output-prefix", "j",
                                  cwd=tmp).stdout)
    expect("baseline: cycles and traffic as run --json reports them",
           entry["baseline"]["cycles"] == run_json["cycles"]["total"]
           and entry["baseline"]["traffic"] == run_json["traffic"], json.dumps(entry["baseline"]))
    expect_exit("check on a fresh baseline passes", emu_run("check", "--manifest", "m/base.json", cwd=tmp), 0,
                "example", "pass", "(+0.0%)")
    cycles = entry["baseline"]["cycles"]
    drift = copy.deepcopy(base)
    drift["entries"][0]["baseline"]["cycles"] = cycles * 3 // 2
    write_json(os.path.join(tmp, "m", "cycles.json"), drift)
    expect_exit("cycle drift fails", emu_run("check", "--manifest", "m/cycles.json", cwd=tmp), 1, "FAIL",
                f"cycles: {cycles} vs baseline {cycles * 3 // 2} (-33.3%, allowed ±0%)")
    drift["entries"][0]["baseline"]["drift_percent"] = 34
    write_json(os.path.join(tmp, "m", "cycles.json"), drift)
    expect_exit("cycle drift within drift_percent", emu_run("check", "--manifest", "m/cycles.json", cwd=tmp), 0,
                "(-33.3%)")
    traffic = copy.deepcopy(base)
    traffic["entries"][0]["baseline"]["traffic"]["memories"]["Sram"]["read_bytes"] += 64
    write_json(os.path.join(tmp, "m", "traffic.json"), traffic)
    expect_exit("traffic drift fails", emu_run("check", "--manifest", "m/traffic.json", cwd=tmp), 1,
                "Sram read bytes: ")
    expect_exit("baseline --update", emu_run("baseline", "--manifest", "m/cycles.json", "--update", cwd=tmp), 0,
                "the baselines of 1 entries rewritten")
    with open(os.path.join(tmp, "m", "cycles.json")) as f:
        updated = json.load(f)["entries"][0]["baseline"]
    expect("--update: figures rewritten, drift kept", updated["cycles"] == cycles and updated["drift_percent"] == 34,
           json.dumps(updated))
    expect_exit("baseline again replaces the entry", emu_run("baseline", "--manifest", "m/base.json", "model.bin",
                                                             "--input", "in.bin", "--name", "example", cwd=tmp), 0,
                "entry \"example\" replaced")

    # A manifest of every outcome: the reports.
    mixed = {"format": "ethosu-emu-manifest", "version": 1, "entries": [
        {"name": "passes", "model": "model.bin", "inputs": ["in.bin"], "outputs": ["ref.out0.bin"]},
        {"name": "drifts", "model": "model.bin", "inputs": ["in.bin"], "outputs": ["drift.bin"]},
        {"name": "refused", "model": "in.bin", "inputs": ["in.bin"], "outputs": ["ref.out0.bin"]},
        {"name": "skipped", "model": "model.bin", "skip": "not today"},
        {"name": "a|b", "model": "model.bin", "inputs": ["in.bin"], "outputs": [None],
         "baseline": {"cycles": cycles}},
    ]}
    write_json(os.path.join(tmp, "mixed.json"), mixed)
    run = emu_run("check", "--manifest", "mixed.json", "--junit", "r.xml", "--markdown", "r.md", cwd=tmp)
    expect_exit("mixed manifest fails", run, 1, "5 entries: 2 passed, 1 failed, 1 errors, 1 skipped")
    rows = [line.split()[:2] for line in run.stdout.splitlines()[1:-1] if not line.startswith(" ")]
    expect("text table in manifest order", rows == [["passes", "pass"], ["drifts", "FAIL"], ["refused", "ERROR"],
                                                    ["skipped", "skip"], ["a|b", "pass"]], str(rows))
    suite = ET.parse(os.path.join(tmp, "r.xml")).getroot().find("testsuite")
    counts = {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")}
    expect("JUnit counts", counts == {"tests": "5", "failures": "1", "errors": "1", "skipped": "1"}, str(counts))
    cases = suite.findall("testcase")
    expect("JUnit testcases", [c.get("name") for c in cases] == ["passes", "drifts", "refused", "skipped", "a|b"])
    failure = cases[1].find("failure")
    expect("JUnit failure message has the figures", failure is not None and "1 of 1024 elements differ, max |diff| 128"
           in failure.get("message"))
    expect("JUnit error and skip", cases[2].find("error") is not None
           and cases[3].find("skipped").get("message") == "not today")
    with open(os.path.join(tmp, "r.md")) as f:
        markdown = f.read()
    expect("Markdown table", "| entry | result | NPU cycles | outputs | problems |" in markdown
           and "| drifts | **FAIL** |" in markdown and "| a\\|b | pass |" in markdown, markdown)
    many = {"format": "ethosu-emu-manifest", "version": 1, "entries": [
        {"name": f"e{i}", "model": "model.bin", "inputs": ["in.bin"], "outputs": [["ref.out0.bin", "drift.bin"][i % 2]]}
        for i in range(12)]}
    write_json(os.path.join(tmp, "many.json"), many)
    serial = emu_run("check", "--manifest", "many.json", "-j", "1", cwd=tmp)
    parallel = emu_run("check", "--manifest", "many.json", "-j", "4", cwd=tmp)
    expect("the same report at -j 1 and -j 4", serial.stdout == parallel.stdout and serial.returncode == 1
           and "12 entries: 6 passed, 6 failed" in serial.stdout, parallel.stdout)

    # Bad manifests: one error line naming the manifest, the entry and the key; exit 2.
    good = {"name": "e", "model": "model.bin", "inputs": ["in.bin"], "outputs": ["ref.out0.bin"]}

    def bad(what, document, *needles, text=None):
        path = os.path.join(tmp, "bad.json")
        with open(path, "w") as f:
            f.write(text if text is not None else json.dumps(document))
        expect_usage_error(what, emu_run("check", "--manifest", "bad.json", cwd=tmp), "bad.json", *needles)

    def with_entry(**changes):
        entry = {**good, **changes}
        return {"format": "ethosu-emu-manifest", "version": 1, "entries": [{k: v for k, v in entry.items() if v is not None}]}

    bad("missing model", with_entry(model="nothere.bin"), "entries[0].model: no such file")
    bad("missing input", with_entry(inputs=["in.bin", "gone.bin"]), "entries[0].inputs[1]: no such file")
    bad("missing expected output", with_entry(outputs=[{"file": "gone.bin"}]), "entries[0].outputs[0].file: no such")
    bad("wrong type", with_entry(inputs="in.bin"), "entries[0].inputs: must be a list of strings")
    bad("negative tolerance", with_entry(outputs=[{"file": "ref.out0.bin", "max_abs_diff": -1}]),
        "entries[0].outputs[0].max_abs_diff: must be a non-negative number")
    bad("fractional count", with_entry(outputs=[{"file": "ref.out0.bin", "max_differing": 1.5}]),
        "entries[0].outputs[0].max_differing: must be a non-negative integer")
    bad("negative baseline", with_entry(baseline={"cycles": -5}), "entries[0].baseline.cycles: must be a non-negative")
    bad("unknown key", with_entry(tolerance=1), "entries[0].tolerance: unknown key; valid keys: name, model, npu,")
    bad("unknown baseline key", with_entry(baseline={"cycles": 1, "drift": 3}),
        "entries[0].baseline.drift: unknown key; valid keys: drift_percent, cycles, traffic")
    bad("unknown memory", with_entry(baseline={"cycles": 1, "traffic": {"memories": {"Flash": {
        "read_bytes": 1, "write_bytes": 0}}}}), "entries[0].baseline.traffic.memories.Flash: no memory")
    bad("missing model key", with_entry(model=None), "entries[0].model: missing")
    bad("wrong version", {"format": "ethosu-emu-manifest", "version": 2, "entries": []}, "version: 2 is not a version")
    bad("wrong format", {"format": "other", "version": 1, "entries": []}, "format: must be \"ethosu-emu-manifest\"")
    bad("unknown top-level key", {"format": "ethosu-emu-manifest", "version": 1, "entries": [], "entry": []},
        "entry: unknown key; valid keys: format, version, comment, entries")
    bad("malformed JSON", None, "JSON", text='{"format": "ethosu-emu-manifest",')
    bad("JSON nested too deep", None, "JSON: nested deeper than", text='{"entries": ' + "[" * 100000 + "]" * 100000 + "}")
    bad("duplicate names", {"format": "ethosu-emu-manifest", "version": 1, "entries": [good, good]},
        "entries[1].name: \"e\" names an earlier entry too")
    bad("nothing to check", with_entry(outputs=None), "entries[0]: nothing to check")
    expect_usage_error("absent manifest", emu_run("check", "--manifest", "absent.json", cwd=tmp), "absent.json")
    expect_usage_error("MODEL and --manifest", emu_run("check", "model.bin", "--manifest", "mixed.json", cwd=tmp),
                       "either MODEL")
    expect_usage_error("run options with --manifest", emu_run("check", "--manifest", "mixed.json", "--input", "in.bin",
                                                              cwd=tmp), "go with MODEL")
    expect_usage_error("check MODEL without --expect", emu_run(*one, cwd=tmp), "nothing to check: give --expect")
    expect_usage_error("--update with MODEL", emu_run("baseline", "--manifest", "m/base.json", "--update", "model.bin",
                                                      cwd=tmp), "--update")

for f in failures:
    print("FAIL", f)
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
