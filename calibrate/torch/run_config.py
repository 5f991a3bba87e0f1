"""What the torch runner runs: one plain scenario point and ddpsim's workload for it, resolved
into PyTorch's arguments, and refused (workload_model.Unsupported) where PyTorch DDP on CPU
cannot be asked for it here.

  cfg = load("point.json", "workload.json", nproc=2, steps=5, warmup_steps=2, independent=False)
  check_torch(cfg)   # this torch has what the point needs
"""

import dataclasses
import datetime
import inspect
import json
import math

import torch
import torch.distributed as dist

from calibrate.torch.workload_model import Unsupported

TIMEOUT = datetime.timedelta(seconds=120)  # a vanished peer ends the run instead of hanging


@dataclasses.dataclass
class RunConfig:
    point_file: str
    name: str
    model_label: str
    workload: dict
    source: dict  # the workload's "source" block (workload_model.build_model)
    ranks: int
    per_gpu_batch: int
    grad_accumulation: int
    steps: int
    warmup_steps: int
    independent: bool
    timing_hook: bool  # False: DDP's built-in all-reduce, no per-bucket times (the observer's cost)
    bucket_cap_mb: float
    overlap: bool
    hook: str  # none | fp16 | bf16
    gradient_as_bucket_view: bool
    broadcast_buffers: bool
    find_unused_parameters: bool
    static_graph: bool
    first_bucket_mb: float  # parallelism.first_bucket_mb, 0: torch's own
    optimizer: str  # sgd | momentum | adam | adamw
    lr: float
    seed: int
    device: str = "cpu"  # cpu (gloo) | cuda (one GPU per rank; nccl between ranks)
    precision: str = "fp32"  # fp32 | amp_bf16 (cuda: torch.autocast bf16, fp32 master weights)
    optimizer_impl: str = "foreach"  # training.optimizer_impl; cuda only, CPU takes torch's own
    trace_path: str = ""  # --profile-trace: rank 0's profiler trace of steps after the measured
    # --min-seconds: measure more than `steps` steps when the last warm-up step says they would
    # take less than this (step_loop.measured_step_count); 0: exactly `steps`
    min_seconds: float = 0.0

    @property
    def backend(self):
        # One rank needs no NCCL communicator: gloo carries the runner's own CPU objects.
        return "nccl" if self.device == "cuda" and self.ranks > 1 else "gloo"

    @property
    def ddp(self):
        # One rank trains as a script without DDP would (calibrate/exec/README.md).
        return self.ranks > 1 and not self.independent


def _get(doc, path, default):
    for key in path.split("/"):
        if not isinstance(doc, dict) or key not in doc:
            return default
        doc = doc[key]
    return doc


def load(point_file, workload_file, nproc, steps, warmup_steps, independent, timing_hook=True,
         device="cpu", trace_path="", min_seconds=0.0):
    with open(point_file) as f:
        point = json.load(f)
    with open(workload_file) as f:
        workload = json.load(f)
    if "sweep" in point:
        raise Unsupported("a sweep: the runner takes one point (ddpsim validate expands sweeps)")
    strategy = _get(point, "parallelism/strategy", "ddp")
    if strategy != "ddp":
        raise Unsupported(f"parallelism.strategy {strategy}: the torch runner runs "
                          "DistributedDataParallel (ddp) only, not sharded strategies")
    precision = _get(point, "training/precision", "fp32")
    if device not in ("cpu", "cuda"):
        raise Unsupported(f"device {device!r} (cpu or cuda)")
    if precision != "fp32" and not (device == "cuda" and precision == "amp_bf16"):
        raise Unsupported(f"training.precision {precision}: the torch runner trains in fp32, and "
                          "with --device cuda also amp_bf16 (comm_hook fp16 gives 16-bit "
                          "gradients on the wire)")
    hook = str(_get(point, "parallelism/comm_hook", "none"))
    if hook not in ("none", "fp16", "bf16"):
        raise Unsupported(f"parallelism.comm_hook {hook}: the torch runner runs none, fp16, bf16")
    if hook == "none":
        hook = {"fp16": "fp16", "bf16": "bf16"}.get(_get(point, "training/grad_reduce_dtype", ""),
                                                   "none")
    optimizer = _get(point, "training/optimizer", "adam")
    if optimizer not in ("sgd", "momentum", "adam", "adamw"):
        raise Unsupported(f"training.optimizer {optimizer}")
    ranks = nproc or int(_get(point, "cluster/gpus", 1))
    if ranks < 1:
        raise Unsupported(f"{ranks} ranks")
    if not timing_hook and (hook != "none" or not _get(point, "parallelism/overlap", True)):
        raise Unsupported("--no-timing-hook runs DDP's built-in all-reduce: comm_hook none and "
                          "overlap on only")
    if not math.isfinite(min_seconds) or min_seconds < 0:
        raise Unsupported(f"--min-seconds {min_seconds}: a number of seconds >= 0")
    if min_seconds > 0 and warmup_steps < 1:
        raise Unsupported("--min-seconds needs a warm-up step to time (--warmup-steps >= 1)")
    adam = optimizer in ("adam", "adamw")
    return RunConfig(
        point_file=point_file, name=point.get("name", ""),
        model_label=workload.get("name", ""), workload=workload, source=workload["source"],
        ranks=ranks, per_gpu_batch=int(_get(point, "training/per_gpu_batch", 32)),
        grad_accumulation=int(_get(point, "training/grad_accumulation", 1)),
        steps=steps or int(_get(point, "simulation/steps", 5)), warmup_steps=warmup_steps,
        independent=independent, timing_hook=timing_hook,
        bucket_cap_mb=float(_get(point, "parallelism/bucket_cap_mb", 25)),
        overlap=bool(_get(point, "parallelism/overlap", True)), hook=hook,
        gradient_as_bucket_view=bool(_get(point, "parallelism/gradient_as_bucket_view", False)),
        broadcast_buffers=bool(_get(point, "parallelism/broadcast_buffers", True)),
        find_unused_parameters=bool(_get(point, "parallelism/find_unused_parameters", False)),
        static_graph=bool(_get(point, "parallelism/static_graph", False)),
        first_bucket_mb=float(_get(point, "parallelism/first_bucket_mb", 0)),
        optimizer=optimizer, lr=1e-3 if adam else 0.05,  # calibrate/exec's defaults
        seed=int(_get(point, "simulation/seed", 1)), device=device, precision=precision,
        optimizer_impl=str(_get(point, "training/optimizer_impl", "foreach")),
        trace_path=trace_path, min_seconds=float(min_seconds))


