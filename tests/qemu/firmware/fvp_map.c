/*
 * SPDX-License-Identifier: Apache-2.0
 *
 * What mps3-an547 with an NPU takes from the Corstone-300 FVP, checked
 * from the firmware's side against the fake server (fake_server.py):
 * the DDR's Secure aliases (for the CPU and for the NPU's bus master),
 * the TCM sizes given by itcm-size and dtcm-size (ITCM_BYTES and
 * DTCM_BYTES here: the last word works, the next one is a bus error),
 * and the CPU's cycle counters (DWT CYCCNT, the PMU's CCNTR and event
 * counters) against a loop of known instruction count. Prints the
 * counters it reads, so that two runs can be compared.
 */
#include "board.h"

#ifndef ITCM_BYTES
#error "build with -DITCM_BYTES=... (the machine's itcm-size)"
#endif
#ifndef DTCM_BYTES
#error "build with -DDTCM_BYTES=... (the machine's dtcm-size)"
#endif

/* The fake server's registers (see fake_server.py). */
#define F_STATUS 0x004u
#define F_CMD 0x008u
#define F_SRC 0x014u
#define F_DST 0x018u
#define F_CYCLES 0x01Cu
#define F_PROT 0x020u
#define F_RESULT 0x02Cu
#define F_BADADDR 0x034u
#define F_STATUS_RUNNING 1u
#define F_CMD_RUN 1u
#define F_CMD_CLEAR_IRQ 2u

#define DDR_NS 0x60000000u
#define DDR_S 0x70000000u
#define DDR_BLOCK 0x10000000u
#define WORDS 16

#define DWT_CTRL 0xE0001000u
#define DWT_CYCCNT 0xE0001004u
#define DWT_CTRL_CYCCNTENA 1u
#define DWT_CTRL_NOCYCCNT (1u << 25)

#define PMU_EVCNTR(n) (0xE0003000u + 4u * (n))
#define PMU_CCNTR 0xE000307Cu
#define PMU_EVTYPER(n) (0xE0003400u + 4u * (n))
#define PMU_CNTENSET 0xE0003C00u
#define PMU_CNTENCLR 0xE0003C20u
#define PMU_SWINC 0xE0003CA0u
#define PMU_CTRL 0xE0003E04u
#define PMU_CTRL_E 1u
#define PMU_CTRL_P 2u
#define PMU_CTRL_C 4u
#define PMU_CCNTR_BIT (1u << 31)
#define EVENT_SW_INCR 0x0000u
#define EVENT_INST_RETIRED 0x0008u
#define EVENT_CPU_CYCLES 0x0011u

/* The loop below: MOVW, then (SUBS, BNE) LOOPS times, then the second read. */
#define LOOPS 1000u
#define LOOP_INSTRUCTIONS (2u * LOOPS + 2u)

static volatile uint32_t irq_count;
static volatile uint32_t faults;

void npu_irq_handler(void)
{
    REG32(NPU_NS + F_CMD) = F_CMD_CLEAR_IRQ;
    irq_count++;
}

/* Counts the fault and resumes after the faulting 32-bit load (see probe). */
__attribute__((naked)) void hard_fault_handler(void)
{
    __asm__ volatile(
        "tst lr, #4\n\t"
        "ite eq\n\t"
        "mrseq r0, msp\n\t"
        "mrsne r0, psp\n\t"
        "ldr r1, [r0, #24]\n\t"
        "adds r1, r1, #4\n\t"
        "str r1, [r0, #24]\n\t"
        "ldr r0, =faults\n\t"
        "ldr r1, [r0]\n\t"
        "adds r1, r1, #1\n\t"
        "str r1, [r0]\n\t"
        "bx lr\n\t"
        ".ltorg");
}

/* 1 when reading the word at addr is a bus error. */
static uint32_t read_faults(uint32_t addr)
{
    uint32_t before = faults;

    __asm__ volatile("ldr.w r2, [%0]" : : "r"(addr) : "r2", "memory");
    return faults - before;
}

/*
 * Two reads of the counter at addr around a loop of LOOP_INSTRUCTIONS
 * instructions (the second read included); returns the difference.
 */
