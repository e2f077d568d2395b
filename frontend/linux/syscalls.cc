// The C library's open, ioctl, mmap, read, write, lseek and close, defined in the program: the dynamic linker binds
// every call to them, the driver library's weak wrappers and a client's direct ::ioctl alike, to
// these definitions rather than the C library's. They hand each call to the emulation, which
// passes anything not /dev/ethosu0's on to the C library.

#undef _FORTIFY_SOURCE  // the fortified headers define open as an inline wrapper of their own

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdarg>

#include "frontend/linux/ethosu_linux.h"

namespace {

// open's third argument exists only when the flags create a file.
int emulated_open(const char* path, int flags, va_list args) {
    const bool creates = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
    return ethosu::linux_stack::emu_open(path, flags, creates ? static_cast<mode_t>(va_arg(args, int)) : 0);
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    const int fd = emulated_open(path, flags, args);
    va_end(args);
    return fd;
}

int open64(const char* path, int flags, ...) {
    va_list args;
    va_start(args, flags);
    const int fd = emulated_open(path, flags, args);
    va_end(args);
    return fd;
}

// What a caller compiled with _FORTIFY_SOURCE calls when the flags are not known at compile time.
int __open_2(const char* path, int flags) { return ethosu::linux_stack::emu_open(path, flags); }
int __open64_2(const char* path, int flags) { return ethosu::linux_stack::emu_open(path, flags); }

int ioctl(int fd, unsigned long request, ...) noexcept {
    va_list args;
    va_start(args, request);
    void* data = va_arg(args, void*);
    va_end(args);
    return ethosu::linux_stack::emu_ioctl(fd, request, data);
}

void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) noexcept {
    return ethosu::linux_stack::emu_mmap(addr, length, prot, flags, fd, offset);
}

void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off_t offset) noexcept {
    return ethosu::linux_stack::emu_mmap(addr, length, prot, flags, fd, offset);
}

int close(int fd) { return ethosu::linux_stack::emu_close(fd); }

ssize_t read(int fd, void* to, size_t size) { return ethosu::linux_stack::emu_read(fd, to, size); }

ssize_t write(int fd, const void* from, size_t size) { return ethosu::linux_stack::emu_write(fd, from, size); }

off_t lseek(int fd, off_t offset, int whence) noexcept { return ethosu::linux_stack::emu_lseek(fd, offset, whence); }

off64_t lseek64(int fd, off64_t offset, int whence) noexcept { return ethosu::linux_stack::emu_lseek(fd, offset, whence); }

}  // extern "C"
