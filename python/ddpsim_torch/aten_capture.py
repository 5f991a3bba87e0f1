"""Every aten op of one training step (forward, backward, optimizer), without allocating memory.

    ops = capture_training_step(lambda: make_model(), lambda: make_inputs())
    # a list of op records (docs/torch-export.md, "The ops array")

The model and its inputs are built by the two callables inside a FakeTensorMode
(torch/_subclasses/fake_tensor.py), so parameters, activations, gradients and optimizer state
are FakeTensors: shapes, dtypes and strides are exact (each op's meta kernel), no storage is
allocated. A TorchDispatchMode (torch/utils/_python_dispatch.py) stacked above the fake mode
sees every op below autograd: the forward's, the backward formulas', the autograd engine's own
(the `add` that sums the gradients of a tensor used twice), and the optimizer's.

Attribution (which module an op belongs to):
- forward: module forward pre-hooks and hooks keep a stack; an op belongs to the innermost
  module running ("" outside every module, e.g. a loss computed by the caller).
- backward: when a module's forward returns, the autograd nodes its outputs were made by are
  walked back to its inputs' nodes (those are its boundary) and every node not yet claimed is
  claimed for it (innermost modules return first, so they claim first); the node's `metadata`
  dict keeps the module's name. A pre-hook and a hook on every claimed node keep a stack of
  the nodes running: an op inside a node belongs to the node's module. An op the engine runs
  between nodes (InputBuffer's accumulation `add` when a tensor fed two branches) is marked
  `"engine": true` and charged to the module of the node that finished last, whose gradient
  it adds. Limits: a tensor that reaches a module by a keyword argument (torch 1.13's hooks
  see positional ones only; torch 2.x's with_kwargs hooks see both) or by a closure is not a
  boundary, so the walk can claim nodes its caller made before it. Inside a reentrant
  checkpoint's node (which runs a nested backward), every op between the nested nodes counts
  as the engine's.
- recompute: a module forward that runs while backward is running (torch.utils.checkpoint
  recomputing its segment) is phase "recompute".
- optimizer: the module that owns the last parameter (or gradient) an op read: the
  single-tensor optimizers (torch 1.13's default) update one parameter at a time; a foreach
  op over every parameter is charged to the module of its last one.

Bytes and FLOPs (per op record) are the rules of docs/torch-export.md ("The ops array"):
views and allocations move nothing; other ops read each distinct input tensor once (the
elements it addresses: a broadcast dimension with stride 0 counts once) and write their
outputs; in-place ops read and write their destination, copy_ only writes it. Products count
2*m*n*k (per batch for bmm), convolutions the im2col product, fused attention 4*b*h*sq*sk*d
forward and twice that backward, element-wise and reduction kernels one FLOP per element of
their largest operand, data movement (copy, cast, cat, index, embedding) none.
"""

import contextlib
import inspect
import time

from .errors import ExportError, import_torch

PHASES = ("forward", "backward", "recompute", "optimizer")

_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64",
           "int64": "int64", "int32": "int32", "bool": "bool", "uint8": "uint8", "int8": "int8"}

# Ops whose outputs alias an input without a `Tensor(a)` annotation in their schema.
_VIEW_OPS = {"_unsafe_view", "_reshape_alias", "lift_fresh", "alias", "detach", "view"}
# Allocations: no byte is touched until something writes them.
_ALLOC_OPS = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
              "_record_function_enter", "_record_function_enter_new", "_record_function_exit"}
# Writes without reading a tensor.
_FILL_OPS = {"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros",
             "new_ones", "new_full", "fill_", "zero_", "scalar_tensor", "arange", "eye",
             "normal_", "uniform_", "bernoulli_", "randn", "rand", "randint", "randperm",
             "tensor", "lift"}
