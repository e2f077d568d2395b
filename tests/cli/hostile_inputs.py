#!/usr/bin/env python3
"""Runs ethosu-emu on each reproducer of ../shared/hostile with its README command and checks
the outcome the project promises for hostile input: exit status 1, exactly one
"ethosu-emu: error: FILE: PLACE: FIELD: reason" line naming the file (PLACE: file@0x.. for a file
offset, cmd@0x.. for a command-stream offset), within 2 s of wall
time and 200 MB of peak RSS.

  hostile_inputs.py --list                      the case names (ctest registers one test each)
  hostile_inputs.py E HOSTILE_DIR VECTORS_DIR CASE

A case whose files are absent is skipped (exit code 77, ctest's SKIP_RETURN_CODE)."""

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
MAX_SECONDS = 2.0
MAX_RSS_BYTES = 200 * 1000 * 1000
# A safety net for the machine, far above what a passing case may use: a runaway case is killed
# at this address-space size (or at 4 GB where the README's command sets that cap itself).
ADDRESS_SPACE_CAP = 2_000_000_000
ERROR_LINE = re.compile(r"^ethosu-emu: error: (?P<file>.*?): (?:file|cmd)@0x[0-9a-f]+: (?P<field>[^:]+?): .+$")

# name -> (reproducer, arguments after E, file the error must name, vectors needed, address-space cap).
# {F}: the reproducer, {V}: the vectors folder, {T}: a scratch folder, {M}: the bundled example model.
U55 = ["--npu", "ethos-u55-128"]
NO_WORK_LIMITS = ["--max-op-work", str(2**62), "--max-run-work", str(2**62)]
CASES = {
    "op_conv_only": ("op_conv_only.bin", ["run", "{F}", *U55, "--timing-only"], "{F}", False, None),
    "op_depthwise_only": ("op_depthwise_only.bin", ["run", "{F}", *U55, "--timing-only"], "{F}", False, None),
    "op_pool_only": ("op_pool_only.bin", ["run", "{F}", *U55, "--timing-only"], "{F}", False, None),
    "op_elementwise_only": ("op_elementwise_only.bin", ["run", "{F}", *U55, "--timing-only"], "{F}", False, None),
    "ub_u55_cost_215": ("ub_u55_cost_215.tflite", ["run", "{F}", "--timing-only"], "{F}", False, None),
    "ub_u55_cost_222": ("ub_u55_cost_222.bin", ["run", "{F}", *U55, "--timing-only"], "{F}", False, None),
    "ub_timing_model_131": ("ub_timing_model_131.npz", ["run", "{F}", "--timing-only"], "{F}", False, None),
    "u85_accfmt_conv": ("u85_accfmt_conv.bin", ["run", "{F}", "--npu", "ethos-u85-256", "--timing-only"], "{F}",
                        False, None),
    "ub_u85_cost_357": ("ub_u85_cost_357.npz", ["run", "{F}", "--timing-only"], "{F}", False, None),
    "act_relu_elementwise_min": ("act_relu_elementwise_min.bin", ["run", "{F}", *U55, "--timing-only"], "{F}",
                                 False, None),
    "ub_op_cost_47": ("ub_op_cost_47.tflite", ["run", "{F}"], "{F}", False, None),
    "ub_elementwise_109": ("ub_elementwise_109.tflite",
                           ["run", "{F}", "--input", "{V}/mul_8x8x32_i16/golden/seed1.in0.bin",
                            "--input", "{V}/mul_8x8x32_i16/golden/seed1.in1.bin", "--output-prefix", "{T}/o"],
                           "{F}", True, None),
    "ub_conv_427_dw_ifm_b64": ("ub_conv_427_dw_ifm_b64.tflite",
                               ["run", "{F}", "--input", "{V}/dw_k3s1_same_16x16x32_relu6/golden/seed1.in0.bin",
                                "--output-prefix", "{T}/o"], "{F}", True, None),
    "ub_conv_430_u85": ("ub_conv_430_u85.npz", ["run", "{F}", "--output-prefix", "{T}/o"], "{F}", False, None),
    "ub_pool_218_reducesum_b64": ("ub_pool_218_reducesum_b64.tflite",
                                  ["run", "{F}", "--input", "{V}/mlperftiny_kws_dscnn_int8/golden/seed1.in0.bin",
                                   "--output-prefix", "{T}/o"], "{F}", True, None),
    "mem_upscale_alias": ("mem_upscale_alias.npz", ["run", "{F}", "--output-prefix", "{T}/o"], "{F}", False, None),
    # With the work limits raised, the buffer limit refuses these in timing-only runs as in full runs.
    "mem_upscale_alias_timing_only": ("mem_upscale_alias.npz", ["run", "{F}", "--timing-only", *NO_WORK_LIMITS], "{F}",
                                      False, None),
    "mem_u85_chained_ofm_alias_timing_only": ("mem_u85_chained_ofm_alias.npz",
                                              ["run", "{F}", "--timing-only", *NO_WORK_LIMITS], "{F}", False, None),
    "mem_u85_chained_ofm_alias": ("mem_u85_chained_ofm_alias.npz", ["run", "{F}", "--output-prefix", "{T}/o"], "{F}",
                                  False, None),
    "cpu_dos_pool_stride0": ("cpu_dos_pool_stride0.npz", ["run", "{F}", "--output-prefix", "{T}/o"], "{F}", False,
                             None),
    "cpu_dos_conv_alias_u55": ("cpu_dos_conv_alias_u55.npz", ["run", "{F}", "--output-prefix", "{T}/o"], "{F}",
                               False, None),
    "loop_person_detect_u85": ("loop_person_detect_u85.tflite",
                               ["run", "{F}", "--input", "{V}/person_detect/golden/seed1.in0.bin",
                                "--output-prefix", "{T}/o"], "{F}", True, None),
    "zipbomb_info": ("zipbomb_stream_16Mwords.npz", ["info", "{F}"], "{F}", False, None),
    "zipbomb_disasm": ("zipbomb_stream_16Mwords.npz", ["disasm", "{F}"], "{F}", False, None),
    "zipbomb_run": ("zipbomb_stream_16Mwords.npz", ["run", "{F}", "--output-prefix", "{T}/o"], "{F}", False, None),
    "debug_db_dev_zero": (None, ["run", "{M}", "--debug-db", "/dev/zero", "--output-prefix", "{T}/o"], "/dev/zero",
                          False, None),
    "config_dev_zero": (None, ["run", "{M}", "--config", "/dev/zero", "--output-prefix", "{T}/o"], "/dev/zero",
                        False, None),
    "raw_stream_2500M": (None, ["run", "{T}/z.bin", *U55], "{T}/z.bin", False, 4_000_000_000),
    "truncate_during_run": ("truncate_during_run.sh", None, "m.tflite", True, None),
}


