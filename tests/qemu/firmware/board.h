/*
 * SPDX-License-Identifier: Apache-2.0
 *
 * Board support for the project's bare-metal test firmware on QEMU's mps3-an547 (SSE-300,
 * Cortex-M55): UART0 output, semihosting exit, the NPU's interrupt (IRQ 56), start-up. A
 * firmware defines main() and npu_irq_handler(); reset_handler exits through semihosting with
 * main()'s status.
 */
#ifndef ETHOSU_TEST_BOARD_H
#define ETHOSU_TEST_BOARD_H

#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))
#define REG8(addr) (*(volatile uint8_t *)(uintptr_t)(addr))

/* Corstone-300 addresses (0x4... Non-secure, 0x5... its Secure alias). */
#define NPU_NS 0x48102000u
#define NPU_S 0x58102000u
#define NPU_IRQ 56

/* The NPU's registers the firmware drives (offsets from NPU_NS or NPU_S) and their bits. */
#define STATUS 0x004u
#define CMD 0x008u
#define RESET 0x00Cu
#define QBASE 0x010u
#define QSIZE 0x020u
#define REGIONCFG 0x03Cu
#define BASEP 0x080u
#define PMCR 0x180u
#define PMCNTENSET 0x184u
#define PMCCNTR 0x1A0u
#define STATUS_RUNNING 1u
#define STATUS_BUS_STATUS 4u
#define STATUS_PARSE_ERROR 16u
#define STATUS_FAULTS (STATUS_BUS_STATUS | STATUS_PARSE_ERROR | 128u | 256u) /* bus, parse, watchdog, ECC */
#define STATUS_END_REACHED 32u
#define CMD_RUN 1u
#define CMD_CLEAR_IRQ 2u

#define NVIC_ISER(n) (0xE000E100u + 4u * (n))
#define NVIC_ICER(n) (0xE000E180u + 4u * (n))
#define NVIC_ISPR(n) (0xE000E200u + 4u * (n))

void uart_init(void);
void puts_(const char *s);
void puthex(uint32_t v);
void putdec(uint32_t v);
/* "ok   what: got" or "FAIL what: got (want want)"; counts passes and failures. */
void check(const char *what, uint32_t got, uint32_t want);
uint32_t checks_failed(void);
void print_check_totals(void);
__attribute__((noreturn)) void semihosting_exit(uint32_t code);
/* Sleeps until *count reaches target (interrupts do the counting). */
void wait_for_count(volatile uint32_t *count, uint32_t target);

int main(void);
void npu_irq_handler(void);
/* HardFault: a firmware may define its own (the default exits with 100). */
void hard_fault_handler(void);

#endif
