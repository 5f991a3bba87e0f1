#!/usr/bin/env python3
"""Writes results/VALIDATION.md from the run files that results/VALIDATION.manifest.json lists.

    python3 scripts/validation-report.py                     # regenerate results/VALIDATION.md
    python3 scripts/validation-report.py --check             # exit 1 when it is stale (ctest)
    python3 scripts/validation-report.py --run torch-mlp=results/validation-new.json [--run ...]
                                                             # point a run id at another file
                                                             # (the manifest is rewritten), then
                                                             # regenerate

The manifest holds, per validation kind, the method, the command that made its runs, the goal,
the known gaps (prose, edited by hand) and its runs: {"id", "label", "file"}. Every number in
the Markdown comes from the run files (`ddpsim validate` documents), through the helpers of
scripts/validation-summary.py. Nothing here reads a clock: the same files give the same text.
Formats: "sweep" (validate over a sweep, any runner), "efficiency" (validate --efficiency),
"trace" (validate --trace), "cuda" (validate --backend cuda).
"""
import argparse
import difflib
import importlib.util
import json
import os
import statistics
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MANIFEST = os.path.join(ROOT, "results", "VALIDATION.manifest.json")
OUT = os.path.join(ROOT, "results", "VALIDATION.md")

_spec = importlib.util.spec_from_file_location(
    "validation_summary", os.path.join(ROOT, "scripts", "validation-summary.py"))
summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summary)
pct, rows_by_quantity = summary.pct, summary.rows_by_quantity


def p1(x):
    """An unsigned percentage with one decimal."""
    return f"{100 * x:.1f}%"


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return json.load(f)


def provenance(doc):
    c = doc.get("context", {})
    date = c.get("date", "")[:10] or "-"
    rev = c.get("git_revision", "")[:7]
    return f"{date}, `{rev}`" if rev else date


def table(w, headers, rows):
    """A Markdown table: a header row, its rule, one row per list of cells."""
    w("| " + " | ".join(headers) + " |")
    w("|" + "---|" * len(headers))
    for cells in rows:
        w("| " + " | ".join(str(c) for c in cells) + " |")


def err_cell(errs):
    """median, max and the count over 10% of a list of |errors|."""
    if not errs:
        return "-"
    return (f"{p1(statistics.median(errs))}, {p1(max(errs))}, "
            f"{sum(e > 0.10 for e in errs)} of {len(errs)}")


def min_max_median(values, fmt="{:.2f}"):
    return (f"{fmt.format(statistics.median(values))} "
            f"({fmt.format(min(values))}..{fmt.format(max(values))})")


# -- sweeps (exec and torch runners) -------------------------------------------------------

def sweep_stats(points, choice):
    multi = [p for p in points if p["gpus"] > 1]
    s = summary.step_stats(points)
    s["points"] = points
    s["exposed"] = summary.exposed_errors(multi) if multi else []
    s["buckets"] = summary.bucket_count_matches(points)
    s["choice"] = summary.choice_stats(choice) if choice else None
    s["spread"] = summary.measurement_spread(points)
    s["floor"] = summary.noise_floor(points)
    s["recal"] = summary.recalibrated_stats(points)
    without = [p for p in points if "without_torch_calibration" in p]
    s["without"] = summary.without_torch_stats(without, choice) if without else None
    s["drift"] = summary.drift(points)
    return s


def sweep_groups(kind, runs):
    """(label, run, doc, stats) per run, and a pooled row (run and doc None) when the kind
    pools its runs."""
    rows, points, choice = [], [], []
    for run, doc in runs:
        rows.append((run["label"], run, doc, sweep_stats(doc["points"],
                                                          doc.get("bucket_choice"))))
        points += doc["points"]
        choice += doc.get("bucket_choice", [])
    if kind.get("pooled") and len(runs) > 1:
        rows.append(("**pooled**", None, None, sweep_stats(points, choice)))
    return rows


def sweep_result(s):
    exposed = s["exposed"]
    text = f"median {p1(s['median'])}, max {p1(s['max'])}, {s['over10']} of {s['n']} over 10%"
    if exposed:
        text += (f"; exposed comm within 10% of the step at {sum(e <= 0.10 for e in exposed)} "
                 f"of {len(exposed)}")
    return text


def sweep_met(s, goal):
    misses = []
    if "median" in goal and s["median"] > goal["median"]:
        misses.append(f"median {p1(s['median'])}")
    if "max" in goal and s["max"] > goal["max"]:
        misses.append(f"max {p1(s['max'])}")
    if "exposed_max" in goal and s["exposed"] and max(s["exposed"]) > goal["exposed_max"]:
        misses.append(f"exposed {p1(max(s['exposed']))}")
    return "yes" if not misses else "no (" + ", ".join(misses) + ")"


