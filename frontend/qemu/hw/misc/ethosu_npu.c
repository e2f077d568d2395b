/*
 * Arm Ethos-U NPU hosted by an ethosu-emu device server.
 *
 * The NPU runs in a separate process (the device server); this device
 * forwards the guest's register accesses to it over a UNIX socket, with
 * the time in NPU cycles, serves the server's requests for guest memory
 * as a bus master, sets the interrupt level the server reports, and
 * wakes the server when its next event is due (a timer on the virtual
 * clock). The wire protocol (version 1) is described in the ethosu-emu
 * repository (frontend/device_server/PROTOCOL.md); it is implemented
 * here from that description alone.
 *
 * Copyright (c) 2025 ethosu-emu contributors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * This program is free software; you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation; either version 2 of the License, or
 * (at your option) any later version.
 */

#include "qemu/osdep.h"
#include <math.h>
#include "qemu/bswap.h"
#include "qemu/error-report.h"
#include "qemu/host-utils.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/sockets.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "exec/address-spaces.h"
#include "hw/irq.h"
#include "hw/qdev-properties.h"
#include "hw/sysbus.h"
#include "migration/vmstate.h"
#include "hw/misc/ethosu_npu.h"

/* Protocol version 1: message kinds. */
enum {
    ETHOSU_MSG_HELLO = 1,
    ETHOSU_MSG_READ = 2,
    ETHOSU_MSG_WRITE = 3,
    ETHOSU_MSG_SYNC = 4,
    ETHOSU_MSG_RESET = 5,

    ETHOSU_MSG_HELLO_REPLY = 64,
    ETHOSU_MSG_READ_REPLY = 65,
    ETHOSU_MSG_STATE = 66,

    ETHOSU_MSG_MEM_READ = 128,
    ETHOSU_MSG_MEM_WRITE = 129,

    ETHOSU_MSG_MEM_DATA = 192,
    ETHOSU_MSG_MEM_DONE = 193,
};

#define ETHOSU_PROTOCOL_VERSION 1

#define ETHOSU_HEADER_BYTES 8
#define ETHOSU_STATE_BYTES 16        /* u32 irq, u32 pending, u64 cycles */
/* u32 version, u32 window bytes, f64 clock in Hz, u32 status */
#define ETHOSU_HELLO_REPLY_BYTES 20
#define ETHOSU_READ_REPLY_BYTES (8 + ETHOSU_STATE_BYTES)
/* u64 address, u32 bytes, u32 attributes */
#define ETHOSU_MEM_REQUEST_BYTES 16

/* Memory request attributes, as the NPU's PROT register says. */
#define ETHOSU_ATTR_NONSECURE 1u
#define ETHOSU_ATTR_UNPRIVILEGED 2u

/* The largest memory request accepted; anything bigger is malformed. */
#define ETHOSU_MEM_MAX_BYTES (256u * 1024 * 1024)
/* The largest error text accepted in a HELLO_REPLY. */
#define ETHOSU_TEXT_MAX_BYTES 4096

static G_NORETURN void ethosu_lost(EthosUNPUState *s, const char *what)
{
    error_report("ethosu-npu: connection to the device server at %s: %s",
                 s->socket_path, what);
    exit(1);
}

static void ethosu_write_all(EthosUNPUState *s, const void *data, size_t len)
{
    const uint8_t *p = data;

    while (len > 0) {
        ssize_t n = send(s->fd, p, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            ethosu_lost(s, n < 0 ? strerror(errno) : "closed while sending");
        }
        p += n;
        len -= n;
    }
}

static void ethosu_read_all(EthosUNPUState *s, void *data, size_t len)
{
    uint8_t *p = data;

    while (len > 0) {
        ssize_t n = recv(s->fd, p, len, 0);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            ethosu_lost(s, strerror(errno));
        }
        if (n == 0) {
            ethosu_lost(s, "closed by the server");
        }
        p += n;
        len -= n;
    }
}

/* A scratch buffer of at least @len bytes. */
static uint8_t *ethosu_buffer(EthosUNPUState *s, size_t len)
{
    if (len > s->buf_size) {
        s->buf = g_realloc(s->buf, len);
        s->buf_size = len;
    }
    return s->buf;
}

