#!/usr/bin/env python3
"""The ddpsim Python package installed, and imported from outside the source tree.

  test_install.py pip     `pip install SOURCE` into a fresh `python3 -m venv --system-site-packages`
                          with no index (--no-index, no pip configuration: nothing may be
                          downloaded; pyproject.toml's in-tree backend builds the wheel through
                          the CMake build in $DDPSIM_BUILD_DIR), then from a temporary folder:
                          the venv's ddpsim is the installed one, its presets are the wheel's
                          own (ddpsim/data), and it predicts what the build tree's module predicts.
  test_install.py cmake   `cmake --install BUILD --prefix P` of the components python and presets,
                          then with PYTHONPATH=P/$DDPSIM_PYTHON_INSTALL_DIR only: the installed
                          package, its presets P/share/ddpsim, the same prediction.

Run by ctest (label python) from the source root under the Python the module was built for.
Exit 77 (skip) only when that Python cannot make a venv with pip (Debian: python3-venv).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.getcwd()
BUILD = os.environ["DDPSIM_BUILD_DIR"]

# Predicts the default scenario's first two points and prints what the caller checks.
PROBE = r"""
import json, os, sys, ddpsim
search_path = list(getattr(sys, "path"))  # read, never edited
doc = json.load(open(os.path.join(ddpsim.data_dir(), "default.json")))
doc["sweep"] = {"cluster.gpus": [1, 8]}
pred = ddpsim.predict(doc, base_dir=ddpsim.data_dir())
try:
    ddpsim.predict(dict(doc, training={"per_gpu_batch": 0}))
    raised = None
except ddpsim.Error as e:
    raised = [type(e).__name__, isinstance(e, ValueError), e.pointer]
print(json.dumps({"file": ddpsim.__file__, "core": ddpsim._core.__file__,
                  "data_dir": ddpsim.data_dir(), "version": ddpsim.__version__,
                  "step_time_s": [r.step_time_s for r in pred.results], "raised": raised,
                  "path": search_path}))
"""


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def clean_env(**extra):
    """The environment without PYTHONPATH, ddpsim's data override or any pip configuration."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PIP_") and k not in ("PYTHONPATH", "DDPSIM_DATA_DIR",
                                                     "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env.update(extra)
    return env


def run(cmd, cwd, env, what):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{what} failed ({r.returncode}): {' '.join(cmd)}\n--- stdout\n{r.stdout}\n"
             f"--- stderr\n{r.stderr}")
    return r.stdout


def expected_step_times():
    """What the build tree's module predicts (PYTHONPATH=BUILD/python), in a child like the
    installed copy's probe."""
    env = clean_env(PYTHONPATH=os.path.join(BUILD, "python"))
    return json.loads(run([sys.executable, "-c", PROBE], SOURCE, env, "build-tree probe"))


def probe(python, cwd, env, where, data_dir):
    got = json.loads(run([python, "-c", PROBE], cwd, env, "installed probe"))
    for key in ("file", "core"):
        if not os.path.realpath(got[key]).startswith(os.path.realpath(where) + os.sep):
            fail(f"ddpsim imported from {got[key]}, not from the installation {where}")
    if os.path.realpath(got["data_dir"]) != os.path.realpath(data_dir):
        fail(f"installed ddpsim reads its presets from {got['data_dir']}, expected {data_dir}")
    if any(os.path.realpath(p) == os.path.realpath(SOURCE) for p in got["path"] if p):
        fail(f"the source tree is on the installed probe's module search path: {got['path']}")
    want = expected_step_times()
    if got["step_time_s"] != want["step_time_s"] or len(want["step_time_s"]) != 2:
        fail(f"installed prediction {got['step_time_s']} != build tree's {want['step_time_s']}")
    if got["raised"] != ["ScenarioError", True, "/training/per_gpu_batch"]:
        fail(f"bad input raised {got['raised']}, expected ScenarioError (a ValueError) at "
             "/training/per_gpu_batch")
    if got["version"] != want["version"]:
        fail(f"installed version {got['version']} != {want['version']}")
    print(f"ok: {got['file']} (presets {got['data_dir']}) predicts {got['step_time_s']}")


def test_pip(tmp):
    try:
        import ensurepip  # noqa: F401  (what `python3 -m venv` installs pip with)
        import venv  # noqa: F401
    except ImportError as e:
        print(f"SKIP: {sys.executable} cannot make a venv with pip ({e}); "
              "apt-get install python3-venv")
        sys.exit(77)
    venv_dir = os.path.join(tmp, "venv")
    run([sys.executable, "-m", "venv", "--system-site-packages", venv_dir], tmp, clean_env(),
        "python3 -m venv")
    python = os.path.join(venv_dir, "bin", "python")
    # The README's command, offline: no index, no cache, the build folder of this tree.
    out = run([python, "-m", "pip", "install", "--no-index", "--no-cache-dir",
               "--disable-pip-version-check", SOURCE], SOURCE,
              clean_env(DDPSIM_BUILD_DIR=BUILD), "pip install")
    print(out.strip().splitlines()[-1])
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"], tmp,
               clean_env(), "platlib")
    package = os.path.join(site.strip(), "ddpsim")
    for name in ("__init__.py", "results.py", "errors.py", "data/default.json",
                 "data/hardware/dgx-h100.json"):
        if not os.path.isfile(os.path.join(package, name)):
            fail(f"pip did not install ddpsim/{name} into {site.strip()}")
    if os.path.exists(os.path.join(package, "_paths.py")):
        fail("the wheel carries the build tree's _paths.py (it points at the checkout)")
    probe(python, tmp, clean_env(), package, os.path.join(package, "data"))


def test_cmake(tmp):
    if os.path.isabs(os.environ["DDPSIM_PYTHON_INSTALL_DIR"]):
        print("SKIP: DDPSIM_PYTHON_INSTALL_DIR is absolute "
              f"({os.environ['DDPSIM_PYTHON_INSTALL_DIR']}): an install would not go to a "
              "temporary prefix")
        sys.exit(77)
    prefix = os.path.join(tmp, "prefix")
    cmake = os.environ.get("CMAKE_COMMAND", "cmake")
    for component in ("python", "presets"):
        run([cmake, "--install", BUILD, "--prefix", prefix, "--component", component], tmp,
            clean_env(), f"cmake --install --component {component}")
    site = os.path.join(prefix, os.environ["DDPSIM_PYTHON_INSTALL_DIR"])
    package = os.path.join(site, "ddpsim")
    probe(sys.executable, tmp, clean_env(PYTHONPATH=site), package,
          os.path.join(prefix, "share", "ddpsim"))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    tests = {"pip": test_pip, "cmake": test_cmake}
    if mode not in tests:
        print(f"usage: {sys.argv[0]} pip|cmake", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix=f"ddpsim-install-{mode}-")
    try:
        tests[mode](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
