// A model file is mapped, not read: if another process shrinks it during a run, touching a page
// past the new end raises SIGBUS. The CLI turns that signal into its usual one-line error. A
// handler cannot throw (the fault may be in a worker thread, deep in a kernel), so it writes the
// message itself with async-signal-safe calls and ends the process with status 1. Copying the
// file instead would cost its size in memory (MobileNetV2: 3.6 MB of a 9.3 MB peak); this costs
// one table entry per mapping.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>

#include "frontend/loaders/loader_common.h"

namespace ethosu {
namespace {

// Mappings the handler recognises; a process that maps more files leaves the rest unguarded.
constexpr size_t kGuardedMappings = 16;
constexpr size_t kMaxText = 4096;

enum SlotState : int { kFree, kWriting, kPublished };

struct GuardedMapping {
    std::atomic<int> state{kFree};
    const uint8_t* begin = nullptr;
    size_t size = 0;
    char path[kMaxText] = {};
};

std::array<GuardedMapping, kGuardedMappings> g_mappings;
char g_message_prefix[kMaxText] = {};

void copy_text(char (&to)[kMaxText], std::string_view from) {
    const size_t n = std::min(from.size(), kMaxText - 1);
    std::memcpy(to, from.data(), n);
    to[n] = '\0';
}

// The pieces of "PREFIX FILE: file@0x..: model file: reason", written without allocating.
void write_text(const char* text) { (void)!::write(STDERR_FILENO, text, std::strlen(text)); }
void write_hex(uint64_t value) {
    char digits[16];
    size_t n = 0;
    do {
        digits[sizeof digits - ++n] = "0123456789abcdef"[value & 0xF];
        value >>= 4;
    } while (value != 0);
    (void)!::write(STDERR_FILENO, digits + sizeof digits - n, n);
}

void on_sigbus(int, siginfo_t* info, void*) {
    const auto* address = static_cast<const uint8_t*>(info->si_addr);
    for (const GuardedMapping& m : g_mappings) {
        if (m.state.load(std::memory_order_acquire) != kPublished) continue;
        if (address < m.begin || address >= m.begin + m.size) continue;
        write_text(g_message_prefix);
        write_text(m.path);
        write_text(": file@0x");
        write_hex(static_cast<uint64_t>(address - m.begin));
        write_text(": model file: the file shrank while it was being read (it is mapped, not copied)\n");
        ::_exit(1);
    }
    // Not a mapped model file: the default action, once this handler returns and the access repeats.
    ::signal(SIGBUS, SIG_DFL);
}

}  // namespace

int guard_mapping(const uint8_t* begin, size_t size, const std::string& path) {
    for (size_t i = 0; i < g_mappings.size(); ++i) {
        int expected = kFree;
        if (!g_mappings[i].state.compare_exchange_strong(expected, kWriting)) continue;
        g_mappings[i].begin = begin;
        g_mappings[i].size = size;
        copy_text(g_mappings[i].path, path);
        g_mappings[i].state.store(kPublished, std::memory_order_release);
        return static_cast<int>(i);
    }
    return -1;
}

void unguard_mapping(int slot) {
    if (slot >= 0) g_mappings[static_cast<size_t>(slot)].state.store(kFree, std::memory_order_release);
}

void report_shrunk_mapped_files(std::string_view message_prefix) {
    copy_text(g_message_prefix, message_prefix);
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, nullptr);
}

}  // namespace ethosu