def sweep_main_rows(rows):
    for label, run, doc, s in rows:
        ins, some, groups = s["choice"] or (0, 0, 0)
        same, multi = s["buckets"]
        yield [label, f"`{run['file']}`" if run else "", provenance(doc) if doc else "", s["n"],
               f"{p1(s['median'])}, {p1(s['max'])}, {s['over10']} of {s['n']}",
               err_cell(s["exposed"]), f"{same} of {multi}",
               f"{ins} of {groups} ({some})" if groups else "-"]


def sweep_component_rows(rows):
    for label, _, _, s in rows:
        cells = [label]
        for q in summary.COMPONENTS:
            c = summary.component_stats(s["points"], q)
            cells.append("-" if c is None else pct(c["median"]))
        yield cells + [f"{p1(s['median_event'])}, {p1(s['max_event'])}"]


def sweep_measurement_rows(rows):
    for label, _, doc, s in rows:
        if doc is None:
            continue
        c = doc.get("context", {})
        floor, counted = s["floor"]
        at_least = f" (at least {c['min_seconds']} s of steps per run)" if c.get("min_seconds") else ""
        yield [label, f"{c.get('steps', '-')} x {c.get('repeat', '-')}{at_least}",
               f"{p1(statistics.median(s['spread']))}, {p1(max(s['spread']))}",
               f"{floor:.1f} of {counted}" if counted else "-",
               f"{c.get('load_average', '-')} / {c.get('load_average_after', '-')}"]


def sweep_recalibration_rows(rows):
    for label, _, _, s in rows:
        r = s["recal"]
        if r:
            yield [label, err_cell(r["median"]), err_cell(r["paired"]) if r["paired"] else "-",
                   f"{p1(statistics.median(r['half']))}, {p1(max(r['half']))}",
                   min_max_median(s["drift"]) if s["drift"] else "-"]


def sweep_without_rows(rows):
    for label, _, _, s in rows:
        wo = s["without"]
        if wo:
            ins, groups = wo["choice"]
            yield [label, err_cell(wo["step"]), err_cell(wo["exposed"]),
                   f"{ins} of {groups}" if groups else "-"]


def sweep_section(kind, runs, w):
    rows = sweep_groups(kind, runs)
    table(w, ["run", "file", "measured", "points", "\\|step error\\| median, max, over 10%",
              "exposed comm error / step (2+ ranks): median, max, over 10%",
              "buckets = predicted", "best cap in measured 95% set"], sweep_main_rows(rows))
    w("")
    w("Median signed error per component (analytic engine), and the event engine's |step "
      "error|:")
    w("")
    table(w, ["run", "forward", "backward", "optimizer", "comm (sum)", "exposed comm", "step",
              "event engine: \\|step error\\| median, max"], sweep_component_rows(rows))
    w("")
    table(w, ["run", "steps x repetitions", "95% CI of the median step / median: median, max",
              "noise floor (points a perfect prediction puts over 10%)",
              "load average before / after"], sweep_measurement_rows(rows))
    recal = list(sweep_recalibration_rows(rows))
    if recal:
        w("")
        w("With `--recalibrate-each` (a calibration before each repetition):")
        w("")
        table(w, ["run", "median prediction over the calibrations: \\|step error\\| median, "
                  "max, over 10%", "each repetition vs its own calibration",
                  "the predictions' half-range / median: median, max",
                  "measured / the calibration's own job pass: median (range)"], recal)
    without = list(sweep_without_rows(rows))
    if without:
        w("")
        w("The same measurements against the prediction without the torch calibration (the "
          "model with the CPU profile's costs only, kept per point by `validate --runner "
          "torch`):")
        w("")
        table(w, ["run", "\\|step error\\| median, max, over 10%",
                  "exposed comm error / step: median, max, over 10%",
                  "best cap (all tied) in measured 95% set"], without)


# -- efficiency ------------------------------------------------------------------------------

def efficiency_ratios(doc):
    """{ranks: [paired ratio medians]} over the points."""
    out = {}
    for p in doc["points"]:
        out.setdefault(p["gpus"], []).append(p["efficiency"]["paired_ratio"]["median"])
    return out


def ranks(g):
    return f"{g} rank{'s' if g > 1 else ''}"


def efficiency_result(doc):
    return "; ".join(f"{ranks(g)} {min(r):.3f}..{max(r):.3f}"
                     for g, r in sorted(efficiency_ratios(doc).items())) + \
        " (DDP step / N independent processes, median paired ratio per point)"


def efficiency_met(doc, goal):
    bad = sorted({p["gpus"] for p in doc["points"]
                  if abs(p["efficiency"]["paired_ratio"]["median"] - 1) > goal["ratio"]})
    return "yes" if not bad else "no (" + ", ".join(ranks(g) for g in bad) + ")"


