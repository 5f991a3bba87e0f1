#!/usr/bin/env python3
"""The `ddpsim` Python package (python/ddpsim/ over python/ddpsim_module.cpp) against the CLI.

Run by ctest (label `python`) from the source root with PYTHONPATH=<build>/python and
DDPSIM_BIN=<the ddpsim CLI>. Checks:
  - predict() and plan() of a path return typed results whose to_dict() is exactly the document
    `ddpsim predict|plan --format json` prints (context date aside), and whose every typed
    attribute is the JSON value under its key (recursively: results, memory, buckets, plan
    points); fields a newer ddpsim adds stay reachable (extra, to_dict, subscript);
  - a dict gives the same numbers as the file it came from, for both engines;
  - pathlib.Path is accepted for every path argument, anything else is a TypeError;
  - the exception hierarchy: ScenarioError and UnsupportedError under ddpsim.Error,
    ScenarioError also a ValueError carrying file, JSON pointer, expected and got (and pickled
    with them); an unknown engine name is a ValueError; non-JSON values are Python's errors;
  - collective() gives `ddpsim collective`'s rows (two configurations), and bad arguments are
    ScenarioErrors at the argument's key;
  - each importer (deepspeed with and without "auto" values, torchtitan, torch knobs, a
    profiler trace) returns the scenario `ddpsim import ...` prints and warns what it warns on
    stderr; fill_hf_auto leaves no "auto".
"""
import dataclasses
import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

import ddpsim
from ddpsim import results

BIN = os.environ["DDPSIM_BIN"]
DEFAULT = "scenarios/default.json"
PLAN = "scenarios/examples/plan-gpt2-xl.json"
DATA = pathlib.Path("tests/data")
ZERO2 = DATA / "deepspeed" / "ds_config_zero2.json"
ZERO3 = DATA / "deepspeed" / "ds_config_zero3.json"
TITAN = DATA / "torchtitan" / "llama3_8b.toml"
TRACE = DATA / "traces" / "hta_ddp_nccl_3steps.json.gz"

# Typed attributes whose key the document has only in some cases (a sweep, jitter, a sharded
# strategy); absent, the attribute is None.
OPTIONAL_KEYS = {"sweep_point", "p50_step_time_s", "p99_step_time_s", "step_time_interval_s",
                 "kind", "phase"}


def run_cli(*args):
    r = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"ddpsim {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr}")
    return r.stdout, r.stderr


def cli(*args):
    return json.loads(run_cli(*args)[0])


def without_run_context(doc):
    doc = dict(doc)
    doc.pop("context", None)
    return doc


