#pragma once
// The executables named like Arm's Corstone-300 FVPs: ethosu-emu called as
// FVP_Corstone_SSE-300_Ethos-U55 or -U65 runs the firmware of the FVP's command line on QEMU's
// mps3-an547 with the emulated NPU (ethosu-emu system).

#include "frontend/cli/fvp_command_line.h"

namespace ethosu {

// Parses the command line, says on stderr what it ignores, runs the firmware and, with --stat,
// prints the run's times. Returns the exit status: the firmware's; 0 when UART0's shutdown tag or
// EOT ended it; 124 when --timelimit did; 2 for a command line that cannot be used.
int run_fvp(FvpModel model, int argc, char** argv, const char* version);

}  // namespace ethosu
