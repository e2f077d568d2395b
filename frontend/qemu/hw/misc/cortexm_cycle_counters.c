/*
 * The Cortex-M55's CPU cycle counters as firmware reads them, for
 * profiling code (CMSIS's DWT->CYCCNT and ARM_PMU_* functions):
 *
 * DWT (0xe0001000):
 *   0x000 CTRL    CYCCNTENA (bit 0) read/write; the ID bits say: no
 *                 comparators, no trace or profiling counters, CYCCNT
 *   0x004 CYCCNT  32 bits, read/write
 * PMU (0xe0003000):
 *   0x000 + 4n EVCNTR[n]   16 bits, n < 8
 *   0x07c CCNTR            32 bits
 *   0x400 + 4n EVTYPER[n]  the event (bits 15:0)
 *   0xc00 CNTENSET, 0xc20 CNTENCLR   counters 0..7 and the cycle counter (31)
 *   0xc40 INTENSET, 0xc60 INTENCLR   kept; no interrupt is raised
 *   0xc80 OVSCLR,   0xcc0 OVSSET     kept; counters do not set them
 *   0xca0 SWINC    increments the enabled SW_INCR counters
 *   0xe00 TYPE     8 counters of 16 bits and a cycle counter
 *   0xe04 CTRL     E (bit 0); P (bit 1) resets the event counters and
 *                  C (bit 2) the cycle counter
 *   0xfbc DEVARCH, 0xfcc DEVTYPE     the PMU's identification
 * Other offsets read as zero and ignore writes; accesses are 32-bit and
 * privileged (an unprivileged access is a bus error, as elsewhere in the
 * PPB).
 *
 * CYCCNT counts while DWT CTRL.CYCCNTENA is set, a PMU counter while
 * PMU CTRL.E and its CNTENSET bit are. DEMCR.TRCENA, which gates both on
 * the hardware, is not modelled: QEMU has no DEMCR. Events counted:
 * SW_INCR (0x0000), INST_RETIRED (0x0008) and CPU_CYCLES (0x0011); the
 * others (CHAIN included) count nothing.
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

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/host-utils.h"
#include "qemu/timer.h"
#include "sysemu/cpu-timers.h"
#include "hw/qdev-properties.h"
#include "hw/misc/cortexm_cycle_counters.h"

#define DWT_CTRL 0x000
#define DWT_CYCCNT 0x004
#define DWT_CTRL_CYCCNTENA 1u
/* NOTRCPKT, NOEXTTRIG, NOPRFCNT; NUMCOMP 0, NOCYCCNT 0 */
#define DWT_CTRL_ID ((1u << 27) | (1u << 26) | (1u << 24))

#define PMU_EVCNTR 0x000
#define PMU_CCNTR 0x07c
#define PMU_EVTYPER 0x400
#define PMU_CNTENSET 0xc00
#define PMU_CNTENCLR 0xc20
#define PMU_INTENSET 0xc40
#define PMU_INTENCLR 0xc60
#define PMU_OVSCLR 0xc80
#define PMU_SWINC 0xca0
#define PMU_OVSSET 0xcc0
#define PMU_TYPE 0xe00
#define PMU_CTRL 0xe04
#define PMU_DEVARCH 0xfbc
#define PMU_DEVTYPE 0xfcc

#define PMU_CTRL_E 1u
#define PMU_CTRL_P 2u
#define PMU_CTRL_C 4u
#define PMU_CYCLE_COUNTER_BIT (1u << 31)
#define PMU_COUNTER_BITS \
    (PMU_CYCLE_COUNTER_BIT | ((1u << CORTEXM_PMU_NUM_EVENT_COUNTERS) - 1))
/* N = 8 counters, SIZE = 16 bits - 1, CC: a cycle counter */
#define PMU_TYPE_VALUE \
    (CORTEXM_PMU_NUM_EVENT_COUNTERS | (15u << 8) | (1u << 14))
#define PMU_DEVARCH_VALUE 0x47700a16u
#define PMU_DEVTYPE_VALUE 0x16u
#define PMU_EVCNTR_MASK 0xffffu
#define PMU_EVTYPER_MASK 0xffffu

