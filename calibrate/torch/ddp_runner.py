#!/usr/bin/env python3
"""ddpsim's torch runner: one validation point as a real PyTorch DDP job (CPU ranks or GPUs).

  python3 -m calibrate.torch.ddp_runner POINT.json --workload W.json --nproc 2 --steps 5 \
      --out run.json [--warmup-steps 2] [--min-seconds S] [--independent | --no-timing-hook]
      [--device cuda] [--profile-trace rank0.pt.trace.json.gz]
  python3 -m calibrate.torch.ddp_runner --check P1.json --workload W1.json [P2 --workload W2]... \
      [--facts F.json]
(PYTHONPATH=$SRC:$SRC/python in a checkout: calibrate/torch/__init__.py.)

POINT.json is one plain scenario (ddpsim-validate writes it), W.json ddpsim's workload for it
(workload_model.py). Launch: --nproc ranks through program.spawn_ranks (MASTER_ADDR
127.0.0.1 and a free port; env:// rendezvous), or, under torchrun (RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT set), this process is one rank. Gloo backend, one thread per rank
(torch.set_num_threads(1)). The scenario's knobs map to PyTorch's own arguments:
parallelism.bucket_cap_mb, gradient_as_bucket_view, broadcast_buffers, find_unused_parameters
and static_graph to DistributedDataParallel(...); training.grad_accumulation k to k-1
micro-batches under ddp.no_sync(); comm_hook none/fp16/bf16 (or grad_reduce_dtype) to
timed_hooks.py's copies of PyTorch's default hooks; training.optimizer to torch.optim
(SGD, SGD with momentum 0.9, Adam, AdamW with their defaults).

Per step (every rank measures; rank 0's are the step's values): forward (+ loss), backward
(loss.backward() less the communication it waited for), exposed communication, optimizer
(step + zero_grad(set_to_none=True)), summed all-reduce time and every bucket's {bytes,
ready_s, start_s, end_s} from the step's start. With one rank, or --independent, there is no
DDP (a script without DDP, as calibrate/exec does). --no-timing-hook leaves DDP's built-in
all-reduce in place (no per-bucket times; backward then includes the communication it waited
for): the same step without the observer, to measure what the timing hook costs. The first --warmup-steps steps (default 2:
the first runs with one bucket, the second rebuilds the buckets in its forward,
torch/nn/parallel/distributed.py:1026) are marked "warmup". --min-seconds S measures more than
--steps steps when the last warm-up step says --steps would take less than S seconds:
ceil(S / that step), at most 20 x --steps, the ranks' largest count (step_loop.py
measured_step_count); results[0].measured_steps says how many ran.

--device cuda runs each rank on its own GPU (cuda:RANK; nccl between ranks, none for one rank),
training.precision amp_bf16 under torch.autocast, training.optimizer_impl as torch's foreach /
fused / for-loop optimizer, and times the phases with CUDA events (step_loop.py); it adds the
peak allocated and the device's used memory to the results (ddpsim-exec --backend cuda's keys).
Without a CUDA device it exits 77 with one line, as ddpsim-exec --backend cuda does.
--profile-trace F: after the measured steps, 3 more under torch.profiler (1 warm-up, 2 recorded:
CPU ops with their Python stacks and nn.Module regions, and CUDA kernels with --device cuda);
rank 0 writes the Kineto trace to F (gzip when F ends in .gz), the format `ddpsim validate
--trace` and `ddpsim-calibrate import kineto` read. Needs a torch with Kineto (exit 2 without).

Output: the document ddpsim-exec writes (calibrate/exec/results.hpp: context, scenario,
results[0] with medians, "steps" rows, "buckets"), written by rank 0 atomically once every
rank finished. Exit 0; 2 with one line for a scenario PyTorch DDP cannot be asked for here
(--check stops after that check); 1 with one line when torch is missing or a rank failed.
"""

import argparse
import functools
import os
import sys

from calibrate.torch import program

PROG = "ddpsim-torch-runner"
fail = functools.partial(program.fail, PROG)
program.require_torch(PROG)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from calibrate.torch import run_config, step_loop  # noqa: E402
from calibrate.torch.run_results import results_document  # noqa: E402
from calibrate.torch.workload_model import Unsupported  # noqa: E402
from ddpsim_torch.records import write_json_atomic  # noqa: E402


