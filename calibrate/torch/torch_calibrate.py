#!/usr/bin/env python3
"""`ddpsim calibrate --backend torch`: time a scenario's model, optimizer and torch's own gloo
all-reduce through PyTorch, so that a prediction for a PyTorch user is one of their framework.

  python3 -m calibrate.torch.torch_calibrate P1.json --workload W1.json [P2 --workload W2]... \
      --nproc 2 [--warmup-steps 3] [--steps 10] [--max-bytes N] [--iters 11] [--contention-reps 7] \
      --out section.json

Each POINT.json / W.json pair is one plain scenario and ddpsim's workload for it, as ddpsim-
validate writes them for ddp_runner.py (the module comes from workload_model.py, the optimizer
and DDP arguments from run_config.py and step_loop.py: the same code the runner trains with).

How it measures (--nproc ranks started together, one torch thread each, gloo over loopback, as
the DDP job runs; every rank does the same work at the same time, so they share cores and the
memory bus as the job's ranks do; rank 0's numbers are kept, as the runner's are):
  - compute: the module wrapped in DistributedDataParallel (bucket_cap_mb and the other DDP
    arguments of the point) with a comm hook that divides the bucket by the world size, as
    PyTorch's allreduce_hook does, and returns it without communicating. The Reducer's copies
    into the buckets, the bucket views and finalize_backward's copy-back are therefore in the
    measured backward; the all-reduce is not. Per step, after --warmup-steps: forward-pre-hooks
    on every module that owns a workload tensor give each layer's forward start (a layer's
    forward runs until the next layer starts; the first layer from the model call, the last
    until the loss is computed); hooks on every parameter's gradient give each layer's last
    gradient (a layer's backward runs from the previous layer's last gradient, the first from
    loss.backward(), the rest of loss.backward() goes to the last layer to finish). Medians per
    layer over --steps steps.
  - optimizer: opt.step(); opt.zero_grad(set_to_none=True), exactly as the runner's step runs it
    (torch.optim with the point's optimizer; torch 1.13's CPU default is the for-loop
    implementation), minor page faults counted (getrusage): the user's job pays them too.
  - all-reduce: dist.all_reduce of fp32 tensors per size (powers of two from 64 KiB up to
    --max-bytes, round-robin over the sizes, 10%-trimmed means of --iters each), "sync" one at
    a time and "pair" two in flight at once (async_op=True), the latter per all-reduce
    (ProcessGroupGloo runs collectives on its worker threads, 2 by default in torch 1.13, so
    two buckets' all-reduces proceed at once).
  - contention: how compute and gloo's all-reduces slow each other when they share the cores,
    measured with a synthetic compute, never the workload's job (the machine's property, the
    same for every workload): a fixed MLP's forward + backward (SYNTHETIC_WIDTHS, batch
    SYNTHETIC_BATCH, the autograd engine with the GIL released, as DDP's backward runs) alone,
    then while a helper thread runs all-reduces of one size back to back (one in flight: the
    thread waits in C++, gloo's worker does the work), long enough to cover the whole compute;
    and the all-reduces alone and those that started and ended inside the compute.
    compute_slowdown and all_reduce_slowdown are the ratios of the medians, at 1 MiB, x4 up to
    and at --max-bytes ("by_size" rows): ddpsim's engines run a bucket's all-reduce and the
    backward beside it at those rates (processor sharing, simulator/analytic/ddp_timeline.hpp).
  Each workload is timed in a process group of its own (fresh processes, as the user's job
  starts: glibc's malloc raises its mmap threshold to the largest chunk freed so far, so a
  workload timed after another would inherit a heap that decides its page faults differently);
  the all-reduces and the contention in one more.

Output: the profile's "torch" section (model/profile/profile_keys.cpp), written atomically; progress on
stderr. Exit 0; 2 with one line for a point PyTorch cannot run here; 1 when a rank fails.
"""

import argparse
import dataclasses
import functools
import statistics
import sys

from calibrate.torch import program

