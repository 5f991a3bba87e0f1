#!/usr/bin/env python3
"""python/ddpsim_torch/aten_capture.py against hand counts of one block of each reference model.

Run by ctest (label `torch`) from the source root with a python that imports torch and
PYTHONPATH=python. Exits with code 77 (skipped) when torch is not importable.

Each reference model (python/ddpsim_torch/reference: HF GPT-2, HF Llama, HF BERT encoder,
torchvision ResNet-50) is captured with fake tensors, and the ops charged to its first block
(module path prefix) are checked against what is worked out by hand here, exactly:
- forward GEMM FLOPs (2*m*n*k per product): a transformer block 24*b*s*d^2 + 4*b*s^2*d (GPT-2,
  BERT), Llama's 2*b*s*d*(2d + 2*d_kv) + 6*b*s*d*f + 4*b*s^2*d, ResNet's im2col products;
- backward GEMM FLOPs = 2x forward (every operand of a block needs its gradient);
- the autograd engine's accumulation adds (a tensor read by n ops gets n-1 adds in backward);
- the operands' layouts (Conv1D's x @ W vs nn.Linear's x @ W^T), bias-gradient reductions,
  and Llama's RMSNorm composite op by op, with its bytes;
- recomputation under torch.utils.checkpoint is phase "recompute";
- a 70B Llama (80 layers, sequence 4096) captures whole within 60 s and 2 GiB of RSS;
- `python3 -m ddpsim_torch --ops` writes format ddpsim_torch/2 and refuses, with one line and
  exit code 2, a model that cannot run on fake tensors.
"""
import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import unittest

try:
    import torch
except ImportError as e:
    print(f"SKIP: torch is not importable by {sys.executable} ({e}); "
          "apt-get install python3-torch")
    sys.exit(77)

from ddpsim_torch import ExportError, aten_capture
from ddpsim_torch.errors import torch_release
from ddpsim_torch.reference import bert, gpt2, llama, resnet

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")


def capture(ref, c, *shape):
    return aten_capture.capture_training_step(lambda: ref.model(c), lambda: ref.inputs(c, *shape))


def of_block(ops, prefix):
    return [op for op in ops if op["module"] == prefix or op["module"].startswith(prefix + ".")]


def flops(ops, phase, kinds=("gemm", "attention")):
    return sum(op["flops"] for op in ops if op["phase"] == phase and op["kind"] in kinds)


def engine_adds(ops):
    return [op for op in ops if op.get("engine") and op["op"] == "aten::add"]


def real_ops(ops, phase, module):
    """(name, overload) of the ops of `module` in `phase` that are not views or the engine's."""
    return [(op["op"], op["overload"]) for op in ops
            if op["phase"] == phase and op["module"] == module and op["kind"] != "view"
            and not op.get("engine")]