# Data movement: bytes, no arithmetic.
_COPY_OPS = {"copy_", "_to_copy", "clone", "contiguous", "cat", "stack", "index_select",
             "embedding", "gather", "index", "slice_backward", "select_backward",
             "expand_copy", "repeat", "constant_pad_nd", "split_with_sizes_copy", "t_copy",
             "as_strided_scatter", "slice_scatter", "select_scatter", "_unsafe_index",
             "masked_fill", "where", "flip", "roll", "transpose_copy", "permute_copy",
             "max_pool2d_with_indices_backward", "_local_scalar_dense"}
_REDUCTION_OPS = {"sum", "mean", "amax", "amin", "max", "min", "var", "std", "var_mean",
                  "std_mean", "norm", "linalg_vector_norm", "prod", "argmax", "argmin", "any",
                  "all", "logsumexp", "_foreach_norm",
                  "nll_loss_forward", "nll_loss_backward", "nll_loss2d_forward"}
_GEMM_OPS = {"mm", "addmm", "bmm", "baddbmm", "mv", "addmv", "dot"}
_ATTENTION_MARKS = ("scaled_dot_product", "flash_attention", "efficient_attention",
                    "cudnn_attention")
_CONV_OPS = {"convolution", "convolution_backward", "_convolution", "convolution_overrideable",
             "convolution_backward_overrideable", "mkldnn_convolution", "cudnn_convolution"}


def _dtype(dtype):
    short = str(dtype).replace("torch.", "")
    return _DTYPES.get(short, short)


def _addressed_elements(t):
    """Elements a kernel must touch to read `t`: a broadcast (stride-0) dimension counts once."""
    n = 1
    for size, stride in zip(t.shape, t.stride()):
        if size == 0:
            return 0
        if stride != 0:
            n *= size
    return n


def _describe(t):
    return {"shape": list(t.shape), "dtype": _dtype(t.dtype), "stride": list(t.stride())}


def _layout(t):
    """'T' when the last two dims of `t` are column-major (a transposed operand), else 'N'."""
    if t.dim() < 2:
        return "N"
    s = t.stride()
    if s[-1] != 1 and s[-2] == 1 and t.shape[-1] > 1:
        return "T"
    return "N"


def _gemm(name, tensors, out):
    """m, n, k, count, the operands' layouts and FLOPs of a matrix product op."""
    if name in ("addmm", "baddbmm", "addmv"):
        a, b = tensors[1], tensors[2]
    else:
        a, b = tensors[0], tensors[1]
    if name in ("mv", "addmv"):
        m, k, n, count = a.shape[0], a.shape[1], 1, 1
    elif name == "dot":
        m, k, n, count = 1, a.shape[0], 1, 1
    else:
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        count = a.shape[0] if a.dim() == 3 else 1
    g = {"m": int(m), "n": int(n), "k": int(k), "count": int(count),
         "a": _layout(a), "b": _layout(b)}
    return g, 2 * m * n * k * count


