#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Tests QEMU's ethosu-npu device alone: a fake device server (fake_server.py) and a bare-metal
# firmware (firmware/) on mps3-an547 under deterministic time (-icount). Checks the firmware's
# results, the server's log, that a lost server ends QEMU with status 1 instead of a hang, that a
# refused HELLO stops QEMU at start-up, and that without ethosu-socket the machine is stock. Then,
# with firmware/fvp_map.c: the FVP's DDR aliases for the CPU and the NPU, the TCM sizes of
# itcm-size and dtcm-size (and their validation), and the CPU's cycle counters, twice the same.
#
# Usage: tests/qemu/run_fake_server_test.sh [QEMU]
#   QEMU: qemu-system-arm built by scripts/build-qemu.sh; default $ETHOSU_QEMU, else the cached
#   build of scripts/build-qemu.sh --path. Exits 77 (skipped) when QEMU is not built or Debian's
#   gcc-arm-none-eabi is missing.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

qemu="${1:-${ETHOSU_QEMU:-}}"
. "$here/common.sh"
python="$(command -v python3)"

work="$(mktemp -d "${TMPDIR:-/tmp}/ethosu-qemu-test.XXXXXX")"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
    if [ -z "${KEEP_WORK:-}" ]; then rm -rf "$work"; else echo "work files kept in $work"; fi
}
trap cleanup EXIT


firmware_cc "$here/firmware/main.c" -o "$work/test.elf" || { echo "FAIL: firmware build"; exit 1; }

# start_server NAME [fake_server options...]: a fake server on $work/NAME.sock
start_server() {
    local name="$1"
    shift
    rm -f "$work/$name.sock"
    "$python" "$here/fake_server.py" "$work/$name.sock" --log "$work/$name.log" "$@" \
        2>"$work/$name.err" &
    server_pid=$!
    for _ in $(seq 100); do
        [ -S "$work/$name.sock" ] && return 0
        sleep 0.1
    done
    fail "$name: the fake server did not listen"
    return 1
}

# wait_server: the fake server's exit status
wait_server() {
    local rc=0
    wait "$server_pid" || rc=$?
    server_pid=""
    return $rc
}

run_qemu() {
    local sock="$1"
    shift
    timeout 60 "$qemu" -machine "mps3-an547,ethosu-socket=$sock,ethosu-npu=ethos-u55-128" \
        -nographic -icount shift=0,sleep=off \
        -semihosting-config enable=on,target=native -kernel "$work/test.elf" "$@"
}

# 1. The firmware's checks against the fake server (an NPU clock of 433 MHz: not a divisor of 1 GHz).
if start_server main --clock 433e6; then
    rc=0
    run_qemu "$work/main.sock" >"$work/main.out" 2>&1 || rc=$?
    src=0
    wait_server || src=$?
    cat "$work/main.out"
    if [ "$rc" -eq 0 ] && grep -q "^checks: [0-9]* passed, 0 failed" "$work/main.out"; then
        pass "firmware checks (QEMU exit 0)"
    else
        fail "firmware checks (QEMU exit $rc)"
    fi
    [ "$src" -eq 0 ] && pass "fake server exit 0" || { fail "fake server exit $src"; cat "$work/main.err"; }
    grep -q "^HELLO version 1 npu ethos-u55-128$" "$work/main.log" \
        && pass "HELLO carries version 1 and the npu property" || fail "HELLO"
    [ "$(grep -c '^RESET ' "$work/main.log")" -eq 1 ] \
        && pass "one RESET at machine reset" || fail "RESET count"
    grep -q "^MEM_READ 0xe000ed00 4 attr 0 -> status 1$" "$work/main.log" \
        && pass "the CPU's private peripheral bus is a bus error for the NPU" || fail "PPB bus error"
    grep -q "^MEM_WRITE 0x31000800 64 attr 0 -> status 0$" "$work/main.log" \
        && pass "MEM_WRITE through the Secure alias of the SSE-300 SRAM" || fail "MEM_WRITE"
    late="$(sed -n 's/.*late \([0-9]*\)).*/\1/p' "$work/main.log" | sort -n | tail -1)"
    [ "${late:-x}" = 0 ] && pass "runs end at their due cycle exactly (SYNC late by 0)" \
        || fail "runs end late by ${late:-?} cycles"