class Gpt2Test(unittest.TestCase):
    B, S = 2, 64

    @classmethod
    def setUpClass(cls):
        cls.c = gpt2.config("gpt2-124m", n_layer=2)
        cls.ops = capture(gpt2, cls.c, cls.B, cls.S)["ops"]
        cls.block = of_block(cls.ops, "h.0")

    def test_block_gemm_flops(self):
        b, s, d = self.B, self.S, self.c["n_embd"]
        forward = 24 * b * s * d * d + 4 * b * s * s * d
        self.assertEqual(flops(self.block, "forward"), forward)
        self.assertEqual(flops(self.block, "backward"), 2 * forward)
        # 4 Conv1D addmm forward, QK^T and AV as bmm; backward each twice.
        self.assertEqual(collections.Counter(op["op"] for op in self.block
                                             if op["kind"] == "gemm"),
                         {"aten::addmm": 4, "aten::bmm": 2 + 4, "aten::mm": 8})

    def test_accumulation_adds(self):
        # x feeds ln_1 and the residual, x + attn feeds ln_2 and the residual (1 + 1), and
        # NewGELU reads its input three times (0.5 * x, x + 0.044715 x^3, x^3): 2.
        adds = engine_adds(self.block)
        b, s, d = self.B, self.S, self.c["n_embd"]
        self.assertEqual(sorted(op["outputs"][0]["shape"] for op in adds),
                         [[b, s, d]] * 2 + [[b, s, 4 * d]] * 2)
        self.assertEqual(sum(op["bytes_read"] + op["bytes_written"] for op in adds),
                         2 * 12 * b * s * d + 2 * 12 * b * s * 4 * d)
        # Beyond the blocks: the tied wte/lm_head gradient, summed by the engine too.
        self.assertIn([self.c["vocab_size"], d],
                      [op["outputs"][0]["shape"] for op in engine_adds(self.ops)])

    def test_conv1d_layout_and_bias_grads(self):
        addmm = [op for op in self.block if op["op"] == "aten::addmm"]
        self.assertEqual({(op["gemm"]["a"], op["gemm"]["b"]) for op in addmm}, {("N", "N")})
        c_attn = [op for op in self.block if op["module"] == "h.0.attn.c_attn"
                  and op["phase"] == "backward" and op["kind"] == "gemm"]
        d = self.c["n_embd"]
        # dgrad = grad @ W^T (W stored [in, out]: the second operand is transposed), wgrad =
        # x^T @ grad.
        self.assertEqual([(g["gemm"]["m"], g["gemm"]["n"], g["gemm"]["k"], g["gemm"]["a"],
                           g["gemm"]["b"]) for g in c_attn],
                         [(self.B * self.S, d, 3 * d, "N", "T"),
                          (d, 3 * d, self.B * self.S, "T", "N")])
        sums = [op["outputs"][0]["shape"] for op in self.block
                if op["phase"] == "backward" and op["op"] == "aten::sum"]
        self.assertEqual(sorted(sums), sorted([[1, 3 * d], [1, d], [1, 4 * d], [1, d]]))

    def test_new_gelu_ops(self):
        self.assertEqual([n for n, _ in real_ops(self.block, "forward", "h.0.mlp.act")],
                         ["aten::mul", "aten::pow", "aten::mul", "aten::add", "aten::mul",
                          "aten::tanh", "aten::add", "aten::mul"])

    def test_recompute(self):
        c = gpt2.config("gpt2-124m", n_layer=2, gradient_checkpointing=True)
        block = of_block(capture(gpt2, c, self.B, self.S)["ops"], "h.0")
        b, s, d = self.B, self.S, self.c["n_embd"]
        forward = 24 * b * s * d * d + 4 * b * s * s * d
        self.assertEqual(flops(block, "forward"), forward)
        self.assertEqual(flops(block, "recompute"), forward)
        self.assertEqual(flops(block, "backward"), 2 * forward)
        self.assertEqual(len(engine_adds(block)), 4)

    def test_every_op_has_its_keys(self):
        for op in self.ops:
            self.assertIn(op["phase"], aten_capture.PHASES)
            self.assertTrue(op["op"].startswith("aten::"), op["op"])
            if op["kind"] in ("view", "alloc"):
                self.assertEqual((op["bytes_read"], op["bytes_written"], op["flops"]), (0, 0, 0))
        self.assertEqual({op["phase"] for op in self.ops}, {"forward", "backward", "optimizer"})


