// The emulated driver behind /dev/ethosu0: a table from fd to device, buffer, network or
// inference object. Every fd it hands out is a real one (an eventfd, or a memfd for buffers)
// so that poll, mmap and close work on it; the table gives it its meaning. Requests of NXP's
// UAPI and of Arm's upstream one are both served: the request number names its variant.

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/description.h"
#include "emulator/isa/error.h"
#include "frontend/graph/graph_runner.h"
#include "frontend/runner/run_model.h"
#include "frontend/linux/ethosu_linux.h"
#include "frontend/linux/ethosu_uapi.h"
#include "frontend/loaders/model.h"

namespace ethosu::linux_stack {
namespace {

constexpr const char* kDefaultNpu = "ethos-u55-128";
constexpr uint64_t kArenaAlignment = 16;
// What DRIVER_VERSION_GET answers: the upstream library refuses a kernel driver whose major
// version is outside [MIN, MAX]_SUPPORTED_KERNEL_DRIVER_MAJOR_VERSION, both 4 in library 4.0.
constexpr uapi::upstream::KernelDriverVersion kUpstreamDriverVersion{4, 0, 0};
// The NPU's own SRAM, region 2 of a direct-drive inference (the kernel's "sram" reserved
// memory; Vela's default memory mode for U65/U85 is Dedicated_Sram_384KB, here with room to spare).
constexpr uint64_t kDirectSramBytes = 2u << 20;

// The C library's calls, for every path and fd that is not ours (the program's own open, ioctl,
// mmap and close are the emulation's; see syscalls.cc).
template <typename F>
F* real(const char* name) {
    static_assert(std::is_function_v<F>);
    void* symbol = ::dlsym(RTLD_NEXT, name);
    if (!symbol) {
        std::cerr << "ethosu-emu: the C library has no " << name << "\n";
        std::abort();
    }
    return reinterpret_cast<F*>(symbol);
}
int real_open(const char* path, int flags, mode_t mode) {
    static auto* f = real<int(const char*, int, ...)>("open");
    return f(path, flags, mode);
}
int real_ioctl(int fd, unsigned long request, void* data) {
    static auto* f = real<int(int, unsigned long, ...)>("ioctl");
    return f(fd, request, data);
}
void* real_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
    static auto* f = real<void*(void*, size_t, int, int, int, off_t)>("mmap");
    return f(addr, length, prot, flags, fd, offset);
}
int real_close(int fd) {
    static auto* f = real<int(int)>("close");
    return f(fd);
}
ssize_t real_read(int fd, void* to, size_t size) {
    static auto* f = real<ssize_t(int, void*, size_t)>("read");
    return f(fd, to, size);
}
ssize_t real_write(int fd, const void* from, size_t size) {
    static auto* f = real<ssize_t(int, const void*, size_t)>("write");
    return f(fd, from, size);
}
off_t real_lseek(int fd, off_t offset, int whence) {
    static auto* f = real<off_t(int, off_t, int)>("lseek");
    return f(fd, offset, whence);
}

// A failed request: the errno the call returns, and for driver-level faults a message.
struct Failure {
    int error;
    std::string message;
};

// Guards everything below. Recursive: an inference runs under it and the engine's own mmap and
// close calls come back through the emulation.
std::recursive_mutex table_mutex;
std::string last_error_message;

void report(const std::string& message) {
    last_error_message = message;
    std::cerr << "ethosu-emu " << kDevicePath << ": " << message << "\n";
}

struct Device {
    NpuConfig npu;
};

// Host memory the client and the NPU share: a BUFFER_CREATE buffer (the memfd the client maps)
// or a BUFFERS_CREATE batch, which the kernel allocates as one contiguous block.
class Memory {
public:
    Memory(void* host, uint64_t size) : host_(static_cast<uint8_t*>(host)), size_(size) {}
    ~Memory() { ::munmap(host_, size_); }  // munmap is not interposed
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;
    std::span<uint8_t> bytes() const { return {host_, size_}; }

private:
    uint8_t* host_;
    uint64_t size_;
};

// A buffer: `capacity` bytes at `offset` in its memory.
class Buffer {
public:
    Buffer(int fd, std::shared_ptr<Memory> memory, uint64_t offset, uint32_t capacity, uint64_t aligned_size,
           bool in_batch)
        : fd_(fd), memory_(std::move(memory)), offset_(offset), capacity_(capacity), aligned_size_(aligned_size),
          in_batch_(in_batch) {}

