/*
 * AXI timing adapter of Arm's Corstone-300 FPGA images (in front of the
 * Ethos-U NPU's two AXI masters).
 *
 * Firmware (Arm's ethos-u-core-platform timing adapter driver) programs
 * these registers to shape the NPU's memory traffic and checks VERSION.
 * QEMU does not model memory timing, so this device only keeps what
 * firmware writes, for it to read back:
 *
 *   0x00 MAXR      0x04 MAXW      0x08 MAXRW     0x0c RLATENCY
 *   0x10 WLATENCY  0x14 PULSE_ON  0x18 PULSE_OFF 0x1c BWCAP
 *   0x20 PERFCTRL  0x24 PERFCNT   0x28 MODE      0x2c (reserved)
 *   0x30 HISTBIN   0x34 HISTCNT   0x38 VERSION (read-only, 0x1117)
 *   0x3c (reserved)
 *
 * Every register but VERSION reads back the last value written (reset 0);
 * PERFCNT and HISTCNT count nothing, since no traffic passes here. Offsets
 * past 0x3c read as zero and ignore writes. Accesses are 32-bit.
 *
 * Copyright (c) 2025 ethosu-emu contributors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * This program is free software; you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation; either version 2 of the License, or
 * (at your option) any later version.
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "hw/sysbus.h"
#include "migration/vmstate.h"
#include "hw/misc/ethosu_npu.h"

static uint64_t ethosu_ta_read(void *opaque, hwaddr offset, unsigned size)
{
    EthosUTimingAdapterState *s = opaque;

    if (offset == ETHOSU_TA_VERSION_OFFSET) {
        return ETHOSU_TA_VERSION_VALUE;
    }
    if (offset < ETHOSU_TA_NUM_REGS * 4) {
        return s->regs[offset / 4];
    }
    qemu_log_mask(LOG_GUEST_ERROR, "ethosu-timing-adapter: read at 0x%"
                  HWADDR_PRIx " past the registers\n", offset);
    return 0;
}

static void ethosu_ta_write(void *opaque, hwaddr offset, uint64_t value,
                            unsigned size)
{
    EthosUTimingAdapterState *s = opaque;

    if (offset == ETHOSU_TA_VERSION_OFFSET) {
        qemu_log_mask(LOG_GUEST_ERROR, "ethosu-timing-adapter: write to the "
                      "read-only VERSION register\n");
        return;
    }
    if (offset < ETHOSU_TA_NUM_REGS * 4) {
        s->regs[offset / 4] = value;
        return;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "ethosu-timing-adapter: write at 0x%"
                  HWADDR_PRIx " past the registers\n", offset);
}

static const MemoryRegionOps ethosu_ta_ops = {
    .read = ethosu_ta_read,
    .write = ethosu_ta_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid.min_access_size = 4,
    .valid.max_access_size = 4,
    .impl.min_access_size = 4,
    .impl.max_access_size = 4,
};

static void ethosu_ta_reset(DeviceState *dev)
{
    EthosUTimingAdapterState *s = ETHOSU_TIMING_ADAPTER(dev);

    memset(s->regs, 0, sizeof(s->regs));
}

static void ethosu_ta_init(Object *obj)
{
    EthosUTimingAdapterState *s = ETHOSU_TIMING_ADAPTER(obj);

    memory_region_init_io(&s->iomem, obj, &ethosu_ta_ops, s,
                          TYPE_ETHOSU_TIMING_ADAPTER, ETHOSU_TA_WINDOW_BYTES);
    sysbus_init_mmio(SYS_BUS_DEVICE(obj), &s->iomem);
}

static const VMStateDescription vmstate_ethosu_ta = {
    .name = TYPE_ETHOSU_TIMING_ADAPTER,
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_UINT32_ARRAY(regs, EthosUTimingAdapterState,
                             ETHOSU_TA_NUM_REGS),
        VMSTATE_END_OF_LIST()
    },
};

static void ethosu_ta_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "Corstone-300 AXI timing adapter (registers only)";
    dc->reset = ethosu_ta_reset;
    dc->vmsd = &vmstate_ethosu_ta;
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo ethosu_ta_info = {
    .name = TYPE_ETHOSU_TIMING_ADAPTER,
    .parent = TYPE_SYS_BUS_DEVICE,
    .instance_size = sizeof(EthosUTimingAdapterState),
    .instance_init = ethosu_ta_init,
    .class_init = ethosu_ta_class_init,
};

static void ethosu_ta_register_types(void)
{
    type_register_static(&ethosu_ta_info);
}

type_init(ethosu_ta_register_types)
