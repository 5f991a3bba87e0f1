"""ddpsim_torch: describe your own nn.Module to ddpsim (README.md, "Your own nn.Module").

    import ddpsim_torch
    ddpsim_torch.export_workload(model, torch.randn(32, 784), "my_model.json")
    # scenario: {"model": {"file": "my_model.json"}, ...}

or from a shell: python3 -m ddpsim_torch my_model.py my_model.json (see __main__.py).
torch is imported when a function needs it, so `import ddpsim_torch` works without it.
"""

from .errors import ExportError
from .export import export_workload

__all__ = ["ExportError", "export_workload"]