#define PMU_EVENT_SW_INCR 0x0000
#define PMU_EVENT_INST_RETIRED 0x0008
#define PMU_EVENT_CPU_CYCLES 0x0011

typedef enum CounterSource {
    SOURCE_NONE,
    SOURCE_CYCLES,
    SOURCE_INSTRUCTIONS,
} CounterSource;

static uint64_t cycles_now(CortexMCycleCountersState *s)
{
    int64_t ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (icount_enabled()) {
        return ns / icount_to_ns(1);
    }
    return muldiv64(ns, s->cpu_hz, NANOSECONDS_PER_SECOND);
}

static uint64_t source_now(CortexMCycleCountersState *s, CounterSource src)
{
    switch (src) {
    case SOURCE_CYCLES:
        return cycles_now(s);
    case SOURCE_INSTRUCTIONS:
        return icount_enabled() ? icount_get_raw() : cycles_now(s);
    default:
        return 0;
    }
}

static CounterSource event_source(uint32_t event)
{
    switch (event) {
    case PMU_EVENT_INST_RETIRED:
        return SOURCE_INSTRUCTIONS;
    case PMU_EVENT_CPU_CYCLES:
        return SOURCE_CYCLES;
    default:
        return SOURCE_NONE;
    }
}

static uint64_t counter_value(const CortexMCounter *c, uint64_t now)
{
    return c->base + (c->running ? now - c->start : 0);
}

static void counter_write(CortexMCounter *c, uint64_t now, uint64_t value)
{
    c->base = value;
    c->start = now;
}

static void counter_set_running(CortexMCounter *c, uint64_t now, bool run)
{
    if (c->running != run) {
        counter_write(c, now, counter_value(c, now));
        c->running = run;
    }
}

static CounterSource evcntr_source(CortexMCycleCountersState *s, int n)
{
    return event_source(s->pmu_evtyper[n]);
}

/* Starts and stops every counter as its enables now say. */
static void update_running(CortexMCycleCountersState *s)
{
    bool pmu_on = s->pmu_ctrl & PMU_CTRL_E;
    int n;

    counter_set_running(&s->dwt_cyccnt, cycles_now(s),
                        s->dwt_ctrl & DWT_CTRL_CYCCNTENA);
    counter_set_running(&s->pmu_ccntr, cycles_now(s),
                        pmu_on && (s->pmu_cnten & PMU_CYCLE_COUNTER_BIT));
    for (n = 0; n < CORTEXM_PMU_NUM_EVENT_COUNTERS; n++) {
        CounterSource src = evcntr_source(s, n);

        counter_set_running(&s->pmu_evcntr[n], source_now(s, src),
                            pmu_on && (s->pmu_cnten & (1u << n)) &&
                            src != SOURCE_NONE);
    }
}

static MemTxResult dwt_read(void *opaque, hwaddr offset, uint64_t *data,
                            unsigned size, MemTxAttrs attrs)
{
    CortexMCycleCountersState *s = opaque;

    if (attrs.user) {
        return MEMTX_ERROR;
    }
    switch (offset) {
    case DWT_CTRL:
        *data = DWT_CTRL_ID | (s->dwt_ctrl & DWT_CTRL_CYCCNTENA);
        break;
    case DWT_CYCCNT:
        *data = (uint32_t)counter_value(&s->dwt_cyccnt, cycles_now(s));
        break;
    default:
        qemu_log_mask(LOG_UNIMP, "DWT: read of unmodelled offset 0x%"
                      HWADDR_PRIx "\n", offset);
        *data = 0;
        break;
    }
    return MEMTX_OK;
}

static MemTxResult dwt_write(void *opaque, hwaddr offset, uint64_t value,
                             unsigned size, MemTxAttrs attrs)
{
    CortexMCycleCountersState *s = opaque;

    if (attrs.user) {
        return MEMTX_ERROR;
    }
    switch (offset) {
    case DWT_CTRL:
        s->dwt_ctrl = value & DWT_CTRL_CYCCNTENA;
        update_running(s);
        break;
    case DWT_CYCCNT:
        counter_write(&s->dwt_cyccnt, cycles_now(s), (uint32_t)value);
        break;
    default:
        qemu_log_mask(LOG_UNIMP, "DWT: write to unmodelled offset 0x%"
                      HWADDR_PRIx "\n", offset);
        break;
    }
    return MEMTX_OK;
}

