/*
 * The Cortex-M55's CPU cycle counters as firmware reads them: the DWT's
 * CYCCNT and the Armv8.1-M PMU's cycle and event counters.
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

#ifndef HW_MISC_CORTEXM_CYCLE_COUNTERS_H
#define HW_MISC_CORTEXM_CYCLE_COUNTERS_H

#include "hw/sysbus.h"
#include "qom/object.h"

/*
 * cortexm-cycle-counters: QEMU has no pipeline model, so a "cycle" is
 * defined from its virtual clock. Under -icount it is one instruction
 * period (2^shift ns): one per instruction executed, and as many as fit
 * in the time the CPU sleeps (WFI/WFE) while the clock is warped to the
 * next timer. Without -icount it is a period of "cpu-hz" on the virtual
 * clock (the host's time: not deterministic). The PMU's INST_RETIRED
 * event counts instructions only (icount's own count; without -icount,
 * cycles).
 *
 * Properties:
 *  "cpu-hz": the CPU clock, for runs without -icount
 * MMIO region 0: the DWT (0x1000 bytes, at 0xe0001000 in the PPB).
 * MMIO region 1: the PMU (0x1000 bytes, at 0xe0003000 in the PPB).
 */
#define TYPE_CORTEXM_CYCLE_COUNTERS "cortexm-cycle-counters"
OBJECT_DECLARE_SIMPLE_TYPE(CortexMCycleCountersState, CORTEXM_CYCLE_COUNTERS)

#define CORTEXM_PMU_NUM_EVENT_COUNTERS 8

/* A counter that runs from a clock ("now") when enabled. */
typedef struct CortexMCounter {
    uint64_t base;      /* the value when it last started or was written */
    uint64_t start;     /* "now" at that moment */
    bool running;
} CortexMCounter;

struct CortexMCycleCountersState {
    SysBusDevice parent_obj;

    MemoryRegion dwt_iomem;
    MemoryRegion pmu_iomem;
    uint32_t cpu_hz;

    uint32_t dwt_ctrl;
    CortexMCounter dwt_cyccnt;

    uint32_t pmu_ctrl;
    uint32_t pmu_cnten;
    uint32_t pmu_inten;
    uint32_t pmu_ovs;
    uint32_t pmu_evtyper[CORTEXM_PMU_NUM_EVENT_COUNTERS];
    CortexMCounter pmu_ccntr;
    CortexMCounter pmu_evcntr[CORTEXM_PMU_NUM_EVENT_COUNTERS];
};

#endif
