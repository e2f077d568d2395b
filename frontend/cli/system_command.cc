#include "frontend/cli/system_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "emulator/isa/error.h"
#include "emulator/isa/npu_config.h"
#include "frontend/cli/manifest.h"
#include "frontend/cli/pmu_report.h"
#include "frontend/device/completed_stream.h"
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

// QEMU's option syntax: a comma inside a value is written twice.
std::string option_value(const std::string& value) {
    std::string escaped;
    for (char c : value) {
        escaped += c;
        if (c == ',') escaped += ',';
    }
    return escaped;
}

void write_all(int fd, const char* bytes, size_t size) {
    while (size > 0) {
        const ssize_t written = ::write(fd, bytes, size);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;  // a closed reader: the rest of UART0 has nowhere to go
        bytes += written;
        size -= static_cast<size_t>(written);
    }
}

// Passes UART0's bytes on, watching them for the shutdown tag and EOT, which end the run when
// asked (the FVP's uart0.shutdown_tag and shutdown_on_eot). The tag may arrive split across reads.
class UartRelay {
public:
    UartRelay(int out, const SystemRunOptions& options)
        : out_(out), tag_(options.shutdown_tag), eot_(options.shutdown_on_eot) {}

    // Passes the bytes on up to and including the tag or EOT that ends the run, if any.
    std::optional<SystemEnd> pass(std::string_view bytes) {
        size_t end = bytes.size();
        std::optional<SystemEnd> ending;
        if (eot_) {
            if (const size_t eot = bytes.find('\x04'); eot != std::string_view::npos)
                end = eot + 1, ending = SystemEnd::EndOfTransmission;
        }
        if (!tag_.empty()) {
            const std::string window = seen_ + std::string(bytes.substr(0, end));
            if (const size_t at = window.find(tag_); at != std::string::npos) {
                end = at + tag_.size() - seen_.size();
                ending = SystemEnd::ShutdownTag;
            }
            const std::string kept = seen_ + std::string(bytes.substr(0, end));
            seen_ = kept.substr(kept.size() - std::min(kept.size(), tag_.size() - 1));
        }
        write_all(out_, bytes.data(), end);
        return ending;
    }

private:
    int out_;
    std::string tag_;
    bool eot_;
    std::string seen_;  // the last bytes, fewer than the tag's: a tag split across reads
};

