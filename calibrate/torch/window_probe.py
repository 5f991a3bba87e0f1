#!/usr/bin/env python3
"""How one gloo all-reduce and the compute beside it share the cores when the all-reduce is
launched at the start of a compute window of length W, as DDP launches a bucket while the
backward goes on (issue 16: torch_calibrate.py's contention pass runs all-reduces back to back
over a long compute and measured both slowed about 1.6x, while in the job a shallow MLP's first
8 MiB bucket, launched 4-5 ms before its backward ended, hid 0.5 ms of its all-reduce and the
backward ran no slower).

  python3 calibrate/torch/window_probe.py --sizes-mib 1 8 32 --windows-ms 2 5 10 20 50 100 200 \
      --reps 15 [--out probe.json]

--nproc ranks (default 2), one torch thread each, gloo over loopback, every rank doing the same
at the same time (as torch_calibrate.py measures). The compute is the backward of W ms of
(32 x 512) @ (512 x 1024) products (their count per window from a timed backward of 200): run
by the autograd engine with the GIL released, as DDP's backward runs, so that the all-reduce's
completion callback is not held behind the compute's Python. Per size and
window, --reps times each, round-robin: the compute alone, one all-reduce alone (synchronous),
and the all-reduce launched (async_op=True) right before the compute, its end taken in the
future's callback. Rank 0's medians, and from them:
  - progress_in_window: the share of the all-reduce (in its alone time) done by the window's end,
    1 - (end - compute) / alone when it ends after the compute (<= 0: none), else 1;
  - all_reduce_slowdown: overlapped time / work done in it;
  - compute_slowdown_in_overlap: the overlapped time over the compute done in it, taking the
    window's extra time (compute beside - alone) as the overlapped part's loss.
Prints one JSON line per row and writes the rows (--out, atomically).
"""

import argparse
import json
import os
import socket
import statistics
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_results import write_atomic  # noqa: E402
from timed_hooks import now_ns as _now  # noqa: E402


def derived(compute_alone, all_reduce_alone, compute_beside, all_reduce_end):
    """The row's ratios from the medians (ms). E.g. alone 10 and 6, beside 12 and end 14: the
    all-reduce ran past the compute by 2 -> progress 1 - 2/6 = 0.667, slowdown 12 / 4 = 3.0; the
    compute lost 2 in the 12 overlapped -> 12 / 10 = 1.2."""
    if all_reduce_end <= compute_beside:
        progress, overlap = 1.0, all_reduce_end
    else:
        progress, overlap = 1 - (all_reduce_end - compute_beside) / all_reduce_alone, compute_beside
    done = progress * all_reduce_alone
    extra = compute_beside - compute_alone
    return {"progress_in_window": progress,
            "all_reduce_slowdown": overlap / done if done > 0 else None,
            "compute_slowdown_in_overlap": overlap / (overlap - extra) if overlap > extra else None}


def _rank(rank, world, port, a):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    lhs = torch.randn(32, 512)
    weight = torch.randn(512, 1024, requires_grad=True)

    def graph(n):
        """n products lhs @ weight summed: their backward (n weight gradients accumulated) is
        the window, built beforehand, untimed."""
        return torch.stack([torch.mm(lhs, weight).sum() for _ in range(n)]).sum()

    def compute(loss):
        # The autograd engine runs the backward in C++ with the GIL released, as DDP's backward
        # does, so the all-reduce's Python completion callback need not wait for the compute's
        # Python to yield the interpreter.
        loss.backward()
        weight.grad = None

    compute(graph(20))
    loss = graph(200)
    t = _now()
    compute(loss)
    per_ms = (_now() - t) / 200 / 1e6
    rows = []
    for mib in a.sizes_mib:
        x = torch.ones(int(mib * 2**20) // 4)
        for _ in range(3):
            dist.all_reduce(x)
        for w in a.windows_ms:
            n = max(1, round(w / per_ms))
            ca, aa, cb, ae = [], [], [], []
            for _ in range(a.reps):
                loss = graph(n)
                dist.barrier()
                t = _now()
                compute(loss)
                ca.append((_now() - t) / 1e6)
                dist.barrier()
                t = _now()
                dist.all_reduce(x)
                aa.append((_now() - t) / 1e6)
                loss = graph(n)
                dist.barrier()
                end = [0]

                def done(f, end=end):
                    end[0] = _now()
                    return f.value()

                t = _now()
                fut = dist.all_reduce(x, async_op=True).get_future().then(done)
                compute(loss)
                tc = _now()
                fut.wait()
                cb.append((tc - t) / 1e6)
                ae.append((end[0] - t) / 1e6)
            med = statistics.median
            row = {"size_mib": mib, "compute_alone_ms": med(ca), "all_reduce_alone_ms": med(aa),
                   "compute_beside_ms": med(cb), "all_reduce_end_ms": med(ae)}
            row.update(derived(row["compute_alone_ms"], row["all_reduce_alone_ms"],
                               row["compute_beside_ms"], row["all_reduce_end_ms"]))
            rows.append(row)
            if rank == 0:
                print(json.dumps({k: round(v, 3) if isinstance(v, float) else v
                                  for k, v in row.items()}), flush=True)
    if rank == 0 and a.out:
        write_atomic(a.out, {"method": __doc__.splitlines()[0], "nproc": world, "reps": a.reps,
                             "torch_version": torch.__version__, "rows": rows})
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--sizes-mib", type=float, nargs="+", default=[1, 8, 32])
    ap.add_argument("--windows-ms", type=float, nargs="+", default=[2, 5, 10, 20, 50, 100, 200])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    if a.nproc < 1 or a.reps < 1 or min(a.sizes_mib) <= 0 or min(a.windows_ms) <= 0:
        print("window_probe: --nproc, --reps, sizes and windows must be positive", file=sys.stderr)
        return 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ["OMP_NUM_THREADS"] = "1"
    mp.spawn(_rank, args=(a.nproc, port, a), nprocs=a.nproc, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
