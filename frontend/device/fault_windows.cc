#include "frontend/device/fault_windows.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <system_error>

namespace ethosu {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// The handler only reads these: a slot holds a window from its registration (whose fields are
// set before the release) to its unregistration.
std::atomic<FaultWindow*> g_windows[kMaxFaultWindows];
struct sigaction g_previous_action;

// An access outside every window: what would have happened without them. The default action is
// restored and the fault left to recur, so the process dies of it as it would have (with its
// core); a SIGSEGV sent by kill or raise is sent again.
void forward_to_previous(int signal, siginfo_t* info, void* context) {
    const struct sigaction& previous = g_previous_action;
    if (previous.sa_flags & SA_SIGINFO) return previous.sa_sigaction(signal, info, context);
    const bool sent = info->si_code <= 0;
    if (previous.sa_handler == SIG_IGN && sent) return;  // the kernel does not let a fault be ignored
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) return previous.sa_handler(signal);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(SIGSEGV, &default_action, nullptr);
    if (sent) raise(signal);
}

FaultWindow* window_at(uintptr_t address) {
    for (const auto& slot : g_windows) {
        FaultWindow* window = slot.load(std::memory_order_acquire);
        if (window && window->contains(address)) return window;
    }
    return nullptr;
}

// noexcept: an exception must not unwind through the signal frame; it terminates.
void on_segv(int signal, siginfo_t* info, void* context) noexcept {
    const int saved_errno = errno;  // the interrupted code may be about to read it
    const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
    FaultWindow* window = info->si_code > 0 ? window_at(address) : nullptr;  // si_addr is a fault's only
    if (window) {
        window->on_fault(address, context);
    } else {
        forward_to_previous(signal, info, context);
    }
    errno = saved_errno;
}

// The previous action is read before ours is installed, so that a fault in another thread
// meanwhile finds it.
void install_handler() {
    static std::once_flag installed;
    std::call_once(installed, [] {
        fault_page_size();  // known before the handler can read it
        struct sigaction action {};
        action.sa_sigaction = on_segv;
        action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        if (sigaction(SIGSEGV, nullptr, &g_previous_action) != 0 || sigaction(SIGSEGV, &action, nullptr) != 0) {
            throw std::system_error(errno, std::generic_category(), "fault windows: sigaction(SIGSEGV)");
        }
    });
}

}  // namespace

int register_fault_window(FaultWindow& window) {
    install_handler();
    for (int i = 0; i < kMaxFaultWindows; ++i) {
        FaultWindow* expected = nullptr;
        if (g_windows[i].compare_exchange_strong(expected, &window, std::memory_order_acq_rel)) return i;
    }
    return -1;
}

void unregister_fault_window(int slot) { g_windows[slot].store(nullptr, std::memory_order_release); }

size_t fault_page_size() {
    static const auto page_size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return page_size;
}

SignalSafeMessage& SignalSafeMessage::text(const char* text) {
    while (*text) put(*text++);
    return *this;
}

SignalSafeMessage& SignalSafeMessage::hex(uint64_t value) {
    text("0x");
    int digits = 1;
    while (digits < 16 && value >> (4 * digits)) ++digits;
    for (int i = digits - 1; i >= 0; --i) put(kHexDigits[(value >> (4 * i)) & 15]);
    return *this;
}

SignalSafeMessage& SignalSafeMessage::bytes(const uint8_t* data, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        put(' ');
        put(kHexDigits[data[i] >> 4]);
        put(kHexDigits[data[i] & 15]);
    }
    return *this;
}

void SignalSafeMessage::write_to_stderr() const {
    for (size_t written = 0; written < length_;) {
        const ssize_t n = ::write(STDERR_FILENO, buffer_ + written, length_ - written);
        if (n <= 0) return;
        written += static_cast<size_t>(n);
    }
}

void SignalSafeMessage::put(char c) {
    if (length_ < sizeof buffer_) buffer_[length_++] = c;
}

}  // namespace ethosu
