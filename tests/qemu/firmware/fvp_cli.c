/*
 * SPDX-License-Identifier: Apache-2.0
 *
 * Firmware for the FVP command-line test (run_fvp_test.sh): prints what the command line set up
 * as the firmware sees it, then ends as the FVP-targeted firmware it stands for does.
 *   - the NPU's CONFIG register: its product and MACs per cycle (ethosu.num_macs);
 *   - with CMDLINE: the semihosting command line, SYS_GET_CMDLINE (cpu0.semihosting-cmd_line);
 *   - with DATA_ADDRESS: whether the bytes there are a --data file of the test's
 *     ("ethosu-emu data\n", then 0..255);
 *   - with FILE_IO: reads i0.bin and writes out-0.bin through semihosting (relative paths:
 *     cpu0.semihosting-cwd), as ExecuTorch's semihosting runner does;
 *   - END_EOT: prints EOT and spins (the C library's exit of Arm's core-platform retarget, which
 *     TensorFlow Lite Micro's tests use with uart0.shutdown_on_eot);
 *   - END_TAG: prints EXITTHESIM and spins (uart0.shutdown_tag);
 *   - END_HANG: spins (--timelimit); otherwise exits through semihosting with EXIT_STATUS.
 * What follows the EOT or the tag must not reach the output: the run ends there.
 */
#include "board.h"

#ifndef EXIT_STATUS
#define EXIT_STATUS 0
#endif

#define NPU_CONFIG 0x28u

#define SYS_OPEN 0x01u
#define SYS_CLOSE 0x02u
#define SYS_WRITE 0x05u
#define SYS_READ 0x06u
#define SYS_FLEN 0x0Cu
#define SYS_GET_CMDLINE 0x15u

#if defined(CMDLINE) || defined(FILE_IO)
static uint32_t semihost(uint32_t operation, volatile uint32_t *block)
{
    register uint32_t r0 __asm__("r0") = operation;
    register uint32_t r1 __asm__("r1") = (uint32_t)(uintptr_t)block;

    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}
#endif

void npu_irq_handler(void)
{
}

static void print_npu(void)
{
    const uint32_t config = REG32(NPU_NS + NPU_CONFIG);

    puts_("npu product ");
    putdec(config >> 28);
    puts_(" macs ");
    putdec(1u << (config & 15u));
    puts_("\n");
}

#ifdef CMDLINE
static void print_command_line(void)
{
    static char line[512];
    volatile uint32_t block[2] = { (uint32_t)(uintptr_t)line, sizeof line };

    if (semihost(SYS_GET_CMDLINE, block) != 0) {
        puts_("cmdline: error\n");
        return;
    }
    puts_("cmdline: [");
    puts_(line);
    puts_("]\n");
}
#endif

#ifdef DATA_ADDRESS
static void check_data(void)
{
    static const char magic[] = "ethosu-emu data\n";
    const volatile uint8_t *data = (const volatile uint8_t *)(uintptr_t)DATA_ADDRESS;
    const uint32_t header = sizeof magic - 1;

    for (uint32_t i = 0; i < header + 256; i++) {
        const uint8_t want = i < header ? (uint8_t)magic[i] : (uint8_t)(i - header);
        if (data[i] != want) {
            puts_("data: differs at byte ");
            putdec(i);
            puts_("\n");
            return;
        }
    }
    puts_("data: ");
    putdec(header + 256);
    puts_(" bytes as written\n");
}
#endif

#ifdef FILE_IO
static uint32_t length(const char *s)
{
    uint32_t n = 0;

    while (s[n]) {
        n++;
    }
    return n;
}

static int32_t open_file(const char *name, uint32_t mode)
{
    volatile uint32_t block[3] = { (uint32_t)(uintptr_t)name, mode, length(name) };

    return (int32_t)semihost(SYS_OPEN, block);
}

static void copy_input(void)
{
    static uint8_t bytes[256];
    const int32_t in = open_file("i0.bin", 1); /* "rb" */

    if (in < 0) {
        puts_("i0.bin: cannot open\n");
        return;
    }
    volatile uint32_t flen[1] = { (uint32_t)in };
    uint32_t size = semihost(SYS_FLEN, flen);
    if (size > sizeof bytes) {
        size = sizeof bytes;
    }
    volatile uint32_t read[3] = { (uint32_t)in, (uint32_t)(uintptr_t)bytes, size };
    const uint32_t left = semihost(SYS_READ, read);
    volatile uint32_t close_in[1] = { (uint32_t)in };
    semihost(SYS_CLOSE, close_in);
    puts_("i0.bin: ");
    putdec(size - left);
    puts_(" bytes\n");

    const int32_t out = open_file("out-0.bin", 5); /* "wb" */
    if (out < 0) {
        puts_("out-0.bin: cannot open\n");
        return;
    }
    for (uint32_t i = 0; i < size - left; i++) {
        bytes[i] = (uint8_t)(bytes[i] + 1u);
    }
    volatile uint32_t write[3] = { (uint32_t)out, (uint32_t)(uintptr_t)bytes, size - left };
    semihost(SYS_WRITE, write);
    volatile uint32_t close_out[1] = { (uint32_t)out };
    semihost(SYS_CLOSE, close_out);
    puts_("out-0.bin: written\n");
}
#endif

int main(void)
{
    uart_init();
    puts_("fvp-cli firmware\n");
    print_npu();
#ifdef CMDLINE
    print_command_line();
#endif
#ifdef DATA_ADDRESS
    check_data();
#endif
#ifdef FILE_IO
    copy_input();
#endif
#if defined(END_EOT)
    puts_("Application exit code: 0.\n\x04\nafter the end\n");
#elif defined(END_TAG)
    puts_("EXITTHESIM\nafter the end\n");
#endif
#if defined(END_EOT) || defined(END_TAG) || defined(END_HANG)
    for (;;) {
    }
#endif
    return EXIT_STATUS;
}
