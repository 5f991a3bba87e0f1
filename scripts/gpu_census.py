#!/usr/bin/env python3
"""A GPU census in one command: what one GPU does with the work ddpsim prices, in ~5 minutes.

    PYTHONPATH=python python3 scripts/gpu_census.py --out census.json [--budget-s 300]
    PYTHONPATH=python /usr/bin/python3 scripts/gpu_census.py --dry-run --out /tmp/census.json

Run by the machine's python3 with CUDA torch 2.x (scripts/gpu-run.sh's last step, or alone: it
needs no ddpsim build). Writes ONE JSON file, rewritten (atomically, ddpsim_torch.records when
importable) after every section, so a run killed by its time limit leaves what it measured:

  {"format": "ddpsim-gpu-census", "format_version": 1, "context": {...}, "dry_run": bool,
   "sections": {name: {"status": "ok"|"partial"|"error"|"timeout"|"skipped", "seconds",
                       "limit_s", "error"?, "results": {...}}}}

Sections (each independent: one that raises or runs out of time is recorded with its error and
the next one runs; each has its own limit, cut to what is left of --budget-s):
 gemm      Sustained GEMM rates (bf16, fp16): a time-based warm-up of back-to-back 8192^3 GEMMs
           (--warmup-s, 20 s: power and clocks settle at the sustained rate) with nvidia-smi's
           clocks/power before and after, then every shape timed with CUDA events, each repeat
           >= --gemm-repeat-ms (25 ms), median of --repeats (3). Shapes: forward, dgrad and
           wgrad of every linear of GPT-2 124M/1.5B (HF Conv1D layouts, tied nn.Linear head)
           and Llama 3 1B/3B/8B/70B (nn.Linear layouts) at 4096 and 8192 tokens, squares
           1024..16384, Azure's odd shapes. `entries`: {"m","n","k","tflops","transa","transb",
           "dtype"}: C[m,n] = op(A) op(B), transa/transb true when that operand is a
           transposed view (ddpsim-calibrate's gemms and the aten capture use the same
           convention: nn.Linear's forward x W^T is transb). scripts/census-to-preset.py
           turns them into a preset's gemm_table.
 sdpa      F.scaled_dot_product_attention forward and backward, bf16, causal and not, head dim
           64 and 128, sequence 512..16384 (batch 16384/seq, 2048/head_dim heads, as
           FlashAttention's benchmark), the backend that ran (kernel names under the
           profiler, and torch.backends.cuda's flags), TFLOP/s counted as FlashAttention's
           benchmark counts: 4*b*h*s^2*d forward, halved when causal, backward 2.5x that.
 memory    Memory-bound ops by size (2^12..2^28 elements, bf16 and fp32): add, mul, clone,
           to(other dtype), layer_norm, Llama's RMSNorm composite, gelu, silu, softmax; bytes
           moved (the op's logical reads and writes) / time -> GB/s; the per-call floor (the
           smallest size); the launch rate (tiny kernels back-to-back: GPU time per kernel and
           CPU time per launch).
 optimizer AdamW for-loop vs foreach vs fused on 1e8 and 1e9 fp32 parameters (4096^2 matrices
           and a 4096 vector each): ms per step, ns per parameter byte, GB/s at 28 bytes per
           parameter (read p, g, m, v; write p, m, v).
 training  Real training steps of the reference models (python/ddpsim_torch/reference: GPT-2
           124M whole, GPT-2 1.5B with 12 of its 48 layers, Llama 3 1B/3B with 4 layers, 8B
           with 2; bf16 parameters as torchtitan's param_dtype, AdamW(fused=True)): median step
           time, and two more steps under torch.profiler with the GPU time per class of kernel
           (gemm, attention, elementwise, optimizer, other); beside them the aten capture
           (ddpsim_torch.aten_capture.capture_training_step) of the same model and batch
           summarised per the same classes (ops, FLOPs, bytes), and the captured FLOPs per
           step over the measured step time.

--dry-run runs every section on the CPU with tiny shapes and iterations (no CUDA; fp32 in
place of fp16, which torch 1.13's CPU matmul lacks; the eager attention composite where torch
has no SDPA) in well under a minute: tests/python/test_gpu_census.py runs it in ctest.
"""

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMAT = "ddpsim-gpu-census"
SECTIONS = ("gemm", "sdpa", "memory", "optimizer", "training")
# Default per-section limits (seconds); their sum stays under the default budget of 300 s.
LIMITS = {"gemm": 120, "sdpa": 35, "memory": 30, "optimizer": 25, "training": 80}

