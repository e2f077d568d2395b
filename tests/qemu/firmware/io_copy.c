/*
 * SPDX-License-Identifier: Apache-2.0
 *
 * A model's IO copies, made two ways and timed in the firmware's virtual time. ExecuTorch's
 * Ethos-U backend copies each input tensor into the NPU's scratch before an inference and each
 * output out of it after, by arm_ethos_io_memcpy(), a weak memcpy that firmware may replace with
 * a DMA so the CPU sleeps during the copy. Here the same copies (make_io_copy_data.py: the
 * model's tensor sizes and scratch offsets) are made by the CPU (newlib's memcpy, what std::memcpy
 * is with this toolchain) and by the NPU's DMA (a one-transfer command stream a copy, run through
 * the registers, the CPU in WFI until the NPU's interrupt). Both must be bit-exact, the DMA must
 * not write past its destination, each stream's PMU cycle count must equal `ethosu-emu run
 * --timing-only` on it, and the CPU must be busy for less time than its own copy takes. Then the
 * fault path: a copy from the CPU's private peripheral bus, which is no memory to the NPU, ends in
 * a bus error and the interrupt; a soft reset clears it and the next copy is bit-exact.
 *
 * Time is SysTick on the processor clock: QEMU 7.2's SSE-300 wires no SysTick reference clock,
 * and its processor clock (the SSE's MAINCLK) is AN547's 32 MHz SYSCLK; the counter reads QEMU's
 * virtual clock, which under -icount advances 2^shift ns an instruction and, while the CPU sleeps
 * with sleep=off, jumps to the next timer (here the NPU's completion). DWT CYCCNT and the M55 PMU
 * read 0 in QEMU 7.2. The firmware prints each copy's time in ns and asserts orderings and
 * bounds, never a printed time.
 *
 * QEMU models no data cache: on hardware the CPU would clean the source and invalidate the
 * destination around each NPU transfer.
 */
#include <stddef.h>
#include <string.h>

#include "board.h"
#include "io_copy_data.h"

#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define SYST_ENABLE 1u
#define SYST_CLKSOURCE_CPU 4u
#define SYST_MAX 0xFFFFFFu
#define CPU_CLOCK_HZ 32000000u

/* No memory for the NPU (the SSE-300 gives its master no view of the PPB). */
#define PRIVATE_PERIPHERAL_BUS 0xE0000000u

/* Bytes past each destination that no copy may touch. */
#define GUARD_BYTES 16u
#define GUARD 0xA5u

extern const uint8_t model_input[], model_output[], model_input_copy_stream[], model_output_copy_stream[];
/* As ExecuTorch's Corstone-300 runner places them: the application's tensors in DDR, the NPU's
 * scratch (the inference's arena) in the SSE-300 SRAM. */
static uint8_t output_tensor[OUTPUT_BYTES + GUARD_BYTES] __attribute__((section(".npu_bss"), aligned(16)));
static uint8_t scratch[SCRATCH_BYTES + GUARD_BYTES] __attribute__((section(".sram_bss"), aligned(16)));

static volatile uint32_t irq_count, irq_status;

void npu_irq_handler(void)
{
    irq_status = REG32(NPU_NS + STATUS);
    REG32(NPU_NS + CMD) = CMD_CLEAR_IRQ;
    irq_count++;
}

/* SysTick counts down: ticks between two reads, for intervals under 2^24 ticks (0.5 s). */
static uint32_t ticks_since(uint32_t start)
{
    return (start - REG32(SYST_CVR)) & SYST_MAX;
}

static uint32_t ticks_to_ns(uint32_t ticks)
{
    return (uint32_t)((uint64_t)ticks * 1000000000u / CPU_CLOCK_HZ);
}

static uint32_t npu_cycles_to_ns(uint32_t cycles)
{
    return (uint32_t)((uint64_t)cycles * 1000000000u / NPU_CLOCK_HZ);
}

