"""The user's path for a captured model: `python3 -m ddpsim_torch MODEL.py OUT.json --ops` writes
a ddpsim_torch/2 file, and `ddpsim predict` on a scenario naming it prices the captured ops
(model/builders/detail/torch_ops.hpp) through the same run API as every other model.

Checked against the /1 file of the same module (per-layer estimates): the same GEMMs (the GEMMs'
FLOPs to the digit), and more backward work (the bias gradients and the loss's ops that
the /1 estimate does not list), both engines agreeing. Skips (77) without torch or the binary.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DDPSIM = os.environ.get("DDPSIM_BIN", "")

try:
    import torch  # noqa: F401
except ImportError:
    print("torch is not importable: skipped")
    sys.exit(77)
if not DDPSIM or not os.path.exists(DDPSIM):
    print("DDPSIM_BIN is not set to the ddpsim binary: skipped")
    sys.exit(77)


def export(out, ops):
    cmd = [sys.executable, "-m", "ddpsim_torch",
           os.path.join(ROOT, "tests", "data", "torch_export", "mlp.py"), out]
    subprocess.run(cmd + (["--ops"] if ops else []), check=True, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))


def predict(folder, model_file, engine):
    scenario = os.path.join(folder, f"s-{os.path.basename(model_file)}")
    with open(scenario, "w") as f:
        json.dump({"model": {"file": os.path.basename(model_file)},
                   "hardware": {"preset": "dgx-a100"}, "cluster": {"gpus": 8},
                   "training": {"per_gpu_batch": 8, "precision": "fp32", "optimizer": "adamw"},
                   "parallelism": {"strategy": "ddp"}}, f)
    r = subprocess.run([DDPSIM, "predict", scenario, "--format", "json", "--engine", engine],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"ddpsim predict failed: {r.stderr}")
    return json.loads(r.stdout)["results"][0]


class OpsPredictTest(unittest.TestCase):
    def test_captured_ops_through_predict(self):
        with tempfile.TemporaryDirectory() as d:
            v1, v2 = os.path.join(d, "mlp-v1.json"), os.path.join(d, "mlp-v2.json")
            export(v1, ops=False)
            export(v2, ops=True)
            with open(v2) as f:
                self.assertEqual(json.load(f)["config"]["format"], "ddpsim_torch/2")
            for engine in ("analytic", "event"):
                a, b = predict(d, v1, engine), predict(d, v2, engine)
                # The same products (fc1 forward and weight gradient, fc2's three: 8 x 5 x 2 x
                # 256 x 1024 = 20,971,520 FLOPs) plus element-wise FLOPs: the /1 estimate's GELU
                # (one per element each way: 16,384); the capture's ops, one per output element:
                # forward gelu 8,192, the loss's sum 2,048 and add 1; backward fc2's bias sum
                # 2,048, gelu_backward 8,192, fc1's bias sum 8,192: 28,673. Model FLOPs count
                # both.
                gemm = 8 * 5 * 2 * 256 * 1024
                self.assertEqual(a["model_flops_per_gpu_per_step"], gemm + 16384)
                self.assertEqual(b["model_flops_per_gpu_per_step"], gemm + 28673)
                # The captured backward also runs both bias gradients and the loss's backward.
                self.assertGreater(b["backward_time_s"], a["backward_time_s"])
            an, ev = predict(d, v2, "analytic"), predict(d, v2, "event")
            self.assertAlmostEqual(an["step_time_s"], ev["step_time_s"],
                                   delta=0.01 * an["step_time_s"])


if __name__ == "__main__":
    unittest.main()
