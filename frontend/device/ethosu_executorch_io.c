/*
 * A strong arm_ethos_io_memcpy for ExecuTorch's Arm Ethos-U backend (backends/arm/runtime: its
 * weak default, in a translation unit of its own, is a memcpy; firmware overrides it to copy the
 * inputs into and the outputs out of the NPU's scratch with a DMA). Here the copy goes through
 * the attached NPU whose mappings hold one side (ethosu_emu_dma_copy): it is timed on the
 * emulated memory system and counted by the PMU as DMA traffic. A copy between host buffers no
 * attached NPU maps, or one the NPU cannot make now, is a plain memcpy.
 *
 * Link it as an object (library ethosu_executorch_io), so that it takes the place of the weak
 * default, with ethosu_core_driver_glue.
 */
#include <string.h>

#include "ethosu_emu.h"

void arm_ethos_io_memcpy(void* dst, const void* src, size_t size) {
    ethosu_emu* npu = ethosu_emu_attached_holding(dst);
    if (!npu) npu = ethosu_emu_attached_holding(src);
    if (!npu || ethosu_emu_dma_copy(npu, dst, src, size, NULL) != 0) memcpy(dst, src, size);
}
