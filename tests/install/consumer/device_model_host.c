/* A complete host for the device model API (ethosu_device.h), as a system simulator would be: its
 * own RAM served to the NPU as a bus, its own clock, the interrupt line it watches. It copies 256
 * bytes with the NPU's DMA through registers only, lets the NPU's time pass, and checks STATUS,
 * the interrupt and the bytes; then snapshots the device mid-stream and ends the stream on a
 * second device from the snapshot. Built and run against the installed package. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ethosu_device.h"

enum { STATUS = 0x004, CMD = 0x008, QBASE = 0x010, QSIZE = 0x020, BASEP = 0x080 };
enum { RAM_BASE = 0x60000000, RAM_BYTES = 0x10000, STREAM = 0x0, SRC = 0x1000, DST = 0x2000 };

/* The host: its RAM, its clock and the interrupt line. */
struct host {
    uint8_t ram[RAM_BYTES];
    uint64_t now;
    int irq_level;
};

static int in_ram(uint64_t address, size_t size) {
    return address >= RAM_BASE && address - RAM_BASE + size <= RAM_BYTES;
}
static int mem_read(void* user, uint64_t address, void* data, size_t size) {
    struct host* h = user;
    if (!in_ram(address, size)) return 1; /* a bus error */
    memcpy(data, h->ram + (address - RAM_BASE), size);
    return 0;
}
static int mem_write(void* user, uint64_t address, const void* data, size_t size) {
    struct host* h = user;
    if (!in_ram(address, size)) return 1;
    memcpy(h->ram + (address - RAM_BASE), data, size);
    return 0;
}
static void irq(void* user, int level) { ((struct host*)user)->irq_level = level; }

static ethosu_device* create(struct host* h) {
    const ethosu_device_options options = {ETHOSU_DEVICE_API_VERSION, "ethos-u55-128", NULL, NULL, NULL, 1, 1};
    const ethosu_device_host callbacks = {h, irq, mem_read, mem_write};
    ethosu_device* device = NULL;
    char error[256];
    if (ethosu_device_create(&options, &callbacks, &device, error, sizeof error) != 0) {
        fprintf(stderr, "create: %s\n", error);
        exit(1);
    }
    return device;
}

/* Lets the host's time run until the NPU's next event. */
static void run_to_next_event(ethosu_device* device, struct host* h) {
    uint64_t cycles = 0;
    while (ethosu_device_next_event(device, &cycles)) {
        h->now += cycles;
        ethosu_device_advance(device, cycles);
    }
}

int main(void) {
    /* A 1D DMA of 256 bytes from region 0 to region 1, then STOP (ethosu-emu disasm shows it). */
    static const uint32_t stream[] = {0x00000130, 0x00010131, 0x00004030, 0x00000000, 0x00004031, 0x00000000,
                                      0x00004032, 0x00000100, 0x00000010, 0x00000011, 0x00010000};
    static struct host h, h2;
    memcpy(h.ram + STREAM, stream, sizeof stream);
    for (int i = 0; i < 256; ++i) h.ram[SRC + i] = (uint8_t)(i * 7);

    ethosu_device* npu = create(&h);
    ethosu_device_write(npu, QBASE, 8, RAM_BASE + STREAM);
    ethosu_device_write(npu, QSIZE, 4, sizeof stream);
    ethosu_device_write(npu, BASEP, 8, RAM_BASE + SRC);
    ethosu_device_write(npu, BASEP + 8, 8, RAM_BASE + DST);
    ethosu_device_write(npu, CMD, 4, 1); /* transition_to_running_state */

    uint64_t status = 0, cycles = 0;
    ethosu_device_read(npu, STATUS, 4, &status);
    const int running = (status & 1) && !h.irq_level && ethosu_device_next_event(npu, &cycles);

    /* A snapshot half way, restored onto a second device that serves the same RAM. */
    ethosu_device_advance(npu, cycles / 2);
    size_t bytes = 0;
    ethosu_device_save(npu, NULL, 0, &bytes);
    void* state = malloc(bytes);
    ethosu_device_save(npu, state, bytes, &bytes);
    memcpy(&h2, &h, sizeof h);
    ethosu_device* copy = create(&h2);
    const int restored = ethosu_device_restore(copy, state, bytes) == 0;
    free(state);

    run_to_next_event(npu, &h);
    run_to_next_event(copy, &h2);
    ethosu_device_read(npu, STATUS, 4, &status);
    const int done = (status & 2) && (status & 32) && h.irq_level && h2.irq_level;
    const int copied = memcmp(h.ram + SRC, h.ram + DST, 256) == 0;
    printf("DMA of 256 bytes: %llu NPU cycles (%.0f Hz), STATUS 0x%llx, interrupt %d, snapshot %s\n",
           (unsigned long long)ethosu_device_last_cycles(npu), ethosu_device_clock_hz(npu),
           (unsigned long long)status, h.irq_level, restored ? "restored" : "refused");
    ethosu_device_write(npu, CMD, 4, 2); /* clear_irq lowers the line */
    const int cleared = !h.irq_level;
    ethosu_device_destroy(copy);
    ethosu_device_destroy(npu);
    return running && restored && done && copied && cleared ? 0 : 1;
}