# A process's peak RSS includes that of the process it was forked from (this Python, ~11 MB):
# GNU time, a small C program, forks the command itself and reports the command's own peak.
GNU_TIME = "/usr/bin/time"


def peak_rss_run(argv, cap, kill_after):
    """Runs argv with an address-space cap (None: none), killed after kill_after seconds; returns
    (status, stdout, stderr, seconds, peak RSS)."""
    def limit():
        if cap is not None:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    rss_file = tempfile.NamedTemporaryFile(mode="r")
    if os.access(GNU_TIME, os.X_OK):
        argv = [GNU_TIME, "-q", "-f", "%M", "-o", rss_file.name, *argv]
    start = time.monotonic()
    with rss_file, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, stdout=out, stderr=err, preexec_fn=limit, start_new_session=True)
        deadline = start + kill_after
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(child.pid, signal.SIGKILL)
            time.sleep(0.005)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status)
        reported = rss_file.read().split()
        peak_kb = int(reported[-1]) if reported and reported[-1].isdigit() else usage.ru_maxrss
        return code, out.read().decode(errors="replace"), err.read().decode(errors="replace"), seconds, peak_kb * 1024


def main():
    if sys.argv[1:] == ["--list"]:
        print(";".join(CASES))
        return 0
    emu, hostile, vectors, name = sys.argv[1:5]
    # A sanitizer build reserves terabytes of shadow address space and runs several times slower:
    # there the cases run without the address-space cap and the time and memory budgets, and must
    # end in the same one error line with no sanitizer report.
    sanitized = sys.argv[5:] == ["--sanitized"]
    # Past the budget a case is killed and its time reported; a sanitizer build of the fuzzers'
    # configuration takes about 10 s on loop_person_detect_u85's 131072 commands (1.1 s in Release).
    kill_after = 120 if sanitized else MAX_SECONDS * 5
    reproducer, args, named_file, needs_vectors, cap = CASES[name]
    if reproducer and not os.path.exists(os.path.join(hostile, reproducer)):
        print(f"SKIP: {hostile}/{reproducer} is absent")
        return SKIP
    if needs_vectors and not os.path.isdir(vectors):
        print(f"SKIP: the Vela corpus {vectors} is absent")
        return SKIP
    with tempfile.TemporaryDirectory() as scratch:
        example = os.path.join(scratch, "example.bin")
        subprocess.run([emu, "example", example], check=True, capture_output=True)
        fill = {"{F}": os.path.join(hostile, reproducer or ""), "{V}": vectors, "{T}": scratch, "{M}": example}

        def expand(text):
            for placeholder, value in fill.items():
                text = text.replace(placeholder, value)
            return text
        if name == "raw_stream_2500M":
            with open(os.path.join(scratch, "z.bin"), "wb") as f:
                f.truncate(2500 * 1024 * 1024)  # sparse: no disk space
        if args is None:  # the README's shell script: it runs E itself and prints rc=<status>
            code, out, err, seconds, rss = peak_rss_run(
                ["sh", fill["{F}"], emu, vectors], None if sanitized else cap or ADDRESS_SPACE_CAP, kill_after)
            match = re.search(r"rc=(\d+)", out)
            code = int(match.group(1)) if match else -1
        else:
            code, out, err, seconds, rss = peak_rss_run([emu, *map(expand, args)],
                                                        None if sanitized else cap or ADDRESS_SPACE_CAP, kill_after)
        named = expand(named_file)
    print(f"{name}: exit {code}, {seconds:.2f} s, peak RSS {rss / 1e6:.1f} MB")
    print("stderr:", err.strip()[:2000])
    problems = []
    # The script shrinks the file 40 ms into the run; on a loaded machine (or a faster build) the
    # run may end first, a correct run too. The order is fixed in
    # tests/memory's MemoryDeathTest.FileShrunkWhileMappedEndsWithOneErrorLine.
    if name == "truncate_during_run" and code == 0 and not err.strip():
        print("the run ended before the file shrank: a correct run")
        return 0
    if code != 1:
        problems.append(f"exit status {code}, expected 1")
    error_lines = [line for line in err.splitlines() if line.startswith("ethosu-emu: error:")]
    if len(error_lines) != 1:
        problems.append(f"{len(error_lines)} 'ethosu-emu: error:' lines, expected exactly one")
    for line in error_lines[:1]:
        match = ERROR_LINE.match(line)
        if not match:
            problems.append("the error line does not read FILE: file@0x../cmd@0x..: FIELD: reason")
        elif named not in match.group("file") and os.path.basename(named) not in match.group("file"):
            problems.append(f"the error names {match.group('file')!r}, not {named!r}")
    if "runtime error:" in err or "Sanitizer" in err:
        problems.append("a sanitizer report")
    if not sanitized and seconds > MAX_SECONDS:
        problems.append(f"took {seconds:.2f} s (budget {MAX_SECONDS} s)")
    if not sanitized and rss > MAX_RSS_BYTES:
        problems.append(f"peak RSS {rss / 1e6:.0f} MB (budget {MAX_RSS_BYTES / 1e6:.0f} MB)")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
