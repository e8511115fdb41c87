"""Compares the SASS of two cubins function by function (cuobjdump -sass
outputs given as files): prints the functions whose code differs and the
count of identical ones. Used by the device runs of branch wt-w4fix to show
which kernels a rebuild changed."""

import re
import sys


def functions(path):
    out, name, lines = {}, None, []
    for line in open(path, errors="replace"):
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            if name:
                out[name] = lines
            name, lines = m.group(1), []
        elif name:
            lines.append(line.strip())
    if name:
        out[name] = lines
    return out


a, b = functions(sys.argv[1]), functions(sys.argv[2])
same = [f for f in a if f in b and a[f] == b[f]]
print("functions: %d and %d; identical SASS: %d" % (len(a), len(b), len(same)))
for f in sorted(set(a) | set(b)):
    if f not in same:
        print("differs:", f, len(a.get(f, [])), len(b.get(f, [])))