else
    fail "main: no server"
fi

# 2. The server goes away in the middle of a run: QEMU must exit 1, not hang.
if start_server lost --close-after 30; then
    rc=0
    run_qemu "$work/lost.sock" >"$work/lost.out" 2>&1 || rc=$?
    wait_server || true
    if [ "$rc" -eq 1 ] && grep -q "ethosu-npu: connection to the device server" "$work/lost.out"; then
        pass "a lost server ends QEMU with status 1"
    else
        fail "a lost server: QEMU exit $rc"; tail -3 "$work/lost.out"
    fi
fi

# 3. The server refuses the NPU: QEMU stops at start-up with its message.
if start_server refused; then
    rc=0
    timeout 60 "$qemu" -machine "mps3-an547,ethosu-socket=$work/refused.sock,ethosu-npu=bogus" \
        -nographic -kernel "$work/test.elf" >"$work/refused.out" 2>&1 || rc=$?
    wait_server || true
    if [ "$rc" -eq 1 ] && grep -q "refused bogus: unsupported" "$work/refused.out"; then
        pass "a refused HELLO stops QEMU at start-up"
    else
        fail "a refused HELLO: QEMU exit $rc"; tail -3 "$work/refused.out"
    fi
fi

# 4. Without ethosu-socket: QEMU 7.2's map (unimplemented devices), no NPU device, no FVP DDR
#    aliases, no cycle counters.
rc=0
printf 'info mtree\nquit\n' | timeout 60 "$qemu" -machine mps3-an547 -S -display none -serial null \
    -monitor stdio >"$work/stock.out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && grep -q "U55 timing adapter 0" "$work/stock.out" &&
    ! grep -q "ethosu\|fvp-ddr\|: dwt\|: pmu" "$work/stock.out"; then
    pass "without ethosu-socket the machine is stock"
else
    fail "without ethosu-socket (QEMU exit $rc)"
fi

# 5. The FVP's map and the cycle counters, with TCMs of 1 MiB (QEMU's default is 512 KiB); the
#    same firmware twice prints the same counters.
tcm=$((1024 * 1024))
firmware_cc -DITCM_BYTES=$tcm -DDTCM_BYTES=$tcm "$here/firmware/fvp_map.c" -o "$work/fvp_map.elf" ||
    fail "fvp_map firmware build"
fvp_status=1
for run in 1 2; do
    start_server "fvp$run" --clock 433e6 || continue
    rc=0
    timeout 60 "$qemu" -machine "mps3-an547,ethosu-socket=$work/fvp$run.sock,itcm-size=$tcm,dtcm-size=$tcm" \
        -nographic -icount shift=0,sleep=off -semihosting-config enable=on,target=native \
        -kernel "$work/fvp_map.elf" >"$work/fvp$run.out" 2>&1 || rc=$?
    wait_server || true
    [ "$run" = 1 ] && fvp_status=$rc
done
cat "$work/fvp1.out"
if [ "$fvp_status" -eq 0 ] && grep -q "^checks: [0-9]* passed, 0 failed" "$work/fvp1.out"; then
    pass "DDR aliases, TCM sizes and cycle counters (QEMU exit 0)"
else
    fail "DDR aliases, TCM sizes and cycle counters"
fi
cmp -s "$work/fvp1.out" "$work/fvp2.out" && pass "the counters read the same in two runs" \
    || fail "two runs of the counters firmware differ"

# 6. TCM sizes the Cortex-M55 cannot have stop QEMU with the option's name.
for bad in itcm-size=3000 dtcm-size=32M itcm-size=2K; do
    rc=0
    timeout 60 "$qemu" -machine "mps3-an547,$bad" -S -display none -serial null -monitor none \
        >"$work/bad.out" 2>&1 || rc=$?
    if [ "$rc" -eq 1 ] && grep -q "${bad%%=*}=.* is not a Cortex-M55 TCM size" "$work/bad.out"; then
        pass "$bad refused"
    else
        fail "$bad: QEMU exit $rc"; cat "$work/bad.out"
    fi
done

echo "qemu fake-server test: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
