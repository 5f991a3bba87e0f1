#!/usr/bin/env python3
"""A GPU census (scripts/gpu_census.py) as the blocks of a GPU preset.

    python3 scripts/census-to-preset.py census.json [--preset scenarios/hardware/gpus/h100-sxm.json]

Prints, as JSON:
- "gemm_table": {"source", <dtype>: [{"m", "n", "k", "tflops"}]}, ready to replace a preset's
  gemm_table (scenarios/hardware/gpus/*.json; the keys ddpsim reads, model/scenario/
  hardware_io.cpp parse_gemm_table: the key table refuses any other key, so the census's
  transa/transb/dtype are not copied: each transpose variant is its own entry, as the H200
  table has them, and the source says which is which). The source is filled from the census's
  context (GPU, driver, torch/CUDA, date, git revision, warm-up, clocks).
- "memory_bound" (not a preset key: for reading): per op and dtype, GB/s by size, and each
  size's efficiency against the largest clone's bandwidth and, with --preset, against the
  preset's memory_bandwidth_gbytes_per_s; "memory_efficiency" the largest clone over the
  datasheet figure (the preset's memory_efficiency) when --preset is given.
Exit 1 when the census has no GEMM entry.
"""

import argparse
import json
import sys


def transpose_note(entries):
    """Which entries of each dtype's list are transposed: "NT: 1, 4; TN: 2" (0-based)."""
    by_dtype = {}
    for e in entries:
        if e.get("tflops") and e["tflops"] > 0:
            by_dtype.setdefault(e["dtype"], []).append(
                ("T" if e["transa"] else "N") + ("T" if e["transb"] else "N"))
    notes, seen = [], {}
    for d, variants in by_dtype.items():
        groups = {}
        for i, v in enumerate(variants):
            if v != "NN":
                groups.setdefault(v, []).append(str(i))
        text = "; ".join(f"{v}: {', '.join(ix)}" for v, ix in sorted(groups.items())) or "none"
        same = [o for o, t in seen.items() if t == text]
        notes.append(f"{d} as {same[0]}" if same else f"{d} {text}")
        seen[d] = text
    return "; ".join(notes)


def gemm_table(doc):
    sec = doc.get("sections", {}).get("gemm", {})
    res = sec.get("results", {})
    entries = res.get("entries", [])
    ctx = doc.get("context", {})
    table = {}
    for e in entries:
        if not (e.get("tflops") and e["tflops"] > 0):
            continue
        table.setdefault(e["dtype"], []).append(
            {"m": e["m"], "n": e["n"], "k": e["k"], "tflops": float(f"{e['tflops']:.4g}")})
    warm = res.get("warmup", {})
    smi = res.get("smi_after_warmup", {})
    transposes = transpose_note(entries)
    source = (
        f"scripts/gpu_census.py on {ctx.get('gpu_name') or 'no GPU (dry run)'}"
        f" (driver {ctx.get('driver', 'unknown')}, torch {ctx.get('torch_version')}, CUDA "
        f"{ctx.get('cuda_version')}, {ctx.get('date')}, git {ctx.get('git_revision')}): "
        f"{res.get('method', '')} (after the warm-up: SM clock {smi.get('clocks.sm', '?')}, "
        f"power {smi.get('power.draw', '?')}). The shapes are the forward, dgrad and wgrad of "
        f"GPT-2 and Llama 3's linears at 4096 and 8192 tokens, squares and Azure's shapes; operands "
        f"transposed as PyTorch runs them (entries by 0-based index in each list, NN unless "
        f"listed: {transposes or 'none'})"
        + (". DRY RUN on the CPU: not a GPU's rates" if doc.get("dry_run") else ""))
    return dict({"source": source}, **table)


def memory_bound(doc, datasheet):
    rows = doc.get("sections", {}).get("memory", {}).get("results", {}).get("rows", [])
    ok = [r for r in rows if r.get("gbytes_per_s")]
    clones = [r for r in ok if r["op"] == "clone"]
    best = max(clones, key=lambda r: r["elements"])["gbytes_per_s"] if clones else None
    out = {"reference_gbytes_per_s": best, "datasheet_gbytes_per_s": datasheet, "ops": {}}
    if best and datasheet:
        out["memory_efficiency"] = round(best / datasheet, 3)
    for r in ok:
        key = f"{r['op']}/{r['dtype']}"
        row = {"elements": r["elements"], "gbytes_per_s": round(r["gbytes_per_s"], 2),
               "us": round(r["us"], 3)}
        if best:
            row["of_clone"] = round(r["gbytes_per_s"] / best, 3)
        if datasheet:
            row["of_datasheet"] = round(r["gbytes_per_s"] / datasheet, 3)
        out["ops"].setdefault(key, []).append(row)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("census")
    ap.add_argument("--preset", help="a GPU preset: its memory_bandwidth_gbytes_per_s")
    args = ap.parse_args(argv)
    with open(args.census) as f:
        doc = json.load(f)
    datasheet = None
    if args.preset:
        with open(args.preset) as f:
            datasheet = json.load(f).get("memory_bandwidth_gbytes_per_s")
    table = gemm_table(doc)
    if len(table) == 1:
        print(f"census-to-preset: {args.census} has no GEMM entry (gemm section: "
              f"{doc.get('sections', {}).get('gemm', {}).get('status', 'absent')})",
              file=sys.stderr)
        return 1
    json.dump({"gemm_table": table, "memory_bound": memory_bound(doc, datasheet)}, sys.stdout,
              indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
