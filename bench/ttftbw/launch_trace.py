#!/usr/bin/env python3
"""Host time per eagerly launched kernel, on the CPU side of a torch.profiler trace.

Usage: launch_trace.py TRACE.json.gz WINDOW
WINDOW is a substring of the python_function or user_annotation event that spans
the forward (the longest match is taken). Within it, on its thread, every event's
self time (its duration less its direct children's) is summed by category:
python_function (the Python the profiler recorded with with_stack, inflated by
its own per-event cost), cpu_op (ATen and custom ops: C++ dispatch, allocation,
library heuristics), cuda_runtime / cuda_driver (the launch API calls, memcpy).
Printed: the launches (runtime/driver calls whose name has "aunch"), the whole
window per launch (an upper bound: it holds the profiler's Python cost), and the
C++ side (cpu_op + runtime + driver self time) per launch: a lower bound of the
host time per kernel, as the unprofiled Python that issues each kernel is left out.
"""
import collections, gzip, json, sys

d = json.load(gzip.open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
win = sorted((e for e in ev if e.get("cat") in ("python_function", "user_annotation")
              and sys.argv[2] in e.get("name", "") and "dur" in e), key=lambda e: -e["dur"])[0]
t0, t1, tid = win["ts"], win["ts"] + win["dur"], win["tid"]
cats = ("python_function", "cpu_op", "cuda_runtime", "cuda_driver", "user_annotation")
es = [e for e in ev if e.get("cat") in cats and e.get("tid") == tid and t0 <= e["ts"] < t1 and "dur" in e]
es.sort(key=lambda e: (e["ts"], -e["dur"]))
child = collections.defaultdict(float)
stack = []
for e in es:
    while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
        stack.pop()
    if stack:
        child[id(stack[-1])] += e["dur"]
    stack.append(e)
self_t = collections.defaultdict(float)
for e in es:
    self_t[e["cat"]] += e["dur"] - child[id(e)]
launches = sum(1 for e in es if e["cat"] in ("cuda_runtime", "cuda_driver") and "aunch" in e["name"])
kern = [e for e in ev if e.get("cat") == "kernel" and t0 <= e["ts"] <= t1 + 1e6]
cpp = self_t["cpu_op"] + self_t["cuda_runtime"] + self_t["cuda_driver"]
print("trace    %s (with_stack %s, record_shapes %s)" % (sys.argv[1].split("/")[-1],
      d.get("with_stack") if isinstance(d, dict) else "?", d.get("record_shapes") if isinstance(d, dict) else "?"))
print("window   %s: %.2f ms, %d launches, %d GPU kernels busy %.2f ms" % (
    win["name"][:70], win["dur"] / 1e3, launches, len(kern), sum(e["dur"] for e in kern) / 1e3))
print("self ms  " + ", ".join("%s %.2f" % (k, v / 1e3) for k, v in sorted(self_t.items())))
print("per launch: whole window %.1f us (upper bound), C++ side %.1f us (lower bound)" % (
    win["dur"] / launches, cpp / launches))
