#!/usr/bin/env python3
"""Markdown tables of a ddpsim calibration profile, as results/CALIBRATION.md shows them.

    python3 scripts/calibration-tables.py results/profile-vm.json > /tmp/tables.md

Sections: GEMMs (rank 0's medians), memory bandwidth and kernels, the piecewise alpha-beta
fits of every collective, the all_reduce rows with the nccl-tests columns, and interference.
Reads the profile only; prints to stdout.
"""
import json
import sys


def ms(s):
    return f"{s * 1e3:.2f}"


def main(path):
    p = json.load(open(path))
    ctx = p.get("context", {})
    out = []
    w = out.append
    w(f"Profile `{path}`: host `{ctx.get('host', '?')}`, {ctx.get('date', 'undated')}, "
      f"{p.get('ranks', '?')} ranks, command `{ctx.get('command', '?')}`.\n")
    w("## GEMMs (OpenBLAS sgemm, one thread per rank, both ranks at once; rank 0's median)\n")
    w("| GEMM | M x N x K | op | batch | median ms | p10..p90 ms | min..max ms | GFLOP/s |")
    w("|---|---|---|---|---|---|---|---|")
    for g in p.get("gemms", []):
        op = ("T" if g.get("transa") else "N") + ("T" if g.get("transb") else "N")
        w(f"| {', '.join(g.get('ops', []))} | {g['m']} x {g['n']} x {g['k']} | {op} | "
          f"{g.get('batch', '')} | {ms(g['time_s'])} | {ms(g['time_p10_s'])}..{ms(g['time_p90_s'])} | "
          f"{ms(g['time_min_s'])}..{ms(g['time_max_s'])} | {g['gflops']:.1f} |")
    w("\n## Memory bandwidth (STREAM-style, one thread per rank)\n")
    w("| kernel | ranks at once | GB/s per rank (median) | min..max |")
    w("|---|---|---|---|")
    for m in p.get("memory_bandwidth", []):
        w(f"| {m['kernel']} | {m.get('ranks_concurrent', 1)} | {m['gbytes_per_s']:.2f} | "
          f"{m['gbytes_per_s_min']:.2f}..{m['gbytes_per_s_max']:.2f} |")
    for k in p.get("kernels", []):
        w(f"\nKernel `{k['name']}` ({k.get('elements', 0):.0f} parameters): {ms(k['time_s'])} ms "
          f"(p10..p90 {ms(k['time_p10_s'])}..{ms(k['time_p90_s'])}), {k['gbytes_per_s']:.2f} GB/s.")
    coll = p.get("collectives", {})
    w(f"\n## Collectives ({coll.get('backend', '?')} {coll.get('version', '')}, "
      f"{coll.get('ranks', '?')} ranks, {coll.get('transport', '?')}; out-of-place rows)\n")
    w("Piecewise alpha-beta fit `t = alpha + beta*S` per size range (weights 1/t^2; breakpoints "
      "by least residual, segment count by BIC):\n")
    w("| op | segment | alpha (us) | busbw (GB/s) | segment R^2 | overall R^2 | rms rel. error |")
    w("|---|---|---|---|---|---|---|")
    for name, op in sorted(coll.get("ops", {}).items()):
        fit = op.get("fit") or {}
        res = fit.get("residuals", [])
        rms = (sum(r["relative"] ** 2 for r in res) / len(res)) ** 0.5 if res else float("nan")
        for s in fit.get("segments", []):
            bw = s.get("busbw_gbytes_per_s")
            bw = f"{bw:.3f}" if isinstance(bw, (int, float)) else "-"
            w(f"| {name} | {s.get('min_bytes', 0):.0f}..{s.get('max_bytes', 0):.0f} B | "
              f"{s.get('alpha_s', 0) * 1e6:.1f} | {bw} | {s.get('r_squared', float('nan')):.3f} | "
              f"{fit.get('r_squared', float('nan')):.3f} | {rms:.3f} |")
    ar = coll.get("ops", {}).get("all_reduce")
    if ar:
        w("\nall_reduce rows (out of place), the nccl-tests columns:\n")
        w("| size (B) | repeats | time (us) | p10..p90 (us) | algbw (GB/s) | busbw (GB/s) | #wrong |")
        w("|---:|---:|---:|---:|---:|---:|---:|")
        for r in ar.get("rows", []):
            if r.get("in_place"):
                continue
            w(f"| {r['size_bytes']} | {r['repeats']} | {r['time_us']:.1f} | "
              f"{r['time_us_p10']:.1f}..{r['time_us_p90']:.1f} | {r['algbw_gbytes_per_s']:.3f} | "
              f"{r['busbw_gbytes_per_s']:.3f} | {r['wrong']} |")
    it = p.get("interference")
    if it:
        g = it.get("gemm", {})
        w(f"\n## Interference\n\nGEMM {g.get('m')} x {g.get('n')} x {g.get('k')} timed alone and "
          f"while a communication thread ran all-reduces of {it.get('collective_bytes', 0) / 2**20:.0f} MiB "
          f"({it.get('collectives_completed', '?')} in all); mean over the ranks of each rank's "
          "statistics:\n")
        means = all("time_mean_s" in it[ph] for ph in ("alone", "concurrent"))
        w("| phase | calls | mean ms | median ms | p10..p90 ms |")
        w("|---|---:|---:|---:|---:|")
        for ph in ("alone", "concurrent"):
            q = it[ph]
            mean = f"{q['time_mean_s'] * 1e3:.3f}" if "time_mean_s" in q else "-"
            w(f"| {ph} | {q['repeats']} | {mean} | {q['time_s'] * 1e3:.3f} | "
              f"{q['time_p10_s'] * 1e3:.3f}..{q['time_p90_s'] * 1e3:.3f} |")
        frac = it["concurrent"].get("overlap_fraction")
        what = "mean concurrent / mean alone" if means else "median concurrent / median alone"
        w(f"\nfactor = max(1, {what}) = **{it['factor']:.3f}**"
          + (f"; {frac * 100:.0f}% of the concurrent-phase calls ran entirely while collectives "
             "were in flight." if frac is not None else "."))
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: calibration-tables.py PROFILE.json")
    main(sys.argv[1])
