/*
 * SPDX-License-Identifier: Apache-2.0
 *
 * A CPU-only image: prints a line and exits through semihosting with
 * EXIT_STATUS (default 0), or, built with -DHANG, never ends (for the
 * launcher's timeout).
 */
#include "board.h"

#ifndef EXIT_STATUS
#define EXIT_STATUS 0
#endif

void npu_irq_handler(void)
{
}

int main(void)
{
    uart_init();
    puts_("cpu-only firmware\n");
#ifdef HANG
    for (;;) {
    }
#endif
    return EXIT_STATUS;
}
