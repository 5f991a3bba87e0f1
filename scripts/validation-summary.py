#!/usr/bin/env python3
"""The goal-level summary of ddpsim-validate documents (scripts/validation-report.py, which
writes results/VALIDATION.md, uses its helpers).

    python3 scripts/validation-summary.py results/validation-vm-20261206-torch-mlp.json [more.json]

Per document (and pooled over all of them): points and runner; median and max |step-time error|
(analytic; event in brackets) and how many points exceed 5% and 10%; per component (forward,
backward, optimizer, summed communication) the median signed error and its range, i.e. the
residuals that say what the runner does differently; exposed communication |predicted -
measured| as a fraction of the measured step (median, max, points over 10%); measured vs
predicted bucket counts; the bucket-cap choice (predicted best in the measured 95% set); and
the measurement's own spread: the 95% CI width of each point's median step relative to it;
with --recalibrate-each, the error of the median prediction over the calibrations and the
predictions' spread; the points that are the calibration's own job pass measured against it (the
machine's drift in between); and how many points a perfect prediction would still put over 10%
from the measurement's own run-to-run noise (noise_floor).
Then the points that are the same job twice: equal predictions of every row (e.g. bucket caps
that give PyTorch the same buckets): how far apart their measured medians are (max / min), and
the error of the prediction against the median of their medians.
Reads the documents only; prints markdown to stdout.
"""
import json
import math
import statistics
import sys

# d2(n): the expected range of n normal samples in standard deviations (the control-chart
# constant; e.g. Montgomery, Introduction to Statistical Quality Control, table VI).
_D2 = {2: 1.128, 3: 1.693, 4: 2.059, 5: 2.326, 6: 2.534, 7: 2.704, 8: 2.847, 9: 2.970,
       10: 3.078}


def pct(x):
    return "-" if x is None else f"{100 * x:+.1f}%"


def rows_by_quantity(point):
    return {r["quantity"]: r for r in point["rows"]}


def noise_floor(points, limit=0.10):
    """How many points a perfect prediction would put over `limit` from the measurement's own
    run-to-run noise: per point, the standard deviation of one run's median step estimated from
    the runs' range (range / d2(runs), relative to the pooled median), that of the pooled median
    as the mean of `runs` of them (/ sqrt(runs)), and the normal probability of an error beyond
    `limit`, erfc(limit / (sd sqrt 2)), summed. Points with one run (or more than 10) are left
    out. Returns (expected count, points counted). E.g. runs 3, min 90, median 100, max 110 ms:
    sd 20 / 1.693 / 100 / sqrt 3 = 6.82%, P = erfc(0.1 / (0.0682 sqrt 2)) = 0.143."""
    total, counted = 0.0, 0
    for p in points:
        sp = rows_by_quantity(p)["step_time_s"].get("spread")
        if not sp or sp["runs"] not in _D2 or not sp["median"] > 0:
            continue
        sd = (sp["max"] - sp["min"]) / _D2[sp["runs"]] / sp["median"] / math.sqrt(sp["runs"])
        total += math.erfc(limit / (sd * math.sqrt(2))) if sd > 0 else 0.0
        counted += 1
    return total, counted


def step_stats(points):
    """|step error| of the analytic (and event) prediction over `points`: n, median, max, how
    many over 5% and 10%, and the signed range."""
    step = [rows_by_quantity(p)["step_time_s"] for p in points]
    ea = [abs(r["error_analytic"]) for r in step]
    ee = [abs(r["error_event"]) for r in step]
    signed = [r["error_analytic"] for r in step]
    return {"n": len(points), "median": statistics.median(ea), "max": max(ea),
            "median_event": statistics.median(ee), "max_event": max(ee),
            "over5": sum(e > 0.05 for e in ea), "over10": sum(e > 0.10 for e in ea),
            "lo": min(signed), "hi": max(signed)}


COMPONENTS = ("forward_time_s", "backward_time_s", "optimizer_time_s", "comm_time_s",
              "exposed_comm_s", "step_time_s")


def component_stats(points, quantity):
    """Median signed error (analytic), its range, and the median predicted and measured
    seconds of one row over `points`; None when no point measured it."""
    rs = [rows_by_quantity(p)[quantity] for p in points]
    errs = [r["error_analytic"] for r in rs if r["error_analytic"] is not None]
    if not errs:
        return None
    return {"median": statistics.median(errs), "lo": min(errs), "hi": max(errs),
            "predicted_s": statistics.median(r["analytic"] for r in rs),
            "measured_s": statistics.median(r["measured"] for r in rs)}


def exposed_errors(points):
    """Per point, exposed communication |predicted - measured| / the measured step."""
    out = []
    for p in points:
        r = rows_by_quantity(p)
        out.append(abs(r["exposed_comm_s"]["analytic"] - r["exposed_comm_s"]["measured"]) /
                   r["step_time_s"]["measured"])
    return out


