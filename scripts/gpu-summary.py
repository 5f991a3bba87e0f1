#!/usr/bin/env python3
"""One markdown table of every one-GPU validation in a scripts/gpu-run.sh output folder.

  python3 scripts/gpu-summary.py results/gpu/run-DATE

Reads validation-cuda*.json (ddpsim validate --backend cuda [--runner torch]: rows of step,
forward, backward, optimizer time and memory, predicted by the analytic engine against the
measurement) and prints per file the runner, the device and each row's predicted, measured and
relative error; exit 1 when the folder has none.
"""
import glob
import json
import os
import sys


def main(folder):
    files = sorted(glob.glob(os.path.join(folder, "validation-cuda*.json")))
    if not files:
        print(f"gpu-summary: no validation-cuda*.json in {folder}", file=sys.stderr)
        return 1
    print("| validation | runner | quantity | predicted | measured | error |")
    print("|---|---|---|---:|---:|---:|")
    for f in files:
        with open(f) as fh:
            doc = json.load(fh)
        ctx = doc.get("context", {})
        for r in doc["rows"]:
            q = r["quantity"]
            scale, unit = (1 / 2**30, "GiB") if q.endswith("bytes") else (1e3, "ms")
            err = r.get("error_analytic")
            print(f"| {os.path.basename(f)} | {ctx.get('runner', '')} on {ctx.get('device', '')} "
                  f"| {q} | {r['analytic'] * scale:.3f} {unit} | {r['measured'] * scale:.3f} {unit} "
                  f"| {'-' if err is None else f'{100 * err:+.1f}%'} |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