# Every linear of the reference models (python/ddpsim_torch/reference CONFIGS):
# (name, in_features, out_features, layout), layout "conv1d" (HF GPT-2's Conv1D: x @ W, W
# stored [in, out]) or "linear" (nn.Linear: x @ W^T, W stored [out, in]).
MODEL_LINEARS = {
    "gpt2-124m": [("c_attn", 768, 2304, "conv1d"), ("attn.c_proj", 768, 768, "conv1d"),
                  ("c_fc", 768, 3072, "conv1d"), ("mlp.c_proj", 3072, 768, "conv1d"),
                  ("lm_head", 768, 50257, "linear")],
    "gpt2-1.5b": [("c_attn", 1600, 4800, "conv1d"), ("attn.c_proj", 1600, 1600, "conv1d"),
                  ("c_fc", 1600, 6400, "conv1d"), ("mlp.c_proj", 6400, 1600, "conv1d"),
                  ("lm_head", 1600, 50257, "linear")],
    "llama-1b": [("q_proj", 2048, 2048, "linear"), ("k_proj", 2048, 512, "linear"),
                 ("o_proj", 2048, 2048, "linear"), ("gate_proj", 2048, 8192, "linear"),
                 ("down_proj", 8192, 2048, "linear"), ("lm_head", 2048, 128256, "linear")],
    "llama-3b": [("q_proj", 3072, 3072, "linear"), ("k_proj", 3072, 1024, "linear"),
                 ("o_proj", 3072, 3072, "linear"), ("gate_proj", 3072, 8192, "linear"),
                 ("down_proj", 8192, 3072, "linear"), ("lm_head", 3072, 128256, "linear")],
    "llama-8b": [("q_proj", 4096, 4096, "linear"), ("k_proj", 4096, 1024, "linear"),
                 ("o_proj", 4096, 4096, "linear"), ("gate_proj", 4096, 14336, "linear"),
                 ("down_proj", 14336, 4096, "linear"), ("lm_head", 4096, 128256, "linear")],
    "llama-70b": [("q_proj", 8192, 8192, "linear"), ("k_proj", 8192, 1024, "linear"),
                  ("o_proj", 8192, 8192, "linear"), ("gate_proj", 8192, 28672, "linear"),
                  ("down_proj", 28672, 8192, "linear"), ("lm_head", 8192, 128256, "linear")],
}
TOKENS = (4096, 8192)
SQUARES = (1024, 2048, 4096, 8192, 16384)
ALL_TRANSPOSES = ((False, False), (False, True), (True, False), (True, True))
# Azure/AI-benchmarking-guide's cuBLASLt shapes (m, n, k).
AZURE_SHAPES = ((1024, 2145, 1024), (6144, 12288, 12288), (802816, 192, 768))

# Training models: (name, reference module, config overrides, batch, sequence).
TRAIN_MODELS = (("gpt2-124m", "gpt2", {}, 8, 1024),
                ("gpt2-1.5b", "gpt2", {"n_layer": 12}, 8, 1024),
                ("llama-1b", "llama", {"num_hidden_layers": 4}, 2, 4096),
                ("llama-3b", "llama", {"num_hidden_layers": 4}, 2, 4096),
                ("llama-8b", "llama", {"num_hidden_layers": 2}, 2, 4096))
DRY_TRAIN = {"gpt2": {"vocab_size": 512, "n_positions": 64, "n_embd": 64, "n_layer": 2,
                      "n_head": 4},
             "llama": {"vocab_size": 512, "hidden_size": 64, "intermediate_size": 128,
                       "num_hidden_layers": 2, "num_attention_heads": 4,
                       "num_key_value_heads": 2}}

CLASSES = ("gemm", "attention", "elementwise", "optimizer", "other")
# CPU profiles (the dry run) list composite and view ops beside the ops that do the work.
_NOT_KERNELS = {"linear", "matmul", "view", "reshape", "t", "transpose", "expand", "permute",
                "as_strided", "detach", "empty", "empty_strided", "empty_like", "slice",
                "select", "unsqueeze", "squeeze", "split", "_unsafe_view", "_reshape_alias",
                "contiguous", "to", "type_as", "dropout", "softmax", "layer_norm", "cross_entropy",
                "zero_", "zeros", "resolve_conj", "resolve_neg", "lift_fresh", "alias",
                "numpy_T", "chunk", "narrow", "unbind", "flatten", "expand_as", "view_as"}


class SectionTimeout(Exception):
    pass


class Section:
    """A section's clock: `expired()` for loops that stop early (status "partial"); a SIGALRM
    at the limit plus a grace raises SectionTimeout inside a call that does not return."""

    def __init__(self, limit_s):
        self.limit_s = limit_s
        self.start = time.monotonic()

    def left(self):
        return self.limit_s - (time.monotonic() - self.start)

    def expired(self, margin=0.0):
        return self.left() <= margin


def layer_gemms(tokens, fin, fout, layout):
    """[(m, n, k, transa, transb, pass)] of one linear layer's forward, dgrad and wgrad as
    PyTorch's mm/addmm and their autograd formulas run them (C[m,n] = op(A) op(B); trans: that
    operand is a transposed view). nn.Linear: y = x W^T, dx = dy W, dW = dy^T x; HF Conv1D
    (W stored [in, out]): y = x W, dx = dy W^T, dW = x^T dy."""
    t = tokens
    if layout == "linear":
        return [(t, fout, fin, False, True, "fwd"), (t, fin, fout, False, False, "dgrad"),
                (fout, fin, t, True, False, "wgrad")]
    if layout == "conv1d":
        return [(t, fout, fin, False, False, "fwd"), (t, fin, fout, False, True, "dgrad"),
                (fin, fout, t, True, False, "wgrad")]
    raise ValueError(f"unknown layout {layout!r}")


