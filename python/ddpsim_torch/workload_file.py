"""The ddpsim model file of a captured module (builder "torch_export", docs/torch-export.md).

Tensors are every parameter in named_parameters() order (the order DDP's
_build_params_for_reducer walks, torch/nn/parallel/distributed.py:805-831 in 1.13: module by
module, each module's own parameters), with shape, dtype and owning module; a parameter that a
second module also holds (tied weights) is listed again there with "tied_to" the index of its
first listing, so it is counted and bucketed once. Parameters that do not require grad are
listed with "requires_grad": false (DDP leaves them out of its buckets).

Layers are the modules, in named_modules() order, that own parameters or buffers or did work in
the forward; extents are per sample: the extent that holds the batch (gemm_shapes.py's
batch_dim) divided by the example batch.
"""

import os

from .errors import ExportError
from .records import write_json_atomic

FORMAT = "ddpsim_torch/1"
# The same file with the aten ops of one training step (aten_capture.py) in config["ops"].
FORMAT_WITH_OPS = "ddpsim_torch/2"

_DTYPE_NAMES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int64": "int64"}


def dtype_name(torch, dtype):
    """ddpsim's name of a torch dtype ("fp32"...), or the torch name for dtypes ddpsim lacks."""
    short = str(dtype).replace("torch.", "")
    return _DTYPE_NAMES.get(short, short)


def _kind(torch, module):
    nn = torch.nn
    for classes, kind in (((nn.Linear,), "linear"), ((nn.modules.conv._ConvNd,), "conv"),
                          ((nn.MultiheadAttention,), "attention"),
                          ((nn.Embedding, nn.EmbeddingBag), "embedding"),
                          ((nn.LayerNorm, nn.GroupNorm, nn.modules.batchnorm._NormBase), "norm")):
        if isinstance(module, classes):
            return kind
    return type(module).__name__.lower()


def _per_sample(product, batch, notes, layer_name):
    """A product at the example batch -> per sample, or None (its FLOPs go to other_flops)."""
    p = dict(product)
    dim = p.pop("batch_dim")
    if dim is not None and p[dim] % batch == 0:
        p[dim] //= batch
        p["batch_dim"] = dim
        return p
    notes.append(f"{layer_name}: {p['name']} ({p['m']}x{p['n']}x{p['k']}, count {p['count']}) "
                 f"does not grow with the batch; its FLOPs are spread per sample")
    return None


