"""What the CLI test scripts share: running the built ethosu-emu, counting checks and failures,
and the last lines and exit status every script ends with. Import it as `from harness import
run, expect, finish` after `harness.emu` is set."""
import subprocess
import sys

emu = None        # the ethosu-emu under test; the script sets it from its arguments
failures = []     # each failed check, in words
checks = 0


def run(args, want_rc=0, timeout=300):
    """ethosu-emu ARGS; a failure unless it exits with want_rc (None: any status)."""
    r = subprocess.run([emu, *args], capture_output=True, text=True, timeout=timeout)
    if want_rc is not None and r.returncode != want_rc:
        failures.append(f"{' '.join(args)}: exit {r.returncode}, expected {want_rc}: {r.stderr.strip()}")
    return r


def expect(condition, what):
    global checks
    checks += 1
    if not condition:
        failures.append(what)


def finish():
    """Prints each failure and the count, and exits 1 when one failed."""
    for f in failures:
        print("FAIL", f)
    print(f"{checks - len(failures)} of {checks} checks passed")
    sys.exit(1 if failures else 0)
