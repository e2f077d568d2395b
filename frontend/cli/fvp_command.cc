#include "frontend/cli/fvp_command.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>

#include "emulator/isa/error.h"

namespace ethosu {
namespace {

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

// CPU seconds of this process (the device server's thread) and of its waited-for children (QEMU).
std::pair<double, double> cpu_seconds() {
    rusage self{}, children{};
    ::getrusage(RUSAGE_SELF, &self);
    ::getrusage(RUSAGE_CHILDREN, &children);
    return {seconds(self.ru_utime) + seconds(children.ru_utime), seconds(self.ru_stime) + seconds(children.ru_stime)};
}

void print_usage(FvpModel model, const char* version) {
    fmt::print(
        "usage: {} [-a FILE] [-C INSTANCE.PARAMETER=VALUE]... [-f FILE] [--data FILE@ADDRESS]...\n"
        "       [--timelimit SECONDS] [--stat] [-q] [FILE]\n\n"
        "ethosu-emu {} under the Corstone-300 FVP's name: the firmware runs on QEMU's mps3-an547 with\n"
        "ethosu-emu as its NPU (ethosu-emu system). QEMU: $ETHOSU_QEMU, else scripts/build-qemu.sh's cache.\n\n"
        "parameters (-C):\n",
        fvp_model_name(model), version);
}

}  // namespace

int run_fvp(FvpModel model, int argc, char** argv, const char* version) {
    const std::string program(fvp_model_name(model));
    FvpRun run;
    try {
        run = parse_fvp_command_line(model, std::vector<std::string>(argv + 1, argv + argc));
    } catch (const Error& e) {
        fmt::print(stderr, "{}: error: {}\n", program, e.what());
        return 2;
    }
    if (run.help || run.list_parameters) {
        if (run.help) print_usage(model, version);
        fmt::print("{}", fvp_parameter_list());
        return 0;
    }
    if (run.version) {
        fmt::print("{} (ethosu-emu {}: QEMU's mps3-an547 with the emulated NPU)\n", program, version);
        return 0;
    }
    if (!run.quiet) {
        for (const std::string& warning : run.warnings) fmt::print(stderr, "{}: warning: {}\n", program, warning);
    }
    const auto wall_start = std::chrono::steady_clock::now();
    const auto [user_start, system_start] = cpu_seconds();
    SystemRunResult result;
    try {
        result = run_firmware(run.options);
    } catch (const Error& e) {
        fmt::print(stderr, "{}: error: {}\n", program, e.what());
        return e.kind() == ErrorKind::Usage ? 2 : 1;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    const auto [user_end, system_end] = cpu_seconds();
    std::fflush(stdout);
    // The FVP's words, which scripts look for (ExecuTorch's run_fvp.sh counts them as a failure).
    if (result.end == SystemEnd::TimedOut)
        fmt::print("\nInfo: Simulation is stopping. Reason: CPU time has been exceeded.\n");
    if (run.statistics) {
        // What is measured: the FVP's simulated time and instruction counts have no truthful
        // counterpart here.
        fmt::print("\n--- {} statistics (ethosu-emu): ---\n", program);
        fmt::print("{:<40}: {:.6f}s\n", "Wall time", wall);
        fmt::print("{:<40}: {:.6f}s\n", "User time", user_end - user_start);
        fmt::print("{:<40}: {:.6f}s\n", "System time", system_end - system_start);
    }
    return result.status;
}

}  // namespace ethosu
