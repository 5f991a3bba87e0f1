"""export_workload: an nn.Module and example inputs -> a ddpsim model file."""

from . import capture as capture_module
from . import workload_file
from .errors import ExportError, import_torch


def _batch_of(example_inputs):
    for t in capture_module.tensors_in(example_inputs):
        if t.dim() > 0:
            return int(t.shape[0])
    raise ExportError("no example input tensor with a batch dimension; pass batch_size=")


def export_workload(module, example_inputs, path, *, batch_size=None, name=None,
                    example_kwargs=None, ops_from=None, optimizer="adamw"):
    """Runs `module` once on `example_inputs` (a tensor or a tuple of positional arguments) and
    writes the ddpsim model file to `path` (use it as {"model": {"file": path}} in a scenario).

    batch_size: samples in the example inputs (default: dim 0 of the first input tensor); the
    file holds per-sample work, which ddpsim scales by training.per_gpu_batch.
    ops_from: None, or (build_model, build_inputs), callables that build the same model and
    inputs again: they are called under a FakeTensorMode and every aten op of one training
    step (forward, backward, `optimizer` step: "adamw", "sgd" or None) is added to the file as
    config["ops"] (format ddpsim_torch/2, aten_capture.py; docs/torch-export.md).
    Returns the written document. Raises ExportError (one line) when torch is missing or too
    old, no parameter requires grad, the forward fails, or a parameter has a dtype ddpsim does
    not model; `path` is then left as it was.
    """
    torch = import_torch()
    if not isinstance(module, torch.nn.Module):
        raise ExportError(f"expected a torch.nn.Module, got {type(module).__name__}")
    if not any(p.requires_grad for p in module.parameters()):
        # DDP itself refuses such a module ("DistributedDataParallel is not needed when a
        # module doesn't have any parameter that requires a gradient").
        raise ExportError(f"{type(module).__name__} has no parameter that requires grad: "
                          "data-parallel training has nothing to reduce")
    args = tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (
        example_inputs,)
    kwargs = dict(example_kwargs or {})
    batch = int(batch_size) if batch_size is not None else _batch_of((args, kwargs))
    if batch < 1:
        raise ExportError(f"batch_size must be at least 1, got {batch}")
    captured = capture_module.run_once(torch, module, args, kwargs, batch)
    doc = workload_file.build_document(torch, module, captured, batch,
                                       name or type(module).__name__)
    if ops_from is not None:
        from .aten_capture import capture_training_step
        build_model, build_inputs = ops_from
        captured = capture_training_step(build_model, build_inputs, optimizer=optimizer,
                                         input_kwargs=example_kwargs)
        workload_file.add_ops(doc, captured, optimizer)
    workload_file.write_atomically(doc, path)
    return doc
