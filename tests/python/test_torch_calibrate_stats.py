#!/usr/bin/env python3
"""The torch calibration's statistics (calibrate/torch/torch_calibrate.py), hand-computed.

Run by ctest (torch.calibrate_stats, label `torch`) with a python that imports torch (the
calibration module imports it at the top) and PYTHONPATH=$SRC:$SRC/python (the calibrate.torch
package); exit 77 (skipped) without torch.

  - _trimmed_mean drops the lowest and highest 10% (rounded down) and averages the rest: on
    this machine the optimizer step and gloo's all-reduces are bimodal, and the median of a
    two-mode sample jumps between the modes.
"""

import sys

try:
    import torch  # noqa: F401
except ImportError as e:
    print(f"skipped: no torch ({e})")
    sys.exit(77)

from calibrate.torch import torch_calibrate  # noqa: E402


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

    for f in failures:
        print(f"FAIL {f}")
    if failures:
        sys.exit(1)
    print("torch calibration statistics: 4 of 4 hand-computed values")


if __name__ == "__main__":
    main()
