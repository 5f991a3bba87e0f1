"""The torch runner's results: the document ddpsim-exec writes (calibrate/exec/results.cpp
results_json), so that ddpsim-validate reads either the same way; its context block is
ddpsim_torch.records.run_context's.

  write_json_atomic("run.json", results_document(cfg, records))   # ddpsim_torch.records
"""

import statistics

import torch

from ddpsim_torch.records import run_context

_KEYS = ("step_time_s", "forward_time_s", "backward_time_s", "optimizer_time_s", "comm_time_s",
         "exposed_comm_s")


def results_document(cfg, records):
    """records: every rank's run_rank() record, rank order."""
    steps = records[0]["steps"]
    rows = []
    for i, s in enumerate(steps):
        row = dict(s)
        row["step"] = i + 1
        row["warmup"] = i < cfg.warmup_steps
        row["rank_step_time_s"] = [r["steps"][i]["step_time_s"] for r in records]
        rows.append(row)
    measured = [r for r in rows if not r["warmup"]]
    res = {"gpus": cfg.ranks, "nodes": 1, "per_gpu_batch": cfg.per_gpu_batch,
           "grad_accumulation": cfg.grad_accumulation,
           "global_batch": cfg.per_gpu_batch * cfg.grad_accumulation * cfg.ranks,
           "strategy": "ddp", "mode": "independent" if cfg.independent else "ddp",
           "comm_hook": cfg.hook, "overlap": cfg.overlap, "bucket_cap_mb": cfg.bucket_cap_mb,
           "optimizer": cfg.optimizer, "measured_steps": len(measured),
           "warmup_steps": cfg.warmup_steps, "min_seconds": cfg.min_seconds,
           "param_count": sum(t["numel"] for t in cfg.workload["tensors"]
                              if t["tied_to"] < 0)}
    for key in _KEYS:
        res[key] = statistics.median(r[key] for r in measured)
    res["throughput_samples_per_s"] = res["global_batch"] / res["step_time_s"]
    # Buckets of the measured step closest to the median (as results.cpp picks them).
    pick = min(measured, key=lambda r: abs(r["step_time_s"] - res["step_time_s"]))
    res["buckets"] = pick["buckets"]
    res["bucket_count"] = len(pick["buckets"])
    res["loss_first"] = rows[0]["loss"]
    res["loss_last"] = rows[-1]["loss"]
    res["steps"] = rows
    res["precision"] = cfg.precision
    res["optimizer_impl"] = cfg.optimizer_impl if cfg.device == "cuda" else "torch default"
    res.update(records[0].get("memory", {}))  # cuda: peak_memory_bytes, device_used_bytes
    context = run_context("ddpsim torch runner (calibrate/torch/ddp_runner.py)")
    context.update(backend=cfg.backend, threads_per_rank=torch.get_num_threads(),
                   device=torch.cuda.get_device_name() if cfg.device == "cuda" else "cpu")
    return {"context": context, "scenario": cfg.point_file, "name": cfg.name,
            "model": cfg.model_label, "results": [res]}
