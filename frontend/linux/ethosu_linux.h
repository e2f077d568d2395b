#pragma once
// An emulated /dev/ethosu0 for clients of the Arm/NXP Ethos-U Linux driver stack (see
// README.md). The emu_* functions behave like the system calls they stand for, and a program
// linking ethosu_linux_stack has its open, ioctl, mmap, read, write, lseek and close go through
// them (syscalls.cc):
// on the device and on the buffer, network and inference fds it hands out they emulate the
// driver; on any other path or fd they pass through to the C library. Errors: -1 (MAP_FAILED)
// and errno, as the kernel gives them, so each client library throws its own exception.

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace ethosu::linux_stack {

inline constexpr const char* kDevicePath = "/dev/ethosu0";
// Environment variable naming the emulated NPU (a Vela configuration, e.g. "ethos-u65-256"),
// read when the device is opened; unset means ethos-u55-128.
inline constexpr const char* kNpuVariable = "ETHOSU_EMU_NPU";

// poll, ppoll and munmap need no emulation: the fds and mappings handed out are real ones.
int emu_open(const char* path, int flags, mode_t mode = 0);
int emu_ioctl(int fd, unsigned long request, void* data);
void* emu_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset);
int emu_close(int fd);
// The 2025 kernel's buffer fds (BUFFERS_CREATE) are read, written and seeked, not mapped.
ssize_t emu_read(int fd, void* to, size_t size);
ssize_t emu_write(int fd, const void* from, size_t size);
off_t emu_lseek(int fd, off_t offset, int whence);

// The most recent error the emulated driver reported (also written to stderr), empty if none.
std::string last_error();

}  // namespace ethosu::linux_stack
