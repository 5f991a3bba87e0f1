#!/usr/bin/env python3
"""calibrate/torch/window_probe.py: its ratios from hand-computed medians, and a real two-rank
run (gloo over loopback, one small size and window, two repetitions) writing a complete file.

Run by ctest (torch.window_probe, label `torch`) from the source root with a python that imports
torch.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "..", "..", "calibrate", "torch", "window_probe.py")
sys.path.insert(0, os.path.dirname(PROBE))

from window_probe import derived  # noqa: E402

failures = []


def near(what, got, want):
    if got is None or abs(got - want) > 1e-9:
        failures.append(f"{what}: {got!r}, want {want!r}")


def main():
    # The docstring's case: alone 10 ms of compute and 6 of all-reduce; beside each other the
    # compute took 12 and the all-reduce ended at 14, 2 past the compute: 4 of its 6 done in the
    # 12 overlapped (1 - 2/6, slowdown 12/4 = 3), the compute's 2 lost there (12 / 10 = 1.2).
    d = derived(10, 6, 12, 14)
    near("progress", d["progress_in_window"], 2 / 3)
    near("all-reduce slowdown", d["all_reduce_slowdown"], 3.0)
    near("compute slowdown", d["compute_slowdown_in_overlap"], 1.2)
    # Ended inside the window: all done, slowed end / alone = 9 / 6; the compute lost 1 in 9.
    d = derived(20, 6, 21, 9)
    near("inside: progress", d["progress_in_window"], 1.0)
    near("inside: all-reduce slowdown", d["all_reduce_slowdown"], 1.5)
    near("inside: compute slowdown", d["compute_slowdown_in_overlap"], 9 / 8)
    # No progress in the window (it ended a whole alone-time after the compute): no slowdown.
    d = derived(3, 6, 3, 9.5)
    if d["all_reduce_slowdown"] is not None or d["progress_in_window"] > 0:
        failures.append(f"no progress: {d!r}")

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "probe.json")
        r = subprocess.run([sys.executable, PROBE, "--sizes-mib", "0.25", "--windows-ms", "2",
                            "--reps", "2", "--out", out], capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            failures.append(f"probe run: exit {r.returncode}: {r.stderr.strip()[-400:]}")
        else:
            rows = json.load(open(out))["rows"]
            if len(rows) != 1:
                failures.append(f"probe run: {len(rows)} rows, want 1")
            for row in rows:
                for k in ("compute_alone_ms", "all_reduce_alone_ms", "compute_beside_ms",
                          "all_reduce_end_ms"):
                    if not row.get(k, 0) > 0:
                        failures.append(f"probe run: {k} = {row.get(k)!r}")
        bad = subprocess.run([sys.executable, PROBE, "--reps", "0"], capture_output=True,
                             text=True, timeout=60)
        if bad.returncode != 2 or len(bad.stderr.strip().splitlines()) != 1:
            failures.append(f"--reps 0: exit {bad.returncode}, stderr {bad.stderr!r}")
    for f in failures:
        print(f"FAIL {f}")
    if failures:
        sys.exit(1)
    print("window probe: ratios by hand, a real two-rank run, a refusal")


if __name__ == "__main__":
    main()
