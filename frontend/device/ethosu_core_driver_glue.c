/*
 * Glue that lets Arm's bare-metal Ethos-U core driver (ethos-u-core-driver, also in Zephyr's
 * hal_ethos_u) run unchanged on a host against ethosu-emu. Link this file with the driver's
 * sources and libethosu_device; it provides the driver's weak hooks:
 *
 *  - ethosu_address_remap: host pointers to NPU addresses through the mappings of the attached
 *    NPUs (map the model data holding the command stream, the arena and the fast scratch with
 *    ethosu_emu_map first); a pointer no mapping holds becomes an address the NPU faults on, and
 *    the fault names the pointer (the driver would otherwise assert on a 64-bit host address);
 *  - ethosu_semaphore_create/take/give/destroy: a counting semaphore, safe across threads, whose
 *    take is also the driver's wait on every attached NPU (ethosu_emu_sync): a started command
 *    stream ends there unless the NPU's own thread ended it already, and the driver's interrupt
 *    handler gives the semaphore;
 *  - nothing else: the default mutexes, cache maintenance and inference callbacks of the driver
 *    are right for a host program.
 *
 * ethosu_emu_attach_core_driver ties one emulated NPU to one driver instance: pass
 * ethosu_emu_register_block(emu) as the driver's base address to ethosu_init, then attach.
 * Several NPUs may be attached, each with its own driver instance.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ethosu_emu.h"

struct ethosu_driver;
void ethosu_irq_handler(struct ethosu_driver* drv);

enum { kMaxAttached = 16 };

struct attached_npu {
    ethosu_emu* emu;
    struct ethosu_driver* drv;
};

static struct attached_npu attached[kMaxAttached];
static pthread_mutex_t attached_lock = PTHREAD_MUTEX_INITIALIZER;

/* The NPU's interrupt: the driver's handler, then the reason for a fault on stderr, as the
 * driver itself only reports that one happened. */
static void call_driver_irq_handler(void* user) {
    const struct attached_npu* npu = (const struct attached_npu*)user;
    ethosu_irq_handler(npu->drv);
    const char* error = ethosu_emu_last_error(npu->emu);
    if (error[0]) fprintf(stderr, "ethosu-emu: NPU fault: %s\n", error);
}

int ethosu_emu_attach_core_driver(ethosu_emu* emu, struct ethosu_driver* drv) {
    if (!emu) return -1;
    pthread_mutex_lock(&attached_lock);
    struct attached_npu* slot = NULL;
    for (int i = 0; i < kMaxAttached && !slot; ++i)
        if (attached[i].emu == emu) slot = &attached[i];
    for (int i = 0; i < kMaxAttached && !slot && drv; ++i)
        if (!attached[i].emu) slot = &attached[i];
    if (slot) {
        slot->emu = drv ? emu : NULL;
        slot->drv = drv;
    }
    pthread_mutex_unlock(&attached_lock);
    if (!slot) return drv ? -1 : 0;
    ethosu_emu_run_concurrently(emu, drv != NULL);
    ethosu_emu_set_irq_handler(emu, drv ? call_driver_irq_handler : NULL, slot);
    return 0;
}

/* The attached NPUs, copied so that no lock is held while they run. */
static int attached_npus(ethosu_emu** out) {
    int n = 0;
    pthread_mutex_lock(&attached_lock);
    for (int i = 0; i < kMaxAttached; ++i)
        if (attached[i].emu) out[n++] = attached[i].emu;
    pthread_mutex_unlock(&attached_lock);
    return n;
}

ethosu_emu* ethosu_emu_attached_holding(const void* host) {
    ethosu_emu* npus[kMaxAttached];
    const int n = attached_npus(npus);
    for (int i = 0; i < n; ++i)
        if (ethosu_emu_npu_address(npus[i], host) != UINT64_MAX) return npus[i];
    return NULL;
}

/* NPUs that share memory see it at the same address (map it so): the first that maps the
 * pointer translates it. A null pointer is an unused base address and stays 0. */
uint64_t ethosu_address_remap(uint64_t address, int index) {
    const void* host = (const void*)(uintptr_t)address;
    if (!host) return 0;
    ethosu_emu* npus[kMaxAttached];
    const int n = attached_npus(npus);
    for (int i = 0; i < n; ++i) {
        const uint64_t npu = ethosu_emu_npu_address(npus[i], host);
        if (npu != UINT64_MAX) return npu;
    }
    uint64_t unmapped = address;
    for (int i = 0; i < n; ++i) unmapped = ethosu_emu_unmapped_address(npus[i], host, index);
    return unmapped;
}

struct glue_semaphore {
    pthread_mutex_t lock;
    unsigned count;
};

void* ethosu_semaphore_create(void) {
    struct glue_semaphore* s = (struct glue_semaphore*)calloc(1, sizeof(struct glue_semaphore));
    if (s) pthread_mutex_init(&s->lock, NULL);
    return s;
}

void ethosu_semaphore_destroy(void* sem) {
    struct glue_semaphore* s = (struct glue_semaphore*)sem;
    if (!s) return;
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static int try_take(struct glue_semaphore* s) {
    pthread_mutex_lock(&s->lock);
    const int taken = s->count > 0;
    if (taken) s->count--;
    pthread_mutex_unlock(&s->lock);
    return taken;
}

/* Waiting is where the NPUs work: each ends its started stream and interrupts. After
 * that nothing is left to run, so still no token means the wait would never end: a timeout. */
int ethosu_semaphore_take(void* sem, uint64_t timeout) {
    struct glue_semaphore* s = (struct glue_semaphore*)sem;
    (void)timeout;
    if (try_take(s)) return 0;
    ethosu_emu* npus[kMaxAttached];
    const int n = attached_npus(npus);
    for (int i = 0; i < n; ++i) ethosu_emu_sync(npus[i]);
    return try_take(s) ? 0 : -1;
}

int ethosu_semaphore_give(void* sem) {
    struct glue_semaphore* s = (struct glue_semaphore*)sem;
    pthread_mutex_lock(&s->lock);
    s->count++;
    pthread_mutex_unlock(&s->lock);
    return 0;
}
