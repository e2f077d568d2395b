/*
 * SPDX-License-Identifier: Apache-2.0
 *
 * Runs a Vela command stream on the NPU through its registers, as a minimal
 * register-level driver does on Corstone-300: the stream, the constants
 * (region 0), the tensor arena (region 1) and the fast scratch (region 2)
 * in DDR; QBASE, QSIZE, BASEP and REGIONCFG; the PMU's cycle counter; CMD's
 * run bit; the NPU's interrupt ends each inference. Every inference's output
 * must equal the golden, and its cycle count the emulator's own run
 * (make_model_data.py writes both into model_data.h).
 */
#include "board.h"
#include "model_data.h"

extern const uint8_t model_stream[], model_constants[], model_input[], model_golden[];
static uint8_t arena[ARENA_BYTES] __attribute__((section(".npu_bss"), aligned(16)));
static uint8_t fast_scratch[FAST_BYTES] __attribute__((section(".npu_bss"), aligned(16)));

static volatile uint32_t irq_count, irq_status;

void npu_irq_handler(void)
{
    irq_status = REG32(NPU_NS + STATUS);
    REG32(NPU_NS + CMD) = CMD_CLEAR_IRQ;
    irq_count++;
}

/* No C library: the firmware's own byte loops. */
static void copy(uint8_t *dst, const uint8_t *src, uint32_t n)
{
    while (n--) {
        *dst++ = *src++;
    }
}

static int same(const uint8_t *a, const uint8_t *b, uint32_t n)
{
    while (n--) {
        if (*a++ != *b++) {
            return 0;
        }
    }
    return 1;
}

static uint8_t *region(uint32_t index)
{
    return index == 1 ? arena : fast_scratch;
}

static void set64(uint32_t offset, uint64_t value)
{
    REG32(NPU_NS + offset) = (uint32_t)value;
    REG32(NPU_NS + offset + 4) = (uint32_t)(value >> 32);
}

/* One inference: the input in, the registers programmed, the interrupt awaited. Returns whether
 * the stream ended without a fault and its output equals the golden. */
static int run_inference(void)
{
    const uint32_t irqs = irq_count;
    /* The output may overlap the input in the arena: cleared first. */
    for (uint32_t i = 0; i < GOLDEN_BYTES; i++) {
        region(OUT_REGION)[OUT_OFFSET + i] = 0;
    }
    copy(region(IN_REGION) + IN_OFFSET, model_input, INPUT_BYTES);
    set64(QBASE, (uintptr_t)model_stream);
    REG32(NPU_NS + QSIZE) = STREAM_BYTES;
    set64(BASEP, (uintptr_t)model_constants);
    set64(BASEP + 8, (uintptr_t)arena);
    set64(BASEP + 16, (uintptr_t)fast_scratch);
    REG32(NPU_NS + REGIONCFG) = 3u; /* the constants on AXI1, the rest on AXI0 */
    REG32(NPU_NS + PMCR) = 1u | 2u | 4u; /* counting, counters reset */
    REG32(NPU_NS + PMCNTENSET) = 1u << 31; /* the cycle counter */
    REG32(NPU_NS + CMD) = CMD_RUN;
    wait_for_count(&irq_count, irqs + 1);
    return !(irq_status & STATUS_FAULTS) && (irq_status & STATUS_END_REACHED) &&
           same(region(OUT_REGION) + OUT_OFFSET, model_golden, GOLDEN_BYTES);
}

int main(void)
{
    uart_init();
    puts_("ethosu-emu stream firmware: ");
    putdec(INFERENCES);
    puts_(" inferences\n");
    REG32(NVIC_ISER(NPU_IRQ / 32)) = 1u << (NPU_IRQ % 32);
    uint32_t good = 0, exact_cycles = 0;
    for (uint32_t n = 0; n < INFERENCES; n++) {
        good += run_inference();
        exact_cycles += REG32(NPU_NS + PMCCNTR) == EXPECTED_CYCLES;
    }
    check("inferences with the golden output", good, INFERENCES);
    check("inferences of the emulator's cycles (PMCCNTR)", exact_cycles, INFERENCES);
    puts_("NPU cycles an inference: ");
    putdec(REG32(NPU_NS + PMCCNTR));
    puts_("\n");

    /* The fault path: an empty queue is a command parse error; the interrupt still comes; a
     * soft reset (secure, privileged) clears the fault and the next inference runs. */
    REG32(NPU_NS + QSIZE) = 0;
    REG32(NPU_NS + CMD) = CMD_RUN;
    wait_for_count(&irq_count, INFERENCES + 1);
    check("an empty queue: cmd_parse_error", irq_status & STATUS_PARSE_ERROR, STATUS_PARSE_ERROR);
    REG32(NPU_NS + RESET) = 1u;
    check("a soft reset clears it", REG32(NPU_NS + STATUS) & STATUS_FAULTS, 0);
    check("an inference after the fault", run_inference(), 1);
    check("interrupts", irq_count, INFERENCES + 2);
    print_check_totals();
    return (int)checks_failed();
}
