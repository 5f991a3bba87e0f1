"""The PEP 517 build backend of the ddpsim Python package (pyproject.toml names it).

`pip install .` calls build_wheel, which builds the package with the project's own CMake build
(target ddpsim_python, python/CMakeLists.txt) and packs what that build put in
<build>/python/ddpsim/ (the compiled ddpsim._core and the pure-Python modules) with the presets
(scenarios/ as ddpsim/data/) into a wheel for this interpreter. The backend needs only the
standard library: pyproject.toml requires nothing, so pip's isolated build environment downloads
nothing and `pip install .` works offline (no setuptools, wheel or pybind11 from an index;
pybind11 comes from Debian's pybind11-dev through CMake).

The build folder: config setting build-dir (``pip install . --config-settings build-dir=PATH``),
else $DDPSIM_BUILD_DIR, else build/ -- the folder scripts/setup.sh builds, so after it only the
module is compiled. A folder without a CMake cache is configured first (Release, Ninja when found,
-DPython3_EXECUTABLE=this interpreter, plus $DDPSIM_CMAKE_ARGS); a configured one is built as it
is configured, and refused when it was configured for another Python version.
"""
import base64
import hashlib
import importlib.machinery
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]
NAME = "ddpsim"
SUMMARY = ("Predict data-parallel deep-learning training step time, memory and scaling "
           "(the run API of the ddpsim simulator)")
# Fixed timestamps: the same build gives the same wheel.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def _version():
    text = (SOURCE / "CMakeLists.txt").read_text(encoding="utf-8")
    m = re.search(r"project\(\s*ddpsim\s+VERSION\s+([0-9][0-9.]*)", text)
    if not m:
        raise RuntimeError(f"{SOURCE / 'CMakeLists.txt'}: no project(ddpsim VERSION x.y.z)")
    return m.group(1)


def _dist_info():
    return f"{NAME}-{_version()}.dist-info"


def _tag():
    """cp311-cp311-linux_x86_64: the compiled core is for this CPython only."""
    if sys.implementation.name != "cpython":
        raise RuntimeError(f"ddpsim's core is built for CPython; this is {sys.implementation.name}")
    py = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{py}{getattr(sys, 'abiflags', '')}-{plat}"


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\nSummary: {SUMMARY}\n"
            "Requires-Python: >=3.9\n").encode()


def _wheel_file():
    return (f"Wheel-Version: 1.0\nGenerator: ddpsim_build_backend\nRoot-Is-Purelib: false\n"
            f"Tag: {_tag()}\n").encode()


def _say(message):
    print(f"ddpsim build: {message}", file=sys.stderr, flush=True)


def _run(cmd):
    _say(" ".join(shlex.quote(str(c)) for c in cmd))
    subprocess.run([str(c) for c in cmd], check=True, cwd=SOURCE)


def _build_dir(config_settings):
    value = ((config_settings or {}).get("build-dir") or os.environ.get("DDPSIM_BUILD_DIR")
             or "build")
    path = Path(value)
    return path if path.is_absolute() else SOURCE / path


def _base_python():
    """This interpreter outside any venv or pip's build environment (a temporary venv must not
    end up in a build folder's cache)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _build(config_settings):
    """Builds target ddpsim_python; returns <build>/python/ddpsim."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("ddpsim: cmake is not on PATH (bash scripts/setup.sh build installs "
                           "what the build needs)")
    build = _build_dir(config_settings)
    if not (build / "CMakeCache.txt").is_file():
        cmd = [cmake, "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
               "-DDDPSIM_WITH_PYTHON=ON", f"-DPython3_EXECUTABLE={_base_python()}"]
        if shutil.which("ninja"):
            cmd += ["-G", "Ninja"]
        cmd += shlex.split(os.environ.get("DDPSIM_CMAKE_ARGS", ""))
        _run(cmd)
    try:
        _run([cmake, "--build", build, "--target", "ddpsim_python"])
    except subprocess.CalledProcessError as e:
        raise RuntimeError(
            f"ddpsim: building target ddpsim_python in {build} failed (exit {e.returncode}); a "
            "folder configured without the Python module (DDPSIM_WITH_PYTHON=OFF, or without "
            "python3-dev and pybind11-dev) has no such target: reconfigure it with "
            "-DDDPSIM_WITH_PYTHON=ON, or name another folder (--config-settings build-dir=PATH)"
        ) from None
    package = build / "python" / NAME
    names = ["_core" + s for s in importlib.machinery.EXTENSION_SUFFIXES]
    if not any((package / n).is_file() for n in names):
        found = sorted(p.name for p in package.glob("_core*")) or ["nothing"]
        raise RuntimeError(
            f"ddpsim: {build} is configured for another Python (it built {', '.join(found)}; "
            f"{sys.executable} imports {names[0]}): build in a folder of its own, e.g. "
            "pip install . --config-settings "
            f"build-dir=build-py{sys.version_info[0]}{sys.version_info[1]}")
    return package


def _package_files(package):
    """(name in the wheel, file) for the package and its presets."""
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    files = []
    for path in sorted(package.iterdir()):
        # _paths.py points the build tree at the checkout's presets; the wheel has its own.
        if path.suffix == ".py" and path.name != "_paths.py":
            files.append((f"{NAME}/{path.name}", path))
        elif any(path.name == "_core" + s for s in suffixes):
            files.append((f"{NAME}/{path.name}", path))
    data = SOURCE / "scenarios"
    for path in sorted(data.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files.append((f"{NAME}/data/{path.relative_to(data).as_posix()}", path))
    return files


def _zip_write(z, name, data, executable=False):
    info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, data)


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


# --- PEP 517 hooks ---------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = Path(metadata_directory) / _dist_info()
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_bytes(_metadata())
    (dist_info / "WHEEL").write_bytes(_wheel_file())
    return dist_info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    package = _build(config_settings)
    name = f"{NAME}-{_version()}-{_tag()}.whl"
    dist_info = _dist_info()
    records = []
    with zipfile.ZipFile(Path(wheel_directory) / name, "w") as z:
        for arcname, path in _package_files(package):
            data = path.read_bytes()
            _zip_write(z, arcname, data, executable=arcname.endswith(".so"))
            records.append(_record_line(arcname, data))
        for member, data in (("METADATA", _metadata()), ("WHEEL", _wheel_file()),
                             ("top_level.txt", f"{NAME}\n".encode())):
            _zip_write(z, f"{dist_info}/{member}", data)
            records.append(_record_line(f"{dist_info}/{member}", data))
        records.append(f"{dist_info}/RECORD,,")
        _zip_write(z, f"{dist_info}/RECORD", ("\n".join(records) + "\n").encode())
    _say(f"wrote {name}")
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The checkout's tracked files (git ls-files) as ddpsim-VERSION.tar.gz."""
    try:
        listed = subprocess.run(["git", "-C", str(SOURCE), "ls-files", "-z"], check=True,
                                capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError(f"ddpsim: an sdist is made from a git checkout ({e})") from None
    root = f"{NAME}-{_version()}"
    name = f"{root}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(f for f in listed.decode().split("\0") if f):
            path = SOURCE / rel
            if path.is_file():
                tar.add(path, arcname=f"{root}/{rel}", recursive=False)
        info = tarfile.TarInfo(f"{root}/PKG-INFO")
        metadata = _metadata()
        info.size = len(metadata)
        tar.addfile(info, io.BytesIO(metadata))
    return name
