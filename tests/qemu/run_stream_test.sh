#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Whole firmware on QEMU's mps3-an547 with ethosu-emu as its NPU: for each case, a Cortex-M55
# firmware of the project's own (firmware/run_stream.c: start-up, UART, IRQ-driven completion, a
# register-level driver) runs a corpus stream through `ethosu-emu device-server`, checks every
# inference's output against the TFLM golden and its PMCCNTR against `ethosu-emu run
# --timing-only`, then the fault path (an empty queue, a soft reset, one more inference): Vela 5.1's
# streams on U55-128/256 and U65-256, Vela 4.1.0's (../shared/vectors-vela) on U55-64 and U65-512.
# Then MobileNetV2's IO copies by CPU memcpy and by the NPU's DMA (firmware/io_copy.c) on U55-32,
# U55-128 and U65-512, with their virtual times printed, and a DMA bus fault. Time is deterministic
# (-icount): the same firmware run twice prints the same. Prints each case's wall time. Then the
# launcher (ethosu-emu system): the stream firmware, the NPU's figures over a whole run
# (check_system_figures.py), a CPU-only image's exit status, a timeout.
#
# Usage: tests/qemu/run_stream_test.sh ETHOSU_EMU [QEMU]
#   QEMU: default $ETHOSU_QEMU, else scripts/build-qemu.sh --path. Exits 77 (skipped) when QEMU is
#   not built, Debian's gcc-arm-none-eabi is missing or ../shared/vectors is absent.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
emu="${1:?usage: run_stream_test.sh ETHOSU_EMU [QEMU]}"
qemu="${2:-${ETHOSU_QEMU:-}}"
vectors="${ETHOSU_VECTORS_DIR:-$repo/../shared/vectors}"
. "$here/common.sh"
[ -f "$vectors/index.csv" ] || { echo "SKIP: test vectors not found at $vectors"; exit 77; }

work="$(mktemp -d "${TMPDIR:-/tmp}/ethosu-qemu-streams.XXXXXX")"
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; }
    [ -z "${KEEP_WORK:-}" ] && rm -rf "$work"
}
trap cleanup EXIT

# run_firmware CASE NPU: the server on a socket of its own, QEMU with the firmware; output in CASE.out
run_firmware() {
    local case="$1" npu="$2"
    rm -f "$work/$case.sock"
    "$emu" device-server --socket "$work/$case.sock" 2>"$work/$case.server" &
    server_pid=$!
    for _ in $(seq 100); do [ -S "$work/$case.sock" ] && break; sleep 0.05; done
    local start=$(date +%s%N)
    timeout 300 "$qemu" -machine "mps3-an547,ethosu-socket=$work/$case.sock,ethosu-npu=$npu" \
        -kernel "$work/$case.elf" -nographic -icount shift=0,sleep=off \
        -semihosting-config enable=on,target=native >"$work/$case.out" 2>"$work/$case.qemu"
    local status=$?
    wait "$server_pid"
    local server_status=$?
    server_pid=""
    echo "$case: $(( ($(date +%s%N) - start) / 1000000 )) ms wall" >"$work/$case.time"
    [ "$status" = 0 ] && [ "$server_status" = 0 ]
}

# check_case MODEL CONFIG INFERENCES [COMPILED]: COMPILED is the folder of the compiled models
# (default: the corpus's own, Vela 5.1's); the golden is the corpus's.
check_case() {
    local model="$1" config="$2" inferences="$3" compiled="${4:-$vectors}" case="$1-$2"
    local data="$work/$case"
    if [ ! -f "$compiled/$model/$config/model_vela.tflite" ]; then
        echo "SKIP: $case: $compiled/$model/$config/model_vela.tflite not found"
        return
    fi
    if ! python3 "$here/make_model_data.py" "$emu" "$compiled/$model/$config/model_vela.tflite" \
            "$vectors/$model/golden" "$data" "$inferences" --memory-mode Shared_Sram >"$work/$case.gen" 2>&1; then
        fail "$case: model data ($(tail -1 "$work/$case.gen"))"
        return
    fi
    if ! firmware_cc -I "$data" "$here/firmware/run_stream.c" "$data/model_data.S" -o "$work/$case.elf" \
            2>"$work/$case.cc"; then
        fail "$case: firmware build: $(head -3 "$work/$case.cc")"
        return
    fi
    if run_firmware "$case" "$config" && grep -q "checks: [0-9]* passed, 0 failed" "$work/$case.out"; then
        pass "$case: $inferences inferences bit-exact with the emulator's cycles, fault and recovery ($(cat "$work/$case.time" | cut -d' ' -f2-))"
    else
        fail "$case:"
        sed 's/^/    /' "$work/$case.out" "$work/$case.qemu" "$work/$case.server" | head -40
    fi
}

check_case person_detect ethos-u55-128 100
check_case mlperftiny_kws_dscnn_int8 ethos-u55-256 20
check_case person_detect ethos-u65-256 20
check_case coral_tf2_mobilenet_v2_224_ptq ethos-u55-128 1
# The corpus compiled by Vela 4.1.0 has the configurations Vela 5.1's lacks.
check_case person_detect ethos-u55-64 100 "$vectors/../vectors-vela/4.1.0"
check_case person_detect ethos-u65-512 100 "$vectors/../vectors-vela/4.1.0"