static bool pmu_counter_offset(hwaddr offset, hwaddr base, int *n)
{
    if (offset >= base && offset < base + 4 * CORTEXM_PMU_NUM_EVENT_COUNTERS) {
        *n = (offset - base) / 4;
        return true;
    }
    return false;
}

static MemTxResult pmu_read(void *opaque, hwaddr offset, uint64_t *data,
                            unsigned size, MemTxAttrs attrs)
{
    CortexMCycleCountersState *s = opaque;
    int n;

    if (attrs.user) {
        return MEMTX_ERROR;
    }
    if (pmu_counter_offset(offset, PMU_EVCNTR, &n)) {
        *data = counter_value(&s->pmu_evcntr[n],
                              source_now(s, evcntr_source(s, n))) &
                PMU_EVCNTR_MASK;
        return MEMTX_OK;
    }
    if (pmu_counter_offset(offset, PMU_EVTYPER, &n)) {
        *data = s->pmu_evtyper[n];
        return MEMTX_OK;
    }
    switch (offset) {
    case PMU_CCNTR:
        *data = (uint32_t)counter_value(&s->pmu_ccntr, cycles_now(s));
        break;
    case PMU_CNTENSET:
    case PMU_CNTENCLR:
        *data = s->pmu_cnten;
        break;
    case PMU_INTENSET:
    case PMU_INTENCLR:
        *data = s->pmu_inten;
        break;
    case PMU_OVSSET:
    case PMU_OVSCLR:
        *data = s->pmu_ovs;
        break;
    case PMU_TYPE:
        *data = PMU_TYPE_VALUE;
        break;
    case PMU_CTRL:
        *data = s->pmu_ctrl;
        break;
    case PMU_DEVARCH:
        *data = PMU_DEVARCH_VALUE;
        break;
    case PMU_DEVTYPE:
        *data = PMU_DEVTYPE_VALUE;
        break;
    default:
        qemu_log_mask(LOG_UNIMP, "PMU: read of unmodelled offset 0x%"
                      HWADDR_PRIx "\n", offset);
        *data = 0;
        break;
    }
    return MEMTX_OK;
}

static void pmu_write_ctrl(CortexMCycleCountersState *s, uint32_t value)
{
    int n;

    if (value & PMU_CTRL_P) {
        for (n = 0; n < CORTEXM_PMU_NUM_EVENT_COUNTERS; n++) {
            counter_write(&s->pmu_evcntr[n],
                          source_now(s, evcntr_source(s, n)), 0);
        }
    }
    if (value & PMU_CTRL_C) {
        counter_write(&s->pmu_ccntr, cycles_now(s), 0);
    }
    s->pmu_ctrl = value & PMU_CTRL_E;
    update_running(s);
}

static void pmu_software_increment(CortexMCycleCountersState *s,
                                   uint32_t value)
{
    int n;

    if (!(s->pmu_ctrl & PMU_CTRL_E)) {
        return;
    }
    for (n = 0; n < CORTEXM_PMU_NUM_EVENT_COUNTERS; n++) {
        if ((value & s->pmu_cnten & (1u << n)) &&
            s->pmu_evtyper[n] == PMU_EVENT_SW_INCR) {
            s->pmu_evcntr[n].base = (s->pmu_evcntr[n].base + 1) &
                                    PMU_EVCNTR_MASK;
        }
    }
}