static void ethosu_send(EthosUNPUState *s, uint32_t type,
                        const void *payload, uint32_t len)
{
    uint8_t header[ETHOSU_HEADER_BYTES];

    stl_le_p(header, type);
    stl_le_p(header + 4, len);
    ethosu_write_all(s, header, sizeof(header));
    if (len) {
        ethosu_write_all(s, payload, len);
    }
}

static void ethosu_recv_header(EthosUNPUState *s, uint32_t *type,
                               uint32_t *len)
{
    uint8_t header[ETHOSU_HEADER_BYTES];

    ethosu_read_all(s, header, sizeof(header));
    *type = ldl_le_p(header);
    *len = ldl_le_p(header + 4);
}

static MemTxAttrs ethosu_attrs(uint32_t attributes)
{
    /* Specified attributes: MEMTXATTRS_UNSPECIFIED would count as Secure. */
    MemTxAttrs attrs = {};

    attrs.secure = !(attributes & ETHOSU_ATTR_NONSECURE);
    attrs.user = !!(attributes & ETHOSU_ATTR_UNPRIVILEGED);
    return attrs;
}

/* MEM_READ: read guest memory as the NPU's bus master, answer MEM_DATA. */
static void ethosu_serve_mem_read(EthosUNPUState *s, uint32_t len)
{
    uint8_t request[ETHOSU_MEM_REQUEST_BYTES];
    uint64_t addr;
    uint32_t bytes, attributes;
    MemTxResult res;
    uint8_t *reply;

    if (len != ETHOSU_MEM_REQUEST_BYTES) {
        ethosu_lost(s, "malformed MEM_READ");
    }
    ethosu_read_all(s, request, sizeof(request));
    addr = ldq_le_p(request);
    bytes = ldl_le_p(request + 8);
    attributes = ldl_le_p(request + 12);
    if (bytes > ETHOSU_MEM_MAX_BYTES) {
        ethosu_lost(s, "MEM_READ larger than 256 MiB");
    }

    reply = ethosu_buffer(s, 4 + (size_t)bytes);
    res = address_space_read(&s->downstream_as, addr, ethosu_attrs(attributes),
                             reply + 4, bytes);
    if (res != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "ethosu-npu: bus error reading "
                      "0x%" PRIx64 " (%u bytes, attributes %u)\n",
                      addr, bytes, attributes);
        stl_le_p(reply, 1);
        ethosu_send(s, ETHOSU_MSG_MEM_DATA, reply, 4);
        return;
    }
    stl_le_p(reply, 0);
    ethosu_send(s, ETHOSU_MSG_MEM_DATA, reply, 4 + bytes);
}

/* MEM_WRITE: write guest memory as the NPU's bus master, answer MEM_DONE. */
static void ethosu_serve_mem_write(EthosUNPUState *s, uint32_t len)
{
    uint8_t request[ETHOSU_MEM_REQUEST_BYTES];
    uint8_t reply[4];
    uint64_t addr;
    uint32_t bytes, attributes;
    MemTxResult res;
    uint8_t *data;

    if (len < ETHOSU_MEM_REQUEST_BYTES) {
        ethosu_lost(s, "malformed MEM_WRITE");
    }
    ethosu_read_all(s, request, sizeof(request));
    addr = ldq_le_p(request);
    bytes = ldl_le_p(request + 8);
    attributes = ldl_le_p(request + 12);
    if (bytes > ETHOSU_MEM_MAX_BYTES ||
        len - ETHOSU_MEM_REQUEST_BYTES != bytes) {
        ethosu_lost(s, "malformed MEM_WRITE");
    }

    data = ethosu_buffer(s, bytes ? bytes : 1);
    ethosu_read_all(s, data, bytes);
    res = address_space_write(&s->downstream_as, addr,
                              ethosu_attrs(attributes), data, bytes);
    if (res != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "ethosu-npu: bus error writing "
                      "0x%" PRIx64 " (%u bytes, attributes %u)\n",
                      addr, bytes, attributes);
    }
    stl_le_p(reply, res == MEMTX_OK ? 0 : 1);
    ethosu_send(s, ETHOSU_MSG_MEM_DONE, reply, sizeof(reply));
}

