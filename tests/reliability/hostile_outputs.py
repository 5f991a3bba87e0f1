#!/usr/bin/env python3
"""Issue 42, classes 1-3, with real processes, real FIFOs, device nodes and signals.

    hostile_outputs.py DDPSIM WORK [DDPSIM-CALIBRATE|-] [DDPSIM-VALIDATE|-] [DDPSIM-EXEC|-]

  - outputs that are not regular files: a FIFO given as --out (ddpsim predict, plan, import,
    ddpsim-calibrate import, ddpsim-validate, ddpsim-exec) or --trace is refused with one line
    calling it a FIFO, exit 2, and stays a FIFO (it used to be replaced by a regular file,
    exit 0); as root, a private character device node (what /dev/null is) likewise;
  - signals: SIGTERM during `ddpsim predict SWEEP --out out.json` and SIGINT during
    `ddpsim predict SWEEP --engine event --trace t.json` (after some t.N.json were written)
    exit 143 / 130 within a second with one line "ddpsim: interrupted (SIG...)" on stderr, and
    leave no temporary (*.tmp.*), no out.json and no t.N.json;
  - SIGTERM to ddpsim-exec stops its ranks (exit 143, no rank left, no file), to ddpsim-validate
    its children and removes its temporary folder (its one line names it);
  - checked writes: as root, `ddpsim-validate S --points-dir DIR` onto a 64 KiB tmpfs fails with
    one line naming "No space left on device", exit 2, and leaves no point file (it used to leave
    195 empty files of 199 and exit 0).
Each check prints what it measured; a check that needs root (mknod, mount) says it is skipped.
"""
import json
import os
import signal
import stat
import subprocess
import sys
import time

DDPSIM, WORK = sys.argv[1], sys.argv[2]
CALIBRATE, VALIDATE, EXEC = (sys.argv[3:6] + ["-", "-", "-"])[:3]
failures = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)


def fresh(name):
    d = os.path.join(WORK, name)
    subprocess.run(["rm", "-rf", d], check=True)
    os.makedirs(d)
    return d


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


MLP = {"model": {"mlp": {"widths": [64, 64, 8]}}, "hardware": {"preset": "dgx-h100"},
       "cluster": {"gpus": 2}, "training": {"per_gpu_batch": 4}, "simulation": {"steps": 2}}


def refused_one_line(argv, out, what, cwd):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=cwd)
    lines = r.stderr.splitlines()
    check(r.returncode == 2 and len(lines) == 1 and what in r.stderr and r.stdout == "",
          f"{' '.join(os.path.basename(a) if i == 0 else a for i, a in enumerate(argv))}: "
          f"exit {r.returncode}, stderr {r.stderr.strip()!r}")
    return r


def fifo_outputs():
    d = fresh("fifo")
    s = write_json(os.path.join(d, "s.json"), MLP)
    p = os.path.join(d, "p")
    os.mkfifo(p)
    msg = f"{p}: is a FIFO (named pipe), not a regular file"
    refused_one_line([DDPSIM, "predict", s, "--out", p], p, "--out " + msg, d)
    refused_one_line([DDPSIM, "predict", s, "--engine", "event", "--trace", p], p,
                     "--trace " + msg, d)
    refused_one_line([DDPSIM, "plan", s, "--out", p], p, "--out " + msg, d)
    knobs = write_json(os.path.join(d, "knobs.json"), {"ddp": {"bucket_cap_mb": 25}})
    refused_one_line([DDPSIM, "import", "torch", knobs, "--out", p], p, "--out " + msg, d)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "nccl-tests",
                       "all_reduce_azure_h100.log")
    if CALIBRATE != "-":
        refused_one_line([CALIBRATE, "import", "nccl-tests", os.path.abspath(src), "--out", p], p,
                         "--out " + msg, d)
    if VALIDATE != "-":
        refused_one_line([VALIDATE, s, "--out", p], p, "--out " + msg, d)
    if EXEC != "-":
        refused_one_line([EXEC, s, "--out", p], p, "--out " + msg, d)
        refused_one_line([EXEC, s, "--trace", p], p, "--trace " + msg, d)
    check(stat.S_ISFIFO(os.stat(p).st_mode), "the FIFO is still a FIFO")
    check(sorted(os.listdir(d)) == ["knobs.json", "p", "s.json"],
          f"nothing else written: {sorted(os.listdir(d))}")


def device_output():
    d = fresh("device")
    s = write_json(os.path.join(d, "s.json"), MLP)
    dev = os.path.join(d, "null")
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        print("skip: a device node needs root (mknod)")
        return
    refused_one_line([DDPSIM, "predict", s, "--out", dev], dev,
                     f"--out {dev}: is a character device, not a regular file", d)
    check(stat.S_ISCHR(os.stat(dev).st_mode), "the device node is still a device node")


def leftovers(d):
    return sorted(f for f in os.listdir(d) if ".tmp." in f or f.startswith("t.") or
                  f == "out.json")


def interrupted(argv, d, sig, ready, name):
    """Starts argv in d, waits until ready() (or 20 s), sends sig; returns (rc, stderr, s)."""
    p = subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    t0 = time.monotonic()
    while not ready() and p.poll() is None and time.monotonic() - t0 < 20:
        time.sleep(0.01)
    check(p.poll() is None, f"{name}: still running when the signal is sent "
                            f"({time.monotonic() - t0:.2f} s after the start)")
    sent = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    took = time.monotonic() - sent
    print(f"      {name}: exit {p.returncode} {took * 1e3:.0f} ms after "
          f"{signal.Signals(sig).name}; stderr {err.strip()!r}")
    return p.returncode, err, took