def _conv_flops(name, args, tensors, outputs):
    """im2col FLOPs of aten::convolution (2 * N * C_out * out positions * C_in/groups * kernel
    volume) and of convolution_backward (that once for each gradient its output_mask asks)."""
    if name == "convolution_backward":
        grad_out, x, w = args[0], args[1], args[2]
        mask = args[-1]
        one = 2 * grad_out.numel() * w.numel() // w.shape[0] * 1
        # grad_out.numel() = N * C_out * positions; w.numel() / C_out = C_in/groups * kvol
        return one * (int(bool(mask[0])) + int(bool(mask[1])))
    x, w = args[0], args[1]
    out = outputs[0]
    return 2 * out.numel() * (w.numel() // w.shape[0])


def _attention_flops(name, tensors):
    """4*b*h*sq*sk*d forward (Q K^T and A V); a backward op twice that."""
    q, k = tensors[0], tensors[1]
    if name.endswith("_backward"):
        q, k = tensors[1], tensors[2]  # (grad_out, query, key, value, ...)
    lead = 1
    for d in q.shape[:-2]:
        lead *= d
    fwd = 4 * lead * q.shape[-2] * k.shape[-2] * q.shape[-1]
    return 2 * fwd if name.endswith("_backward") else fwd


def _classify(name, func):
    if name in _GEMM_OPS:
        return "gemm"
    if name in _CONV_OPS:
        return "conv"
    if any(mark in name for mark in _ATTENTION_MARKS):
        return "attention"
    if name in _ALLOC_OPS:
        return "alloc"
    returns = func._schema.returns
    if name in _VIEW_OPS or (returns and all(r.alias_info is not None and not r.alias_info.is_write
                                             for r in returns)):
        return "view"
    if name in _FILL_OPS:
        return "fill"
    if name in _COPY_OPS:
        return "copy"
    if name in _REDUCTION_OPS:
        return "reduction"
    return "elementwise"


class _Recorder:
    """The dispatch mode's state: the op records and what attributes them."""

    def __init__(self, torch, module_names, owner_of_param):
        self.torch = torch
        self.ops = []
        self.phase = "forward"
        self.module_stack = []          # names of the modules whose forward is running
        self.node_stack = []            # [module, ran a nested node] of the nodes running
        self.last_node_module = ""
        self.module_names = module_names
        self.owner_of_param = owner_of_param   # id(parameter or its grad) -> module name
        self.last_param_module = ""

    def where(self, flat_inputs):
        """(phase, module, engine) of an op now."""
        if self.phase == "forward":
            return "forward", self.module_stack[-1] if self.module_stack else "", False
        if self.phase == "backward":
            if self.module_stack:
                return "recompute", self.module_stack[-1], False
            if self.node_stack and not self.node_stack[-1][1]:
                return "backward", self.node_stack[-1][0], False
            # Between nodes (the top node, if any, runs a nested backward: a reentrant
            # checkpoint's): the engine's own op.
            return "backward", self.last_node_module, True
        for t in flat_inputs:
            owner = self.owner_of_param.get(id(t))
            if owner is not None:
                self.last_param_module = owner
        return "optimizer", self.last_param_module, False

    def record(self, func, args, kwargs, out):
        torch = self.torch
        flat_in = [a for a in _flatten(torch, (args, kwargs)) if isinstance(a, torch.Tensor)]
        flat_out = [o for o in _flatten(torch, out) if isinstance(o, torch.Tensor)]
        name = func.overloadpacket.__name__
        phase, module, engine = self.where(flat_in)
        kind = _classify(name, func)
        rec = {"op": f"{func.namespace}::{name}" if hasattr(func, "namespace")
               else f"aten::{name}",
               "overload": func._overloadname, "phase": phase, "module": module, "kind": kind,
               "inputs": [_describe(t) for t in flat_in],
               "outputs": [_describe(t) for t in flat_out]}
        read, written, flops = _bytes_and_flops(name, kind, func, args, flat_in, flat_out)
        rec["bytes_read"] = read
        rec["bytes_written"] = written
        rec["flops"] = flops
        if kind == "gemm":
            rec["gemm"], _ = _gemm(name, flat_in, flat_out)
        if engine:
            rec["engine"] = True
        self.ops.append(rec)


def _flatten(torch, value):
    from torch.utils._pytree import tree_flatten
    return tree_flatten(value)[0]


def _bytes_and_flops(name, kind, func, args, flat_in, flat_out):
    if kind in ("view", "alloc"):
        return 0, 0, 0
    # In-place and out= ops: the outputs are (aliases of) written inputs.
    written_ids = set()
    for i, a in enumerate(func._schema.arguments):
        if a.alias_info is not None and a.alias_info.is_write and i < len(args):
            written_ids.add(id(args[i]))
    seen = set()
    read = 0
    for t in flat_in:
        if id(t) in seen:
            continue
        seen.add(id(t))
        if kind == "fill" or (name == "copy_" and id(t) in written_ids):
            continue
        read += _addressed_elements(t) * t.element_size()
    written = 0
    seen = set()
    for t in flat_out:
        if id(t) not in seen:
            seen.add(id(t))
            written += t.numel() * t.element_size()
    if kind == "gemm":
        flops = _gemm(name, flat_in, flat_out)[1]
    elif kind == "conv":
        flops = _conv_flops(name, args, flat_in, flat_out)
    elif kind == "attention":
        flops = _attention_flops(name, flat_in)
    elif name == "embedding_dense_backward":  # one add per gradient element scattered
        flops = flat_in[0].numel()
    elif kind in ("elementwise", "reduction"):
        flops = max([t.numel() for t in flat_in + flat_out] or [0])
    else:
        flops = 0
    return int(read), int(written), int(flops)


def _claim_nodes(torch, recorder, name, outputs, boundary, owner):
    """Claims for module `name` the autograd nodes behind `outputs` that no module it called
    claimed, walking back to its inputs' nodes (`boundary`, ids of node objects the caller
    holds alive); hooks each claimed node, and each parameter's AccumulateGrad node for the
    parameter's module. Nodes its submodules claimed are walked through, not claimed again."""
    pending = [t.grad_fn for t in _flatten(torch, outputs)
               if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    visited = {}                # id -> node, held so that no id is reused during the walk
    while pending:
        node = pending.pop()
        if id(node) in boundary or id(node) in visited:
            continue
        visited[id(node)] = node
        meta = node.metadata
        if "ddpsim_module" not in meta:
            if type(node).__name__ == "AccumulateGrad":
                meta["ddpsim_module"] = owner.get(id(node.variable), name)
                _hook_node(recorder, node, meta["ddpsim_module"])
                continue
            meta["ddpsim_module"] = name
            _hook_node(recorder, node, name)
        for next_node, _ in node.next_functions:
            if next_node is not None:
                pending.append(next_node)


def _hook_node(recorder, node, name):
    def pre(grad_outputs):
        recorder.node_stack.append([name, False])

    def post(grad_inputs, grad_outputs):
        if recorder.node_stack:
            recorder.node_stack.pop()
        if recorder.node_stack:
            recorder.node_stack[-1][1] = True
        recorder.last_node_module = name

    node.register_prehook(pre)
    node.register_hook(post)


def _make_dispatch_mode(torch, recorder):
    from torch.utils._python_dispatch import TorchDispatchMode

    class AtenRecorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            if getattr(func, "namespace", "aten") in ("aten", "prims"):
                recorder.record(func, args, kwargs, out)
            return out

    return AtenRecorder()


def _fake_mode(torch):
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode
    except ImportError as e:
        raise ExportError(f"PyTorch {torch.__version__} has no FakeTensorMode ({e}); the aten "
                          "capture needs torch 1.13 or newer")
    params = inspect.signature(FakeTensorMode.__init__).parameters
    kwargs = {}
    if "allow_non_fake_inputs" in params:
        kwargs["allow_non_fake_inputs"] = True
    return FakeTensorMode(**kwargs)


def _unhooked_step(optimizer):
    """optimizer.step without the profiler wrapper torch adds (Optimizer._hook_for_profile):
    its record_function cannot run under torch 1.13's FakeTensorMode."""
    step = type(optimizer).step
    if getattr(step, "hooked", False) and hasattr(step, "__wrapped__"):
        return lambda: step.__wrapped__(optimizer)
    return optimizer.step


def _loss_of(torch, output):
    tensors = [t for t in _flatten(torch, output)
               if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]
    if not tensors:
        raise ExportError("the model's output has no floating-point tensor that requires grad: "
                          "there is no backward to capture")
    if len(tensors) == 1 and tensors[0].dim() == 0:
        return tensors[0]
    return sum(t.sum() for t in tensors)


def capture_training_step(build_model, build_inputs, *, optimizer="adamw", lr=1e-4,
                          input_kwargs=None):
    """Builds the model (`build_model()`, an nn.Module) and its inputs (`build_inputs()`, one
    tensor or a tuple of positional inputs) under a FakeTensorMode, runs one forward, a
    backward of the loss (the output when it is a scalar, else the sum of its floating-point
    tensors) and one optimizer step ("adamw", "sgd" or None), and returns
    {"ops": [op records], "seconds": wall time, "modules": named_modules() names in order}.
    Raises ExportError (one line) when torch lacks what it needs or the model fails.
    """
    torch = import_torch()
    if optimizer not in ("adamw", "sgd", None):
        raise ExportError(f"unknown optimizer {optimizer!r} (adamw, sgd or none)")
    started = time.monotonic()
    fake = _fake_mode(torch)
    try:
        with fake:
            module = build_model()
            inputs = build_inputs()
    except ExportError:
        raise
    except Exception as e:
        raise ExportError(f"building the model or its inputs under FakeTensorMode failed: "
                          f"{type(e).__name__}: {e}")
    if not isinstance(module, torch.nn.Module):
        raise ExportError(f"expected a torch.nn.Module, got {type(module).__name__}")
    args = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    kwargs = dict(input_kwargs or {})
    names = {id(m): n for n, m in module.named_modules()}
    owner = {}
    for n, m in module.named_modules():
        for p in m._parameters.values():
            if p is not None:
                owner.setdefault(id(p), n)
    recorder = _Recorder(torch, names, owner)
    handles = []
    frames = []

    def pre_hook(m, hook_args, *rest):
        name = names[id(m)]
        recorder.module_stack.append(name)
        boundary = [t.grad_fn for t in _flatten(torch, (hook_args, rest))
                    if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        frames.append(boundary)

    def post_hook(m, hook_args, *rest):
        output = rest[-1]
        name = recorder.module_stack.pop()
        boundary = frames.pop()
        _claim_nodes(torch, recorder, name, output, {id(n) for n in boundary}, owner)

    with_kwargs = "with_kwargs" in inspect.signature(
        torch.nn.Module.register_forward_pre_hook).parameters
    for m in module.modules():
        if with_kwargs:
            handles.append(m.register_forward_pre_hook(pre_hook, with_kwargs=True))
            handles.append(m.register_forward_hook(post_hook, with_kwargs=True))
        else:
            handles.append(m.register_forward_pre_hook(pre_hook))
            handles.append(m.register_forward_hook(post_hook))
    params = [p for p in module.parameters() if p.requires_grad]
    if not params:
        raise ExportError(f"{type(module).__name__} has no parameter that requires grad")
    with fake:
        if optimizer == "adamw":
            opt = torch.optim.AdamW(params, lr=lr)
        elif optimizer == "sgd":
            opt = torch.optim.SGD(params, lr=lr, momentum=0.9)
        else:
            opt = None
    mode = _make_dispatch_mode(torch, recorder)
    try:
        with contextlib.ExitStack() as scope:
            scope.callback(lambda: [h.remove() for h in handles])
            scope.enter_context(fake)
            scope.enter_context(mode)
            with torch.enable_grad():
                output = module(*args, **kwargs)
                loss = _loss_of(torch, output)
                _claim_nodes(torch, recorder, "", loss, set(), owner)
            recorder.phase = "backward"
            loss.backward()
            recorder.phase = "optimizer"
            for p in params:
                if p.grad is not None:
                    owner[id(p.grad)] = owner.get(id(p), "")
            if opt is not None:
                with torch.no_grad():
                    _unhooked_step(opt)()
    except ExportError:
        raise
    except Exception as e:
        raise ExportError(f"capturing the training step failed in {recorder.phase}: "
                          f"{type(e).__name__}: {e}")
    return {"ops": recorder.ops, "seconds": time.monotonic() - started,
            "modules": [n for n, _ in module.named_modules()],
            "parameters": sum(p.numel() for p in params)}


def totals(ops, key=lambda op: op["phase"]):
    """{group: {"ops", "flops", "bytes"}} of op records grouped by `key` (default: phase)."""
    out = {}
    for op in ops:
        g = out.setdefault(key(op), {"ops": 0, "flops": 0, "bytes": 0})
        g["ops"] += 1
        g["flops"] += op["flops"]
        g["bytes"] += op["bytes_read"] + op["bytes_written"]
    return out
