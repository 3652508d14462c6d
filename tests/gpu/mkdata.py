#!/usr/bin/env python3
"""mkdata.py: writes the inputs of tests/gpu/*.ir as .npy files (plain Python,
no numpy): a deterministic pseudo-random sequence (an LCG), so the files can
be remade byte for byte.  Run from this folder: python3 mkdata.py"""
import struct

state = 12345


def rnd():
    global state
    state = (state * 1103515245 + 12345) % (1 << 31)
    return state


def npy(path, descr, shape, data):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape) if len(shape) != 1 else "%d," % shape[0])
    hdr = hdr.replace(", )", ")")
    pad = 64 - (10 + len(hdr) + 1) % 64
    hdr = hdr + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + data)


def floats(n):
    return struct.pack("<%df" % n, *[(rnd() % 20001 - 10000) / 2500.0 for _ in range(n)])


npy("image16.npy", "|u1", (16, 32, 32, 3), bytes(rnd() % 256 for _ in range(16 * 32 * 32 * 3)))
npy("a.npy", "<f4", (12, 5), floats(60))
npy("b.npy", "<f4", (5, 7), floats(35))
npy("c.npy", "<f4", (7,), floats(7))
npy("x.npy", "<f4", (2, 3, 4), floats(24))
npy("w.npy", "<f4", (6, 4), floats(24))
npy("image4.npy", "|u1", (4, 32, 32, 3), bytes(rnd() % 256 for _ in range(4 * 32 * 32 * 3)))