int exit_status(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    return 128 + (WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
}

void stop(pid_t child) {
    int status = 0;
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
}

// Relays UART0 (the read end of QEMU's stdout) until QEMU closes it, then reaps QEMU; ends QEMU
// first at the timeout (0: never) or when UART0 prints what ends the run.
SystemRunResult supervise(pid_t child, int uart, UartRelay& relay, double timeout) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
    bool open = true;
    for (;;) {
        if (open) {
            pollfd readable{uart, POLLIN, 0};
            if (::poll(&readable, 1, 10) > 0) {
                char buffer[4096];
                const ssize_t got = ::read(uart, buffer, sizeof buffer);
                if (got > 0) {
                    if (const auto end = relay.pass({buffer, static_cast<size_t>(got)})) {
                        stop(child);
                        return {0, *end};
                    }
                } else if (got == 0 || errno != EINTR) {
                    open = false;
                }
            }
        } else {
            int status = 0;
            const pid_t done = ::waitpid(child, &status, WNOHANG);
            if (done == child) return {exit_status(status), SystemEnd::Exited};
            if (done < 0) return {0, SystemEnd::Exited};
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (timeout > 0 && std::chrono::steady_clock::now() >= deadline) {
            stop(child);
            return {124, SystemEnd::TimedOut};
        }
    }
}

// A file descriptor closed with its owner.
struct Descriptor {
    int fd = -1;
    Descriptor() = default;
    explicit Descriptor(int f) : fd(f) {}
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

std::optional<uint64_t> parse_unsigned(std::string_view text) {
    int base = 10;
    if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2), base = 16;
    uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string_view without_quotes(std::string_view value) {
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
        return value.substr(1, value.size() - 2);
    return value;
}

DataLoad parse_data_load(std::string_view text, std::string_view option) {
    const auto refuse = [&](const std::string& why) {
        return UsageError({std::string(option), std::nullopt, {}}, why);
    };
    const size_t at = text.rfind('@');
    if (at == std::string_view::npos) throw refuse(fmt::format("'{}' is not FILE@ADDRESS", text));
    const std::string_view file = without_quotes(text.substr(0, at));
    const auto address = parse_unsigned(text.substr(at + 1));
    if (!address || *address > 0xFFFFFFFFu)
        throw refuse(fmt::format("'{}' is not a 32-bit address", text.substr(at + 1)));
    if (!fs::is_regular_file(file)) throw refuse(fmt::format("'{}': no such file", file));
    return {std::string(file), *address};
}

std::vector<std::string> qemu_arguments(const SystemRunOptions& options, const std::string& qemu,
                                        const std::string& socket) {
    std::string machine =
        fmt::format("mps3-an547,ethosu-socket={},ethosu-npu={}", option_value(socket), option_value(options.npu));
    if (options.itcm_size) machine += fmt::format(",itcm-size={}", *options.itcm_size);
    if (options.dtcm_size) machine += fmt::format(",dtcm-size={}", *options.dtcm_size);
    // UART0 on stdout, the NPU's cycles as QEMU's virtual time.
    std::vector<std::string> args = {
        qemu,      "-machine", machine,    "-kernel", options.firmware, "-display",         "none",
        "-serial", "stdio",    "-monitor", "none",    "-icount",        "shift=0,sleep=off"};
    if (options.semihosting) {
        std::string config = "enable=on,target=native";
        // One arg: SYS_GET_CMDLINE answers QEMU's args joined by spaces, so this is the line as given.
        if (options.command_line) config += ",arg=" + option_value(*options.command_line);
        args.insert(args.end(), {"-semihosting-config", config});
    }
    for (const DataLoad& load : options.data) {
        args.insert(args.end(), {"-device", fmt::format("loader,file={},addr=0x{:x},force-raw=on",
                                                        option_value(load.file), load.address)});
    }
    return args;
}

SystemRunResult run_firmware(const SystemRunOptions& given,
                             const std::function<void(const NpuDevice::CompletedStream&)>& on_stream) {
    SystemRunOptions options = given;
    const ErrorLocation where{options.firmware, std::nullopt, {}};
    if (!fs::is_regular_file(options.firmware)) throw Error(where, "no such firmware file", ErrorKind::Io);
    if (!find_npu_config(options.npu))
        throw Error({"--npu", std::nullopt, {}}, fmt::format("unknown NPU configuration '{}'; valid: {}", options.npu,
                                                            npu_config_names()));
    // QEMU may run in the semihosting directory: every path it is given is absolute.
    options.firmware = fs::absolute(options.firmware).string();
    for (DataLoad& load : options.data) {
        if (!fs::is_regular_file(load.file))
            throw Error({load.file, std::nullopt, "data"}, "no such file", ErrorKind::Io);
        load.file = fs::absolute(load.file).string();
    }
    if (!options.semihosting_directory.empty() && !fs::is_directory(options.semihosting_directory))
        throw Error({options.semihosting_directory, std::nullopt, "semihosting directory"}, "no such directory",
                    ErrorKind::Io);
    const std::string qemu = find_qemu(options.qemu);
    if (qemu.empty() || ::access(qemu.c_str(), X_OK) != 0) {
        throw Error({"ethosu-emu system", std::nullopt, {}},
                    "no QEMU with the NPU device: run scripts/setup.sh --with-qemu, or give --qemu or ETHOSU_QEMU",
                    ErrorKind::Io);
    }
    Descriptor uart_file;
    if (!options.uart_out.empty() && options.uart_out != "-") {
        uart_file.fd = ::open(options.uart_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (uart_file.fd < 0)
            throw Error({options.uart_out, std::nullopt, "UART0 output"}, std::strerror(errno), ErrorKind::Io);
    }
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0)
        throw Error({"ethosu-emu system", std::nullopt, {}}, "cannot make a pipe for UART0", ErrorKind::Io);
    Descriptor uart_read(ends[0]), uart_write(ends[1]);

    const TemporaryDirectory directory;
    DeviceSocket socket((directory.path / "npu.sock").string());
    std::optional<std::string> served;
    DeviceServerOptions server_options;
    server_options.system = options.system;
    server_options.on_stream = on_stream;
    std::thread server([&] { served = socket.serve_one(server_options); });

    std::vector<std::string> args = qemu_arguments(options, qemu, socket.path());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, uart_write.fd, STDOUT_FILENO);
    if (!options.semihosting_directory.empty())
        posix_spawn_file_actions_addchdir_np(&actions, options.semihosting_directory.c_str());
    pid_t child = 0;
    const int spawned = ::posix_spawn(&child, qemu.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(std::exchange(uart_write.fd, -1));  // QEMU's end: UART0 closes when QEMU ends
    if (spawned != 0) {
        socket.stop();
        server.join();
        throw Error({qemu, std::nullopt, {}}, fmt::format("cannot start QEMU: {}", std::strerror(spawned)), ErrorKind::Io);
    }
    UartRelay relay(uart_file.fd >= 0 ? uart_file.fd : STDOUT_FILENO, options);
    const SystemRunResult result = supervise(child, uart_read.fd, relay, options.timeout);
    socket.stop();  // QEMU may have ended before it connected
    server.join();
    // A session that ended in an error is the firmware's or the NPU's to report; said on stderr too.
    if (result.end == SystemEnd::Exited && served && !served->empty())
        fmt::print(stderr, "ethosu-emu: warning: system: the NPU's session: {}\n", *served);
    return result;
}

namespace {

// While the JSON owns stdout, whatever the firmware prints (QEMU's UART0, relayed to this
// process's stdout) goes to stderr.
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
    const auto say_timeout = [&](const SystemRunResult& result) {
        if (result.end == SystemEnd::TimedOut)
            fmt::print(stderr, "ethosu-emu: error: system: {} did not end within {} s\n", options.firmware,
                       options.timeout);
        return result.status;
    };
    if (!options.figures.any()) return say_timeout(run_firmware(options));
    // --pmu refused before the firmware runs (an unknown --npu is run_firmware's to refuse).
    if (const auto npu = find_npu_config(options.npu)) pmu_events(*npu, options.figures.pmu);
    std::vector<NpuDevice::CompletedStream> streams;
    int status = 0;
    {
        std::optional<StdoutToStderr> moved;
        if (options.figures.json_file == "-") moved.emplace();
        status = say_timeout(
            run_firmware(options, [&streams](const NpuDevice::CompletedStream& s) { streams.push_back(s); }));
    }
    const NpuConfig npu = *find_npu_config(options.npu);
    write_system_figures(options.figures, options.firmware, npu, make_memory_system(npu, options.system), streams,
                         status);
    return status;
}

}  // namespace ethosu
