#!/usr/bin/env python3
"""Instruction counts of each kernel's main loop in a cuobjdump -sass dump
(bench/gpu-w4scale.sh's sass.txt.gz, kernels separated by '### NAME'): the
backward branch whose range holds the most HMMA; prints the opcode histogram
and the total per 16-byte weight word (a loop iteration is one stage: per
lane 2 k16 steps, one 16-byte weight word each, for every kernel here).
Usage: sass_loop.py sass.txt.gz [words per iteration, default 2]"""
import collections, gzip, re, sys
words = float(sys.argv[2]) if len(sys.argv) > 2 else 2
kern, cur = {}, None
for line in gzip.open(sys.argv[1], 'rt'):
    if line.startswith('### '):
        cur = line[4:].strip(); kern[cur] = []; continue
    m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
    if m and cur:
        kern[cur].append((int(m.group(1), 16), m.group(2).strip()))
def op(ins):
    ins = re.sub(r'^@!?U?P\w+\s+', '', ins)
    return ins.split()[0].split('.')[0]
for name, code in kern.items():
    best = None
    for a, ins in code:
        b = re.search(r'BRA\s+(?:`\()?0x([0-9a-f]+)', ins)
        if b and int(b.group(1), 16) < a:
            t = int(b.group(1), 16)
            body = [i for x, i in code if t <= x <= a]
            n = sum(op(i) == 'HMMA' for i in body)
            if best is None or n > best[0]:
                best = (n, t, a, body)
    if not best:
        print(name, 'no loop'); continue
    n, t, a, body = best
    h = collections.Counter(op(i) for i in body if op(i) != 'NOP')
    tot = sum(h.values())
    print(f'{name}: loop 0x{t:x}-0x{a:x}: {tot} instructions, {tot/words:.1f} per 16-byte word; ' +
          ', '.join(f'{k} {v}' for k, v in h.most_common()))
