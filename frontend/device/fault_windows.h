#pragma once
// One SIGSEGV handler for the process, shared by the device's windows that serve their accesses
// from faults: MmioTrap emulates each access to its register window, BusWindow fetches the pages
// of its memory window from a bus. A fault inside a registered window goes to that window; any
// other fault, and a SIGSEGV sent by kill or raise, to the action installed before the first
// window (the default action kills the process as the fault would have).
//
// The handler is installed once, at the first registration, and kept for the process's life: a
// handler installed later may chain to it. It runs with SA_NODEFER, since a window's work may
// fault on another window (MmioTrap's callbacks may access another trap), and SA_ONSTACK, so that
// a previous handler relying on an alternate stack (stack overflow) still gets one.

#include <cstddef>
#include <cstdint>

namespace ethosu {

// Address space whose faults an object resolves.
class FaultWindow {
public:
    virtual bool contains(uintptr_t address) const = 0;
    // Resolves a fault at address (inside the window) so that the faulting thread can go on:
    // called in the signal handler, on that thread, with the signal's ucontext_t.
    virtual void on_fault(uintptr_t address, void* signal_context) noexcept = 0;

protected:
    ~FaultWindow() = default;
};

// Windows registered at once, of every kind together.
inline constexpr int kMaxFaultWindows = 32;

// Installs the handler if it is not yet, and registers window, whose contains() must answer from
// this call on; returns its slot, or -1 when kMaxFaultWindows are registered. Throws
// std::system_error when the handler cannot be installed.
int register_fault_window(FaultWindow& window);
// After this the handler no longer calls the window; a fault it is handling on another thread
// still may (a window is not destroyed while its address space may be accessed).
void unregister_fault_window(int slot);

// The host's page size, read once (sysconf is not async-signal-safe; from the first registration
// on, the handler only reads the copy).
size_t fault_page_size();

// A message for stderr built in place: printf and friends are not async-signal-safe.
class SignalSafeMessage {
public:
    SignalSafeMessage& text(const char* text);
    SignalSafeMessage& hex(uint64_t value);
    SignalSafeMessage& bytes(const uint8_t* data, size_t n);  // " 0f 1e ..."
    void write_to_stderr() const;

private:
    void put(char c);

    char buffer_[512];
    size_t length_ = 0;
};

}  // namespace ethosu
