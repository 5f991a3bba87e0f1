"""One rank of the torch runner: the module wrapped in DistributedDataParallel with the point's
arguments, its training steps, and what each step measured.

  record = run_rank(cfg, rank, world)   # inside an initialised process group (cfg.backend)
  # {"rank", "steps": [{step_time_s, forward_time_s, backward_time_s, optimizer_time_s,
  #                     comm_time_s, exposed_comm_s, loss, buckets: [...],
  #                     minor_faults: {forward, backward, optimizer}}, ...],
  #  "memory": {peak_memory_bytes, device_used_bytes} (cfg.device "cuda" only)}

On the CPU the phases are timed with the host clock. With cfg.device "cuda" they are timed with
CUDA events recorded on the current stream between the phases, read once the step's optimizer
finished (calibrate/exec/gpt2_cuda.cu times its phases the same way), the forward and loss run
under torch.autocast(bf16) for training.precision amp_bf16, and no bucket is timed (an NCCL
future completes when its work is enqueued, not when it ends: the comm hook would time the
host).
"""

import contextlib
import gzip
import math
import os
import resource
import shutil

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from calibrate.torch.timed_hooks import BucketRecorder, now_ns
from calibrate.torch.workload_model import build_model, check_matches, move_to
from ddpsim_torch.records import atomic_output


def minor_faults():
    """Minor page faults of this process so far (every thread: compute and gloo's)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def build(cfg, rank):
    """The rank's module (rank-dependent weights: DDP's constructor broadcasts rank 0's),
    input generator and loss; raises Unsupported unless the module is ddpsim's workload."""
    torch.manual_seed(cfg.seed * 1000003 + rank + 1)
    model, inputs, loss = build_model(cfg.workload, cfg.source)
    check_matches(model, cfg.workload)
    return model, inputs, loss


def optimizer_impl_kwargs(cfg):
    """torch.optim's implementation arguments for the point. torch 1.13 defaults foreach=None to
    the for-loop implementation on CPU (torch/optim/adam.py:286-288, sgd.py:190-192,
    adamw.py:207-209), and so does torch 2.x for CPU tensors: the CPU runner passes nothing. On
    CUDA training.optimizer_impl picks it: fused -> fused=True for Adam/AdamW (one kernel over all
    tensors; SGD, whose fused form is newer, then runs foreach), foreach -> foreach=True (torch
    2.x's own CUDA default, torch/optim/optimizer.py _default_to_fused_or_foreach), for_loop ->
    foreach=False."""
    if cfg.device != "cuda":
        return {}
    if cfg.optimizer_impl == "fused" and cfg.optimizer in ("adam", "adamw"):
        return {"fused": True}
    return {"foreach": cfg.optimizer_impl != "for_loop"}


def _optimizer(cfg, params):
    impl = optimizer_impl_kwargs(cfg)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, **impl)
    if cfg.optimizer == "momentum":
        return torch.optim.SGD(params, lr=cfg.lr, momentum=0.9, **impl)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr, **impl)
    return torch.optim.AdamW(params, lr=cfg.lr, **impl)  # weight_decay 0.01 by default


# --min-seconds lengthens a run to at most this many times its --steps (a tiny test model's
# millisecond steps would otherwise ask for thousands).
MAX_EXTENSION = 20


def measured_step_count(cfg, last_warmup_step_s):
    """How many steps a rank measures: cfg.steps, or, with cfg.min_seconds, as many as fill that
    many seconds at the last warm-up step's pace, ceil(min_seconds / step), at most MAX_EXTENSION
    x cfg.steps. A run's median over a fraction of a second (ten 50 ms steps) moves with one slow
    half-second of this machine; over seconds such an episode is one sample among many."""
    if cfg.min_seconds <= 0 or not last_warmup_step_s > 0:
        return cfg.steps
    want = math.ceil(cfg.min_seconds / last_warmup_step_s)
    return max(cfg.steps, min(want, MAX_EXTENSION * cfg.steps))