PROG = "ddpsim-torch-calibrate"
fail = functools.partial(program.fail, PROG)
program.require_torch(PROG)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

from calibrate.torch import run_config  # noqa: E402
from calibrate.torch.step_loop import _optimizer, build  # noqa: E402
from calibrate.torch.step_loop import minor_faults as _faults  # noqa: E402
from calibrate.torch.timed_hooks import now_ns as _ns  # noqa: E402
from calibrate.torch.workload_model import Unsupported  # noqa: E402
from ddpsim_torch.records import run_context, write_json_atomic  # noqa: E402


def _median(v):
    return statistics.median(v) if v else 0.0


def _trimmed_mean(v, cut=0.1):
    """Mean of v without its lowest and highest `cut` share: on this machine a step's optimizer
    and gloo's all-reduces are bimodal (page faults or not, a worker's wake-up), and the median
    of a two-mode sample jumps between the modes while the job's median step, a sum of such
    parts, follows their means."""
    if not v:
        return 0.0
    v = sorted(v)
    k = int(len(v) * cut)
    v = v[k:len(v) - k] if len(v) > 2 * k else v
    return sum(v) / len(v)


def _layer_modules(model, workload):
    """{module: layer index} for every module that owns one of the workload's tensors (tied
    tensors included: GPT-2's lm_head runs in its own layer)."""
    by_name = {}
    for t in workload["tensors"]:
        by_name[t["name"].rsplit(".", 1)[0] if "." in t["name"] else ""] = t["layer"]
    return {m: by_name[n] for n, m in model.named_modules() if n in by_name and n}


def _spans(marks, begin, end, layers):
    """Per layer, the time from its mark to the next mark in time order (the first from
    `begin`, the last until `end`); layers without a mark get 0."""
    order = sorted(marks.items(), key=lambda kv: kv[1])
    out = [0] * layers
    for j, (i, t) in enumerate(order):
        start = begin if j == 0 else t
        stop = order[j + 1][1] if j + 1 < len(order) else end
        out[i] += max(0, stop - start)
    return out


def _grad_spans(ends, begin, end, layers):
    """Per layer, the time from the previous layer's last gradient to its own (the first from
    `begin`); what backward() ran after the last gradient goes to the layer that finished
    last."""
    order = sorted(ends.items(), key=lambda kv: kv[1])
    out = [0] * layers
    prev = begin
    for i, t in order:
        out[i] += max(0, t - prev)
        prev = t
    if order:
        out[order[-1][0]] += max(0, end - prev)
    return out


