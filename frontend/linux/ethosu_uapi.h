#pragma once
// The /dev/ethosuN character-device interface of the Ethos-U Linux driver stack, as a client sees
// it: ioctl numbers and the structs they carry, in two variants (revisions in README.md): NXP's
// (namespace uapi) and Arm's upstream one (namespace uapi::upstream). Our own definitions with
// the same binary layout; the static_asserts pin sizes, offsets and numbers. The two share the
// requests whose number and struct are the same (PING, BUFFER_CREATE, INFERENCE_STATUS/CANCEL);
// the others differ in number, so a request names its variant.

#include <sys/ioctl.h>

#include <cstddef>
#include <cstdint>

namespace ethosu::uapi {

inline constexpr unsigned kIoctlType = 0x01;  // the driver's ioctl "magic"
inline constexpr int kFdMax = 16;             // IFM/OFM buffers per inference
inline constexpr int kDimMax = 8;             // dimensions per tensor shape
inline constexpr int kPmuEventMax = 4;        // configurable PMU event counters

enum Status : uint32_t {
    kStatusOk = 0,
    kStatusError = 1,
    kStatusRunning = 2,
    kStatusRejected = 3,
    kStatusAborted = 4,
    kStatusAborting = 5,
};

enum NetworkType : uint32_t {
    kNetworkBuffer = 1,  // the network is a Vela .tflite in a buffer fd
    kNetworkIndex = 2,   // a network built into the firmware, by index
};

enum InferenceType : uint32_t {
    kInferenceModel = 0,
    kInferenceOp = 1,
};

struct BufferCreate {
    uint32_t capacity;
};

struct BufferExtent {  // the data window inside a buffer: offset + size <= capacity
    uint32_t offset;
    uint32_t size;
};

struct NetworkCreate {
    uint32_t type;  // NetworkType
    uint32_t fd_or_index;
};

struct NetworkInfo {
    char desc[32];
    uint32_t is_vela;
    uint32_t ifm_count;
    uint32_t ifm_size[kFdMax];
    uint32_t ifm_types[kFdMax];   // TFLite TensorType values
    uint32_t ifm_offset[kFdMax];  // where the tensor sits in the tensor arena buffer
    uint32_t ifm_dims[kFdMax];
    uint32_t ifm_shapes[kFdMax][kDimMax];
    uint32_t ofm_count;
    uint32_t ofm_size[kFdMax];
    uint32_t ofm_types[kFdMax];
    uint32_t ofm_offset[kFdMax];
    uint32_t ofm_dims[kFdMax];
    uint32_t ofm_shapes[kFdMax][kDimMax];
};

struct PmuConfig {
    uint32_t events[kPmuEventMax];  // event numbers; 0 leaves the counter off
    uint32_t cycle_count;           // non-zero enables the cycle counter
};

struct PmuCounts {
    uint32_t events[kPmuEventMax];
    uint64_t cycle_count;
};

struct HwId {
    uint32_t version_status;
    uint32_t version_minor;
    uint32_t version_major;
    uint32_t product_major;
    uint32_t arch_patch_rev;
    uint32_t arch_minor_rev;
    uint32_t arch_major_rev;
};

struct HwConfig {
    uint32_t macs_per_cc;  // CONFIG.macs_per_cc as the register holds it (log2 of MACs per cycle)
    uint32_t cmd_stream_version;
    uint32_t custom_dma;
};

struct DeviceCapabilities {
    HwId hw_id;
    HwConfig hw_cfg;
    uint32_t driver_patch_rev;
    uint32_t driver_minor_rev;
    uint32_t driver_major_rev;
};

struct InferenceCreate {
    uint32_t ifm_count;
    uint32_t ifm_fd[kFdMax];
    uint32_t ofm_count;
    uint32_t ofm_fd[kFdMax];
    uint32_t inference_type;  // InferenceType
    PmuConfig pmu_config;
};

struct ResultStatus {
    uint32_t status;  // Status
    PmuConfig pmu_config;
    PmuCounts pmu_count;
};

struct CancelStatus {
    uint32_t status;  // Status
};

// The request numbers. The driver declares every struct-carrying request as "read" (_IOR) or
// "write" (_IOW) from its own point of view, whatever the data flow; the numbers follow that.
inline constexpr unsigned long kIoctlPing = _IO(kIoctlType, 0x00);
inline constexpr unsigned long kIoctlVersionReq = _IO(kIoctlType, 0x01);
inline constexpr unsigned long kIoctlCapabilitiesReq = _IOR(kIoctlType, 0x02, DeviceCapabilities);
inline constexpr unsigned long kIoctlBufferCreate = _IOR(kIoctlType, 0x10, BufferCreate);
inline constexpr unsigned long kIoctlBufferSet = _IOR(kIoctlType, 0x11, BufferExtent);
inline constexpr unsigned long kIoctlBufferGet = _IOW(kIoctlType, 0x12, BufferExtent);
inline constexpr unsigned long kIoctlNetworkCreate = _IOR(kIoctlType, 0x20, NetworkCreate);
inline constexpr unsigned long kIoctlNetworkInfo = _IOR(kIoctlType, 0x21, NetworkInfo);
inline constexpr unsigned long kIoctlInferenceCreate = _IOR(kIoctlType, 0x30, InferenceCreate);
inline constexpr unsigned long kIoctlInferenceStatus = _IOR(kIoctlType, 0x31, ResultStatus);
inline constexpr unsigned long kIoctlInferenceCancel = _IOR(kIoctlType, 0x32, CancelStatus);

// Layout, from the field lists: u32 fields packed, the u64 cycle count 8-aligned (LP64).
static_assert(sizeof(BufferCreate) == 4 && sizeof(BufferExtent) == 8 && sizeof(NetworkCreate) == 8);
static_assert(sizeof(HwId) == 28 && sizeof(HwConfig) == 12 && sizeof(DeviceCapabilities) == 52);
static_assert(offsetof(DeviceCapabilities, hw_cfg) == 28 && offsetof(DeviceCapabilities, driver_major_rev) == 48);
static_assert(offsetof(NetworkInfo, ifm_count) == 36 && offsetof(NetworkInfo, ifm_shapes) == 296);
static_assert(offsetof(NetworkInfo, ofm_count) == 808 && offsetof(NetworkInfo, ofm_shapes) == 1068);
static_assert(sizeof(NetworkInfo) == 1580);
static_assert(sizeof(PmuConfig) == 20 && sizeof(PmuCounts) == 24 && offsetof(PmuCounts, cycle_count) == 16);
static_assert(offsetof(InferenceCreate, ofm_count) == 68 && offsetof(InferenceCreate, inference_type) == 136);
static_assert(offsetof(InferenceCreate, pmu_config) == 140 && sizeof(InferenceCreate) == 160);
static_assert(offsetof(ResultStatus, pmu_config) == 4 && offsetof(ResultStatus, pmu_count) == 24);
static_assert(sizeof(ResultStatus) == 48 && sizeof(CancelStatus) == 4);

// _IOC packing on Linux (asm-generic): nr in bits 7:0, type 15:8, size 29:16, direction 31:30
// (read = 2, write = 1).
static_assert(kIoctlPing == 0x0100 && kIoctlVersionReq == 0x0101);
static_assert(kIoctlCapabilitiesReq == 0x80340102 && kIoctlBufferCreate == 0x80040110);
static_assert(kIoctlBufferSet == 0x80080111 && kIoctlBufferGet == 0x40080112);
static_assert(kIoctlNetworkCreate == 0x80080120 && kIoctlNetworkInfo == 0x862C0121);
static_assert(kIoctlInferenceCreate == 0x80A00130 && kIoctlInferenceStatus == 0x80300131);
static_assert(kIoctlInferenceCancel == 0x80040132);

// Arm's upstream UAPI (driver library 4.x and the 2024-2025 kernel driver with its direct-drive
// mode). Field lists from the library's and kernel's use of each struct (driver_library
// src/ethosu.cpp, kernel common/ethosu_network.c, direct/ethosu_direct_device.c and
// direct/ethosu_direct_inference.c); layouts are the C layout of those lists (see README.md for
// what the sources did not show).
namespace upstream {

enum DeviceType : uint32_t {  // HardwareConfiguration::DeviceType, static_assert'ed against the UAPI
    kDeviceUnknown = 0,
    kDeviceSubsystem = 1,
    kDeviceDirect = 2,
};

enum NetworkType : uint32_t {
    kNetworkUserBuffer = 1,  // network bytes copied from the caller's memory (data_ptr, size)
    kNetworkIndex = 2,
};

struct KernelDriverVersion {
    uint32_t major;
    uint32_t minor;
    uint32_t patch;
};

struct HwConfig {
    uint32_t macs_per_cc;
    uint32_t cmd_stream_version;
    uint32_t custom_dma;
    uint32_t type;  // DeviceType
};

struct DeviceCapabilities {  // library 4.0 (24.05)
    HwId hw_id;
    HwConfig hw_cfg;
    uint32_t driver_patch_rev;
    uint32_t driver_minor_rev;
    uint32_t driver_major_rev;
};

struct DeviceCapabilitiesWithNetworks {  // the 2025 kernel: the firmware networks by bit
    DeviceCapabilities caps;
    uint32_t network_mask;
};

struct NetworkCreate {
    uint32_t type;  // NetworkType
    union {
        struct {
            uint64_t data_ptr;
            uint32_t size;
        } network;
        uint32_t index;
    };
};

struct NetworkInfo {
    char desc[32];
    uint32_t ifm_count;
    uint32_t ifm_size[kFdMax];
    uint32_t ofm_count;
    uint32_t ofm_size[kFdMax];
};

struct InferenceCreate {  // library 4.0 (24.05)
    uint32_t ifm_count;
    uint32_t ifm_fd[kFdMax];
    uint32_t ofm_count;
    uint32_t ofm_fd[kFdMax];
    PmuConfig pmu_config;
};

struct InferenceCreateDirect {  // the 2025 kernel: direct drive's region 1 and region 0 buffers
    uint32_t ifm_count;
    uint32_t ifm_fd[kFdMax];
    uint32_t ofm_count;
    uint32_t ofm_fd[kFdMax];
    uint32_t intermediate_fd;  // 0: none (the kernel tests "> 0")
    uint32_t constant_fd;
    PmuConfig pmu_config;
};

inline constexpr unsigned long kIoctlDriverVersionGet = _IOR(kIoctlType, 0x01, KernelDriverVersion);
inline constexpr unsigned long kIoctlCapabilitiesReq = _IOR(kIoctlType, 0x02, DeviceCapabilities);
inline constexpr unsigned long kIoctlCapabilitiesReqWithNetworks =
    _IOR(kIoctlType, 0x02, DeviceCapabilitiesWithNetworks);
inline constexpr unsigned long kIoctlNetworkCreate = _IOR(kIoctlType, 0x20, NetworkCreate);
inline constexpr unsigned long kIoctlNetworkInfo = _IOR(kIoctlType, 0x21, NetworkInfo);
inline constexpr unsigned long kIoctlInferenceCreate = _IOR(kIoctlType, 0x30, InferenceCreate);
inline constexpr unsigned long kIoctlInferenceCreateDirect = _IOR(kIoctlType, 0x30, InferenceCreateDirect);

// The 2025 kernel's buffers (common/ethosu_buffer.c): BUFFERS_CREATE allocates `num` buffers as
// one contiguous block, each at the previous one's end rounded up to the device's alignment (16
// bytes for direct drive, none for the firmware), and returns an fd per buffer. A buffer fd has
// no mmap: read, write and lseek move data at the fd's position within the buffer's requested
// size, and BUFFER_CLEAR zeroes it and rewinds. The field order and types are the kernel's use of
// the struct (ethosu_buffer_batch_create(edev, uapi.sizes, uapi.fds, uapi.num) takes size_t and
// int arrays); the header itself was not found, so the order and the request numbers are ours.
struct BuffersCreate {
    uint32_t num;
    uint64_t sizes[kFdMax];  // size_t on the 64-bit kernels the direct driver runs on
    int32_t fds[kFdMax];     // filled by the call
};

inline constexpr unsigned long kIoctlBuffersCreate = _IOR(kIoctlType, 0x10, BuffersCreate);
inline constexpr unsigned long kIoctlBufferClear = _IO(kIoctlType, 0x11);
inline constexpr uint64_t kDirectBufferAlignment = 16;  // ethosu_direct_device.c's buffer_config

static_assert(sizeof(KernelDriverVersion) == 12 && sizeof(HwConfig) == 16);
static_assert(sizeof(DeviceCapabilities) == 56 && sizeof(DeviceCapabilitiesWithNetworks) == 60);
static_assert(offsetof(NetworkCreate, network.data_ptr) == 8 && sizeof(NetworkCreate) == 24);
static_assert(offsetof(NetworkInfo, ofm_count) == 100 && sizeof(NetworkInfo) == 168);
static_assert(offsetof(InferenceCreate, pmu_config) == 136 && sizeof(InferenceCreate) == 156);
static_assert(offsetof(InferenceCreateDirect, constant_fd) == 140 && sizeof(InferenceCreateDirect) == 164);
static_assert(kIoctlDriverVersionGet == 0x800C0101 && kIoctlCapabilitiesReq == 0x80380102);
static_assert(kIoctlNetworkCreate == 0x80180120 && kIoctlNetworkInfo == 0x80A80121);
static_assert(kIoctlInferenceCreate == 0x809C0130 && kIoctlInferenceCreateDirect == 0x80A40130);
static_assert(offsetof(BuffersCreate, sizes) == 8 && offsetof(BuffersCreate, fds) == 136 && sizeof(BuffersCreate) == 200);
static_assert(kIoctlBuffersCreate == 0x80C80110 && kIoctlBufferClear == 0x0111);
static_assert(kIoctlBuffersCreate != uapi::kIoctlBufferCreate && kIoctlBufferClear != uapi::kIoctlBufferSet);
// Every upstream number differs from NXP's, so the request alone names the variant.
static_assert(kIoctlCapabilitiesReq != uapi::kIoctlCapabilitiesReq && kIoctlNetworkCreate != uapi::kIoctlNetworkCreate);
static_assert(kIoctlNetworkInfo != uapi::kIoctlNetworkInfo && kIoctlInferenceCreate != uapi::kIoctlInferenceCreate);

}  // namespace upstream

}  // namespace ethosu::uapi
