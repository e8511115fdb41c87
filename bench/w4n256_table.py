#!/usr/bin/env python3
"""Table of a w4small run (run 50) (bench/gpu-w4small.sh's n256.jsonl): per shape and
M, us per launch (CUDA graph replay) and % of 4.23 TB/s of the default plan,
and beside it each other kernel's us and its change against the default
(+: faster), the compute-only diagnostics (_noload) as us alone.
Usage: w4n256_table.py RUN/n256.jsonl[.gz]"""
import json, sys, gzip
rows = [json.loads(l) for l in (gzip.open if sys.argv[1].endswith(".gz") else open)(sys.argv[1], "rt") if l.strip()]
res, default, order = {}, {}, []
for r in rows:
    if not r.get('variant'):
        continue
    k = (r['name'], r['m'])
    if k not in res:
        order.append(k)
    v = r['variant'].replace('w4a16_mt1', '')
    res.setdefault(k, {})[v] = (r['graph_s'] * 1e6, r['bytes'])
    if r.get('default'):
        default[k] = v
cols = []
for k in order:
    for v in res[k]:
        if v != default[k] and v not in cols:
            cols.append(v)
print('| shape | M | MB | default | us | TB/s | % of 4.23 | ' + ' | '.join(c.lstrip('_') for c in cols) + ' |')
print('|---|---:|---:|---|---:|---:|---:|' + '---:|' * len(cols))
for k in order:
    v = res[k]
    d = default[k]
    us, b = v[d]
    line = f'| {k[0]} | {k[1]} | {b/1e6:.1f} | {d.lstrip("_")} | {us:.2f} | {b/(us*1e-6)/1e12:.2f} | {b/(us*1e-6)/4.23e12*100:.0f}% |'
    for c in cols:
        if c in v:
            u = v[c][0]
            line += f' {u:.2f}' + ('' if 'noload' in c else f' ({(us/u-1)*100:+.0f}%)') + ' |'
        else:
            line += ' |'
    print(line)