static void set64(uint32_t offset, uint64_t value)
{
    REG32(NPU_NS + offset) = (uint32_t)value;
    REG32(NPU_NS + offset + 4) = (uint32_t)(value >> 32);
}

struct npu_copy {
    uint32_t total_ticks;  /* from the first register write to the interrupt handled */
    uint32_t asleep_ticks; /* from CMD's run bit to the interrupt handled */
    uint32_t npu_cycles;   /* the NPU's PMU cycle counter */
    int ok;                /* the stream ended without a fault */
};

/* What a DMA-backed arm_ethos_io_memcpy does: the stream copies region 1 to region 0 or region 0
 * to region 1 (make_io_copy_data.py), so the tensor side is region 0, the scratch side region 1. */
static struct npu_copy npu_copy(const uint8_t *stream, uint32_t stream_bytes, const void *tensor,
                                const void *scratch_at)
{
    struct npu_copy r;
    const uint32_t irqs = irq_count;
    const uint32_t start = REG32(SYST_CVR);
    set64(QBASE, (uintptr_t)stream);
    REG32(NPU_NS + QSIZE) = stream_bytes;
    set64(BASEP, (uintptr_t)tensor);
    set64(BASEP + 8, (uintptr_t)scratch_at);
    REG32(NPU_NS + REGIONCFG) = 3u; /* region 0 (the tensor, in DDR) on AXI1, region 1 (scratch) on AXI0 */
    REG32(NPU_NS + PMCR) = 1u | 2u | 4u; /* counting, counters reset */
    REG32(NPU_NS + PMCNTENSET) = 1u << 31; /* the cycle counter */
    REG32(NPU_NS + CMD) = CMD_RUN;
    const uint32_t running = REG32(SYST_CVR);
    wait_for_count(&irq_count, irqs + 1);
    r.asleep_ticks = ticks_since(running);
    r.total_ticks = ticks_since(start);
    r.npu_cycles = REG32(NPU_NS + PMCCNTR);
    r.ok = !(irq_status & STATUS_FAULTS) && (irq_status & STATUS_END_REACHED);
    return r;
}

static int untouched(const uint8_t *p, uint32_t n)
{
    while (n--) {
        if (*p++ != GUARD) {
            return 0;
        }
    }
    return 1;
}

static void print_ns(const char *what, uint32_t ns)
{
    puts_(what);
    putdec(ns);
    puts_(" ns\n");
}

/* One copy both ways: DST (GUARD_BYTES of guard after it) from SRC. */
static void compare_copies(const char *name, uint8_t *dst, const uint8_t *src, uint32_t bytes, const uint8_t *stream,
                           uint32_t stream_bytes, const void *tensor, const void *scratch_at, uint32_t expected_cycles)
{
    puts_(name);
    puts_(": ");
    putdec(bytes);
    puts_(" bytes\n");
    memset(dst, GUARD, bytes + GUARD_BYTES);
    uint32_t start = REG32(SYST_CVR);
    memcpy(dst, src, bytes);
    const uint32_t cpu_ticks = ticks_since(start);
    check("  CPU memcpy bit-exact, nothing past it", memcmp(dst, src, bytes) == 0 && untouched(dst + bytes, GUARD_BYTES), 1);

    memset(dst, GUARD, bytes + GUARD_BYTES);
    const struct npu_copy npu = npu_copy(stream, stream_bytes, tensor, scratch_at);
    check("  NPU DMA ended without a fault", npu.ok, 1);
    check("  NPU DMA bit-exact, nothing past it", memcmp(dst, src, bytes) == 0 && untouched(dst + bytes, GUARD_BYTES), 1);
    check("  NPU cycles (PMCCNTR) = run --timing-only", npu.npu_cycles, expected_cycles);
    /* The CPU wakes once the NPU's time has passed, not before; within 2 us of it (the
     * instructions that program the registers and take the interrupt). */
    const uint32_t npu_ns = npu_cycles_to_ns(npu.npu_cycles);
    const uint32_t asleep_ns = ticks_to_ns(npu.asleep_ticks);
    check("  asleep until the NPU's time had passed",
          asleep_ns + ticks_to_ns(1) >= npu_ns && asleep_ns < npu_ns + 2000u, 1);
    check("  the CPU busy for less of the DMA than of its own copy",
          npu.total_ticks - npu.asleep_ticks < cpu_ticks, 1);
    print_ns("  CPU memcpy: ", ticks_to_ns(cpu_ticks));
    print_ns("  NPU DMA, NPU time (cycles at the NPU clock): ", npu_ns);
    print_ns("  NPU DMA, CPU's view (registers to interrupt handled): ", ticks_to_ns(npu.total_ticks));
    print_ns("  NPU DMA, CPU asleep in WFI: ", asleep_ns);
    print_ns("  NPU DMA, CPU busy: ", ticks_to_ns(npu.total_ticks - npu.asleep_ticks));
}