def gemm_shapes(dry):
    """[(m, n, k, transa, transb, use)]: the models' forward/dgrad/wgrad, squares, Azure's."""
    out = []
    tokens = (64,) if dry else TOKENS
    models = MODEL_LINEARS
    if dry:
        models = {"gpt2-124m": MODEL_LINEARS["gpt2-124m"][:2],
                  "llama-8b": MODEL_LINEARS["llama-8b"][:2]}
    for model, linears in models.items():
        for t in tokens:
            for name, fin, fout, layout in linears:
                if dry:
                    fin, fout = max(8, fin // 32), max(8, fout // 32)
                use = f"{model}.{name}@{t}"
                out += [g[:5] + (f"{use}.{g[5]}",) for g in layer_gemms(t, fin, fout, layout)]
    for s in ((64, 128) if dry else SQUARES):
        for ta, tb in (ALL_TRANSPOSES if s in (128, 4096, 8192) else ((False, False),)):
            out.append((s, s, s, ta, tb, f"square{s}"))
    for m, n, k in (((32, 67, 32),) if dry else AZURE_SHAPES):
        out.append((m, n, k, False, False, "azure"))
    return out


def dedup_shapes(shapes):
    """[((m, n, k, ta, tb), [uses])] in first-seen order."""
    seen = {}
    for m, n, k, ta, tb, use in shapes:
        seen.setdefault((m, n, k, ta, tb), []).append(use)
    return list(seen.items())


def nvidia_smi(fields="clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,"
                      "temperature.gpu"):
    """{field: value} of GPU 0 by nvidia-smi, or {"error": why}."""
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader",
                            "-i", "0"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as e:
        return {"error": f"nvidia-smi: {e}"}
    if r.returncode != 0:
        return {"error": f"nvidia-smi exit {r.returncode}: {r.stderr.strip()[:200]}"}
    values = [v.strip() for v in r.stdout.strip().splitlines()[0].split(",")]
    return dict(zip(fields.split(","), values))


class Env:
    """torch, the device and the timers every section uses."""

    def __init__(self, torch, dry):
        self.torch = torch
        self.dry = dry
        self.cuda = not dry and torch.cuda.is_available()
        self.device = torch.device("cuda" if self.cuda else "cpu")

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def time_calls(self, fn, n):
        """Seconds for n back-to-back calls of fn (CUDA events on the GPU)."""
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(n):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return time.perf_counter() - t0

    def per_call(self, fn, repeat_s, repeats, max_calls=100000):
        """(median seconds per call over `repeats` repeats of >= repeat_s each, calls per
        repeat). One call first (warm: allocation, kernel selection), then one to size."""
        fn()
        self.sync()
        one = max(self.time_calls(fn, 1), 1e-7)
        calls = int(min(max_calls, max(1, math.ceil(repeat_s / one))))
        times = [self.time_calls(fn, calls) / calls for _ in range(repeats)]
        return statistics.median(times), calls

    def free(self):
        gc.collect()
        if self.cuda:
            self.torch.cuda.empty_cache()


def dtype_of(torch, name):
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]


def operand(torch, rows, cols, trans, dtype, device):
    """A [rows, cols] operand; a transposed view of a [cols, rows] tensor when trans."""
    if trans:
        return torch.randn(cols, rows, dtype=dtype, device=device).t()
    return torch.randn(rows, cols, dtype=dtype, device=device)


# ---------------------------------------------------------------------------------------------
# 1. GEMMs


def section_gemm(env, args, res, sec):
    torch = env.torch
    dtypes = args.gemm_dtypes or (["bf16", "fp32"] if env.dry else ["bf16", "fp16"])
    if env.cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
    res["dtypes"] = dtypes
    # Warm-up: back-to-back big GEMMs for warmup_s seconds (power and clocks settle).
    res["smi_before_warmup"] = nvidia_smi() if env.cuda else {"error": "no CUDA (dry run)"}
    s = 256 if env.dry else 8192
    res["method"] = (f"{'CUDA events' if env.cuda else 'perf_counter'} around torch.matmul(A, B, "
                     f"out=C), random operands, each repeat >= {args.gemm_repeat_ms} ms, median "
                     f"of {args.repeats}, after {args.warmup_s} s of back-to-back {s}^3 "
                     f"{dtypes[0]} GEMMs")
    a = torch.randn(s, s, dtype=dtype_of(torch, dtypes[0]), device=env.device)
    c = torch.empty_like(a)
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < args.warmup_s and not sec.expired():
        for _ in range(1 if env.dry else 20):
            torch.matmul(a, a, out=c)
        env.sync()
        n += 1 if env.dry else 20
    warm_s = time.monotonic() - t0
    res["warmup"] = {"seconds": round(warm_s, 2), "gemms": n, "shape": [s, s, s],
                     "tflops": 2 * s ** 3 * n / warm_s / 1e12 if warm_s > 0 else None}
    res["smi_after_warmup"] = nvidia_smi() if env.cuda else {"error": "no CUDA (dry run)"}
    del a, c
    shapes = dedup_shapes(gemm_shapes(env.dry))
    res["shapes"] = len(shapes)
    entries, uses, errors = [], {}, []
    res["entries"], res["uses"], res["errors"] = entries, uses, errors
    for dname in dtypes:   # bf16 first: the one that matters when time runs short
        dtype = dtype_of(torch, dname)
        for (m, n, k, ta, tb), names in shapes:
            if sec.expired(margin=2):
                res["truncated"] = f"time limit: stopped at {dname} {m}x{n}x{k}"
                break
            try:
                A = operand(torch, m, k, ta, dtype, env.device)
                B = operand(torch, k, n, tb, dtype, env.device)
                C = torch.empty(m, n, dtype=dtype, device=env.device)
                t, calls = env.per_call(lambda: torch.matmul(A, B, out=C),
                                        args.gemm_repeat_ms / 1e3, args.repeats)
                entries.append({"m": m, "n": n, "k": k, "tflops": 2 * m * n * k / t / 1e12,
                                "transa": ta, "transb": tb, "dtype": dname})
                uses[f"{m}x{n}x{k}{'T' if ta else 'N'}{'T' if tb else 'N'}"] = names
            except Exception as e:   # one shape (e.g. out of memory) does not end the sweep
                errors.append({"m": m, "n": n, "k": k, "transa": ta, "transb": tb,
                               "dtype": dname, "error": one_line(e)})
            finally:
                A = B = C = None
        else:
            continue
        break
    env.free()
    res["smi_after_sweep"] = nvidia_smi() if env.cuda else {"error": "no CUDA (dry run)"}
    if not entries:
        raise RuntimeError(f"no GEMM measured ({len(errors)} errors; first: "
                           f"{errors[0]['error'] if errors else 'none'})")


