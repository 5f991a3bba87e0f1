"""What the package's programs share: one-line failures, the check that torch imports, and
ranks started on a free loopback port.

    fail = functools.partial(program.fail, PROG)
    program.require_torch(PROG)            # exit 1, one line, when torch does not import
    program.spawn_ranks(rank_main, (world, cfg), world)   # raises when a rank fails
    fail(1, f"a rank failed: {program.error_line(e)}")

spawn_ranks is torch.multiprocessing.spawn of `nproc` processes, fn(rank, *args) in each, with
the environment an env:// rendezvous reads: MASTER_ADDR 127.0.0.1 (unless set), MASTER_PORT a
port free on 127.0.0.1 now (free_port: bind port 0, read back what the kernel gave), and
OMP_NUM_THREADS=1 (one core per rank, as torchrun sets it for several ranks per host). torch is
imported only when ranks are spawned.
"""

import os
import re
import socket
import sys


def fail(prog, code, message):
    print(f"{prog}: {message}", file=sys.stderr)
    sys.exit(code)


def require_torch(prog):
    """Exits 1 with one line naming this python and what to do when torch does not import."""
    try:
        import torch  # noqa: F401
        import torch.distributed  # noqa: F401
        import torch.multiprocessing  # noqa: F401
    except ImportError as e:
        fail(prog, 1, f"PyTorch is not importable by {sys.executable} ({e}); install "
                      "python3-torch (scripts/setup.sh) or set DDPSIM_TORCH_PYTHON to a python3 "
                      "that imports torch")


def free_port():
    """A TCP port free on 127.0.0.1 at this moment (the kernel's pick for port 0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn_ranks(fn, args, nproc):
    """fn(rank, *args) in `nproc` fresh processes (see the module docstring); returns when all
    returned, raises mp.spawn's exception when one failed."""
    import torch.multiprocessing as mp
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(free_port())
    os.environ["OMP_NUM_THREADS"] = "1"
    mp.spawn(fn, args=args, nprocs=nproc, join=True)


def error_line(e):
    """The exception line of a rank's traceback (mp.spawn's ProcessRaisedException carries the
    child's whole traceback, and torch appends C++ frames after the message)."""
    found = re.findall(r"^(?:[\w.]+(?:Error|Exception|Interrupt)|ProcessExitedException)\b.*$",
                       str(e), re.M)
    return found[-1] if found else (str(e).strip().splitlines() or [type(e).__name__])[-1]