    int fd() const { return fd_; }
    uint32_t capacity() const { return capacity_; }
    // A BUFFERS_CREATE buffer: its fd reads, writes and seeks; it has no mmap and no data window.
    bool in_batch() const { return in_batch_; }
    const Memory* memory() const { return memory_.get(); }
    uint64_t offset() const { return offset_; }
    uapi::BufferExtent extent{0, 0};
    uint64_t position = 0;  // the fd's file position (read, write, lseek)
    std::span<uint8_t> data() const { return whole().subspan(extent.offset, extent.size); }
    // Room from the data offset to the end of the buffer.
    std::span<uint8_t> room() const { return whole().subspan(extent.offset); }
    std::span<uint8_t> whole() const { return memory_->bytes().subspan(offset_, capacity_); }
    std::span<uint8_t> aligned() const { return memory_->bytes().subspan(offset_, aligned_size_); }
    // What the NPU reaches through a region based at this buffer: up to the end of its batch.
    std::span<uint8_t> to_batch_end() const { return memory_->bytes().subspan(offset_); }

private:
    int fd_;
    std::shared_ptr<Memory> memory_;
    uint64_t offset_;
    uint32_t capacity_;
    uint64_t aligned_size_;
    bool in_batch_;
};

// Where the firmware's tensor arena holds each input and output: inputs, then outputs, aligned.
struct ArenaLayout {
    std::vector<uint64_t> input_offsets, output_offsets;
    uint64_t end = 0;
};

// A command-stream network bound to the buffers of its inferences: the regions a direct-drive
// kernel gives the NPU (region 0 the constant buffer, 1 the intermediate buffer, 2 the NPU's
// SRAM, 3 the first IFM buffer, 4 the first OFM buffer; ethosu_direct_device_run_inference).
// A region based at a buffer of a BUFFERS_CREATE batch reaches the batch's later buffers too:
// Vela's --separate-io-regions addresses the second input at its offset from the first.
struct DirectBinding {
    std::shared_ptr<Buffer> constant, intermediate, ifm, ofm;
    bool operator==(const DirectBinding&) const = default;
};

struct Network {
    NpuConfig npu;
    std::shared_ptr<const void> source;  // the bytes the network was made from, held as the driver holds them
    // A Vela .tflite (the firmware's networks, NXP's and upstream's subsystem mode) ...
    std::unique_ptr<LoadedModel> model;
    ArenaLayout arena;
    // ... or a bare COP1/COP2 command stream (upstream's direct drive), run on the buffers of each
    // inference: `model` is then made for `binding`.
    std::optional<CommandStream> stream;
    DirectBinding binding;
    // Set up at the first inference and kept for the others: the arena, the decoded weights (each
    // run still checks the bytes they were decoded from) and the decoded stream.
    std::unique_ptr<ModelSession> session;
};

struct Inference {
    std::shared_ptr<Network> network;
    std::vector<std::shared_ptr<Buffer>> ifm, ofm;
    std::shared_ptr<Buffer> intermediate, constant;  // direct drive only
    // Upstream buffers have no data window (no BUFFER_SET): the whole buffer is the data.
    bool whole_buffers = false;
    uapi::PmuConfig pmu_config{};
    uapi::PmuCounts pmu_counts{};
    uint32_t status = uapi::kStatusRunning;
};

using Object = std::variant<std::shared_ptr<Device>, std::shared_ptr<Buffer>, std::shared_ptr<Network>,
                            std::shared_ptr<Inference>>;
std::map<int, Object> table;

template <typename T>
std::shared_ptr<T> lookup(int fd) {
    const auto it = table.find(fd);
    if (it == table.end()) return nullptr;
    const auto* object = std::get_if<std::shared_ptr<T>>(&it->second);
    return object ? *object : nullptr;
}

int new_event_fd() {
    const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) throw Failure{errno, fmt::format("eventfd failed: {}", std::strerror(errno))};
    return fd;
}

uint32_t register_field(const isa::RegisterDesc& reg, std::string_view name, uint32_t word) {
    for (const auto& f : reg.fields)
        if (f.name == name) return (word >> f.lo) & ((f.width >= 32) ? ~0u : ((1u << f.width) - 1));
    return 0;  // a field this generation's register lacks reads as zero
}

// The ID register's fields, the CONFIG fields both variants report, and our version.
template <typename Caps>
void fill_capabilities(const NpuConfig& npu, Caps& caps) {
    const auto& gen = isa::describe(npu.generation);
    const auto* id = gen.reg(isa::Reg::ID);
    const auto* config = gen.reg(isa::Reg::CONFIG);
    auto id_field = [&](std::string_view name) { return register_field(*id, name, npu.hw_id_reset); };
    caps.hw_id.version_status = id_field("version_status");
    caps.hw_id.version_minor = id_field("version_minor");
    caps.hw_id.version_major = id_field("version_major");
    caps.hw_id.product_major = id_field("product_major");
    caps.hw_id.arch_patch_rev = id_field("arch_patch_rev");
    caps.hw_id.arch_minor_rev = id_field("arch_minor_rev");
    caps.hw_id.arch_major_rev = id_field("arch_major_rev");
    caps.hw_cfg.macs_per_cc = register_field(*config, "macs_per_cc", npu.config_word);
    caps.hw_cfg.cmd_stream_version = register_field(*config, "cmd_stream_version", npu.config_word);
    caps.hw_cfg.custom_dma = register_field(*config, "custom_dma", npu.config_word);
    caps.driver_major_rev = ETHOSU_EMU_VERSION_MAJOR;
    caps.driver_minor_rev = ETHOSU_EMU_VERSION_MINOR;
    caps.driver_patch_rev = ETHOSU_EMU_VERSION_PATCH;
}

uapi::DeviceCapabilities capabilities(const NpuConfig& npu) {
    uapi::DeviceCapabilities caps{};
    fill_capabilities(npu, caps);
    return caps;
}

// Upstream: the emulation drives the NPU itself, as the direct-drive kernel does.
uapi::upstream::DeviceCapabilitiesWithNetworks upstream_capabilities(const NpuConfig& npu) {
    uapi::upstream::DeviceCapabilitiesWithNetworks caps{};
    fill_capabilities(npu, caps.caps);
    caps.caps.hw_cfg.type = uapi::upstream::kDeviceDirect;
    caps.network_mask = 0;  // no firmware networks (the direct kernel reports 0 too)
    return caps;
}

// TFLite's TensorType numbering, which the library hands to its users as ifm/ofm types.
uint32_t tflite_type(ElementType t) {
    switch (t) {
        case ElementType::Float32: return 0;
        case ElementType::Int32: return 2;
        case ElementType::UInt8: return 3;
        case ElementType::Int64: return 4;
        case ElementType::Bool: return 6;
        case ElementType::Int16: return 7;
        case ElementType::Int8: return 9;
        case ElementType::UInt16: return 16;
        case ElementType::Int4: return 17;
        case ElementType::Other: break;
    }
    return ~0u;
}