# ---------------------------------------------------------------------------------------------
# 2. SDPA


def attention_backend(names):
    """The SDPA backend a list of kernel/op names shows."""
    low = [x.lower() for x in names]
    if any("flash" in x for x in low):
        return "flash"
    if any("cudnn" in x for x in low):
        return "cudnn"
    if any("fmha" in x or "efficient_attention" in x or "mem_eff" in x for x in low):
        return "mem_efficient"
    return "math"


def profiled_names(env, fn):
    """Names of the GPU kernels (CPU ops on the CPU) one call of fn runs, under torch.profiler."""
    torch = env.torch
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if env.cuda else [])
    with profile(activities=acts) as prof:
        fn()
        env.sync()
    names = set()
    for e in prof.events():
        if not env.cuda or is_gpu_event(torch, e):
            names.add(e.name)
    return sorted(names)


def is_gpu_event(torch, e):
    dt = getattr(e, "device_type", None)
    return dt is not None and dt != torch.autograd.DeviceType.CPU


def section_sdpa(env, args, res, sec):
    torch = env.torch
    F = torch.nn.functional
    have_sdpa = hasattr(F, "scaled_dot_product_attention")
    if have_sdpa:
        attend = F.scaled_dot_product_attention
    else:
        def attend(q, k, v, is_causal=False):
            w = torch.matmul(q, k.transpose(-1, -2)) / q.shape[-1] ** 0.5
            if is_causal:
                s = q.shape[-2]
                mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
                w = w.masked_fill(mask, float("-inf"))
            return torch.matmul(torch.softmax(w.float(), -1).to(q.dtype), v)
    res["implementation"] = ("torch.nn.functional.scaled_dot_product_attention" if have_sdpa
                             else f"eager matmul-softmax-matmul (torch {torch.__version__} has "
                                  "no scaled_dot_product_attention)")
    flags = {}
    for f in ("flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled",
              "cudnn_sdp_enabled"):
        if hasattr(torch.backends.cuda, f):
            flags[f] = bool(getattr(torch.backends.cuda, f)())
    res["backend_flags"] = flags
    res["flops_rule"] = ("FlashAttention's benchmark: forward 4*b*h*s^2*d, halved when causal; "
                         "backward 2.5x the forward")
    total_tokens, width = (256, 64) if env.dry else (16384, 2048)
    seqs = (32, 64) if env.dry else (512, 1024, 2048, 4096, 8192, 16384)
    dims = (16, 32) if env.dry else (64, 128)
    dtype = torch.bfloat16
    rows = []
    res["rows"] = rows
    for d in dims:
        for s in seqs:
            for causal in (False, True):
                if sec.expired(margin=2):
                    res["truncated"] = f"time limit: stopped at d {d} s {s} causal {causal}"
                    return finish_sdpa(res)
                b, h = max(1, total_tokens // s), width // d
                row = {"batch": b, "heads": h, "seq": s, "head_dim": d, "causal": causal,
                       "dtype": "bf16"}
                rows.append(row)
                try:
                    q, k, v = (torch.randn(b, h, s, d, dtype=dtype, device=env.device,
                                           requires_grad=True) for _ in range(3))
                    fwd_flops = 4 * b * h * s * s * d / (2 if causal else 1)
                    with torch.no_grad():
                        t, _ = env.per_call(lambda: attend(q, k, v, is_causal=causal),
                                            args.gemm_repeat_ms / 1e3, args.repeats)
                    row["fwd_ms"], row["fwd_tflops"] = t * 1e3, fwd_flops / t / 1e12
                    out = attend(q, k, v, is_causal=causal)
                    g = torch.randn_like(out)
                    t, _ = env.per_call(lambda: out.backward(g, retain_graph=True),
                                        args.gemm_repeat_ms / 1e3, args.repeats)
                    row["bwd_ms"], row["bwd_tflops"] = t * 1e3, 2.5 * fwd_flops / t / 1e12
                    names = profiled_names(env, lambda: attend(q, k, v, is_causal=causal)
                                           .backward(g))
                    row["backend"] = attention_backend(names) if have_sdpa else "eager"
                    row["kernels"] = [x for x in names if any(
                        w in x.lower() for w in ("flash", "fmha", "attention", "sdp", "cudnn"))][:8]
                except Exception as e:
                    row["error"] = one_line(e)
                finally:
                    q = k = v = out = g = None
                    env.free()
    finish_sdpa(res)


def finish_sdpa(res):
    if not any("fwd_tflops" in r for r in res["rows"]):
        raise RuntimeError("no attention measured: " +
                           "; ".join(r.get("error", "") for r in res["rows"][:2]))


# ---------------------------------------------------------------------------------------------
# 3. Memory-bound ops


def rms_norm(torch, x, w, eps=1e-5):
    """Llama's RMSNorm (python/ddpsim_torch/reference/llama.py) as a composite."""
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return w * h.to(x.dtype)


def memory_ops(torch, F, dname, n, device):
    """{op: (fn, bytes moved)} at n elements of dtype dname (2-D ops use rows of 1024)."""
    dtype = torch.bfloat16 if dname == "bf16" else torch.float32
    other = torch.float32 if dname == "bf16" else torch.bfloat16
    e = 2 if dname == "bf16" else 4
    x = torch.randn(n, dtype=dtype, device=device)
    y = torch.randn(n, dtype=dtype, device=device)
    cols = min(n, 1024)
    x2 = x.view(-1, cols)
    w = torch.ones(cols, dtype=dtype, device=device)
    bias = torch.zeros(cols, dtype=dtype, device=device)
    return {
        "add": (lambda: x + y, 3 * n * e),
        "mul": (lambda: x * y, 3 * n * e),
        "clone": (lambda: x.clone(), 2 * n * e),
        "cast": (lambda: x.to(other), n * e + n * (6 - e)),
        "layer_norm": (lambda: F.layer_norm(x2, (cols,), w, bias), 2 * n * e),
        "rms_norm": (lambda: rms_norm(torch, x2, w), 2 * n * e),
        "gelu": (lambda: F.gelu(x), 2 * n * e),
        "silu": (lambda: F.silu(x), 2 * n * e),
        "softmax": (lambda: F.softmax(x2, -1), 2 * n * e),
    }


def section_memory(env, args, res, sec):
    torch = env.torch
    F = torch.nn.functional
    exps = range(12, 17) if env.dry else range(12, 29)
    repeat_s = 0.002 if env.dry else 0.008
    res["bytes_rule"] = ("the op's logical bytes: inputs read once, output written once (add, "
                         "mul 3n elements; clone, layer_norm, rms_norm, gelu, silu, softmax 2n; "
                         "cast n of each dtype); rms_norm is Llama's composite (~8 kernels), "
                         "layer_norm and softmax over rows of 1024")
    rows = []
    res["rows"] = rows
    for dname in ("bf16", "fp32"):
        for p in exps:
            if sec.expired(margin=3):
                res["truncated"] = f"time limit: stopped at {dname} 2^{p}"
                break
            n = 1 << p
            try:
                ops = memory_ops(torch, F, dname, n, env.device)
            except Exception as e:
                rows.append({"dtype": dname, "elements": n, "error": one_line(e)})
                break
            for op, (fn, nbytes) in ops.items():
                try:
                    t, calls = env.per_call(fn, repeat_s, args.repeats)
                    rows.append({"op": op, "dtype": dname, "elements": n, "bytes": nbytes,
                                 "us": t * 1e6, "gbytes_per_s": nbytes / t / 1e9})
                except Exception as e:
                    rows.append({"op": op, "dtype": dname, "elements": n, "error": one_line(e)})
            ops = None
            env.free()
    ok = [r for r in rows if "us" in r]
    if not ok:
        raise RuntimeError("no memory-bound op measured")
    smallest = min(r["elements"] for r in ok)
    res["floor_us"] = {f"{r['op']}/{r['dtype']}": r["us"] for r in ok
                       if r["elements"] == smallest}
    # Launch rate: many tiny kernels back-to-back.
    tiny = torch.zeros(1, device=env.device)
    n = 200 if env.dry else 20000
    tiny.add_(1)
    env.sync()
    t0 = time.perf_counter()
    gpu_s = env.time_calls(lambda: tiny.add_(1), n)
    wall = time.perf_counter() - t0
    res["launch"] = {"kernels": n, "op": "add_ on one element",
                     "us_per_kernel": gpu_s / n * 1e6, "us_per_call_wall": wall / n * 1e6}


# ---------------------------------------------------------------------------------------------
# 4. Optimizer


def section_optimizer(env, args, res, sec):
    torch = env.torch
    import inspect
    sizes = (1e5,) if env.dry else (1e8, 1e9)
    side = 256 if env.dry else 4096
    params_sig = inspect.signature(torch.optim.AdamW.__init__).parameters
    impls = {"for_loop": {"foreach": False}, "foreach": {"foreach": True},
             "fused": {"fused": True}}
    res["bytes_rule"] = "28 bytes per fp32 parameter: read p, g, m, v (16), write p, m, v (12)"
    rows = []
    res["rows"] = rows
    for total in sizes:
        mats = max(1, math.ceil(total / (side * side + side)))
        try:
            params = []
            for _ in range(mats):
                params.append(torch.nn.Parameter(torch.randn(side, side, device=env.device)))
                params.append(torch.nn.Parameter(torch.randn(side, device=env.device)))
            for p in params:
                p.grad = torch.randn_like(p)
        except Exception as e:
            rows.append({"parameters_asked": total, "error": one_line(e)})
            params = None
            env.free()
            continue
        count = sum(p.numel() for p in params)
        for impl, kw in impls.items():
            row = {"impl": impl, "parameters": count, "tensors": len(params), "dtype": "fp32"}
            rows.append(row)
            if sec.expired(margin=2):
                row["error"] = "skipped: section time limit"
                continue
            try:
                missing = [k for k in kw if k not in params_sig]
                if missing:
                    raise RuntimeError(f"torch {torch.__version__}'s AdamW has no {missing[0]}=")
                opt = torch.optim.AdamW(params, lr=1e-4, **kw)
                steps = 2 if env.dry else 5
                for _ in range(2):   # warm-up: state allocation
                    opt.step()
                env.sync()
                times = [env.time_calls(opt.step, 1) for _ in range(steps)]
                t = statistics.median(times)
                row.update({"ms_per_step": t * 1e3, "ns_per_param": t / count * 1e9,
                            "ns_per_param_byte": t / (4 * count) * 1e9,
                            "gbytes_per_s": 28 * count / t / 1e9})
            except Exception as e:
                row["error"] = one_line(e)
            finally:
                opt = None
                env.free()
        params = None
        env.free()
    if not any("ms_per_step" in r for r in rows):
        raise RuntimeError("no optimizer step measured")


# ---------------------------------------------------------------------------------------------
# 5. Training steps vs the aten capture


def kernel_class(name):
    """gemm, attention, elementwise, optimizer or other, from a GPU kernel's or aten op's name."""
    low = name.lower()
    if any(w in low for w in ("flash", "fmha", "attention", "sdpa", "sdp_")):
        return "attention"
    if any(w in low for w in ("adam", "multi_tensor_apply", "_foreach_")):
        return "optimizer"
    if any(w in low for w in ("memcpy", "memset")):
        return "other"
    if any(w in low for w in ("gemm", "cutlass", "xmma", "nvjet", "cublas", "s16816", "s1688",
                              "wgmma", "sgemm", "hgemm")):
        return "gemm"
    base = low.split("::")[-1]
    if base in ("mm", "addmm", "bmm", "baddbmm", "mv", "addmv", "dot"):
        return "gemm"
    return "elementwise"


def capture_class(op):
    """The same classes for an aten capture op record (None: views and allocations)."""
    if op["phase"] == "optimizer":
        return "optimizer"
    kind = op["kind"]
    if kind in ("gemm", "conv"):
        return "gemm"
    if kind == "attention":
        return "attention"
    if kind in ("elementwise", "reduction", "copy", "fill"):
        return "elementwise"
    return None


def profile_classes(env, step, steps):
    """{class: {"kernels", "ms"}} per step of `steps` profiled steps: GPU kernels by name on a
    GPU, aten ops' self CPU time on the CPU."""
    torch = env.torch
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if env.cuda else [])
    with profile(activities=acts) as prof:
        for _ in range(steps):
            step()
        env.sync()
    out = {c: {"kernels": 0, "ms": 0.0} for c in CLASSES}
    top = {}
    if env.cuda:
        for e in prof.events():
            if not is_gpu_event(torch, e):
                continue
            us = e.time_range.elapsed_us()
            c = kernel_class(e.name)
            out[c]["kernels"] += 1
            out[c]["ms"] += us / 1e3
            top[e.name] = top.get(e.name, 0.0) + us / 1e3
    else:
        for e in prof.key_averages():
            if not e.key.startswith("aten::") or e.key[6:] in _NOT_KERNELS:
                continue
            c = kernel_class(e.key)
            out[c]["kernels"] += e.count
            out[c]["ms"] += e.self_cpu_time_total / 1e3
            top[e.key] = top.get(e.key, 0.0) + e.self_cpu_time_total / 1e3
    for c in out.values():
        c["kernels"] /= steps
        c["ms"] /= steps
    heavy = sorted(top.items(), key=lambda kv: -kv[1])[:12]
    return out, [{"name": k[:160], "ms_per_step": v / steps} for k, v in heavy]


