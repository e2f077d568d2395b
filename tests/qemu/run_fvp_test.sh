#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The FVPs' command line (ethosu-emu as FVP_Corstone_SSE-300_Ethos-U55/U65): the project's own
# firmware (firmware/fvp_cli.c) run with the exact parameter sets of public CI scripts:
#   - tensorflow/tflite-micro tensorflow/lite/micro/testing/test_with_arm_corstone_300.sh
#     (word-split FVP string, out_file="-" with its quotes, shutdown_on_eot, --stat, the ELF alone);
#   - pytorch/executorch backends/arm/test/runner_utils.py run_corstone (semihosting cwd and
#     cmd_line in quotes, --timelimit) on U55 and U65, and backends/arm/scripts/run_fvp.sh (--data);
#   - the shutdown tag with UART0 to a file, as apache/tvm apps/microtvm/ethosu/run_demo.sh and the
#     Paddle AVH demos pass them (quotes included);
# and checks UART0's output, the exit status, where the run ends, the --data bytes, the semihosting
# command line and files, --timelimit, and errors naming the parameter. Then ethosu-emu system's
# own options for the same.
#
# Usage: tests/qemu/run_fvp_test.sh ETHOSU_EMU [QEMU]
#   ETHOSU_EMU's directory holds the FVP-named links the build makes. QEMU: default $ETHOSU_QEMU,
#   else scripts/build-qemu.sh --path. Exits 77 (skipped) when QEMU is not built or Debian's
#   gcc-arm-none-eabi is missing.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
emu="${1:?usage: run_fvp_test.sh ETHOSU_EMU [QEMU]}"
qemu="${2:-${ETHOSU_QEMU:-}}"
. "$here/common.sh"
export ETHOSU_QEMU="$qemu"
bin="$(cd "$(dirname "$emu")" && pwd)"
u55="$bin/FVP_Corstone_SSE-300_Ethos-U55"
u65="$bin/FVP_Corstone_SSE-300_Ethos-U65"
[ -x "$u55" ] && [ -x "$u65" ] || { echo "FAIL: no FVP-named links beside $emu"; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/ethosu-fvp-test.XXXXXX")"
trap '[ -z "${KEEP_WORK:-}" ] && rm -rf "$work"' EXIT
show() { sed 's/^/    /' "$@" | head -20; }

# build NAME [-D...]: firmware/fvp_cli.c as $work/NAME.elf
build() {
    local name="$1"
    shift
    firmware_cc "$here/firmware/fvp_cli.c" "$@" -o "$work/$name.elf" || { echo "FAIL: firmware $name"; exit 1; }
}
build eot -DEND_EOT
build semihosting -DCMDLINE -DFILE_IO
build data -DDATA_ADDRESS=0x60100000u -DEND_EOT
build tag -DEND_TAG
build hang -DEND_HANG
build exit3 -DEXIT_STATUS=3 -DCMDLINE
{ printf 'ethosu-emu data\n'; for i in $(seq 0 255); do printf "\\$(printf '%03o' "$i")"; done; } >"$work/blob.bin"

# 1. TensorFlow Lite Micro's script, its FVP variable word-split as the script does.
FVP="$u55 "
FVP+="-C ethosu.num_macs=256 "
FVP+="-C mps3_board.visualisation.disable-visualisation=1 "
FVP+="-C mps3_board.telnetterminal0.start_telnet=0 "
FVP+='-C mps3_board.uart0.out_file="-" '
FVP+='-C mps3_board.uart0.unbuffered_output=1 '
FVP+='-C mps3_board.uart0.shutdown_on_eot=1 '
FVP+='--stat'
status=0
${FVP} "$work/eot.elf" >"$work/tflm.out" 2>"$work/tflm.err" || status=$?
if [ "$status" = 0 ] && grep -q "^npu product 0 macs 256$" "$work/tflm.out" &&
        grep -q "^Application exit code: 0.$" "$work/tflm.out" && grep -q $'\x04' "$work/tflm.out" &&
        ! grep -q "after the end" "$work/tflm.out" && grep -q "^Wall time  *: [0-9.]*s$" "$work/tflm.out" &&
        grep -q "^User time" "$work/tflm.out" && [ "$(grep -c ': warning: .* ignored' "$work/tflm.err")" = 3 ]; then
    pass "TensorFlow Lite Micro's parameters: U55-256, ends at EOT with status 0, --stat, 3 warnings"
else
    fail "TensorFlow Lite Micro's parameters (status $status)"; show "$work/tflm.out" "$work/tflm.err"
fi

# 2. ExecuTorch's run_corstone: semihosting files and command line, on U55-128 and U65-256.
mkdir -p "$work/et"
printf '\x01\x02\x03\x04\x05' >"$work/et/i0.bin"
for model in U55:128:0 U65:256:1; do
    IFS=: read -r npu macs product <<<"$model"
    rm -f "$work/et/out-0.bin"
    status=0
    "$bin/FVP_Corstone_SSE-300_Ethos-$npu" -C "ethosu.num_macs=$macs" \
        -C mps3_board.visualisation.disable-visualisation=1 -C mps3_board.telnetterminal0.start_telnet=0 \
        -C "mps3_board.uart0.out_file='-'" -C cpu0.semihosting-enable=1 -C cpu0.semihosting-stack_base=0 \
        -C cpu0.semihosting-heap_limit=0 -C "cpu0.semihosting-cwd=$work/et" -C "ethosu.extra_args='--fast'" \
        -C "cpu0.semihosting-cmd_line='executor_runner -m program.pte -o out -i i0.bin'" \
        -a "$work/semihosting.elf" --timelimit 120 >"$work/et-$npu.out" 2>"$work/et-$npu.err" || status=$?
    if [ "$status" = 0 ] && grep -q "^npu product $product macs $macs$" "$work/et-$npu.out" &&
            grep -qF "cmdline: [executor_runner -m program.pte -o out -i i0.bin]" "$work/et-$npu.out" &&
            grep -q "^i0.bin: 5 bytes$" "$work/et-$npu.out" &&
            [ "$(od -An -tx1 "$work/et/out-0.bin" | tr -d ' \n')" = 0203040506 ]; then
        pass "ExecuTorch's run_corstone on $npu-$macs: command line, files in semihosting-cwd, status 0"
    else
        fail "ExecuTorch's run_corstone on $npu (status $status)"; show "$work/et-$npu.out" "$work/et-$npu.err"
    fi
done

# 3. ExecuTorch's run_fvp.sh, U55 branch: --data FILE@ADDRESS.
status=0
"$u55" -C ethosu.num_macs=128 -C mps3_board.visualisation.disable-visualisation=1 \
    -C mps3_board.telnetterminal0.start_telnet=0 -C mps3_board.uart0.out_file='-' \
    -C mps3_board.uart0.shutdown_on_eot=1 -a "$work/data.elf" --data "$work/blob.bin@0x60100000" \
    --timelimit 600 >"$work/data.out" 2>"$work/data.err" || status=$?
# --data is QEMU's generic loader device (CONFIG_GENERIC_LOADER in frontend/qemu's devices file).
if [ "$status" = 0 ] && grep -q "^data: 272 bytes as written$" "$work/data.out"; then
    pass "--data FILE@ADDRESS: the firmware reads the file's bytes at 0x60100000"
else
    fail "--data (status $status)"; show "$work/data.out" "$work/data.err"
fi

# 4. The shutdown tag, UART0 to a file (quotes as the scripts pass them).
status=0
"$u55" -C cpu0.CFGDTCMSZ=15 -C cpu0.CFGITCMSZ=15 -C "mps3_board.uart0.out_file=\"$work/uart0.txt\"" \
    -C 'mps3_board.uart0.shutdown_tag="EXITTHESIM"' -C mps3_board.visualisation.disable-visualisation=1 \
    -C mps3_board.telnetterminal0.start_telnet=0 "$work/tag.elf" >"$work/tag.out" 2>"$work/tag.err" || status=$?
# The TCM sizes are QEMU machine options that another change adds; without them QEMU refuses the
# machine, which this case then does not count against the rest.
if grep -q "itcm-size\|dtcm-size" "$work/tag.err"; then
    echo "NOTE: QEMU has no itcm-size/dtcm-size yet; the tag case runs without CFG*TCMSZ"
    status=0
    "$u55" -C "mps3_board.uart0.out_file=\"$work/uart0.txt\"" -C 'mps3_board.uart0.shutdown_tag="EXITTHESIM"' \
        "$work/tag.elf" >"$work/tag.out" 2>"$work/tag.err" || status=$?
fi
if [ "$status" = 0 ] && grep -q "^fvp-cli firmware$" "$work/uart0.txt" && [ "$(tail -c 10 "$work/uart0.txt")" = EXITTHESIM ] &&
        ! grep -q "fvp-cli" "$work/tag.out"; then
    pass "uart0.shutdown_tag ends the run at the tag (status 0); uart0.out_file writes UART0 to the file"
else
    fail "shutdown tag (status $status)"; show "$work/tag.out" "$work/tag.err" "$work/uart0.txt"
fi

# 5. --timelimit: wall seconds; the FVP's words for it, status 124.
status=0
"$u55" -a "$work/hang.elf" --timelimit 2 >"$work/hang.out" 2>"$work/hang.err" || status=$?
if [ "$status" = 124 ] && grep -q "^Info: Simulation is stopping. Reason: CPU time has been exceeded.$" "$work/hang.out"; then
    pass "--timelimit 2 stops a firmware that never ends (status 124, the FVP's message)"
else
    fail "--timelimit (status $status)"; show "$work/hang.out" "$work/hang.err"
fi

# 6. The firmware's exit status comes through; without cmd_line, QEMU's default line (the ELF).
status=0
"$u55" "$work/exit3.elf" -q >"$work/exit3.out" 2>"$work/exit3.err" || status=$?
if [ "$status" = 3 ] && grep -qF "cmdline: [$work/exit3.elf]" "$work/exit3.out"; then
    pass "the firmware's semihosting exit status (3) is the FVP's"
else
    fail "exit status (status $status)"; show "$work/exit3.out" "$work/exit3.err"
fi

# 7. Errors name the parameter and exit 2 before anything runs.
check_error() {
    local want="$1"
    shift
    local status=0
    "$u55" "$@" >"$work/error.out" 2>"$work/error.err" || status=$?
    if [ "$status" = 2 ] && grep -qF "$want" "$work/error.err"; then
        pass "error: $want"
    else
        fail "error $want (status $status)"; show "$work/error.err"
    fi
}
check_error "error: ethosu.num_macs: '100' MACs" -C ethosu.num_macs=100 -a "$work/eot.elf"
check_error "error: --data: '$work/blob.bin' is not FILE@ADDRESS" --data "$work/blob.bin" -a "$work/eot.elf"
check_error "error: -a: '$work/missing.elf': no such file" -a "$work/missing.elf"
status=0
"$u65" -C ethosu.num_macs=128 -a "$work/eot.elf" >"$work/error.out" 2>"$work/error.err" || status=$?
[ "$status" = 2 ] && grep -qF "the FVP_Corstone_SSE-300_Ethos-U65 has 256, 512" "$work/error.err" \
    && pass "error: U65 with 128 MACs" || { fail "U65 with 128 MACs (status $status)"; show "$work/error.err"; }

# 8. ethosu-emu system: the same capabilities as its own options.
status=0
"$emu" system "$work/exit3.elf" --cmdline "a,b c" --uart-out "$work/system.txt" >"$work/system.out" 2>&1 || status=$?
if [ "$status" = 3 ] && grep -qF "cmdline: [a,b c]" "$work/system.txt"; then
    pass "ethosu-emu system --cmdline (a comma kept) --uart-out"
else
    fail "system --cmdline (status $status)"; show "$work/system.out" "$work/system.txt"
fi
status=0
"$emu" system "$work/data.elf" --data "$work/blob.bin@0x60100000" --shutdown-on-eot >"$work/system.out" 2>&1 || status=$?
if [ "$status" = 0 ] && grep -q "^data: 272 bytes as written$" "$work/system.out" && ! grep -q "after the end" "$work/system.out"; then
    pass "ethosu-emu system --data --shutdown-on-eot"
else
    fail "system --data (status $status)"; show "$work/system.out"
fi
status=0
"$emu" system "$work/tag.elf" --shutdown-tag EXITTHESIM >"$work/system.out" 2>&1 || status=$?
if [ "$status" = 0 ] && [ "$(tail -c 10 "$work/system.out")" = EXITTHESIM ]; then
    pass "ethosu-emu system --shutdown-tag"
else
    fail "system --shutdown-tag (status $status)"; show "$work/system.out"
fi

echo "qemu FVP command-line test: $passes passed, $failures failed"
[ "$failures" = 0 ]
