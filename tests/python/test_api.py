#!/usr/bin/env python3
"""The `ddpsim` Python module (python/ddpsim_module.cpp) against the CLI it wraps.

Run by ctest (label `python`) from the source root with PYTHONPATH=<build>/python and
DDPSIM_BIN=<the ddpsim CLI>. Checks: predict() of a path returns exactly the document
`ddpsim predict --format json` prints (context date aside); a dict gives the same numbers as
the file it came from, for both engines; plan() matches `ddpsim plan --format json`; bad input
raises ScenarioError carrying file, JSON pointer, expected and got; an unknown engine name is a
ValueError; a non-JSON value in a dict is refused by Python's json module.
"""
import json
import os
import subprocess
import sys
import unittest

import ddpsim

BIN = os.environ["DDPSIM_BIN"]
DEFAULT = "scenarios/default.json"
PLAN = "scenarios/examples/plan-gpt2-xl.json"


def cli(*args):
    out = subprocess.run([BIN, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def without_run_context(doc):
    doc = dict(doc)
    doc.pop("context", None)
    return doc


class PythonApiTest(unittest.TestCase):
    def test_predict_path_equals_cli_json(self):
        got = ddpsim.predict(DEFAULT)
        want = cli("predict", DEFAULT, "--format", "json")
        self.assertEqual(without_run_context(got), without_run_context(want))
        self.assertEqual(got["context"]["engine"], "analytic")
        self.assertGreater(len(got["results"]), 1)

    def test_dict_and_engines(self):
        with open(DEFAULT) as f:
            doc = json.load(f)
        doc["sweep"] = {"cluster.gpus": [1, 8]}
        base = os.path.dirname(os.path.abspath(DEFAULT))
        analytic = ddpsim.predict(doc, base_dir=base)
        event = ddpsim.predict(doc, engine="event", base_dir=base)
        self.assertEqual(len(analytic["results"]), 2)
        for a, e in zip(analytic["results"], event["results"]):
            # The engines agree within 1% where both are exact (tests/simulator/agreement_test).
            self.assertAlmostEqual(a["step_time_s"] / e["step_time_s"], 1.0, delta=0.01)
        self.assertEqual(event["context"]["engine"], "event")

    def test_plan_equals_cli_json(self):
        got = ddpsim.plan(PLAN)
        want = cli("plan", PLAN, "--format", "json")
        self.assertEqual(without_run_context(got), without_run_context(want))

    def test_bad_input_names_file_pointer_and_expectation(self):
        with open(DEFAULT) as f:
            doc = json.load(f)
        doc["training"]["per_gpu_batch"] = 0
        with self.assertRaises(ddpsim.ScenarioError) as cm:
            ddpsim.predict(doc)
        e = cm.exception
        self.assertIsInstance(e, ValueError)
        self.assertEqual(e.pointer, "/training/per_gpu_batch")
        self.assertTrue(e.file.endswith("<dict>"), e.file)
        self.assertIn("integer", e.expected)
        self.assertEqual(e.got, "0")
        self.assertIn("/training/per_gpu_batch", str(e))
        with self.assertRaises(ddpsim.ScenarioError) as missing:
            ddpsim.predict("no/such/scenario.json")
        self.assertEqual(missing.exception.file, "no/such/scenario.json")

    def test_engine_name_and_non_json_values(self):
        with self.assertRaises(ValueError):
            ddpsim.predict(DEFAULT, engine="fast")
        with self.assertRaises(ValueError):  # json.dumps(allow_nan=False) refuses NaN
            ddpsim.predict({"name": float("nan")})
        with self.assertRaises(TypeError):  # a set is not JSON
            ddpsim.predict({"name": {1, 2}})


if __name__ == "__main__":
    sys.exit(unittest.main(verbosity=2))
