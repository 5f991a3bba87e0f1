"""The functions of the ddpsim package over its compiled core (ddpsim._core).

Paths may be ``str`` or any ``os.PathLike`` (``pathlib.Path``); a scenario may also be a dict,
whose relative references (a model file, a profile) resolve from ``base_dir`` (default: the
working directory). Errors are ddpsim.errors' classes.
"""
from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Mapping
from typing import Iterable, Optional, Union

from . import _core
from .errors import ScenarioError, ScenarioWarning
from .results import CollectiveTable, Plan, Prediction

__all__ = ["predict", "plan", "collective", "import_deepspeed", "import_torchtitan",
           "import_torch", "import_trace", "fill_hf_auto", "data_dir"]

PathLike = Union[str, "os.PathLike[str]"]

_log = logging.getLogger("ddpsim")


def _escaped(text: str) -> str:
    """`text` fit for a one-line message: control characters as \\xNN (as the CLI prints)."""
    return "".join(c if " " <= c != "\x7f" else f"\\x{ord(c):02x}" for c in text)


def _path(value, what: str) -> str:
    """`value` as a str path: a str, bytes (decoded as os.fsdecode does: the file-system
    encoding, undecodable bytes kept) or os.PathLike (pathlib.Path). A NUL character is refused
    with ScenarioError naming the path (the C library would read "x.json\\0junk" as x.json)."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"{what}: expected a path (str, bytes or os.PathLike), "
                        f"got {type(value).__name__}")
    text = os.fsdecode(os.fspath(value))
    if "\0" in text:
        shown, at = _escaped(text), text.index("\0")
        expected, got = "a path without a NUL character", f"a NUL at character {at}"
        raise ScenarioError(f"{shown}: /: expected {expected}, got {got}", file=shown,
                            pointer="", expected=expected, got=got)
    return text


def _optional_dir(value, what: str) -> Optional[str]:
    return None if value is None else _path(value, what)


def _scenario(value, what: str = "scenario"):
    """A scenario argument for the core: a dict, or a path as str."""
    if isinstance(value, Mapping):
        return dict(value)
    try:
        return _path(value, what)
    except TypeError:
        raise TypeError(f"{what}: expected a path (str or os.PathLike) or a dict, "
                        f"got {type(value).__name__}") from None


def _base(scenario, base_dir):
    """A base scenario for the importers: (document or None, the name it has in errors)."""
    if scenario is None:
        return None, ""
    value = _scenario(scenario)
    if isinstance(value, dict):
        return value, os.path.join(_optional_dir(base_dir, "base_dir") or os.getcwd(), "<dict>")
    return None, value


def _warn(lines: Iterable[str], prefix: str = "", stacklevel: int = 3) -> None:
    """Each line as a ScenarioWarning attributed to the user's call (`stacklevel` frames up:
    3 for a public function calling this directly)."""
    for line in lines:
        warnings.warn(prefix + line, ScenarioWarning, stacklevel=stacklevel)


def predict(scenario, engine: Optional[str] = None, base_dir: Optional[PathLike] = None
            ) -> Prediction:
    """Predicts every sweep point of a scenario: ``ddpsim predict --format json``.

    scenario: a path or a dict. engine: None (the scenario's simulation.engine), "analytic" or
    "event". Returns a :class:`ddpsim.Prediction` (``.to_dict()`` is the CLI's document).
    """
    return Prediction.from_dict(_core.predict(_scenario(scenario), engine,
                                              _optional_dir(base_dir, "base_dir")))


def plan(scenario, base_dir: Optional[PathLike] = None) -> Plan:
    """The planner's answer for a scenario: ``ddpsim plan --format json``.

    Returns a :class:`ddpsim.Plan` (``.to_dict()`` is the CLI's document).
    """
    return Plan.from_dict(_core.plan(_scenario(scenario), _optional_dir(base_dir, "base_dir")))


_UNITS = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}


def _size(value, what: str, source: str) -> float:
    """Bytes: a number, or nccl-tests' text ("8", "64K", "32M", "8G": powers of 1024). The core
    checks the range (whole bytes from 1 to 2^50)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected a number of bytes or a size like \"64K\", "
                        f"got {type(value).__name__}")
    text = value.strip()
    scale = _UNITS.get(text[-1:].upper(), 1)
    try:
        return float(text[:-1] if scale != 1 else text) * scale
    except ValueError:
        expected = "a whole number of bytes from 1 to 2^50, like 8, 64K, 32M or 8G"
        raise ScenarioError(f"{source}: /{what}: expected {expected}, got \"{value}\"",
                            file=source, pointer="/" + what, expected=expected,
                            got=f"\"{value}\"") from None


def collective(hardware: Union[str, Mapping] = "dgx-h100", gpus: int = 8, *,
               op: str = "all_reduce", min_bytes: Union[int, str] = 8,
               max_bytes: Union[int, str] = "1G", algorithm: str = "auto",
               protocol: str = "auto", launch: str = "process",
               nccl_version: Optional[str] = None, gpus_per_process: Optional[int] = None,
               cuda_graphs: bool = False, base_dir: Optional[PathLike] = None
               ) -> CollectiveTable:
    """The modelled cost of one collective at every size: ``ddpsim collective``.

    hardware: a system preset name or a hardware section (dict). Sizes double from min_bytes
    to max_bytes (bytes, or nccl-tests' "64K", "32M", "8G"). op: all_reduce, reduce_scatter,
    all_gather or broadcast; algorithm and protocol as NCCL_ALGO / NCCL_PROTO; launch "process"
    (DDP, nccl-tests -g 1) or "threads" (nccl-tests -g N); cuda_graphs as nccl-tests -G.
    Returns a :class:`ddpsim.CollectiveTable`.
    """
    if isinstance(hardware, str):
        section = {"preset": hardware}
    elif isinstance(hardware, Mapping):
        section = dict(hardware)
    else:
        raise TypeError(f"hardware: expected a preset name or a hardware section (dict), "
                        f"got {type(hardware).__name__}")
    folder = _optional_dir(base_dir, "base_dir")
    source = os.path.join(folder or os.getcwd(), "<collective>")  # the core's name for errors
    doc = _core.collective(section, gpus, op, _size(min_bytes, "min_bytes", source),
                           _size(max_bytes, "max_bytes", source), algorithm, protocol, launch,
                           nccl_version or "", gpus_per_process, bool(cuda_graphs), folder)
    return CollectiveTable.from_dict(doc)


def _import(kind, path, scenario, gpus, base_dir):
    base, base_path = _base(scenario, base_dir)
    doc, lines = _core.import_scenario(kind, _path(path, kind), base, base_path, gpus)
    _warn(lines, stacklevel=4)  # _warn <- _import <- import_* <- the caller
    return doc


def import_deepspeed(config: PathLike, scenario=None, *, gpus: Optional[int] = None,
                     base_dir: Optional[PathLike] = None) -> dict:
    """A DeepSpeed config JSON as scenario keys: ``ddpsim import deepspeed``.

    With a base `scenario` (a path or a dict) the keys are applied to it and the result is
    validated; the Hugging Face Trainer's "auto" values are filled from it (see
    :func:`fill_hf_auto`). gpus: the data-parallel world size of DeepSpeed's batch rule
    (default: the base's cluster.gpus). Returns the scenario (a dict); what could not be carried
    over is a :class:`ddpsim.ScenarioWarning`.
    """
    return _import("deepspeed", config, scenario, gpus, base_dir)


def import_torchtitan(job: PathLike, scenario=None, *, gpus: Optional[int] = None,
                      base_dir: Optional[PathLike] = None) -> dict:
    """A torchtitan job TOML as a scenario: ``ddpsim import torchtitan``.

    With a base `scenario` its hardware and other keys are kept and the job's model, batch,
    mesh and recipe applied. gpus: the job's world size (needed when
    data_parallel_shard_degree is -1 and the base has no cluster.gpus). What is not modelled is a
    :class:`ddpsim.ScenarioWarning` naming its TOML path.
    """
    return _import("torchtitan", job, scenario, gpus, base_dir)


def import_torch(knobs: PathLike, scenario=None, *, gpus: Optional[int] = None,
                 base_dir: Optional[PathLike] = None) -> dict:
    """PyTorch DDP/FSDP knobs ({"ddp": {...}} or {"fsdp": {...}}, a JSON file) as scenario keys:
    ``ddpsim import torch``. gpus also sets cluster.gpus."""
    return _import("torch", knobs, scenario, gpus, base_dir)


def import_trace(traces, scenario=None, *, base_dir: Optional[PathLike] = None) -> dict:
    """A scenario drafted from a DDP job's PyTorch profiler traces (a path or a list of them, one
    per rank, .json or .json.gz): ``ddpsim import trace``.

    With a base `scenario` only what the traces tell (world size, bucket cap, wire dtype, steps)
    is applied to it. What the traces cannot tell is a :class:`ddpsim.ScenarioWarning`; the
    one-line summary is logged (logger "ddpsim", INFO).
    """
    if isinstance(traces, (str, bytes, os.PathLike)):
        traces = [traces]
    paths = [_path(t, "traces") for t in traces]
    if not paths:
        raise ValueError("traces: expected at least one profiler trace")
    base, base_path = _base(scenario, base_dir)
    d = _core.import_trace(paths, base, base_path)
    _warn(d["unknown"], "unknown: ")
    _log.info("%s", d["summary"])
    return d["scenario"]


def fill_hf_auto(config, scenario=None, *, gpus: Optional[int] = None,
                 base_dir: Optional[PathLike] = None) -> dict:
    """A DeepSpeed config (a path or a dict) with every "auto" filled as the Hugging Face
    Trainer fills it, from a base `scenario` (a path or a dict) instead of TrainingArguments;
    gpus: the world size (default: the base's cluster.gpus). An "auto" that cannot be filled
    raises ScenarioError naming what would fill it; a mismatch the Trainer would leave in place
    is a :class:`ddpsim.ScenarioWarning`. ``import_deepspeed(config, scenario)`` does this
    before it imports."""
    if isinstance(config, Mapping):
        doc = dict(config)
        file = os.path.join(_optional_dir(base_dir, "base_dir") or os.getcwd(), "<dict>")
    else:
        doc, file = None, _path(config, "config")  # read by the core, with its errors
    base, base_path = _base(scenario, base_dir)
    filled, notes = _core.fill_hf_auto(doc, file, base, base_path, gpus)
    _warn(notes)
    return filled


def data_dir() -> str:
    """The folder the presets (models/, hardware/) are read from: $DDPSIM_DATA_DIR, else the
    presets installed with this package, else those of the checkout it was built from."""
    return _core.data_dir()
