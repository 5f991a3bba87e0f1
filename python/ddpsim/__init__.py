"""ddpsim: predict data-parallel training step time, memory and scaling from Python.

The functions call the same run API as the ddpsim CLI (README.md, "Python API")::

    import ddpsim
    pred = ddpsim.predict("scenarios/default.json")       # ddpsim predict --format json
    [(r.gpus, r.step_time_s, r.mfu) for r in pred.results]
    pred.to_dict()                                         # the CLI's JSON document
    plan = ddpsim.plan(pathlib.Path("scenarios/examples/plan-gpt2-xl.json"))
    plan.chosen.gpus, [p.cost_usd for p in plan.pareto]
    table = ddpsim.collective("dgx-a100", 16, min_bytes="8", max_bytes="8G")
    scenario = ddpsim.import_deepspeed("ds_config.json", "base.json", gpus=64)

Results are typed (ddpsim.results); errors are ddpsim.Error and its subclasses
(ddpsim.errors); importers' warnings are ddpsim.ScenarioWarning.
"""
import os as _os

from .errors import Error, ScenarioError, ScenarioWarning, UnsupportedError

try:
    from . import _core
except ImportError as _e:  # the source folder python/ddpsim/ on sys.path, not a build of it
    raise ImportError(
        f"ddpsim: the compiled core ddpsim._core is not importable next to {__file__} ({_e}): "
        "install the package (pip install . from the checkout) or build it "
        "(ninja -C build ddpsim_python) and put build/python on PYTHONPATH") from _e


def _use_packaged_presets():
    """Tells the core where this package's presets are: ddpsim/data in a wheel, else the folder
    _paths.py names (a build tree's scenarios/, an install's share/ddpsim). Without either the
    core searches as the CLI does (model/paths.hpp); $DDPSIM_DATA_DIR always wins."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    candidates = [_os.path.join(here, "data")]
    try:
        from ._paths import DATA_DIR
        candidates.append(_os.path.normpath(_os.path.join(here, DATA_DIR)))
    except ImportError:
        pass
    for folder in candidates:
        if all(_os.path.isdir(_os.path.join(folder, sub)) for sub in ("models", "hardware")):
            _core.set_packaged_data_dir(folder)
            return


_use_packaged_presets()

from ._api import (  # noqa: E402
    collective, data_dir, fill_hf_auto, import_deepspeed, import_torch, import_torchtitan,
    import_trace, plan, predict)
from .results import (  # noqa: E402
    Bucket, CollectiveRow, CollectiveTable, Memory, Plan, PlanPoint, PointResult, Prediction,
    ScenarioInfo)

__version__ = _core.__version__

__all__ = [
    "predict", "plan", "collective", "import_deepspeed", "import_torchtitan", "import_torch",
    "import_trace", "fill_hf_auto", "data_dir",
    "Prediction", "PointResult", "Memory", "Bucket", "ScenarioInfo", "Plan", "PlanPoint",
    "CollectiveTable", "CollectiveRow",
    "Error", "ScenarioError", "UnsupportedError", "ScenarioWarning",
]
