#!/usr/bin/env python3
"""Times PyTorch's own gloo all-reduce on this machine, to set beside the libgloo all-reduce a
ddpsim calibration profile holds (ddpsim-calibrate --backend cpu): is torch's gloo slower, and
what do its two worker threads change?

  python3 calibrate/torch/gloo_probe.py --nproc 2 --sizes-mib 1 4 16 64 --iters 15 \
      [--profile results/profile-vm.json] [--out probe.json]

Per size (fp32 tensors, one thread per rank for torch ops, gloo over loopback TCP), the median,
10th and 90th percentile of:
  - "sync": one dist.all_reduce at a time (what ddpsim-exec's single communication thread does);
  - "pair": two all-reduces of that size in flight at once (async_op=True), per all-reduce —
    what DDP does when two buckets are ready together: ProcessGroupGloo runs collectives on
    `threads` worker threads (torch 1.13 default 2: dist.ProcessGroupGloo._Options()._threads),
    so they run concurrently, sharing the cores and the link;
With --profile, the profile's all_reduce time at each size (its fitted alpha-beta model) and
the ratio torch / profile. Prints one JSON document (also to --out, atomically).
"""

import argparse
import json
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_results import write_atomic  # noqa: E402


def _q(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def _rank(rank, world, sizes, iters, queue):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    out = {}
    for mib in sizes:
        n = int(mib * 1024 * 1024) // 4
        a, b = torch.ones(n), torch.ones(n)
        dist.all_reduce(a)  # warm-up: connections, allocation
        sync, pair = [], []
        for _ in range(iters):
            dist.barrier()
            t = time.perf_counter()
            dist.all_reduce(a)
            sync.append(time.perf_counter() - t)
        for _ in range(iters):
            dist.barrier()
            t = time.perf_counter()
            w1 = dist.all_reduce(a, async_op=True)
            w2 = dist.all_reduce(b, async_op=True)
            w1.wait()
            w2.wait()
            pair.append((time.perf_counter() - t) / 2)
        out[mib] = {k: {"median_s": statistics.median(v), "p10_s": _q(v, 0.1),
                        "p90_s": _q(v, 0.9)} for k, v in (("sync", sync), ("pair", pair))}
    if rank == 0:
        queue.put(out)
    dist.destroy_process_group()


def _profile_time(profile, size_bytes):
    """The profile's all_reduce time at size_bytes from its piecewise alpha-beta fit."""
    fit = profile["collectives"]["ops"]["all_reduce"]["fit"]
    segs = fit["segments"]
    for s in segs:
        if size_bytes <= s.get("max_bytes", float("inf")):
            return s["alpha_s"] + s["beta_s_per_byte"] * size_bytes
    s = segs[-1]
    return s["alpha_s"] + s["beta_s_per_byte"] * size_bytes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--sizes-mib", type=float, nargs="+", default=[1, 4, 16, 64])
    ap.add_argument("--iters", type=int, default=15)
    ap.add_argument("--profile")
    ap.add_argument("--out")
    a = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.spawn(_rank, args=(a.nproc, a.sizes_mib, a.iters, queue), nprocs=a.nproc, join=True)
    per_size = queue.get()
    profile = None
    if a.profile:
        with open(a.profile) as f:
            profile = json.load(f)
    rows = []
    for mib in a.sizes_mib:
        row = {"size_bytes": int(mib * 1024 * 1024), **per_size[mib]}
        if profile:
            p = _profile_time(profile, row["size_bytes"])
            row["profile_s"] = p
            row["torch_sync_over_profile"] = row["sync"]["median_s"] / p
        rows.append(row)
    doc = {"context": {"torch_version": torch.__version__, "ranks": a.nproc, "iters": a.iters,
                       "gloo_threads": dist.ProcessGroupGloo._Options()._threads,
                       "profile": a.profile,
                       "load_average": open("/proc/loadavg").read().split()[:3]},
           "all_reduce": rows}
    if a.out:
        write_atomic(a.out, doc)
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
