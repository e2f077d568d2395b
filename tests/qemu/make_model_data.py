#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns a Vela-compiled model and its golden files into the data of the stream-running firmware
(firmware/run_stream.c): model_data.h (sizes, tensor places, expected NPU cycles) and
model_data.S (the command stream, the constants, the input and the golden output, by .incbin).

Usage: make_model_data.py ETHOSU_EMU MODEL_VELA_TFLITE GOLDEN_DIR OUT_DIR INFERENCES [RUN_OPTION...]
RUN_OPTIONs go to `ethosu-emu run --timing-only` for the expected cycles (the memory mode that
matches the firmware's REGIONCFG: the constants on AXI1, the arena and fast scratch on AXI0). Reads the tflite's first ethos-u operator (inputs 0 and 1: the driver payload and the constants)
with a minimal flatbuffer reader, and the tensor places and cycles from `ethosu-emu info/run --json`.
"""
import json
import os
import struct
import subprocess
import sys


class Table:
    """A flatbuffer table: the fields this script reads."""

    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos
        self.vtable = pos - struct.unpack_from('<i', buf, pos)[0]
        self.vtable_size = struct.unpack_from('<H', buf, self.vtable)[0]

    def _offset(self, field):
        at = 4 + 2 * field
        return struct.unpack_from('<H', self.buf, self.vtable + at)[0] if at < self.vtable_size else 0

    def scalar(self, field, fmt):
        off = self._offset(field)
        return struct.unpack_from('<' + fmt, self.buf, self.pos + off)[0] if off else 0

    def _vector(self, field):
        off = self._offset(field)
        if not off:
            return 0, 0
        at = self.pos + off
        start = at + struct.unpack_from('<I', self.buf, at)[0]
        return start + 4, struct.unpack_from('<I', self.buf, start)[0]

    def tables(self, field):
        start, n = self._vector(field)
        return [Table(self.buf, start + 4 * i + struct.unpack_from('<I', self.buf, start + 4 * i)[0]) for i in range(n)]

    def bytes(self, field):
        start, n = self._vector(field)
        return self.buf[start:start + n]

    def ints(self, field):
        start, n = self._vector(field)
        return list(struct.unpack_from('<%di' % n, self.buf, start))


def ethos_u_inputs(path):
    """The data of the first ethos-u operator's inputs (Model: 1 operator_codes, 2 subgraphs, 4 buffers)."""
    buf = open(path, 'rb').read()
    model = Table(buf, struct.unpack_from('<I', buf, 0)[0])
    codes, buffers = model.tables(1), model.tables(4)

    def data(index):
        b = buffers[index]
        inline = b.bytes(0)
        if inline:
            return inline
        offset, size = b.scalar(1, 'Q'), b.scalar(2, 'Q')
        return buf[offset:offset + size]

    for subgraph in model.tables(2):
        tensors = subgraph.tables(0)
        for op in subgraph.tables(3):
            if codes[op.scalar(0, 'I')].bytes(1) == b'ethos-u':
                return [data(tensors[t].scalar(2, 'I')) for t in op.ints(1)]
    raise SystemExit(f'{path}: no ethos-u operator')


def command_stream(payload):
    """The register command stream of a COP1 driver payload (its header and its blocks)."""
    words = struct.unpack_from('<%dI' % (len(payload) // 4), payload)
    if words[0] != 0x31504F43:
        raise SystemExit('not a COP1 payload')
    at = 4
    while at < len(words):
        kind, length = words[at] & 0xFF, words[at] >> 16
        if kind == 2:
            return payload[4 * (at + 1):4 * (at + 1 + length)]
        at += 1 if kind == 5 else 1 + length
    raise SystemExit('no command stream in the payload')


def write_blobs(out, blobs, assembly):
    """Each blob as OUT/NAME.bin, and OUT/ASSEMBLY placing them in the firmware's .model section as
    model_NAME."""
    for name, data in blobs.items():
        open(os.path.join(out, name + '.bin'), 'wb').write(data)
    with open(os.path.join(out, assembly), 'w') as s:
        for name in blobs:
            s.write('    .section .model, "a"\n    .balign 16\n    .global model_%s\nmodel_%s:\n    .incbin "%s"\n'
                    % (name, name, os.path.join(out, name + '.bin')))


def byte_counts(blobs):
    """The header's NAME_BYTES of each blob."""
    return ''.join('#define %s_BYTES %du\n' % (name.upper(), len(data)) for name, data in blobs.items())


def main():
    emu, model, golden, out, inferences = sys.argv[1:6]
    run_options = sys.argv[6:]
    payload, constants = ethos_u_inputs(model)[:2]
    info = json.loads(subprocess.check_output([emu, 'info', '--json', model]))
    run = json.loads(subprocess.check_output([emu, 'run', '--timing-only', '--json', model] + run_options))
    regions = {r['index']: r['size'] for r in info['streams'][0]['regions']}
    tensor_in, tensor_out = info['inputs'][0], info['outputs'][0]
    os.makedirs(out, exist_ok=True)
    blobs = {'stream': command_stream(payload), 'constants': constants,
             'input': open(os.path.join(golden, 'seed1.in0.bin'), 'rb').read(),
             'golden': open(os.path.join(golden, 'seed1.out0.bin'), 'rb').read()}
    write_blobs(out, blobs, 'model_data.S')
    with open(os.path.join(out, 'model_data.h'), 'w') as h:
        h.write('/* Generated by make_model_data.py from %s */\n' % os.path.basename(os.path.dirname(os.path.dirname(model))))
        h.write(byte_counts(blobs))
        h.write('#define ARENA_BYTES %du\n#define FAST_BYTES %du\n' % (max(regions.get(1, 16), 16), max(regions.get(2, 16), 16)))
        for tag, t in (('IN', tensor_in), ('OUT', tensor_out)):
            h.write('#define %s_REGION %du\n#define %s_OFFSET %du\n' % (tag, t['region'], tag, t['offset']))
        h.write('#define EXPECTED_CYCLES %du\n#define INFERENCES %du\n' % (run['cycles']['total'], int(inferences)))


if __name__ == '__main__':
    main()
