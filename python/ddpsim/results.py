"""Typed results: the JSON documents of ``ddpsim predict``, ``ddpsim plan`` and
``ddpsim collective`` as frozen dataclasses.

The most used fields are typed attributes named as their JSON keys (``r.step_time_s``,
``r.memory.activation_bytes``, ``plan.chosen.gpus``); the document itself is never lost:

* ``x.to_dict()`` returns (a copy of) the JSON document or object the value was made from,
  exactly as the CLI prints it;
* ``x.raw`` is that document (do not modify it), ``x["key"]`` reads it, and ``x.extra`` holds the
  keys of the object that no attribute types (fields added by a newer ddpsim, such as a plan's
  ``systems`` or a result's ``uncertainty``).

A typed attribute whose key the document lacks is ``None``. Numbers keep JSON's types except
where noted (byte counts of memory are floats: the model's averages are fractional).
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

__all__ = [
    "ScenarioInfo", "Memory", "Bucket", "PointResult", "Prediction", "PlanPoint", "Plan",
    "CollectiveRow", "CollectiveTable",
]


def _raw():
    return field(default=None, repr=False, compare=False)


def _typed(convert=None, key=None):
    """A typed attribute read from JSON key `key` (default: its name) through `convert`."""
    return field(metadata={"convert": convert, "key": key})


def _tuple_of(convert):
    return lambda values: tuple(convert(v) for v in values)


class _Document:
    """What every typed result shares: the JSON it was made from."""

    # The key of the JSON object the typed attributes are read from (None: the document itself).
    _section: Optional[str] = None
    # A result is not a sequence: iterating over its keys would be a trap (see __getitem__).
    __iter__ = None

    @classmethod
    def from_dict(cls, doc: Dict[str, Any]):
        """The typed view of `doc` (a document as the CLI prints it, parsed)."""
        obj = doc if cls._section is None else (doc.get(cls._section) or {})
        values = {}
        for f in dataclasses.fields(cls):
            if f.name == "raw" or "convert" not in f.metadata:
                continue
            value = obj.get(f.metadata["key"] or f.name)
            convert = f.metadata["convert"]
            values[f.name] = convert(value) if convert is not None and value is not None else value
        values.update(cls._derived(doc))
        return cls(raw=doc, **values)

    @classmethod
    def _derived(cls, doc):
        return {}

    def to_dict(self) -> Dict[str, Any]:
        """The JSON document this was made from (a deep copy)."""
        return copy.deepcopy(self.raw)

    def __getitem__(self, key):
        """The JSON document's value at `key` (``pred["results"][0]["gpus"]``)."""
        return self.raw[key]

    def __contains__(self, key):
        return key in self.raw

    def get(self, key, default=None):
        """The JSON document's value at `key`, or `default`."""
        return self.raw.get(key, default)

    @property
    def extra(self) -> Dict[str, Any]:
        """The keys of the JSON object that no attribute types (newer fields land here)."""
        obj = self.raw if self._section is None else (self.raw.get(self._section) or {})
        typed = {f.metadata.get("key") or f.name for f in dataclasses.fields(self)
                 if "convert" in f.metadata}
        return {k: v for k, v in obj.items() if k not in typed}


@dataclass(frozen=True)
class ScenarioInfo(_Document):
    """A document's ``scenario`` block: what was predicted."""
    file: str = _typed()
    name: str = _typed()
    model: str = _typed()         # how the model was given ("preset gpt2-xl")
    model_name: str = _typed()
    params: int = _typed()
    parameter_tensors: int = _typed()
    hardware: str = _typed()
    gpu: str = _typed()
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class Memory(_Document):
    """Memory per GPU, in bytes, by what holds it."""
    params_bytes: float = _typed()
    grads_bytes: float = _typed()
    optimizer_bytes: float = _typed()
    activation_bytes: float = _typed()
    buffer_bytes: float = _typed()
    runtime_bytes: float = _typed()
    fragmentation_bytes: float = _typed()
    raw: Dict[str, Any] = _raw()

    @property
    def total_bytes(self) -> float:
        """The sum of the parts (a result's memory_per_gpu_bytes)."""
        return sum(v for k, v in self.raw.items() if k.endswith("_bytes"))


