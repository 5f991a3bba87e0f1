"""python3 -m ddpsim_torch MODEL.py OUT.json [--batch-size N] [--name NAME] [--ops]
                                            [--optimizer adamw|sgd|none]

MODEL.py defines `model()`, returning the nn.Module, and `example_inputs()`, returning one
input tensor or a tuple of positional inputs. Writes OUT.json (a ddpsim model file) and prints
one line. --ops adds every aten op of one training step (forward, backward, optimizer step),
captured with model() and example_inputs() called again under a FakeTensorMode
(aten_capture.py), as config["ops"] (format ddpsim_torch/2). On any failure (no torch, a torch too old, a forward that fails, a bad MODEL.py)
prints one line on stderr, exits with code 2 and leaves OUT.json as it was.
"""

import argparse
import importlib.util
import sys

from .errors import ExportError
from .export import export_workload


def _load(path):
    spec = importlib.util.spec_from_file_location("ddpsim_torch_user_model", path)
    if spec is None:
        raise ExportError(f"{path}: not a Python file")
    user = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(user)
    except ExportError:
        raise
    except Exception as e:  # the user's file: report it in one line
        raise ExportError(f"{path}: {type(e).__name__}: {e}")
    for fn in ("model", "example_inputs"):
        if not callable(getattr(user, fn, None)):
            raise ExportError(f"{path}: defines no function {fn}()")
    try:
        return user.model(), user.example_inputs(), (user.model, user.example_inputs)
    except Exception as e:
        raise ExportError(f"{path}: building the model or its inputs failed: "
                          f"{type(e).__name__}: {e}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m ddpsim_torch",
                                     description="Export an nn.Module as a ddpsim model file.")
    parser.add_argument("model_py", help="a Python file defining model() and example_inputs()")
    parser.add_argument("out", help="the model file to write (JSON)")
    parser.add_argument("--batch-size", type=int, help="samples in the example inputs "
                        "(default: dim 0 of the first input)")
    parser.add_argument("--name", help="the model's name (default: its class name)")
    parser.add_argument("--ops", action="store_true", help="add every aten op of one training "
                        "step (forward, backward, optimizer) to the file (format ddpsim_torch/2)")
    parser.add_argument("--optimizer", choices=("adamw", "sgd", "none"), default="adamw",
                        help="the optimizer whose step --ops captures (default adamw)")
    a = parser.parse_args(argv)
    try:
        from .errors import import_torch
        import_torch()
        module, inputs, builders = _load(a.model_py)
        doc = export_workload(module, inputs, a.out, batch_size=a.batch_size, name=a.name,
                              ops_from=builders if a.ops else None,
                              optimizer=None if a.optimizer == "none" else a.optimizer)
    except ExportError as e:
        print(f"ddpsim_torch: {e}", file=sys.stderr)
        return 2
    c = doc["config"]
    print(f"wrote {a.out}: {doc['expected_params']} parameters in {len(c['tensors'])} tensors, "
          f"{len(c['layers'])} layers, example batch {c['example_batch']}" +
          (f", {len(c['ops'])} aten ops" if "ops" in c else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