static uint32_t count_loop(uint32_t addr)
{
    uint32_t first, second, n;

    __asm__ volatile(
        "ldr %0, [%3]\n\t"
        "movw %2, %4\n"
        "1:\n\t"
        "subs %2, %2, #1\n\t"
        "bne 1b\n\t"
        "ldr %1, [%3]\n\t"
        : "=&r"(first), "=&r"(second), "=&r"(n)
        : "r"(addr), "i"(LOOPS)
        : "cc", "memory");
    return second - first;
}

static void print_value(const char *what, uint32_t v)
{
    puts_(what);
    puts_(": ");
    putdec(v);
    puts_("\n");
}

static void check_ddr_aliases(void)
{
    uint32_t ok = 1;

    /* Each 256 MiB block at 0x6/0x8/0xa/0xc... is again at 0x7/0x9/0xb/0xd... */
    for (uint32_t block = 0; block < 4; block++) {
        uint32_t ns = DDR_NS + 2u * block * DDR_BLOCK + 0x123450u;
        uint32_t s = ns + DDR_BLOCK;

        REG32(s) = 0xC0DE0000u + block;
        if (REG32(ns) != 0xC0DE0000u + block) {
            ok = 0;
        }
        REG32(ns + DDR_BLOCK - 0x123450u - 4u) = 0xE0D00000u + block;
        if (REG32(s + DDR_BLOCK - 0x123450u - 4u) != 0xE0D00000u + block) {
            ok = 0;
        }
    }
    check("DDR: 0x7/0x9/0xb/0xd... are the bytes at 0x6/0x8/0xa/0xc...", ok, 1);
    REG32(DDR_NS + 0x200000u) = 0x11111111u;
    REG32(DDR_NS + 2u * DDR_BLOCK + 0x200000u) = 0x22222222u;
    check("DDR: the blocks at 0x6... and 0x8... are distinct",
          REG32(DDR_S + 0x200000u), 0x11111111u);
}

static void check_npu_sees_aliases(void)
{
    const uint32_t src = 0x00100000u, dst = 0x00101000u;
    uint32_t sum = 0, ok = 1;

    /* The CPU writes through the Secure alias, the NPU reads the Non-secure one. */
    for (uint32_t i = 0; i < WORDS; i++) {
        REG32(DDR_S + src + 4u * i) = 0x01020304u * (i + 1u);
        REG32(DDR_NS + dst + 4u * i) = 0;
        sum += 0x01020304u * (i + 1u);
    }
    REG32(NVIC_ISER(NPU_IRQ / 32)) = 1u << (NPU_IRQ % 32);
    REG32(NPU_NS + F_SRC) = DDR_NS + src;
    REG32(NPU_NS + F_DST) = DDR_S + dst;   /* and writes the Secure one */
    REG32(NPU_NS + F_CYCLES) = 1000;
    REG32(NPU_NS + F_PROT) = 0;
    REG32(NPU_NS + F_BADADDR) = 0;
    REG32(NPU_NS + F_CMD) = F_CMD_RUN;
    wait_for_count(&irq_count, 1);
    check("NPU read at 0x6... what the CPU wrote at 0x7...",
          REG32(NPU_NS + F_RESULT), sum);
    for (uint32_t i = 0; i < WORDS; i++) {
        if (REG32(DDR_NS + dst + 4u * i) !=
            ((0x01020304u * (i + 1u)) ^ 0xA5A5A5A5u)) {
            ok = 0;
        }
    }
    check("CPU read at 0x6... what the NPU wrote at 0x7...", ok, 1);
}

static void check_tcm_sizes(void)
{
    check("ITCM: last word", read_faults(ITCM_BYTES - 4u), 0);
    check("ITCM: the word past its end faults", read_faults(ITCM_BYTES), 1);
    check("DTCM: last word", read_faults(0x20000000u + DTCM_BYTES - 4u), 0);
    check("DTCM: the word past its end faults",
          read_faults(0x20000000u + DTCM_BYTES), 1);
    check("ITCM Secure alias: the word past its end faults",
          read_faults(0x10000000u + ITCM_BYTES), 1);
}

