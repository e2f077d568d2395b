/*
 * SPDX-License-Identifier: Apache-2.0
 *
 * Board support for the test firmware on mps3-an547 (board.h).
 */
#include "board.h"

/* AN547 UART0: CMSDK APB UART. */
#define UART0 0x49303000u
#define UART_DATA 0x00u
#define UART_STATE 0x04u
#define UART_CTRL 0x08u
#define UART_BAUDDIV 0x10u
#define SCB_CPACR 0xE000ED88u

static uint32_t passed, failed;

void uart_init(void)
{
    REG32(UART0 + UART_BAUDDIV) = 16;
    REG32(UART0 + UART_CTRL) = 1;   /* TX enable */
}

static void uart_putc(char c)
{
    while (REG32(UART0 + UART_STATE) & 1u) {
    }
    REG32(UART0 + UART_DATA) = (uint8_t)c;
}

void puts_(const char *s)
{
    while (*s) {
        uart_putc(*s++);
    }
}

void puthex(uint32_t v)
{
    puts_("0x");
    for (int i = 28; i >= 0; i -= 4) {
        uart_putc("0123456789abcdef"[(v >> i) & 15u]);
    }
}

void putdec(uint32_t v)
{
    char buf[11];
    int n = 0;

    do {
        buf[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n) {
        uart_putc(buf[--n]);
    }
}

void check(const char *what, uint32_t got, uint32_t want)
{
    puts_(got == want ? "ok   " : "FAIL ");
    puts_(what);
    puts_(": ");
    puthex(got);
    if (got != want) {
        puts_(" (want ");
        puthex(want);
        puts_(")");
        failed++;
    } else {
        passed++;
    }
    puts_("\n");
}

uint32_t checks_failed(void)
{
    return failed;
}

void print_check_totals(void)
{
    puts_("checks: ");
    putdec(passed);
    puts_(" passed, ");
    putdec(failed);
    puts_(" failed\n");
}

void semihosting_exit(uint32_t code)
{
    /* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit with a status. */
    volatile uint32_t block[2] = { 0x20026u, code };
    register uint32_t r0 __asm__("r0") = 0x20u;
    register uint32_t r1 __asm__("r1") = (uint32_t)(uintptr_t)block;

    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    for (;;) {
    }
}

void wait_for_count(volatile uint32_t *count, uint32_t target)
{
    __asm__ volatile("cpsid i" ::: "memory");
    while (*count < target) {
        __asm__ volatile("wfi\n\tcpsie i\n\tisb\n\tcpsid i" ::: "memory");
    }
    __asm__ volatile("cpsie i" ::: "memory");
}

/* Start-up: vector table, reset handler. */
extern uint32_t __bss_start[], __bss_end[], __stack_top[];
void reset_handler(void);
static void default_handler(void)
{
    puts_("unexpected exception\n");
    semihosting_exit(100);
}
void hard_fault_handler(void) __attribute__((weak, alias("default_handler")));

void reset_handler(void)
{
    for (uint32_t *p = __bss_start; p < __bss_end; p++) {
        *p = 0;
    }
    REG32(SCB_CPACR) |= 0xFu << 20;   /* CP10, CP11: FPU and MVE */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    semihosting_exit((uint32_t)main());
}

#define VECTORS (16 + 96)
__attribute__((section(".vectors"), used))
static void (*const vectors[VECTORS])(void) = {
    [0] = (void (*)(void))__stack_top,
    [1] = reset_handler,
    [2 ... 15] = default_handler,
    [3] = hard_fault_handler,
    [16 ... VECTORS - 1] = default_handler,
    [16 + NPU_IRQ] = npu_irq_handler,
};
