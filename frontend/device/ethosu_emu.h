/*
 * ethosu-emu C API: an emulated Ethos-U NPU behind its register interface.
 *
 * A device is one NPU configuration (Vela's name, e.g. "ethos-u55-128") with Vela's system
 * configuration and memory mode for timing. Host memory is mapped into the NPU's address space;
 * drivers then program it through 32-bit registers at the hardware offsets, with the hardware's
 * semantics (ID/CONFIG as Vela and the core driver expect them, STATUS, CMD, RESET, PROT,
 * QBASE/QSIZE/QREAD, REGIONCFG, BASEP, the PMU block).
 *
 * Two ways to access the registers:
 *  - calls: ethosu_emu_read32 / ethosu_emu_write32. Writing CMD.transition_to_running_state
 *    starts the NPU; the command stream runs at the next ethosu_emu_run_until_idle (the point
 *    where a driver waits for its interrupt), which raises the IRQ through the handler.
 *  - memory-mapped: ethosu_emu_register_block returns a block with the hardware layout for a
 *    driver that accesses registers as volatile memory. Writes to it are observed at
 *    ethosu_emu_sync: RESET first, CMD last, then a started stream runs and the IRQ handler is
 *    called; writes the handler makes (clear_irq) are observed before ethosu_emu_sync returns.
 *    Reads always see the state as of the last sync (STATUS.reset_status reads 0 at once).
 *
 * Every function is safe to call with a NULL device (it fails or does nothing).
 */
#ifndef ETHOSU_EMU_H
#define ETHOSU_EMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ethosu_emu ethosu_emu;

typedef struct ethosu_emu_options {
    const char* npu;            /* Vela accelerator config, e.g. "ethos-u55-128" */
    const char* system_config;  /* Vela system config name, NULL for Vela's default */
    const char* memory_mode;    /* Vela memory mode name, NULL for Vela's default */
    int secure;                 /* PROT after reset: 1 secure, 0 non-secure */
    int privileged;             /* 1 privileged, 0 user */
} ethosu_emu_options;

/* Returns 0 and a device in *out, or -1 with a message in *error (static storage, may be NULL). */
int ethosu_emu_create(const ethosu_emu_options* options, ethosu_emu** out, const char** error);
void ethosu_emu_destroy(ethosu_emu* emu);

/* Maps size bytes of host memory at npu_address. Returns 0, or -1 if it overlaps a mapping. */
int ethosu_emu_map(ethosu_emu* emu, uint64_t npu_address, void* host, size_t size);
/* The NPU address of a host pointer inside a mapping (for a driver's address remap hook), or
 * UINT64_MAX if it is not mapped. */
uint64_t ethosu_emu_npu_address(const ethosu_emu* emu, const void* host);

uint32_t ethosu_emu_read32(ethosu_emu* emu, uint32_t offset);
void ethosu_emu_write32(ethosu_emu* emu, uint32_t offset, uint32_t value);

typedef void (*ethosu_emu_irq_handler)(void* user);
void ethosu_emu_set_irq_handler(ethosu_emu* emu, ethosu_emu_irq_handler handler, void* user);

/* Runs a started command stream to its end (or fault) and raises the interrupt.
 * Returns 1 if a stream ran, 0 if the NPU was idle. */
int ethosu_emu_run_until_idle(ethosu_emu* emu);

/* Memory-mapped mode. */
volatile uint32_t* ethosu_emu_register_block(ethosu_emu* emu);
size_t ethosu_emu_register_block_size(const ethosu_emu* emu); /* bytes */
void ethosu_emu_sync(ethosu_emu* emu);

/* For Arm's core driver (ethosu_core_driver_glue.c): ties the NPU to a driver instance whose
 * ethosu_irq_handler the interrupt calls. */
struct ethosu_driver;
void ethosu_emu_attach_core_driver(ethosu_emu* emu, struct ethosu_driver* drv);

/* The last run: its NPU cycles, and why it faulted (empty string if it did not). */
uint64_t ethosu_emu_last_cycles(const ethosu_emu* emu);
const char* ethosu_emu_last_error(const ethosu_emu* emu);

#ifdef __cplusplus
}
#endif

#endif /* ETHOSU_EMU_H */