def bucket_count_matches(points):
    """(points whose measured bucket count is the predicted one, points with 2+ ranks)."""
    multi = [p for p in points if p["gpus"] > 1]  # one rank runs no Reducer: no buckets
    return sum(p["bucket_count"]["predicted"] == p["bucket_count"]["measured"]
               for p in multi), len(multi)


def choice_stats(choice):
    """(groups whose predicted best cap is in the measured 95% set, groups with at least one
    tied predicted best in it, groups)."""
    return (sum(g["predicted_best_in_set_analytic"] for g in choice),
            sum(g["some_predicted_best_in_set_analytic"] for g in choice), len(choice))


def measurement_spread(points):
    """Per point, the 95% CI width of the measured median step relative to it."""
    return [(p["measured_step_time"]["ci_hi_s"] - p["measured_step_time"]["ci_lo_s"]) /
            p["measured_step_time"]["median_s"] for p in points]


def drift(points):
    """Measured step / the calibration's own job pass, for the points that are that job."""
    return [p["calibration_job"]["measured_over_calibration"] for p in points
            if "calibration_job" in p]


def summarize(name, points, choice):
    out = []
    w = out.append
    s = step_stats(points)
    w(f"**{name}**: {s['n']} points. |step error| median {100 * s['median']:.1f}%"
      f" ({100 * s['median_event']:.1f}%), max {100 * s['max']:.1f}% ({100 * s['max_event']:.1f}%);"
      f" over 5%: {s['over5']}, over 10%: {s['over10']}"
      f" (analytic; event in brackets). Signed step errors {pct(s['lo'])}..{pct(s['hi'])}.")
    w("")
    w("| component | median error | range | median predicted ms | median measured ms |")
    w("|---|---|---|---|---|")
    for q in COMPONENTS:
        c = component_stats(points, q)
        if c is None:
            continue
        w(f"| {q} | {pct(c['median'])} | {pct(c['lo'])}..{pct(c['hi'])} | "
          f"{1e3 * c['predicted_s']:.2f} | {1e3 * c['measured_s']:.2f} |")
    exposed = exposed_errors(points)
    w("")
    w(f"Exposed communication |predicted - measured| / measured step: median "
      f"{100 * statistics.median(exposed):.1f}%, max {100 * max(exposed):.1f}%, over 10%: "
      f"{sum(e > 0.10 for e in exposed)} of {len(exposed)}.")
    same, multi = bucket_count_matches(points)
    w(f"Bucket counts (2+ ranks): measured = predicted at {same} of {multi} points.")
    if choice:
        ins, some, groups = choice_stats(choice)
        w(f"Bucket-cap choice: predicted best in the measured 95% set in {ins} of {groups} "
          f"groups ({some} with at least one tied predicted best).")
    without = [p for p in points if "without_torch_calibration" in p]
    if without:
        w(without_torch(without, choice))
    recal = recalibrated(points)
    if recal:
        w(recal)
    spread = measurement_spread(points)
    w(f"Measurement spread: 95% CI of the median step / median: median "
      f"{100 * statistics.median(spread):.1f}%, max {100 * max(spread):.1f}%.")
    jobs = drift(points)
    if jobs:
        w(f"Drift: {len(jobs)} point(s) are the calibration's own DDP job (cap 25, its overlap), "
          f"measured at {statistics.median(jobs):.2f}x the job pass's step (median; "
          f"{min(jobs):.2f}..{max(jobs):.2f}): the machine's move between the calibration and "
          f"the measurement, which no prediction made before it can carry.")
    floor, counted = noise_floor(points)
    if counted:
        w(f"Noise floor: a perfect prediction would put {floor:.1f} of these {counted} points "
          f"over 10% from the run-to-run spread of the measurement alone (each point's runs' "
          f"range / d2 / sqrt(runs)); the calibration's own noise comes on top.")
    return "\n".join(out)


def without_torch_stats(points, choice):
    """The same measurements against the prediction without the torch calibration (ddpsim-
    validate --runner torch keeps it per point as "without_torch_calibration"): per point the
    |step error| and the exposed communication's |error| / measured step; and, over the bucket-
    choice groups these points belong to, (groups whose every tied predicted best cap is in the
    measured 95% set, groups)."""
    step, exposed = [], []
    for p in points:
        r, wo = rows_by_quantity(p), p["without_torch_calibration"]
        meas = r["step_time_s"]["measured"]
        step.append(abs(wo["step_time_s"] - meas) / meas)
        exposed.append(abs(wo["exposed_comm_s"] - r["exposed_comm_s"]["measured"]) / meas)
    ins = groups = 0
    for g in choice or []:
        pred = {}
        for p in points:
            label = {k: v for k, v in p["point"].items() if k != "parallelism.bucket_cap_mb"}
            label.setdefault("gpus", p["gpus"])
            if all(label.get(k) == v for k, v in g["group"].items()):
                pred[float(p["point"]["parallelism.bucket_cap_mb"])] = (
                    p["without_torch_calibration"]["step_time_s"])
        if not pred:  # a group of another document (pooled)
            continue
        best = min(pred.values())
        groups += 1
        ins += all(c in g["measured_best_set_mb"] for c, t in pred.items()
                   if t <= best * (1 + 1e-9))
    return {"step": step, "exposed": exposed, "choice": (ins, groups)}


