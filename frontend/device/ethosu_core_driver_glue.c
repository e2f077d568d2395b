/*
 * Glue that lets Arm's bare-metal Ethos-U core driver (ethos-u-core-driver, also in Zephyr's
 * hal_ethos_u) run unchanged on a host against ethosu-emu. Link this file with the driver's
 * sources and libethosu_device; it provides the driver's weak hooks:
 *
 *  - ethosu_address_remap: host pointers to NPU addresses (the buffers must be mapped with
 *    ethosu_emu_map first: the model data holding the command stream, the arena, ...);
 *  - ethosu_semaphore_create/take/give/destroy: a counting semaphore whose take is the point
 *    where the emulator observes the register block (ethosu_emu_sync): the started command
 *    stream runs there and the driver's interrupt handler is called, which gives the semaphore;
 *  - nothing else: the default mutexes, cache maintenance and inference callbacks of the driver
 *    are right for a single-threaded host program.
 *
 * ethosu_emu_attach_core_driver ties one emulated NPU to one driver instance: pass
 * ethosu_emu_register_block(emu) as the driver's base address to ethosu_init, then attach.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ethosu_emu.h"

struct ethosu_driver;
void ethosu_irq_handler(struct ethosu_driver* drv);

/* One attached NPU: a host program drives one emulated NPU per process through this glue. */
static ethosu_emu* attached_emu;
static struct ethosu_driver* attached_driver;

static void call_driver_irq_handler(void* user) { ethosu_irq_handler((struct ethosu_driver*)user); }

void ethosu_emu_attach_core_driver(ethosu_emu* emu, struct ethosu_driver* drv) {
    attached_emu = emu;
    attached_driver = drv;
    ethosu_emu_set_irq_handler(emu, drv ? call_driver_irq_handler : NULL, drv);
}

uint64_t ethosu_address_remap(uint64_t address, int index) {
    (void)index;
    const uint64_t npu = ethosu_emu_npu_address(attached_emu, (const void*)(uintptr_t)address);
    return npu == UINT64_MAX ? address : npu;
}

struct glue_semaphore {
    unsigned count;
};

void* ethosu_semaphore_create(void) { return calloc(1, sizeof(struct glue_semaphore)); }

void ethosu_semaphore_destroy(void* sem) { free(sem); }

/* Waiting is where the NPU works: observe the register block, run, interrupt. Nothing left to
 * run and still no token means the wait would never end: report a timeout. */
int ethosu_semaphore_take(void* sem, uint64_t timeout) {
    struct glue_semaphore* s = (struct glue_semaphore*)sem;
    (void)timeout;
    if (s->count == 0 && attached_emu) ethosu_emu_sync(attached_emu);
    if (s->count == 0) return -1;
    s->count--;
    return 0;
}

int ethosu_semaphore_give(void* sem) {
    ((struct glue_semaphore*)sem)->count++;
    return 0;
}
