#!/usr/bin/env python3
"""SGLang's eager extend step on its profiler trace, less SGLang's own kernel-shape instrumentation.

Usage: instr_trace.py [TRACE.json.gz]   (default: ../shared/data/traces/tracelens_sglang_Qwen3-8B_prefilldecode.json.gz)

The trace's `step[EXTEND ...]` annotation spans the host issuing the step's kernels. The trace was
recorded with SGLang's kernel_shape_profiler.py on, which wraps each kernel call with Python of its
own (inspect.py stack walks). This script takes the window, the launch API calls in it, and the
inclusive duration of every top-level instrumentation event (kernel_shape_profiler.py or inspect.py,
not nested in another), and prints the host time per launch with and without them. Without them it
is still an upper bound: the profiler's with_stack Python tracing stays in.
"""
import gzip, json, sys

path = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/traces/tracelens_sglang_Qwen3-8B_prefilldecode.json.gz"
d = json.load(gzip.open(path))
ev = d["traceEvents"] if isinstance(d, dict) else d
win = max((e for e in ev if str(e.get("name", "")).startswith("step[EXTEND") and "dur" in e), key=lambda e: e["dur"])
t0, t1, tid = win["ts"], win["ts"] + win["dur"], win["tid"]
cats = ("python_function", "cpu_op", "cuda_runtime", "cuda_driver", "user_annotation")
es = sorted((e for e in ev if e.get("tid") == tid and "dur" in e and t0 <= e["ts"] < t1 and e.get("cat") in cats),
            key=lambda e: (e["ts"], -e["dur"]))
instr = ("kernel_shape_profiler", "inspect.py")
stack, cover, n = [], 0.0, 0
for e in es:
    while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
        stack.pop()
    mine = any(s in e["name"] for s in instr)
    if mine and not any(any(s in a["name"] for s in instr) for a in stack):
        cover += e["dur"]
        n += 1
    stack.append(e)
launches = sum(1 for e in es if e["cat"] in ("cuda_runtime", "cuda_driver") and "aunch" in e["name"])
print("window   %s: %.2f ms, %d launches: %.1f us per launch" % (win["name"], win["dur"] / 1e3, launches, win["dur"] / launches))
print("instrumentation: %d top-level events, %.2f ms inclusive" % (n, cover / 1e3))
print("less instrumentation: %.2f ms, %.1f us per launch (upper bound: with_stack tracing stays in)" % (
    (win["dur"] - cover) / 1e3, (win["dur"] - cover) / launches))
