"""How ddpsim's Python writes what it produced: atomically, and with one context block.

    write_json_atomic("run.json", {"context": run_context("my tool"), ...})
    with atomic_output("trace.json.gz", "wb") as f:   # any bytes or text
        f.write(data)

atomic_output: a temporary file `<name>.tmp.<random>` in the target's folder (the prefix
ddpsim-exec's clean-up removes after a failed run), flushed and fsync'ed, then renamed over the
target, so the file is either complete or untouched, also after a power cut. On any error the
temporary file is removed and the error raised. A target that exists and is not a regular file
(a FIFO, a device, a socket, a folder) is never replaced: OSError "PATH: is a FIFO (named pipe),
not a regular file", before anything is written (as model/atomic_file.hpp, issue 42).

run_context: what the C++ tools' "context" block holds (model/run_context.hpp) that Python can
know: the tool, the git revision of the checkout this package runs from ("unknown" outside
one, e.g. installed), the host, the UTC time (the same format), the Python and torch versions.
torch is imported here only when run_context is called: `import ddpsim_torch` needs no torch.
"""

import contextlib
import datetime
import json
import os
import platform
import stat
import subprocess
import tempfile

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def _refuse_non_regular(path):
    """OSError naming what `path` is when it exists and is not a regular file."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise OSError(f"{path}: is {kind}, not a regular file")


@contextlib.contextmanager
def atomic_output(path, mode="w"):
    """The file object to write `path` through (see the module docstring)."""
    path = os.fspath(path)
    _refuse_non_regular(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.", dir=folder)
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        _refuse_non_regular(path)  # made while the temporary was written
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json_atomic(path, doc, indent=2):
    """`doc` as JSON (no NaN or infinity: ddpsim's readers refuse them) and a newline."""
    text = json.dumps(doc, indent=indent, allow_nan=False) + "\n"  # fails before any file exists
    with atomic_output(path) as f:
        f.write(text)


def git_revision():
    """12 hex digits of HEAD of the checkout this file lies in, as model/run_context.hpp's
    git_revision(); "unknown" outside a checkout or without git."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"],
                             cwd=os.path.dirname(os.path.abspath(__file__)),
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    rev = out.stdout.strip()
    return rev if out.returncode == 0 and rev else "unknown"


def utc_now():
    """The UTC time as model::utc_now() writes it: 2026-12-04T09:41:07Z."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_context(tool):
    """{"tool", "git_revision", "host", "date", "python", "torch_version"}; callers add their own
    keys (backend, device, ...) as the C++ tools do."""
    import torch
    return {"tool": tool, "git_revision": git_revision(), "host": platform.node() or "unknown",
            "date": utc_now(), "python": platform.python_version(),
            "torch_version": torch.__version__}
