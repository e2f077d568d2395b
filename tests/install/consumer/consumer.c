/* Uses the installed C API: creates an NPU, reads its ID and CONFIG, maps a buffer, copies into
 * it with the NPU's DMA (through arm_ethos_io_memcpy when built with ethosu_emu::executorch_io)
 * and checks the bytes, the cost and the remap. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ethosu_emu.h"

struct ethosu_driver;
uint64_t ethosu_address_remap(uint64_t address, int index);
void arm_ethos_io_memcpy(void* dst, const void* src, size_t size);

static int irqs;
/* Arm's core driver defines this; a program without the driver stands in for it. */
void ethosu_irq_handler(struct ethosu_driver* drv) {
    (void)drv;
    ++irqs;
}

int main(void) {
    ethosu_emu_options o = {"ethos-u55-128", NULL, NULL, 1, 1};
    ethosu_emu* emu;
    const char* error;
    if (ethosu_emu_create(&o, &emu, &error) != 0) {
        fprintf(stderr, "create: %s\n", error);
        return 1;
    }
    static uint8_t sram[4096], host[256];
    for (int i = 0; i < 256; ++i) host[i] = (uint8_t)(i * 3);
    if (ethosu_emu_map(emu, 0x20000000, sram, sizeof sram) != 0) return 2;
    if (ethosu_emu_attach_core_driver(emu, (struct ethosu_driver*)&irqs) != 0) return 3;
#ifdef WITH_EXECUTORCH_IO
    arm_ethos_io_memcpy(sram + 64, host, sizeof host);
#else
    if (ethosu_emu_dma_copy(emu, sram + 64, host, sizeof host, NULL) != 0) return 5;
#endif
    const ethosu_emu_dma_totals dma = ethosu_emu_dma_copies(emu);
    const uint64_t remapped = ethosu_address_remap((uint64_t)(uintptr_t)(sram + 64), 1);
    printf("ID 0x%08x CONFIG 0x%08x, DMA %llu copy %llu bytes %llu cycles, remap 0x%llx\n",
           ethosu_emu_read32(emu, 0), ethosu_emu_read32(emu, 0x28), (unsigned long long)dma.copies,
           (unsigned long long)dma.bytes, (unsigned long long)dma.cycles, (unsigned long long)remapped);
    const int ok = memcmp(sram + 64, host, sizeof host) == 0 && dma.copies == 1 && dma.cycles > 0 &&
                   remapped == 0x20000040 && ethosu_emu_read32(emu, 0x28) != 0;
    ethosu_emu_attach_core_driver(emu, NULL);
    ethosu_emu_destroy(emu);
    return ok ? 0 : 4;
}