class LlamaTest(unittest.TestCase):
    B, S = 1, 256

    @classmethod
    def setUpClass(cls):
        cls.c = llama.config("llama-8b", num_hidden_layers=2)
        cls.ops = capture(llama, cls.c, cls.B, cls.S)["ops"]
        cls.block = of_block(cls.ops, "layers.0")

    def test_block_gemm_flops(self):
        b, s = self.B, self.S
        d, f = self.c["hidden_size"], self.c["intermediate_size"]
        d_kv = d // self.c["num_attention_heads"] * self.c["num_key_value_heads"]
        forward = 2 * b * s * d * (2 * d + 2 * d_kv) + 6 * b * s * d * f + 4 * b * s * s * d
        self.assertEqual(flops(self.block, "forward"), forward)
        self.assertEqual(flops(self.block, "backward"), 2 * forward)

    def test_accumulation_adds(self):
        # x: input_layernorm and the residual (1); RMSNorm's fp32 h: pow and mul (1); the
        # norm's output: q, k, v (2); q and k: the cos product and rotate_half's two slices
        # (2 + 2); x + attn: the norm and the residual (1); the second norm's fp32 h (1); its
        # output: gate and up (1). 11 per block.
        self.assertEqual(len(engine_adds(self.block)), 11)

    def test_linear_layout(self):
        q = [op["gemm"] for op in self.block if op["module"] == "layers.0.self_attn.q_proj"
             and op["kind"] == "gemm"]
        d, t = self.c["hidden_size"], self.B * self.S
        # nn.Linear: forward x @ W^T; backward wgrad grad^T @ x, dgrad grad @ W.
        self.assertEqual([(g["m"], g["n"], g["k"], g["a"], g["b"]) for g in q],
                         [(t, d, d, "N", "T"), (d, d, t, "T", "N"), (t, d, d, "N", "N")])

    def test_rmsnorm_composite(self):
        norm = "layers.0.input_layernorm"
        self.assertEqual(real_ops(self.block, "forward", norm),
                         [("aten::_to_copy", "default"), ("aten::pow", "Tensor_Scalar"),
                          ("aten::mean", "dim"), ("aten::add", "Tensor"), ("aten::rsqrt", "default"),
                          ("aten::mul", "Tensor"), ("aten::_to_copy", "default"),
                          ("aten::mul", "Tensor")])
        # n elements in bf16, r rows, d weights: to fp32 2n+4n, pow 4n+4n, mean 4n+4r,
        # +eps 4r+4r, rsqrt 4r+4r, mul 4n+4r+4n, to bf16 4n+2n, * weight 2n+2d+2n.
        d = self.c["hidden_size"]
        r = self.B * self.S
        n = r * d
        moved = sum(op["bytes_read"] + op["bytes_written"] for op in self.block
                    if op["phase"] == "forward" and op["module"] == norm)
        self.assertEqual(moved, 36 * n + 24 * r + 2 * d)
        # Backward: weight grad (mul, sum), input grad (mul), to_copy back to fp32, h * r
        # (mul, mul, sum to [.., 1]), rsqrt (pow, mul, mul), mean (div), pow (pow, mul, mul),
        # to_copy back to bf16: 15 ops of the node formulas, as derivatives.yaml writes them.
        self.assertEqual(len(real_ops(self.block, "backward", norm)), 15)

    def test_rope_rotate_half(self):
        names = [n for n, _ in real_ops(self.block, "forward", "layers.0.self_attn")]
        # q then k: mul cos, neg, cat, mul sin, add.
        rope = ["aten::mul", "aten::neg", "aten::cat", "aten::mul", "aten::add"]
        self.assertEqual(names[:10], rope + rope)

    def test_optimizer_phase(self):
        opt = [op for op in self.ops if op["phase"] == "optimizer"]
        params = [op for op in opt if op["module"] == "layers.0.self_attn.q_proj"]
        self.assertTrue(params)
        d = self.c["hidden_size"]
        # AdamW reads the parameter, its gradient and both moments, and writes all but the
        # gradient: at least 7 bf16 passes of the weight.
        self.assertGreaterEqual(sum(op["bytes_read"] + op["bytes_written"] for op in params),
                                7 * d * d * 2)
        if torch_release(torch.__version__) == (1, 13):
            # torch 1.13's single-tensor AdamW: two zeros_like for the moments, then mul_
            # (decay), mul_, add_ (exp_avg), mul_, addcmul_ (exp_avg_sq), item (step), sqrt,
            # div, add_, addcdiv_, add_ (step) per parameter.
            self.assertEqual(len([op for op in params if op["kind"] != "view"]), 13)


class BertTest(unittest.TestCase):
    B, S = 2, 128

    def test_layer(self):
        c = bert.config(num_hidden_layers=2)
        block = of_block(capture(bert, c, self.B, self.S)["ops"], "layer.0")
        b, s, d = self.B, self.S, c["hidden_size"]
        forward = 24 * b * s * d * d + 4 * b * s * s * d
        self.assertEqual(flops(block, "forward"), forward)
        self.assertEqual(flops(block, "backward"), 2 * forward)
        # x feeds query, key, value and the residual (3); the attention output feeds the
        # intermediate dense and the residual (1).
        self.assertEqual(len(engine_adds(block)), 4)
        # GELU (erf) is one kernel each way; LayerNorm too.
        self.assertEqual(real_ops(block, "forward", "layer.0.act"), [("aten::gelu", "default")])


@unittest.skipUnless(resnet.available(), "torchvision is not installed")
class ResNetTest(unittest.TestCase):
    def test_bottleneck(self):
        c = resnet.config()
        b = 1
        ops = capture(resnet, c, b)["ops"]
        block = of_block(ops, "net.layer1.0")
        # 56x56 positions; conv1 1x1 64->64, conv2 3x3 64->64, conv3 1x1 64->256, the
        # downsample 1x1 64->256.
        forward = 2 * b * 56 * 56 * (64 * 64 + 9 * 64 * 64 + 64 * 256 + 64 * 256)
        self.assertEqual(flops(block, "forward", ("conv",)), forward)
        self.assertEqual(flops(block, "backward", ("conv",)), 2 * forward)
        # The block's input feeds conv1 and the identity branch: one add per bottleneck, 16.
        self.assertEqual(len(engine_adds(block)), 1)
        self.assertEqual(len([op for op in engine_adds(ops)
                              if op["module"].startswith("net.layer")]), 16)


