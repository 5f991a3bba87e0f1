"""ExportError and the check that the running PyTorch has what the exporter uses.

Every failure of the exporter is an ExportError whose message is one line: the command
(`python3 -m ddpsim_torch`) prints it and exits with code 2, like the ddpsim CLI does for bad
input.
"""


class ExportError(Exception):
    """The model cannot be exported; str(e) is one line saying why."""

    def __init__(self, message):
        super().__init__(" ".join(str(message).split()))


# What the exporter calls, and the release that introduced it (torch's own release notes):
# per-module forward hooks (long before 1.0), saved_tensors_hooks (1.10) for the activation
# bytes autograd keeps, TorchFunctionMode (1.13's public torch.overrides) for the matrix
# products a module's forward calls.
MINIMUM_TORCH = (1, 13)


def torch_release(version):
    """(major, minor) of a torch version string such as "1.13.0a0+git" or "2.1.2"."""
    parts = version.split("+")[0].split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        raise ExportError(f"cannot read the PyTorch version {version!r}")


def require_torch_version(version):
    """Raises ExportError when the torch release `version` is older than MINIMUM_TORCH."""
    if torch_release(version) < MINIMUM_TORCH:
        raise ExportError(
            f"PyTorch {version} is too old: ddpsim_torch needs "
            f"{MINIMUM_TORCH[0]}.{MINIMUM_TORCH[1]} or newer (torch.overrides.TorchFunctionMode)")


def require_torch_features(torch):
    """Raises ExportError unless `torch` (the imported module) has every hook the exporter uses."""
    require_torch_version(torch.__version__)
    missing = [name for name, ok in (
        ("torch.overrides.TorchFunctionMode", hasattr(torch.overrides, "TorchFunctionMode")),
        ("torch.autograd.graph.saved_tensors_hooks",
         hasattr(torch.autograd.graph, "saved_tensors_hooks")),
    ) if not ok]
    if missing:
        raise ExportError(f"PyTorch {torch.__version__} lacks {', '.join(missing)}, "
                          "which ddpsim_torch needs")


def import_torch():
    """Imports torch, or raises ExportError saying how to install it."""
    try:
        import torch
    except ImportError as e:
        import sys
        raise ExportError(f"PyTorch is not importable by {sys.executable} ({e}); install it "
                          "(Debian: apt-get install python3-torch, then run /usr/bin/python3)")
    require_torch_features(torch)
    return torch
