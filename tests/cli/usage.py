#!/usr/bin/env python3
"""The command line's own contract: --version (with the commit), and usage errors in the project's
error format with exit status 2 (a refused model exits 1); an unknown command says so, with the
nearest command names; the same binary under an FVP's name (the link beside it) takes the FVP's
command line. Usage: usage.py EMU VERSION."""
import os
import re
import subprocess
import sys

emu, version = sys.argv[1], sys.argv[2]
failures = []


checks = 0


def check(args, want_rc, want_out=None, want_err=None):
    global checks
    checks += 1
    run = subprocess.run([emu, *args], capture_output=True, text=True, timeout=30)
    what = " ".join(args) or "(no arguments)"
    if run.returncode != want_rc:
        failures.append(f"{what}: exit {run.returncode}, expected {want_rc}")
    if isinstance(want_out, re.Pattern) and not want_out.fullmatch(run.stdout.strip()):
        failures.append(f"{what}: stdout {run.stdout.strip()!r}, expected {want_out.pattern!r}")
    elif isinstance(want_out, str) and run.stdout.strip() != want_out:
        failures.append(f"{what}: stdout {run.stdout.strip()!r}, expected {want_out!r}")
    if want_err is not None:
        lines = run.stderr.strip().splitlines()
        if len(lines) != 1 or not lines[0].startswith("ethosu-emu: error: ") or want_err not in lines[0]:
            failures.append(f"{what}: stderr {run.stderr.strip()!r}, expected one error line with {want_err!r}")


check(["--version"], 0, want_out=re.compile(re.escape(f"ethosu-emu {version} (commit ") + r"[0-9A-Za-z.+-]+\)"))
check([], 2, want_err="subcommand is required")
check(["rnu", "model.bin"], 2, want_err="unknown command 'rnu'; did you mean 'run'? (commands: info, disasm, run,")
check(["swep"], 2, want_err="did you mean 'sweep'?")
check(["re"], 2, want_err="did you mean 'run' or 'report'?")
check(["xyzzy"], 2, want_err="unknown command 'xyzzy' (commands: ")
check(["run"], 2, want_err="MODEL is required")
check(["info", "m.tflite", "--no-such-option"], 2, want_err="--no-such-option")
check(["run", "/nonexistent/model.tflite"], 1, want_err="/nonexistent/model.tflite")

fvp = os.path.join(os.path.dirname(emu), "FVP_Corstone_SSE-300_Ethos-U55")
run = subprocess.run([fvp, "--version"], capture_output=True, text=True, timeout=30)
if run.returncode != 0 or not run.stdout.startswith(f"FVP_Corstone_SSE-300_Ethos-U55 (ethosu-emu {version}"):
    failures.append(f"{fvp} --version: exit {run.returncode}, stdout {run.stdout.strip()!r}")
run = subprocess.run([fvp, "-C", "ethosu.num_macs=100", "-a", emu], capture_output=True, text=True, timeout=30)
if run.returncode != 2 or "error: ethosu.num_macs: '100' MACs" not in run.stderr:
    failures.append(f"{fvp} -C ethosu.num_macs=100: exit {run.returncode}, stderr {run.stderr.strip()!r}")
checks += 2

for f in failures:
    print("FAIL", f)
print(f"{checks} checks, {len(failures)} failed")
sys.exit(1 if failures else 0)