ArenaLayout arena_layout(const LoadedModel& model) {
    ArenaLayout layout;
    auto place = [&](const TensorInfo& t) {
        const uint64_t at = layout.end;
        layout.end = (at + t.size_bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
        return at;
    };
    for (const auto& t : model.inputs) layout.input_offsets.push_back(place(t));
    for (const auto& t : model.outputs) layout.output_offsets.push_back(place(t));
    return layout;
}

void fill_tensors(const std::vector<TensorInfo>& tensors, const std::vector<uint64_t>& offsets, uint32_t& count,
                  uint32_t* size, uint32_t* types, uint32_t* offset, uint32_t* dims, uint32_t (*shapes)[uapi::kDimMax]) {
    count = static_cast<uint32_t>(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        const auto& t = tensors[i];
        size[i] = static_cast<uint32_t>(t.size_bytes);
        types[i] = tflite_type(t.type);
        offset[i] = static_cast<uint32_t>(offsets[i]);
        dims[i] = static_cast<uint32_t>(t.shape.size());
        for (size_t d = 0; d < t.shape.size(); ++d) shapes[i][d] = static_cast<uint32_t>(t.shape[d]);
    }
}

// A shared mapping of `size` bytes: of the memfd `fd` (the client maps it too), or anonymous (-1).
std::shared_ptr<Memory> map_memory(int fd, uint64_t size, const char* request) {
    void* host = real_mmap(nullptr, size, PROT_READ | PROT_WRITE, fd < 0 ? MAP_SHARED | MAP_ANONYMOUS : MAP_SHARED,
                           fd, 0);
    if (host == MAP_FAILED) throw Failure{errno, fmt::format("{}: cannot map {} bytes", request, size)};
    return std::make_shared<Memory>(host, size);
}

int create_buffer(const Device&, const uapi::BufferCreate& request) {
    if (request.capacity == 0) throw Failure{EINVAL, "BUFFER_CREATE: capacity 0"};
    const int fd = ::memfd_create("ethosu-buffer", MFD_CLOEXEC);
    if (fd < 0) throw Failure{errno, fmt::format("memfd_create failed: {}", std::strerror(errno))};
    try {
        if (::ftruncate(fd, request.capacity) != 0)
            throw Failure{errno, fmt::format("BUFFER_CREATE: cannot allocate {} bytes", request.capacity)};
        auto memory = map_memory(fd, request.capacity, "BUFFER_CREATE");
        table[fd] = std::make_shared<Buffer>(fd, std::move(memory), 0, request.capacity, request.capacity, false);
    } catch (const Failure&) {
        real_close(fd);
        throw;
    }
    return fd;
}

// The 2025 kernel's batch (ethosu_buffer_batch_create): each size rounded up to the alignment,
// the buffers laid end to end in one block, an fd each. The emulated device drives the NPU
// itself, so the direct device's alignment applies.
int create_buffers(const Device&, uapi::upstream::BuffersCreate& request) {
    if (request.num == 0 || request.num > uapi::kFdMax)
        throw Failure{EINVAL, fmt::format("BUFFERS_CREATE: {} buffers, expected 1 to {}", request.num, uapi::kFdMax)};
    constexpr uint64_t kAlign = uapi::upstream::kDirectBufferAlignment;
    constexpr uint64_t kMaxTotal = (uint64_t{1} << 40) - 1;  // the direct device's DMA_BIT_MASK(40)
    // What a region maps (regions stay under 4 GiB): the emulated device's DMA memory.
    constexpr uint64_t kEmulatedMemory = UINT32_MAX;
    std::vector<uint64_t> offsets, aligned;
    uint64_t total = 0;
    for (uint32_t i = 0; i < request.num; ++i) {
        const uint64_t size = request.sizes[i];
        if (size == 0) throw Failure{EINVAL, fmt::format("BUFFERS_CREATE: sizes[{}] is 0", i)};
        if (size > kMaxTotal || total + size > kMaxTotal)
            throw Failure{EINVAL, fmt::format("BUFFERS_CREATE: sizes[{}] = {} takes the batch past the device's {} "
                                              "bytes",
                                              i, size, kMaxTotal)};
        offsets.push_back(total);
        aligned.push_back((size + kAlign - 1) / kAlign * kAlign);
        total += aligned.back();
    }
    if (total > kEmulatedMemory)  // the kernel's allocation failing
        throw Failure{ENOMEM, fmt::format("BUFFERS_CREATE: {} bytes in all; the emulated DMA memory holds {}", total,
                                          kEmulatedMemory)};
    std::shared_ptr<Memory> memory;
    try {
        memory = map_memory(-1, total, "BUFFERS_CREATE");
    } catch (const Failure& failure) {
        throw Failure{ENOMEM, failure.message};
    }
    std::vector<int> fds;
    try {
        for (uint32_t i = 0; i < request.num; ++i) {
            fds.push_back(new_event_fd());
            table[fds.back()] = std::make_shared<Buffer>(fds.back(), memory, offsets[i],
                                                         static_cast<uint32_t>(request.sizes[i]), aligned[i], true);
        }
    } catch (const Failure&) {
        for (const int fd : fds) {
            table.erase(fd);
            real_close(fd);
        }
        throw;
    }
    std::ranges::copy(fds, request.fds);
    return 0;
}

// Copies between the client's memory and ours as copy_to_user/copy_from_user do: an address
// the process cannot access is EFAULT, not a crash.
void copy_from_client(std::span<uint8_t> to, const void* from, const char* what) {
    const iovec local{to.data(), to.size()};
    const iovec remote{const_cast<void*>(from), to.size()};
    if (::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(to.size()))
        throw Failure{EFAULT, fmt::format("{}: cannot read {} bytes at {}", what, to.size(), from)};
}
void copy_to_client(void* to, std::span<const uint8_t> from, const char* what) {
    const iovec local{const_cast<uint8_t*>(from.data()), from.size()};
    const iovec remote{to, from.size()};
    if (::process_vm_writev(::getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(from.size()))
        throw Failure{EFAULT, fmt::format("{}: cannot write {} bytes at {}", what, from.size(), to)};
}

// A batch buffer's read and write (ethosu_buffer_read/_write): at the file position, at most to
// the size asked for at creation; a write at the end is ENOSPC, a read there returns 0.
ssize_t read_buffer(Buffer& buffer, void* to, size_t size) {
    if (size == 0 || buffer.position > buffer.capacity()) throw Failure{EINVAL, ""};
    const auto bytes = buffer.whole().subspan(buffer.position);
    const size_t n = std::min(size, bytes.size());
    if (n > 0) copy_to_client(to, bytes.first(n), "read");
    buffer.position += n;
    return static_cast<ssize_t>(n);
}
ssize_t write_buffer(Buffer& buffer, const void* from, size_t size) {
    if (size == 0 || buffer.position > buffer.capacity()) throw Failure{EINVAL, ""};
    if (buffer.position == buffer.capacity()) throw Failure{ENOSPC, ""};
    const auto bytes = buffer.whole().subspan(buffer.position);
    const size_t n = std::min(size, bytes.size());
    copy_from_client(bytes.first(n), from, "write");
    buffer.position += n;
    return static_cast<ssize_t>(n);
}
// ethosu_buffer_llseek: SEEK_END reports the size without moving.
off_t seek_buffer(Buffer& buffer, off_t offset, int whence) {
    switch (whence) {
        case SEEK_CUR: offset += static_cast<off_t>(buffer.position); [[fallthrough]];
        case SEEK_SET:
            if (offset < 0) throw Failure{EINVAL, ""};
            if (static_cast<uint64_t>(offset) > buffer.capacity()) throw Failure{ENXIO, ""};
            buffer.position = static_cast<uint64_t>(offset);
            return offset;
        case SEEK_END: return buffer.capacity();
    }
    throw Failure{EINVAL, ""};
}

// A network from its bytes: a Vela .tflite (TFLite's "TFL3" identifier at offset 4), loaded as
// the firmware loads it, or a COP1/COP2 driver payload, which the direct-drive kernel takes
// (ethosu_direct_network_setup). Either must be compiled for the device's NPU.
int create_network(const Device& device, std::span<const uint8_t> data, std::shared_ptr<const void> owner,
                   const std::string& name) {
    auto network = std::make_shared<Network>();
    network->npu = device.npu;
    network->source = owner;
    const LoadOptions options{std::string(device.npu.name)};
    const bool is_tflite = data.size() >= 8 && std::memcmp(data.data() + 4, "TFL3", 4) == 0;
    try {
        if (is_tflite) {
            // Like the firmware, the network reads its weights from the bytes, which it keeps alive.
            network->model = load_vela_tflite(name, FileBytes(data, std::move(owner)), options);
        } else {
            network->stream = parse_driver_payload(name, data.data(), data.size(), 0);
            resolve_npu_config(name, *network->stream, options);
        }
    } catch (const Error& e) {
        throw Failure{EINVAL, fmt::format("NETWORK_CREATE: {}", e.what())};
    }
    if (is_tflite) {
        const auto& model = *network->model;
        if (model.inputs.size() > uapi::kFdMax || model.outputs.size() > uapi::kFdMax)
            throw Failure{EINVAL, fmt::format("NETWORK_CREATE: {} inputs and {} outputs; the interface carries {}",
                                              model.inputs.size(), model.outputs.size(), uapi::kFdMax)};
        for (const auto* tensors : {&model.inputs, &model.outputs})
            for (const auto& t : *tensors)
                if (t.shape.size() > uapi::kDimMax || t.size_bytes > UINT32_MAX)
                    throw Failure{EINVAL, fmt::format("NETWORK_CREATE: tensor {} ({} dimensions, {} bytes) does not "
                                                      "fit the interface",
                                                      t.name, t.shape.size(), t.size_bytes)};
        network->arena = arena_layout(model);
        if (network->arena.end > UINT32_MAX)
            throw Failure{EINVAL, "NETWORK_CREATE: inputs and outputs exceed a 32-bit arena"};
    }
    const int fd = new_event_fd();
    table[fd] = std::move(network);
    return fd;
}

// NXP: the network is the data window of a buffer fd.
int create_network(const Device& device, const uapi::NetworkCreate& request) {
    if (request.type == uapi::kNetworkIndex)
        throw Failure{EINVAL, fmt::format("NETWORK_CREATE: no network {} is built into the emulated firmware",
                                          request.fd_or_index)};
    if (request.type != uapi::kNetworkBuffer)
        throw Failure{EINVAL, fmt::format("NETWORK_CREATE: unknown network type {}", request.type)};
    auto source = lookup<Buffer>(static_cast<int>(request.fd_or_index));
    if (!source) throw Failure{EINVAL, fmt::format("NETWORK_CREATE: fd {} is not a buffer", request.fd_or_index)};
    return create_network(device, source->data(), source, fmt::format("<network buffer fd {}>", source->fd()));
}

// Upstream: the network bytes are copied from the caller's memory, as the kernel's
// copy_from_user does; an address the process cannot read is EFAULT, not a crash.
int create_network(const Device& device, const uapi::upstream::NetworkCreate& request) {
    if (request.type == uapi::upstream::kNetworkIndex)
        throw Failure{EINVAL, fmt::format("NETWORK_CREATE: no network {} is built into the emulated firmware",
                                          request.index)};
    if (request.type != uapi::upstream::kNetworkUserBuffer)
        throw Failure{EINVAL, fmt::format("NETWORK_CREATE: unknown network type {}", request.type)};
    const uint32_t size = request.network.size;
    if (request.network.data_ptr == 0 || size == 0)
        throw Failure{EINVAL, fmt::format("NETWORK_CREATE: network data at 0x{:x} of {} bytes",
                                          request.network.data_ptr, size)};
    std::shared_ptr<uint8_t[]> copy(new uint8_t[size]);
    const iovec local{copy.get(), size};
    const iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(request.network.data_ptr)), size};
    if (::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(size))
        throw Failure{EFAULT, fmt::format("NETWORK_CREATE: cannot read {} bytes at 0x{:x}", size,
                                          request.network.data_ptr)};
    return create_network(device, {copy.get(), size}, copy, fmt::format("<network data 0x{:x}>", request.network.data_ptr));
}

