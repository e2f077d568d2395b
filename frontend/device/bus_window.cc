#include "frontend/device/bus_window.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

namespace ethosu {
namespace {

constexpr unsigned kMaxAddressBits = 40;  // U65 and U85; page indices then fit in 32 bits

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

BusCallbacks checked(BusCallbacks bus) {
    if (!bus.mem_read || !bus.mem_write) throw std::invalid_argument("BusWindow: mem_read and mem_write are needed");
    return bus;
}

uint64_t window_bytes(unsigned address_bits, size_t page_bytes) {
    if (address_bits > kMaxAddressBits || (uint64_t{1} << address_bits) < page_bytes) {
        throw std::invalid_argument("BusWindow: address_bits must lie between the page's bits and 40");
    }
    return uint64_t{1} << address_bits;
}

#if defined(__x86_64__)

// The page fault's error code: bit 1 set for a write.
bool is_write_fault(const void* signal_context) {
    return static_cast<const ucontext_t*>(signal_context)->uc_mcontext.gregs[REG_ERR] & 2;
}

#elif defined(__aarch64__)

// The fault's ESR, among the records the kernel puts after the registers: WnR (bit 6) set for a
// write. Without the record the fault counts as a write, which costs at most a page's copy.
bool is_write_fault(const void* signal_context) {
    constexpr uint32_t kEsrMagic = 0x45535201;  // ESR_MAGIC of <asm/sigcontext.h>
    constexpr uint64_t kWriteNotRead = 1u << 6;
    const auto& records = static_cast<const ucontext_t*>(signal_context)->uc_mcontext.__reserved;
    for (size_t at = 0; at + 16 <= sizeof records;) {
        uint32_t magic, size;
        std::memcpy(&magic, records + at, sizeof magic);
        std::memcpy(&size, records + at + 4, sizeof size);
        if (magic == 0 || size == 0) break;
        if (magic == kEsrMagic) {
            uint64_t esr;
            std::memcpy(&esr, records + at + 8, sizeof esr);
            return esr & kWriteNotRead;
        }
        at += size;
    }
    return true;
}

#else
#error "BusWindow: no fault decoding for this host (Linux on x86-64 or AArch64)"
#endif

bool has_zero_byte(uint64_t word) { return (word - 0x0101010101010101) & ~word & 0x8080808080808080; }

uint64_t word_at(const uint8_t* bytes) {
    uint64_t word;
    std::memcpy(&word, bytes, sizeof word);
    return word;
}

// Calls changed(offset, length) for each maximal run of bytes where now differs from before, in
// order. Eight bytes at a time where they are all equal or all different.
template <typename Changed>
void for_each_changed_run(const uint8_t* now, const uint8_t* before, size_t length, Changed changed) {
    size_t at = 0;
    while (at < length) {
        while (at + 8 <= length && word_at(now + at) == word_at(before + at)) at += 8;
        while (at < length && now[at] == before[at]) ++at;
        const size_t start = at;
        while (at + 8 <= length && !has_zero_byte(word_at(now + at) ^ word_at(before + at))) at += 8;
        while (at < length && now[at] != before[at]) ++at;
        if (at > start) changed(start, at - start);
    }
}

[[noreturn]] void abort_on_protection(uint64_t address) {
    SignalSafeMessage()
        .text("ethosu::BusWindow: mprotect failed for the page at NPU address ")
        .hex(address)
        .text(" (more mappings than vm.max_map_count allows?)\n")
        .write_to_stderr();
    std::abort();
}

}  // namespace

BusWindow::Reservation::Reservation(size_t bytes, int protection, int flags, int fd, const char* what)
    : size_(bytes) {
    void* data = mmap(nullptr, bytes, protection, flags | MAP_NORESERVE, fd, 0);
    if (data == MAP_FAILED) throw_errno(what);
    data_ = static_cast<uint8_t*>(data);
}

BusWindow::Reservation::~Reservation() { munmap(data_, size_); }

BusWindow::MemoryFile::MemoryFile(off_t bytes) : fd_(memfd_create("ethosu-bus-window", MFD_CLOEXEC)) {
    if (fd_ < 0) throw_errno("BusWindow: memfd_create");
    if (ftruncate(fd_, bytes) != 0) {
        const int error = errno;
        close(fd_);
        throw std::system_error(error, std::generic_category(), "BusWindow: ftruncate of the memory file");
    }
}

BusWindow::MemoryFile::~MemoryFile() { close(fd_); }

BusWindow::BusWindow(unsigned address_bits, BusCallbacks bus)
    : bus_(checked(bus)),
      page_bytes_(fault_page_size()),
      bytes_(window_bytes(address_bits, page_bytes_)),
      file_(static_cast<off_t>(2 * bytes_)),
      window_(bytes_, PROT_NONE, MAP_SHARED, file_.fd(), "BusWindow: mmap of the window"),
      store_(2 * bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, file_.fd(), "BusWindow: mmap of the page store"),
      states_(bytes_ / page_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
              "BusWindow: mmap of the page states"),
      dirty_pages_(bytes_ / page_bytes_ * sizeof(uint32_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   "BusWindow: mmap of the written pages' list") {
    slot_ = register_fault_window(*this);
    if (slot_ < 0) throw std::length_error("BusWindow: more than kMaxFaultWindows fault windows at once");
}

BusWindow::~BusWindow() { unregister_fault_window(slot_); }

bool BusWindow::contains(uintptr_t address) const { return address - reinterpret_cast<uintptr_t>(base()) < bytes_; }

// A thread never faults on the window while it holds the lock: under it, pages are filled and
// copied through the store, and the bus callbacks must not access the window.
void BusWindow::on_fault(uintptr_t address, void* signal_context) noexcept {
    const bool write = is_write_fault(signal_context);
    const uint64_t npu_address = address - reinterpret_cast<uintptr_t>(base());
    const uint64_t page = npu_address / page_bytes_;
    auto& state = reinterpret_cast<PageState*>(states_.data())[page];
    std::lock_guard lock(mutex_);
    if (state == PageState::Absent) {
        fetch(page, npu_address);
        state = PageState::Readable;
        if (!write) return protect(page, PROT_READ);
    }
    // Otherwise another thread may have just fetched the page, or made it writable, while this
    // one waited: the access is retried as it is.
    if (write && state == PageState::Readable) {
        make_writable(page);
        state = PageState::Writable;
    }
}

// Filled in the store while the window still refuses the page, so no thread sees it half fetched.
void BusWindow::fetch(uint64_t page, uint64_t address) {
    const uint64_t offset = page * page_bytes_;
    uint8_t* bytes = store_.data() + offset;
    ++counters_.pages_fetched;
    counters_.bytes_fetched += page_bytes_;
    if (bus_.mem_read(bus_.user, offset, bytes, page_bytes_) != 0) {
        std::memset(bytes, 0, page_bytes_);  // whatever part the failed read wrote
        record({address, false});
    }
}

// The copy is taken while the page is still read-only, so it holds exactly the fetched bytes.
void BusWindow::make_writable(uint64_t page) {
    const uint64_t offset = page * page_bytes_;
    std::memcpy(store_.data() + bytes_ + offset, store_.data() + offset, page_bytes_);
    reinterpret_cast<uint32_t*>(dirty_pages_.data())[dirty_count_++] = static_cast<uint32_t>(page);
    protect(page, PROT_READ | PROT_WRITE);
}

void BusWindow::protect(uint64_t page, int protection) {
    if (mprotect(base() + page * page_bytes_, page_bytes_, protection) != 0) abort_on_protection(page * page_bytes_);
}

void BusWindow::flush() {
    std::lock_guard lock(mutex_);
    auto* pages = reinterpret_cast<uint32_t*>(dirty_pages_.data());
    std::sort(pages, pages + dirty_count_);  // neighbouring pages' changes merge, writes go in address order
    uint64_t first_uncounted_page = 0;
    for (size_t i = 0; i < dirty_count_;) {
        size_t count = 1;
        while (i + count < dirty_count_ && pages[i + count] == pages[i] + count) ++count;
        write_back_changes(pages[i], count, first_uncounted_page);
        i += count;
    }
    drop_pages();
}

void BusWindow::discard() {
    std::lock_guard lock(mutex_);
    drop_pages();
}

// The written pages [first_page, first_page + page_count), which lie side by side in the store
// and so do their copies.
void BusWindow::write_back_changes(uint64_t first_page, uint64_t page_count, uint64_t& first_uncounted_page) {
    const uint64_t start = first_page * page_bytes_;
    const uint8_t* now = store_.data() + start;
    const uint8_t* fetched = store_.data() + bytes_ + start;
    auto write = [&](size_t offset, size_t length) {
        const uint64_t address = start + offset;
        const uint64_t last_page = (address + length - 1) / page_bytes_;
        counters_.pages_written_back += last_page + 1 - std::max(address / page_bytes_, first_uncounted_page);
        first_uncounted_page = last_page + 1;
        counters_.bytes_written_back += length;
        ++counters_.writes;
        if (bus_.mem_write(bus_.user, address, now + offset, length) != 0) record({address, true});
    };
    // Runs at most merge_gap unchanged bytes apart go out as one write.
    std::optional<std::pair<size_t, size_t>> pending;  // offset, length
    for_each_changed_run(now, fetched, page_count * page_bytes_, [&](size_t offset, size_t length) {
        if (pending && offset - (pending->first + pending->second) <= bus_.merge_gap) {
            pending->second = offset + length - pending->first;
            return;
        }
        if (pending) write(pending->first, pending->second);
        pending = {offset, length};
    });
    if (pending) write(pending->first, pending->second);
}

// Punching the whole file frees the pages and their copies and unmaps them from both views;
// the window then refuses every access again and every page state reads Absent.
void BusWindow::drop_pages() {
    if (fallocate(file_.fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(2 * bytes_)) != 0) {
        throw_errno("BusWindow: fallocate(PUNCH_HOLE) of the memory file");
    }
    if (mprotect(base(), bytes_, PROT_NONE) != 0) throw_errno("BusWindow: mprotect of the window");
    if (madvise(states_.data(), states_.size(), MADV_DONTNEED) != 0) throw_errno("BusWindow: madvise of the states");
    dirty_count_ = 0;
}

void BusWindow::record(BusFault fault) {
    if (!fault_) fault_ = fault;
}

std::optional<BusFault> BusWindow::fault() const {
    std::lock_guard lock(mutex_);
    return fault_;
}

void BusWindow::clear_fault() {
    std::lock_guard lock(mutex_);
    fault_.reset();
}

BusCounters BusWindow::counters() const {
    std::lock_guard lock(mutex_);
    return counters_;
}

void map_bus_window(MemoryMap& map, BusWindow& window) {
    std::vector<std::pair<uint64_t, uint64_t>> taken;  // [start, end) inside the window
    for (const MemoryMap::Mapping& m : map.mappings()) {
        if (m.address < window.bytes()) {
            taken.emplace_back(m.address, std::min<uint64_t>(m.address + m.bytes.size(), window.bytes()));
        }
    }
    std::sort(taken.begin(), taken.end());
    uint64_t next = 0;  // the first address no mapping seen so far covers
    const auto map_gap_until = [&](uint64_t end) {
        if (end > next) map.map(next, {window.base() + next, end - next}, "bus");
    };
    for (const auto& [start, end] : taken) {
        map_gap_until(start);
        next = std::max(next, end);
    }
    map_gap_until(window.bytes());
}

}  // namespace ethosu
