#!/usr/bin/env python3
"""The aten capture of GPT-2 124M (ddpsim_torch.aten_capture on reference/gpt2.py) against what
ddpsim's zoo builder for gpt2 (model/builders/transformer.cpp build_gpt2) charges, per phase:
FLOPs and bytes, and the non-GEMM kernels the zoo lacks.

    PYTHONPATH=python /usr/bin/python3 scripts/compare-capture-zoo.py [--ddpsim PATH]
        [--batch 1] [--seq 1024] [--out docs/capture-vs-zoo-gpt2.md]

ddpsim prints no per-layer workload, so the zoo's side is the builder's formulas restated here
(transformer.cpp build_gpt2, detail/transformer_parts.cpp add_conv1d_gemms, add_attention_core,
add_ew, add_residual, add_lm_head; simulator/analytic/analytic.cpp: a GEMM moves
elem * count * (mk + kn + mn) bytes, element-wise bytes are stored for 2-byte activations and
scaled by elem / 2, and the foreach AdamW step moves 80 bytes per fp32 parameter). With
--ddpsim (a built `ddpsim`), the restated GEMM FLOPs are checked against `ddpsim predict`'s
model_flops_per_gpu_per_step for the same model, batch and sequence, and the script fails when
they differ. Both sides are fp32 (precision "fp32": no autocast casts, elem 4) with eager
attention (model.attention "eager", HF GPT-2's default), dropout 0.1, AdamW.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

try:
    from ddpsim_torch import aten_capture
    from ddpsim_torch.records import atomic_output, write_json_atomic
except ImportError as e:
    raise SystemExit(f"compare-capture-zoo: {e}; run it with PYTHONPATH=python from the "
                     "source root")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def zoo_gpt2(b, s, h, a, f, V, L, params, elem=4):
    """{phase: {"gemm_flops", "gemm_bytes", "ew_bytes", "ew_kernels"}} of build_gpt2."""
    d = h // a
    act_scale = elem / 2  # analytic.cpp: elementwise bytes are stored for 2-byte activations
    out = {p: collections.Counter() for p in ("forward", "backward", "optimizer")}

    def gemm(phase, m, n, k, count=1):
        out[phase]["gemm_flops"] += 2 * m * n * k * count
        out[phase]["gemm_bytes"] += elem * count * (m * k + k * n + m * n)

    def linear(rows, i, o):  # add_conv1d_gemms / add_linear_gemms: fwd, dgrad, wgrad
        gemm("forward", rows, o, i)
        gemm("backward", rows, i, o)
        gemm("backward", i, o, rows)

    def ew(fwd, bwd=None):  # add_ew: one kernel each way (add_residual without dropout: fwd only)
        out["forward"]["ew_bytes"] += fwd * b * act_scale
        out["forward"]["ew_kernels"] += 1
        if bwd is not None:
            out["backward"]["ew_bytes"] += bwd * b * act_scale
            out["backward"]["ew_kernels"] += 1

    def bwd(nbytes, what=None):  # a backward-only kernel (gamma/beta, gradient sums, biases)
        out["backward"]["ew_bytes"] += nbytes * b * act_scale
        out["backward"]["ew_kernels"] += 1
        if what:
            out["backward"]["of which: " + what] += nbytes * b * act_scale

    sh, sf, as2, sv = s * h, s * f, a * s * s, s * V
    ew(8 * s + 6 * sh, 8 * s + 6 * sh)      # transformer.embeddings.gather
    ew(5 * sh, 5 * sh)                      # transformer.drop (embd_pdrop 0.1)
    for _ in range(L):
        ew(4 * sh, 6 * sh)                  # ln_1 (add_layer_norm)
        bwd(4 * sh)                         # ln_1's gamma/beta kernel
        bwd(12 * sh, "autograd accumulation adds")  # the two residual gradient sums
        linear(b * s, h, 3 * h)             # c_attn
        bwd(6 * sh, "bias-gradient reductions")  # its bias gradient
        for m, n, k in ((s, s, d), (s, d, s), (s, d, s)):   # qk fwd, dgrad_q, dgrad_k
            gemm("forward" if (m, n, k) == (s, s, d) else "backward", m, n, k, a * b)
        for m, n, k, ph in ((s, d, s, "forward"), (s, s, d, "backward"), (s, d, s, "backward")):
            gemm(ph, m, n, k, a * b)        # av fwd, dgrad_p, dgrad_v
        ew(4 * as2, 6 * as2)                # softmax (eager)
        ew(5 * as2, 5 * as2)                # attn_dropout
        linear(b * s, h, h)                 # c_proj
        bwd(2 * sh, "bias-gradient reductions")  # its bias gradient
        ew(7 * sh, 5 * sh)                  # resid_dropout_add
        ew(4 * sh, 6 * sh)                  # ln_2
        bwd(4 * sh)                         # its gamma/beta kernel
        linear(b * s, h, f)                 # c_fc
        bwd(2 * sf, "bias-gradient reductions")  # its bias gradient
        ew(36 * sf, 56 * sf)                # gelu_new's 8 kernels (add_activation)
        linear(b * s, f, h)                 # mlp.c_proj
        bwd(2 * sh, "bias-gradient reductions")  # its bias gradient
        ew(7 * sh, 5 * sh)                  # dropout_add
    ew(4 * sh, 6 * sh)                      # ln_f
    bwd(4 * sh)                             # its gamma/beta kernel
    linear(b * s, h, V)                     # lm_head
    ew(6 * sv, 6 * sv)                      # cross_entropy
    out["optimizer"]["ew_bytes"] += 80 * params  # foreach AdamW, fp32 (analytic.cpp)
    out["optimizer"]["ew_kernels"] += 9          # its multi-tensor kernels
    return out


def capture_side(ops):
    """{phase: Counter} of the capture, with the non-GEMM bytes split by what they are."""
    out = {p: collections.Counter() for p in ("forward", "backward", "optimizer")}
    for op in ops:
        c = out["backward" if op["phase"] == "recompute" else op["phase"]]
        moved = op["bytes_read"] + op["bytes_written"]
        if op["kind"] in ("view", "alloc"):
            continue
        if op["kind"] in ("gemm", "attention", "conv"):
            c["gemm_flops"] += op["flops"]
            c["gemm_bytes"] += moved
            continue
        c["ew_bytes"] += moved
        c["ew_kernels"] += 1
        c["ew_flops"] += op["flops"]
        name = op["op"]
        if op.get("engine"):
            c["of which: autograd accumulation adds"] += moved
            c["n accumulation adds"] += 1
        elif name == "aten::sum" and op["phase"] == "backward" and (
                op["module"].endswith(("c_attn", "c_proj", "c_fc"))):
            c["of which: bias-gradient reductions"] += moved
            c["n bias-gradient reductions"] += 1
        elif name in ("aten::_to_copy",):
            c["of which: casts"] += moved
        elif op["kind"] == "copy":
            c["of which: copies (clone, cat, slice_backward, where)"] += moved
        elif op["kind"] == "fill":
            c["of which: fills (dropout masks, zeros, optimizer state init)"] += moved
    return out


def predict_model_flops(ddpsim, b, s):
    """`ddpsim predict`'s model FLOPs per step for zoo gpt2 at 124M shapes (fp32, eager)."""
    models = os.path.join(ROOT, "scenarios", "models", "gpt2-xl.json")
    with open(models) as f:
        doc = json.load(f)
    doc["name"] = "gpt2-124m"
    doc["config"].update(n_embd=768, n_head=12, n_layer=12)
    doc["expected_params"] = 124439808
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "gpt2-124m.json")
        write_json_atomic(model, doc)
        scenario = os.path.join(tmp, "scenario.json")
        write_json_atomic(scenario, {
            "name": "capture vs zoo", "model": {"file": model, "attention": "eager",
                                                "seq_len": s},
            "hardware": {"preset": "dgx-a100"}, "cluster": {"gpus": 1},
            "training": {"per_gpu_batch": b, "precision": "fp32", "optimizer": "adamw"},
            "parallelism": {"strategy": "ddp"}})
        r = subprocess.run([ddpsim, "predict", scenario, "--format", "json"],
                           capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"compare-capture-zoo: {ddpsim} predict failed: {r.stderr.strip()}")
    return json.loads(r.stdout)["results"][0]["model_flops_per_gpu_per_step"]


