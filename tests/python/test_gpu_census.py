#!/usr/bin/env python3
"""scripts/gpu_census.py --dry-run and scripts/census-to-preset.py on its output.

Run by ctest (python.gpu_census, label `torch`) from the source root with a python that imports
torch and PYTHONPATH=python. Exits with code 77 (skipped) when torch is not importable.

- The dry run (every section on the CPU, tiny shapes) finishes within 60 s and writes one JSON:
  format, context (date, git revision, torch), every section with a status and its time.
- A section that raises (--inject-error optimizer) is recorded with its error and the script
  exits 1; every other section still measures ("ok").
- GEMM entries have exactly the keys {"m", "n", "k", "tflops", "transa", "transb", "dtype"},
  positive rates and booleans for the transposes; SDPA, memory-bound, optimizer and training
  rows have positive rates and times; the training rows' profiler and capture classes are the
  same five.
- The census's layouts are PyTorch's: the aten capture of nn.Linear and of HF GPT-2's Conv1D
  (reference/gpt2.py) records forward, dgrad and wgrad products with the m, n, k and operand
  layouts gpu_census.layer_gemms gives.
- The census's model widths are the reference models' CONFIGS.
- A spent --budget-s skips the section (status "skipped", exit 1).
- census-to-preset.py prints a gemm_table whose entries hold only the keys a preset accepts
  (m, n, k, tflops), rates > 0, and a source naming the census's git revision.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import torch
except ImportError as e:
    print(f"SKIP: torch is not importable by {sys.executable} ({e}); "
          "apt-get install python3-torch")
    sys.exit(77)

from ddpsim_torch import aten_capture
from ddpsim_torch.reference import gpt2, llama

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CENSUS = os.path.join(ROOT, "scripts", "gpu_census.py")
TO_PRESET = os.path.join(ROOT, "scripts", "census-to-preset.py")
SECTIONS = ["gemm", "sdpa", "memory", "optimizer", "training"]
CLASSES = ["gemm", "attention", "elementwise", "optimizer", "other"]

failures = []


def check(what, ok):
    if not ok:
        failures.append(what)


def load_census_module():
    spec = importlib.util.spec_from_file_location("gpu_census", CENSUS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_layouts(census):
    """nn.Linear and Conv1D products in the aten capture vs layer_gemms."""
    t, fin, fout = 8, 16, 24

    class Two(torch.nn.Module):   # a first layer, so that the second one's dgrad runs
        def __init__(self, second):
            super().__init__()
            self.first = torch.nn.Linear(4, fin, bias=False)
            self.second = second

        def forward(self, x):   # y*y: a dense gradient (a plain sum's is a stride-0 expand)
            y = self.second(self.first(x))
            return (y * y).sum()

    for layout, make in (("linear", lambda: torch.nn.Linear(fin, fout, bias=False)),
                         ("conv1d", lambda: gpt2.Conv1D(fout, fin))):
        cap = aten_capture.capture_training_step(lambda: Two(make()),
                                                 lambda: torch.randn(t, 4), optimizer=None)
        got = set()
        for op in cap["ops"]:
            if op["kind"] == "gemm" and op["module"] == "second":
                g = op["gemm"]
                got.add((g["m"], g["n"], g["k"], g["a"] == "T", g["b"] == "T"))
        want = {x[:5] for x in census.layer_gemms(t, fin, fout, layout)}
        check(f"{layout}: the capture's products {sorted(got)} are layer_gemms' {sorted(want)}",
              got == want)


def check_widths(census):
    for name, c in gpt2.CONFIGS.items():
        d = c["n_embd"]
        want = [(d, 3 * d), (d, d), (d, 4 * d), (4 * d, d), (d, c["vocab_size"])]
        got = [(fin, fout) for _, fin, fout, _ in census.MODEL_LINEARS[name]]
        check(f"{name}: census widths {got} == reference {want}", got == want)
    for name, c in llama.CONFIGS.items():
        d, f = c["hidden_size"], c["intermediate_size"]
        kv = d // c["num_attention_heads"] * c["num_key_value_heads"]
        want = [(d, d), (d, kv), (d, d), (d, f), (f, d), (d, c["vocab_size"])]
        got = [(fin, fout) for _, fin, fout, _ in census.MODEL_LINEARS[name]]
        check(f"{name}: census widths {got} == reference {want}", got == want)


def positive(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def check_census(doc):
    check("format ddpsim-gpu-census", doc.get("format") == "ddpsim-gpu-census")
    ctx = doc.get("context", {})
    for k in ("date", "git_revision", "torch_version", "host", "device"):
        check(f"context has {k}", bool(ctx.get(k)))
    check("dry_run true", doc.get("dry_run") is True)
    secs = doc.get("sections", {})
    check(f"sections {list(secs)} == {SECTIONS}", list(secs) == SECTIONS)
    for name, s in secs.items():
        check(f"{name}: seconds and limit_s", "seconds" in s and "limit_s" in s)
        want = "error" if name == "optimizer" else "ok"
        check(f"{name}: status {s.get('status')} ({s.get('error')}), want {want}",
              s.get("status") == want)
    opt = secs.get("optimizer", {})
    check("the injected error is recorded", "--inject-error optimizer" in opt.get("error", ""))

    g = secs.get("gemm", {}).get("results", {})
    entries = g.get("entries", [])
    check(f"gemm: {len(entries)} entries, one per shape and dtype ({g.get('shapes')} x 2)",
          len(entries) == 2 * g.get("shapes", -1))
    keys = {"m", "n", "k", "tflops", "transa", "transb", "dtype"}
    for e in entries:
        ok = (set(e) == keys and all(isinstance(e[x], int) and e[x] > 0 for x in "mnk")
              and positive(e["tflops"]) and isinstance(e["transa"], bool)
              and isinstance(e["transb"], bool) and e["dtype"] in ("bf16", "fp32"))
        check(f"gemm entry {e}", ok)
        if not ok:
            break
    check("gemm: forward (NT), dgrad (NN) and wgrad (TN) shapes all present",
          {(e["transa"], e["transb"]) for e in entries} >= {(False, True), (False, False),
                                                            (True, False)})

    rows = secs.get("sdpa", {}).get("results", {}).get("rows", [])
    check("sdpa: 8 rows (2 head dims x 2 sequences x causal or not)", len(rows) == 8)
    for r in rows:
        check(f"sdpa row {r}", positive(r.get("fwd_tflops")) and positive(r.get("bwd_tflops"))
              and r.get("backend") in ("flash", "mem_efficient", "cudnn", "math", "eager"))
    causal = {(r["head_dim"], r["seq"]): r for r in rows if r["causal"]}
    for r in rows:
        if not r["causal"]:   # the same time would give half the rate: the FLOP rule halves
            c = causal[(r["head_dim"], r["seq"])]
            check("sdpa: causal FLOPs halved",
                  abs(c["fwd_tflops"] * c["fwd_ms"] * 2 - r["fwd_tflops"] * r["fwd_ms"])
                  < 1e-6 * r["fwd_tflops"] * r["fwd_ms"])

    m = secs.get("memory", {}).get("results", {})
    mrows = m.get("rows", [])
    ops = {r.get("op") for r in mrows}
    check(f"memory: ops {sorted(o for o in ops if o)}",
          ops >= {"add", "mul", "clone", "cast", "layer_norm", "rms_norm", "gelu", "silu",
                  "softmax"})
    check("memory: every row measured",
          all(positive(r.get("gbytes_per_s")) and positive(r.get("us")) for r in mrows))
    check("memory: sizes 2^12..2^16 in both dtypes",
          {(r["elements"], r["dtype"]) for r in mrows}
          == {(1 << p, d) for p in range(12, 17) for d in ("bf16", "fp32")})
    check("memory: floor per op and dtype", len(m.get("floor_us", {})) == 18)
    check("memory: launch rate", positive(m.get("launch", {}).get("us_per_kernel")))

    trows = secs.get("training", {}).get("results", {}).get("rows", [])
    check(f"training: 5 models ({len(trows)})", len(trows) == 5)
    for r in trows:
        check(f"training {r.get('model')}: step_ms {r.get('step_ms')} ({r.get('error')})",
              positive(r.get("step_ms")))
        prof = r.get("profiled", {})
        check(f"training {r.get('model')}: profiled classes", list(prof) == CLASSES)
        check(f"training {r.get('model')}: GEMM time profiled",
              positive(prof.get("gemm", {}).get("ms")))
        cap = r.get("capture", {})
        check(f"training {r.get('model')}: capture ({cap.get('error')})",
              list(cap.get("classes", {})) == CLASSES
              and positive(cap["classes"]["gemm"]["flops"])
              and positive(cap["classes"]["optimizer"]["ops"])
              and positive(r.get("achieved_tflops")))


def check_preset(path, doc):
    r = subprocess.run([sys.executable, TO_PRESET, path, "--preset",
                        os.path.join(ROOT, "scenarios", "hardware", "gpus", "h100-sxm.json")],
                       capture_output=True, text=True, timeout=60)
    check(f"census-to-preset exit 0 ({r.stderr.strip()})", r.returncode == 0)
    if r.returncode != 0:
        return
    out = json.loads(r.stdout)
    table = out["gemm_table"]
    check(f"gemm_table keys {sorted(table)}", sorted(table) == ["bf16", "fp32", "source"])
    check("gemm_table source names the census's git revision and the dry run",
          doc["context"]["git_revision"] in table["source"] and "DRY RUN" in table["source"])
    n = sum(len(v) for k, v in table.items() if k != "source")
    check(f"gemm_table: {n} entries, one per census entry",
          n == len(doc["sections"]["gemm"]["results"]["entries"]))
    for k, v in table.items():
        if k == "source":
            continue
        for e in v:
            if set(e) != {"m", "n", "k", "tflops"} or not positive(e["tflops"]):
                check(f"gemm_table {k} entry {e}: only m, n, k, tflops > 0", False)
                break
    mb = out["memory_bound"]
    check("memory_bound: efficiency against the preset's 3350 GB/s",
          mb["datasheet_gbytes_per_s"] == 3350 and positive(mb.get("memory_efficiency")))
    check("memory_bound: 18 op/dtype series", len(mb["ops"]) == 18)


def main():
    census = load_census_module()
    check_widths(census)
    check_layouts(census)
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "census.json")
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, CENSUS, "--dry-run", "--out", path,
                            "--inject-error", "optimizer"],
                           capture_output=True, text=True, timeout=120, env=env)
        took = time.monotonic() - t0
        print(r.stdout + r.stderr)
        check(f"dry run within 60 s ({took:.1f} s)", took < 60)
        check(f"exit 1 with a failed section (got {r.returncode})", r.returncode == 1)
        if os.path.exists(path):
            with open(path) as f:
                doc = json.load(f)
            check_census(doc)
            check_preset(path, doc)
        else:
            check("the census was written", False)
        # A spent budget: the section is skipped, not run.
        path2 = os.path.join(tmp, "spent.json")
        r = subprocess.run([sys.executable, CENSUS, "--dry-run", "--out", path2, "--budget-s",
                            "1", "--sections", "memory"],
                           capture_output=True, text=True, timeout=60, env=env)
        check(f"spent budget: exit 1 (got {r.returncode})", r.returncode == 1)
        with open(path2) as f:
            spent = json.load(f)
        check("spent budget: memory skipped",
              spent["sections"]["memory"]["status"] == "skipped")
    for f in failures:
        print("FAIL:", f)
    print(f"{'FAILED' if failures else 'passed'}: gpu_census dry run ({took:.1f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
