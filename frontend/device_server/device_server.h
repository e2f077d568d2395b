#pragma once
// The ethosu-emu device server: one emulated NPU (NpuDevice on the host's clock and bus) behind the
// device protocol (PROTOCOL.md), for a system simulator that runs in another process and links
// nothing of ethosu-emu (QEMU's ethosu-npu device). One connection, one NPU, served until the
// client closes it.

#include <string>

#include "emulator/engine/timing/system_config.h"

namespace ethosu {

struct DeviceServerOptions {
    SystemSelection system;  // the memory system the NPU's streams are timed on
    bool verbose = false;    // each request on stderr
};

// Serves the connected socket fd until the client closes it. Returns an empty string then, or why
// the connection was refused or broken (a malformed message, an unknown NPU, a short read); the
// socket is left open for the caller to close.
std::string serve_device(int fd, const DeviceServerOptions& options);

// Listens on a UNIX socket at path (replacing a stale socket file there), accepts one client and
// serves it (serve_device). Throws std::system_error when the socket cannot be made.
std::string serve_device_at(const std::string& path, const DeviceServerOptions& options);

}  // namespace ethosu