// Inputs and outputs are known for a .tflite network only: the direct-drive kernel has no
// network_info operation, and a command stream names no tensors (0 inputs and outputs).
uapi::NetworkInfo network_info(const Network& network) {
    uapi::NetworkInfo info{};
    if (network.stream) {
        fmt::format_to_n(info.desc, sizeof info.desc - 1, "command stream {}", network.npu.name);
        return info;
    }
    const auto& model = *network.model;
    fmt::format_to_n(info.desc, sizeof info.desc - 1, "vela {}", network.npu.name);
    info.is_vela = 1;
    fill_tensors(model.inputs, network.arena.input_offsets, info.ifm_count, info.ifm_size, info.ifm_types,
                 info.ifm_offset, info.ifm_dims, info.ifm_shapes);
    fill_tensors(model.outputs, network.arena.output_offsets, info.ofm_count, info.ofm_size, info.ofm_types,
                 info.ofm_offset, info.ofm_dims, info.ofm_shapes);
    return info;
}

uapi::upstream::NetworkInfo upstream_network_info(const Network& network) {
    const uapi::NetworkInfo full = network_info(network);
    uapi::upstream::NetworkInfo info{};
    std::memcpy(info.desc, full.desc, sizeof info.desc);
    info.ifm_count = full.ifm_count;
    info.ofm_count = full.ofm_count;
    std::copy_n(full.ifm_size, uapi::kFdMax, info.ifm_size);
    std::copy_n(full.ofm_size, uapi::kFdMax, info.ofm_size);
    return info;
}

