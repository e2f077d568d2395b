// The emulated driver behind /dev/ethosu0: a table from fd to device, buffer, network or
// inference object. Every fd it hands out is a real one (an eventfd, or a memfd for buffers)
// so that poll, mmap and close work on it; the table gives it its meaning.

#include <fcntl.h>
#include <sys/eventfd.h>
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
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/description.h"
#include "emulator/isa/error.h"
#include "frontend/cli/run_model.h"
#include "frontend/linux/ethosu_linux.h"
#include "frontend/linux/ethosu_uapi.h"
#include "frontend/loaders/model.h"

namespace ethosu::linux_stack {
namespace {

constexpr const char* kDefaultNpu = "ethos-u55-128";
constexpr uint64_t kArenaAlignment = 16;

// A failed request: the errno the call returns, and for driver-level faults a message.
struct Failure {
    int error;
    std::string message;
};

std::mutex table_mutex;  // guards everything below
std::string last_error_message;

void report(const std::string& message) {
    last_error_message = message;
    std::cerr << "ethosu-emu " << kDevicePath << ": " << message << "\n";
}

struct Device {
    NpuConfig npu;
};

// Host memory shared with the client through the memfd it is created on.
class Buffer {
public:
    Buffer(int fd, uint32_t capacity, void* host) : fd_(fd), capacity_(capacity), host_(static_cast<uint8_t*>(host)) {}
    ~Buffer() { ::munmap(host_, capacity_); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    int fd() const { return fd_; }
    uint32_t capacity() const { return capacity_; }
    uapi::BufferExtent extent{0, 0};
    std::span<uint8_t> data() const { return {host_ + extent.offset, extent.size}; }
    // Room from the data offset to the end of the buffer.
    std::span<uint8_t> room() const { return {host_ + extent.offset, capacity_ - extent.offset}; }

private:
    int fd_;
    uint32_t capacity_;
    uint8_t* host_;
};

// Where the firmware's tensor arena holds each input and output: inputs, then outputs, aligned.
struct ArenaLayout {
    std::vector<uint64_t> input_offsets, output_offsets;
    uint64_t end = 0;
};

struct Network {
    NpuConfig npu;
    std::shared_ptr<Buffer> source;  // the buffer the model came from, held as the driver holds it
    std::unique_ptr<LoadedModel> model;
    ArenaLayout arena;
    // Set up at the first inference and kept for the others: the arena, the decoded weights (each
    // run still checks the bytes they were decoded from) and the decoded stream.
    std::unique_ptr<ModelSession> session;
};

struct Inference {
    std::shared_ptr<Network> network;
    std::vector<std::shared_ptr<Buffer>> ifm, ofm;
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

uapi::DeviceCapabilities capabilities(const NpuConfig& npu) {
    const auto& gen = isa::describe(npu.generation);
    const auto* id = gen.register_named("ID");
    const auto* config = gen.register_named("CONFIG");
    uapi::DeviceCapabilities caps{};
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

int create_buffer(const Device&, const uapi::BufferCreate& request) {
    if (request.capacity == 0) throw Failure{EINVAL, "BUFFER_CREATE: capacity 0"};
    const int fd = ::memfd_create("ethosu-buffer", MFD_CLOEXEC);
    if (fd < 0) throw Failure{errno, fmt::format("memfd_create failed: {}", std::strerror(errno))};
    if (::ftruncate(fd, request.capacity) != 0) {
        const int error = errno;
        ::close(fd);
        throw Failure{error, fmt::format("BUFFER_CREATE: cannot allocate {} bytes", request.capacity)};
    }
    void* host = ::mmap(nullptr, request.capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (host == MAP_FAILED) {
        const int error = errno;
        ::close(fd);
        throw Failure{error, fmt::format("BUFFER_CREATE: cannot map {} bytes", request.capacity)};
    }
    table[fd] = std::make_shared<Buffer>(fd, request.capacity, host);
    return fd;
}

int create_network(const Device& device, const uapi::NetworkCreate& request) {
    if (request.type == uapi::kNetworkIndex)
        throw Failure{EINVAL, fmt::format("NETWORK_CREATE: no network {} is built into the emulated firmware",
                                          request.fd_or_index)};
    if (request.type != uapi::kNetworkBuffer)
        throw Failure{EINVAL, fmt::format("NETWORK_CREATE: unknown network type {}", request.type)};
    auto source = lookup<Buffer>(static_cast<int>(request.fd_or_index));
    if (!source) throw Failure{EINVAL, fmt::format("NETWORK_CREATE: fd {} is not a buffer", request.fd_or_index)};
    const auto data = source->data();
    const std::string name = fmt::format("<network buffer fd {}>", source->fd());
    auto network = std::make_shared<Network>();
    network->npu = device.npu;
    network->source = source;
    try {
        // Like the firmware, the network reads its weights from the buffer, which it keeps alive.
        network->model = load_vela_tflite(name, FileBytes(data, source), {std::string(device.npu.name)});
    } catch (const Error& e) {
        throw Failure{EINVAL, fmt::format("NETWORK_CREATE: {}", e.what())};
    }
    const auto& model = *network->model;
    if (model.inputs.size() > uapi::kFdMax || model.outputs.size() > uapi::kFdMax)
        throw Failure{EINVAL, fmt::format("NETWORK_CREATE: {} inputs and {} outputs; the interface carries {}",
                                          model.inputs.size(), model.outputs.size(), uapi::kFdMax)};
    for (const auto* tensors : {&model.inputs, &model.outputs})
        for (const auto& t : *tensors)
            if (t.shape.size() > uapi::kDimMax || t.size_bytes > UINT32_MAX)
                throw Failure{EINVAL, fmt::format("NETWORK_CREATE: tensor {} ({} dimensions, {} bytes) does not fit "
                                                  "the interface",
                                                  t.name, t.shape.size(), t.size_bytes)};
    network->arena = arena_layout(model);
    if (network->arena.end > UINT32_MAX)
        throw Failure{EINVAL, "NETWORK_CREATE: inputs and outputs exceed a 32-bit arena"};
    const int fd = new_event_fd();
    table[fd] = std::move(network);
    return fd;
}

uapi::NetworkInfo network_info(const Network& network) {
    uapi::NetworkInfo info{};
    const auto& model = *network.model;
    fmt::format_to_n(info.desc, sizeof info.desc - 1, "vela {}", network.npu.name);
    info.is_vela = 1;
    fill_tensors(model.inputs, network.arena.input_offsets, info.ifm_count, info.ifm_size, info.ifm_types,
                 info.ifm_offset, info.ifm_dims, info.ifm_shapes);
    fill_tensors(model.outputs, network.arena.output_offsets, info.ofm_count, info.ofm_size, info.ofm_types,
                 info.ofm_offset, info.ofm_dims, info.ofm_shapes);
    return info;
}

// Moves the inputs in, runs the model and moves the outputs out, as the firmware does. Three
// ways to pass tensors: IFM and OFM buffers, one per tensor; the tensor arena first and then
// those buffers (NXP's library); the arena alone with no OFM buffers (NXP's Interpreter),
// where inputs and outputs sit at the NETWORK_INFO offsets. Throws std::runtime_error.
void run_inference(Inference& inference) {
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
            source = ifm[i]->data();
            if (source.size() != t.size_bytes)
                throw std::runtime_error(fmt::format("IFM buffer {} holds {} bytes, input {} ({}) has {}",
                                                     ifm[i]->fd(), source.size(), i, t.name, t.size_bytes));
            if (arena) std::ranges::copy(source, arena->data().begin() + network.arena.input_offsets[i]);
        }
        input_bytes[i].assign(source.begin(), source.end());
    }

    if (!network.session) network.session = std::make_unique<ModelSession>(model);
    ModelSession& session = *network.session;
    session.run(input_bytes);

    for (size_t i = 0; i < outputs; ++i) {
        const auto& bytes = session.outputs()[i];
        if (arena) std::ranges::copy(bytes, arena->data().begin() + network.arena.output_offsets[i]);
        if (i >= inference.ofm.size()) continue;
        Buffer& ofm = *inference.ofm[i];
        if (ofm.room().size() < bytes.size())
            throw std::runtime_error(fmt::format("OFM buffer {} has room for {} bytes, output {} ({}) has {}",
                                                 ofm.fd(), ofm.room().size(), i, model.outputs[i].name, bytes.size()));
        std::ranges::copy(bytes, ofm.room().begin());
        ofm.extent.size = static_cast<uint32_t>(bytes.size());
    }

    const std::vector<uint32_t> events(std::begin(inference.pmu_config.events), std::end(inference.pmu_config.events));
    const PmuReading pmu = read_pmu(session.memory(), {*session.timing()}, events);
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

// The emulated NPU completes the inference before the call returns; its fd then polls readable.
int create_inference(const std::shared_ptr<Network>& network, const uapi::InferenceCreate& request) {
    // inference_type is not looked at: NXP's library (lf-6.6.3) never sets it, and a whole model
    // is the only thing the emulated firmware runs.
    auto inference = std::make_shared<Inference>();
    inference->network = network;
    inference->ifm = buffers("IFM", request.ifm_count, request.ifm_fd);
    inference->ofm = buffers("OFM", request.ofm_count, request.ofm_fd);
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
    if (::write(fd, &one, sizeof one) != sizeof one) report(fmt::format("inference fd {}: cannot signal", fd));
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
            case uapi::kIoctlBufferCreate: return create_buffer(**device, argument<uapi::BufferCreate>(data));
            case uapi::kIoctlNetworkCreate: return create_network(**device, argument<uapi::NetworkCreate>(data));
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
        }
    } else if (const auto* network = std::get_if<std::shared_ptr<Network>>(&object)) {
        switch (request) {
            case uapi::kIoctlNetworkInfo: argument<uapi::NetworkInfo>(data) = network_info(**network); return 0;
            case uapi::kIoctlInferenceCreate:
                return create_inference(*network, argument<uapi::InferenceCreate>(data));
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
    throw Failure{EINVAL, ""};
}

int fail(const Failure& failure) {
    if (!failure.message.empty()) report(failure.message);
    errno = failure.error;
    return -1;
}

}  // namespace

int emu_open(const char* path, int flags) {
    if (!path || std::strcmp(path, kDevicePath) != 0) {
        const int fd = ::open(path, flags);
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
        return ::ioctl(fd, request, data);
    }
    try {
        return dispatch(it->second, request, data);
    } catch (const Failure& failure) {
        return fail(failure);
    } catch (const std::bad_alloc&) {
        return fail({ENOMEM, "out of memory"});
    }
}

void* emu_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
    {
        std::lock_guard lock(table_mutex);
        const auto it = table.find(fd);
        if (it != table.end()) {
            const auto* buffer = std::get_if<std::shared_ptr<Buffer>>(&it->second);
            if (!buffer || offset < 0 || uint64_t(offset) + length > (*buffer)->capacity()) {
                fail({EINVAL, buffer ? fmt::format("mmap of {} bytes at {} beyond buffer fd {} of {} bytes", length,
                                                   offset, fd, (*buffer)->capacity())
                                     : fmt::format("mmap on fd {}, which is not a buffer", fd)});
                return MAP_FAILED;
            }
        }
    }
    return ::mmap(addr, length, prot, flags, fd, offset);
}

int emu_munmap(void* addr, size_t length) { return ::munmap(addr, length); }

int emu_ppoll(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout, const sigset_t* sigmask) {
    return ::ppoll(fds, nfds, timeout, sigmask);
}

int emu_close(int fd) {
    std::lock_guard lock(table_mutex);
    table.erase(fd);  // objects others still hold (a network's buffer) live on
    return ::close(fd);
}

std::string last_error() {
    std::lock_guard lock(table_mutex);
    return last_error_message;
}

}  // namespace ethosu::linux_stack
