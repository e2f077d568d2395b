#include "frontend/cli/system_command.h"

#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "emulator/isa/error.h"
#include "emulator/isa/npu_config.h"
#include "frontend/cli/pmu_report.h"
#include "frontend/device_server/device_server.h"

extern char** environ;

namespace ethosu {
namespace fs = std::filesystem;

std::string find_qemu(const std::string& given) {
    if (!given.empty()) return given;
    if (const char* env = std::getenv("ETHOSU_QEMU"); env && *env) return env;
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    const fs::path cache = xdg && *xdg ? fs::path(xdg) : fs::path(home ? home : "/") / ".cache";
    std::error_code error;
    fs::path newest;
    fs::file_time_type newest_time{};
    for (const auto& entry : fs::directory_iterator(cache / "ethosu-emu", error)) {
        const fs::path binary = entry.path() / "bin" / "qemu-system-arm";
        if (!entry.path().filename().string().starts_with("qemu-") || !fs::exists(binary, error)) continue;
        const auto time = fs::last_write_time(binary, error);
        if (newest.empty() || time > newest_time) newest = binary, newest_time = time;
    }
    return newest.string();
}

namespace {

// A private directory for the socket, removed with its owner.
struct TemporaryDirectory {
    fs::path path;
    TemporaryDirectory() {
        std::string pattern = (fs::temp_directory_path() / "ethosu-emu-system.XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw Error({"ethosu-emu system", std::nullopt, {}}, "cannot make a temporary directory", ErrorKind::Io);
        path = pattern;
    }
    ~TemporaryDirectory() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

// Waits for the child; kills it after timeout seconds (0: never). Returns its wait status, and
// whether the timeout ended it.
std::pair<int, bool> wait_for(pid_t child, double timeout) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
    for (;;) {
        int status = 0;
        const pid_t done = ::waitpid(child, &status, timeout > 0 ? WNOHANG : 0);
        if (done == child) return {status, false};
        if (done < 0) return {0, false};
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(child, SIGKILL);
            ::waitpid(child, &status, 0);
            return {status, true};
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// Runs the firmware to its end with the device server telling on_stream (if any) of each stream
// the NPU completes; returns run_system's exit status.
int run_firmware(const SystemRunOptions& options,
                 const std::function<void(const NpuDevice::CompletedStream&)>& on_stream) {
    const ErrorLocation where{options.firmware, std::nullopt, {}};
    if (!fs::is_regular_file(options.firmware)) throw Error(where, "no such firmware file", ErrorKind::Io);
    if (!find_npu_config(options.npu))
        throw Error({"--npu", std::nullopt, {}}, fmt::format("unknown NPU configuration '{}'; valid: {}", options.npu,
                                                            npu_config_names()));
    const std::string qemu = find_qemu(options.qemu);
    if (qemu.empty() || ::access(qemu.c_str(), X_OK) != 0) {
        throw Error({"ethosu-emu system", std::nullopt, {}},
                    "no QEMU with the NPU device: run scripts/setup.sh --with-qemu, or give --qemu or ETHOSU_QEMU",
                    ErrorKind::Io);
    }
    const TemporaryDirectory directory;
    DeviceSocket socket((directory.path / "npu.sock").string());
    std::optional<std::string> served;
    DeviceServerOptions server_options;
    server_options.system = options.system;
    server_options.on_stream = on_stream;
    std::thread server([&] { served = socket.serve_one(server_options); });

    // UART0 on stdout, semihosting on the host, the NPU's cycles as QEMU's virtual time.
    std::vector<std::string> args = {qemu,
                                     "-machine",
                                     fmt::format("mps3-an547,ethosu-socket={},ethosu-npu={}", socket.path(), options.npu),
                                     "-kernel",
                                     options.firmware,
                                     "-display",
                                     "none",
                                     "-serial",
                                     "stdio",
                                     "-monitor",
                                     "none",
                                     "-icount",
                                     "shift=0,sleep=off",
                                     "-semihosting-config",
                                     "enable=on,target=native"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t child = 0;
    const int spawned = ::posix_spawn(&child, qemu.c_str(), nullptr, nullptr, argv.data(), environ);
    if (spawned != 0) {
        socket.stop();
        server.join();
        throw Error({qemu, std::nullopt, {}}, fmt::format("cannot start QEMU: {}", std::strerror(spawned)), ErrorKind::Io);
    }
    const auto [status, timed_out] = wait_for(child, options.timeout);
    socket.stop();  // QEMU may have ended before it connected
    server.join();
    if (timed_out) {
        fmt::print(stderr, "ethosu-emu: error: system: {} did not end within {} s\n", options.firmware, options.timeout);
        return 124;
    }
    // A session that ended in an error is the firmware's or the NPU's to report; said on stderr too.
    if (served && !served->empty()) fmt::print(stderr, "ethosu-emu: warning: system: the NPU's session: {}\n", *served);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// While the JSON owns stdout, whatever the firmware prints (QEMU inherits this process's stdout)
// goes to stderr.
class StdoutToStderr {
public:
    StdoutToStderr() : saved_(::dup(STDOUT_FILENO)) {
        if (saved_ < 0) throw Error({"--json", std::nullopt, {}}, "cannot move stdout aside", ErrorKind::Io);
        std::fflush(stdout);
        ::dup2(STDERR_FILENO, STDOUT_FILENO);
    }
    ~StdoutToStderr() {
        std::fflush(stdout);
        ::dup2(saved_, STDOUT_FILENO);
        ::close(saved_);
    }
    StdoutToStderr(const StdoutToStderr&) = delete;
    StdoutToStderr& operator=(const StdoutToStderr&) = delete;

private:
    int saved_;
};

}  // namespace

int run_system(const SystemRunOptions& options) {
    if (!options.figures.any()) return run_firmware(options, nullptr);
    // --pmu refused before the firmware runs (an unknown --npu is run_firmware's to refuse).
    if (const auto npu = find_npu_config(options.npu)) pmu_events(*npu, options.figures.pmu);
    std::vector<NpuDevice::CompletedStream> streams;
    int status = 0;
    {
        std::optional<StdoutToStderr> moved;
        if (options.figures.json_file == "-") moved.emplace();
        status = run_firmware(options, [&streams](const NpuDevice::CompletedStream& s) { streams.push_back(s); });
    }
    const NpuConfig npu = *find_npu_config(options.npu);
    write_system_figures(options.figures, options.firmware, npu, make_memory_system(npu, options.system), streams,
                         status);
    return status;
}

}  // namespace ethosu
