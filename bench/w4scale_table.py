#!/usr/bin/env python3
"""Table of a w4scale run (bench/gpu-w4scale.sh's tma.jsonl): per shape and M,
us per launch (CUDA graph replay) and % of 4.23 TB/s of the default, of the
post-scaled kernels (_ps: PS 2, _ps1: PS 1) beside today's, and the
compute-only diagnostics (_noload). Usage: w4scale_table.py RUN/tma.jsonl[.gz]"""
import json, sys
import gzip
rows = [json.loads(l) for l in (gzip.open if sys.argv[1].endswith(".gz") else open)(sys.argv[1], "rt") if l.strip()]
res = {}
for r in rows:
    if not r.get('variant'):
        continue
    k = (r['name'], r['m'])
    res.setdefault(k, {})[r['variant'].replace('w4a16_mt1', '')] = (r['graph_s'] * 1e6, r['bytes'])
cols = ['DEFAULT', '_sw_ps', '_sw_ps1', '_s6_sw', '_s6_sw_ps', '_s5_tma', '_s5_tma_ps', '_s5_tma_ps1', '_s6_tma', '_s6_tma_ps', '_s8_tma_ps',
        '_s6_tma16', '_tma16_ps', '_s6_tma16_ps', '_tma_noload', '_tma_noload_ps', '_tma_noload_ps1', '_s8_tma_noload_ps']
print('| shape | M | MB | default | us (% of 4.23) | ' + ' | '.join(c.lstrip('_') for c in cols[1:]) + ' |')
print('|---|---:|---:|---|---:|' + '---:|' * (len(cols) - 1))
for (name, m), v in res.items():
    d = '_sw' if '_sw' in v else '_w4'
    us, b = v[d]
    line = f'| {name} | {m} | {b/1e6:.1f} | {d.lstrip("_")} | {us:.2f} ({b/(us*1e-6)/4.23e12*100:.0f}%) |'
    for c in cols[1:]:
        if c in v:
            u = v[c][0]
            line += f' {u:.2f} ({(us/u-1)*100:+.0f}%) |'
        else:
            line += ' |'
    print(line)