def efficiency_rows(doc):
    for p in doc["points"]:
        e = p["efficiency"]
        r = e["paired_ratio"]
        per_bucket = e.get("overhead_per_bucket_s")
        yield [p["gpus"], p["point"].get("parallelism.bucket_cap_mb"), e["bucket_count"],
               f"{1e3 * e['ddp']['median_s']:.1f}", f"{1e3 * e['independent']['median_s']:.1f}",
               pct(e["ddp"]["median_s"] / e["independent"]["median_s"] - 1),
               "-" if per_bucket is None else f"{1e3 * per_bucket:.1f}",
               f"{r['median']:.3f} [{r['ci_lo']:.3f}, {r['ci_hi']:.3f}]",
               "yes" if e["within_5pct"] else "no"]


def efficiency_section(kind, runs, w):
    for run, doc in runs:
        w(f"`{run['file']}` ({provenance(doc)}; {doc['context'].get('steps')} steps x "
          f"{doc['context'].get('repeat')} repetitions per mode):")
        w("")
        table(w, ["ranks", "cap MB", "buckets", "DDP median ms", "independent median ms",
                  "overhead", "overhead per bucket ms", "paired ratio, median [95% CI]",
                  "within 5%"], efficiency_rows(doc))


# -- traces ----------------------------------------------------------------------------------

def trace_result(doc):
    p = doc["points"][0]
    step = rows_by_quantity(p)["step"]
    text = ""
    if p.get("replay_exposed_error_of_step") is not None:
        text = (f"replay: step {pct(step['error_replay'])}, exposed comm "
                f"{pct(p['replay_exposed_error_of_step'])} of the traced step; ")
    return text + (f"prediction on preset {doc['scenario'].get('hardware')}: step "
                   f"{pct(step['error_analytic'])}")


def trace_met(doc, goal):
    e = doc["points"][0].get("replay_exposed_error_of_step")
    if e is None:
        return "no replay"
    return "yes" if abs(e) <= goal["exposed_of_step"] else f"no ({pct(e)})"


def ms_or_dash(x):
    return "-" if x is None else f"{1e3 * x:.3f}"


def trace_section(kind, runs, w):
    for run, doc in runs:
        p = doc["points"][0]
        b = p["buckets"]
        t = doc["traced"]
        same = " (byte for byte the same)" if b["predicted_bytes"] == b["measured_bytes"] else ""
        w(f"**{run['label']}** (`{run['file']}`; {t.get('steps')} traced steps averaged, "
          f"{t.get('backend')}; predicted on preset {doc['scenario'].get('hardware')}): buckets "
          f"predicted "
          f"{len(b['predicted_bytes'])}, traced all-reduces per step "
          f"{len(b['measured_bytes'])}{same}. Milliseconds per step:")
        w("")
        table(w, ["quantity", "analytic", "replay", "traced", "analytic error",
                  "replay error / traced step"],
              ([r["quantity"], ms_or_dash(r["analytic"]), ms_or_dash(r.get("replay")),
                ms_or_dash(r["measured"]), pct(r["error_analytic"]),
                pct(r.get("error_replay_of_step"))] for r in p["rows"]))
        w("")


# -- one GPU (validate --backend cuda) -------------------------------------------------------

def cuda_result(doc):
    r = {x["quantity"]: x for x in doc["rows"]}
    return (f"step {pct(r['step_time_s']['error_analytic'])}, peak allocated "
            f"{pct(r['peak_allocated_bytes']['error_analytic'])}")


def cuda_met(doc, goal):
    r = {x["quantity"]: x for x in doc["rows"]}
    misses = [name for name, q, limit in (("step", "step_time_s", goal["step"]),
                                          ("memory", "peak_allocated_bytes", goal["memory"]))
              if abs(r[q]["error_analytic"]) > limit]
    return "yes" if not misses else "no (" + ", ".join(misses) + ")"


def cuda_cells(r):
    scale, unit = (1 / 2**30, "GiB") if r["quantity"].endswith("_bytes") else (1e3, "ms")
    return [r["quantity"], f"{r['analytic'] * scale:.2f} {unit}",
            f"{r['measured'] * scale:.2f} {unit}", pct(r["error_analytic"])]


def cuda_section(kind, runs, w):
    for run, doc in runs:
        w(f"`{run['file']}` ({provenance(doc)}; {doc['context'].get('device')}, "
          f"{doc['context'].get('steps')} steps):")
        w("")
        table(w, ["quantity", "predicted (analytic)", "measured", "error"],
              (cuda_cells(r) for r in doc["rows"]))
        w("")


FORMATS = {
    "sweep": (sweep_section, None, None),
    "efficiency": (efficiency_section, efficiency_result, efficiency_met),
    "trace": (trace_section, trace_result, trace_met),
    "cuda": (cuda_section, cuda_result, cuda_met),
}


# -- the document ----------------------------------------------------------------------------

