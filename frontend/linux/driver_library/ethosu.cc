// The EthosU driver library over the emulated device: each call is the request a client of the
// 2025 kernel makes, handed straight to the emulation (frontend/linux), so a program needs no
// interposed system calls. Failures come back as -1 and errno and are thrown as EthosU::Exception.

#include "ethosu.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "frontend/linux/ethosu_linux.h"
#include "frontend/linux/ethosu_uapi.h"

namespace EthosU {
namespace {

namespace uapi = ethosu::uapi;
namespace up = ethosu::uapi::upstream;
namespace emu = ethosu::linux_stack;

static_assert(ETHOSU_FD_MAX == uapi::kFdMax && ETHOSU_DIM_MAX == uapi::kDimMax &&
              ETHOSU_PMU_EVENT_MAX == uapi::kPmuEventMax);

// The kernel driver major version this library speaks to (what the emulation reports).
constexpr uint32_t kKernelDriverMajor = 4;

[[noreturn]] void fail(const std::string& what) {
    const int error = errno;
    std::string message = fmt::format("{} failed: {}", what, std::strerror(error));
    if (const std::string detail = emu::last_error(); !detail.empty()) message += fmt::format(" ({})", detail);
    throw Exception(message);
}

int checked_ioctl(int fd, unsigned long request, void* data, const char* name) {
    const int result = emu::emu_ioctl(fd, request, data);
    if (result < 0) fail(name);
    return result;
}

void close_quietly(int fd) {
    if (fd >= 0) emu::emu_close(fd);
}

}  // namespace

Device::Device(const char* path) : fd_(emu::emu_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) {
    if (fd_ < 0) fail(fmt::format("open {}", path));
    try {
        const DriverVersion version = getDriverVersion();
        if (version.major != kKernelDriverMajor)
            throw Exception(fmt::format("kernel driver {}.{}.{}: this library needs major version {}", version.major,
                                        version.minor, version.patch, kKernelDriverMajor));
    } catch (...) {
        close_quietly(fd_);
        throw;
    }
}

Device::~Device() noexcept { close_quietly(fd_); }

int Device::ioctl(unsigned long request, void* data) const { return checked_ioctl(fd_, request, data, "device ioctl"); }

DriverVersion Device::getDriverVersion() const {
    up::KernelDriverVersion version{};
    checked_ioctl(fd_, up::kIoctlDriverVersionGet, &version, "DRIVER_VERSION_GET");
    return {version.major, version.minor, version.patch};
}

Capabilities Device::capabilities() const {
    up::DeviceCapabilitiesWithNetworks uapi_caps{};
    checked_ioctl(fd_, up::kIoctlCapabilitiesReqWithNetworks, &uapi_caps, "CAPABILITIES_REQ");
    const auto& c = uapi_caps.caps;
    const auto type = c.hw_cfg.type == up::kDeviceSubsystem ? HardwareConfiguration::DeviceType::SUBSYSTEM
                      : c.hw_cfg.type == up::kDeviceDirect  ? HardwareConfiguration::DeviceType::DIRECT
                                                            : HardwareConfiguration::DeviceType::UNKNOWN;
    return {{c.hw_id.version_status, c.hw_id.version_minor, c.hw_id.version_major, c.hw_id.product_major,
             c.hw_id.arch_patch_rev, c.hw_id.arch_minor_rev, c.hw_id.arch_major_rev},
            {c.hw_cfg.macs_per_cc, c.hw_cfg.cmd_stream_version, c.hw_cfg.custom_dma != 0, type},
            {c.driver_major_rev, c.driver_minor_rev, c.driver_patch_rev}};
}

std::vector<std::shared_ptr<Buffer>> Device::createBuffers(const std::vector<size_t>& sizes) const {
    if (sizes.empty() || sizes.size() > ETHOSU_FD_MAX)
        throw Exception(fmt::format("createBuffers: {} buffers, expected 1 to {}", sizes.size(), ETHOSU_FD_MAX));
    up::BuffersCreate request{};
    request.num = static_cast<uint32_t>(sizes.size());
    std::ranges::copy(sizes, request.sizes);
    checked_ioctl(fd_, up::kIoctlBuffersCreate, &request, "BUFFERS_CREATE");
    std::vector<std::shared_ptr<Buffer>> buffers;
    for (size_t i = 0; i < sizes.size(); ++i) buffers.push_back(std::make_shared<Buffer>(request.fds[i], sizes[i]));
    return buffers;
}

Buffer::~Buffer() noexcept { close_quietly(fd_); }

void Buffer::write(const char* data, size_t size) const {
    if (size > size_) throw Exception(fmt::format("Buffer::write: {} bytes into a buffer of {}", size, size_));
    if (emu::emu_lseek(fd_, 0, SEEK_SET) < 0) fail("buffer lseek");
    for (size_t done = 0; done < size;) {
        const ssize_t n = emu::emu_write(fd_, data + done, size - done);
        if (n < 0) fail("buffer write");
        done += static_cast<size_t>(n);
    }
}

void Buffer::read(char* data, size_t size) const {
    if (size > size_) throw Exception(fmt::format("Buffer::read: {} bytes from a buffer of {}", size, size_));
    if (emu::emu_lseek(fd_, 0, SEEK_SET) < 0) fail("buffer lseek");
    for (size_t done = 0; done < size;) {
        const ssize_t n = emu::emu_read(fd_, data + done, size - done);
        if (n < 0) fail("buffer read");
        if (n == 0) throw Exception(fmt::format("Buffer::read: the buffer ended after {} of {} bytes", done, size));
        done += static_cast<size_t>(n);
    }
}

void Buffer::clear() const { checked_ioctl(fd_, up::kIoctlBufferClear, nullptr, "BUFFER_CLEAR"); }

Network::Network(const Device& device, const unsigned char* data, size_t size) : device_(device), fd_(-1) {
    if (size > UINT32_MAX) throw Exception(fmt::format("Network: {} bytes exceed the interface's 32-bit size", size));
    up::NetworkCreate request{};
    request.type = up::kNetworkUserBuffer;
    request.network.data_ptr = reinterpret_cast<uintptr_t>(data);
    request.network.size = static_cast<uint32_t>(size);
    fd_ = checked_ioctl(device.getFd(), up::kIoctlNetworkCreate, &request, "NETWORK_CREATE");
    up::NetworkInfo info{};
    try {
        checked_ioctl(fd_, up::kIoctlNetworkInfo, &info, "NETWORK_INFO");
    } catch (...) {
        close_quietly(fd_);
        throw;
    }
    ifm_dims_.assign(info.ifm_size, info.ifm_size + std::min<uint32_t>(info.ifm_count, ETHOSU_FD_MAX));
    ofm_dims_.assign(info.ofm_size, info.ofm_size + std::min<uint32_t>(info.ofm_count, ETHOSU_FD_MAX));
}

Network::~Network() noexcept { close_quietly(fd_); }

int Network::ioctl(unsigned long request, void* data) const { return checked_ioctl(fd_, request, data, "network ioctl"); }

void Inference::create(const std::array<uint32_t, ETHOSU_PMU_EVENT_MAX>& pmuEventConfig, bool enableCycleCounter) {
    if (ifm_buffers_.size() > ETHOSU_FD_MAX || ofm_buffers_.size() > ETHOSU_FD_MAX)
        throw Exception(fmt::format("Inference: {} IFM and {} OFM buffers, at most {} each", ifm_buffers_.size(),
                                    ofm_buffers_.size(), ETHOSU_FD_MAX));
    up::InferenceCreateDirect request{};
    auto fds = [](const std::vector<std::shared_ptr<Buffer>>& buffers, uint32_t& count, uint32_t* fd) {
        count = static_cast<uint32_t>(buffers.size());
        for (size_t i = 0; i < buffers.size(); ++i) fd[i] = static_cast<uint32_t>(buffers[i]->getFd());
    };
    fds(ifm_buffers_, request.ifm_count, request.ifm_fd);
    fds(ofm_buffers_, request.ofm_count, request.ofm_fd);
    // A default-constructed buffer is none (fd 0 to the kernel, which takes "fd > 0" as given).
    auto optional_fd = [](const std::shared_ptr<Buffer>& b) { return b && b->getFd() > 0 ? uint32_t(b->getFd()) : 0u; };
    request.intermediate_fd = optional_fd(intermediate_);
    request.constant_fd = optional_fd(constant_);
    std::ranges::copy(pmuEventConfig, request.pmu_config.events);
    request.pmu_config.cycle_count = enableCycleCounter ? 1 : 0;
    cycle_counter_ = enableCycleCounter;
    fd_ = checked_ioctl(network_->getFd(), up::kIoctlInferenceCreateDirect, &request, "INFERENCE_CREATE");
}

Inference::~Inference() noexcept { close_quietly(fd_); }

bool Inference::wait(int64_t timeoutNanos) const {
    pollfd fd{fd_, POLLIN | POLLERR, 0};
    timespec timeout{timeoutNanos / 1'000'000'000, timeoutNanos % 1'000'000'000};
    const int result = ::ppoll(&fd, 1, timeoutNanos < 0 ? nullptr : &timeout, nullptr);
    if (result < 0) fail("ppoll");
    return result == 0;
}

bool Inference::cancel() const {
    uapi::CancelStatus status{};
    checked_ioctl(fd_, uapi::kIoctlInferenceCancel, &status, "INFERENCE_CANCEL");
    return status.status == uapi::kStatusOk;
}

namespace {

uapi::ResultStatus result_status(int fd) {
    uapi::ResultStatus result{};
    checked_ioctl(fd, uapi::kIoctlInferenceStatus, &result, "INFERENCE_STATUS");
    return result;
}

}  // namespace

InferenceStatus Inference::status() const {
    const uint32_t status = result_status(fd_).status;
    switch (status) {
        case uapi::kStatusOk: return InferenceStatus::OK;
        case uapi::kStatusError: return InferenceStatus::ERROR;
        case uapi::kStatusRunning: return InferenceStatus::RUNNING;
        case uapi::kStatusRejected: return InferenceStatus::REJECTED;
        case uapi::kStatusAborted: return InferenceStatus::ABORTED;
        case uapi::kStatusAborting: return InferenceStatus::ABORTING;
    }
    throw Exception(fmt::format("INFERENCE_STATUS: unknown status {}", status));
}

std::vector<uint32_t> Inference::getPmuCounters() const {
    const auto counts = result_status(fd_).pmu_count;
    return {std::begin(counts.events), std::end(counts.events)};
}

uint64_t Inference::getCycleCounter() const {
    if (!cycle_counter_) throw Exception("Inference::getCycleCounter: the cycle counter was not enabled");
    return result_status(fd_).pmu_count.cycle_count;
}

}  // namespace EthosU
