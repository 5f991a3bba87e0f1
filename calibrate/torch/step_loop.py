"""One rank of the torch runner: the module wrapped in DistributedDataParallel with the point's
arguments, its training steps, and what each step measured.

  record = run_rank(cfg, rank, world)   # inside an initialised gloo process group
  # {"rank", "steps": [{step_time_s, forward_time_s, backward_time_s, optimizer_time_s,
  #                     comm_time_s, exposed_comm_s, loss, buckets: [...],
  #                     minor_faults: {forward, backward, optimizer}}, ...]}
"""

import contextlib
import resource

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from timed_hooks import BucketRecorder, now_ns
from workload_model import build_model, check_matches


def _faults():
    """Minor page faults of this process so far (every thread: compute and gloo's)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def build(cfg, rank):
    """The rank's module (rank-dependent weights: DDP's constructor broadcasts rank 0's),
    input generator and loss; raises Unsupported unless the module is ddpsim's workload."""
    torch.manual_seed(cfg.seed * 1000003 + rank + 1)
    model, inputs, loss = build_model(cfg.workload, cfg.source)
    check_matches(model, cfg.workload)
    return model, inputs, loss


def _optimizer(cfg, params):
    # torch 1.13 defaults foreach=None to the for-loop implementation on CPU
    # (torch/optim/adam.py:286-288, sgd.py:190-192, adamw.py:207-209).
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr)
    if cfg.optimizer == "momentum":
        return torch.optim.SGD(params, lr=cfg.lr, momentum=0.9)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr)
    return torch.optim.AdamW(params, lr=cfg.lr)  # weight_decay 0.01 by default


def run_rank(cfg, rank, world):
    model, inputs, loss_fn = build(cfg, rank)
    recorder = None
    if cfg.ddp:
        if cfg.first_bucket_mb > 0:
            # "User can set dist._DEFAULT_FIRST_BUCKET_BYTES to tune DDP first bucket"
            # (torch/nn/parallel/distributed.py:748-750).
            dist._DEFAULT_FIRST_BUCKET_BYTES = int(cfg.first_bucket_mb * 1024 * 1024)
        model = DistributedDataParallel(
            model, bucket_cap_mb=cfg.bucket_cap_mb,
            gradient_as_bucket_view=cfg.gradient_as_bucket_view,
            broadcast_buffers=cfg.broadcast_buffers,
            find_unused_parameters=cfg.find_unused_parameters, static_graph=cfg.static_graph)
        if cfg.timing_hook:
            recorder = BucketRecorder(world, cfg.hook, cfg.overlap)
            model.register_comm_hook(None, recorder.hook)
    elif cfg.independent:
        # The baseline starts from rank 0's weights too (calibrate/exec --independent).
        for p in model.parameters():
            dist.broadcast(p.data, 0)
    opt = _optimizer(cfg, model.parameters())
    k = cfg.grad_accumulation
    total = cfg.warmup_steps + cfg.steps
    # This rank's micro-batches, made before timing (DistributedSampler-like: seeded per rank).
    gen = torch.Generator().manual_seed(cfg.seed * 7919 + rank)
    batches = [inputs(cfg.per_gpu_batch, gen) for _ in range(total * k)]
    dist.barrier()
    steps = []
    for step in range(total):
        if recorder:
            recorder.clear()
        t0 = now_ns()
        fwd = bwd = 0
        faults = {"forward": 0, "backward": 0, "optimizer": 0}
        loss_sum = 0.0
        for mb in range(k):
            sync = mb == k - 1
            ctx = model.no_sync() if (cfg.ddp and not sync) else contextlib.nullcontext()
            x, y = batches[step * k + mb]
            with ctx:
                f0 = _faults()
                tf = now_ns()
                loss = loss_fn(model(x), y) / k
                tb = now_ns()
                f1 = _faults()
                loss.backward()
                te = now_ns()
                f2 = _faults()
            faults["forward"] += f1 - f0
            faults["backward"] += f2 - f1
            fwd += tb - tf
            bwd += te - tb
            loss_sum += float(loss.detach())
        exposed = recorder.exposed_ns(te) if recorder else 0
        f3 = _faults()
        to = now_ns()
        opt.step()
        opt.zero_grad(set_to_none=True)
        t_end = now_ns()
        faults["optimizer"] = _faults() - f3
        buckets = recorder.step_buckets(t0) if recorder else []
        steps.append({
            "step_time_s": (t_end - t0) * 1e-9,
            "forward_time_s": fwd * 1e-9,
            "backward_time_s": (bwd - exposed) * 1e-9,
            "optimizer_time_s": (t_end - to) * 1e-9,
            "comm_time_s": sum(b["end_s"] - b["start_s"] for b in buckets),
            "exposed_comm_s": exposed * 1e-9,
            "loss": loss_sum,
            "lr": cfg.lr,
            "buckets": buckets,
            "minor_faults": faults,
        })
    dist.barrier()
    return {"rank": rank, "steps": steps}