def build_document(torch, module, capture, batch, name):
    tensors = []
    buffers = []
    layers = []
    notes = []
    first_listing = {}           # id(parameter) -> index in tensors
    for module_name, m in module.named_modules():
        own_params = [(n, p) for n, p in m._parameters.items() if p is not None]
        own_buffers = [(n, b) for n, b in m._buffers.items() if b is not None]
        record = capture.records.get(id(m))
        did_work = record is not None and (record.products or record.saved_bytes or (
            next(m.children(), None) is None and record.io_bytes))
        if not own_params and not own_buffers and not did_work:
            continue
        layer_index = len(layers)
        layer_name = module_name or "(root)"
        prefix = module_name + "." if module_name else ""
        for pname, p in own_params:
            if p.dtype.is_complex or dtype_name(torch, p.dtype) not in _DTYPE_NAMES.values():
                raise ExportError(f"parameter {prefix}{pname} has dtype {p.dtype}, which ddpsim "
                                  "does not model (fp32, fp16, bf16)")
            entry = {"name": prefix + pname, "module": layer_name, "layer": layer_index,
                     "shape": list(p.shape), "dtype": dtype_name(torch, p.dtype),
                     "requires_grad": bool(p.requires_grad)}
            if id(p) in first_listing:
                entry["tied_to"] = first_listing[id(p)]
            else:
                first_listing[id(p)] = len(tensors)
            tensors.append(entry)
        for bname, b in own_buffers:
            buffers.append({"name": prefix + bname, "layer": layer_index, "shape": list(b.shape),
                            "dtype": dtype_name(torch, b.dtype),
                            "bytes": b.numel() * b.element_size()})
        layer = {"name": layer_name, "module": type(m).__name__, "kind": _kind(torch, m),
                 "calls": record.calls if record else 0, "gemms": [],
                 "other_flops_per_sample": 0.0, "elementwise_bytes_per_sample": 0.0,
                 "elementwise_flops_per_sample": 0.0, "activation_bytes_per_sample": 0.0}
        if record:
            for product in record.products:
                p = _per_sample(product, batch, notes, layer_name)
                if p:
                    layer["gemms"].append(p)
                else:
                    layer["other_flops_per_sample"] += (2.0 * product["m"] * product["n"] *
                                                        product["k"] * product["count"] / batch)
            if not record.products and next(m.children(), None) is None:
                layer["elementwise_bytes_per_sample"] = record.io_bytes / batch
                layer["elementwise_flops_per_sample"] = record.out_elements / batch
            layer["activation_bytes_per_sample"] = record.saved_bytes / batch
            for call in sorted(record.unshaped):
                notes.append(f"{layer_name}: {call} runs products ddpsim_torch cannot shape; "
                             "their FLOPs are missing")
        layers.append(layer)

    trainable = [i for i, t in enumerate(tensors) if t["requires_grad"] and "tied_to" not in t]
    dtypes = sorted({tensors[i]["dtype"] for i in trainable})
    if len(dtypes) > 1:
        notes.append(f"trainable parameters mix dtypes ({', '.join(dtypes)}): DDP buckets each "
                     "dtype apart, ddpsim buckets them together in training.precision's dtype")
    ready = []
    index_of = {id(p): first_listing[id(p)] for p in module.parameters()}
    for p in capture.grad_ready:
        i = index_of.get(id(p))
        if i is not None and i not in ready:
            ready.append(i)
    if not capture.backward_ran:
        notes.append("no floating-point output requires grad, so no backward ran; ddpsim "
                     "buckets in reverse parameter order")
        ready = None
    elif sorted(ready) != trainable:
        notes.append("not every trainable parameter got a gradient in the backward of the "
                     "summed outputs; ddpsim buckets in reverse parameter order instead")
        ready = None
    saved = capture.saved_dtype_bytes
    activation_dtype = max(saved, key=saved.get) if saved else torch.float32
    activation_dtype = dtype_name(torch, activation_dtype)
    if activation_dtype not in ("fp32", "fp16", "bf16"):
        activation_dtype = "fp32"
    config = {
        "format": FORMAT,
        "torch_version": torch.__version__,
        "example_batch": batch,
        "activation_dtype": activation_dtype,
        "layers": layers,
        "tensors": tensors,
        "buffers": buffers,
    }
    if ready is not None:
        config["grad_ready_order"] = ready
    config["notes"] = notes
    return {
        "name": name,
        "description": f"{type(module).__name__} exported by ddpsim_torch.export_workload",
        "source": f"ddpsim_torch {FORMAT} from torch {torch.__version__}: "
                  f"{type(module).__module__}.{type(module).__qualname__}",
        "builder": "torch_export",
        "expected_params": sum(_numel(tensors[i]["shape"]) for i in trainable),
        "config": config,
    }


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def add_ops(doc, captured, optimizer):
    """Adds what aten_capture.capture_training_step returned (`captured`) to `doc`: the op
    records, their totals per phase, and the format that says they are there."""
    from .aten_capture import totals
    config = doc["config"]
    config["format"] = FORMAT_WITH_OPS
    doc["source"] = doc["source"].replace(FORMAT, FORMAT_WITH_OPS, 1)
    config["ops_capture"] = {"optimizer": optimizer or "none",
                             "parameters": captured["parameters"],
                             "seconds": round(captured["seconds"], 3),
                             "totals": totals(captured["ops"])}
    config["ops"] = captured["ops"]
    return doc


def write_atomically(doc, path):
    """Writes `doc` to `path` atomically (records.write_json_atomic), so the file is either the
    whole workload or untouched; ExportError naming the path when it cannot be written."""
    path = os.fspath(path)
    try:
        write_json_atomic(path, doc, indent=1)
    except OSError as e:
        raise ExportError(f"cannot write {path}: {e.strerror}")
