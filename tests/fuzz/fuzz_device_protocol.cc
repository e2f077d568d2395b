// The device server against hostile clients: the input is what a client sends (its messages, and
// its answers to the server's memory requests), written to a socket pair whose other end the
// server serves until the input runs out. Whatever the bytes, the server returns (an error or
// the end of the session): no crash, no hang, no read past a message.

#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "frontend/device_server/device_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // The socket pair holds the whole input (fuzz inputs stay far below its buffer).
    if (size > 65536) return 0;
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 0;
    int bufsize = 1 << 20;
    ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof bufsize);
    ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof bufsize);
    size_t sent = 0;
    while (sent < size) {
        const ssize_t n = ::send(fds[0], data + sent, size - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
    }
    ::shutdown(fds[0], SHUT_WR);  // the input ends: the server sees the client close
    ethosu::serve_device(fds[1], {});
    ::close(fds[0]);
    ::close(fds[1]);
    return 0;
}