def without_torch(points, choice):
    s = without_torch_stats(points, choice)
    step, exposed = s["step"], s["exposed"]
    line = (f"Without the torch calibration (same measurements, the model and CPU profile's "
            f"costs): |step error| median {100 * statistics.median(step):.1f}%, max "
            f"{100 * max(step):.1f}%, over 10%: {sum(e > 0.10 for e in step)} of {len(step)}; "
            f"exposed communication / step median {100 * statistics.median(exposed):.1f}%, max "
            f"{100 * max(exposed):.1f}%, over 10%: {sum(e > 0.10 for e in exposed)}")
    if choice:
        ins, groups = s["choice"]
        line += f"; predicted best cap (all tied) in the measured 95% set in {ins} of {groups}"
    return line + "."


def recalibrated_stats(points):
    """With --recalibrate-each every repetition predicted on its own calibration: per point the
    |step error| of the median prediction over the calibrations and the predictions' half-range
    relative to their median; the number of calibrations; and, when every point has them, each
    point's median over the repetitions of its paired |error| (a repetition against its own
    calibration), else None. None without --recalibrate-each."""
    rs = [rows_by_quantity(p)["step_time_s"] for p in points]
    if not all("predicted_spread" in r for r in rs):
        return None
    paired = [statistics.median(e for e in r["paired_errors_analytic"] if e is not None)
              for r in rs if any(e is not None for e in r.get("paired_errors_analytic", []))]
    return {"median": [abs(r["predicted_spread"]["analytic"]["median"] / r["measured"] - 1)
                       for r in rs],
            "half": [r["predicted_spread"]["analytic"]["half_range_relative"] for r in rs],
            "runs": rs[0]["predicted_spread"]["analytic"]["runs"],
            "paired": [abs(e) for e in paired] if len(paired) == len(rs) else None}


def recalibrated(points):
    s = recalibrated_stats(points)
    if s is None:
        return ""
    med, half = s["median"], s["half"]
    line = (f"Over the {s['runs']} calibrations (--recalibrate-each): the median prediction's |step "
            f"error| median {100 * statistics.median(med):.1f}%, max {100 * max(med):.1f}%, over "
            f"10%: {sum(e > 0.10 for e in med)} of {len(med)}; the predictions' half-range / "
            f"median: median {100 * statistics.median(half):.1f}%, max {100 * max(half):.1f}%.")
    a = s["paired"]
    if a is not None:
        line += (f" Each repetition against its own calibration (the median over the "
                 f"repetitions of prediction / that repetition's median - 1): |step error| median "
                 f"{100 * statistics.median(a):.1f}%, max {100 * max(a):.1f}%, over 10%: "
                 f"{sum(e > 0.10 for e in a)} of {len(a)}.")
    return line


def identical_configurations(points):
    """Groups of points whose every predicted row is equal (the same job as ddpsim sees it)."""
    groups = {}
    for p in points:
        rows = rows_by_quantity(p)
        key = tuple(sorted((q, round(r["analytic"], 12)) for q, r in rows.items()))
        groups.setdefault(key, []).append(p)
    out = []
    for ps in groups.values():
        if len(ps) < 2:
            continue
        meas = [rows_by_quantity(p)["step_time_s"]["measured"] for p in ps]
        pred = rows_by_quantity(ps[0])["step_time_s"]["analytic"]
        med = statistics.median(meas)
        label = ", ".join(f"{k}={v}" for k, v in ps[0]["point"].items()
                          if not all(q["point"].get(k) != v for q in ps[1:]))
        out.append(f"| {label or '(all keys differ)'} | {len(ps)} | "
                   f"{' / '.join(f'{1e3 * m:.0f}' for m in meas)} | {max(meas) / min(meas):.2f} | "
                   f"{1e3 * pred:.0f} | {pct((pred - med) / med)} |")
    if not out:
        return ""
    return ("Points that are the same job (every predicted row equal):\n\n"
            "| shared keys | points | measured median step, ms | max / min | predicted ms | "
            "error vs their median |\n|---|---|---|---|---|---|\n" + "\n".join(out) + "\n")


def main(paths):
    pooled, choices = [], []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        runner = doc.get("context", {}).get("runner", "exec")
        print(summarize(f"{path} (runner {runner})", doc["points"], doc.get("bucket_choice")))
        print()
        same = identical_configurations(doc["points"])
        if same:
            print(same)
        pooled += doc["points"]
        choices += doc.get("bucket_choice", [])
    if len(paths) > 1:
        print(summarize("pooled", pooled, choices))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
