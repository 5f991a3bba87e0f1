#!/usr/bin/env python3
"""Writes torch_cpu_ddp_rank{0,1}.json.gz: a real 2-rank PyTorch DDP job (gloo, CPU, one thread
per rank) profiled with the legacy autograd profiler, the format a torch build without Kineto
writes (Debian's python3-torch 1.13: torch.autograd.kineto_available() is False).

    /usr/bin/python3 tests/data/traces/make_torch_cpu_ddp_trace.py OUT_DIR

The job: nn.Sequential of six nn.Linear(512, 512) (no activation), batch 32 per rank, SGD,
DistributedDataParallel(bucket_cap_mb=1): every layer's 1,050,624 gradient bytes fill a bucket
of its own, so DDP all-reduces 6 buckets per step. Three warm-up steps (the first uses one
bucket, DDP rebuilds them after it), then 5 profiled steps, each inside
record_function("ProfilerStep#N") as torch.profiler's schedule names them."""
import gzip
import os
import shutil
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def run(rank, world, out_dir, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(6)]),
                bucket_cap_mb=1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 512, generator=torch.Generator().manual_seed(rank))

    def step():
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    for _ in range(3):
        step()
    with torch.autograd.profiler.profile() as prof:
        for i in range(5):
            with torch.autograd.profiler.record_function(f"ProfilerStep#{i}"):
                step()
    plain = os.path.join(out_dir, f"torch_cpu_ddp_rank{rank}.json")
    prof.export_chrome_trace(plain)
    with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(plain)
    dist.destroy_process_group()


if __name__ == "__main__":
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(run, args=(2, sys.argv[1], port), nprocs=2)