/*
 * Send one request and read until its reply of @reply_type, serving the
 * server's memory requests meanwhile. The reply's payload, of exactly
 * @reply_len bytes, is stored in @reply.
 */
static void ethosu_transact(EthosUNPUState *s, uint32_t type,
                            const void *payload, uint32_t len,
                            uint32_t reply_type, void *reply,
                            uint32_t reply_len)
{
    s->in_request = true;
    ethosu_send(s, type, payload, len);
    for (;;) {
        uint32_t rtype, rlen;

        ethosu_recv_header(s, &rtype, &rlen);
        if (rtype == ETHOSU_MSG_MEM_READ) {
            ethosu_serve_mem_read(s, rlen);
        } else if (rtype == ETHOSU_MSG_MEM_WRITE) {
            ethosu_serve_mem_write(s, rlen);
        } else if (rtype == reply_type && rlen == reply_len) {
            ethosu_read_all(s, reply, reply_len);
            break;
        } else {
            g_autofree char *what =
                g_strdup_printf("unexpected message %u of %u bytes "
                                "(expected %u of %u bytes)",
                                rtype, rlen, reply_type, reply_len);
            ethosu_lost(s, what);
        }
    }
    s->in_request = false;
}

/* The NPU's time: the virtual clock in NPU cycles, never decreasing. */
static uint64_t ethosu_now(EthosUNPUState *s)
{
    int64_t ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint64_t cycles = muldiv64(ns > 0 ? ns : 0, s->clock_hz,
                               NANOSECONDS_PER_SECOND);

    if (cycles > s->last_now) {
        s->last_now = cycles;
    }
    return s->last_now;
}

/*
 * The earliest virtual time, in ns, at which ethosu_now() reaches
 * @cycles; INT64_MAX if that is out of the clock's range.
 */
static int64_t ethosu_cycles_to_ns(EthosUNPUState *s, uint64_t cycles)
{
    uint64_t ns;

    /* Past 9e9 s (285 years) of virtual time: never; keeps ns < 2^63. */
    if (cycles / s->clock_hz >= 9000000000ULL) {
        return INT64_MAX;
    }
    /*
     * ethosu_now() >= cycles once floor(ns * hz / 1e9) >= cycles, that is
     * ns >= cycles * 1e9 / hz: the first such ns is the ceiling.
     */
    ns = muldiv64_round_up(cycles, NANOSECONDS_PER_SECOND, s->clock_hz);
    return ns;
}

/* Apply a state: the interrupt level and the next event. */
static void ethosu_apply_state(EthosUNPUState *s, const uint8_t *state)
{
    uint32_t irq = ldl_le_p(state);
    uint32_t pending = ldl_le_p(state + 4);
    uint64_t cycles = ldq_le_p(state + 8);

    s->irq_level = irq != 0;
    qemu_set_irq(s->irq, s->irq_level);
    if (pending) {
        uint64_t due = s->last_now + cycles;

        if (due < s->last_now) {
            due = UINT64_MAX;
        }
        timer_mod(s->timer, ethosu_cycles_to_ns(s, due));
    } else {
        timer_del(s->timer);
    }
}

/* SYNC, RESET: a request of one u64 now, answered by a STATE. */
static void ethosu_time_request(EthosUNPUState *s, uint32_t type)
{
    uint8_t payload[8];
    uint8_t state[ETHOSU_STATE_BYTES];

    stq_le_p(payload, ethosu_now(s));
    ethosu_transact(s, type, payload, sizeof(payload),
                    ETHOSU_MSG_STATE, state, sizeof(state));
    ethosu_apply_state(s, state);
}

static void ethosu_timer_cb(void *opaque)
{
    EthosUNPUState *s = opaque;

    if (s->in_request) {
        /* Not reachable: requests do not let the main loop run. */
        timer_mod(s->timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + 1);
        return;
    }
    ethosu_time_request(s, ETHOSU_MSG_SYNC);
}