@dataclass(frozen=True)
class Bucket(_Document):
    """One planned collective of a step (a DDP bucket's all-reduce, an FSDP gather...)."""
    bytes: int = _typed()
    grad_bytes: int = _typed()
    tensors: int = _typed()
    ready_s: float = _typed()
    start_s: float = _typed()
    end_s: float = _typed()
    algorithm: str = _typed()
    protocol: str = _typed()
    channels: int = _typed()
    busbw_gbytes_per_s: float = _typed()
    kind: Optional[str] = _typed()    # sharded strategies: all_gather, reduce_scatter, ...
    phase: Optional[str] = _typed()
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class PointResult(_Document):
    """The prediction of one sweep point (an element of ``results``)."""
    sweep_point: Optional[Dict[str, Any]] = _typed()  # the swept keys' values; None: no sweep
    gpus: int = _typed()
    nodes: int = _typed()
    per_gpu_batch: int = _typed()
    grad_accumulation: int = _typed()
    global_batch: int = _typed()
    strategy: str = _typed()
    step_time_s: float = _typed()
    first_step_time_s: float = _typed()
    forward_time_s: float = _typed()
    backward_time_s: float = _typed()
    grad_copy_time_s: float = _typed()
    optimizer_time_s: float = _typed()
    comm_time_s: float = _typed()
    exposed_comm_s: float = _typed()
    p50_step_time_s: Optional[float] = _typed()
    p99_step_time_s: Optional[float] = _typed()
    step_time_interval_s: Optional[Tuple[float, float]] = _typed(tuple)
    bucket_count: int = _typed()
    buckets: Tuple[Bucket, ...] = _typed(_tuple_of(Bucket.from_dict))
    grad_bytes_per_step: float = _typed()
    throughput_samples_per_s: float = _typed()
    weak_scaling_efficiency: float = _typed()
    strong_scaling_efficiency: float = _typed()
    model_flops_per_gpu_per_step: float = _typed()
    hardware_flops_per_gpu_per_step: float = _typed()
    model_tflops_per_gpu: float = _typed()
    mfu: float = _typed()
    hfu: float = _typed()
    tokens_per_s_per_gpu: float = _typed()
    memory_per_gpu_bytes: float = _typed()
    memory: Memory = _typed(Memory.from_dict)
    fits_in_memory: bool = _typed()
    lr: Optional[float] = _typed()
    steps_to_target: Optional[float] = _typed()
    time_to_train_s: Optional[float] = _typed()
    gpu_hours: Optional[float] = _typed()
    cost_usd: Optional[float] = _typed()
    goodput: Optional[Dict[str, Any]] = _typed()  # failures and checkpoints (reliability)
    warnings: Tuple[str, ...] = _typed(tuple)
    raw: Dict[str, Any] = _raw()

    @property
    def throughput(self) -> float:
        """Samples per second of the whole job (throughput_samples_per_s)."""
        return self.throughput_samples_per_s


@dataclass(frozen=True)
class Prediction(_Document):
    """``ddpsim predict --format json``: every sweep point's prediction."""
    engine: str                    # "analytic" or "event" (context.engine)
    scenario: ScenarioInfo = _typed(ScenarioInfo.from_dict)
    results: Tuple[PointResult, ...] = _typed(_tuple_of(PointResult.from_dict))
    context: Dict[str, Any] = _typed()  # the tool, version, date, host, engine
    raw: Dict[str, Any] = _raw()

    @classmethod
    def _derived(cls, doc):
        return {"engine": (doc.get("context") or {}).get("engine")}