def calling(function, *args, **kwargs):
    """(result, [warning messages]) of a call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    for w in caught:
        assert issubclass(w.category, ddpsim.ScenarioWarning), w
        # Attributed to the line that called ddpsim, not to the package's own code.
        assert os.path.basename(w.filename) == os.path.basename(__file__), w.filename
    return result, [str(w.message) for w in caught]


class TypedResultsMixin:
    def assert_typed(self, obj, where="doc"):
        """Every typed attribute of `obj` is the JSON value under its key, recursively."""
        self.assertIsInstance(obj, results._Document)
        section = obj.raw if obj._section is None else obj.raw[obj._section]
        checked = 0
        for f in dataclasses.fields(obj):
            if "convert" not in f.metadata:
                continue
            key = f.metadata["key"] or f.name
            value = getattr(obj, f.name)
            if key not in section:
                self.assertIn(key, OPTIONAL_KEYS, f"{where}: the document has no {key!r} "
                              f"({type(obj).__name__}.{f.name})")
                self.assertIsNone(value, f"{where}.{f.name}")
                continue
            want = section[key]
            checked += 1
            if isinstance(value, results._Document):
                self.assertEqual(value.raw, want, f"{where}.{f.name}")
                self.assert_typed(value, f"{where}.{f.name}")
            elif isinstance(value, tuple) and isinstance(want, list):
                self.assertEqual(len(value), len(want), f"{where}.{f.name}")
                for i, (v, w) in enumerate(zip(value, want)):
                    if isinstance(v, results._Document):
                        self.assertEqual(v.raw, w)
                        self.assert_typed(v, f"{where}.{f.name}[{i}]")
                    else:
                        self.assertEqual(v, w, f"{where}.{f.name}[{i}]")
            else:
                self.assertEqual(value, want, f"{where}.{f.name}")
                if want is not None and not isinstance(want, (dict, list)):
                    self.assertIsInstance(value, type(want), f"{where}.{f.name}")
        self.assertGreater(checked, 0, where)


class PredictTest(TypedResultsMixin, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pred = ddpsim.predict(DEFAULT)
        cls.want = cli("predict", DEFAULT, "--format", "json")

    def test_to_dict_is_the_cli_document(self):
        self.assertIsInstance(self.pred, ddpsim.Prediction)
        self.assertEqual(without_run_context(self.pred.to_dict()),
                         without_run_context(self.want))
        self.assertEqual(self.pred.engine, "analytic")
        self.assertEqual(len(self.pred.results), len(self.want["results"]))
        self.assertGreater(len(self.pred.results), 1)
        # A copy: changing it changes nothing of the result.
        copy = self.pred.to_dict()
        copy["results"].clear()
        self.assertEqual(len(self.pred.to_dict()["results"]), len(self.want["results"]))

    def test_typed_attributes_are_the_json_values(self):
        self.assert_typed(self.pred)
        first, last = self.pred.results[0], self.pred.results[-1]
        self.assertIsInstance(first, ddpsim.PointResult)
        self.assertEqual((first.gpus, last.gpus), (1, 1024))
        self.assertEqual(self.pred.scenario.model_name, "gpt2-xl")
        self.assertEqual(last.throughput, last.throughput_samples_per_s)
        self.assertIsInstance(last.memory, ddpsim.Memory)
        self.assertAlmostEqual(last.memory.total_bytes / last.memory_per_gpu_bytes, 1, delta=1e-12)
        self.assertEqual(len(last.buckets), last.bucket_count)
        self.assertIsInstance(last.buckets[0], ddpsim.Bucket)
        self.assertEqual(last.sweep_point, {"cluster.gpus": 1024})
        self.assertIsInstance(last.warnings, tuple)

    def test_subscript_reads_the_document(self):
        # Code written for the module's dict results keeps working.
        self.assertEqual(self.pred["results"][0]["gpus"], 1)
        self.assertEqual(self.pred.results[2]["memory"], self.want["results"][2]["memory"])
        self.assertIn("results", self.pred)
        with self.assertRaises(TypeError):
            iter(self.pred)

    def test_new_fields_stay_reachable(self):
        doc = json.loads(json.dumps(self.want))
        doc["uncertainty"] = {"model": "bands"}
        doc["results"][0]["uncertainty"] = {"step_time_s": [0.1, 0.2]}
        pred = ddpsim.Prediction.from_dict(doc)
        self.assertEqual(pred.extra, {"uncertainty": {"model": "bands"}})
        self.assertEqual(pred.results[0].extra, {"uncertainty": {"step_time_s": [0.1, 0.2]}})
        self.assertEqual(pred.results[0]["uncertainty"]["step_time_s"], [0.1, 0.2])
        self.assertEqual(pred.to_dict(), doc)
        self.assertEqual(self.pred.extra, {})
        # A key the typed view expects but a document lacks reads as None.
        del doc["results"][0]["mfu"]
        self.assertIsNone(ddpsim.Prediction.from_dict(doc).results[0].mfu)

    def test_dict_and_engines(self):
        with open(DEFAULT) as f:
            doc = json.load(f)
        doc["sweep"] = {"cluster.gpus": [1, 8]}
        base = pathlib.Path(DEFAULT).resolve().parent
        analytic = ddpsim.predict(doc, base_dir=base)
        event = ddpsim.predict(doc, engine="event", base_dir=str(base))
        self.assertEqual(len(analytic.results), 2)
        from_file = {r.gpus: r for r in self.pred.results}
        for a, e in zip(analytic.results, event.results):
            # The engines agree within 1% where both are exact (tests/simulator/agreement_test).
            self.assertAlmostEqual(a.step_time_s / e.step_time_s, 1.0, delta=0.01)
            self.assertEqual(a.step_time_s, from_file[a.gpus].step_time_s)  # the dict is the file
        self.assertEqual(event.engine, "event")
        self.assert_typed(event)


class PlanTest(TypedResultsMixin, unittest.TestCase):
    def test_plan_is_the_cli_document_typed(self):
        got = ddpsim.plan(pathlib.Path(PLAN))
        want = cli("plan", PLAN, "--format", "json")
        self.assertIsInstance(got, ddpsim.Plan)
        self.assertEqual(without_run_context(got.to_dict()), without_run_context(want))
        self.assert_typed(got)
        self.assertIsInstance(got.chosen, ddpsim.PlanPoint)
        self.assertEqual(got.chosen.to_dict(), want["plan"]["chosen"])
        self.assertEqual(got.candidates, want["plan"]["candidates"])
        self.assertGreater(got.feasible, 0)
        self.assertTrue(got.pareto)
        self.assertEqual([p.gpus for p in got.pareto], [p["gpus"] for p in want["plan"]["pareto"]])
        self.assertEqual(got.scenario.file, want["scenario"]["file"])
        self.assertEqual(got.warnings, tuple(want["plan"]["warnings"]))
        self.assertEqual(got.extra, {})
        # Every system searched, with its best option; a key nothing types yet stays reachable.
        self.assertEqual(got.systems[0]["best"], want["plan"]["systems"][0]["best"])
        self.assertEqual(got.chosen.uncertainty, want["plan"]["chosen"]["uncertainty"])
        doc = json.loads(json.dumps(want))
        doc["plan"]["future_key"] = [{"hardware": "dgx-h100"}]
        self.assertEqual(ddpsim.Plan.from_dict(doc).extra["future_key"][0]["hardware"], "dgx-h100")


class PathsAndErrorsTest(unittest.TestCase):
    def test_pathlib_paths(self):
        a = ddpsim.predict(pathlib.Path(DEFAULT))
        b = ddpsim.predict(DEFAULT)
        self.assertEqual(a.results, b.results)
        self.assertEqual(a.scenario.file, DEFAULT)
        with tempfile.TemporaryDirectory() as tmp:
            # A scenario dict whose model config is relative to base_dir, given as a Path.
            shutil.copy(DATA / "hf" / "gpt2-config.json", pathlib.Path(tmp) / "gpt2.json")
            doc = {"name": "p", "model": {"hf_config": "gpt2.json", "seq_len": 128},
                   "hardware": {"preset": "dgx-h100"}, "cluster": {"gpus": 8},
                   "training": {"per_gpu_batch": 4}}
            with self.assertRaises(ddpsim.ScenarioError):
                ddpsim.predict(doc)  # relative to the working directory: not there
            got = ddpsim.predict(doc, base_dir=pathlib.Path(tmp))
            self.assertEqual(got.results[0].gpus, 8)
            self.assertEqual(got.scenario.model_name, "gpt2")
            planned = ddpsim.plan(dict(doc, plan={"gpus": [8, 16]}), base_dir=pathlib.Path(tmp))
            self.assertIsNotNone(planned.chosen)

    def test_wrong_types(self):
        with self.assertRaises(TypeError):
            ddpsim.predict(42)
        with self.assertRaises(TypeError):
            ddpsim.predict(DEFAULT, base_dir=42)
        with self.assertRaises(TypeError):
            ddpsim.plan([PLAN])
        with self.assertRaises(TypeError):
            ddpsim.import_torch(None)

    def test_exception_hierarchy(self):
        self.assertTrue(issubclass(ddpsim.ScenarioError, ddpsim.Error))
        self.assertTrue(issubclass(ddpsim.ScenarioError, ValueError))
        self.assertTrue(issubclass(ddpsim.UnsupportedError, ddpsim.Error))
        self.assertTrue(issubclass(ddpsim.Error, Exception))
        self.assertTrue(issubclass(ddpsim.ScenarioWarning, UserWarning))
        self.assertIs(ddpsim.errors.ScenarioError, ddpsim.ScenarioError)

    def test_bad_input_names_file_pointer_and_expectation(self):
        with open(DEFAULT) as f:
            doc = json.load(f)
        doc["training"]["per_gpu_batch"] = 0
        with self.assertRaises(ddpsim.Error) as cm:
            ddpsim.predict(doc)
        e = cm.exception
        self.assertIsInstance(e, ddpsim.ScenarioError)
        self.assertIsInstance(e, ValueError)
        self.assertEqual(e.pointer, "/training/per_gpu_batch")
        self.assertTrue(e.file.endswith("<dict>"), e.file)
        self.assertIn("integer", e.expected)
        self.assertEqual(e.got, "0")
        self.assertIn("/training/per_gpu_batch", str(e))
        again = pickle.loads(pickle.dumps(e))
        self.assertEqual((type(again), again.pointer, again.got, str(again)),
                         (ddpsim.ScenarioError, e.pointer, e.got, str(e)))
        with self.assertRaises(ddpsim.ScenarioError) as missing:
            ddpsim.predict(pathlib.Path("no/such/scenario.json"))
        self.assertEqual(missing.exception.file, "no/such/scenario.json")

    def test_unsupported_error(self):
        with open(DATA / "hf" / "gpt2-config.json") as f:
            config = json.load(f)
        config["add_cross_attention"] = True  # a module the transformer builder does not model
        with tempfile.TemporaryDirectory() as tmp:
            (pathlib.Path(tmp) / "config.json").write_text(json.dumps(config))
            doc = {"name": "x", "model": {"hf_config": "config.json", "seq_len": 128},
                   "hardware": {"preset": "dgx-h100"}, "cluster": {"gpus": 8},
                   "training": {"per_gpu_batch": 4}}
            with self.assertRaises(ddpsim.UnsupportedError) as cm:
                ddpsim.predict(doc, base_dir=pathlib.Path(tmp))
        self.assertIsInstance(cm.exception, ddpsim.Error)
        self.assertNotIsInstance(cm.exception, ddpsim.ScenarioError)
        self.assertIn("add_cross_attention", str(cm.exception))

    def test_engine_name_and_non_json_values(self):
        with self.assertRaises(ValueError):
            ddpsim.predict(DEFAULT, engine="fast")
        with self.assertRaises(ValueError):  # json.dumps(allow_nan=False) refuses NaN
            ddpsim.predict({"name": float("nan")})
        with self.assertRaises(TypeError):  # a set is not JSON
            ddpsim.predict({"name": {1, 2}})


def parse_collective_table(text):
    """`ddpsim collective`'s rows: (size, algorithm, protocol, channels, chunk, time_us, algbw,
    busbw), as printed."""
    rows = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        rows.append((int(f[0]), f[3], f[4], int(f[5]), int(f[6]), float(f[7]), float(f[8]),
                     float(f[9])))
    return rows


class CollectiveTest(TypedResultsMixin, unittest.TestCase):
    def check_against_cli(self, table, *cli_args):
        want = parse_collective_table(run_cli("collective", *cli_args)[0])
        got = [(r.size_bytes, r.algorithm, r.protocol, r.channels, round(r.chunk_bytes),
                round(r.time_s * 1e6, 2), round(r.algbw_gbytes_per_s, 2),
                round(r.busbw_gbytes_per_s, 2)) for r in table.rows]
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertEqual(g[:5], w[:5])
            for a, b in zip(g[5:], w[5:]):
                self.assertAlmostEqual(a, b, delta=0.0100001)  # the CLI prints 2 decimals

    def test_two_node_a100(self):
        t = ddpsim.collective("dgx-a100", 16, min_bytes=8, max_bytes="8G")
        self.assertIsInstance(t, ddpsim.CollectiveTable)
        self.assert_typed(t)
        self.assertEqual((t.op, t.gpus, t.nodes, t.hardware), ("all_reduce", 16, 2, "dgx-a100"))
        self.assertEqual(len(t.rows), 31)
        self.assertEqual(t.rows[-1].size_bytes, 8 * 1024 ** 3)
        self.check_against_cli(t, "--hardware", "dgx-a100", "--gpus", "16", "--min-bytes", "8",
                               "--max-bytes", "8G")

    def test_nccl_tests_launch(self):
        t = ddpsim.collective({"preset": "hgx-h200"}, 8, nccl_version="2.20.5", launch="threads",
                              algorithm="nvls", protocol="simple", cuda_graphs=True,
                              max_bytes=64 * 1024 ** 2, base_dir=pathlib.Path("."))
        self.assertEqual((t.nccl_version, t.gpus_per_process, t.cuda_graphs), ("2.20.5", 8, True))
        self.assertEqual({r.algorithm for r in t.rows}, {"nvls"})
        self.check_against_cli(t, "--hardware", "hgx-h200", "--nccl-version", "2.20.5",
                               "--launch", "threads", "--algo", "nvls", "--proto", "simple",
                               "--graphs", "--max-bytes", "64M")
        t = ddpsim.collective("dgx-h100", 64, op="all_gather", min_bytes="1M", max_bytes="1M")
        self.assertEqual(len(t.rows), 1)
        self.check_against_cli(t, "--hardware", "dgx-h100", "--gpus", "64", "--op", "all_gather",
                               "--min-bytes", "1M", "--max-bytes", "1M")

    def test_bad_arguments(self):
        for kwargs, pointer in (({"op": "reduce"}, "/op"), ({"min_bytes": 0}, "/min_bytes"),
                                ({"min_bytes": "8X"}, "/min_bytes"),
                                ({"max_bytes": 2.0 ** 51}, "/max_bytes"),
                                ({"min_bytes": "2G", "max_bytes": "1G"}, "/max_bytes"),
                                ({"algorithm": "fast"}, "/algorithm"),
                                ({"protocol": "ll64"}, "/protocol"),
                                ({"launch": "mpi"}, "/launch"), ({"gpus": 0}, "/gpus"),
                                ({"gpus_per_process": 0}, "/gpus_per_process"),
                                ({"hardware": "dgx-9"}, "/hardware/preset")):
            with self.subTest(**{k: str(v) for k, v in kwargs.items()}):
                with self.assertRaises(ddpsim.ScenarioError) as cm:
                    ddpsim.collective(**kwargs)
                self.assertEqual(cm.exception.pointer, pointer)
                self.assertTrue(cm.exception.file.endswith("<collective>"), cm.exception.file)
        with self.assertRaises(TypeError):
            ddpsim.collective(42)


def cli_warnings(stderr, prefix="ddpsim: warning: "):
    return [line[len(prefix):] for line in stderr.splitlines() if line.startswith(prefix)]


class ImportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = pathlib.Path(cls.tmp.name)
        # tests/model/hf_auto_test.cpp's base: Llama-2-7B's config, micro-batch 4, accumulation
        # 8, bf16, lr 3e-4 with 100 warmup steps, 64 GPUs.
        cls.base = {"model": {"hf_config": str((DATA / "hf" / "llama-2-7b-config.json").resolve()),
                              "seq_len": 4096},
                    "hardware": {"preset": "dgx-a100"}, "cluster": {"gpus": 64},
                    "training": {"per_gpu_batch": 4, "grad_accumulation": 8, "precision": "bf16",
                                 "lr": {"base": 3e-4, "base_batch": 2048, "warmup_steps": 100}},
                    # Both files offload the optimizer (ZeRO-Offload): the host's Adam rate.
                    "parallelism": {"offload": {"host_adam_params_per_s": 2e8}}}
        cls.base_file = cls.dir / "base.json"
        cls.base_file.write_text(json.dumps(cls.base))
        cls.knobs = cls.dir / "knobs.json"
        cls.knobs.write_text(json.dumps({"ddp": {"bucket_cap_mb": 50,
                                                 "gradient_as_bucket_view": True}}))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, function, cli_args, *args, **kwargs):
        got, said = calling(function, *args, **kwargs)
        out, err = run_cli("import", *cli_args)
        self.assertEqual(got, json.loads(out))
        self.assertEqual(said, cli_warnings(err))
        self.assertIsInstance(got, dict)
        return got, said

    def test_deepspeed_autos_filled_from_a_base(self):
        got, said = self.check(ddpsim.import_deepspeed, ["deepspeed", ZERO3, "--scenario",
                                                         self.base_file], ZERO3, self.base_file)
        self.assertEqual(got["cluster"]["gpus"], 64)
        self.assertEqual(got["parallelism"]["strategy"], "zero3")
        self.assertTrue(said)  # the fp16-only file under a bf16 base is named
        # The same base as a dict (named <base_dir>/<dict> in errors) gives the same scenario.
        again, _ = calling(ddpsim.import_deepspeed, str(ZERO3), self.base, base_dir=self.dir)
        self.assertEqual(again, got)
        with self.assertRaises(ddpsim.ScenarioError) as cm:
            ddpsim.import_deepspeed(ZERO2)  # "auto" values and no base to fill them
        self.assertEqual(cm.exception.file, str(ZERO2))
        self.assertIn("auto", str(cm.exception))
        r = subprocess.run([BIN, "import", "deepspeed", str(ZERO2)], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, f"ddpsim: {cm.exception}\n")  # the CLI's one line

    def test_deepspeed_with_world_size(self):
        got, _ = self.check(ddpsim.import_deepspeed, ["deepspeed", ZERO2, "--scenario",
                                                      self.base_file, "--gpus", 8],
                            ZERO2, self.base_file, gpus=8)
        self.assertEqual(got["cluster"]["gpus"], 8)
        self.assertEqual(got["parallelism"]["strategy"], "zero2")
        self.assertEqual(got["parallelism"]["offload"],
                         {"param": False, "host_adam_params_per_s": 2e8})

    def test_fill_hf_auto(self):
        filled, notes = calling(ddpsim.fill_hf_auto, ZERO3, self.base_file)
        text = json.dumps(filled)
        self.assertNotIn('"auto"', text)
        self.assertEqual(filled["train_batch_size"], 64 * 4 * 8)
        self.assertEqual(filled["optimizer"]["params"]["lr"], 3e-4)
        self.assertEqual(filled["zero_optimization"]["reduce_bucket_size"], 4096 * 4096)
        self.assertTrue(notes)
        with open(ZERO3) as f:
            as_dict, _ = calling(ddpsim.fill_hf_auto, json.load(f), self.base, gpus=64)
        self.assertEqual(as_dict, filled)

    def test_torchtitan(self):
        got, said = self.check(ddpsim.import_torchtitan, ["torchtitan", TITAN, "--gpus", 64],
                               TITAN, gpus=64)
        self.assertEqual(got["model"]["preset"], "llama-3.1-8b")
        self.assertEqual(got["parallelism"]["strategy"], "fsdp2")
        self.assertTrue(any("training.max_norm" in w for w in said), said)
        onto, _ = self.check(ddpsim.import_torchtitan, ["torchtitan", TITAN, "--scenario",
                                                        DEFAULT], TITAN, pathlib.Path(DEFAULT))
        self.assertEqual(onto["hardware"], {"preset": "dgx-h100"})  # the base's

    def test_torch_knobs(self):
        got, _ = self.check(ddpsim.import_torch, ["torch", self.knobs, "--scenario", DEFAULT,
                                                  "--gpus", 16], self.knobs,
                            pathlib.Path(DEFAULT), gpus=16)
        self.assertEqual(got["parallelism"]["bucket_cap_mb"], 50)
        self.assertEqual(got["cluster"]["gpus"], 16)
        self.assertEqual(got["model"], {"preset": "gpt2-xl"})
        self.check(ddpsim.import_torch, ["torch", self.knobs], str(self.knobs))

    def test_trace(self):
        got, said = calling(ddpsim.import_trace, TRACE)
        out, err = run_cli("import", "trace", TRACE)
        self.assertEqual(got, json.loads(out))
        self.assertEqual(said, ["unknown: " + w for w in cli_warnings(err, "ddpsim: unknown: ")])
        self.assertEqual(got["cluster"]["gpus"], 2)
        onto, _ = calling(ddpsim.import_trace, [TRACE], DEFAULT)
        self.assertEqual(onto, json.loads(run_cli("import", "trace", TRACE, "--scenario",
                                                  DEFAULT)[0]))
        self.assertEqual(onto["model"], {"preset": "gpt2-xl"})
        with self.assertRaises(ddpsim.ScenarioError):
            ddpsim.import_trace(DATA / "traces" / "hta_execution_trace.json.gz")
        with self.assertRaises(ValueError):
            ddpsim.import_trace([])


if __name__ == "__main__":
    sys.exit(unittest.main(verbosity=2))
