#pragma once
// ethosu-emu system: whole Cortex-M firmware on QEMU's mps3-an547 with the emulated NPU, the device
// server on a thread of this process and QEMU (built by scripts/build-qemu.sh) as a child.

#include <string>

#include "emulator/engine/timing/system_config.h"
#include "frontend/cli/system_figures.h"

namespace ethosu {

struct SystemRunOptions {
    std::string firmware;  // an ELF QEMU loads as it is linked
    std::string npu = "ethos-u55-128";
    std::string qemu;        // empty: $ETHOSU_QEMU, else the newest build-qemu.sh build in the cache
    double timeout = 0;      // seconds of wall time; 0: none
    SystemSelection system;  // the memory system the NPU's streams are timed on
    // The NPU's figures over the whole run, written when the firmware has ended; with the JSON on
    // stdout ("-"), the firmware's UART goes to stderr.
    SystemFigures figures;
};

// Runs the firmware to its end: UART0 on stdout, semihosting (files, exit status). Returns the
// firmware's exit status, 124 when the timeout ended it, and writes options.figures. Throws ethosu::Error (usage, a missing
// QEMU or firmware).
int run_system(const SystemRunOptions& options);

// The QEMU to use: the option, $ETHOSU_QEMU, else the newest of the build cache
// (${XDG_CACHE_HOME:-~/.cache}/ethosu-emu/qemu-*/bin/qemu-system-arm); empty when there is none.
std::string find_qemu(const std::string& given);

}  // namespace ethosu
