/*
 * Arm Ethos-U NPU hosted by an ethosu-emu device server, and the
 * Corstone-300 timing adapters in front of it.
 *
 * Copyright (c) 2025 The ethosu-emu authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * This program is free software; you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation; either version 2 of the License, or
 * (at your option) any later version.
 */

#ifndef HW_MISC_ETHOSU_NPU_H
#define HW_MISC_ETHOSU_NPU_H

#include "hw/sysbus.h"
#include "exec/memory.h"
#include "qemu/timer.h"
#include "qom/object.h"

/*
 * ethosu-npu: the NPU's register window is forwarded to a separate
 * process (the device server) over a UNIX socket; the server answers
 * with the interrupt level and the time of its next event, and asks
 * for guest memory, which this device reads and writes as a bus master
 * on the address space given by its "memory" link.
 *
 * Properties:
 *  "socket": path of the device server's UNIX socket (required)
 *  "npu":    NPU configuration name, e.g. "ethos-u55-128" (the default)
 *  "memory": link to the MemoryRegion the NPU's bus master sees
 *            (defaults to the system memory)
 * MMIO region 0: the register window, of the size the server reports.
 * IRQ 0: the NPU's interrupt (a level).
 */
#define TYPE_ETHOSU_NPU "ethosu-npu"
OBJECT_DECLARE_SIMPLE_TYPE(EthosUNPUState, ETHOSU_NPU)

struct EthosUNPUState {
    SysBusDevice parent_obj;

    MemoryRegion iomem;
    qemu_irq irq;
    QEMUTimer *timer;
    MemoryRegion *downstream;
    AddressSpace downstream_as;

    char *socket_path;
    char *npu;

    int fd;
    uint32_t window_bytes;
    uint32_t clock_hz;
    uint64_t last_now;
    bool in_request;
    bool irq_level;

    uint8_t *buf;
    size_t buf_size;
};

/*
 * ethosu-timing-adapter: the AXI timing adapter of Arm's Corstone-300
 * FPGA images, as seen by firmware: registers that read back what was
 * written and a VERSION register. No traffic shaping is modelled.
 * MMIO region 0: the register block (0x200 bytes).
 */
#define TYPE_ETHOSU_TIMING_ADAPTER "ethosu-timing-adapter"
OBJECT_DECLARE_SIMPLE_TYPE(EthosUTimingAdapterState, ETHOSU_TIMING_ADAPTER)

#define ETHOSU_TA_WINDOW_BYTES 0x200
#define ETHOSU_TA_NUM_REGS 16           /* 0x00 .. 0x3c */
#define ETHOSU_TA_VERSION_OFFSET 0x38
#define ETHOSU_TA_VERSION_VALUE 0x1117

struct EthosUTimingAdapterState {
    SysBusDevice parent_obj;

    MemoryRegion iomem;
    uint32_t regs[ETHOSU_TA_NUM_REGS];
};

#endif