# check_io_copy CONFIG: MobileNetV2's IO copies (its tensors as Vela placed them for
# ethos-u55-128) by the CPU and by the NPU's DMA on CONFIG (firmware/io_copy.c), then the fault
# path; the firmware run twice prints the same.
check_io_copy() {
    local config="$1" case="io-copy-$1" model=coral_tf2_mobilenet_v2_224_ptq
    local data="$work/$case"
    if ! python3 "$here/make_io_copy_data.py" "$emu" "$vectors/$model/ethos-u55-128/model_vela.tflite" \
            "$vectors/$model/golden" "$config" "$data" --memory-mode Shared_Sram >"$work/$case.gen" 2>&1; then
        fail "$case: data ($(tail -1 "$work/$case.gen"))"
        return
    fi
    if ! firmware_cc -I "$data" "$here/firmware/io_copy.c" "$data/io_copy_data.S" -lc -lgcc -o "$work/$case.elf" \
            2>"$work/$case.cc"; then
        fail "$case: firmware build: $(head -3 "$work/$case.cc")"
        return
    fi
    if run_firmware "$case" "$config" && grep -q "checks: [0-9]* passed, 0 failed" "$work/$case.out"; then
        pass "$case: bit-exact by memcpy and by DMA, the DMA's cycles the emulator's, the CPU asleep" \
             "meanwhile, fault and recovery ($(cut -d' ' -f2- "$work/$case.time"))"
        grep "bytes$\|ns$" "$work/$case.out" | sed 's/^/    /'
        cp "$work/$case.out" "$work/$case.first"
        if run_firmware "$case" "$config" && cmp -s "$work/$case.first" "$work/$case.out"; then
            pass "$case: the same firmware run twice prints the same"
        else
            fail "$case: two runs differ"
        fi
    else
        fail "$case:"
        sed 's/^/    /' "$work/$case.out" "$work/$case.qemu" "$work/$case.server" | head -40
    fi
}

check_io_copy ethos-u55-32
check_io_copy ethos-u55-128
check_io_copy ethos-u65-512

# Deterministic time: the same firmware twice prints the same (on a one-core and the two-core NPU).
for case in person_detect-ethos-u55-128 person_detect-ethos-u65-512; do
    [ -f "$work/$case.elf" ] || continue
    cp "$work/$case.out" "$work/first.out"
    if run_firmware "$case" "${case#*-}" && cmp -s "$work/first.out" "$work/$case.out"; then
        pass "$case: the same firmware run twice prints the same"
    else
        fail "$case: two runs of one firmware differ"
    fi
done

# The launcher: ethosu-emu system starts the server and QEMU itself, passes the firmware's exit
# status through, and ends a firmware that never ends at --timeout with 124.
build_cpu_only() { firmware_cc "$here/firmware/cpu_only.c" "$@"; }
if "$emu" system "$work/person_detect-ethos-u55-128.elf" --npu ethos-u55-128 --qemu "$qemu" >"$work/system.out" 2>&1 &&
        grep -q "checks: [0-9]* passed, 0 failed" "$work/system.out"; then
    pass "ethosu-emu system runs the stream firmware"
else
    fail "ethosu-emu system on the stream firmware:"; sed 's/^/    /' "$work/system.out" | head -20
fi
# The NPU's figures over the whole run: the keyword-spotting firmware's 20 inferences and the one
# after its fault path, as JSON on stdout (the UART on stderr), a trace, a report and the per-layer
# CSV, against `ethosu-emu run --timing-only` on the same stream.
kws="mlperftiny_kws_dscnn_int8-ethos-u55-256"
pmu=NPU_ACTIVE,MAC_ACTIVE,AXI0_RD_DATA_BEAT_RECEIVED,AXI1_RD_DATA_BEAT_RECEIVED
if "$emu" system "$work/$kws.elf" --npu ethos-u55-256 --qemu "$qemu" --memory-mode Shared_Sram --json - --pmu "$pmu" \
        --trace "$work/system.trace.json" --report "$work/system.html" --per-layer "$work/system.csv" \
        >"$work/system.json" 2>"$work/system.uart" &&
        grep -q "checks: [0-9]* passed, 0 failed" "$work/system.uart" &&
        "$emu" run "$vectors/mlperftiny_kws_dscnn_int8/ethos-u55-256/model_vela.tflite" --timing-only --json --pmu "$pmu" \
            --memory-mode Shared_Sram --output-prefix "$work/kws" >"$work/run.json" 2>"$work/run.err" &&
        python3 "$here/check_system_figures.py" "$work/system.json" "$work/run.json" "$work/system.trace.json" \
            "$work/system.html" "$work/system.csv" 21 >"$work/figures.out" 2>&1; then
    pass "ethosu-emu system --json/--trace/--report/--per-layer: $(cat "$work/figures.out")"
else
    fail "ethosu-emu system's figures:"; sed 's/^/    /' "$work/figures.out" "$work/system.uart" "$work/run.err" | head -20
fi
build_cpu_only -DEXIT_STATUS=7 -o "$work/exit7.elf"
"$emu" system "$work/exit7.elf" --qemu "$qemu" >"$work/exit7.out" 2>&1
status=$?
if [ "$status" = 7 ] && grep -q "cpu-only firmware" "$work/exit7.out"; then
    pass "a CPU-only image's UART and exit status 7 come through"
else
    fail "CPU-only image: status $status"; sed 's/^/    /' "$work/exit7.out" | head
fi
build_cpu_only -DHANG -o "$work/hang.elf"
"$emu" system "$work/hang.elf" --qemu "$qemu" --timeout 2 >"$work/hang.out" 2>&1
status=$?
if [ "$status" = 124 ] && grep -q "did not end within 2 s" "$work/hang.out"; then
    pass "a firmware that never ends is stopped at --timeout (124)"
else
    fail "timeout: status $status"; sed 's/^/    /' "$work/hang.out" | head
fi

echo "qemu stream test: $passes passed, $failures failed"
[ "$failures" = 0 ]
