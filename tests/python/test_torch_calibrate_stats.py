#!/usr/bin/env python3
"""The torch calibration's statistics (calibrate/torch/torch_calibrate.py), hand-computed.

Run by ctest (torch.calibrate_stats, label `torch`) from the source root with a python that
imports torch (the calibration module imports it at the top); exit 77 (skipped) without one.

  - _trimmed_mean drops the lowest and highest 10% (rounded down) and averages the rest: on
    this machine the optimizer step and gloo's all-reduces are bimodal, and the median of a
    two-mode sample jumps between the modes.
  - _union_s is the length of the union of [start, end] spans: the job pass's communication
    occupancy (gloo's two workers run two buckets at once).
  - job_summary pools the job pass's runs (one per process group) step by step.
"""

import os
import sys

try:
    import torch  # noqa: F401
except ImportError as e:
    print(f"skipped: no torch ({e})")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "calibrate", "torch"))
import torch_calibrate  # noqa: E402


def close(a, b):
    return abs(a - b) < 1e-12


def main():
    failures = []

    def check(what, got, want):
        if not close(got, want):
            failures.append(f"{what}: got {got}, want {want}")

    tm = torch_calibrate._trimmed_mean
    # Ten values: one dropped at each end (int(10 * 0.1) = 1); the rest 2..9 average 5.5.
    check("trimmed ten", tm([10, 1, 2, 3, 4, 5, 6, 7, 8, 9]), 5.5)
    # An outlier of 1000 among ten 7s and 14s goes with the trim: (4 * 7 + 4 * 14) / 8 = 10.5,
    # where the median of the same sample would be 7 or 14 by one value.
    check("bimodal", tm([7, 7, 7, 7, 7, 14, 14, 14, 14, 1000]), (7 * 4 + 14 * 4) / 8)
    # Fewer than ten: nothing dropped (int(9 * 0.1) = 0).
    check("nine", tm([1, 2, 3, 4, 5, 6, 7, 8, 90]), 126 / 9)
    check("empty", tm([]), 0.0)

    us = torch_calibrate._union_s
    # [0, 10] and [5, 12] overlap: 12; [20, 23] apart: + 3.
    check("union", us([(5, 12), (0, 10), (20, 23)]), 15)
    # Nested: the outer span alone.
    check("nested", us([(0, 10), (2, 3)]), 10)
    # Touching spans: 4 + 4.
    check("touching", us([(0, 4), (4, 8)]), 8)
    check("none", us([]), 0.0)

    # Two process groups' runs pooled: every step of both, then the trimmed mean (10 steps: one
    # dropped at each end). Optimizer 1..10 ms over the two runs: (2 + ... + 9) / 8 = 5.5 ms.
    def run(opts, occ):
        return {"steps": [{"step_s": 0.1, "optimizer_s": o, "optimizer_minor_faults": 2,
                           "exposed_comm_s": 0.0, "comm_occupancy_s": c, "backward_s": 2 * o}
                          for o, c in zip(opts, occ)],
                "bucket_bytes": [1024, 4096]}
    js = torch_calibrate.job_summary([run([1, 2, 3, 4, 5], [3] * 5), run([6, 7, 8, 9, 10], [5] * 5)])
    check("job optimizer", js["optimizer_s"], 5.5)
    # Occupancy 3 x5 and 5 x5: drop one 3 and one 5, (4 * 3 + 4 * 5) / 8 = 4.
    check("job occupancy", js["comm_occupancy_s"], 4.0)
    check("job processes", js["processes"], 2)
    check("job steps", js["steps"], 10)
    # Backward 2, 4, ..., 20: drop 2 and 20, (4 + 6 + ... + 18) / 8 = 11.
    check("job backward", js["backward_s"], 11.0)
    if js["bucket_bytes"] != [1024, 4096]:
        failures.append(f"job buckets: {js['bucket_bytes']}")

    for f in failures:
        print(f"FAIL {f}")
    if failures:
        sys.exit(1)
    print("torch calibration statistics: 13 of 13 hand-computed values, the job buckets")


if __name__ == "__main__":
    main()