def signals():
    # SIGTERM during a 10,000-point analytic sweep with --out.
    d = fresh("sigterm")
    sweep = dict(MLP, model={"preset": "gpt2-xl"}, cluster={"gpus": 8},
                 sweep={"cluster.gpus": [8 * (i + 1) for i in range(100)],
                        "parallelism.bucket_cap_mb": [1 + i for i in range(100)]})
    s = write_json(os.path.join(d, "sweep.json"), sweep)
    start = time.monotonic()
    rc, err, took = interrupted([DDPSIM, "predict", s, "--out", "out.json"], d, signal.SIGTERM,
                                lambda: time.monotonic() - start > 1.0, "predict --out")
    lines = err.splitlines()
    check(rc == 143 and len(lines) == 1 and
          lines[0].startswith("ddpsim: interrupted (SIGTERM)"), "SIGTERM: exit 143, one line")
    check(took < 1.0, f"SIGTERM: stopped within a second ({took:.3f} s)")
    check(leftovers(d) == [], f"SIGTERM: no temporary, no out.json ({leftovers(d)})")

    # SIGINT during an event sweep writing one trace per point, after two were written.
    d = fresh("sigint")
    event = dict(MLP, model={"preset": "gpt2-xl"}, cluster={"gpus": 64},
                 simulation={"engine": "event", "steps": 3},
                 sweep={"parallelism.bucket_cap_mb": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                      14, 15, 16, 17, 18, 19, 20]})
    s = write_json(os.path.join(d, "sweep.json"), event)
    rc, err, took = interrupted([DDPSIM, "predict", s, "--trace", "t.json", "--out", "out.json"],
                                d, signal.SIGINT,
                                lambda: os.path.exists(os.path.join(d, "t.2.json")),
                                "predict --trace")
    lines = err.splitlines()
    check(rc == 130 and len(lines) == 1 and
          lines[0].startswith("ddpsim: interrupted (SIGINT); removed t.1.json, t.2.json"),
          "SIGINT: exit 130, one line naming the traces it removed")
    check(took < 1.0, f"SIGINT: stopped within a second ({took:.3f} s)")
    check(leftovers(d) == [], f"SIGINT: no trace, no temporary, no out.json ({leftovers(d)})")


def children():
    """SIGTERM to ddpsim-exec (its ranks) and ddpsim-validate (its children, its /tmp folder)."""
    if EXEC == "-" or VALIDATE == "-":
        print("skip: ddpsim-exec or ddpsim-validate is not built")
        return
    d = fresh("children")
    long = dict(MLP, model={"mlp": {"widths": [1024, 1024, 1024, 8]}},
                training={"per_gpu_batch": 64}, simulation={"steps": 400})
    s = write_json(os.path.join(d, "s.json"), long)

    def ranks_left(mark=s):
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        return [line for line in ps.splitlines() if mark in line and "ddpsim-" in line]

    started = time.monotonic()
    rc, err, took = interrupted([EXEC, s, "--out", "r.json", "--trace", "t.json"], d,
                                signal.SIGTERM, lambda: time.monotonic() - started > 2.0,
                                "ddpsim-exec")
    check(rc == 143 and err.splitlines()[-1].startswith("ddpsim-exec: interrupted (SIGTERM)"),
          "ddpsim-exec: exit 143, its line last")
    check(took < 6.0 and ranks_left() == [], f"ddpsim-exec: no rank left ({took:.3f} s)")
    check(sorted(os.listdir(d)) == ["s.json"], f"ddpsim-exec: nothing written ({os.listdir(d)})")

    before = set(f for f in os.listdir("/tmp") if f.startswith("ddpsim-validate-"))
    started = time.monotonic()
    rc, err, took = interrupted([VALIDATE, s, "--out", "v.json", "--steps", "50"], d,
                                signal.SIGTERM, lambda: time.monotonic() - started > 3.0,
                                "ddpsim-validate")
    after = set(f for f in os.listdir("/tmp") if f.startswith("ddpsim-validate-"))
    last = err.splitlines()[-1] if err else ""
    check(rc == 143 and last.startswith("ddpsim-validate: interrupted (SIGTERM); removed /tmp/"),
          "ddpsim-validate: exit 143, its line names its temporary folder")
    folder = last.rsplit("removed ", 1)[-1]  # its children's files live there
    check(after - before == set() and ranks_left() == [] and ranks_left(folder) == [],
          f"ddpsim-validate: its folder removed, no child left ({sorted(after - before)})")
    check(sorted(os.listdir(d)) == ["s.json"], f"ddpsim-validate: nothing written")


def full_disk():
    if VALIDATE == "-":
        print("skip: ddpsim-validate is not built")
        return
    d = fresh("full")
    small = os.path.join(d, "small")
    os.makedirs(small)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small],
                      capture_output=True).returncode != 0:
        print("skip: mounting a 64 KiB tmpfs needs root")
        return
    try:
        # 199 points of ~1 KiB each: the 64 KiB fill up part way.
        many = dict(MLP, sweep={"parallelism.bucket_cap_mb": [1 + i for i in range(199)]})
        s = write_json(os.path.join(d, "v.json"), many)
        pd = os.path.join(small, "pd")
        r = subprocess.run([VALIDATE, s, "--points-dir", pd], capture_output=True, text=True,
                           timeout=120)
        lines = r.stderr.splitlines()
        check(r.returncode == 2 and len(lines) == 1 and "No space left on device" in r.stderr
              and r.stdout == "",
              f"--points-dir on a full disk: exit {r.returncode}, stderr {r.stderr.strip()!r}")
        left = os.listdir(pd) if os.path.isdir(pd) else []
        check(left == [], f"--points-dir on a full disk: no point file left ({len(left)} left)")
    finally:
        subprocess.run(["umount", small])


fifo_outputs()
device_output()
signals()
children()
full_disk()
if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
