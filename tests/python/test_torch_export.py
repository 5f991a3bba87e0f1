#!/usr/bin/env python3
"""python/ddpsim_torch against real PyTorch DDP: ddpsim buckets an exported model as DDP does.

Run by ctest (label `torch`) from the source root with a python that imports torch, and
PYTHONPATH=<build>/python:python. Exits with code 77 (skipped) when torch is not importable.

For three models built here (an MLP, a small CNN with BatchNorm and a frozen stem, a
transformer stack with nn.MultiheadAttention, a tied embedding/head and a projection registered
before the blocks it runs after) and four DDP settings (the default 25 MiB cap, a 1 MiB cap,
find_unused_parameters=True, static_graph=True), the model is exported with export_workload, predicted by
ddpsim.predict (the run API) from {"model": {"file": ...}}, and wrapped in a real
DistributedDataParallel on a one-rank gloo group. Each bucket's gradient bytes and tensor count
in ddpsim's result must equal those of the Reducer's buckets (torch 1.13
`reducer._get_zeros_like_grad_buckets()`: each bucket's flat buffer and parameters, after the
rebuild that follows the first iteration, or the construction-time buckets that
find_unused_parameters keeps), byte for byte; the sizes are checked against
`_get_ddp_logging_data()` ("rebuilt_bucket_sizes", "bucket_sizes") too.

Also: with reverse parameters() order instead of the measured gradient-ready order ddpsim
would bucket the transformer differently; the file lists every parameter once (tied and frozen
ones marked); linear, attention (nn.MultiheadAttention and a hand-written one) products have
the shapes worked out here; an exported MLP prices exactly as ddpsim's built-in MLP; and
`python3 -m ddpsim_torch` refuses a failing forward or a python without torch with one line,
exit code 2 and no file.

Caps other than 1 MiB and the default are not compared: torch 1.13 keeps the 1 MiB first
bucket for every cap (Reducer::rebuild_buckets takes first_bucket_bytes_ =
dist._DEFAULT_FIRST_BUCKET_BYTES, torch/nn/parallel/distributed.py:733-751), while ddpsim
follows newer PyTorch, which uses it only when bucket_cap_mb is left at its default
(model/workload/bucketing.hpp); a 1 MiB cap makes the two rules the same.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import torch
    import torch.distributed as dist
    import torch.nn as nn
except ImportError as e:
    print(f"SKIP: torch is not importable by {sys.executable} ({e}); "
          "apt-get install python3-torch")
    sys.exit(77)

import ddpsim
import ddpsim_torch

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 10)), \
        (torch.randn(8, 784),)


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, padding=1)
        self.stem.requires_grad_(False)  # frozen: DDP leaves it out of every bucket
        self.body = nn.Sequential(
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(128, 256, 3, padding=1, groups=2), nn.BatchNorm2d(256), nn.ReLU(),
            nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.Conv2d(256, 256, 3, padding=1),
            nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(256, 100)

    def forward(self, x):
        return self.classifier(self.body(self.stem(x)))


def cnn():
    torch.manual_seed(0)
    return SmallCnn(), (torch.randn(4, 3, 16, 16),)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        y = self.ln1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class TinyLm(nn.Module):
    """A GPT-style stack. `proj` is registered first but runs last, so its gradient is ready
    first: DDP buckets it first, which reverse parameters() order would not."""

    def __init__(self, vocab=1000, d=256, heads=4, layers=2):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(16, d))
        self.blocks = nn.Sequential(*[Block(d, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.embed.weight  # tied: one Parameter, bucketed once

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        x = self.proj(self.norm(self.blocks(x)))
        return self.head(x)


def transformer():
    torch.manual_seed(0)
    return TinyLm(), (torch.randint(0, 1000, (2, 16)),)


class HandWrittenAttention(nn.Module):
    """Attention written with `@` in the module's own forward (no leaf module runs it)."""

    def __init__(self, d=32, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        b, length, d = x.shape
        q, k, v = self.qkv(x).view(b, length, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = (q @ k.transpose(-2, -1)).softmax(-1)
        return self.out((a @ v).transpose(1, 2).reshape(b, length, d))


MODELS = {"mlp": mlp, "cnn": cnn, "transformer": transformer}
SETTINGS = {
    "default cap": ({}, {}),
    "1 MiB cap": ({"bucket_cap_mb": 1}, {"bucket_cap_mb": 1}),
    "find_unused_parameters": ({"find_unused_parameters": True},
                               {"find_unused_parameters": True}),
    "static_graph": ({"static_graph": True}, {"static_graph": True}),
}


def reducer_buckets(ddp):
    """[(bytes, tensors)] of the Reducer's buckets, in reduction order."""
    return [(b.buffer().numel() * b.buffer().element_size(), len(b.parameters()))
            for b in ddp.reducer._get_zeros_like_grad_buckets()]


def logged_sizes(ddp, key):
    return [int(s) for s in ddp._get_ddp_logging_data()[key].split(",")]


def ddp_buckets(module, inputs, ddp_kwargs):
    """[(bytes, tensors)] of a real DDP object's buckets, in reduction order."""
    ddp = nn.parallel.DistributedDataParallel(module, **ddp_kwargs)
    if ddp_kwargs.get("find_unused_parameters"):
        # No rebuild: the construction-time assignment is kept (distributed.py:720-728).
        buckets = reducer_buckets(ddp)
        assert [size for size, _ in buckets] == logged_sizes(ddp, "bucket_sizes")
        return buckets
    # Iteration 1 runs one bucket; a later forward rebuilds them in gradient-ready order
    # (the second, or the third with static_graph); the logger samples them after that.
    for _ in range(4):
        ddp(*inputs).float().sum().backward()
    assert ddp._has_rebuilt_buckets
    buckets = reducer_buckets(ddp)
    assert [size for size, _ in buckets] == logged_sizes(ddp, "rebuilt_bucket_sizes")
    return buckets


def ddpsim_buckets(model_file, batch, parallelism):
    scenario = {"name": "exported", "model": {"file": model_file},
                "hardware": {"preset": "dgx-h100"}, "cluster": {"gpus": 2},
                "training": {"per_gpu_batch": batch, "precision": "fp32"},
                "parallelism": dict({"strategy": "ddp"}, **parallelism)}
    result = ddpsim.predict(scenario, base_dir=os.path.dirname(model_file))["results"][0]
    return [(b["grad_bytes"], b["tensors"]) for b in result["buckets"]]


class ExportedBucketsEqualDdpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        dist.init_process_group("gloo", rank=0, world_size=1,
                                init_method="file://" + os.path.join(cls.tmp.name, "store"))

    @classmethod
    def tearDownClass(cls):
        dist.destroy_process_group()
        cls.tmp.cleanup()

    def export(self, name):
        module, inputs = MODELS[name]()
        path = os.path.join(self.tmp.name, name + ".json")
        doc = ddpsim_torch.export_workload(module, inputs, path)
        return module, inputs, path, doc

    def test_buckets_equal_pytorch_byte_for_byte(self):
        for name in MODELS:
            _, _, path, doc = self.export(name)
            batch = doc["config"]["example_batch"]
            for setting, (ddp_kwargs, parallelism) in SETTINGS.items():
                with self.subTest(model=name, setting=setting):
                    # A fresh instance per DDP object: a Reducer's hooks stay on the parameters.
                    module, inputs = MODELS[name]()
                    want = ddp_buckets(module, inputs, ddp_kwargs)
                    self.assertEqual(ddpsim_buckets(path, batch, parallelism), want)
                    if setting == "1 MiB cap":
                        self.assertGreater(len(want), 2, "the test should split the model")

    def test_measured_ready_order_matters(self):
        # Without grad_ready_order ddpsim walks reverse parameters() and misplaces `proj`.
        _, _, path, doc = self.export("transformer")
        module, inputs = transformer()
        del doc["config"]["grad_ready_order"]
        reverse_path = os.path.join(self.tmp.name, "transformer-reverse.json")
        with open(reverse_path, "w") as f:
            json.dump(doc, f)
        want = ddp_buckets(module, inputs, {"bucket_cap_mb": 1})
        self.assertEqual(ddpsim_buckets(path, 2, {"bucket_cap_mb": 1}), want)
        self.assertNotEqual(ddpsim_buckets(reverse_path, 2, {"bucket_cap_mb": 1}), want)

    def test_file_lists_every_parameter_once(self):
        module, _, _, doc = self.export("transformer")
        tensors = doc["config"]["tensors"]
        self.assertEqual([t["name"] for t in tensors if "tied_to" not in t],
                         [n for n, _ in module.named_parameters()])
        tied = [t for t in tensors if "tied_to" in t]
        self.assertEqual([(t["name"], tensors[t["tied_to"]]["name"]) for t in tied],
                         [("head.weight", "embed.weight")])
        self.assertEqual(doc["expected_params"], sum(p.numel() for p in module.parameters()))
        _, _, _, cnn_doc = self.export("cnn")
        frozen = [t["name"] for t in cnn_doc["config"]["tensors"] if not t["requires_grad"]]
        self.assertEqual(frozen, ["stem.weight", "stem.bias"])
        buffers = {b["name"] for b in cnn_doc["config"]["buffers"]}
        self.assertIn("body.1.running_mean", buffers)

    def test_flops_from_shapes(self):
        # MLP: 2 * (784*1024 + 1024*1024 + 1024*512 + 512*10) forward FLOPs per sample.
        _, _, _, doc = self.export("mlp")
        gemms = [g for layer in doc["config"]["layers"] for g in layer["gemms"]]
        flops = sum(2 * g["m"] * g["n"] * g["k"] * g["count"] for g in gemms)
        self.assertEqual(flops, 2 * (784 * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 10))
        self.assertFalse(gemms[0]["a_grad"])  # the input batch needs no gradient
        # Attention per sample: packed in-projection (16 x 768 x 256), scores and context per
        # head (4 heads of 64: 16 x 16 x 64 each), out-projection (16 x 256 x 256).
        _, _, _, doc = self.export("transformer")
        attn = next(layer for layer in doc["config"]["layers"] if layer["name"] == "blocks.0.attn")
        shapes = [(g["name"], g["m"], g["n"], g["k"], g["count"], g["batch_dim"])
                  for g in attn["gemms"]]
        self.assertEqual(shapes, [("in_proj", 16, 768, 256, 1, "m"),
                                  ("scores", 16, 16, 64, 4, "count"),
                                  ("context", 16, 64, 16, 4, "count"),
                                  ("out_proj", 16, 256, 256, 1, "m")])
        self.assertGreater(attn["activation_bytes_per_sample"], 0)
        # Hand-written: charged to the module whose forward runs the products (per sample: 2
        # heads of 5 x 5 x 16 scores and 5 x 16 x 5 context).
        doc = ddpsim_torch.export_workload(HandWrittenAttention(), torch.randn(3, 5, 32),
                                           os.path.join(self.tmp.name, "hand.json"))
        root = doc["config"]["layers"][0]
        self.assertEqual(root["name"], "(root)")
        self.assertEqual([(g["m"], g["n"], g["k"], g["count"], g["batch_dim"])
                          for g in root["gemms"]], [(5, 5, 16, 2, "count"), (5, 16, 5, 2, "count")])

    def test_exported_mlp_prices_as_ddpsims_own_mlp(self):
        # The same network as {"mlp": {"widths": [784, 1024, 1024, 512, 10]}}: the same GEMMs
        # (the first without an input gradient) and ReLUs moving 8 bytes per element forward and
        # 12 backward, one FLOP each way, so the compute is the builder's: exactly for the
        # analytic model, to the event engine's integer nanosecond per layer (the export has
        # each ReLU as a layer of its own: 7 layers, the builder 4).
        _, _, path, doc = self.export("mlp")
        ns_per_layer = len(doc["config"]["layers"]) * 1e-9
        base = {"name": "mlp", "hardware": {"preset": "dgx-h100"}, "cluster": {"gpus": 8},
                "training": {"per_gpu_batch": 64, "precision": "fp32"}}
        for engine in ("analytic", "event"):
            exported = ddpsim.predict(dict(base, model={"file": path}), engine=engine,
                                      base_dir=self.tmp.name)["results"][0]
            built = ddpsim.predict(dict(base, model={"mlp": {"widths": [784, 1024, 1024, 512,
                                                                        10]}}),
                                   engine=engine)["results"][0]
            for key in ("forward_time_s", "backward_time_s"):
                self.assertAlmostEqual(exported[key], built[key], msg=f"{engine} {key}",
                                       delta=ns_per_layer if engine == "event" else 1e-15)
            self.assertEqual(exported["model_flops_per_gpu_per_step"],
                             built["model_flops_per_gpu_per_step"])
            self.assertEqual(exported["memory"]["params_bytes"], built["memory"]["params_bytes"])


class BadInputTest(unittest.TestCase):
    """python3 -m ddpsim_torch: one line on stderr, exit code 2, no workload file."""

    def run_cli(self, model_source, extra_python_args=()):
        with tempfile.TemporaryDirectory() as tmp:
            model_py = os.path.join(tmp, "model.py")
            with open(model_py, "w") as f:
                f.write(model_source)
            out = os.path.join(tmp, "out.json")
            env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
            r = subprocess.run([sys.executable, *extra_python_args, "-m", "ddpsim_torch",
                                model_py, out], capture_output=True, text=True, env=env)
            left = sorted(os.listdir(tmp))
        return r, left

    def assert_refused(self, r, left, words):
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(words, r.stderr)
        self.assertEqual(left, ["model.py"])  # no workload, no temporary file

    def test_forward_that_fails(self):
        r, left = self.run_cli(
            "import torch\n"
            "def model(): return torch.nn.Linear(4, 3)\n"
            "def example_inputs(): return torch.randn(2, 5)\n")
        self.assert_refused(r, left, "running the module once failed: RuntimeError")

    def test_no_torch(self):
        # -S: no site-packages, where Debian's python3-torch lives.
        r, left = self.run_cli("def model(): pass\ndef example_inputs(): pass\n", ["-S"])
        self.assert_refused(r, left, "PyTorch is not importable")

    def test_torch_too_old(self):
        with self.assertRaisesRegex(ddpsim_torch.ExportError, "1.12.1 is too old"):
            ddpsim_torch.errors.require_torch_version("1.12.1")
        ddpsim_torch.errors.require_torch_version(torch.__version__)

    def test_working_model_file(self):
        r, left = self.run_cli(
            "import torch\n"
            "def model(): return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())\n"
            "def example_inputs(): return torch.randn(2, 4)\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("15 parameters", r.stdout)
        self.assertEqual(left, ["model.py", "out.json"])


if __name__ == "__main__":
    unittest.main()
