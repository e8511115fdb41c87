#!/usr/bin/env python3
"""Host (CPU) work before the GPU can run one engine step, read from the CPU
side of a torch.profiler (Kineto) trace: the main thread's step span, its
phases (vLLM gpu_model_runner / SGLang model_runner functions), the time
from the step's start to the forward's launch, and stalls (a single CPU op
of 100 ms or more while the GPU is idle) taken out.

usage: host_trace.py TRACE.json[.gz] ...   (bench/RESULTS-host.md)
"""
import gzip
import json
import re
import sys

PHASES = [r'_update_states$', r'_prepare_inputs$', r'_build_attention_metadata$',
          r'synchronize_input_prep$', r'_model_forward$', r'compute_logits$',
          r'forward_batch_generation$', r'init_new$', r'replay_prepare$',
          r'model_runner\.py\(\d+\): forward$', r'graphs\.py\(\d+\): replay$',
          r'\): sample$', r'copy_to_cpu$']
LAUNCH = [r'graphs\.py\(\d+\): replay$', r'_model_forward$', r'model_runner\.py\(\d+\): forward$']


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        return [e for e in json.load(f)['traceEvents'] if e.get('ph') == 'X']


def main(path):
    ev = load(path)
    step = next(e for e in ev if e.get('cat') == 'user_annotation' and e['name'].startswith('execute'))
    s0, s1, tid = step['ts'], step['ts'] + step['dur'], step['tid']
    main_ = [e for e in ev if e.get('tid') == tid and s0 <= e['ts'] <= s1]
    py = [e for e in main_ if e['cat'] == 'python_function']
    gpu = [e for e in ev if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset')]
    print(path.split('/')[-1])
    print(f"  step {step['name'][:80]}")
    print(f"  cpu span {step['dur'] / 1e3:.3f} ms, python events {len(py)}, GPU busy {sum(k['dur'] for k in gpu) / 1e3:.3f} ms")
    for pat in PHASES:
        hits = [e for e in py if re.search(pat, e['name'])]
        if hits:
            print(f"  {pat:38s} n={len(hits):3d} {sum(e['dur'] for e in hits) / 1e3:9.3f} ms, first at {(hits[0]['ts'] - s0) / 1e3:8.3f} ms")
    # The first of a graph replay or vLLM's _model_forward; else (SGLang's
    # eager extend) the model runner's forward.
    hits = [e for e in py if re.search(LAUNCH[0], e['name']) or re.search(LAUNCH[1], e['name'])]
    if not hits:
        hits = [e for e in py if re.search(LAUNCH[2], e['name'])]
    launch = min(hits, key=lambda e: e['ts'])
    # Stalls: a cpu_op of >= 100 ms before the launch during which the GPU
    # is busy less than 10% of the time (not work of the step).
    stall = 0.0
    for e in main_:
        if e['cat'] != 'cpu_op' or e['dur'] < 100e3 or e['ts'] >= launch['ts']:
            continue
        busy = sum(max(0, min(k['ts'] + k['dur'], e['ts'] + e['dur']) - max(k['ts'], e['ts'])) for k in gpu)
        if busy < 0.1 * e['dur']:
            outer = max((o for o in main_ if o['cat'] == 'cpu_op' and o['ts'] <= e['ts'] and o['ts'] + o['dur'] >= e['ts'] + e['dur']),
                        key=lambda o: o['dur'])
            if outer is e:
                stall += e['dur']
                print(f"  stall: {e['name']} {e['dur'] / 1e3:.3f} ms at {(e['ts'] - s0) / 1e3:.3f} ms, GPU busy {busy / 1e3:.3f} ms of it")
    pre = (launch['ts'] - s0 - stall) / 1e3
    print(f"  host before the launch ({launch['name'][:50]}): {pre:.3f} ms")


if __name__ == '__main__':
    for p in sys.argv[1:]:
        main(p)
