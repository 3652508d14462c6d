#!/usr/bin/env python3
"""fill_weights.py: seeded random weights, in place, for a .pt2 archive whose
weights are zero (tools/export_shells.py's shells), so that the outputs of
different kernel paths can be compared on the development machine.

    python3 tools/fill_weights.py [--seed N] FILE.pt2 ...

Every floating tensor of data/weights/ and data/constants/ (f32, f64, f16;
named in their model_*_config.json) is overwritten, in place, with values of
a sensible scale, drawn from a generator seeded by --seed (default 0) and the
tensor's name, so the same command gives the same bytes:

    conv and linear weights (rank >= 2)   uniform, variance 2 / fan_in (He)
    running_var                           uniform(0.5, 1.5)
    running_mean                          uniform(-0.1, 0.1)
    other rank-1 weights (norm scales)    uniform(0.8, 1.2)
    biases and everything else            uniform(-0.05, 0.05)

Integer tensors (num_batches_tracked) are kept.  The archive's entries must
be STORED (uncompressed), as torch.export writes them: each entry's bytes are
replaced by as many bytes, and its CRC-32 is rewritten in the local header,
the data descriptor and the central directory, so the zip stays valid and
nothing moves.  Work on a copy: the file is modified.
"""
import argparse
import json
import math
import random
import struct
import sys
import zipfile
import zlib

# torch.export's ScalarType codes of the floating types: (struct code, size)
FLOATS = {6: ("e", 2), 7: ("f", 4), 8: ("d", 8)}


def values(name, shape, rng):
    """The new values of tensor name of the given shape (a flat list)."""
    n = math.prod(shape)
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "running_var":
        lo, hi = 0.5, 1.5
    elif leaf == "running_mean":
        lo, hi = -0.1, 0.1
    elif leaf == "weight" and len(shape) >= 2:
        fan_in = math.prod(shape[1:])
        h = math.sqrt(3.0 * 2.0 / fan_in)
        lo, hi = -h, h
    elif leaf == "weight" and len(shape) == 1:
        lo, hi = 0.8, 1.2
    else:
        lo, hi = -0.05, 0.05
    r, d = rng.random, hi - lo
    return [lo + d * r() for _ in range(n)]


def central_crcs(f, z):
    """Entry name -> file offset of its CRC-32 in the central directory."""
    out = {}
    f.seek(z.start_dir)
    cd = f.read()
    i = 0
    while i + 46 <= len(cd) and cd[i:i + 4] == b"PK\x01\x02":
        nlen, elen, clen = struct.unpack_from("<HHH", cd, i + 28)
        name = cd[i + 46:i + 46 + nlen].decode("utf-8")
        out[name] = z.start_dir + i + 16
        i += 46 + nlen + elen + clen
    return out


def fill(path, seed):
    with open(path, "r+b") as f:
        z = zipfile.ZipFile(f)
        crcs = central_crcs(f, z)
        done = 0
        for cfg in z.namelist():
            if not (cfg.endswith("/data/weights/model_weights_config.json") or
                    cfg.endswith("/data/constants/model_constants_config.json")):
                continue
            table = json.loads(z.read(cfg)).get("config", {})
            base = cfg.rsplit("/", 1)[0]
            for name, ent in table.items():
                meta = ent["tensor_meta"]
                if meta["dtype"] not in FLOATS or ent.get("use_pickle"):
                    continue
                code, size = FLOATS[meta["dtype"]]
                shape = [s["as_int"] for s in meta["sizes"]]
                info = z.getinfo(base + "/" + ent["path_name"])
                if info.compress_type != zipfile.ZIP_STORED:
                    sys.exit("%s: %s is compressed; only STORED entries can be "
                             "rewritten in place" % (path, info.filename))
                n = math.prod(shape)
                if n * size > info.file_size:
                    sys.exit("%s: %s holds %d bytes, %s needs %d" %
                             (path, info.filename, info.file_size, name, n * size))
                rng = random.Random("%d:%s" % (seed, name))
                data = bytearray(z.read(info.filename))
                data[:n * size] = struct.pack("<%d%s" % (n, code), *values(name, shape, rng))
                crc = zlib.crc32(data) & 0xffffffff
                # the local header: 30 bytes, the name, the extra field
                f.seek(info.header_offset)
                hdr = f.read(30)
                nlen, elen = struct.unpack_from("<HH", hdr, 26)
                start = info.header_offset + 30 + nlen + elen
                f.seek(start)
                f.write(data)
                if struct.unpack_from("<I", hdr, 14)[0] != 0 or not info.flag_bits & 8:
                    f.seek(info.header_offset + 14)
                    f.write(struct.pack("<I", crc))
                if info.flag_bits & 8:   # the data descriptor, signature optional
                    f.seek(start + info.compress_size)
                    sig = f.read(4)
                    f.seek(start + info.compress_size + (4 if sig == b"PK\x07\x08" else 0))
                    f.write(struct.pack("<I", crc))
                f.seek(crcs[info.filename])
                f.write(struct.pack("<I", crc))
                done += 1
        z.close()
    with zipfile.ZipFile(path) as z:   # every CRC checks again
        bad = z.testzip()
        if bad:
            sys.exit("%s: %s fails its CRC after the rewrite" % (path, bad))
    print("%s: %d tensors filled" % (path, done))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    for p in a.files:
        fill(p, a.seed)


if __name__ == "__main__":
    main()