def _agreed(count, device):
    """The largest of the ranks' counts (each timed its own warm-up): every rank must run the
    same number of steps, or DDP's all-reduces would wait for a peer that stopped."""
    t = torch.tensor([count], dtype=torch.int64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return int(t.item())


_TRACE_WARMUP, _TRACE_ACTIVE = 1, 2  # --profile-trace: steps the profiler warms up on, records


def _start_profiler(cuda, raw_path):
    """torch.profiler over the steps after the measured ones: one warm-up step, then two
    recorded as ProfilerStep#N (profiler.step() after each), with CPU ops, their Python stacks and
    nn.Module regions (with_modules), and the CUDA kernels on a GPU. One cycle (repeat=1): at the
    end of the second recorded step the schedule turns to NONE, which stops the trace and calls
    on_trace_ready (torch/profiler/profiler.py, profile._transit_action: RECORD_AND_SAVE ->
    NONE is [stop_trace, _trace_ready]); with cycles repeating, the next one's WARMUP would
    prepare a new, empty trace in its place."""
    from torch.profiler import ProfilerActivity, profile, schedule
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    prof = profile(activities=activities,
                   schedule=schedule(wait=0, warmup=_TRACE_WARMUP, active=_TRACE_ACTIVE,
                                     repeat=1),
                   on_trace_ready=lambda p: p.export_chrome_trace(raw_path),
                   with_stack=True, with_modules=True)
    prof.start()
    return prof


def _raw_trace_path(path):
    return path + ".tmp.json"


def _finish_trace(path):
    """The exported trace written to `path` (gzip-compressed when it ends in .gz) through
    ddpsim_torch.records.atomic_output: the file exists only when complete."""
    raw = _raw_trace_path(path)
    if not os.path.exists(raw):
        raise RuntimeError(f"torch.profiler wrote no trace for {path}")
    try:
        with open(raw, "rb") as src, atomic_output(path, "wb") as dst:
            if path.endswith(".gz"):
                with gzip.GzipFile(fileobj=dst, mode="wb") as packed:
                    shutil.copyfileobj(src, packed)
            else:
                shutil.copyfileobj(src, dst)
    finally:
        os.unlink(raw)


class _Clock:
    """Phase marks: host nanoseconds on the CPU, CUDA events on the current stream on a GPU
    (elapsed times readable once settle() waited for the stream)."""

    def __init__(self, cuda):
        self.cuda = cuda

    def mark(self):
        if not self.cuda:
            return now_ns()
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    def settle(self):
        if self.cuda:
            torch.cuda.synchronize()

    def ns(self, a, b):
        return round(a.elapsed_time(b) * 1e6) if self.cuda else b - a


def run_rank(cfg, rank, world):
    cuda = cfg.device == "cuda"
    device = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
    model, inputs, loss_fn = build(cfg, rank)
    model = move_to(model, device)
    recorder = None
    if cfg.ddp:
        if cfg.first_bucket_mb > 0:
            # "User can set dist._DEFAULT_FIRST_BUCKET_BYTES to tune DDP first bucket"
            # (torch/nn/parallel/distributed.py:748-750).
            dist._DEFAULT_FIRST_BUCKET_BYTES = int(cfg.first_bucket_mb * 1024 * 1024)
        model = DistributedDataParallel(
            model, device_ids=[device.index] if cuda else None, bucket_cap_mb=cfg.bucket_cap_mb,
            gradient_as_bucket_view=cfg.gradient_as_bucket_view,
            broadcast_buffers=cfg.broadcast_buffers,
            find_unused_parameters=cfg.find_unused_parameters, static_graph=cfg.static_graph)
        if cfg.timing_hook and not cuda:
            recorder = BucketRecorder(world, cfg.hook, cfg.overlap)
            model.register_comm_hook(None, recorder.hook)
    elif cfg.independent:
        # The baseline starts from rank 0's weights too (calibrate/exec --independent).
        for p in model.parameters():
            dist.broadcast(p.data, 0)
    opt = _optimizer(cfg, model.parameters())
    k = cfg.grad_accumulation
    total = cfg.warmup_steps + cfg.steps  # until the warm-up says otherwise (--min-seconds)
    traced = _TRACE_WARMUP + _TRACE_ACTIVE if cfg.trace_path else 0
    # This rank's micro-batches, made before timing (DistributedSampler-like: seeded per rank);
    # steps beyond warm-up + --steps (--min-seconds) take them again from the first.
    gen = torch.Generator().manual_seed(cfg.seed * 7919 + rank)
    batches = [tuple(t.to(device) for t in inputs(cfg.per_gpu_batch, gen))
               for _ in range((total + traced) * k)]
    profiler = None
    autocast = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) \
        if cfg.precision == "amp_bf16" else contextlib.nullcontext
    clock = _Clock(cuda)
    dist.barrier()
    steps = []
    step = -1
    while step + 1 < total + traced:
        step += 1
        if step == cfg.warmup_steps and cfg.min_seconds > 0:
            total = cfg.warmup_steps + _agreed(
                measured_step_count(cfg, steps[-1]["step_time_s"]), device)
        if step == total and rank == 0:
            profiler = _start_profiler(cuda, _raw_trace_path(cfg.trace_path))
        if recorder:
            recorder.clear()
        clock.settle()
        t0_host = now_ns()
        t0 = clock.mark()
        marks = []  # per micro-batch: (forward start, backward start, backward end)
        faults = {"forward": 0, "backward": 0, "optimizer": 0}
        losses = []
        for mb in range(k):
            sync = mb == k - 1
            ctx = model.no_sync() if (cfg.ddp and not sync) else contextlib.nullcontext()
            x, y = batches[(step * k + mb) % len(batches)]
            with ctx:
                f0 = minor_faults()
                tf = clock.mark()
                with autocast():
                    loss = loss_fn(model(x), y) / k
                tb = clock.mark()
                f1 = minor_faults()
                loss.backward()
                te = clock.mark()
                te_host = now_ns()
                f2 = minor_faults()
            faults["forward"] += f1 - f0
            faults["backward"] += f2 - f1
            marks.append((tf, tb, te))
            losses.append(loss.detach())  # read after the step: no sync inside it
        exposed = recorder.exposed_ns(te_host) if recorder else 0
        f3 = minor_faults()
        to = clock.mark()
        opt.step()
        opt.zero_grad(set_to_none=True)
        t_end = clock.mark()
        clock.settle()
        faults["optimizer"] = minor_faults() - f3
        if step >= total:  # a profiled step: recorded by the profiler, not measured here
            if profiler:
                profiler.step()
            continue
        fwd = sum(clock.ns(a, b) for a, b, _ in marks)
        bwd = sum(clock.ns(b, c) for _, b, c in marks)
        buckets = recorder.step_buckets(t0_host) if recorder else []
        steps.append({
            "step_time_s": clock.ns(t0, t_end) * 1e-9,
            "forward_time_s": fwd * 1e-9,
            "backward_time_s": (bwd - exposed) * 1e-9,
            "optimizer_time_s": clock.ns(to, t_end) * 1e-9,
            "comm_time_s": sum(b["end_s"] - b["start_s"] for b in buckets),
            "exposed_comm_s": exposed * 1e-9,
            "loss": float(sum(losses)),
            "lr": cfg.lr,
            "buckets": buckets,
            "minor_faults": faults,
        })
    if profiler:
        profiler.stop()
        _finish_trace(cfg.trace_path)
    dist.barrier()
    record = {"rank": rank, "steps": steps}
    if cuda:
        # torch.cuda.max_memory_allocated: the tensors' peak (calibrate/exec's peak_bytes);
        # total - free: what the device holds, the caching allocator's reserve and the CUDA
        # context included (its blocks stay reserved after the peak).
        free, total_bytes = torch.cuda.mem_get_info()
        record["memory"] = {"peak_memory_bytes": torch.cuda.max_memory_allocated(),
                            "device_used_bytes": total_bytes - free}
    return record
