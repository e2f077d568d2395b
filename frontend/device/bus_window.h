#pragma once
// The NPU's memory as a system simulator's bus serves it (QEMU, gem5, Renode, SystemC own the
// guest's memory and offer read and write calls on physical addresses): host address space that
// mirrors the NPU's physical address range [0, 2^address_bits), reserved with no access, whose
// pages are fetched from the bus when first touched. The engine reads and writes the window as
// ordinary memory (map_bus_window maps it into a MemoryMap); after a run, flush() writes back the
// bytes the run changed and drops every page, so the next run fetches afresh.
//
// Pages (the host's page size: 4 KiB on x86-64 and on most AArch64 kernels):
// - The first read of a page calls mem_read for the whole page and makes it readable; the first
//   write to a page (read before or not) fetches it if needed, keeps a copy of the fetched bytes,
//   and makes it writable. So a page is read from the bus once per run however often it is
//   accessed, and a page only read costs no copy. The fault tells a write from a read (x86-64's
//   page-fault error code, AArch64's ESR): a write to a page not fetched costs one fault, a write
//   to a page read before a second one; a read the kernel reported as a write would cost a copy.
// - flush() compares each written page with its fetched copy and calls mem_write for each run of
//   changed bytes (runs on neighbouring pages merged): bytes the run did not change are not
//   written back, so a neighbouring byte that another bus master changed since the fetch keeps
//   its new value. A byte the run wrote with the value it already held counts as unchanged.
//
// Contract:
// - The bus callbacks are called from whichever thread faulted (the engine's worker threads),
//   inside the SIGSEGV handler, one at a time (a lock serialises fetches); they must be callable
//   from any thread, must not throw, and must not access the window (the fetch holds the lock and
//   would wait for itself). Apart from that they may do what the faulting code could (allocate,
//   take a lock the engine does not hold). flush() and discard() call mem_write on their caller's
//   thread. The window's own functions take the fetch lock: a thread that holds a lock the
//   callbacks take must not call them while a run is under way.
// - A mem_read error (non-zero) leaves the page zero-filled; the first bus error is kept
//   (fault(): the NPU address of the access that needed the page, a read) until clear_fault(),
//   and the run goes on. flush() still writes back what the run changed on such a page (against
//   the zeros it was given); a mem_write error is recorded the same way (the range's first
//   address, a write) and the other ranges are still written.
// - flush() and discard() are called between runs, when no thread accesses the window; dropping
//   the pages under a running op would lose its writes. The destructor discards.
// - The host's own memory accesses through the window work like the engine's, but a system call
//   given a window address (read(), write() into or out of it) fails with EFAULT instead of
//   faulting: the kernel does not raise SIGSEGV for its own accesses.
// - Each fetched page may split the window's kernel mapping in two; a run touching more than
//   about 30000 scattered page ranges reaches Linux's vm.max_map_count (65530 by default), and the
//   handler then aborts naming it.
//
// Faults outside every window go to the previously installed SIGSEGV action (fault_windows.h).
// Hosts: Linux on x86-64 and on AArch64; a 40-bit window needs 3 TB of free address space
// (a kernel with 39-bit user addresses cannot give it: the constructor throws).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

#include "emulator/memory/address_space.h"
#include "frontend/device/bus_callbacks.h"
#include "frontend/device/fault_windows.h"

namespace ethosu {

// The first failing bus access: a fetch's mem_read (write false) or a write-back's mem_write.
struct BusFault {
    uint64_t address = 0;
    bool write = false;
    bool operator==(const BusFault&) const = default;
};

// Bus traffic since construction, for measurements.
struct BusCounters {
    uint64_t pages_fetched = 0;       // mem_read calls, one page each
    uint64_t bytes_fetched = 0;
    uint64_t pages_written_back = 0;  // pages holding at least one byte written back
    uint64_t bytes_written_back = 0;
    uint64_t writes = 0;              // mem_write calls, one per run of changed bytes
};

class BusWindow final : public FaultWindow {
public:
    // Reserves the window for [0, 2^address_bits): 32 for U55, 40 for U65 and U85 (at least the
    // page's bits, at most 40). Throws std::invalid_argument for other widths or a callback
    // missing, std::system_error when the address space cannot be reserved, std::length_error
    // when kMaxFaultWindows windows live.
    BusWindow(unsigned address_bits, BusCallbacks bus);
    ~BusWindow();
    BusWindow(const BusWindow&) = delete;
    BusWindow& operator=(const BusWindow&) = delete;

    // The host address of NPU address 0; NPU address a is at base() + a.
    uint8_t* base() const { return window_.data(); }
    uint64_t bytes() const { return bytes_; }
    size_t page_bytes() const { return page_bytes_; }

    // Writes back every byte changed since its page was fetched, then drops every page.
    void flush();
    // Drops every page without writing anything back.
    void discard();

    std::optional<BusFault> fault() const;
    void clear_fault();
    BusCounters counters() const;

    bool contains(uintptr_t address) const override;
    // Fetches the faulting page or makes it writable; called by the signal handler.
    void on_fault(uintptr_t address, void* signal_context) noexcept override;

private:
    enum class PageState : uint8_t { Absent = 0, Readable, Writable };  // Absent: what fresh memory holds

    // An anonymous or shared mapping, unmapped with its owner.
    class Reservation {
    public:
        Reservation(size_t bytes, int protection, int flags, int fd, const char* what);
        ~Reservation();
        Reservation(const Reservation&) = delete;
        Reservation& operator=(const Reservation&) = delete;
        uint8_t* data() const { return data_; }
        size_t size() const { return size_; }

    private:
        uint8_t* data_;
        size_t size_;
    };

    // A memory file (memfd), closed with its owner.
    class MemoryFile {
    public:
        explicit MemoryFile(off_t bytes);
        ~MemoryFile();
        MemoryFile(const MemoryFile&) = delete;
        MemoryFile& operator=(const MemoryFile&) = delete;
        int fd() const { return fd_; }

    private:
        int fd_;
    };

    void fetch(uint64_t page, uint64_t address);
    void make_writable(uint64_t page);
    void protect(uint64_t page, int protection);
    void write_back_changes(uint64_t first_page, uint64_t page_count, uint64_t& first_uncounted_page);
    void drop_pages();
    void record(BusFault fault);

    const BusCallbacks bus_;
    const size_t page_bytes_;
    const uint64_t bytes_;
    // The pages' bytes: [0, bytes_) as the window shows them, [bytes_, 2 * bytes_) the fetched
    // copies of written pages. The window maps the first half with the pages' protection; the
    // store maps it all read-write, so a page is filled there before the window shows it (another
    // thread never sees a page half fetched).
    MemoryFile file_;
    Reservation window_;
    Reservation store_;
    Reservation states_;       // a PageState per page
    Reservation dirty_pages_;  // the indices of the written pages, in the order they were written
    mutable std::mutex mutex_;  // the fields below, the states, the written pages and the protection
    size_t dirty_count_ = 0;
    std::optional<BusFault> fault_;
    BusCounters counters_;
    int slot_ = -1;
};

// Maps every part of [0, window.bytes()) that no mapping of map covers to the window's bytes at
// the same addresses, each gap as a mapping of its own named "bus": accesses there reach the bus,
// while the host buffers already mapped keep serving theirs.
void map_bus_window(MemoryMap& map, BusWindow& window);

}  // namespace ethosu
