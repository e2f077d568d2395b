// The device model API (ethosu_device.h) over NpuDevice with the host's clock.

#include "frontend/device/ethosu_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "frontend/device/npu_device.h"

struct ethosu_device {
    std::unique_ptr<ethosu::NpuDevice> npu;
    mutable std::mutex error_lock;
    std::string call_error;          // why the last failed call failed
    mutable std::string error_text;  // what ethosu_device_last_error handed out
};

namespace {

// Runs f; an exception becomes the device's last error and the failed value: none crosses the C
// boundary.
template <typename R, typename F>
R guarded(ethosu_device* device, R failed, F&& f) noexcept {
    std::string reason;
    try {
        return f();
    } catch (const std::exception& e) {
        reason = e.what();
    } catch (...) {
        reason = "an unknown error";
    }
    try {
        std::lock_guard lock(device->error_lock);
        device->call_error = std::move(reason);
    } catch (...) {
    }
    return failed;
}

void write_error(char* error, size_t size, const std::string& message) {
    if (!error || !size) return;
    const size_t n = std::min(size - 1, message.size());
    std::memcpy(error, message.data(), n);
    error[n] = '\0';
}

}  // namespace

extern "C" {

int ethosu_device_create(const ethosu_device_options* options, const ethosu_device_host* host, ethosu_device** out,
                         char* error, size_t error_size) {
    if (!options || !out) {
        write_error(error, error_size, "ethosu_device_create: options and out are required");
        return -1;
    }
    *out = nullptr;
    if (options->version != ETHOSU_DEVICE_API_VERSION) {
        write_error(error, error_size,
                    fmt::format("ethosu_device_create: options.version {} (this library is version {})",
                                options->version, ETHOSU_DEVICE_API_VERSION));
        return -1;
    }
    const auto npu = ethosu::find_npu_config(options->npu ? options->npu : "");
    if (!npu) {
        write_error(error, error_size,
                    fmt::format("unknown NPU configuration '{}'; valid: {}", options->npu ? options->npu : "",
                                ethosu::npu_config_names()));
        return -1;
    }
    try {
        ethosu::NpuDevice::Options o;
        o.npu = *npu;
        o.secure = options->secure != 0;
        o.privileged = options->privileged != 0;
        o.clock = ethosu::NpuDevice::Clock::Host;
        if (options->system_config) o.system.system_config = options->system_config;
        if (options->memory_mode) o.system.memory_mode = options->memory_mode;
        if (options->config_file) o.system.config_files.push_back(options->config_file);
        if (host && (host->mem_read || host->mem_write)) {
            if (!host->mem_read || !host->mem_write) {
                write_error(error, error_size, "ethosu_device_create: a bus needs both mem_read and mem_write");
                return -1;
            }
            o.bus = ethosu::BusCallbacks{host->mem_read, host->mem_write, host->user};
        }
        auto device = std::make_unique<ethosu_device>();
        device->npu = std::make_unique<ethosu::NpuDevice>(std::move(o));
        if (host && host->irq) {
            const auto irq = host->irq;
            void* const user = host->user;
            device->npu->set_irq_line([irq, user](bool level) { irq(user, level ? 1 : 0); });
        }
        *out = device.release();
    } catch (const std::exception& e) {
        write_error(error, error_size, e.what());
        return -1;
    }
    return 0;
}

void ethosu_device_destroy(ethosu_device* device) { delete device; }

int ethosu_device_map(ethosu_device* device, uint64_t address, void* host, size_t size) {
    if (!device || (!host && size)) return -1;
    return guarded(device, -1, [&] {
        device->npu->map(address, {static_cast<uint8_t*>(host), size}, fmt::format("host memory at 0x{:x}", address));
        return 0;
    });
}

int ethosu_device_read(ethosu_device* device, uint32_t offset, unsigned size, uint64_t* value) {
    if (!device || !value) return -1;
    return guarded(device, -1, [&] { return device->npu->read(offset, size, *value) ? 0 : -1; });
}

int ethosu_device_write(ethosu_device* device, uint32_t offset, unsigned size, uint64_t value) {
    if (!device) return -1;
    return guarded(device, -1, [&] { return device->npu->write(offset, size, value) ? 0 : -1; });
}

uint32_t ethosu_device_peek(const ethosu_device* device, uint32_t offset) {
    return device ? device->npu->peek(offset) : 0;
}

size_t ethosu_device_register_bytes(const ethosu_device* device) {
    return device ? device->npu->register_bytes() : 0;
}

void ethosu_device_reset(ethosu_device* device) {
    if (device) guarded(device, 0, [&] { return device->npu->power_on_reset(), 0; });
}

uint64_t ethosu_device_now(const ethosu_device* device) { return device ? device->npu->now() : 0; }

int ethosu_device_next_event(const ethosu_device* device, uint64_t* cycles) {
    if (!device) return 0;
    const auto next = device->npu->cycles_to_next_event();
    if (next && cycles) *cycles = *next;
    return next ? 1 : 0;
}

void ethosu_device_advance(ethosu_device* device, uint64_t cycles) {
    if (device) guarded(device, 0, [&] { return device->npu->advance(cycles), 0; });
}

double ethosu_device_clock_hz(const ethosu_device* device) { return device ? device->npu->clock_hz() : 0.0; }

int ethosu_device_irq_level(const ethosu_device* device) { return device && device->npu->irq_level() ? 1 : 0; }

int ethosu_device_save(const ethosu_device* device, void* buffer, size_t size, size_t* needed) {
    if (!device) return -1;
    return guarded(const_cast<ethosu_device*>(device), -1, [&] {
        const std::vector<uint8_t> state = device->npu->save();
        if (needed) *needed = state.size();
        if (!buffer || size < state.size()) return -1;
        std::memcpy(buffer, state.data(), state.size());
        return 0;
    });
}

int ethosu_device_restore(ethosu_device* device, const void* buffer, size_t size) {
    if (!device || (!buffer && size)) return -1;
    return guarded(device, -1, [&] {
        device->npu->restore({static_cast<const uint8_t*>(buffer), size});
        return 0;
    });
}

uint64_t ethosu_device_last_cycles(const ethosu_device* device) { return device ? device->npu->last_cycles() : 0; }

const char* ethosu_device_last_error(const ethosu_device* device) {
    if (!device) return "";
    std::string fault = device->npu->last_error_text();
    std::lock_guard lock(device->error_lock);
    device->error_text = device->call_error.empty() ? std::move(fault) : device->call_error;
    return device->error_text.c_str();
}

}  // extern "C"