// Moves the inputs in, runs the model and moves the outputs out, as the firmware does. Three
// ways to pass tensors: IFM and OFM buffers, one per tensor; the tensor arena first and then
// those buffers (NXP's library); the arena alone with no OFM buffers (NXP's Interpreter),
// where inputs and outputs sit at the NETWORK_INFO offsets. Throws std::runtime_error.
PmuReading run_tflite(Inference& inference, const std::vector<uint32_t>& events) {
    auto input_window = [&](const Buffer& b) { return inference.whole_buffers ? b.whole() : b.data(); };
    auto output_window = [&](const Buffer& b) { return inference.whole_buffers ? b.whole() : b.room(); };
    Network& network = *inference.network;
    const LoadedModel& model = *network.model;
    const size_t inputs = model.inputs.size(), outputs = model.outputs.size();
    std::shared_ptr<Buffer> arena;
    std::vector<std::shared_ptr<Buffer>> ifm = inference.ifm;
    if (inference.ofm.empty() && outputs > 0 && ifm.size() == 1) {
        arena = ifm[0];
        ifm.clear();
    } else if (ifm.size() == inputs + 1) {
        arena = ifm[0];
        ifm.erase(ifm.begin());
    } else if (ifm.size() != inputs) {
        throw std::runtime_error(fmt::format("{} IFM buffers for a network with {} inputs", ifm.size(), inputs));
    }
    if (!arena && inference.ofm.size() != outputs)
        throw std::runtime_error(
            fmt::format("{} OFM buffers for a network with {} outputs", inference.ofm.size(), outputs));
    if (arena && arena->extent.size < network.arena.end)
        throw std::runtime_error(fmt::format("the tensor arena buffer holds {} bytes, the network needs {}",
                                             arena->extent.size, network.arena.end));

    std::vector<std::vector<uint8_t>> input_bytes(inputs);
    for (size_t i = 0; i < inputs; ++i) {
        const auto& t = model.inputs[i];
        std::span<const uint8_t> source;
        if (ifm.empty()) {
            source = arena->data().subspan(network.arena.input_offsets[i], t.size_bytes);
        } else {
            source = input_window(*ifm[i]);
            if (source.size() != t.size_bytes)
                throw std::runtime_error(fmt::format("IFM buffer {} holds {} bytes, input {} ({}) has {}",
                                                     ifm[i]->fd(), source.size(), i, t.name, t.size_bytes));
            if (arena) std::ranges::copy(source, arena->data().begin() + network.arena.input_offsets[i]);
        }
        input_bytes[i].assign(source.begin(), source.end());
    }

    // A model Vela left partly on the CPU runs as the firmware's TFLite Micro runs it: the CPU
    // operators on the host's reference kernels, each ethos-u operator on the NPU.
    PmuReading pmu;
    std::vector<std::vector<uint8_t>> graph_outputs;
    if (runs_as_graph(model)) {
        RunResult result = run_graph(model, std::move(input_bytes));
        pmu = read_pmu(result.memory, result.timing, events);
        graph_outputs = std::move(result.outputs);
    } else {
        if (!network.session) network.session = std::make_unique<ModelSession>(model);
        network.session->run(input_bytes);
        pmu = read_pmu(network.session->memory(), {*network.session->timing()}, events);
    }
    const auto& output_bytes = network.session ? network.session->outputs() : graph_outputs;

    for (size_t i = 0; i < outputs; ++i) {
        const auto& bytes = output_bytes[i];
        if (arena) std::ranges::copy(bytes, arena->data().begin() + network.arena.output_offsets[i]);
        if (i >= inference.ofm.size()) continue;
        Buffer& ofm = *inference.ofm[i];
        const auto room = output_window(ofm);
        if (room.size() < bytes.size())
            throw std::runtime_error(fmt::format("OFM buffer {} has room for {} bytes, output {} ({}) has {}",
                                                 ofm.fd(), room.size(), i, model.outputs[i].name, bytes.size()));
        std::ranges::copy(bytes, room.begin());
        if (!inference.whole_buffers) ofm.extent.size = static_cast<uint32_t>(bytes.size());
    }
    return pmu;
}

