"""Tokenisation time per prompt token, as a serving front end pays it.

Measures, on one CPU thread, how long a byte-level BPE tokenizer takes to
encode (1) the prompts a benchmark client's random dataset sends and (2)
natural English text, per token. The random prompts are built as
InferenceX's client builds them (utils/bench_serving/benchmark_serving.py
sample_random_requests: token ids (offset + i + j) % vocab_size decoded to
text, then re-encoded and trimmed or padded to the target length), and as
vLLM's `vllm bench serve` random dataset does (the same consecutive-id
construction).

Usage: python3 tokbench.py TIKTOKEN_FILE NAME PATTERN_NAME [OUT_JSON]
Tokenizers: a tiktoken BPE file (base64 token, rank per line); encoded
with Hugging Face `tokenizers` (the fast tokenizer vLLM's and SGLang's API
servers call, built from the same ranks by transformers' TikTokenConverter),
through its transformers wrapper (PreTrainedTokenizerFast.__call__), and
with tiktoken.
"""
import base64
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

PATTERNS = {
    # meta-llama/llama-models models/llama3/tokenizer.py (Llama 3.x, also
    # the pattern of DeepSeek-like and Qwen2+ splits in spirit)
    "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    # o200k (gpt-oss's o200k_harmony, Llama 4): models/llama4/tokenizer.py
    "o200k": r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
}


def load_ranks(path):
    ranks = {}
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def hf_from_ranks(path, pattern):
    """The Hugging Face fast tokenizer of the tiktoken file, as Hugging Face
    builds it (transformers' TikTokenConverter: byte-level BPE, the
    tiktoken split pattern), and its transformers wrapper (the object an
    API server calls: tokenizer(prompt) / tokenizer.encode(prompt))."""
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    tk = TikTokenConverter(vocab_file=path, pattern=pattern, additional_special_tokens=[]).converted()
    return tk, PreTrainedTokenizerFast(tokenizer_object=tk)


def natural_text():
    """English prose: the docstrings of the Python standard library."""
    import importlib
    import inspect
    import pkgutil
    import sysconfig
    std = sysconfig.get_paths()["stdlib"]
    parts = []
    for m in sorted(pkgutil.iter_modules([std]), key=lambda m: m.name):
        if m.name.startswith("_") or m.name in ("antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo"):
            continue
        try:
            mod = importlib.import_module(m.name)
        except Exception:
            continue
        if not getattr(mod, "__file__", "") or "site-packages" in mod.__file__:
            continue
        for name, obj in inspect.getmembers(mod):
            d = inspect.getdoc(obj)
            if d and len(d) > 200:
                parts.append(d)
        if sum(map(len, parts)) > 3_000_000:
            break
    return "\n\n".join(parts)


def random_prompts(decode, encode, vocab_size, length, n, seed):
    """InferenceX's sample_random_requests (range_ratio 1: exact length)."""
    rng = np.random.RandomState(seed)
    offsets = rng.randint(0, vocab_size, size=n)
    out = []
    for i in range(n):
        ids = [int((offsets[i] + i + j) % vocab_size) for j in range(length)]
        prompt = decode(ids)
        for _ in range(10):
            ids = encode(prompt)
            if len(ids) < length:
                ids.extend(rng.randint(0, vocab_size, size=length - len(ids)).tolist())
            elif len(ids) > length:
                ids = ids[:length]
            else:
                break
            prompt = decode(ids)
        out.append(prompt)
    return out


def time_encode(encode, texts, repeats=5):
    """Median seconds per token over texts (each timed `repeats` times, best kept)."""
    per_tok = []
    for t in texts:
        best = None
        ntok = 0
        for _ in range(repeats):
            t0 = time.perf_counter()
            ids = encode(t)
            dt = time.perf_counter() - t0
            ntok = len(ids)
            best = dt if best is None or dt < best else best
        per_tok.append(best / max(ntok, 1))
    return statistics.median(per_tok), min(per_tok), max(per_tok)


def main():
    path, name, pat = sys.argv[1], sys.argv[2], sys.argv[3]
    out = sys.argv[4] if len(sys.argv) > 4 else None
    import tiktoken
    import tokenizers
    ranks = load_ranks(path)
    vocab_size = len(ranks)
    enc = tiktoken.Encoding(name=name, pat_str=PATTERNS[pat], mergeable_ranks=ranks, special_tokens={})
    t0 = time.perf_counter()
    hf, hfw = hf_from_ranks(path, PATTERNS[pat])
    build_s = time.perf_counter() - t0
    # cross-check: the two tokenizers give the same ids, piece by piece
    nat = natural_text()
    pieces = [nat[k:k + 2000] for k in range(0, 400000, 2000)]
    agree = sum(1 for t in pieces if enc.encode_ordinary(t) == hf.encode(t, add_special_tokens=False).ids) / len(pieces)

    def hf_encode(t):
        return hf.encode(t, add_special_tokens=False).ids

    def tt_encode(t):
        return enc.encode_ordinary(t)

    def hfw_call(t):
        return hfw(t, add_special_tokens=False)["input_ids"]

    res = {
        "tokenizer": name, "pattern": pat, "vocab": vocab_size,
        "tiktoken": tiktoken.__version__ if hasattr(tiktoken, "__version__") else "?",
        "tokenizers": tokenizers.__version__, "python": platform.python_version(),
        "cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": ") if os.path.exists("/proc/cpuinfo") else platform.processor(),
        "hf_build_s": build_s, "hf_tiktoken_identical_pieces": agree, "rows": [],
    }
    # natural text chunks of about the target length
    lengths = [int(x) for x in os.environ.get("TOK_LENGTHS", "1024,8192").split(",")]
    libs = os.environ.get("TOK_LIBS", "tokenizers,transformers,tiktoken").split(",")
    for length in lengths:
        ids = enc.encode_ordinary(nat)
        chunks = [enc.decode(ids[k:k + length]) for k in range(0, len(ids) - length, length)][:20]
        rp = random_prompts(lambda ids: hf.decode(ids), lambda t: hf.encode(t, add_special_tokens=False).ids,
                            vocab_size, length, 20, 1234 + length)
        for kind, texts in (("natural", chunks), ("random", rp)):
            for lib, fn in (("tokenizers", hf_encode), ("transformers", hfw_call), ("tiktoken", tt_encode)):
                if lib not in libs:
                    continue
                fn(texts[0])  # warm caches the way a running server has them
                med, lo, hi = time_encode(fn, texts)
                nchars = statistics.median(len(t) for t in texts)
                row = {"length": length, "text": kind, "lib": lib, "us_per_token_median": med * 1e6,
                       "us_per_token_min": lo * 1e6, "us_per_token_max": hi * 1e6, "chars_median": nchars,
                       "n": len(texts)}
                res["rows"].append(row)
                print(json.dumps(row), flush=True)
        if length == 1024:
            print("random prompt sample:", repr(rp[0][:300]), flush=True)
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}), flush=True)
    if out:
        with open(out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
