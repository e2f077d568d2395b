#pragma once
// The system-call wrappers the driver stack's user library (driver_library/src/ethosu.cpp)
// declares weak in namespace EthosU. Linking ethosu_linux_stack gives strong definitions that
// drive the emulated device. Like the library's own wrappers they return the call's result and
// throw on failure: std::system_error whose code() is the errno.

#include <poll.h>
#include <signal.h>
#include <sys/types.h>

#include <cstddef>

namespace EthosU {

int eopen(const char* pathname, int flags);
int eioctl(int fd, unsigned long cmd, void* data);
void* emmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset);
int emunmap(void* addr, size_t length);
int eppoll(struct pollfd* fds, nfds_t nfds, const struct timespec* tmo_p, const sigset_t* sigmask);
int eclose(int fd);

}  // namespace EthosU
