/*
 * ethosu-emu C API: an emulated Ethos-U NPU behind its register interface.
 *
 * A device is one NPU configuration (Vela's name, e.g. "ethos-u55-128") with Vela's system
 * configuration and memory mode for timing. Host memory is mapped into the NPU's address space;
 * drivers then program it through 32-bit registers at the hardware offsets, with the hardware's
 * semantics (ID/CONFIG as Vela and the core driver expect them, STATUS, CMD, RESET, PROT,
 * QBASE/QSIZE/QREAD, REGIONCFG, BASEP, the PMU block).
 *
 * Two ways to access the registers, both exact: every access takes effect in the order it is made,
 * with the hardware's effects (a soft reset, a write of the value a register already holds):
 *  - calls: ethosu_emu_read32 / ethosu_emu_write32. Writing CMD.transition_to_running_state
 *    starts the NPU; the command stream runs and ends at the next ethosu_emu_run_until_idle (the
 *    point where a driver waits for its interrupt), which calls the IRQ handler, or when a driver
 *    polling STATUS reads it a second time (the first read shows it running).
 *  - memory-mapped: ethosu_emu_register_block returns the register window for a driver that
 *    accesses registers as volatile memory (Arm's core driver): every load and store to it traps
 *    and is a call as above (Linux on x86-64 and AArch64). ethosu_emu_sync is a driver's wait, as
 *    ethosu_emu_run_until_idle; ethosu_emu_run_concurrently makes a thread of the device's own end
 *    each stream as soon as it starts and call the interrupt handler from that thread, as a
 *    hardware interrupt would preempt.
 *
 * A soft reset (RESET) leaves the PMU's configuration and counts as they are. For a system
 * simulator hosting the NPU (its own clock, the interrupt as a level, snapshots), see
 * ethosu_device.h.
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

/* Maps size bytes of host memory at npu_address. Returns 0, or -1 if it overlaps a mapping or
 * the page at 0xFFFFF000, which stays unmapped (see ethosu_emu_unmapped_address). */
int ethosu_emu_map(ethosu_emu* emu, uint64_t npu_address, void* host, size_t size);
/* The NPU address of a host pointer inside a mapping (for a driver's address remap hook), or
 * UINT64_MAX if it is not mapped. */
uint64_t ethosu_emu_npu_address(const ethosu_emu* emu, const void* host);
/* For a driver about to hand the NPU a host pointer no mapping holds (index: its base address,
 * -1 for the command stream): an address in the unmapped page. A run that uses it ends with a
 * bus error whose message (ethosu_emu_last_error) names the pointer. */
uint64_t ethosu_emu_unmapped_address(ethosu_emu* emu, const void* host, int index);

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
/* 1: a thread of the device observes the block continuously (see above); 0: only
 * ethosu_emu_sync does (the default). */
void ethosu_emu_run_concurrently(ethosu_emu* emu, int on);

/* Offloaded copies: copies size bytes from src to dst (host memory, mapped or not) with the NPU's
 * DMA, between runs. The copy is timed on the device's memory system with both sides in the
 * memory of the tensor arena (Vela's memory mode: SRAM with Shared_Sram, DRAM with
 * Dedicated_Sram), counted by the PMU (AXI beats, cycles), kept in the trace and reported as the
 * last run (ethosu_emu_last_cycles). Returns 0 and the
 * copy's NPU cycles in *cycles (may be NULL), or -1 (while a command stream runs, or with a NULL
 * pointer) with the reason in ethosu_emu_last_error. */
int ethosu_emu_dma_copy(ethosu_emu* emu, void* dst, const void* src, size_t size, uint64_t* cycles);
typedef struct ethosu_emu_dma_totals {
    uint64_t copies; /* ethosu_emu_dma_copy calls that copied */
    uint64_t bytes;  /* bytes copied */
    uint64_t cycles; /* NPU cycles they took */
} ethosu_emu_dma_totals;
ethosu_emu_dma_totals ethosu_emu_dma_copies(const ethosu_emu* emu);

/* For Arm's core driver (ethosu_core_driver_glue.c, library ethosu_core_driver_glue): ties the
 * NPU to a driver instance whose ethosu_irq_handler the interrupt calls, and makes the NPU run
 * concurrently (ethosu_invoke_async then completes while the program polls ethosu_wait(drv,
 * false)). Several NPUs, each with its driver, may be attached at once; a NULL driver detaches.
 * Returns 0, or -1 if 16 NPUs are attached already. */
struct ethosu_driver;
int ethosu_emu_attach_core_driver(ethosu_emu* emu, struct ethosu_driver* drv);
/* The attached NPU one of whose mappings holds the host pointer, or NULL. */
ethosu_emu* ethosu_emu_attached_holding(const void* host);

/* Traces: after ethosu_emu_trace(emu, 1) every run and DMA copy is kept (0 forgets them);
 * ethosu_emu_write_trace writes them, one after the other, as a Chrome/Perfetto trace (the
 * format of `ethosu-emu run --trace`: a track per unit, DMA copies on the DMA track, a bandwidth
 * counter per memory). Returns 0, or -1 with the reason in ethosu_emu_last_error. */
void ethosu_emu_trace(ethosu_emu* emu, int on);
int ethosu_emu_write_trace(ethosu_emu* emu, const char* path);

/* The last run: its NPU cycles, and why it faulted (empty string if it did not). */
uint64_t ethosu_emu_last_cycles(const ethosu_emu* emu);
const char* ethosu_emu_last_error(const ethosu_emu* emu);

#ifdef __cplusplus
}
#endif

#endif /* ETHOSU_EMU_H */