def fmt(x):
    return f"{x / 1e9:,.2f}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ddpsim", help="a built ddpsim binary, to check the restated zoo FLOPs")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--out", help="also write the table (Markdown) here, atomically")
    a = p.parse_args(argv)
    from ddpsim_torch.reference import gpt2
    c = gpt2.config("gpt2-124m")
    captured = aten_capture.capture_training_step(lambda: gpt2.model(c),
                                                  lambda: gpt2.inputs(c, a.batch, a.seq))
    h, L, V, heads = c["n_embd"], c["n_layer"], c["vocab_size"], c["n_head"]
    zoo = zoo_gpt2(a.batch, a.seq, h, heads, 4 * h, V, L, captured["parameters"])
    cap = capture_side(captured["ops"])
    lines = [f"GPT-2 124M ({captured['parameters']:,} parameters), batch {a.batch}, sequence "
             f"{a.seq}, fp32, eager attention, dropout 0.1, AdamW (first step); captured in "
             f"{captured['seconds']:.1f} s with torch "
             f"{__import__('torch').__version__}. GFLOP and GB (1e9).", "",
             "| phase | quantity | capture | zoo | capture / zoo |", "|---|---|---|---|---|"]
    for phase in ("forward", "backward", "optimizer"):
        for key, label in (("gemm_flops", "GEMM GFLOP"), ("gemm_bytes", "GEMM GB"),
                           ("ew_bytes", "non-GEMM GB"), ("ew_kernels", "non-GEMM kernels")):
            x, z = cap[phase][key], zoo[phase][key]
            ratio = f"{x / z:.2f}" if z else "-"
            shown = (str(x), str(z)) if key == "ew_kernels" else (fmt(x), fmt(z))
            lines.append(f"| {phase} | {label} | {shown[0]} | {shown[1]} | {ratio} |")
        for key in sorted(k for k in cap[phase] if k.startswith("of which") and cap[phase][k]):
            n = {"of which: autograd accumulation adds": "n accumulation adds",
                 "of which: bias-gradient reductions": "n bias-gradient reductions"}.get(key)
            count = f" ({cap[phase][n]} kernels)" if n else ""
            z = zoo[phase][key]
            lines.append(f"| {phase} | {key[len('of which: '):]}{count} | "
                         f"{fmt(cap[phase][key])} | {fmt(z) if z else 'not modelled'} | "
                         f"{cap[phase][key] / z:.2f} |" if z else
                         f"| {phase} | {key[len('of which: '):]}{count} | "
                         f"{fmt(cap[phase][key])} | not modelled | - |")
    if a.ddpsim:
        predicted = predict_model_flops(a.ddpsim, a.batch, a.seq)
        restated = zoo["forward"]["gemm_flops"] + zoo["backward"]["gemm_flops"]
        lines += ["", f"ddpsim predict model_flops_per_gpu_per_step: {predicted:,.0f}; the "
                  f"zoo as restated here: {restated:,.0f}"]
        if abs(predicted - restated) > 1e-9 * restated:
            print("\n".join(lines))
            raise SystemExit("compare-capture-zoo: the restated zoo FLOPs differ from "
                             "ddpsim predict's")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.out:
        with atomic_output(a.out) as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