std::shared_ptr<Buffer> DirectBinding::* region_buffer(int region) {
    switch (region) {
        case 1: return &DirectBinding::intermediate;
        case 3: return &DirectBinding::ifm;
        case 4: return &DirectBinding::ofm;
    }
    return nullptr;
}

// The model a command-stream network runs on one binding. Region 0 (the constant buffer) is read
// where it is; the intermediate, IFM and OFM buffers are both the model's inputs (their contents
// go in) and its outputs (what the NPU wrote comes back), as if the NPU worked on them in place.
std::unique_ptr<LoadedModel> direct_model(const Network& network, const DirectBinding& binding) {
    auto model = std::make_unique<LoadedModel>();
    model->path = "<command-stream network>";
    model->format = ModelFormat::RawCommandStream;
    model->config = network.npu;
    NpuInvocation inv;
    inv.stream = *network.stream;
    if (binding.constant)
        inv.regions.push_back({0, RegionRole::Weights, binding.constant->to_batch_end().size(), binding.constant->to_batch_end(),
                               binding.constant});
    inv.regions.push_back({2, RegionRole::ScratchFast, kDirectSramBytes, {}, nullptr});
    for (const auto& [region, role] : {std::pair{1, RegionRole::Scratch}, std::pair{3, RegionRole::Input}, std::pair{4, RegionRole::Output}}) {
        const auto& buffer = binding.*region_buffer(region);
        if (!buffer) continue;
        const uint64_t size = buffer->to_batch_end().size();
        inv.regions.push_back({region, role, size, {}, nullptr});
        TensorInfo whole;
        whole.name = fmt::format("{} buffer fd {}", region_role_name(role), buffer->fd());
        whole.shape = {static_cast<int64_t>(size)};
        whole.type = ElementType::UInt8;
        whole.region = region;
        whole.size_bytes = size;
        inv.inputs.push_back(whole);
        inv.outputs.push_back(std::move(whole));
    }
    model->inputs = inv.inputs;
    model->outputs = inv.outputs;
    model->invocations.push_back(std::move(inv));
    return model;
}

// Direct drive: the network's command stream on the inference's buffers (the session is kept
// while the inferences use the same buffers).
PmuReading run_direct(Inference& inference, const std::vector<uint32_t>& events) {
    Network& network = *inference.network;
    const DirectBinding binding{inference.constant, inference.intermediate,
                                inference.ifm.empty() ? nullptr : inference.ifm[0],
                                inference.ofm.empty() ? nullptr : inference.ofm[0]};
    if (!network.session || !(network.binding == binding)) {
        network.session.reset();
        network.model = direct_model(network, binding);
        network.binding = binding;
        network.session = std::make_unique<ModelSession>(*network.model);
    }
    const auto& tensors = network.model->inputs;
    std::vector<std::vector<uint8_t>> contents;
    for (const auto& t : tensors) {
        const auto bytes = (binding.*region_buffer(t.region))->to_batch_end();
        contents.emplace_back(bytes.begin(), bytes.end());
    }
    network.session->run(contents);
    for (size_t k = 0; k < tensors.size(); ++k)
        std::ranges::copy(network.session->outputs()[k], (binding.*region_buffer(tensors[k].region))->to_batch_end().begin());
    return read_pmu(network.session->memory(), {*network.session->timing()}, events);
}

void run_inference(Inference& inference) {
    const std::vector<uint32_t> events(std::begin(inference.pmu_config.events), std::end(inference.pmu_config.events));
    const PmuReading pmu = inference.network->stream ? run_direct(inference, events) : run_tflite(inference, events);
    for (int k = 0; k < uapi::kPmuEventMax; ++k)
        inference.pmu_counts.events[k] = events[k] ? static_cast<uint32_t>(pmu.counters[k]) : 0;
    inference.pmu_counts.cycle_count = inference.pmu_config.cycle_count ? pmu.cycle_counter : 0;
}

std::vector<std::shared_ptr<Buffer>> buffers(const char* what, uint32_t count, const uint32_t* fds) {
    if (count > uapi::kFdMax)
        throw Failure{EINVAL, fmt::format("INFERENCE_CREATE: {} {} buffers, at most {}", count, what, uapi::kFdMax)};
    std::vector<std::shared_ptr<Buffer>> result;
    for (uint32_t i = 0; i < count; ++i) {
        auto buffer = lookup<Buffer>(static_cast<int>(fds[i]));
        if (!buffer) throw Failure{EINVAL, fmt::format("INFERENCE_CREATE: {} fd {} is not a buffer", what, fds[i])};
        result.push_back(std::move(buffer));
    }
    return result;
}

// An INFERENCE_CREATE request of either variant.
struct InferenceRequest {
    uint32_t ifm_count;
    const uint32_t* ifm_fd;
    uint32_t ofm_count;
    const uint32_t* ofm_fd;
    uint32_t intermediate_fd = 0, constant_fd = 0;  // 0: none
    uapi::PmuConfig pmu_config;
    bool whole_buffers;
    bool checks_2025 = false;  // the 2025 kernel's (common/ethosu_inference.c) checks
};

InferenceRequest inference_request(const uapi::InferenceCreate& r) {
    // inference_type is not looked at: NXP's library (lf-6.6.3) never sets it, and a whole model
    // is the only thing the emulated firmware runs.
    return {r.ifm_count, r.ifm_fd, r.ofm_count, r.ofm_fd, 0, 0, r.pmu_config, false};
}
InferenceRequest inference_request(const uapi::upstream::InferenceCreate& r) {
    return {r.ifm_count, r.ifm_fd, r.ofm_count, r.ofm_fd, 0, 0, r.pmu_config, true};
}
InferenceRequest inference_request(const uapi::upstream::InferenceCreateDirect& r) {
    return {r.ifm_count, r.ifm_fd, r.ofm_count, r.ofm_fd, r.intermediate_fd, r.constant_fd, r.pmu_config, true, true};
}

