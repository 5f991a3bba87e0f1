#!/usr/bin/env python3
"""Step-time errors of one validation run's predictions against another run's measurements.

  python3 scripts/compare-predictions.py PRED.json MEAS.json [PRED2.json MEAS2.json ...] [-v]

For re-predicting measured sweeps with a changed model or profile without measuring again:
`ddpsim-validate SWEEP.json --runner torch --profile SAVED-profile.json --predict-only --out
PRED.json` (or `ddpsim predict SWEEP.json --profile SAVED-profile.json --format json`, the same
numbers) predicts every point; PRED.json may also be an earlier validation run. MEAS.json is the
earlier run of the same sweep. Points are matched by their sweep coordinates; per pair and pooled: the
median and largest |analytic step error| against MEAS's measured step, how many exceed 10%, the
signed median. -v also lists every point.
"""
import json
import statistics
import sys


def _points(path):
    """{sweep coordinates: {quantity: {"analytic": ..., "measured"?: ...}}} of a validation run
    (points[].rows) or of a prediction document (results[], `ddpsim predict --format json`)."""
    with open(path) as f:
        doc = json.load(f)
    if "results" in doc:
        return {json.dumps(r.get("sweep_point", {}), sort_keys=True):
                {"step_time_s": {"analytic": r["step_time_s"]}} for r in doc["results"]}
    return {json.dumps(p["point"], sort_keys=True): {r["quantity"]: r for r in p["rows"]}
            for p in doc["points"]}


def _line(label, errors):
    a = [abs(e) for e in errors]
    return (f"{label}: |step error| median {100 * statistics.median(a):.1f}%, max "
            f"{100 * max(a):.1f}%, over 10%: {sum(x > 0.1 for x in a)} of {len(a)}; signed "
            f"median {100 * statistics.median(errors):+.1f}%")


def main(argv):
    verbose = "-v" in argv
    files = [a for a in argv if a != "-v"]
    if not files or len(files) % 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    pooled = []
    for pred_file, meas_file in zip(files[::2], files[1::2]):
        pred, meas = _points(pred_file), _points(meas_file)
        missing = sorted(set(meas) - set(pred))
        if missing:
            print(f"{pred_file}: no prediction for {missing[0]} (and {len(missing) - 1} more)",
                  file=sys.stderr)
            return 2
        errors = []
        for key, rows in meas.items():
            m = rows["step_time_s"]["measured"]
            e = (pred[key]["step_time_s"]["analytic"] - m) / m
            errors.append(e)
            if verbose:
                print(f"  {key}: {100 * e:+.1f}%")
        print(_line(f"{pred_file} vs {meas_file}", errors))
        pooled += errors
    if len(files) > 2:
        print(_line("pooled", pooled))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