static MemTxResult pmu_write(void *opaque, hwaddr offset, uint64_t value,
                             unsigned size, MemTxAttrs attrs)
{
    CortexMCycleCountersState *s = opaque;
    int n;

    if (attrs.user) {
        return MEMTX_ERROR;
    }
    if (pmu_counter_offset(offset, PMU_EVCNTR, &n)) {
        counter_write(&s->pmu_evcntr[n], source_now(s, evcntr_source(s, n)),
                      value & PMU_EVCNTR_MASK);
        return MEMTX_OK;
    }
    if (pmu_counter_offset(offset, PMU_EVTYPER, &n)) {
        /* Stopped on its old clock, restarted on the new event's. */
        counter_set_running(&s->pmu_evcntr[n],
                            source_now(s, evcntr_source(s, n)), false);
        s->pmu_evtyper[n] = value & PMU_EVTYPER_MASK;
        update_running(s);
        return MEMTX_OK;
    }
    switch (offset) {
    case PMU_CCNTR:
        counter_write(&s->pmu_ccntr, cycles_now(s), (uint32_t)value);
        break;
    case PMU_CNTENSET:
        s->pmu_cnten |= value & PMU_COUNTER_BITS;
        update_running(s);
        break;
    case PMU_CNTENCLR:
        s->pmu_cnten &= ~value;
        update_running(s);
        break;
    case PMU_INTENSET:
        s->pmu_inten |= value & PMU_COUNTER_BITS;
        break;
    case PMU_INTENCLR:
        s->pmu_inten &= ~value;
        break;
    case PMU_OVSSET:
        s->pmu_ovs |= value & PMU_COUNTER_BITS;
        break;
    case PMU_OVSCLR:
        s->pmu_ovs &= ~value;
        break;
    case PMU_SWINC:
        pmu_software_increment(s, value);
        break;
    case PMU_CTRL:
        pmu_write_ctrl(s, value);
        break;
    default:
        qemu_log_mask(LOG_UNIMP, "PMU: write to unmodelled offset 0x%"
                      HWADDR_PRIx "\n", offset);
        break;
    }
    return MEMTX_OK;
}

static const MemoryRegionOps dwt_ops = {
    .read_with_attrs = dwt_read,
    .write_with_attrs = dwt_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid.min_access_size = 4,
    .valid.max_access_size = 4,
};

static const MemoryRegionOps pmu_ops = {
    .read_with_attrs = pmu_read,
    .write_with_attrs = pmu_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid.min_access_size = 4,
    .valid.max_access_size = 4,
};

static void cortexm_cycle_counters_reset(DeviceState *dev)
{
    CortexMCycleCountersState *s = CORTEXM_CYCLE_COUNTERS(dev);

    s->dwt_ctrl = 0;
    s->pmu_ctrl = 0;
    s->pmu_cnten = 0;
    s->pmu_inten = 0;
    s->pmu_ovs = 0;
    memset(s->pmu_evtyper, 0, sizeof(s->pmu_evtyper));
    memset(&s->dwt_cyccnt, 0, sizeof(s->dwt_cyccnt));
    memset(&s->pmu_ccntr, 0, sizeof(s->pmu_ccntr));
    memset(s->pmu_evcntr, 0, sizeof(s->pmu_evcntr));
}

static void cortexm_cycle_counters_init(Object *obj)
{
    CortexMCycleCountersState *s = CORTEXM_CYCLE_COUNTERS(obj);

    memory_region_init_io(&s->dwt_iomem, obj, &dwt_ops, s, "dwt", 0x1000);
    memory_region_init_io(&s->pmu_iomem, obj, &pmu_ops, s, "pmu", 0x1000);
    sysbus_init_mmio(SYS_BUS_DEVICE(obj), &s->dwt_iomem);
    sysbus_init_mmio(SYS_BUS_DEVICE(obj), &s->pmu_iomem);
}

static Property cortexm_cycle_counters_properties[] = {
    DEFINE_PROP_UINT32("cpu-hz", CortexMCycleCountersState, cpu_hz, 0),
    DEFINE_PROP_END_OF_LIST(),
};

static void cortexm_cycle_counters_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->reset = cortexm_cycle_counters_reset;
    device_class_set_props(dc, cortexm_cycle_counters_properties);
}

static const TypeInfo cortexm_cycle_counters_info = {
    .name = TYPE_CORTEXM_CYCLE_COUNTERS,
    .parent = TYPE_SYS_BUS_DEVICE,
    .instance_size = sizeof(CortexMCycleCountersState),
    .instance_init = cortexm_cycle_counters_init,
    .class_init = cortexm_cycle_counters_class_init,
};

static void cortexm_cycle_counters_register_types(void)
{
    type_register_static(&cortexm_cycle_counters_info);
}

type_init(cortexm_cycle_counters_register_types)
