/* The limits of the Ethos-U Linux driver's user interface that its clients size arrays with
 * (ExecuTorch's Cortex-A backend: std::array<uint32_t, ETHOSU_PMU_EVENT_MAX>). ethosu-emu's own
 * header: the request numbers and structs are frontend/linux/ethosu_uapi.h, which checks these. */
#ifndef ETHOSU_EMU_UAPI_ETHOSU_H
#define ETHOSU_EMU_UAPI_ETHOSU_H

#define ETHOSU_FD_MAX 16       /* IFM/OFM buffers per inference, buffers per BUFFERS_CREATE */
#define ETHOSU_DIM_MAX 8       /* dimensions of a tensor shape */
#define ETHOSU_PMU_EVENT_MAX 4 /* configurable PMU event counters */

#endif