@dataclass(frozen=True)
class PlanPoint(_Document):
    """A configuration the planner weighed (the chosen one or a Pareto point)."""
    gpus: int = _typed()
    nodes: int = _typed()
    per_gpu_batch: int = _typed()
    grad_accumulation: int = _typed()
    bucket_cap_mb: float = _typed()
    comm_hook: str = _typed()
    strategy: str = _typed()
    activation_checkpointing: Any = _typed()  # false, or the checkpointing mode
    global_batch: int = _typed()
    lr: Optional[float] = _typed()
    step_time_s: float = _typed()
    throughput_samples_per_s: float = _typed()
    steps_to_target: Optional[float] = _typed()
    time_to_train_s: Optional[float] = _typed()
    gpu_hours: Optional[float] = _typed()
    cost_usd: Optional[float] = _typed()
    ettr: Optional[float] = _typed()
    time_per_million_samples_s: float = _typed()
    gpu_hours_per_million_samples: float = _typed()
    memory_per_gpu_bytes: float = _typed()
    limited_by: Optional[str] = _typed()
    step_time_sensitivity_pct: Dict[str, float] = _typed()
    system: Optional[str] = _typed()          # plan.hardware's system (preset name)
    gpu_hour_usd: Optional[float] = _typed()
    memory_headroom_bytes: Optional[float] = _typed()
    mfu: Optional[float] = _typed()
    tokens_per_s_per_gpu: Optional[float] = _typed()
    cost_per_million_samples: Optional[float] = _typed()
    cost_per_million_tokens: Optional[float] = _typed()
    uncertainty: Optional[Dict[str, Any]] = _typed()  # the error band of the option's class
    raw: Dict[str, Any] = _raw()

    @property
    def throughput(self) -> float:
        """Samples per second of the whole job (throughput_samples_per_s)."""
        return self.throughput_samples_per_s


@dataclass(frozen=True)
class Plan(_Document):
    """``ddpsim plan --format json``: the configuration chosen and the trade-offs around it.

    Typed attributes come from the document's ``plan`` object (``extra`` lists its untyped keys,
    e.g. ``systems``); ``scenario`` and ``context`` from the document's own blocks.
    """
    _section = "plan"
    chosen: Optional[PlanPoint] = _typed(PlanPoint.from_dict)  # None: nothing feasible
    pareto: Tuple[PlanPoint, ...] = _typed(_tuple_of(PlanPoint.from_dict))
    candidates: int = _typed()
    feasible: int = _typed()
    rejected: Dict[str, int] = _typed()   # candidates rejected, by reason
    dominated: int = _typed()
    objective: str = _typed()
    mode: str = _typed()                  # "time_to_train" or "throughput"
    constraints: Dict[str, Any] = _typed()
    warnings: Tuple[str, ...] = _typed(tuple)
    none_feasible_reason: Optional[str] = _typed()
    compares: Optional[str] = _typed()    # "cost" (every system priced) or "gpu_hours"
    systems: Tuple[Dict[str, Any], ...] = _typed(tuple)  # each system's best option
    nearest: Optional[PlanPoint] = _typed(PlanPoint.from_dict)  # nothing feasible: the closest
    nearest_reason: Optional[str] = _typed()
    scenario: ScenarioInfo = field(default=None)
    context: Dict[str, Any] = field(default=None)
    raw: Dict[str, Any] = _raw()

    @classmethod
    def _derived(cls, doc):
        return {"scenario": ScenarioInfo.from_dict(doc.get("scenario") or {}),
                "context": doc.get("context")}


@dataclass(frozen=True)
class CollectiveRow(_Document):
    """One size of a collective table (nccl-tests' columns, times in seconds)."""
    size_bytes: int = _typed()
    count: float = _typed()    # float elements (size / 4), as nccl-tests counts them
    type: str = _typed()
    algorithm: str = _typed()
    protocol: str = _typed()
    channels: int = _typed()
    chunk_bytes: float = _typed()
    time_s: float = _typed()
    algbw_gbytes_per_s: float = _typed()
    busbw_gbytes_per_s: float = _typed()
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class CollectiveTable(_Document):
    """``ddpsim collective``: one collective's modelled cost at every size."""
    op: str = _typed()
    gpus: int = _typed()
    nodes: int = _typed()
    gpu: str = _typed()
    hardware: str = _typed()
    nccl_version: str = _typed()
    gpus_per_process: int = _typed()
    cuda_graphs: bool = _typed()
    algorithm: str = _typed()   # as requested ("auto": NCCL's choice, per row)
    protocol: str = _typed()
    # what reading the hardware noticed: the NIC fitted to a multi-node collectives profile
    notes: Tuple[str, ...] = _typed(tuple)
    rows: Tuple[CollectiveRow, ...] = _typed(_tuple_of(CollectiveRow.from_dict))
    raw: Dict[str, Any] = _raw()
