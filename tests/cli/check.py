#!/usr/bin/env python3
"""`ethosu-emu check` and `ethosu-emu baseline` on the bundled example model (no corpus needed):
a pass, output drift within and beyond the tolerances (the first differing elements named), .npy
expectations, cycle and traffic drift (the layer that moved named; --allow-faster), every class of
bad manifest (exit 2, one error line naming the manifest, entry and key), a baseline -> check round
trip and --update, default entry names, JUnit XML, Markdown, the failures-only summary under its
size cap and the JSON summary against its schema, shards and their merge, the same output at -j 1
and -j 4; a model with no NPU operator refused (needs the corpus: skipped with a note without it).
Usage: check.py EMU [VECTORS_DIR]."""
import copy
import json
import os
import random
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import schema_check

emu = os.path.abspath(sys.argv[1])
vectors = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else ""
schema_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "schemas",
                           "check-summary.schema.json")
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
    expect_exit("check MODEL passes, the entry named after the model", emu_run(*one, "--expect", "ref.out0.bin",
                                                                                cwd=tmp), 0,
                "\nmodel  pass", "out0 exact", "1 entry: 1 passed, 0 failed")
    # Output drift: one element off by 128 as an int8 (its top bit flipped), one byte of 1024.
    drifted = bytearray(reference)
    drifted[100] ^= 0x80
    write_bytes(os.path.join(tmp, "drift.bin"), drifted)
    shape = json.loads(emu_run("run", "model.bin", "--input", "in.bin", "--json", "--output-prefix", "s",
                               cwd=tmp).stdout)["outputs"][0]["shape"]
    coordinates, rest = [], 100
    for d in reversed(shape):
        coordinates.insert(0, rest % d)
        rest //= d
    got, want = [b - 256 if b > 127 else b for b in (reference[100], drifted[100])]
    expect_exit("output drift fails, naming the element", emu_run(*one, "--expect", "drift.bin", cwd=tmp), 1, "FAIL",
                "output 0: 1 of 1024 elements differ, max |diff| 128 (first: "
                f"[{','.join(map(str, coordinates))}] got {got}, expected {want}); allowed: none (exact)", "1 failed")
    expect_exit("options do not swallow MODEL", emu_run("check", "--expect", "drift.bin", "--input", "in.bin",
                                                        "model.bin", cwd=tmp), 1, "1 of 1024 elements differ")
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
    expect("JUnit failure message has the figures", failure is not None and "1 of 1024 elements differ, max |diff| 128 ("
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

    # .npy expectations: the output's dtype and shape, compared by element.
    def npy(dtype, shape, data):
        header = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': ({', '.join(map(str, shape))},), }}"
        header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
        return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + data
    write_bytes(os.path.join(tmp, "ref.npy"), npy("|i1", shape, reference))
    write_bytes(os.path.join(tmp, "drift.npy"), npy("|i1", shape, bytes(drifted)))
    write_bytes(os.path.join(tmp, "uint8.npy"), npy("|u1", shape, reference))
    expect_exit(".npy expectation passes", emu_run(*one, "--expect", "ref.npy", cwd=tmp), 0, "out0 exact")
    expect_exit(".npy expectation compared by element", emu_run(*one, "--expect", "drift.npy", cwd=tmp), 1,
                "1 of 1024 elements differ, max |diff| 128")
    expect_exit(".npy of another dtype is the entry's error", emu_run(*one, "--expect", "uint8.npy", cwd=tmp), 1,
                "ERROR", "uint8.npy: --expect: holds dtype '|u1'; output 0")

    # Per-layer baselines name the layer that moved; --allow-faster lets fewer cycles pass.
    layers = entry["baseline"]["layers"]
    expect("baseline: cycles per layer summing to the total", layers and
           sum(layer["cycles"] for layer in layers) == cycles, json.dumps(layers))
    moved = copy.deepcopy(base)
    moved["entries"][0]["baseline"]["layers"][0]["cycles"] += 500
    moved["entries"][0]["baseline"]["cycles"] += 500
    write_json(os.path.join(tmp, "m", "moved.json"), moved)
    expect_exit("a cycle failure names the layer", emu_run("check", "--manifest", "m/moved.json", cwd=tmp), 1,
                f"moved most: layer 0 {layers[0]['name']} {layers[0]['cycles'] + 500} -> {layers[0]['cycles']} (-500)")
    expect_exit("--allow-faster: fewer cycles pass", emu_run("check", "--manifest", "m/moved.json", "--allow-faster",
                                                             cwd=tmp), 0, "pass")
    slower = copy.deepcopy(base)
    slower["entries"][0]["baseline"]["cycles"] -= 1
    slower["entries"][0]["baseline"]["allow_faster"] = True
    write_json(os.path.join(tmp, "m", "slower.json"), slower)
    expect_exit("allow_faster: more cycles still fail", emu_run("check", "--manifest", "m/slower.json", cwd=tmp), 1,
                "allowed ±0% or fewer")

    # Default names: the model's path without ../ and extension, not "../model".
    expect_exit("baseline without --name", emu_run("baseline", "--manifest", "deep/er/n.json", "model.bin", "--input",
                                                   "in.bin", cwd=tmp), 0, "entry \"model\" added")

    # The failures-only summary, the JSON summary against its schema, shards and their merge.
    many_fail = {"format": "ethosu-emu-manifest", "version": 1, "entries": [
        {"name": f"long-entry-name-{i:03}", "model": "model.bin", "inputs": ["in.bin"],
         "outputs": [["ref.out0.bin", "drift.bin"][i % 4 != 0]]} for i in range(40)]}
    write_json(os.path.join(tmp, "many_fail.json"), many_fail)
    whole = emu_run("check", "--manifest", "many_fail.json", "--summary-md", "s.md", "--summary-max-chars", "2000",
                    "--json", "whole.json", cwd=tmp)
    expect_exit("40 entries, 30 failing", whole, 1, "40 entries: 10 passed, 30 failed")
    summary_md = open(os.path.join(tmp, "s.md")).read()
    expect("--summary-md: failures only, within its cap, the rest counted",
           len(summary_md) <= 2000 and "long-entry-name-000" not in summary_md and "| long-entry-name-001 |" in
           summary_md and "more failed entries not shown" in summary_md, summary_md)
    with open(schema_path) as f:
        schema = json.load(f)
    with open(os.path.join(tmp, "whole.json")) as f:
        whole_json = json.load(f)
    problems = schema_check.errors(whole_json, schema)
    expect("--json: valid against docs/schemas/check-summary.schema.json", not problems, "; ".join(problems[:5]))
    expect("--json: counts and first differences", whole_json["counts"]["failed"] == 30 and
           whole_json["entries"][1]["outputs"][0]["first_differences"][0]["element"] == 100, json.dumps(whole_json)[:400])
    stdout_json = emu_run("check", "--manifest", "many_fail.json", "--json", "-", cwd=tmp)
    expect("--json -: JSON on stdout, the table on stderr", json.loads(stdout_json.stdout)["counts"]["entries"] == 40
           and "40 entries" in stdout_json.stderr, stdout_json.stderr[-200:])
    shard_names = []
    for k in (1, 2, 3):
        run = emu_run("check", "--manifest", "many_fail.json", "--shard", f"{k}/3", "--json", f"shard{k}.json",
                      "--junit", f"shard{k}.xml", cwd=tmp)
        with open(os.path.join(tmp, f"shard{k}.json")) as f:
            part = json.load(f)
        expect(f"shard {k}/3: valid summary with its shard", not schema_check.errors(part, schema)
               and part["shard"] == {"index": k, "count": 3} and f"shard {k}/3" in run.stdout)
        shard_names.append([e["name"] for e in part["entries"]])
    expect("shards split the entries, each once, none empty",
           sorted(sum(shard_names, [])) == sorted(e["name"] for e in many_fail["entries"]) and all(shard_names),
           str([len(n) for n in shard_names]))
    again = emu_run("check", "--manifest", "many_fail.json", "--shard", "2/3", "--json", "again.json", cwd=tmp)
    with open(os.path.join(tmp, "again.json")) as f:
        expect("a shard's entries are stable", [e["name"] for e in json.load(f)["entries"]] == shard_names[1])
    merged = emu_run("check", "--merge", "shard1.json", "shard2.json", "shard3.json", "--json", "merged.json",
                     "--junit", "merged.xml", cwd=tmp)
    expect_exit("--merge: the whole result", merged, 1, "40 entries: 10 passed, 30 failed")
    with open(os.path.join(tmp, "merged.json")) as f:
        merged_json = json.load(f)
    by_name = lambda d: sorted((e["name"], e["status"], e["cycles"], e["problems"]) for e in d["entries"])
    expect("--merge: the same entries and results as one run", by_name(merged_json) == by_name(whole_json))
    expect("--merge: JUnit of all", ET.parse(os.path.join(tmp, "merged.xml")).getroot().find("testsuite").get("tests")
           == "40")
    expect_usage_error("--merge: a shard twice", emu_run("check", "--merge", "shard1.json", "shard1.json", cwd=tmp),
                       "shard1.json", "shard.index: shard 1 is shard1.json too")
    expect_exit("--merge: a missing shard", emu_run("check", "--merge", "shard1.json", "shard3.json", cwd=tmp), 1,
                "shard 2/3 is missing", stream="stderr")
    expect_usage_error("--merge: not a summary", emu_run("check", "--merge", "many_fail.json", cwd=tmp),
                       "many_fail.json", "format: must be \"ethosu-emu-check-summary\"")
    expect_usage_error("--shard: malformed", emu_run("check", "--manifest", "many_fail.json", "--shard", "4/3", cwd=tmp),
                       "--shard", "1 <= K <= N")

    # A .tflite Vela never compiled has no NPU operator: refused unless asked for.
    plain = os.path.join(vectors, "add_8x8x32", "model.tflite") if vectors else ""
    if plain and os.path.exists(plain):
        golden = os.path.join(vectors, "add_8x8x32", "golden")
        ins = sorted(f for f in os.listdir(golden) if f.startswith("seed1.in"))
        cpu_args = ["check", plain, *sum((["--input", os.path.join(golden, f)] for f in ins), []), "--expect",
                    os.path.join(golden, "seed1.out0.bin")]
        expect_exit("a model with no NPU operator is refused", emu_run(*cpu_args, cwd=tmp), 1, "ERROR",
                    "has no NPU operator and no NPU compiler wrote it")
        expect_exit("--allow-cpu-only runs it", emu_run(*cpu_args, "--allow-cpu-only", cwd=tmp), 0, "pass")
    else:
        print(f"note: the no-NPU-operator case skipped: no {plain or 'VECTORS_DIR given'}")

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
        "entries[0].baseline.drift: unknown key; valid keys: drift_percent, allow_faster, cycles, traffic, layers")
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
