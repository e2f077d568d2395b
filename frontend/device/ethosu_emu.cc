// The C API over NpuDevice.

#include "frontend/device/ethosu_emu.h"

#include <limits>
#include <memory>
#include <mutex>
#include <string>

#include "emulator/isa/error.h"
#include "frontend/device/npu_device.h"

struct ethosu_emu {
    std::unique_ptr<ethosu::NpuDevice> device;
    ethosu_emu_dma_totals dma{};
    mutable std::mutex error_lock;
    mutable std::string error_text;  // what ethosu_emu_last_error handed out
};

namespace {
thread_local std::string create_error;

// No exception crosses the C boundary: a failure is the device's last error.
template <typename R, typename F>
R guarded(R failed, F&& f) noexcept {
    try {
        return f();
    } catch (...) {
        return failed;
    }
}
}  // namespace

extern "C" {

int ethosu_emu_create(const ethosu_emu_options* options, ethosu_emu** out, const char** error) {
    auto fail = [&](std::string message) {
        create_error = std::move(message);
        if (error) *error = create_error.c_str();
        return -1;
    };
    if (!options || !out) return fail("ethosu_emu_create: options and out are required");
    *out = nullptr;
    const auto npu = ethosu::find_npu_config(options->npu ? options->npu : "");
    if (!npu) {
        return fail(std::string("unknown NPU configuration '") + (options->npu ? options->npu : "") +
                    "'; valid: " + ethosu::npu_config_names());
    }
    try {
        ethosu::NpuDevice::Options o;
        o.npu = *npu;
        o.secure = options->secure != 0;
        o.privileged = options->privileged != 0;
        if (options->system_config) o.system.system_config = options->system_config;
        if (options->memory_mode) o.system.memory_mode = options->memory_mode;
        auto emu = std::make_unique<ethosu_emu>();
        emu->device = std::make_unique<ethosu::NpuDevice>(std::move(o));
        *out = emu.release();
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    return 0;
}

void ethosu_emu_destroy(ethosu_emu* emu) { delete emu; }

int ethosu_emu_map(ethosu_emu* emu, uint64_t npu_address, void* host, size_t size) {
    if (!emu || (!host && size)) return -1;
    try {
        emu->device->map(npu_address, {static_cast<uint8_t*>(host), size}, "host memory");
    } catch (const std::exception&) {
        return -1;
    }
    return 0;
}

uint64_t ethosu_emu_npu_address(const ethosu_emu* emu, const void* host) {
    if (!emu) return std::numeric_limits<uint64_t>::max();
    return emu->device->npu_address(host).value_or(std::numeric_limits<uint64_t>::max());
}

uint64_t ethosu_emu_unmapped_address(ethosu_emu* emu, const void* host, int index) {
    return emu ? emu->device->unmapped_address(host, index) : ethosu::NpuDevice::kUnmappedWindow;
}

uint32_t ethosu_emu_read32(ethosu_emu* emu, uint32_t offset) {
    return emu ? guarded(0u, [&] { return emu->device->read(offset); }) : 0;
}

void ethosu_emu_write32(ethosu_emu* emu, uint32_t offset, uint32_t value) {
    if (emu) guarded(0, [&] { return emu->device->write(offset, value), 0; });
}

void ethosu_emu_set_irq_handler(ethosu_emu* emu, ethosu_emu_irq_handler handler, void* user) {
    if (!emu) return;
    if (handler) emu->device->set_irq_handler([handler, user] { handler(user); });
    else emu->device->set_irq_handler(nullptr);
}

int ethosu_emu_run_until_idle(ethosu_emu* emu) {
    return emu ? guarded(0, [&] { return emu->device->run_until_idle() ? 1 : 0; }) : 0;
}

volatile uint32_t* ethosu_emu_register_block(ethosu_emu* emu) {
    return emu ? guarded<uint32_t*>(nullptr, [&] { return emu->device->register_block().data(); }) : nullptr;
}

size_t ethosu_emu_register_block_size(const ethosu_emu* emu) {
    return emu ? guarded<size_t>(0, [&] { return emu->device->register_block().size_bytes(); }) : 0;
}

void ethosu_emu_sync(ethosu_emu* emu) {
    if (emu) guarded(0, [&] { return emu->device->sync(), 0; });
}

void ethosu_emu_run_concurrently(ethosu_emu* emu, int on) {
    if (emu) guarded(0, [&] { return emu->device->run_concurrently(on != 0), 0; });
}

int ethosu_emu_dma_copy(ethosu_emu* emu, void* dst, const void* src, size_t size, uint64_t* cycles) {
    if (!emu || ((!dst || !src) && size)) return -1;
    try {
        const uint64_t took = emu->device->dma_copy({static_cast<uint8_t*>(dst), size},
                                                    {static_cast<const uint8_t*>(src), size});
        if (cycles) *cycles = took;
        emu->dma.copies += size ? 1 : 0;
        emu->dma.bytes += size;
        emu->dma.cycles += took;
    } catch (const std::exception&) {
        return -1;  // the reason is the device's last error
    }
    return 0;
}

ethosu_emu_dma_totals ethosu_emu_dma_copies(const ethosu_emu* emu) { return emu ? emu->dma : ethosu_emu_dma_totals{}; }

void ethosu_emu_trace(ethosu_emu* emu, int on) {
    if (emu) emu->device->record_trace(on != 0);
}

int ethosu_emu_write_trace(ethosu_emu* emu, const char* path) {
    if (!emu || !path) return -1;
    try {
        emu->device->write_trace(path);
    } catch (const std::exception&) {
        return -1;  // the reason is the device's last error
    }
    return 0;
}

uint64_t ethosu_emu_last_cycles(const ethosu_emu* emu) { return emu ? emu->device->last_cycles() : 0; }

const char* ethosu_emu_last_error(const ethosu_emu* emu) {
    if (!emu) return "";
    std::string text = emu->device->last_error_text();
    std::lock_guard lock(emu->error_lock);
    emu->error_text = std::move(text);
    return emu->error_text.c_str();
}

}  // extern "C"
