#!/usr/bin/env python3
"""Issue 42 in Python: Ctrl-C during a long run, and the paths the package accepts.

Run by ctest (label `python`, python.interrupt_paths) from the source root with
PYTHONPATH=<build>/python:<source>/python. Checks:
  - Ctrl-C (a real SIGINT to an interpreter running ddpsim.predict over a 10,000-point sweep)
    raises KeyboardInterrupt within a second (the run asks between sweep points:
    RunOptions::cancelled, PyErr_CheckSignals under the GIL); before, it was ignored for the
    whole run (30-40 s). The module installs no signal handler of its own: Python's default
    SIGINT handler is the one in place during the run;
  - a NUL in a str path is a ddpsim.ScenarioError (a ddpsim.Error) naming the path with the NUL
    escaped, from the package and from the core alike; it was the part before the NUL that
    was read ("x.json\\0junk" predicted x.json);
  - a bytes path is decoded as os.fsdecode does and predicts what the str path predicts;
    pathlib.Path still works;
  - the Python tools' atomic writer (ddpsim_torch.records) never replaces a FIFO or a folder.
"""
import os
import pathlib
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import ddpsim
from ddpsim import _core

DEFAULT = "scenarios/default.json"

# 100 x 100 points of GPT-2 XL on the analytic engine: tens of seconds on one core.
SWEEP = {
    "model": {"preset": "gpt2-xl"}, "hardware": {"preset": "dgx-h100"}, "cluster": {"gpus": 8},
    "training": {"per_gpu_batch": 4, "precision": "amp_bf16", "optimizer": "adamw"},
    "simulation": {"engine": "analytic"},
    "sweep": {"cluster.gpus": [8 * (i + 1) for i in range(100)],
              "parallelism.bucket_cap_mb": [1 + i for i in range(100)]},
}


class CtrlC(unittest.TestCase):
    def test_sigint_raises_keyboard_interrupt_within_a_second(self):
        child = textwrap.dedent(f"""
            import signal, sys, time
            import ddpsim
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
            sys.stdout.write("running\\n"); sys.stdout.flush()
            t0 = time.monotonic()
            try:
                ddpsim.predict({SWEEP!r})
            except KeyboardInterrupt:
                sys.stdout.write("KeyboardInterrupt %.3f\\n" % time.monotonic()); sys.exit(3)
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
            sys.stdout.write("finished after %.1f s\\n" % (time.monotonic() - t0)); sys.exit(0)
        """)
        p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        self.assertEqual(p.stdout.readline().strip(), "running")
        time.sleep(1.5)  # inside the sweep (loading GPT-2 XL and the first points take ~0.3 s)
        self.assertIsNone(p.poll(), "the sweep finished before the signal: make it longer")
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 3, f"stdout {out!r} stderr {err!r}")
        raised = float(out.split()[-1])
        latency = raised - sent
        print(f"KeyboardInterrupt {latency * 1e3:.0f} ms after SIGINT", file=sys.stderr)
        self.assertLess(latency, 1.0)


class Paths(unittest.TestCase):
    def test_nul_in_a_path_is_refused_naming_it(self):
        for call in (lambda p: ddpsim.predict(p), lambda p: ddpsim.plan(p),
                     lambda p: ddpsim.import_torch(p)):
            with self.assertRaises(ddpsim.ScenarioError) as c:
                call(DEFAULT + "\0junk")
            self.assertIsInstance(c.exception, ddpsim.Error)
            self.assertEqual(c.exception.file, DEFAULT + "\\x00junk")
            self.assertIn(DEFAULT + "\\x00junk", str(c.exception))
            self.assertIn("NUL", str(c.exception))
            self.assertNotIn("\0", str(c.exception))
        # The core itself refuses it too (the package is not the only way in).
        with self.assertRaises(ddpsim.ScenarioError) as c:
            _core.predict(DEFAULT + "\0junk", None, None)
        self.assertEqual(c.exception.file, DEFAULT + "\\x00junk")
        with self.assertRaises(ddpsim.ScenarioError):
            ddpsim.predict(DEFAULT.encode() + b"\0junk")

    def test_bytes_and_pathlib_paths_predict_what_str_does(self):
        want = ddpsim.predict(DEFAULT).to_dict()["results"]
        self.assertEqual(ddpsim.predict(DEFAULT.encode()).to_dict()["results"], want)
        self.assertEqual(ddpsim.predict(os.fsencode(DEFAULT)).to_dict()["results"], want)
        self.assertEqual(ddpsim.predict(pathlib.Path(DEFAULT)).to_dict()["results"], want)
        self.assertEqual(_core.predict(DEFAULT.encode(), None, None)["results"], want)

    def test_undecodable_bytes_name_the_file_that_is_missing(self):
        with tempfile.TemporaryDirectory() as d:
            name = os.path.join(os.fsencode(d), b"caf\xe9.json")  # Latin-1, not UTF-8
            with self.assertRaises(ddpsim.Error) as c:
                ddpsim.predict(name)
            self.assertIn("caf\\xe9.json", str(c.exception))  # the byte, escaped


class TorchRecords(unittest.TestCase):
    """python/ddpsim_torch/records.py, the Python tools' writer (no torch needed)."""

    def test_a_fifo_or_a_folder_is_never_replaced(self):
        from ddpsim_torch.records import write_json_atomic  # PYTHONPATH has python/
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "p")
            os.mkfifo(fifo)
            with self.assertRaises(OSError) as c:
                write_json_atomic(fifo, {"x": 1})
            self.assertEqual(str(c.exception), f"{fifo}: is a FIFO (named pipe), not a regular file")
            self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
            with self.assertRaises(OSError) as c:
                write_json_atomic(d, {"x": 1})
            self.assertIn("is a folder, not a regular file", str(c.exception))
            self.assertEqual(os.listdir(d), ["p"])  # no temporary left


if __name__ == "__main__":
    unittest.main(verbosity=2)