static uint64_t ethosu_mmio_read(void *opaque, hwaddr offset, unsigned size)
{
    EthosUNPUState *s = opaque;
    uint8_t payload[16];
    uint8_t reply[ETHOSU_READ_REPLY_BYTES];

    if (s->in_request) {
        /* The NPU's own bus master reached its registers: not forwarded. */
        qemu_log_mask(LOG_GUEST_ERROR, "ethosu-npu: register read at 0x%"
                      HWADDR_PRIx " during a request, reads 0\n", offset);
        return 0;
    }
    stq_le_p(payload, ethosu_now(s));
    stl_le_p(payload + 8, offset);
    stl_le_p(payload + 12, size);
    ethosu_transact(s, ETHOSU_MSG_READ, payload, sizeof(payload),
                    ETHOSU_MSG_READ_REPLY, reply, sizeof(reply));
    ethosu_apply_state(s, reply + 8);
    return ldq_le_p(reply);
}

static void ethosu_mmio_write(void *opaque, hwaddr offset, uint64_t value,
                              unsigned size)
{
    EthosUNPUState *s = opaque;
    uint8_t payload[24];
    uint8_t state[ETHOSU_STATE_BYTES];

    if (s->in_request) {
        qemu_log_mask(LOG_GUEST_ERROR, "ethosu-npu: register write at 0x%"
                      HWADDR_PRIx " during a request, ignored\n", offset);
        return;
    }
    stq_le_p(payload, ethosu_now(s));
    stl_le_p(payload + 8, offset);
    stl_le_p(payload + 12, size);
    stq_le_p(payload + 16, value);
    ethosu_transact(s, ETHOSU_MSG_WRITE, payload, sizeof(payload),
                    ETHOSU_MSG_STATE, state, sizeof(state));
    ethosu_apply_state(s, state);
}

static const MemoryRegionOps ethosu_mmio_ops = {
    .read = ethosu_mmio_read,
    .write = ethosu_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid.min_access_size = 1,
    .valid.max_access_size = 8,
    .impl.min_access_size = 1,
    .impl.max_access_size = 8,
};

/* Connect, send HELLO and check the reply. */
static bool ethosu_hello(EthosUNPUState *s, Error **errp)
{
    size_t name_len = strlen(s->npu);
    g_autofree uint8_t *payload = g_malloc(4 + name_len);
    uint8_t reply[ETHOSU_HELLO_REPLY_BYTES];
    uint32_t type, len, version, status;
    uint64_t hz_bits;
    double hz;

    stl_le_p(payload, ETHOSU_PROTOCOL_VERSION);
    memcpy(payload + 4, s->npu, name_len);
    ethosu_send(s, ETHOSU_MSG_HELLO, payload, 4 + name_len);

    ethosu_recv_header(s, &type, &len);
    if (type != ETHOSU_MSG_HELLO_REPLY || len < ETHOSU_HELLO_REPLY_BYTES ||
        len > ETHOSU_HELLO_REPLY_BYTES + ETHOSU_TEXT_MAX_BYTES) {
        error_setg(errp, "ethosu-npu: %s: not a HELLO_REPLY (type %u, "
                   "%u bytes)", s->socket_path, type, len);
        return false;
    }
    ethosu_read_all(s, reply, sizeof(reply));
    version = ldl_le_p(reply);
    s->window_bytes = ldl_le_p(reply + 4);
    hz_bits = ldq_le_p(reply + 8);
    memcpy(&hz, &hz_bits, sizeof(hz));
    status = ldl_le_p(reply + 16);

    if (status != 0) {
        uint32_t text_len = len - ETHOSU_HELLO_REPLY_BYTES;
        g_autofree char *text = g_malloc0(text_len + 1);

        ethosu_read_all(s, text, text_len);
        error_setg(errp, "ethosu-npu: the device server refused %s: %s",
                   s->npu, text);
        return false;
    }
    if (len != ETHOSU_HELLO_REPLY_BYTES) {
        error_setg(errp, "ethosu-npu: malformed HELLO_REPLY");
        return false;
    }
    if (version != ETHOSU_PROTOCOL_VERSION) {
        error_setg(errp, "ethosu-npu: the device server speaks protocol "
                   "version %u, this device version %u",
                   version, ETHOSU_PROTOCOL_VERSION);
        return false;
    }
    if (s->window_bytes == 0) {
        error_setg(errp, "ethosu-npu: the device server reports an empty "
                   "register window");
        return false;
    }
    if (!(hz >= 1.0 && hz <= (double)UINT32_MAX)) {
        error_setg(errp, "ethosu-npu: the device server reports a clock of "
                   "%g Hz, outside 1 Hz .. 4.29 GHz", hz);
        return false;
    }
    s->clock_hz = (uint32_t)llround(hz);
    return true;
}

