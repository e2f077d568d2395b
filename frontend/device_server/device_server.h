#pragma once
// The ethosu-emu device server: one emulated NPU (NpuDevice on the host's clock and bus) behind the
// device protocol (PROTOCOL.md), for a system simulator that runs in another process and links
// nothing of ethosu-emu (QEMU's ethosu-npu device). One connection, one NPU, served until the
// client closes it.

#include <functional>
#include <optional>
#include <string>

#include "emulator/engine/timing/system_config.h"
#include "frontend/device/npu_device.h"

namespace ethosu {

struct DeviceServerOptions {
    SystemSelection system;  // the memory system the NPU's streams are timed on
    bool verbose = false;    // each request on stderr
    // Told of each command stream the NPU runs to its end, in the device's time (NpuDevice's
    // set_stream_observer); none: nothing of a stream is kept.
    std::function<void(const NpuDevice::CompletedStream&)> on_stream;
};

// Serves the connected socket fd until the client closes it. Returns an empty string then, or why
// the connection was refused or broken (a malformed message, an unknown NPU, a short read); the
// socket is left open for the caller to close.
std::string serve_device(int fd, const DeviceServerOptions& options);

// A listening UNIX socket at path (replacing a stale socket file there), closed with its owner.
// Throws std::system_error when the socket cannot be made.
class DeviceSocket {
public:
    explicit DeviceSocket(std::string path);
    ~DeviceSocket();
    DeviceSocket(const DeviceSocket&) = delete;
    DeviceSocket& operator=(const DeviceSocket&) = delete;
    // Accepts one client and serves it: what serve_device returns, or nullopt when no client came
    // (accept failed, or stop() ended the wait).
    std::optional<std::string> serve_one(const DeviceServerOptions& options);
    // Ends a wait in serve_one for a client that will not come (from another thread).
    void stop();
    const std::string& path() const { return path_; }

private:
    std::string path_;
    int listener_ = -1;
};

// Listens at path, accepts one client and serves it.
std::string serve_device_at(const std::string& path, const DeviceServerOptions& options);

}  // namespace ethosu
