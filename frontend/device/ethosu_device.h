/*
 * ethosu-emu device model API: an emulated Ethos-U NPU as a device a system simulator hosts
 * (QEMU, gem5, Renode, SystemC TLM, or a test bench).
 *
 * The host owns the bus and the clock; the device owns its registers:
 *  - Register accesses: ethosu_device_read / ethosu_device_write at the NPU's register offsets,
 *    1, 2, 4 or 8 bytes, naturally aligned. Each is an event that takes effect in the order the
 *    host makes them (a soft reset, a write of the value a register holds, a write-one-to-clear
 *    PMU word, CMD's run bit). A narrow write merges its bytes into the register as APB byte
 *    strobes do; an 8-byte access is two word accesses, the lower first. ethosu_device_peek
 *    reads without any effect.
 *  - Memory: a bus the host serves (ethosu_device_host.mem_read / mem_write, by physical address),
 *    and host memory mapped into the NPU's physical address space with ethosu_device_map (the fast
 *    path, taking precedence where it lies). A failed bus access, or without a bus an access
 *    outside every mapping, is the NPU's bus fault (STATUS.bus_status), as on hardware.
 *  - Time: NPU cycles (ethosu_device_clock_hz converts). CMD.transition_to_running_state runs the
 *    command stream at QBASE at once on the functional engine and the timing model; the NPU is
 *    then busy for the stream's cycles: STATUS.state, QREAD and PMCCNTR show it running until
 *    the host has advanced time (ethosu_device_advance) past its end, which
 *    ethosu_device_next_event tells. Then STATUS, QREAD and the PMU show it done and the
 *    interrupt is raised. A register read never moves time. Outputs are in memory from the start.
 *  - Interrupt: a level, high while STATUS.irq_raised or pmu_irq_raised is set; the host's irq
 *    callback is called at each change, after the access or advance that made it, with the
 *    device's lock released (so the callback may access the device).
 *  - Snapshots: ethosu_device_save / ethosu_device_restore hold the registers, time, a started
 *    stream's pending end and the PMU; they restore onto a device of the same configuration.
 *
 * Every call is safe from any thread (one lock per device; no thread of its own); no exception
 * or C++ error crosses this boundary. Calls with a NULL device fail or do nothing.
 */
#ifndef ETHOSU_DEVICE_H
#define ETHOSU_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface: ethosu_device_options.version must hold it. */
#define ETHOSU_DEVICE_API_VERSION 1

typedef struct ethosu_device ethosu_device;

typedef struct ethosu_device_options {
    uint32_t version;            /* ETHOSU_DEVICE_API_VERSION */
    const char* npu;             /* Vela accelerator config, e.g. "ethos-u55-128" */
    const char* system_config;   /* Vela system config name (clock, memories), NULL: Vela's default */
    const char* memory_mode;     /* Vela memory mode name, NULL: Vela's default */
    const char* config_file;     /* a vela.ini-format file with more sections, or NULL */
    int secure;                  /* PROT after reset: 1 secure, 0 non-secure */
    int privileged;              /* 1 privileged, 0 user */
} ethosu_device_options;

typedef struct ethosu_device_host {
    void* user;
    /* The interrupt line: level 1 raised, 0 lowered. May be NULL. */
    void (*irq)(void* user, int level);
    /* The bus (both or neither; NULL: memory only through ethosu_device_map). Guest memory at an
     * NPU physical address; return 0, or anything else for a bus error (the NPU's
     * STATUS.bus_status). A command stream reads each 4 KiB page it touches once, when it first
     * touches it, and writes back only the bytes it changed, once it has run (before the access
     * that started it returns). Called from the device's worker threads, one call at a time; they
     * must not call into the device. The NPU's security and privilege are those of its PROT
     * register (ethosu_device_peek). */
    int (*mem_read)(void* user, uint64_t address, void* data, size_t size);
    int (*mem_write)(void* user, uint64_t address, const void* data, size_t size);
} ethosu_device_host;

/* Returns 0 and a device in *out, or -1 with the reason in error[0..error_size) (may be NULL). */
int ethosu_device_create(const ethosu_device_options* options, const ethosu_device_host* host, ethosu_device** out,
                         char* error, size_t error_size);
void ethosu_device_destroy(ethosu_device* device);

/* Maps size bytes of host memory at an NPU physical address. Returns 0, or -1 on overlap. */
int ethosu_device_map(ethosu_device* device, uint64_t address, void* host, size_t size);

/* Register accesses. Return 0, or -1 for a size other than 1, 2, 4, 8 or a misaligned offset
 * (which reads 0 and writes nothing); an offset at no register reads 0 and ignores writes. */
int ethosu_device_read(ethosu_device* device, uint32_t offset, unsigned size, uint64_t* value);
int ethosu_device_write(ethosu_device* device, uint32_t offset, unsigned size, uint64_t value);
uint32_t ethosu_device_peek(const ethosu_device* device, uint32_t offset);
/* The register window's size in bytes. */
size_t ethosu_device_register_bytes(const ethosu_device* device);

/* Power-on reset: registers to their reset values, a started stream abandoned; time goes on. */
void ethosu_device_reset(ethosu_device* device);

/* Time in NPU cycles since creation. */
uint64_t ethosu_device_now(const ethosu_device* device);
/* 1 and the cycles until the device next changes by itself (a stream's end) in *cycles, or 0 if
 * nothing is pending. */
int ethosu_device_next_event(const ethosu_device* device, uint64_t* cycles);
void ethosu_device_advance(ethosu_device* device, uint64_t cycles);
double ethosu_device_clock_hz(const ethosu_device* device);
int ethosu_device_irq_level(const ethosu_device* device);

/* Snapshots: ethosu_device_save writes the state into buffer when size suffices and returns its
 * size in bytes in *needed (call with a NULL buffer to ask); returns 0, or -1 when the buffer is
 * too small. ethosu_device_restore returns 0, or -1 with the reason in the last error. */
int ethosu_device_save(const ethosu_device* device, void* buffer, size_t size, size_t* needed);
int ethosu_device_restore(ethosu_device* device, const void* buffer, size_t size);

/* The last run's NPU cycles; the reason for the last failed call or, if none failed, for the last
 * fault ("" if neither). The text stays valid until the next ethosu_device_last_error. */
uint64_t ethosu_device_last_cycles(const ethosu_device* device);
const char* ethosu_device_last_error(const ethosu_device* device);

#ifdef __cplusplus
}
#endif

#endif /* ETHOSU_DEVICE_H */