def time_compute(cfg, rank, world, warmup, steps):
    model, inputs, loss_fn = build(cfg, rank)
    layers = len(cfg.workload["layers"])
    starts, ends = {}, {}

    def pre_hook(i):
        def h(_module, _inputs):
            starts.setdefault(i, _ns())
        return h

    for m, i in _layer_modules(model, cfg.workload).items():
        m.register_forward_pre_hook(pre_hook(i))
    layer_of_param = {}
    for t, (_, p) in zip([t for t in cfg.workload["tensors"] if t["tied_to"] < 0],
                         model.named_parameters()):
        layer_of_param[id(p)] = t["layer"]

    def grad_hook(i):
        def h(g):
            ends[i] = _ns()
            return g
        return h

    for p in model.parameters():
        p.register_hook(grad_hook(layer_of_param[id(p)]))
    if cfg.ddp:
        model = DistributedDataParallel(
            model, bucket_cap_mb=cfg.bucket_cap_mb,
            gradient_as_bucket_view=cfg.gradient_as_bucket_view,
            broadcast_buffers=cfg.broadcast_buffers,
            find_unused_parameters=cfg.find_unused_parameters, static_graph=cfg.static_graph)

        def no_comm(_state, bucket):  # allreduce_hook less the all-reduce (see the docstring)
            fut = torch.futures.Future()
            fut.set_result(bucket.buffer().div_(world))
            return fut

        model.register_comm_hook(None, no_comm)
    opt = _optimizer(cfg, model.parameters())
    gen = torch.Generator().manual_seed(cfg.seed * 7919 + rank)
    batches = [inputs(cfg.per_gpu_batch, gen) for _ in range(warmup + steps)]
    fwd = [[] for _ in range(layers)]
    bwd = [[] for _ in range(layers)]
    whole = {"forward": [], "backward": [], "optimizer": [], "optimizer_faults": []}
    for s in range(warmup + steps):
        dist.barrier()
        starts.clear()
        ends.clear()
        x, y = batches[s]
        t0 = _ns()
        loss = loss_fn(model(x), y)
        t1 = _ns()
        loss.backward()
        t2 = _ns()
        f0 = _faults()
        t3 = _ns()
        opt.step()
        opt.zero_grad(set_to_none=True)
        t4 = _ns()
        f1 = _faults()
        if s < warmup:
            continue
        for i, v in enumerate(_spans(dict(starts), t0, t1, layers)):
            fwd[i].append(v * 1e-9)
        for i, v in enumerate(_grad_spans(dict(ends), t1, t2, layers)):
            bwd[i].append(v * 1e-9)
        whole["forward"].append((t1 - t0) * 1e-9)
        whole["backward"].append((t2 - t1) * 1e-9)
        whole["optimizer"].append((t4 - t3) * 1e-9)
        whole["optimizer_faults"].append(f1 - f0)
    return {
        "workload": cfg.workload.get("name", ""),
        "parameters": sum(t["numel"] for t in cfg.workload["tensors"] if t["tied_to"] < 0),
        "per_gpu_batch": cfg.per_gpu_batch,
        "optimizer": cfg.optimizer,
        "steps": steps,
        "forward_s": _median(whole["forward"]),
        "backward_s": _median(whole["backward"]),
        "optimizer_s": _median(whole["optimizer"]),
        "optimizer_minor_faults": int(_median(whole["optimizer_faults"])),
        "layers": [{"name": cfg.workload["layers"][i]["name"], "forward_s": _median(fwd[i]),
                    "backward_s": _median(bwd[i])} for i in range(layers)],
    }


