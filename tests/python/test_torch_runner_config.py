#!/usr/bin/env python3
"""The torch runner's point -> PyTorch mapping for the GPU (calibrate/torch/run_config.py,
step_loop.optimizer_impl_kwargs), checked where it can be on any machine: no GPU is needed to
decide what a point asks of PyTorch.

Run by ctest (torch.runner_config, label `torch`) with a python that imports torch and
PYTHONPATH=$SRC:$SRC/python (the calibrate.torch package).
  - training.precision: fp32 everywhere; amp_bf16 only with --device cuda (torch.autocast bf16);
    anything else refused (Unsupported, the runner's exit 2) naming the precision.
  - The process group: gloo on the CPU and for one rank on a GPU (no NCCL communicator for the
    runner's own CPU objects), nccl between GPU ranks.
  - training.optimizer_impl on CUDA: fused -> fused=True (Adam/AdamW), foreach -> foreach=True,
    for_loop -> foreach=False; on the CPU torch's own default (no argument).
  - --profile-trace needs Kineto: refused in one line by a torch without it (Debian's).
  - --min-seconds: how many steps a run measures (step_loop.measured_step_count, hand values),
    its refusals, and a real one-rank run of the tiny MLP measuring exactly that many.
"""

import json
import os
import sys
import tempfile

import torch

from calibrate.torch import run_config, step_loop
from calibrate.torch.workload_model import Unsupported

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: {got!r}, want {want!r}")


def files(tmp, precision="fp32", optimizer="adamw", impl=None, gpus=1):
    point = {"name": "p", "model": {"mlp": {"widths": [8, 16, 8]}}, "cluster": {"gpus": gpus},
             "training": {"per_gpu_batch": 4, "precision": precision, "optimizer": optimizer}}
    if impl:
        point["training"]["optimizer_impl"] = impl
    workload = {"name": "mlp", "source": {"mlp": {"widths": [8, 16, 8]}}, "tensors": []}
    p, w = os.path.join(tmp, "point.json"), os.path.join(tmp, "workload.json")
    with open(p, "w") as f:
        json.dump(point, f)
    with open(w, "w") as f:
        json.dump(workload, f)
    return p, w


def load(tmp, device="cpu", trace="", nproc=None, min_seconds=0.0, warmup=2, **kw):
    p, w = files(tmp, **kw)
    return run_config.load(p, w, nproc, 3, warmup, False, True, device, trace, min_seconds)


def min_seconds_checks(tmp):
    """3 steps asked (load's), at least 3 s: ceil(3 / step) steps, never fewer than 3, at most
    MAX_EXTENSION (20) x 3 = 60."""
    count = step_loop.measured_step_count
    cfg = load(tmp, min_seconds=3.0)
    check("80 ms steps", count(cfg, 0.08), 38)  # 3 / 0.08 = 37.5
    check("49 ms steps: capped", count(cfg, 0.049), 60)  # 3 / 0.049 = 61.2 > 60
    check("0.5 s steps", count(cfg, 0.5), 6)
    check("2 s steps: --steps already longer", count(cfg, 2.0), 3)  # ceil(1.5) = 2 < 3
    check("1 ms steps: capped", count(cfg, 0.001), 60)
    check("an untimed warm-up", count(cfg, 0.0), 3)
    check("--min-seconds 0", count(load(tmp), 0.049), 3)
    refused("--min-seconds -1", lambda: load(tmp, min_seconds=-1.0), "seconds >= 0")
    refused("--min-seconds inf", lambda: load(tmp, min_seconds=float("inf")), "seconds >= 0")
    refused("--min-seconds without warm-up", lambda: load(tmp, min_seconds=1.0, warmup=0),
            "warm-up")

    # A real run: one rank of the tiny MLP in a one-rank gloo group, measuring as many steps as
    # its own last warm-up step asks for (the ranks' agreement is then its own count).
    import torch.distributed as dist
    from calibrate.torch.workload_model import build_model
    p, w = files(tmp)
    with open(w) as f:
        workload = json.load(f)
    module = build_model(workload, workload["source"])[0]
    workload["tensors"] = [{"name": n, "shape": list(t.shape), "tied_to": -1, "numel": t.numel()}
                           for n, t in module.named_parameters()]
    with open(w, "w") as f:
        json.dump(workload, f)
    cfg = run_config.load(p, w, 1, 3, 2, False, True, "cpu", "", 0.01)
    dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "store"), rank=0,
                            world_size=1)
    try:
        rows = step_loop.run_rank(cfg, 0, 1)["steps"]
    finally:
        dist.destroy_process_group()
    want = count(cfg, rows[cfg.warmup_steps - 1]["step_time_s"])
    check("steps measured by a real run", len(rows) - cfg.warmup_steps, want)
    check("a real run lengthened (sub-millisecond steps, 10 ms asked)", want > 3, True)


def refused(what, fn, pattern):
    try:
        fn()
    except Unsupported as e:
        if pattern not in str(e):
            failures.append(f"{what}: refused as {e!r}, want it to name {pattern!r}")
        return
    failures.append(f"{what}: not refused")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        refused("amp_bf16 on the CPU", lambda: load(tmp, precision="amp_bf16"), "amp_bf16")
        refused("amp_fp16 on a GPU", lambda: load(tmp, "cuda", precision="amp_fp16"), "amp_fp16")
        refused("a device", lambda: load(tmp, "tpu"), "tpu")
        cfg = load(tmp, "cuda", precision="amp_bf16")
        check("cuda precision", cfg.precision, "amp_bf16")
        check("one GPU rank's group", cfg.backend, "gloo")
        check("two GPU ranks' group", load(tmp, "cuda", nproc=2).backend, "nccl")
        check("CPU group", load(tmp, nproc=2).backend, "gloo")

        kw = step_loop.optimizer_impl_kwargs
        check("CPU, fused asked", kw(load(tmp, impl="fused")), {})
        check("cuda fused adamw", kw(load(tmp, "cuda", impl="fused")), {"fused": True})
        check("cuda fused adam", kw(load(tmp, "cuda", optimizer="adam", impl="fused")),
              {"fused": True})
        check("cuda fused sgd", kw(load(tmp, "cuda", optimizer="sgd", impl="fused")),
              {"foreach": True})
        check("cuda default (foreach)", kw(load(tmp, "cuda")), {"foreach": True})
        check("cuda for_loop", kw(load(tmp, "cuda", impl="for_loop")), {"foreach": False})

        traced = load(tmp, trace=os.path.join(tmp, "t.json.gz"))
        if torch.autograd.kineto_available():
            run_config.check_torch(traced)  # must pass where Kineto is
        else:
            refused("--profile-trace without Kineto", lambda: run_config.check_torch(traced),
                    "Kineto")
        min_seconds_checks(tmp)
    for f in failures:
        print(f"FAIL {f}")
    if failures:
        sys.exit(1)
    print("torch runner config: precisions, process groups, optimizer implementations, Kineto, "
          "--min-seconds")


if __name__ == "__main__":
    main()
