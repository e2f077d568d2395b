#!/usr/bin/env python3
"""`ethosu-emu check` over the whole corpus as one manifest written by scripts/corpus_manifest.py.

  check_corpus.py EMU SCRIPT VECTORS VECTORS_VELA pass     the whole manifest passes (exit 0)
  check_corpus.py EMU SCRIPT VECTORS VECTORS_VELA broken   one output byte flipped and one cycle
                                                           baseline 50% off: exit 1, a summary
                                                           naming both entries and their figures

Skips (exit code 77, ctest's SKIP_RETURN_CODE) when the corpus is absent."""
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
emu, script, vectors, vectors_vela, mode = sys.argv[1:6]
if not os.path.isfile(os.path.join(vectors, "index.csv")):
    print(f"skipped: no corpus at {vectors} (ETHOSU_VECTORS_DIR)")
    sys.exit(SKIP)
corpus_args = ["--vectors", vectors]
if os.path.isfile(os.path.join(vectors_vela, "index.csv")):
    corpus_args += ["--vectors-vela", vectors_vela]
else:
    print(f"note: no {vectors_vela}; the manifest covers {vectors} only")

with tempfile.TemporaryDirectory() as tmp:
    manifest = os.path.join(tmp, "corpus.json")
    subprocess.run([sys.executable, script, *corpus_args, "-o", manifest], check=True)
    if mode == "pass":
        run = subprocess.run([emu, "check", "--manifest", manifest, "--junit", os.path.join(tmp, "corpus.xml")],
                             capture_output=True, text=True, timeout=1200)
        print(run.stdout.splitlines()[-1] if run.stdout else "", run.stderr)
        if run.returncode != 0:
            print("\n".join(line for line in run.stdout.splitlines() if " FAIL " in line or " ERROR " in line
                            or line.startswith("    ")))
        sys.exit(0 if run.returncode == 0 else 1)

    with open(manifest) as f:
        document = json.load(f)
    entries = {e["name"]: e for e in document["entries"]}
    flipped_name, drifted_name = "person_detect/ethos-u55-128/seed1", "mlperftiny_kws_dscnn_int8/ethos-u85-256/seed2"
    # A golden with one byte changed by one LSB.
    flipped = entries[flipped_name]
    with open(os.path.join(tmp, flipped["outputs"][0]), "rb") as f:
        golden = bytearray(f.read())
    expected_value = golden[1] - 256 if golden[1] > 127 else golden[1]
    golden[1] = (golden[1] + 1) % 256
    flipped_value = golden[1] - 256 if golden[1] > 127 else golden[1]
    with open(os.path.join(tmp, "flipped.out0.bin"), "wb") as f:
        f.write(golden)
    flipped["outputs"][0] = "flipped.out0.bin"
    # A cycle baseline 50% above the run's own figure.
    drifted = entries[drifted_name]
    run_json = subprocess.run([emu, "run", os.path.join(tmp, drifted["model"]), "--json", "--output-prefix",
                               os.path.join(tmp, "o"), *sum((["--input", os.path.join(tmp, i)] for i in drifted["inputs"]), [])],
                              capture_output=True, text=True, check=True).stdout
    cycles = json.loads(run_json)["cycles"]["total"]
    drifted["baseline"] = {"cycles": cycles * 3 // 2, "drift_percent": 5}
    # Those two among a few passing entries.
    document["entries"] = document["entries"][:6] + [flipped, drifted]
    with open(manifest, "w") as f:
        json.dump(document, f)
    run = subprocess.run([emu, "check", "--manifest", manifest], capture_output=True, text=True, timeout=600)
    print(run.stdout)
    wanted = [f"output 0: 1 of 2 elements differ, max |diff| 1 (first: [0,1] got {expected_value}, expected "
              f"{flipped_value}); allowed: none (exact)",
              f"cycles: {cycles} vs baseline {cycles * 3 // 2} (-33.3%, allowed ±5%)",
              "8 entries: 6 passed, 2 failed, 0 errors, 0 skipped"]
    missing = [w for w in wanted if w not in run.stdout]
    rows = {tuple(line.split()[:2]) for line in run.stdout.splitlines()}
    missing += [f"{name} FAIL" for name in (flipped_name, drifted_name) if (name, "FAIL") not in rows]
    if run.returncode != 1 or missing:
        print(f"FAIL: exit {run.returncode} (expected 1); missing from the summary: {missing}\n{run.stderr}")
        sys.exit(1)
    print("broken expectations reported as expected")
