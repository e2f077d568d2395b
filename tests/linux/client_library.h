#pragma once
// A Linux driver-stack client library of our own, written the way the Ethos-U driver libraries
// are: weak e* wrappers over the system calls that throw the library's own exception type when
// a call fails (-1 and errno), and on top of them Device, Buffer, Network and Inference classes
// that speak the upstream UAPI as ExecuTorch's Cortex-A backend uses it (device open and
// version check, buffers, a network from a command stream in the caller's memory, inferences
// with IFM/OFM/intermediate/constant buffers, PMU events and cycles, polling). Not Arm's or
// NXP's code: the emulation must serve any client that follows those conventions.

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "frontend/linux/ethosu_uapi.h"

namespace client {

class Exception : public std::exception {
public:
    explicit Exception(std::string message) : message_(std::move(message)) {}
    const char* what() const noexcept override { return message_.c_str(); }

private:
    std::string message_;
};

[[noreturn]] inline void fail(const char* call) { throw Exception(std::string(call) + " failed: " + std::strerror(errno)); }

__attribute__((weak)) int eopen(const char* path, int flags) {
    const int fd = ::open(path, flags);
    if (fd < 0) fail("open");
    return fd;
}
__attribute__((weak)) int eioctl(int fd, unsigned long request, void* data = nullptr) {
    const int result = ::ioctl(fd, request, data);
    if (result < 0) fail("ioctl");
    return result;
}
__attribute__((weak)) void* emmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
    void* mapped = ::mmap(addr, length, prot, flags, fd, offset);
    if (mapped == MAP_FAILED) fail("mmap");
    return mapped;
}
__attribute__((weak)) int emunmap(void* addr, size_t length) {
    const int result = ::munmap(addr, length);
    if (result < 0) fail("munmap");
    return result;
}
__attribute__((weak)) int eppoll(pollfd* fds, nfds_t count, const timespec* timeout, const sigset_t* mask) {
    const int result = ::ppoll(fds, count, timeout, mask);
    if (result < 0) fail("ppoll");
    return result;
}
__attribute__((weak)) int eclose(int fd) {
    const int result = ::close(fd);
    if (result < 0) fail("close");
    return result;
}

namespace up = ethosu::uapi::upstream;

class Device {
public:
    explicit Device(const char* path = "/dev/ethosu0") : fd_(eopen(path, O_RDWR | O_NONBLOCK)) {
        up::KernelDriverVersion version{};
        eioctl(fd_, up::kIoctlDriverVersionGet, &version);
        if (version.major != 4) {
            eclose(fd_);
            throw Exception("unsupported kernel driver version " + std::to_string(version.major));
        }
    }
    ~Device() { eclose(fd_); }
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;
    int fd() const { return fd_; }
    up::DeviceCapabilities capabilities() const {
        up::DeviceCapabilities caps{};
        eioctl(fd_, up::kIoctlCapabilitiesReq, &caps);
        return caps;
    }

private:
    int fd_;
};

class Buffer {
public:
    Buffer(const Device& device, size_t size) : size_(size) {
        ethosu::uapi::BufferCreate create{static_cast<uint32_t>(size)};
        fd_ = eioctl(device.fd(), ethosu::uapi::kIoctlBufferCreate, &create);
        data_ = static_cast<uint8_t*>(emmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0));
    }
    ~Buffer() {
        emunmap(data_, size_);
        eclose(fd_);
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    int fd() const { return fd_; }
    std::span<uint8_t> bytes() const { return {data_, size_}; }
    void write(std::span<const uint8_t> bytes, size_t offset = 0) const {
        if (!bytes.empty()) std::memcpy(data_ + offset, bytes.data(), bytes.size());  // memcpy of null is UB
    }

private:
    int fd_ = -1;
    uint8_t* data_ = nullptr;
    size_t size_;
};

class Network {
public:
    // The network's bytes stay the caller's: the driver copies them.
    Network(const Device& device, std::span<const uint8_t> data) {
        up::NetworkCreate create{};
        create.type = up::kNetworkUserBuffer;
        create.network.data_ptr = reinterpret_cast<uintptr_t>(data.data());
        create.network.size = static_cast<uint32_t>(data.size());
        fd_ = eioctl(device.fd(), up::kIoctlNetworkCreate, &create);
    }
    ~Network() { eclose(fd_); }
    Network(const Network&) = delete;
    Network& operator=(const Network&) = delete;
    int fd() const { return fd_; }
    up::NetworkInfo info() const {
        up::NetworkInfo info{};
        eioctl(fd_, up::kIoctlNetworkInfo, &info);
        return info;
    }

private:
    int fd_;
};

class Inference {
public:
    Inference(const Network& network, const std::vector<const Buffer*>& ifm, const std::vector<const Buffer*>& ofm,
              const Buffer* intermediate, const Buffer* constant, std::array<uint32_t, 4> pmu_events,
              bool cycle_counter) {
        up::InferenceCreateDirect create{};
        create.ifm_count = static_cast<uint32_t>(ifm.size());
        for (size_t i = 0; i < ifm.size(); ++i) create.ifm_fd[i] = static_cast<uint32_t>(ifm[i]->fd());
        create.ofm_count = static_cast<uint32_t>(ofm.size());
        for (size_t i = 0; i < ofm.size(); ++i) create.ofm_fd[i] = static_cast<uint32_t>(ofm[i]->fd());
        create.intermediate_fd = intermediate ? static_cast<uint32_t>(intermediate->fd()) : 0;
        create.constant_fd = constant ? static_cast<uint32_t>(constant->fd()) : 0;
        std::copy(pmu_events.begin(), pmu_events.end(), create.pmu_config.events);
        create.pmu_config.cycle_count = cycle_counter;
        fd_ = eioctl(network.fd(), up::kIoctlInferenceCreateDirect, &create);
    }
    ~Inference() { eclose(fd_); }
    Inference(const Inference&) = delete;
    Inference& operator=(const Inference&) = delete;
    // True on timeout, as the libraries' wait() answers.
    bool wait(int64_t timeout_ns) const {
        pollfd pfd{fd_, POLLIN | POLLERR, 0};
        const timespec timeout{static_cast<time_t>(timeout_ns / 1000000000), static_cast<long>(timeout_ns % 1000000000)};
        return eppoll(&pfd, 1, &timeout, nullptr) == 0;
    }
    ethosu::uapi::ResultStatus status() const {
        ethosu::uapi::ResultStatus result{};
        eioctl(fd_, ethosu::uapi::kIoctlInferenceStatus, &result);
        return result;
    }

private:
    int fd_;
};

}  // namespace client
