/*
 * SPDX-License-Identifier: Apache-2.0
 *
 * Bare-metal test of QEMU's ethosu-npu device on mps3-an547, against the
 * fake device server tests/qemu/fake_server.py (its register file is the
 * fake's, not an Ethos-U's). Prints over UART0 and exits through
 * semihosting with the number of failed checks as QEMU's exit status.
 */
#include "board.h"

#define TA0_NS 0x48103000u
#define TA1_NS 0x48103200u
#define TA0_S 0x58103000u
#define TA_MAXR 0x00u
#define TA_VERSION 0x38u


/* The fake server's registers (see fake_server.py). */
#define F_ID 0x000u
#define F_STATUS 0x004u
#define F_CMD 0x008u
#define F_CONFIG 0x00Cu
#define F_SCRATCH 0x010u
#define F_SRC 0x014u
#define F_DST 0x018u
#define F_CYCLES 0x01Cu
#define F_PROT 0x020u
#define F_START_NOW 0x024u
#define F_END_NOW 0x028u
#define F_RESULT 0x02Cu
#define F_RESETS 0x030u
#define F_BADADDR 0x034u
#define F_COMPLETED_BY 0x038u

#define F_ID_VALUE 0xE7055055u
#define F_CONFIG_VALUE 0x00000080u
#define F_STATUS_RUNNING 1u
#define F_STATUS_IRQ 2u
#define F_STATUS_BUS_ERROR 4u
#define F_CMD_RUN 1u
#define F_CMD_CLEAR_IRQ 2u
#define MSG_READ 2u
#define MSG_SYNC 4u

/* Buffers in the SSE-300's SRAM (over the board's "sram 2" there). */
#define SRC_BUF 0x21000000u
#define DST_BUF 0x21000800u
#define DST_BUF_SECURE_ALIAS 0x31000800u
#define WORDS 16

static volatile uint32_t irq_count;
static volatile uint32_t irq_status;

void npu_irq_handler(void)
{
    irq_status = REG32(NPU_NS + F_STATUS);
    REG32(NPU_NS + F_CMD) = F_CMD_CLEAR_IRQ;
    irq_count++;
}

static void start_run(uint32_t cycles, uint32_t prot)
{
    REG32(NPU_NS + F_SRC) = SRC_BUF;
    REG32(NPU_NS + F_DST) = DST_BUF_SECURE_ALIAS;
    REG32(NPU_NS + F_CYCLES) = cycles;
    REG32(NPU_NS + F_PROT) = prot;
    REG32(NPU_NS + F_BADADDR) = 0xE000ED00u;   /* the CPU's SCB: not the NPU's */
    REG32(NPU_NS + F_CMD) = F_CMD_RUN;
}

