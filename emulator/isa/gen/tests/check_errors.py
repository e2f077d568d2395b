#!/usr/bin/env python3
"""Runs isagen.py on every err_*.toml here: each must fail with the message its
'# expect:' line names. A generator that accepts a broken description fails the test."""
import subprocess
import sys
from pathlib import Path

generator, folder = sys.argv[1], Path(sys.argv[2])
failures = 0
cases = sorted(folder.glob("err_*.toml"))
for case in cases:
    expect = case.read_text().splitlines()[0].removeprefix("# expect:").strip()
    # The other descriptions are needed for a full run; the broken one must stop it first.
    run = subprocess.run([sys.executable, generator, "--out-dir", "/nonexistent/never-written", str(case)],
                         capture_output=True, text=True)
    if run.returncode == 0 or expect not in run.stderr:
        print(f"FAIL {case.name}: exit {run.returncode}, stderr: {run.stderr.strip()!r}, expected {expect!r}")
        failures += 1
    else:
        print(f"ok   {case.name}")
print(f"{len(cases) - failures} passed, {failures} failed")
sys.exit(1 if failures or not cases else 0)
