"""Runs a module once, forward and backward, and records what ddpsim needs of each submodule.

Forward: a forward pre-hook and hook on every submodule keep a stack of the modules running;
a TorchFunctionMode sees every torch function the Python code calls (nn.Linear's F.linear, a
hand-written attention's torch.matmul, nn.MultiheadAttention's F.multi_head_attention_forward
as one call) and charges its matrix products (gemm_shapes.py) to the innermost module running;
saved_tensors_hooks sees every tensor autograd keeps for backward and charges its storage once,
to the module that saved it first (parameters, which autograd also saves, are not activations).
A leaf module that runs no product (a norm, an activation, pooling, dropout) is charged the
bytes it reads and writes (inputs + outputs), the memory-bound work ddpsim prices at HBM speed,
and one FLOP per output element (ddpsim's own builders count a ReLU so).

Backward (of the sum of the floating-point outputs): a hook on every parameter records the
order in which their gradients become ready. That is the order DDP's Reducer rebuilds its
buckets in after the first iteration (torch/csrc/distributed/c10d/reducer.cpp,
Reducer::rebuild_buckets, from rebuilt_params_ which autograd_hook appends to), and it is not
always the reverse of parameters(): nn.LayerNorm's weight gradient is ready before its bias's,
and a module registered before the modules it runs after is reduced late.

Nothing of the user's model changes: .grad of every parameter, every buffer (BatchNorm's running
statistics) and the RNG state are restored.
"""

import contextlib

from . import gemm_shapes
from .errors import ExportError


class ModuleRecord:
    def __init__(self):
        self.products = []            # gemm_shapes.product dicts at the example batch
        self.calls = 0                # forward calls (a module used twice runs twice)
        self.io_bytes = 0             # inputs + outputs of its forward calls
        self.out_elements = 0         # elements of its outputs (one FLOP each, element-wise)
        self.saved_bytes = 0          # storages autograd kept for backward, charged here
        self.unshaped = set()         # product-like calls gemm_shapes cannot shape


class Capture:
    def __init__(self):
        self.records = {}             # id(module) -> ModuleRecord
        self.grad_ready = []          # parameters in the order their gradients became ready
        self.saved_dtype_bytes = {}   # torch dtype -> saved bytes (the activation dtype)
        self.backward_ran = False


def tensors_in(value):
    """Every tensor in `value`, a tensor or nested lists, tuples and dicts of them."""
    import torch
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v)


def _nbytes(value):
    return sum(t.numel() * t.element_size() for t in tensors_in(value))


def _storage_key(t):
    """(address, bytes) of the storage under `t`: views of one storage are kept once."""
    try:
        storage = t.storage()
        return storage.data_ptr(), storage.nbytes()
    except (NotImplementedError, RuntimeError):  # sparse or otherwise storage-less tensors
        return ("tensor", id(t)), t.numel() * t.element_size()


def run_once(torch, module, args, kwargs, batch):
    """Runs module(*args, **kwargs) forward and backward once; returns a Capture."""
    capture = Capture()
    modules = [m for _, m in module.named_modules()]
    stack = []
    leaf = {id(m) for m in modules if next(m.children(), None) is None}
    seen_storages = {_storage_key(p) for p in module.parameters()}  # weights: not activations

    def record(m):
        return capture.records.setdefault(id(m), ModuleRecord())

    def pre_hook(m, inputs):
        stack.append(m)
        r = record(m)
        r.calls += 1
        if id(m) in leaf:
            r.io_bytes += _nbytes(inputs)

    def post_hook(m, inputs, output):
        stack.pop()
        if id(m) in leaf:
            record(m).io_bytes += _nbytes(output)
            record(m).out_elements += sum(t.numel() for t in tensors_in(output))

    class Products(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, f_args=(), f_kwargs=None):
            f_kwargs = f_kwargs or {}
            output = func(*f_args, **f_kwargs)
            if stack:
                name = getattr(func, "__name__", "")
                try:
                    found = gemm_shapes.products_of_call(torch, name, f_args, f_kwargs,
                                                         output, batch)
                except (AttributeError, IndexError, KeyError, TypeError, ValueError) as e:
                    raise ExportError(f"cannot read the shapes of {name} in module "
                                      f"{type(stack[-1]).__name__}: {e}")
                if found:
                    record(stack[-1]).products.extend(found)
                elif name in gemm_shapes.UNSHAPED_PRODUCTS:
                    record(stack[-1]).unshaped.add(name)
            return output

    def pack(t):
        key = _storage_key(t)
        if stack and key not in seen_storages:
            seen_storages.add(key)
            record(stack[-1]).saved_bytes += key[1]
            capture.saved_dtype_bytes[t.dtype] = capture.saved_dtype_bytes.get(t.dtype, 0) + key[1]
        return t

    params = [p for p in module.parameters() if p.requires_grad]
    handles = []
    stashed_grads = [p.grad for p in params]
    stashed_buffers = [(b, b.detach().clone()) for b in module.buffers()]
    with contextlib.ExitStack() as scope:
        cuda = sorted({p.device.index for p in params if p.is_cuda})
        scope.enter_context(torch.random.fork_rng(devices=cuda))
        for m in modules:
            handles.append(m.register_forward_pre_hook(pre_hook))
            handles.append(m.register_forward_hook(post_hook))
        for p in params:
            handles.append(p.register_hook(lambda g, p=p: capture.grad_ready.append(p)))
        scope.callback(lambda: [h.remove() for h in handles])
        try:
            with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                with Products():
                    output = module(*args, **kwargs)
            loss = [t.float().sum() for t in tensors_in(output)
                    if t.requires_grad and t.is_floating_point()]
            if loss:
                for p in params:
                    p.grad = None
                torch.stack(loss).sum().backward()
                capture.backward_ran = True
        except ExportError:
            raise
        except Exception as e:  # the user's forward or backward failed: say so in one line
            raise ExportError(f"running the module once failed: {type(e).__name__}: {e}")
        finally:
            for p, g in zip(params, stashed_grads):
                p.grad = g
            with torch.no_grad():
                for b, saved in stashed_buffers:
                    b.copy_(saved)
    return capture