int main(void)
{
    uint32_t sum = 0;
    uint32_t ok;

    uart_init();
    puts_("ethosu-npu QEMU test firmware\n");

    /* Registers: ID and CONFIG, both aliases, a scratch register. */
    check("NPU ID", REG32(NPU_NS + F_ID), F_ID_VALUE);
    check("NPU ID (secure alias)", REG32(NPU_S + F_ID), F_ID_VALUE);
    check("NPU CONFIG", REG32(NPU_NS + F_CONFIG), F_CONFIG_VALUE);
    check("NPU resets seen", REG32(NPU_NS + F_RESETS), 1);
    REG32(NPU_NS + F_SCRATCH) = 0x12345678u;
    check("scratch", REG32(NPU_NS + F_SCRATCH), 0x12345678u);
    REG8(NPU_S + F_SCRATCH + 1) = 0xABu;
    check("scratch after a byte write", REG32(NPU_NS + F_SCRATCH),
          0x1234AB78u);
    check("scratch byte read", REG8(NPU_NS + F_SCRATCH + 3), 0x12u);

    /* Timing adapters. */
    check("TA0 VERSION", REG32(TA0_NS + TA_VERSION), 0x1117u);
    check("TA1 VERSION", REG32(TA1_NS + TA_VERSION), 0x1117u);
    check("TA0 VERSION (secure alias)", REG32(TA0_S + TA_VERSION), 0x1117u);
    REG32(TA1_NS + TA_MAXR) = 4;
    REG32(TA1_NS + TA_VERSION) = 0;
    check("TA1 MAXR", REG32(TA1_NS + TA_MAXR), 4);
    check("TA1 VERSION after a write", REG32(TA1_NS + TA_VERSION), 0x1117u);
    check("TA0 MAXR untouched", REG32(TA0_NS + TA_MAXR), 0);

    /* A run: the NPU reads SRC, and after CYCLES writes DST and interrupts. */
    for (uint32_t i = 0; i < WORDS; i++) {
        uint32_t v = 0x01010101u * i + 0x100u;
        REG32(SRC_BUF + 4 * i) = v;
        REG32(DST_BUF + 4 * i) = 0;
        sum += v;
    }
    REG32(NVIC_ISER(NPU_IRQ / 32)) = 1u << (NPU_IRQ % 32);
    start_run(20000, 0);
    check("running after CMD run",
          REG32(NPU_NS + F_STATUS) & F_STATUS_RUNNING, F_STATUS_RUNNING);
    wait_for_count(&irq_count, 1);
    check("interrupts taken", irq_count, 1);
    check("STATUS in the handler", irq_status,
          F_STATUS_IRQ | F_STATUS_BUS_ERROR);
    check("interrupt cleared", REG32(NPU_NS + F_STATUS) & F_STATUS_IRQ, 0);
    check("NVIC pending cleared",
          REG32(NVIC_ISPR(NPU_IRQ / 32)) & (1u << (NPU_IRQ % 32)), 0);
    check("RESULT (sum the NPU read)", REG32(NPU_NS + F_RESULT), sum);
    ok = 1;
    for (uint32_t i = 0; i < WORDS; i++) {
        if (REG32(DST_BUF + 4 * i) != (REG32(SRC_BUF + 4 * i) ^ 0xA5A5A5A5u)) {
            ok = 0;
        }
    }
    check("DST written by the NPU", ok, 1);
    check("completed by", REG32(NPU_NS + F_COMPLETED_BY), MSG_SYNC);
    puts_("run cycles: ");
    putdec(REG32(NPU_NS + F_END_NOW) - REG32(NPU_NS + F_START_NOW));
    puts_("\n");
    check("run took its cycles, not fewer",
          REG32(NPU_NS + F_END_NOW) - REG32(NPU_NS + F_START_NOW) >= 20000, 1);

    /* A polled run: it ends on a register read once its time has passed. */
    REG32(NVIC_ICER(NPU_IRQ / 32)) = 1u << (NPU_IRQ % 32);
    start_run(5000, 0);
    while (REG32(NPU_NS + F_STATUS) & F_STATUS_RUNNING) {
    }
    /* Ended by the read that reached its due cycle, or by the timer's SYNC. */
    {
        uint32_t by = REG32(NPU_NS + F_COMPLETED_BY);
        check("polled run completed by a READ or a SYNC",
              by == MSG_READ || by == MSG_SYNC, 1);
    }
    check("polled run raised the interrupt",
          REG32(NPU_NS + F_STATUS) & F_STATUS_IRQ, F_STATUS_IRQ);
    check("NVIC pending while disabled",
          (REG32(NVIC_ISPR(NPU_IRQ / 32)) >> (NPU_IRQ % 32)) & 1u, 1);
    REG32(NPU_NS + F_CMD) = F_CMD_CLEAR_IRQ;

    /* Non-secure attributes: the SSE-300's MPC hides its Secure SRAM. */
    start_run(100, 1);
    while (REG32(NPU_NS + F_STATUS) & F_STATUS_RUNNING) {
    }
    check("non-secure run read zeros (MPC RAZ)", REG32(NPU_NS + F_RESULT), 0);
    REG32(NPU_NS + F_CMD) = F_CMD_CLEAR_IRQ;

    print_check_totals();
    return (int)checks_failed();
}

