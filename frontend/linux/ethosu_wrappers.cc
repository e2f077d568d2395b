// Strong definitions of the driver library's weak system-call wrappers, on the emulated device.

#include "frontend/linux/ethosu_wrappers.h"

#include <sys/mman.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "frontend/linux/ethosu_linux.h"

namespace EthosU {
namespace {

[[noreturn]] void throw_errno(const std::string& call) {
    throw std::system_error(errno, std::generic_category(), call);
}

}  // namespace

int eopen(const char* pathname, int flags) {
    const int fd = ethosu::linux_stack::emu_open(pathname, flags);
    if (fd < 0) throw_errno(std::string("open ") + (pathname ? pathname : "(null)"));
    return fd;
}

int eioctl(int fd, unsigned long cmd, void* data) {
    const int result = ethosu::linux_stack::emu_ioctl(fd, cmd, data);
    if (result < 0) throw_errno("ioctl");
    return result;
}

void* emmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
    void* mapped = ethosu::linux_stack::emu_mmap(addr, length, prot, flags, fd, offset);
    if (mapped == MAP_FAILED) throw_errno("mmap");
    return mapped;
}

int emunmap(void* addr, size_t length) {
    const int result = ethosu::linux_stack::emu_munmap(addr, length);
    if (result < 0) throw_errno("munmap");
    return result;
}

int eppoll(struct pollfd* fds, nfds_t nfds, const struct timespec* tmo_p, const sigset_t* sigmask) {
    const int result = ethosu::linux_stack::emu_ppoll(fds, nfds, tmo_p, sigmask);
    if (result < 0) throw_errno("ppoll");
    return result;
}

int eclose(int fd) {
    const int result = ethosu::linux_stack::emu_close(fd);
    if (result < 0) throw_errno("close");
    return result;
}

}  // namespace EthosU
