"""Compares the machine code of kernels in CUDA cubins byte for byte (each
kernel's .text.<name> ELF section), with no CUDA tools: for every kernel of
the first cubin, its code size there and in each other cubin and whether the
bytes are identical. cuobjdump -sass text can differ where the code does not
(bench/gpu-w4a16-runs/run25: every sm_90 function 'differs' in
bench/sass_diff.py's text comparison, moecast_empty too).
Usage: python3 bench/cubin_text_diff.py NEW.cubin OLD.cubin [OLD2.cubin ...]"""

import struct
import sys


def texts(path):
    b = open(path, "rb").read()
    if b[:4] != b"\x7fELF" or b[4] != 2:
        sys.exit("%s: not a 64-bit ELF cubin" % path)
    shoff = struct.unpack_from("<Q", b, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    hdr = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    so = hdr[shstrndx][4]
    out = {}
    for h in hdr:
        name = b[so + h[0]:b.index(b"\0", so + h[0])].decode()
        if name.startswith(".text."):
            out[name[6:]] = b[h[4]:h[4] + h[5]]
    return out


new = texts(sys.argv[1])
olds = [(p, texts(p)) for p in sys.argv[2:]]
print("kernel".ljust(24), "new bytes", " ".join("| %s: bytes identical" % p for p, _ in olds))
for k in sorted(new):
    row = ["%-24s %9d" % (k, len(new[k]))]
    for _, o in olds:
        row.append("| %9s %-9s" % (len(o[k]), o[k] == new[k]) if k in o else "| %9s %-9s" % ("-", "absent"))
    print(" ".join(row))