int main(void)
{
    uart_init();
    puts_("ethosu-emu IO-copy firmware: NPU clock ");
    putdec(NPU_CLOCK_HZ);
    puts_(" Hz, SysTick on the ");
    putdec(CPU_CLOCK_HZ);
    puts_(" Hz processor clock\n");
    REG32(NVIC_ISER(NPU_IRQ / 32)) = 1u << (NPU_IRQ % 32);
    REG32(SYST_RVR) = SYST_MAX;
    REG32(SYST_CVR) = 0;
    REG32(SYST_CSR) = SYST_ENABLE | SYST_CLKSOURCE_CPU;
    uint32_t before = REG32(SYST_CVR);
    for (volatile uint32_t spin = 0; spin < 1000u; spin++) {
    }
    check("SysTick counts", ticks_since(before) != 0, 1);

    /* Input: the application's tensor (the model's golden input) into the scratch. */
    compare_copies("input copy", scratch + INPUT_OFFSET, model_input, INPUT_BYTES, model_input_copy_stream,
                   INPUT_COPY_STREAM_BYTES, model_input, scratch + INPUT_OFFSET, INPUT_COPY_CYCLES);
    /* Output: the scratch (holding what the inference wrote: the golden output) into the
     * application's tensor. */
    memcpy(scratch + OUTPUT_OFFSET, model_output, OUTPUT_BYTES);
    compare_copies("output copy", output_tensor, scratch + OUTPUT_OFFSET, OUTPUT_BYTES, model_output_copy_stream,
                   OUTPUT_COPY_STREAM_BYTES, output_tensor, scratch + OUTPUT_OFFSET, OUTPUT_COPY_CYCLES);

    /* The fault path. */
    const struct npu_copy fault = npu_copy(model_output_copy_stream, OUTPUT_COPY_STREAM_BYTES,
                                           output_tensor, (const void *)PRIVATE_PERIPHERAL_BUS);
    check("a copy from the private peripheral bus: a fault", fault.ok, 0);
    check("  the bus error in STATUS", irq_status & STATUS_BUS_STATUS, STATUS_BUS_STATUS);
    REG32(NPU_NS + RESET) = 1u;
    check("a soft reset clears it", REG32(NPU_NS + STATUS) & STATUS_FAULTS, 0);
    memset(output_tensor, GUARD, OUTPUT_BYTES + GUARD_BYTES);
    const struct npu_copy again = npu_copy(model_output_copy_stream, OUTPUT_COPY_STREAM_BYTES, output_tensor,
                                           scratch + OUTPUT_OFFSET);
    check("a copy after the fault, bit-exact", again.ok && memcmp(output_tensor, model_output, OUTPUT_BYTES) == 0, 1);
    check("interrupts", irq_count, 4);
    print_check_totals();
    return (int)checks_failed();
}