def verdict_rows(kind, runs):
    """(label, result, met) rows of the verdict table for one kind."""
    fmt = kind["format"]
    goal = kind.get("goal", {})
    note = kind.get("verdict_note", "")
    out = []
    if fmt == "sweep":
        rows = sweep_groups(kind, runs)
        if kind.get("pooled") and len(runs) > 1:
            rows = [(f"{kind['short']}, {len(runs)} sweeps pooled", None, None, rows[-1][3])]
        else:
            rows = [(f"{kind['short']}: {label}", run, doc, s) for label, run, doc, s in rows]
        for label, _, _, s in rows:
            out.append((label, sweep_result(s), sweep_met(s, goal)))
    else:
        _, result, met = FORMATS[fmt]
        for run, doc in runs:
            out.append((f"{kind['short']}: {run['label']}", result(doc), met(doc, goal)))
    return [(label, result, met + (f" {note}" if note else "")) for label, result, met in out]


def render(manifest):
    out = []
    w = out.append
    loaded = []
    for kind in manifest["kinds"]:
        loaded.append((kind, [(run, load(run["file"])) for run in kind["runs"]]))
    w(f"# {manifest['title']}")
    w("")
    w("<!-- Generated by `python3 scripts/validation-report.py` from "
      "results/VALIDATION.manifest.json and the run files it lists; edit those, not this file "
      "(ctest results.VALIDATION.md fails when it is stale). -->")
    w("")
    w("## Verdict")
    w("")
    w("| validation | result | goal | met |")
    w("|---|---|---|---|")
    for kind, runs in loaded:
        for label, result, met in verdict_rows(kind, runs):
            w(f"| {label} | {result} | {kind.get('goal', {}).get('text', '-')} | {met} |")
    w("")
    for line in manifest.get("verdict", []):
        w(line)
    w("")
    for line in manifest.get("intro", []):
        w(line)
    for kind, runs in loaded:
        w("")
        w(f"## {kind['title']}")
        w("")
        for line in kind.get("note", []):
            w(line)
        if kind.get("note"):
            w("")
        w("**Method.** " + " ".join(kind["method"]))
        w("")
        w("**Command.**")
        w("")
        for line in kind["command"]:
            w("    " + line)
        w("")
        w("**Current numbers.**")
        w("")
        FORMATS[kind["format"]][0](kind, runs, w)
        if out[-1] != "":
            w("")
        w("**Known gaps.**")
        w("")
        for gap in kind["gaps"]:
            w(f"- {gap}")
    return "\n".join(out) + "\n"


def die(message):
    """An input error: one line on stderr, exit 2."""
    print(f"validation-report: {message}", file=sys.stderr)
    sys.exit(2)


def set_runs(manifest, assignments):
    ids = {r["id"]: r for kind in manifest["kinds"] for r in kind["runs"]}
    for a in assignments:
        run_id, sep, path = a.partition("=")
        if not sep or run_id not in ids:
            die(f"--run {a}: expected ID=FILE with ID one of "
                     f"{', '.join(sorted(ids))} (add a run to results/VALIDATION.manifest.json "
                     f"for a new one)")
        rel = os.path.relpath(os.path.abspath(path), ROOT)
        if not os.path.isfile(os.path.join(ROOT, rel)):
            die(f"--run {a}: no file {rel}")
        old, ids[run_id]["file"] = ids[run_id]["file"], rel
        if old != rel:
            print(f"validation-report: {run_id}: {rel} (was {old}: no longer cited, remove it "
                  f"with its -profile.json)")


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--manifest", default=MANIFEST)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--check", action="store_true",
                    help="compare with --out instead of writing it; exit 1 when they differ")
    ap.add_argument("--run", action="append", default=[], metavar="ID=FILE",
                    help="use FILE for the run ID (rewrites the manifest)")
    args = ap.parse_args(argv)
    with open(args.manifest) as f:
        manifest = json.load(f)
    if args.run:
        if args.check:
            die("--run does not go with --check")
        set_runs(manifest, args.run)
    text = render(manifest)  # before the manifest is rewritten: a file it cannot read fails here
    if args.run:
        write(args.manifest, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    if args.check:
        try:
            with open(args.out) as f:
                old = f.read()
        except FileNotFoundError:
            old = ""
        if old == text:
            print(f"validation-report: {os.path.relpath(args.out, ROOT)} is up to date")
            return 0
        sys.stdout.writelines(difflib.unified_diff(
            old.splitlines(True), text.splitlines(True), "committed", "generated", n=1))
        print(f"validation-report: {os.path.relpath(args.out, ROOT)} is stale: run "
              f"`python3 scripts/validation-report.py`")
        return 1
    write(args.out, text)
    print(f"validation-report: wrote {os.path.relpath(args.out, ROOT)} ({text.count(chr(10))} "
          f"lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
