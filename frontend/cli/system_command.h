#pragma once
// ethosu-emu system: whole Cortex-M firmware on QEMU's mps3-an547 with the emulated NPU, the device
// server on a thread of this process and QEMU (built by scripts/build-qemu.sh) as a child.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/engine/timing/system_config.h"
#include "frontend/cli/system_figures.h"
#include "frontend/device/npu_device.h"

namespace ethosu {

// A raw file QEMU copies into guest memory before the firmware starts.
struct DataLoad {
    std::string file;
    uint64_t address = 0;
};

// A number as command lines write it, decimal or 0x hex; nullopt when it is not one.
std::optional<uint64_t> parse_unsigned(std::string_view text);

// A value in matching single or double quotes, without them (the FVPs take out_file='-' as -).
std::string_view without_quotes(std::string_view value);

// "FILE@ADDRESS" (the address decimal or 0x hex, below 4 GiB; the file may be in quotes). Throws
// UsageError naming `option` when malformed or the file is missing.
DataLoad parse_data_load(std::string_view text, std::string_view option = "--data");

struct SystemRunOptions {
    std::string firmware;  // an ELF QEMU loads as it is linked
    std::string npu = "ethos-u55-128";
    std::string qemu;        // empty: $ETHOSU_QEMU, else the newest build-qemu.sh build in the cache
    double timeout = 0;      // seconds of wall time; 0: none
    SystemSelection system;  // the memory system the NPU's streams are timed on
    std::vector<DataLoad> data;
    bool semihosting = true;
    std::optional<std::string> command_line;  // what SYS_GET_CMDLINE answers (default: QEMU's, the ELF's path)
    std::string semihosting_directory;        // where semihosting opens relative paths; empty: ours
    std::string uart_out;                     // UART0's output: a file; empty or "-": stdout
    std::string shutdown_tag;                 // UART0 printing this ends the run (status 0)
    bool shutdown_on_eot = false;             // UART0 printing EOT (0x04) ends the run (status 0)
    std::optional<uint64_t> itcm_size, dtcm_size;  // bytes; unset: the machine's own
    // The NPU's figures over the whole run, written when the firmware has ended; with the JSON on
    // stdout ("-"), the firmware's UART goes to stderr.
    SystemFigures figures;
};

// How a run ended: the firmware's exit (semihosting, or QEMU's own status), the timeout, or UART0
// printing the shutdown tag or EOT.
enum class SystemEnd { Exited, TimedOut, ShutdownTag, EndOfTransmission };

struct SystemRunResult {
    int status = 0;  // the firmware's exit status; 124 for a timeout, 0 for a shutdown on UART0
    SystemEnd end = SystemEnd::Exited;
};

// Runs the firmware to its end: UART0 on stdout (or uart_out), semihosting (files, command line,
// exit status); the device server tells on_stream (if any) of each stream the NPU completes.
// Throws ethosu::Error (usage, a missing QEMU, firmware or data file).
SystemRunResult run_firmware(const SystemRunOptions& options,
                             const std::function<void(const NpuDevice::CompletedStream&)>& on_stream = nullptr);

// run_firmware that says on stderr when the timeout ended the run and writes options.figures;
// returns the status.
int run_system(const SystemRunOptions& options);

// The QEMU command line for these options, the device server on `socket`: what run_firmware
// starts, given absolute paths.
std::vector<std::string> qemu_arguments(const SystemRunOptions& options, const std::string& qemu,
                                        const std::string& socket);

// The QEMU to use: the option, $ETHOSU_QEMU, else the newest of the build cache
// (${XDG_CACHE_HOME:-~/.cache}/ethosu-emu/qemu-*/bin/qemu-system-arm); empty when there is none.
std::string find_qemu(const std::string& given);

}  // namespace ethosu