def facts():
    """What this torch does that ddpsim must be told (ddpsim-validate reads them from --check):
    whether DDP rebuilds with a first bucket of dist._DEFAULT_FIRST_BUCKET_BYTES whatever
    bucket_cap_mb is (torch 1.13: bucket_cap_mb defaults to 25, not None, so DDP cannot tell an
    explicit 25 from the default; torch/nn/parallel/distributed.py:540, 646, 750), its size,
    and gloo's worker threads per process group."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    cap_default = inspect.signature(DDP.__init__).parameters["bucket_cap_mb"].default
    return {"torch_version": torch.__version__,
            "first_bucket_always": cap_default is not None,
            "first_bucket_bytes": dist._DEFAULT_FIRST_BUCKET_BYTES,
            "gloo_threads": dist.ProcessGroupGloo._Options()._threads}


def check_torch(cfg):
    """Raises Unsupported when this torch lacks what the point needs."""
    need = [(hasattr(dist, "GradBucket") and hasattr(dist.GradBucket, "is_last"),
             "torch.distributed.GradBucket.is_last (DDP comm hooks, torch >= 1.10)"),
            (dist.is_gloo_available(), "the gloo backend")]
    if cfg.trace_path:
        need.append((torch.autograd.kineto_available(),
                     "Kineto (torch.profiler's trace format; --profile-trace)"))
    if cfg.device == "cuda":
        need.append((hasattr(torch, "autocast"), "torch.autocast (torch >= 1.10)"))
        if cfg.ranks > 1:
            need.append((dist.is_nccl_available(), "the nccl backend"))
        if cfg.optimizer_impl == "fused" and cfg.optimizer in ("adam", "adamw"):
            opt = torch.optim.AdamW if cfg.optimizer == "adamw" else torch.optim.Adam
            need.append(("fused" in inspect.signature(opt.__init__).parameters,
                         f"{opt.__name__}(fused=True) (training.optimizer_impl fused)"))
    for ok, what in need:
        if not ok:
            raise Unsupported(f"torch {torch.__version__} is too old: it lacks {what}")
    if cfg.hook == "bf16" and not _gloo_reduces(torch.bfloat16):
        # torch 1.13's ProcessGroupGloo has no bfloat16 reduction ("Invalid scalar type"):
        # bf16_compress_hook needs NCCL there.
        raise Unsupported(f"comm_hook bf16: torch {torch.__version__}'s gloo all_reduce has no "
                          "bfloat16 (bf16_compress_hook runs on NCCL only); use fp16")


def _gloo_reduces(dtype):
    """Whether a one-rank gloo group all-reduces `dtype` (a probe in its own group)."""
    store = dist.HashStore()
    pg = dist.ProcessGroupGloo(store, 0, 1, TIMEOUT)
    try:
        pg.allreduce([torch.ones(2, dtype=dtype)]).wait()
        return True
    except RuntimeError:
        return False