static void ethosu_realize(DeviceState *dev, Error **errp)
{
    EthosUNPUState *s = ETHOSU_NPU(dev);
    SysBusDevice *sbd = SYS_BUS_DEVICE(dev);

    if (!s->socket_path || !*s->socket_path) {
        error_setg(errp, "ethosu-npu: property 'socket' is not set");
        return;
    }
    if (!s->npu) {
        s->npu = g_strdup("ethos-u55-128");
    }
    if (!*s->npu) {
        error_setg(errp, "ethosu-npu: property 'npu' is empty");
        return;
    }

    s->fd = unix_connect(s->socket_path, errp);
    if (s->fd < 0) {
        error_prepend(errp, "ethosu-npu: ");
        return;
    }
    if (!ethosu_hello(s, errp)) {
        close(s->fd);
        s->fd = -1;
        return;
    }

    address_space_init(&s->downstream_as,
                       s->downstream ? s->downstream : get_system_memory(),
                       "ethosu-npu-master");
    memory_region_init_io(&s->iomem, OBJECT(s), &ethosu_mmio_ops, s,
                          "ethosu-npu", s->window_bytes);
    sysbus_init_mmio(sbd, &s->iomem);
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, ethosu_timer_cb, s);
}

static void ethosu_reset(DeviceState *dev)
{
    EthosUNPUState *s = ETHOSU_NPU(dev);

    if (s->fd < 0) {
        return;
    }
    timer_del(s->timer);
    ethosu_time_request(s, ETHOSU_MSG_RESET);
}

static void ethosu_init(Object *obj)
{
    EthosUNPUState *s = ETHOSU_NPU(obj);

    s->fd = -1;
    sysbus_init_irq(SYS_BUS_DEVICE(obj), &s->irq);
}

static void ethosu_finalize(Object *obj)
{
    EthosUNPUState *s = ETHOSU_NPU(obj);

    if (s->timer) {
        timer_free(s->timer);
        s->timer = NULL;
    }
    if (s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
    g_free(s->buf);
    s->buf = NULL;
}

/* The NPU's state lives in the device server: not migratable yet. */
static const VMStateDescription vmstate_ethosu_npu = {
    .name = TYPE_ETHOSU_NPU,
    .unmigratable = 1,
};

static Property ethosu_properties[] = {
    DEFINE_PROP_STRING("socket", EthosUNPUState, socket_path),
    DEFINE_PROP_STRING("npu", EthosUNPUState, npu),
    DEFINE_PROP_LINK("memory", EthosUNPUState, downstream,
                     TYPE_MEMORY_REGION, MemoryRegion *),
    DEFINE_PROP_END_OF_LIST(),
};

static void ethosu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "Arm Ethos-U NPU hosted by an ethosu-emu device server";
    dc->realize = ethosu_realize;
    dc->reset = ethosu_reset;
    dc->vmsd = &vmstate_ethosu_npu;
    device_class_set_props(dc, ethosu_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo ethosu_npu_info = {
    .name = TYPE_ETHOSU_NPU,
    .parent = TYPE_SYS_BUS_DEVICE,
    .instance_size = sizeof(EthosUNPUState),
    .instance_init = ethosu_init,
    .instance_finalize = ethosu_finalize,
    .class_init = ethosu_class_init,
};

static void ethosu_npu_register_types(void)
{
    type_register_static(&ethosu_npu_info);
}

type_init(ethosu_npu_register_types)