def time_all_reduce(sizes, iters):
    """Per size, one all-reduce alone ("sync") and two in flight ("pair", per all-reduce),
    10%-trimmed means of `iters` each; the sizes round-robin (every pass times each size once),
    so that a slow minute of the machine does not land on one size."""
    bufs = {size: (torch.ones(size // 4), torch.ones(size // 4)) for size in sizes}
    for a, _ in bufs.values():
        dist.all_reduce(a)  # warm-up: connections, allocation
    sync = {size: [] for size in sizes}
    pair = {size: [] for size in sizes}
    for _ in range(iters):
        for size in sizes:
            a, b = bufs[size]
            dist.barrier()
            t = _ns()
            dist.all_reduce(a)
            sync[size].append((_ns() - t) * 1e-9)
            dist.barrier()
            t = _ns()
            w1 = dist.all_reduce(a, async_op=True)
            w2 = dist.all_reduce(b, async_op=True)
            w1.wait()
            w2.wait()
            pair[size].append((_ns() - t) * 1e-9 / 2)
    return [{"size_bytes": size, "sync_s": _trimmed_mean(sync[size]),
             "pair_s": _trimmed_mean(pair[size])} for size in sizes]


SYNTHETIC_WIDTHS = (1024, 2048, 2048, 1024)  # a fixed MLP: the contention is the machine's
SYNTHETIC_BATCH = 64


def synthetic_compute(seed):
    """A fixed forward + backward that is nobody's workload: Linear layers of SYNTHETIC_WIDTHS
    with GELU between them, batch SYNTHETIC_BATCH, fp32, loss = mean of the output."""
    gen = torch.Generator().manual_seed(seed)
    layers = []
    for a, b in zip(SYNTHETIC_WIDTHS, SYNTHETIC_WIDTHS[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers[:-1])
    x = torch.randn(SYNTHETIC_BATCH, SYNTHETIC_WIDTHS[0], generator=gen)

    def compute():
        model.zero_grad(set_to_none=True)
        model(x).mean().backward()

    return compute


def time_contention(rank, size, reps):
    """The synthetic forward + backward alone and with gloo all-reduces of `size` bytes running
    back to back on a helper thread; the all-reduce durations alone and inside the compute (see
    the module docstring). Every rank runs the same collectives in the same order."""
    import threading
    compute = synthetic_compute(17 + rank)

    for _ in range(2):  # warm-up: allocations, first-call paths
        compute()
    alone = []
    for _ in range(reps):
        dist.barrier()
        t = _ns()
        compute()
        alone.append(_ns() - t)
    buf = torch.ones(size // 4)
    dist.all_reduce(buf)
    ar_alone = []
    for _ in range(max(reps, 5)):
        dist.barrier()
        t = _ns()
        dist.all_reduce(buf)
        ar_alone.append(_ns() - t)
    # The compute window is `k` forward + backward passes, long enough to hold about eight
    # all-reduces (a small model's pass is shorter than one), and enough all-reduces to outlast
    # it twice over; rank 0's counts on every rank (the collectives must match).
    k = max(1, -(-8 * _median(ar_alone) // max(1, _median(alone))))
    n = int(2 * k * _median(alone) / max(1, _median(ar_alone))) + 3
    kn = torch.tensor([int(k), n])
    dist.broadcast(kn, 0)
    k, n = int(kn[0].item()), int(kn[1].item())
    alone = [t * k for t in alone]  # the window's compute alone
    over, ar_over, covered = [], [], 0
    for _ in range(reps):
        marks = []

        def loop():
            marks.append(_ns())
            for _ in range(n):
                dist.all_reduce(buf)
                marks.append(_ns())

        dist.barrier()
        helper = threading.Thread(target=loop)
        helper.start()
        t0 = _ns()
        for _ in range(k):
            compute()
        t1 = _ns()
        helper.join()
        over.append(t1 - t0)
        covered += marks[-1] >= t1
        ar_over += [b - a for a, b in zip(marks, marks[1:]) if a >= t0 and b <= t1]
    c_alone, c_over = _median(alone), _median(over)
    a_alone, a_over = _median(ar_alone), _median(ar_over)
    return {
        "compute": f"synthetic MLP {'-'.join(map(str, SYNTHETIC_WIDTHS))}, batch "
                   f"{SYNTHETIC_BATCH}, forward + backward",
        "size_bytes": size,
        "all_reduces_in_flight": 1,
        "reps": reps,
        "compute_passes": k,
        "compute_alone_s": c_alone * 1e-9,
        "compute_overlapped_s": c_over * 1e-9,
        "all_reduce_alone_s": a_alone * 1e-9,
        "all_reduce_overlapped_s": a_over * 1e-9,
        "all_reduces_inside_compute": len(ar_over),
        "compute_covered_reps": int(covered),
        "compute_slowdown": c_over / c_alone if c_alone > 0 else 1.0,
        "all_reduce_slowdown": a_over / a_alone if a_alone > 0 and ar_over else 1.0,
    }


def _workload_rank(rank, world, cfg, a, queue):
    """One process group: one workload's layers and optimizer (time_compute); rank 0's to
    `queue`."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=run_config.TIMEOUT)
    if rank == 0:
        print(f"{PROG}: timing {cfg.workload.get('name', '')}, batch {cfg.per_gpu_batch}, "
              f"{cfg.optimizer} ({a.warmup_steps} + {a.steps} steps)", file=sys.stderr)
    entry = time_compute(cfg, rank, world, a.warmup_steps, a.steps)
    if rank == 0:
        queue.put(entry)
    dist.barrier()
    dist.destroy_process_group()


def _gloo_rank(rank, world, a, sizes, queue):
    """One process group: gloo's all-reduce per size, then the contention at 1 MiB, x4 up to
    --max-bytes (every size a "by_size" row; the largest also keeps the section's top-level
    keys); rank 0's to `queue`."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=run_config.TIMEOUT)
    if rank == 0:
        print(f"{PROG}: timing gloo all_reduce, {len(sizes)} sizes x {a.iters}", file=sys.stderr)
    out = {"all_reduce": time_all_reduce(sizes, a.iters)}
    csizes, cs = [], 1 << 20
    while cs < a.max_bytes:
        csizes.append(cs)
        cs *= 4
    csizes.append(a.max_bytes)
    rows = []
    for cs in csizes:
        if rank == 0:
            print(f"{PROG}: timing contention: a synthetic forward + backward with {cs}-byte "
                  f"all-reduces in flight", file=sys.stderr)
        rows.append(time_contention(rank, cs, a.contention_reps))
    out["contention"] = dict(rows[-1])
    out["contention"]["by_size"] = [
        {k: r[k] for k in ("size_bytes", "compute_slowdown", "all_reduce_slowdown",
                           "compute_alone_s", "compute_overlapped_s", "all_reduce_alone_s",
                           "all_reduce_overlapped_s", "all_reduces_inside_compute")}
        for r in rows]
    if rank == 0:
        queue.put(out)
    dist.barrier()
    dist.destroy_process_group()


def _spawn(fn, args, nproc):
    """nproc ranks on a fresh loopback port (program.spawn_ranks); exit 1 with one line if one
    fails."""
    try:
        program.spawn_ranks(fn, args, nproc)
    except Exception as e:  # a rank's traceback is already on stderr
        fail(1, f"a rank failed: {program.error_line(e)}")


def main():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("points", nargs="+", help="POINT.json, each followed by --workload W.json")
    ap.add_argument("--workload", action="append", required=True)
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--warmup-steps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--iters", type=int, default=11)
    ap.add_argument("--contention-reps", type=int, default=7)
    ap.add_argument("--max-bytes", type=int, default=4 << 20)
    ap.add_argument("--out", required=True)
    a = ap.parse_intermixed_args()
    if len(a.points) != len(a.workload):
        fail(2, f"{len(a.points)} point(s) but {len(a.workload)} --workload file(s)")
    if a.nproc < 2:
        fail(2, "--nproc: the torch calibration times DDP and gloo with at least 2 ranks")
    try:
        cfgs = [run_config.load(p, w, a.nproc, a.steps, a.warmup_steps, False)
                for p, w in zip(a.points, a.workload)]
        for c in cfgs:
            run_config.check_torch(c)
    except Unsupported as e:
        fail(2, str(e))
    sizes, s = [], 64 << 10
    while True:
        sizes.append(s)
        if s >= a.max_bytes:
            break
        s *= 2
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    load_before = open("/proc/loadavg").read().split()[:3]
    workloads = []
    for cfg in cfgs:
        _spawn(_workload_rank, (a.nproc, cfg, a, queue), a.nproc)
        workloads.append(queue.get())
    _spawn(_gloo_rank, (a.nproc, a, sizes, queue), a.nproc)
    got = queue.get()
    context = run_context("ddpsim torch calibration (calibrate/torch/torch_calibrate.py)")
    doc = {
        "torch_version": context["torch_version"].split("+")[0],
        "ranks": a.nproc,
        "threads_per_rank": 1,
        "gloo_threads": dist.ProcessGroupGloo._Options()._threads,
        "method": "torch_calibrate.py: per workload in its own process group, DDP with a "
                  "no-communication comm hook, per-layer hooks, opt.step()+zero_grad(set_to_none="
                  "True); gloo all_reduce sync and two in flight; a synthetic forward+backward "
                  "with all-reduces in flight (contention); rank 0's medians, every rank running",
        "utc": context["date"],
        "load_average": [float(x) for x in load_before],
        "warmup_steps": a.warmup_steps,
        "iters": a.iters,
        "workloads": workloads,
        "all_reduce": got["all_reduce"],
        "contention": got["contention"],
    }
    write_json_atomic(a.out, doc)
    print(f"{PROG}: wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
