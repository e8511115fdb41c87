"""The dense table of bench/RESULTS-gpu-w4a16-wg.md: the default plans of run 11 (before) and run 13
(after) against torch.mm bf16 (cuBLAS) of run 12, M >= 512. Run from the repository root:
python3 bench/gpu_w4a16_wg_table.py"""
import json,sys
def load(p,f=lambda r:True):
    return [json.loads(l) for l in open(p) if l.strip()]
torch={}
for p in ['bench/gpu-w4a16-runs/run12/torch.jsonl']:
    for r in load(p):
        if r.get('kernel')=='torch_mm_bf16': torch[(r['name'],r['m'])]=r['graph_s']
old={}
for r in load('bench/gpu-w4a16-runs/run11/default-merged.jsonl'):
    if r.get('default') and 'tokens' not in r and not r['name'].startswith('moe'): old[(r['name'],r['m'])]=r
new={}
for r in load('bench/gpu-w4a16-runs/run13/default.jsonl'):
    if not r['name'].startswith('moe'): new[(r['name'],r['m'])]=r
print('| shape (N x K, group) | M | before: kernel (units/parts) | us | x cuBLAS | after: kernel (units/parts) | us | TFLOP/s | x cuBLAS | cuBLAS bf16 us |')
print('|---|---:|---|---:|---:|---|---:|---:|---:|---:|')
for k,r in new.items():
    if k[1]<512: continue
    o=old.get(k); t=torch.get(k)
    fl=2*r['m']*r['n']*r['k']
    print('| %s (%d x %d, g%d) | %d | %s (%d/%d) | %.1f | %.2f | %s (%d/%d) | %.1f | %.0f | %.2f | %.1f |'%(k[0],r['n'],r['k'],r['group'],k[1],
        o['variant'],o['units_per_block'],o['max_parts'],o['graph_s']*1e6,t/o['graph_s'],
        r['variant'],r['units_per_block'],r['max_parts'],r['graph_s']*1e6,fl/r['graph_s']/1e12,t/r['graph_s'],t*1e6))
