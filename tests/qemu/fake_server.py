#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A fake ethosu-emu device server, for testing QEMU's ethosu-npu device alone.

Speaks the device protocol, version 1 (frontend/device_server/PROTOCOL.md), with a trivial
register file instead of an NPU (offsets as in tests/qemu/firmware/main.c):

  0x000 ID           read-only 0xE7055055
  0x004 STATUS       read-only: bit 0 running, bit 1 interrupt raised, bit 2 the last run's
                     probe of BADADDR was a bus error
  0x008 CMD          write 1: start a run; write 2: clear the interrupt
  0x00C CONFIG       read-only 0x80
  0x010 SCRATCH      read/write (any size)
  0x014 SRC, 0x018 DST, 0x01C CYCLES, 0x020 PROT (memory attributes), 0x034 BADADDR: read/write
  0x024 START_NOW, 0x028 END_NOW (low 32 bits of `now` when a run started and ended),
  0x02C RESULT, 0x030 RESETS (RESET requests seen), 0x038 COMPLETED_BY (the request kind during
  which the last run ended): read-only

A run, started at `now` = t by CMD=1: reads the 4 KiB page at SRC (MEM_READ, PROT's attributes),
RESULT = the sum of its first 16 words, probes 4 bytes at BADADDR when non-zero (STATUS bit 2 on a
bus error); an event is pending at t + CYCLES. The first request whose `now` reaches it ends the
run: the 16 words XOR 0xA5A5A5A5 are written to DST (MEM_WRITE), the interrupt rises.

Usage: fake_server.py SOCKET_PATH [--log FILE] [--window BYTES] [--clock HZ] [--close-after N]
Serves one connection, then exits 0 when the client closes it (or, with --close-after, once it has
answered N requests: the client must then stop, not hang); 2 on a protocol error.
"""

import argparse
import os
import socket
import struct
import sys

HELLO, READ, WRITE, SYNC, RESET = 1, 2, 3, 4, 5
HELLO_REPLY, READ_REPLY, STATE = 64, 65, 66
MEM_READ, MEM_WRITE = 128, 129
MEM_DATA, MEM_DONE = 192, 193

ID_VALUE = 0xE7055055
CONFIG_VALUE = 0x80
R_ID, R_STATUS, R_CMD, R_CONFIG, R_SCRATCH = 0x00, 0x04, 0x08, 0x0C, 0x10
R_SRC, R_DST, R_CYCLES, R_PROT = 0x14, 0x18, 0x1C, 0x20
R_START_NOW, R_END_NOW, R_RESULT, R_RESETS, R_BADADDR, R_COMPLETED_BY = (
    0x24, 0x28, 0x2C, 0x30, 0x34, 0x38)
WRITABLE = {R_SCRATCH, R_SRC, R_DST, R_CYCLES, R_PROT, R_BADADDR}


class ProtocolError(Exception):
    pass


class Connection:
    def __init__(self, sock, log):
        self.sock = sock
        self.log = log

    def recv_exact(self, n):
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                if not data and n == 8:
                    return None
                raise ProtocolError("short read")
            data += chunk
        return bytes(data)

    def recv(self):
        header = self.recv_exact(8)
        if header is None:
            return None, None
        kind, length = struct.unpack("<II", header)
        if length > 64 * 1024 * 1024:
            raise ProtocolError(f"message {kind} of {length} bytes")
        return kind, self.recv_exact(length)

    def send(self, kind, payload=b""):
        self.sock.sendall(struct.pack("<II", kind, len(payload)) + payload)


class FakeNpu:
    def __init__(self, conn, log, window, clock_hz, close_after=None):
        self.close_after = close_after
        self.conn = conn
        self.log = log
        self.window = window
        self.clock_hz = clock_hz
        self.now = 0
        self.regs = bytearray(window)
        self.resets = 0
        self.power_on()

    def power_on(self):
        self.regs = bytearray(self.window)
        self.irq = 0
        self.running = False
        self.end = 0
        self.bus_error = 0
        self.output = b""
        self.completed_by = 0
        self.request = 0

    def reg(self, offset):
        return struct.unpack_from("<I", self.regs, offset)[0]

    def set_reg(self, offset, value):
        struct.pack_into("<I", self.regs, offset, value & 0xFFFFFFFF)

    def refresh(self):
        self.set_reg(R_ID, ID_VALUE)
        self.set_reg(R_CONFIG, CONFIG_VALUE)
        self.set_reg(R_STATUS, int(self.running) | (self.irq << 1) | (self.bus_error << 2))
        self.set_reg(R_RESETS, self.resets)
        self.set_reg(R_COMPLETED_BY, self.completed_by)

    # Guest memory, through the client.
    def mem_read(self, address, size, attributes):
        self.conn.send(MEM_READ, struct.pack("<QII", address, size, attributes))
        kind, payload = self.conn.recv()
        if kind != MEM_DATA or payload is None or len(payload) < 4:
            raise ProtocolError(f"expected MEM_DATA, got {kind}")
        (status,) = struct.unpack_from("<I", payload)
        data = payload[4:]
        if status == 0 and len(data) != size:
            raise ProtocolError(f"MEM_DATA of {len(data)} bytes for {size}")
        if status != 0 and data:
            raise ProtocolError("MEM_DATA with bytes after a bus error")
        self.log(f"MEM_READ 0x{address:x} {size} attr {attributes} -> status {status}")
        return status, data

    def mem_write(self, address, data, attributes):
        self.conn.send(MEM_WRITE, struct.pack("<QII", address, len(data), attributes) + data)
        kind, payload = self.conn.recv()
        if kind != MEM_DONE or payload is None or len(payload) != 4:
            raise ProtocolError(f"expected MEM_DONE, got {kind}")
        (status,) = struct.unpack("<I", payload)
        self.log(f"MEM_WRITE 0x{address:x} {len(data)} attr {attributes} -> status {status}")
        return status

    def advance(self, now):
        if now < self.now:
            raise ProtocolError(f"time went back from {self.now} to {now}")
        self.now = now
        if self.running and now >= self.end:
            self.running = False
            self.irq = 1
            self.completed_by = self.request
            self.set_reg(R_END_NOW, now)
            self.log(f"run ended at {now} (due {self.end}, late {now - self.end}) "
                     f"during request {self.request}")
            self.mem_write(self.reg(R_DST), self.output, self.reg(R_PROT))

    def start_run(self):
        attributes = self.reg(R_PROT)
        status, page = self.mem_read(self.reg(R_SRC), 4096, attributes)
        words = struct.unpack_from("<16I", page) if status == 0 else (0,) * 16
        self.set_reg(R_RESULT, sum(words))
        self.output = struct.pack("<16I", *[w ^ 0xA5A5A5A5 for w in words])
        self.bus_error = 0
        if self.reg(R_BADADDR):
            probe, _ = self.mem_read(self.reg(R_BADADDR), 4, attributes)
            self.bus_error = int(probe != 0)
        self.running = True
        self.end = self.now + self.reg(R_CYCLES)
        self.set_reg(R_START_NOW, self.now)
        self.log(f"run started at {self.now}, due {self.end}")

    def state(self):
        pending = self.running
        cycles = self.end - self.now if pending else 0
        return struct.pack("<IIQ", self.irq, int(pending), cycles)

    def read(self, offset, size):
        self.refresh()
        if size not in (1, 2, 4, 8) or offset % size or offset + size > self.window:
            return 0
        return int.from_bytes(self.regs[offset:offset + size], "little")

    def write(self, offset, size, value):
        if size not in (1, 2, 4, 8) or offset % size or offset + size > self.window:
            return
        data = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        for i, byte in enumerate(data):
            if (offset + i) & ~3 in WRITABLE:
                self.regs[offset + i] = byte
        if offset == R_CMD and size == 4:
            if value & 1 and not self.running:
                self.start_run()
            if value & 2:
                self.irq = 0

    def serve(self):
        kind, payload = self.conn.recv()
        if kind != HELLO or len(payload) < 4:
            raise ProtocolError(f"expected HELLO, got {kind}")
        (version,) = struct.unpack_from("<I", payload)
        name = payload[4:].decode("utf-8", "replace")
        self.log(f"HELLO version {version} npu {name}")
        if version != 1 or not name.startswith("ethos-u"):
            text = f"unsupported: version {version}, npu {name}".encode()
            self.conn.send(HELLO_REPLY, struct.pack("<IIdI", 1, 0, 0.0, 1) + text)
            return
        self.conn.send(HELLO_REPLY, struct.pack("<IIdI", 1, self.window, self.clock_hz, 0))
        served = 0
        while True:
            if self.close_after is not None and served >= self.close_after:
                self.log(f"closing the connection after {served} requests")
                return
            served += 1
            kind, payload = self.conn.recv()
            if kind is None:
                self.log("client closed the connection")
                return
            self.request = kind
            if kind == READ and len(payload) == 16:
                now, offset, size = struct.unpack("<QII", payload)
                self.advance(now)
                value = self.read(offset, size)
                self.log(f"READ {now} 0x{offset:x}/{size} -> 0x{value:x}")
                self.conn.send(READ_REPLY, struct.pack("<Q", value) + self.state())
            elif kind == WRITE and len(payload) == 24:
                now, offset, size, value = struct.unpack("<QIIQ", payload)
                self.advance(now)
                self.log(f"WRITE {now} 0x{offset:x}/{size} <- 0x{value:x}")
                self.write(offset, size, value)
                self.conn.send(STATE, self.state())
            elif kind == SYNC and len(payload) == 8:
                (now,) = struct.unpack("<Q", payload)
                self.log(f"SYNC {now}")
                self.advance(now)
                self.conn.send(STATE, self.state())
            elif kind == RESET and len(payload) == 8:
                (now,) = struct.unpack("<Q", payload)
                self.advance(now)
                self.power_on()
                self.resets += 1
                self.log(f"RESET {now}")
                self.conn.send(STATE, self.state())
            else:
                raise ProtocolError(f"unexpected message {kind} of {len(payload)} bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("socket")
    parser.add_argument("--log", help="write a line per message to this file")
    parser.add_argument("--window", type=lambda s: int(s, 0), default=0x1000)
    parser.add_argument("--clock", type=float, default=500e6, help="NPU clock in Hz")
    parser.add_argument("--close-after", type=int, help="close after answering N requests")
    args = parser.parse_args()

    log_file = open(args.log, "w", buffering=1) if args.log else None

    def log(line):
        if log_file:
            log_file.write(line + "\n")

    if os.path.exists(args.socket):
        os.unlink(args.socket)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(args.socket)
    listener.listen(1)
    listener.settimeout(60)
    try:
        sock, _ = listener.accept()
    except socket.timeout:
        print("fake_server: no client within 60 s", file=sys.stderr)
        return 2
    finally:
        listener.close()
        os.unlink(args.socket)
    sock.settimeout(120)
    conn = Connection(sock, log)
    try:
        FakeNpu(conn, log, args.window, args.clock, args.close_after).serve()
    except (ProtocolError, socket.timeout, ConnectionError) as e:
        print(f"fake_server: {e}", file=sys.stderr)
        return 2
    finally:
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