static void check_dwt(void)
{
    uint32_t a, b, loop;

    check("DWT CTRL: CYCCNT implemented, disabled at reset",
          REG32(DWT_CTRL) & (DWT_CTRL_NOCYCCNT | DWT_CTRL_CYCCNTENA), 0);
    a = REG32(DWT_CYCCNT);
    check("DWT CYCCNT does not count while disabled",
          count_loop(DWT_CYCCNT), 0);
    check("DWT CYCCNT at reset", a, 0);
    REG32(DWT_CYCCNT) = 0;
    REG32(DWT_CTRL) |= DWT_CTRL_CYCCNTENA;
    loop = count_loop(DWT_CYCCNT);
    print_value("DWT CYCCNT over the loop", loop);
    check("DWT CYCCNT: one cycle per instruction", loop, LOOP_INSTRUCTIONS);
    REG32(DWT_CTRL) &= ~DWT_CTRL_CYCCNTENA;
    a = REG32(DWT_CYCCNT);
    b = REG32(DWT_CYCCNT);
    check("DWT CYCCNT stops when disabled", b - a, 0);
    REG32(DWT_CYCCNT) = 5;
    check("DWT CYCCNT written", REG32(DWT_CYCCNT), 5);
}

static void check_pmu(void)
{
    uint32_t a, b, cycles, instructions;

    check("PMU CCNTR at reset", REG32(PMU_CCNTR), 0);
    REG32(PMU_EVTYPER(0)) = EVENT_INST_RETIRED;
    REG32(PMU_EVTYPER(1)) = EVENT_CPU_CYCLES;
    REG32(PMU_EVTYPER(2)) = EVENT_SW_INCR;
    REG32(PMU_CNTENSET) = PMU_CCNTR_BIT | 7u;
    check("PMU counts nothing until CTRL.E", count_loop(PMU_CCNTR), 0);
    REG32(PMU_CTRL) = PMU_CTRL_E | PMU_CTRL_C | PMU_CTRL_P;
    cycles = count_loop(PMU_CCNTR);
    print_value("PMU CCNTR over the loop", cycles);
    check("PMU CCNTR: one cycle per instruction", cycles, LOOP_INSTRUCTIONS);
    check("PMU INST_RETIRED over the loop", count_loop(PMU_EVCNTR(0)),
          LOOP_INSTRUCTIONS);
    check("PMU CPU_CYCLES over the loop", count_loop(PMU_EVCNTR(1)),
          LOOP_INSTRUCTIONS);
    for (int i = 0; i < 3; i++) {
        REG32(PMU_SWINC) = 1u << 2;
    }
    check("PMU SW_INCR counter after three SWINC writes",
          REG32(PMU_EVCNTR(2)), 3);

    /* Asleep in WFI while the NPU runs: cycles pass, instructions do not. */
    a = REG32(PMU_CCNTR);
    b = REG32(PMU_EVCNTR(0));
    REG32(NPU_NS + F_SRC) = DDR_NS;
    REG32(NPU_NS + F_CYCLES) = 100000;
    REG32(NPU_NS + F_CMD) = F_CMD_RUN;
    wait_for_count(&irq_count, 2);
    cycles = REG32(PMU_CCNTR) - a;
    instructions = (REG32(PMU_EVCNTR(0)) - b) & 0xFFFFu;
    print_value("PMU CCNTR over an NPU run in WFI", cycles);
    print_value("PMU INST_RETIRED over it", instructions);
    check("cycles count the time asleep, instructions do not",
          cycles > 100000u && instructions < 1000u, 1);

    REG32(PMU_CNTENCLR) = PMU_CCNTR_BIT;
    a = REG32(PMU_CCNTR);
    b = REG32(PMU_CCNTR);
    check("PMU CCNTR stops when its CNTEN bit is cleared", b - a, 0);
    REG32(PMU_CTRL) = PMU_CTRL_E | PMU_CTRL_C;
    check("PMU CTRL.C resets CCNTR", REG32(PMU_CCNTR), 0);
    REG32(PMU_CTRL) = 0;
    a = REG32(PMU_EVCNTR(0));
    b = REG32(PMU_EVCNTR(0));
    check("PMU event counters stop when CTRL.E is cleared", b - a, 0);
}

int main(void)
{
    uart_init();
    puts_("FVP map and cycle counters test firmware\n");
    check_ddr_aliases();
    check_npu_sees_aliases();
    check_tcm_sizes();
    check_dwt();
    check_pmu();
    print_check_totals();
    return (int)checks_failed();
}