std::shared_ptr<Buffer> optional_buffer(const char* what, uint32_t fd) {
    if (fd == 0) return nullptr;  // as the kernel: "fd > 0 ? get : NULL"
    return buffers(what, 1, &fd)[0];
}

// The emulated NPU completes the inference before the call returns; its fd then polls readable.
// The 2025 kernel's rules for the IFM (or OFM) list: buffers of one BUFFERS_CREATE batch, in
// the batch's order (a region based at the first reaches the others at their offsets).
void check_batch_order(const char* what, const std::vector<std::shared_ptr<Buffer>>& list) {
    if (std::ranges::none_of(list, &Buffer::in_batch)) return;  // BUFFER_CREATE buffers: an older client's
    for (size_t i = 1; i < list.size(); ++i) {
        if (list[i]->memory() != list[0]->memory())
            throw Failure{EINVAL, fmt::format("INFERENCE_CREATE: the {}s are not from the same buffer batch", what)};
        if (list[i]->offset() < list[i - 1]->offset())
            throw Failure{EINVAL, fmt::format("INFERENCE_CREATE: {} {} comes before {} {} in its batch", what, i, what,
                                              i - 1)};
    }
}

int create_inference(const std::shared_ptr<Network>& network, const InferenceRequest& request) {
    if (request.checks_2025 && (request.ifm_count > uapi::kFdMax || request.ofm_count > uapi::kFdMax ||
                                request.ofm_count == 0))
        throw Failure{EFAULT, fmt::format("INFERENCE_CREATE: {} IFM and {} OFM buffers (1 to {} OFMs)",
                                          request.ifm_count, request.ofm_count, uapi::kFdMax)};
    auto inference = std::make_shared<Inference>();
    inference->network = network;
    inference->ifm = buffers("IFM", request.ifm_count, request.ifm_fd);
    inference->ofm = buffers("OFM", request.ofm_count, request.ofm_fd);
    inference->intermediate = optional_buffer("intermediate", request.intermediate_fd);
    inference->constant = optional_buffer("constant", request.constant_fd);
    check_batch_order("IFM", inference->ifm);
    check_batch_order("OFM", inference->ofm);
    inference->whole_buffers = request.whole_buffers;
    inference->pmu_config = request.pmu_config;
    for (uint32_t event : request.pmu_config.events)
        if (event && pmu_event_name(network->npu.generation, event).empty())
            throw Failure{EINVAL, fmt::format("INFERENCE_CREATE: PMU event {} does not exist on {}", event,
                                              generation_name(network->npu.generation))};
    const int fd = new_event_fd();
    table[fd] = inference;
    try {
        run_inference(*inference);
        inference->status = uapi::kStatusOk;
    } catch (const std::exception& e) {
        inference->status = uapi::kStatusError;
        inference->pmu_counts = {};
        report(fmt::format("inference fd {}: {}", fd, e.what()));
    }
    const uint64_t one = 1;
    if (real_write(fd, &one, sizeof one) != sizeof one) report(fmt::format("inference fd {}: cannot signal", fd));
    return fd;
}

template <typename T>
T& argument(void* data) {
    if (!data) throw Failure{EFAULT, ""};
    return *static_cast<T*>(data);
}

// One request on one of our fds; returns the call's result or throws Failure.
int dispatch(const Object& object, unsigned long request, void* data) {
    if (const auto* device = std::get_if<std::shared_ptr<Device>>(&object)) {
        switch (request) {
            case uapi::kIoctlPing:
            case uapi::kIoctlVersionReq: return 0;
            case uapi::kIoctlCapabilitiesReq:
                argument<uapi::DeviceCapabilities>(data) = capabilities((*device)->npu);
                return 0;
            case uapi::upstream::kIoctlDriverVersionGet:
                argument<uapi::upstream::KernelDriverVersion>(data) = kUpstreamDriverVersion;
                return 0;
            case uapi::upstream::kIoctlCapabilitiesReq:
                argument<uapi::upstream::DeviceCapabilities>(data) = upstream_capabilities((*device)->npu).caps;
                return 0;
            case uapi::upstream::kIoctlCapabilitiesReqWithNetworks:
                argument<uapi::upstream::DeviceCapabilitiesWithNetworks>(data) = upstream_capabilities((*device)->npu);
                return 0;
            case uapi::kIoctlBufferCreate: return create_buffer(**device, argument<uapi::BufferCreate>(data));
            case uapi::upstream::kIoctlBuffersCreate:
                return create_buffers(**device, argument<uapi::upstream::BuffersCreate>(data));
            case uapi::kIoctlNetworkCreate: return create_network(**device, argument<uapi::NetworkCreate>(data));
            case uapi::upstream::kIoctlNetworkCreate:
                return create_network(**device, argument<uapi::upstream::NetworkCreate>(data));
        }
    } else if (const auto* buffer = std::get_if<std::shared_ptr<Buffer>>(&object)) {
        switch (request) {
            case uapi::kIoctlBufferSet: {
                const auto& extent = argument<uapi::BufferExtent>(data);
                if (uint64_t{extent.offset} + extent.size > (*buffer)->capacity())
                    throw Failure{EINVAL, fmt::format("BUFFER_SET: offset {} + size {} exceeds the capacity {}",
                                                      extent.offset, extent.size, (*buffer)->capacity())};
                (*buffer)->extent = extent;
                return 0;
            }
            case uapi::kIoctlBufferGet: argument<uapi::BufferExtent>(data) = (*buffer)->extent; return 0;
            case uapi::upstream::kIoctlBufferClear:
                if (!(*buffer)->in_batch()) break;
                std::ranges::fill((*buffer)->aligned(), uint8_t{0});
                (*buffer)->position = 0;
                return 0;
        }
    } else if (const auto* network = std::get_if<std::shared_ptr<Network>>(&object)) {
        switch (request) {
            case uapi::kIoctlNetworkInfo: argument<uapi::NetworkInfo>(data) = network_info(**network); return 0;
            case uapi::upstream::kIoctlNetworkInfo:
                argument<uapi::upstream::NetworkInfo>(data) = upstream_network_info(**network);
                return 0;
            case uapi::kIoctlInferenceCreate:
                return create_inference(*network, inference_request(argument<uapi::InferenceCreate>(data)));
            case uapi::upstream::kIoctlInferenceCreate:
                return create_inference(*network,
                                        inference_request(argument<uapi::upstream::InferenceCreate>(data)));
            case uapi::upstream::kIoctlInferenceCreateDirect:
                return create_inference(*network,
                                        inference_request(argument<uapi::upstream::InferenceCreateDirect>(data)));
        }
    } else if (const auto* inference = std::get_if<std::shared_ptr<Inference>>(&object)) {
        const auto& inf = **inference;
        switch (request) {
            case uapi::kIoctlInferenceStatus:
                argument<uapi::ResultStatus>(data) = {inf.status, inf.pmu_config, inf.pmu_counts};
                return 0;
            case uapi::kIoctlInferenceCancel:
                // Inferences finish inside INFERENCE_CREATE: there is never one left to cancel.
                argument<uapi::CancelStatus>(data).status = uapi::kStatusError;
                return 0;
        }
    }
    // The kernel's answer to a request the fd does not know (-ENOIOCTLCMD reaches the caller as ENOTTY).
    throw Failure{ENOTTY, ""};
}