class Llama70bTest(unittest.TestCase):
    def test_whole_model_within_60s_and_2gib(self):
        c = llama.config("llama-70b")
        b, s = 1, 4096
        started = time.monotonic()
        captured = capture(llama, c, b, s)
        seconds = time.monotonic() - started
        rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        ops = captured["ops"]
        print(f"\nllama-70b (80 layers, batch {b}, sequence {s}): {len(ops)} aten ops in "
              f"{seconds:.1f} s, peak RSS {rss_mib:.0f} MiB", file=sys.stderr)
        self.assertEqual(captured["parameters"], 70553706496)
        d, f, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
        d_kv = d // c["num_attention_heads"] * c["num_key_value_heads"]
        block = 2 * b * s * d * (2 * d + 2 * d_kv) + 6 * b * s * d * f + 4 * b * s * s * d
        rotary = 2 * b * (d // c["num_attention_heads"] // 2) * s  # inv_freq @ positions
        forward = c["num_hidden_layers"] * block + 2 * b * s * d * v + rotary
        self.assertEqual(flops(ops, "forward"), forward)
        self.assertEqual(flops(ops, "backward"), 2 * (forward - rotary))  # no_grad rotary
        # 11 per layer, and the final norm's fp32 h read by pow and mul; the untied lm_head
        # and embedding have one use each.
        self.assertEqual(len(engine_adds(ops)), 11 * c["num_hidden_layers"] + 1)
        self.assertLess(seconds, 60)
        self.assertLess(rss_mib, 2048)


class CliTest(unittest.TestCase):
    def run_cli(self, model_source, *flags):
        with tempfile.TemporaryDirectory() as tmp:
            model_py = os.path.join(tmp, "model.py")
            with open(model_py, "w") as f:
                f.write(model_source)
            out = os.path.join(tmp, "out.json")
            env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
            r = subprocess.run([sys.executable, "-m", "ddpsim_torch", model_py, out, *flags],
                               capture_output=True, text=True, env=env)
            doc = None
            if os.path.exists(out):
                with open(out) as f:
                    doc = json.load(f)
            left = sorted(os.listdir(tmp))
        return r, doc, left

    MLP = ("import torch\n"
           "def model(): return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())\n"
           "def example_inputs(): return torch.randn(2, 4)\n")

    def test_ops_flag(self):
        r, doc, _ = self.run_cli(self.MLP, "--ops", "--optimizer", "sgd")
        self.assertEqual(r.returncode, 0, r.stderr)
        c = doc["config"]
        self.assertEqual(c["format"], "ddpsim_torch/2")
        self.assertEqual(c["ops_capture"]["optimizer"], "sgd")
        addmm = [op for op in c["ops"] if op["op"] == "aten::addmm"]
        self.assertEqual(len(addmm), 1)
        self.assertEqual(addmm[0]["flops"], 2 * 2 * 3 * 4)
        self.assertEqual(addmm[0]["module"], "0")
        self.assertEqual(set(c["ops_capture"]["totals"]), {"forward", "backward", "optimizer"})

    def test_without_ops_the_file_is_format_1(self):
        r, doc, _ = self.run_cli(self.MLP)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(doc["config"]["format"], "ddpsim_torch/1")
        self.assertNotIn("ops", doc["config"])

    def test_data_dependent_model_refused(self):
        # Runs on real tensors, not on fake ones: a FakeTensor has no numpy() view.
        r, doc, left = self.run_cli(
            "import torch\n"
            "class M(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__(); self.l = torch.nn.Linear(4, 3)\n"
            "    def forward(self, x):\n"
            "        return self.l(x) * float(x.detach().numpy().sum() > -1e9)\n"
            "def model(): return M()\n"
            "def example_inputs(): return torch.randn(2, 4)\n", "--ops")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("capturing the training step failed in forward", r.stderr)
        self.assertEqual(left, ["model.py"])

    def test_unknown_optimizer(self):
        with self.assertRaisesRegex(ExportError, "unknown optimizer"):
            aten_capture.capture_training_step(lambda: torch.nn.Linear(2, 2),
                                               lambda: torch.randn(1, 2), optimizer="lion")


if __name__ == "__main__":
    unittest.main(verbosity=2)