NO_DEVICE = 77  # ddpsim-exec's exit code without a CUDA device (ddpsim-validate reads it)


def rank_main(rank, world, cfg, out):
    torch.set_num_threads(1)
    if cfg.device == "cuda":
        torch.cuda.set_device(rank)
    dist.init_process_group(cfg.backend, init_method="env://", rank=rank, world_size=world,
                            timeout=run_config.TIMEOUT)
    try:
        record = step_loop.run_rank(cfg, rank, world)
        records = [None] * world
        dist.all_gather_object(records, record)
        if rank == 0:
            write_json_atomic(out, results_document(cfg, records))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _check_devices(cfg):
    if not torch.cuda.is_available():
        fail(NO_DEVICE, f"no CUDA device (torch {torch.__version__}, "
                        f"built with CUDA {torch.version.cuda})")
    if torch.cuda.device_count() < cfg.ranks:
        fail(2, f"{cfg.ranks} ranks need {cfg.ranks} GPUs (one each); this machine has "
                f"{torch.cuda.device_count()}")


def main():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("point", nargs="+", help="one point (several with --check)")
    ap.add_argument("--workload", action="append", required=True,
                    help="ddpsim's workload of the point (one per point)")
    ap.add_argument("--nproc", type=int)
    ap.add_argument("--steps", type=int)
    ap.add_argument("--warmup-steps", type=int, default=2)
    ap.add_argument("--min-seconds", type=float, default=0.0,
                    help="measure more than --steps steps when the last warm-up step says they "
                         "take less than this many seconds (at most 20x --steps; 0: --steps)")
    ap.add_argument("--independent", action="store_true",
                    help="every rank trains alone, no DDP (the efficiency baseline)")
    ap.add_argument("--no-timing-hook", action="store_true",
                    help="DDP's built-in all-reduce (no comm hook): steps timed, buckets not, "
                         "backward includes the communication it waits for")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="cuda: one GPU per rank, nccl between ranks, CUDA-event timing")
    ap.add_argument("--profile-trace", default="",
                    help="rank 0's torch.profiler trace of 2 steps after the measured ones")
    ap.add_argument("--out")
    ap.add_argument("--check", action="store_true",
                    help="only check that PyTorch can run the point; exit 0 or 2")
    ap.add_argument("--facts", help="with --check: write what this torch does (JSON) here")
    a = ap.parse_intermixed_args()
    if len(a.point) != len(a.workload) or (len(a.point) > 1 and not a.check):
        fail(2, "one --workload per point, and one point unless --check")
    for point, workload in zip(a.point, a.workload):
        try:
            cfg = run_config.load(point, workload, a.nproc, a.steps, a.warmup_steps,
                                  a.independent, not a.no_timing_hook, a.device,
                                  os.path.abspath(a.profile_trace) if a.profile_trace else "",
                                  a.min_seconds)
            step_loop.build(cfg, rank=0)  # the module must be ddpsim's workload
            if a.device == "cuda" and not a.check:
                _check_devices(cfg)  # no device: 77, whatever else this torch lacks
            run_config.check_torch(cfg)
        except (Unsupported, OSError, ValueError, KeyError) as e:
            fail(2, f"{point}: {e}")
    if a.check:
        if a.facts:
            write_json_atomic(a.facts, run_config.facts())
        return 0
    if not a.out:
        fail(2, "--out is required (unless --check)")
    torchrun = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    try:
        if torchrun:
            world = int(os.environ["WORLD_SIZE"])
            if world != cfg.ranks:
                fail(2, f"WORLD_SIZE {world} differs from the point's {cfg.ranks} ranks")
            rank_main(int(os.environ["RANK"]), world, cfg, a.out)
        else:
            program.spawn_ranks(rank_main, (cfg.ranks, cfg, a.out), cfg.ranks)
    except Exception as e:  # a rank failed: one line, no results file (rank 0 writes last)
        fail(1, f"a rank failed: {program.error_line(e)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