int fail(const Failure& failure) {
    if (!failure.message.empty()) report(failure.message);
    errno = failure.error;
    return -1;
}

}  // namespace

int emu_open(const char* path, int flags, mode_t mode) {
    if (!path || std::strcmp(path, kDevicePath) != 0) {
        const int fd = real_open(path, flags, mode);
        // An fd of ours closed behind our back (::close) may come back here: it is not ours now.
        if (fd >= 0) {
            std::lock_guard lock(table_mutex);
            table.erase(fd);
        }
        return fd;
    }
    const char* name = std::getenv(kNpuVariable);
    const auto npu = find_npu_config(name && *name ? name : kDefaultNpu);
    std::lock_guard lock(table_mutex);
    if (!npu)
        return fail({ENODEV, fmt::format("{}={} names no NPU; valid: {}", kNpuVariable, name, npu_config_names())});
    try {
        const int fd = new_event_fd();
        table[fd] = std::make_shared<Device>(Device{*npu});
        return fd;
    } catch (const Failure& failure) {
        return fail(failure);
    }
}

int emu_ioctl(int fd, unsigned long request, void* data) {
    std::unique_lock lock(table_mutex);
    const auto it = table.find(fd);
    if (it == table.end()) {
        lock.unlock();
        return real_ioctl(fd, request, data);
    }
    try {
        return dispatch(it->second, request, data);
    } catch (const Failure& failure) {
        return fail(failure);
    } catch (const std::bad_alloc&) {
        return fail({ENOMEM, "out of memory"});
    } catch (const std::exception& e) {
        return fail({EIO, e.what()});
    }
}

void* emu_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
    {
        std::lock_guard lock(table_mutex);
        const auto it = table.find(fd);
        if (it != table.end()) {
            const auto* buffer = std::get_if<std::shared_ptr<Buffer>>(&it->second);
            if (buffer && (*buffer)->in_batch()) {  // the 2025 kernel's buffer has no mmap operation
                fail({ENODEV, fmt::format("mmap on buffer fd {}: BUFFERS_CREATE buffers are read and written", fd)});
                return MAP_FAILED;
            }
            if (!buffer || offset < 0 || uint64_t(offset) + length > (*buffer)->capacity()) {
                fail({EINVAL, buffer ? fmt::format("mmap of {} bytes at {} beyond buffer fd {} of {} bytes", length,
                                                   offset, fd, (*buffer)->capacity())
                                     : fmt::format("mmap on fd {}, which is not a buffer", fd)});
                return MAP_FAILED;
            }
        }
    }
    return real_mmap(addr, length, prot, flags, fd, offset);
}

// read, write and lseek on a batch buffer are the kernel's buffer operations; the other fds of
// ours have none (EINVAL, ESPIPE); BUFFER_CREATE buffers are memfds and behave as such.
template <typename BufferOp, typename Real>
auto file_operation(int fd, int no_operation, BufferOp buffer_op, Real real_op) -> decltype(real_op()) {
    std::unique_lock lock(table_mutex);
    const auto it = table.find(fd);
    const auto* buffer = it == table.end() ? nullptr : std::get_if<std::shared_ptr<Buffer>>(&it->second);
    if (it == table.end() || (buffer && !(*buffer)->in_batch())) {
        lock.unlock();
        return real_op();
    }
    try {
        if (!buffer) throw Failure{no_operation, ""};
        return buffer_op(**buffer);
    } catch (const Failure& failure) {
        return fail(failure);
    }
}

ssize_t emu_read(int fd, void* to, size_t size) {
    return file_operation(fd, EINVAL, [&](Buffer& b) { return read_buffer(b, to, size); },
                          [&] { return real_read(fd, to, size); });
}

ssize_t emu_write(int fd, const void* from, size_t size) {
    return file_operation(fd, EINVAL, [&](Buffer& b) { return write_buffer(b, from, size); },
                          [&] { return real_write(fd, from, size); });
}

off_t emu_lseek(int fd, off_t offset, int whence) {
    return file_operation(fd, ESPIPE, [&](Buffer& b) { return seek_buffer(b, offset, whence); },
                          [&] { return real_lseek(fd, offset, whence); });
}

int emu_close(int fd) {
    std::lock_guard lock(table_mutex);
    table.erase(fd);  // objects others still hold (a network's buffer) live on
    return real_close(fd);
}

std::string last_error() {
    std::lock_guard lock(table_mutex);
    return last_error_message;
}

}  // namespace ethosu::linux_stack
