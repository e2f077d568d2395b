# What the QEMU test scripts share; each sources it after setting here, repo and qemu (empty: the
# build cache's, from scripts/build-qemu.sh). Exits 77 (skipped) without the patched QEMU or
# Debian's gcc-arm-none-eabi. Gives pass/fail counting and firmware_cc.
[ -n "$qemu" ] || qemu="$("$repo/scripts/build-qemu.sh" --path 2>/dev/null)" || qemu=""
cc="${ARM_NONE_EABI_GCC:-arm-none-eabi-gcc}"
[ -x "$qemu" ] || { echo "SKIP: no patched qemu-system-arm (run scripts/build-qemu.sh first)"; exit 77; }
command -v "$cc" >/dev/null || { echo "SKIP: $cc not found (apt-get install gcc-arm-none-eabi)"; exit 77; }

passes=0
failures=0
pass() { echo "PASS: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# firmware_cc ARGS...: the test firmware's compiler flags (Cortex-M55, warnings as errors, no C
# library unless ARGS link one), its linker script and board.c, then ARGS (sources, -D, -o).
firmware_cc() {
    "$cc" -mcpu=cortex-m55 -mthumb -O2 -g -Wall -Wextra -Wno-override-init -Werror -ffreestanding -nostdlib \
        -I "$here/firmware" -T "$here/firmware/linker.ld" "$here/firmware/board.c" "$@"
}