def capture_classes(ops):
    out = {c: {"ops": 0, "flops": 0, "bytes": 0} for c in CLASSES}
    for op in ops:
        c = capture_class(op)
        if c is None:
            continue
        out[c]["ops"] += 1
        out[c]["flops"] += op["flops"]
        out[c]["bytes"] += op["bytes_read"] + op["bytes_written"]
    return out


def train_one(env, args, name, module, overrides, batch, seq, sec):
    torch = env.torch
    import importlib
    ref = importlib.import_module(f"ddpsim_torch.reference.{module}")
    from ddpsim_torch import aten_capture
    if env.dry:
        overrides = dict(DRY_TRAIN[module])
        batch, seq = 2, 32
        name += " (dry-run shapes)"
    c = ref.config(name.split(" ")[0], **overrides)
    row = {"model": name, "config": {k: v for k, v in c.items() if k != "dtype"},
           "batch": batch, "seq": seq, "param_dtype": "bf16", "optimizer": "AdamW"}
    torch.manual_seed(0)
    # Built on the device where torch can (torch.device as a context, 2.0+): a CPU init of
    # a billion parameters would take much of the section's time.
    where = (env.device if env.cuda and hasattr(torch.device, "__enter__")
             else contextlib.nullcontext())
    with where:
        model = ref.model(c)
    model = model.to(device=env.device, dtype=torch.bfloat16)
    params = [p for p in model.parameters() if p.requires_grad]
    row["parameters"] = sum(p.numel() for p in params)
    import inspect
    fused = "fused" in inspect.signature(torch.optim.AdamW.__init__).parameters and env.cuda
    opt = torch.optim.AdamW(params, lr=1e-4, **({"fused": True} if fused else {}))
    row["optimizer"] = "AdamW(fused=True)" if fused else "AdamW (torch's default for the device)"
    ids, labels = (t.to(env.device) for t in ref.inputs(c, batch, seq))

    def step():
        loss = model(ids, labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(1 if env.dry else 3):
        step()
    env.sync()
    times = []
    for _ in range(2 if env.dry else 8):
        times.append(env.time_calls(step, 1))
        if sec.expired(margin=5):
            break
    row["step_ms"] = statistics.median(times) * 1e3
    row["steps_timed"] = len(times)
    prof_steps = 1 if env.dry else 2
    row["profiled"], row["top_kernels"] = profile_classes(env, step, prof_steps)
    row["profiled_source"] = ("GPU kernels (torch.profiler CUDA activity, by kernel name)"
                              if env.cuda else "aten ops' self CPU time (no CUDA: dry run)")
    model = opt = params = ids = labels = None
    env.free()
    # The aten capture of the same model and batch (fake tensors on the same device type).
    dev = env.device.type
    try:
        cap = aten_capture.capture_training_step(
            lambda: ref.model(c).to(device=dev, dtype=torch.bfloat16),
            lambda: tuple(t.to(dev) for t in ref.inputs(c, batch, seq)))
        ops = cap["ops"]
        row["capture"] = {"device": dev, "optimizer": "AdamW (capture's default)",
                          "seconds": cap["seconds"], "ops": len(ops),
                          "classes": capture_classes(ops)}
        flops = sum(op["flops"] for op in ops if op["kind"] in ("gemm", "conv", "attention"))
        row["capture"]["gemm_attention_flops"] = flops
        row["achieved_tflops"] = flops / (row["step_ms"] / 1e3) / 1e12
    except Exception as e:
        row["capture"] = {"error": one_line(e)}
    return row


def section_training(env, args, res, sec):
    rows = []
    res["rows"] = rows
    res["classes"] = list(CLASSES)
    models = TRAIN_MODELS
    if args.models:
        wanted = args.models.split(",")
        models = [m for m in TRAIN_MODELS if m[0] in wanted]
    for name, module, overrides, batch, seq in models:
        if sec.expired(margin=10):
            rows.append({"model": name, "error": "skipped: section time limit"})
            res["truncated"] = f"time limit: stopped before {name}"
            continue
        try:
            rows.append(train_one(env, args, name, module, overrides, batch, seq, sec))
        except SectionTimeout:
            raise
        except Exception as e:
            rows.append({"model": name, "error": one_line(e)})
        env.free()
    if not any("step_ms" in r for r in rows):
        raise RuntimeError("no training step measured: " +
                           "; ".join(r.get("error", "") for r in rows[:2]))


# ---------------------------------------------------------------------------------------------


def one_line(e):
    return " ".join(f"{type(e).__name__}: {e}".split())[:500]


def context(torch, env, args):
    ctx = {"tool": "scripts/gpu_census.py", "command": " ".join([sys.argv[0]] + sys.argv[1:]),
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "host": platform.node() or "unknown", "python": platform.python_version(),
           "torch_version": torch.__version__, "cuda_version": torch.version.cuda,
           "device": str(env.device)}
    try:
        from ddpsim_torch.records import git_revision
        ctx["git_revision"] = git_revision()
    except ImportError:
        try:
            ctx["git_revision"] = subprocess.run(
                ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                text=True, timeout=10).stdout.strip() or "unknown"
        except (OSError, subprocess.SubprocessError):
            ctx["git_revision"] = "unknown"
    if env.cuda:
        p = torch.cuda.get_device_properties(0)
        props = {}
        for k in ("name", "major", "minor", "total_memory", "multi_processor_count",
                  "clock_rate", "memory_clock_rate", "memory_bus_width", "L2_cache_size",
                  "max_threads_per_multi_processor", "uuid"):
            if hasattr(p, k):
                v = getattr(p, k)
                props[k] = v if isinstance(v, (int, float, str, bool)) else str(v)
        ctx["gpu"] = props
        ctx["gpu_name"] = p.name
        ctx["cudnn_version"] = torch.backends.cudnn.version()
        ctx["nvidia_smi"] = nvidia_smi("name,driver_version,memory.total,clocks.max.sm,"
                                       "clocks.max.mem,power.limit")
        ctx["driver"] = ctx["nvidia_smi"].get("driver_version", "unknown")
    else:
        ctx["gpu_name"] = None
        ctx["cpu"] = platform.processor() or platform.machine()
    return ctx


def write(path, doc):
    try:
        from ddpsim_torch.records import write_json_atomic
    except ImportError:
        write_json_atomic = None
    if write_json_atomic is not None:
        write_json_atomic(path, doc)
        return
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def clean(value):
    """NaN and infinity (which ddpsim's readers refuse) as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def run_section(name, fn, env, args, limit_s):
    rec = {"status": "ok", "limit_s": round(limit_s, 1), "results": {}}
    sec = Section(limit_s)
    grace = 5 if env.dry else max(10, 0.1 * limit_s)

    def on_alarm(signum, frame):
        raise SectionTimeout(f"section {name} ran past its limit {limit_s:.0f} s + {grace:.0f} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s + grace)
    try:
        if args.inject_error == name:
            raise RuntimeError(f"--inject-error {name}: this section raised on purpose")
        fn(env, args, rec["results"], sec)
        if rec["results"].get("truncated"):
            rec["status"] = "partial"
    except SectionTimeout as e:
        rec["status"], rec["error"] = "timeout", str(e)
    except Exception as e:
        rec["status"], rec["error"] = "error", one_line(e)
        rec["traceback"] = traceback.format_exc().splitlines()[-6:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    rec["seconds"] = round(time.monotonic() - sec.start, 2)
    try:
        env.free()
    except Exception:
        pass
    return rec


FUNCS = {"gemm": section_gemm, "sdpa": section_sdpa, "memory": section_memory,
         "optimizer": section_optimizer, "training": section_training}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="the census JSON to write")
    ap.add_argument("--budget-s", type=float, default=300, help="the whole run's limit")
    ap.add_argument("--dry-run", action="store_true",
                    help="every section on the CPU with tiny shapes (a test of the script)")
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help=f"comma-separated, of {','.join(SECTIONS)}")
    ap.add_argument("--limit", action="append", default=[], metavar="SECTION=SECONDS",
                    help="a section's own limit (defaults: " +
                    ", ".join(f"{k} {v}" for k, v in LIMITS.items()) + ")")
    ap.add_argument("--warmup-s", type=float, default=None,
                    help="GEMM warm-up seconds (20; dry run 0.2)")
    ap.add_argument("--gemm-repeat-ms", type=float, default=None,
                    help="minimum ms per timed repeat (25; dry run 2)")
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats per shape (median)")
    ap.add_argument("--gemm-dtypes", default=None,
                    help="comma-separated (bf16,fp16; dry run bf16,fp32)")
    ap.add_argument("--models", default=None, help="training: comma-separated model names")
    ap.add_argument("--inject-error", default=None, metavar="SECTION",
                    help="that section raises at its start (the test of a failing section)")
    args = ap.parse_args(argv)
    if args.warmup_s is None:
        args.warmup_s = 0.2 if args.dry_run else 20.0
    if args.gemm_repeat_ms is None:
        args.gemm_repeat_ms = 2.0 if args.dry_run else 25.0
    if args.gemm_dtypes:
        args.gemm_dtypes = args.gemm_dtypes.split(",")
    limits = dict(LIMITS)
    if args.dry_run:
        limits = {k: 20 for k in LIMITS}
    for item in args.limit:
        k, _, v = item.partition("=")
        if k not in limits:
            ap.error(f"--limit {item}: no section {k!r}")
        limits[k] = float(v)
    wanted = [s for s in args.sections.split(",") if s]
    for s in wanted:
        if s not in SECTIONS:
            ap.error(f"--sections: no section {s!r} ({', '.join(SECTIONS)})")
    started = time.monotonic()
    try:
        import torch
    except ImportError as e:
        print(f"gpu_census: torch is not importable by {sys.executable} ({e})", file=sys.stderr)
        return 2
    env = Env(torch, args.dry_run)
    if not args.dry_run and not env.cuda:
        print(f"gpu_census: no CUDA device (torch {torch.__version__}, CUDA "
              f"{torch.version.cuda}); --dry-run runs on the CPU", file=sys.stderr)
        return 77
    doc = {"format": FORMAT, "format_version": 1, "context": context(torch, env, args),
           "dry_run": bool(args.dry_run), "budget_s": args.budget_s, "sections": {}}
    for name in wanted:
        left = args.budget_s - (time.monotonic() - started)
        if left < 3:
            doc["sections"][name] = {"status": "skipped", "error": "global budget spent",
                                     "seconds": 0, "limit_s": 0, "results": {}}
        else:
            doc["sections"][name] = run_section(name, FUNCS[name], env, args,
                                                min(limits[name], left))
        s = doc["sections"][name]
        print(f"gpu_census: {name}: {s['status']} in {s['seconds']} s"
              + (f" ({s['error']})" if s.get("error") else ""), flush=True)
        doc["seconds"] = round(time.monotonic() - started, 2)
        write(args.out, clean(doc))
    failed = [n for n, s in doc["sections"].items() if s["status"] not in ("ok", "partial")]
    print(f"gpu_census: wrote {args.out} in {doc['seconds']} s; "
          f"{'failed sections: ' + ', '.join(failed) if failed else 'every section measured'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
