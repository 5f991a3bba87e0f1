#!/usr/bin/env python3
"""The vocabulary ddpsim's Python shares (ddpsim_torch.records, calibrate/torch/program.py).

Run by ctest (torch.package, label `torch`) with a python that imports torch and
PYTHONPATH=$SRC:$SRC/python; exit 77 (skipped) without torch.
  - write_json_atomic: the file holds the document; fsync runs on the temporary file, in the
    target's folder, before the rename; a document that cannot be written (NaN) and an error
    inside atomic_output leave an earlier file as it was and no `<name>.tmp.*` behind.
  - run_context: the C++ context's keys; the git revision is `git rev-parse --short=12 HEAD` of
    this checkout; the date is model::utc_now()'s format.
  - free_port: a port that can be bound on 127.0.0.1 right away.
  - spawn_ranks: two real ranks meet through env:// on the port it chose, with one OpenMP thread
    each (their all-reduce of 1 and 2 is 3); a rank that raises makes it raise, and error_line
    picks the exception's line out of the child's traceback.
  - No file of the package or of its tests edits sys.path.
"""

import glob
import json
import math
import os
import re
import socket
import subprocess
import sys
import tempfile

try:
    import torch
    import torch.distributed as dist
except ImportError as e:
    print(f"skipped: no torch ({e})")
    sys.exit(77)

from calibrate.torch import program  # noqa: E402
from ddpsim_torch import records  # noqa: E402

SRC = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(f"{what} {detail}".strip())


def leftovers(folder, name):
    return [f for f in os.listdir(folder) if f.startswith(name + ".tmp.")]


def test_writer(tmp):
    path = os.path.join(tmp, "run.json")
    synced = []
    real_fsync = records.os.fsync

    def spy(fd):
        synced.append((os.readlink(f"/proc/self/fd/{fd}"), os.path.exists(path)))
        real_fsync(fd)

    records.os.fsync = spy
    try:
        records.write_json_atomic(path, {"a": 1, "b": [0.5]})
    finally:
        records.os.fsync = real_fsync
    with open(path) as f:
        check("the written document", json.load(f) == {"a": 1, "b": [0.5]})
    check("one fsync", len(synced) == 1, str(synced))
    if synced:
        file, target_existed = synced[0]
        check("fsync of the temporary file beside the target, before the rename",
              os.path.dirname(file) == tmp and os.path.basename(file).startswith("run.json.tmp.")
              and not target_existed, str(synced))

    try:
        records.write_json_atomic(path, {"a": math.nan})
        check("NaN refused", False)
    except ValueError:
        pass
    with open(path) as f:
        check("the earlier file after a NaN", json.load(f) == {"a": 1, "b": [0.5]})

    try:
        with records.atomic_output(path) as f:
            f.write("half")
            raise RuntimeError("interrupted")
    except RuntimeError:
        pass
    with open(path) as f:
        check("the earlier file after an interrupted write", json.load(f)["a"] == 1)
    check("no temporary file left", not leftovers(tmp, "run.json"), str(leftovers(tmp, "run.json")))


def test_context():
    ctx = records.run_context("probe")
    check("context keys", set(ctx) == {"tool", "git_revision", "host", "date", "python",
                                       "torch_version"}, str(sorted(ctx)))
    try:
        want = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=SRC,
                              capture_output=True, text=True).stdout.strip() or "unknown"
    except OSError:
        want = "unknown"
    check("git revision", ctx["git_revision"] == want, f"{ctx['git_revision']} != {want}")
    check("UTC date", re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", ctx["date"]) is not None,
          ctx["date"])
    check("torch version", ctx["torch_version"] == torch.__version__)


def test_free_port():
    port = program.free_port()
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError as e:
            check("free port bindable", False, f"{port}: {e}")


def _meet(rank, out):
    """One rank: the all-reduce of rank + 1 over env://, with what the environment said."""
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=2)
    t = torch.tensor([rank + 1.0])
    dist.all_reduce(t)
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"sum": t.item(), "port": os.environ["MASTER_PORT"],
                       "omp": os.environ["OMP_NUM_THREADS"]}, f)
    dist.destroy_process_group()


def _refuse(rank):
    if rank == 1:
        raise ValueError("rank 1 says no")


def test_spawn(tmp):
    out = os.path.join(tmp, "met.json")
    program.spawn_ranks(_meet, (out,), 2)
    with open(out) as f:
        met = json.load(f)
    check("two ranks met", met["sum"] == 3.0, str(met))
    check("on the port spawn_ranks set", met["port"] == os.environ["MASTER_PORT"], str(met))
    check("one OpenMP thread per rank", met["omp"] == "1", str(met))
    try:
        program.spawn_ranks(_refuse, (), 2)
        check("a failing rank raises", False)
    except Exception as e:  # mp.spawn's ProcessRaisedException
        line = program.error_line(e)
        check("error_line", line == "ValueError: rank 1 says no", repr(line))


def test_no_path_edits():
    needle = "sys." + "path"
    files = (glob.glob(os.path.join(SRC, "calibrate", "torch", "*.py")) +
             glob.glob(os.path.join(SRC, "python", "ddpsim_torch", "*.py")) +
             glob.glob(os.path.join(SRC, "tests", "python", "*.py")))
    check("package files found", len(files) > 10, str(len(files)))
    for p in files:
        if os.path.samefile(p, __file__):  # names it, to look for it
            continue
        with open(p) as f:
            check(f"{os.path.relpath(p, SRC)} edits sys.path", needle not in f.read())


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_writer(tmp)
        test_context()
        test_free_port()
        test_spawn(tmp)
    test_no_path_edits()
    for f in failures:
        print("FAIL", f)
    print(f"{'FAILED' if failures else 'ok'}: the shared Python vocabulary")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
