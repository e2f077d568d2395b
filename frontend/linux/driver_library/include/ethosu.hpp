#pragma once
// A driver library for the emulated /dev/ethosu0 with the classes and calls of Arm's Ethos-U
// Linux driver library (namespace EthosU) as clients of its 2025 releases use them: ExecuTorch's
// Cortex-A backend builds against this header unchanged. Our own implementation over the
// emulation of the 2025 kernel interface (see ../README.md): signatures follow the backend's
// calls, as Arm's header itself was not available.

#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "uapi/ethosu.h"

namespace EthosU {

// Every failed call throws this, with the request and the error the driver gave.
class Exception : public std::exception {
public:
    explicit Exception(std::string message) : message_(std::move(message)) {}
    const char* what() const noexcept override { return message_.c_str(); }

private:
    std::string message_;
};

enum class InferenceStatus { OK, ERROR, RUNNING, REJECTED, ABORTED, ABORTING, PENDING };

struct DriverVersion {
    uint32_t major, minor, patch;
};

struct HardwareId {
    uint32_t versionStatus, versionMinor, versionMajor, productMajor, architecturePatch, architectureMinor,
        architectureMajor;
};

struct HardwareConfiguration {
    enum class DeviceType { UNKNOWN, SUBSYSTEM, DIRECT };
    uint32_t macsPerClockCycle;
    uint32_t cmdStreamVersion;
    bool customDma;
    DeviceType type;
};

struct Capabilities {
    HardwareId hwId;
    HardwareConfiguration hwCfg;
    DriverVersion driver;
};

class Buffer;

// The device, opened and checked for a kernel driver of the supported major version.
class Device {
public:
    explicit Device(const char* path = "/dev/ethosu0");
    ~Device() noexcept;
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    int ioctl(unsigned long request, void* data = nullptr) const;
    DriverVersion getDriverVersion() const;
    Capabilities capabilities() const;
    // One buffer per size, allocated together as one contiguous batch (the kernel's layout).
    std::vector<std::shared_ptr<Buffer>> createBuffers(const std::vector<size_t>& sizes) const;
    int getFd() const { return fd_; }

private:
    int fd_;
};

// A buffer of a batch, or no buffer at all (default-constructed: an inference's absent
// intermediate or constant buffer).
class Buffer {
public:
    Buffer() = default;
    Buffer(int fd, size_t size) : fd_(fd), size_(size) {}
    ~Buffer() noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    // From the buffer's start: size bytes at most the buffer's size.
    void write(const char* data, size_t size) const;
    void read(char* data, size_t size) const;
    void clear() const;
    size_t size() const { return size_; }
    int getFd() const { return fd_; }

private:
    int fd_ = -1;
    size_t size_ = 0;
};

// A network from a Vela command stream (COP1/COP2 payload) or .tflite in the caller's memory.
class Network {
public:
    Network(const Device& device, const unsigned char* data, size_t size);
    ~Network() noexcept;
    Network(const Network&) = delete;
    Network& operator=(const Network&) = delete;

    int ioctl(unsigned long request, void* data = nullptr) const;
    const Device& getDevice() const { return device_; }
    // Byte sizes of the inputs and outputs a .tflite network declares; none for a command stream.
    const std::vector<size_t>& getIfmDims() const { return ifm_dims_; }
    const std::vector<size_t>& getOfmDims() const { return ofm_dims_; }
    int getFd() const { return fd_; }

private:
    const Device& device_;
    int fd_;
    std::vector<size_t> ifm_dims_, ofm_dims_;
};

// An inference, started by the constructor: IFM and OFM buffers (each list from one batch, in
// its order), the intermediate and constant buffers (default-constructed: none), the PMU events
// to count (0: counter off) and whether to count cycles.
class Inference {
public:
    template <typename Iterator>
    Inference(const std::shared_ptr<Network>& network, const Iterator& ifmBegin, const Iterator& ifmEnd,
              const Iterator& ofmBegin, const Iterator& ofmEnd, const std::shared_ptr<Buffer>& intermediate,
              const std::shared_ptr<Buffer>& constant,
              const std::array<uint32_t, ETHOSU_PMU_EVENT_MAX>& pmuEventConfig, bool enableCycleCounter)
        : network_(network), ifm_buffers_(ifmBegin, ifmEnd), ofm_buffers_(ofmBegin, ofmEnd),
          intermediate_(intermediate), constant_(constant) {
        create(pmuEventConfig, enableCycleCounter);
    }
    ~Inference() noexcept;
    Inference(const Inference&) = delete;
    Inference& operator=(const Inference&) = delete;

    // Waits until the inference is done; true if the timeout (nanoseconds, negative: none) passed first.
    bool wait(int64_t timeoutNanos = -1) const;
    bool cancel() const;
    InferenceStatus status() const;
    std::vector<uint32_t> getPmuCounters() const;
    // The cycle count; throws if the inference did not enable the cycle counter.
    uint64_t getCycleCounter() const;
    int getFd() const { return fd_; }
    const std::shared_ptr<Network> getNetwork() const { return network_; }
    std::vector<std::shared_ptr<Buffer>>& getIfmBuffers() { return ifm_buffers_; }
    std::vector<std::shared_ptr<Buffer>>& getOfmBuffers() { return ofm_buffers_; }

private:
    void create(const std::array<uint32_t, ETHOSU_PMU_EVENT_MAX>& pmuEventConfig, bool enableCycleCounter);

    std::shared_ptr<Network> network_;
    std::vector<std::shared_ptr<Buffer>> ifm_buffers_, ofm_buffers_;
    std::shared_ptr<Buffer> intermediate_, constant_;
    bool cycle_counter_ = false;
    int fd_ = -1;
};

}  // namespace EthosU
