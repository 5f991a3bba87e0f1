"""The torch.nn.Module a ddpsim workload describes, built from ddpsim's own description.

ddpsim-validate writes the scenario's workload (model/workload/workload.hpp: every parameter tensor
with name, shape, layer and tied-to, every layer with its kind) to a JSON file beside the
point; build_model() builds the PyTorch module from it and check_matches() proves that the
module's named_parameters() are that list, in that order, with those shapes (tied tensors
once, as named_parameters() yields them), so DDP buckets exactly what ddpsim buckets.

Models:
  - "mlp" (model/builders/mlp.hpp): nn.Linear fc0, fc1, ... with the activation between them
    (GELU in its tanh form, as calibrate/exec/mlp.cpp computes it).
  - "gpt2" (model/builders/transformer.hpp, GPT2LMHeadModel from a config.json): embeddings,
    blocks of LayerNorm, causal self-attention (eager, or sdpa where torch has
    F.scaled_dot_product_attention) and a GELU MLP with Hugging Face's Conv1D
    weights ([in, out]), final LayerNorm and an lm_head tied to wte. The architecture's
    numbers that shapes do not carry (heads, activation, epsilon, dropouts) come from the same
    config.json ddpsim read.

  model, inputs_fn, loss_fn = build_model(workload, scenario_model)
  check_matches(model, workload)   # raises Unsupported naming the first difference
  model = move_to(model, torch.device("cuda", 0))   # parameters and the attention masks
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Unsupported(Exception):
    """A workload or scenario this runner cannot express (the runner exits 2)."""


def _gelu_tanh():
    # calibrate/exec/mlp.cpp computes GELU with its tanh approximation; so does GPT-2's
    # "gelu_new" (transformers/activations.py NewGELUActivation).
    return nn.GELU(approximate="tanh")


_ACTIVATIONS = {"relu": nn.ReLU, "gelu": _gelu_tanh, "tanh": nn.Tanh, "gelu_new": _gelu_tanh}


class Mlp(nn.Module):
    def __init__(self, widths, bias, activation):
        super().__init__()
        if activation != "none" and activation not in _ACTIVATIONS:
            raise Unsupported(f"MLP activation {activation!r} (relu, gelu, tanh or none)")
        self.depth = len(widths) - 1
        self.acts = nn.ModuleList()  # no parameters: named_parameters() is fc0, fc1, ...
        for i in range(self.depth):
            self.add_module(f"fc{i}", nn.Linear(widths[i], widths[i + 1], bias=bias))
            if i + 1 < self.depth and activation != "none":
                self.acts.append(_ACTIVATIONS[activation]())
            else:
                self.acts.append(nn.Identity())

    def forward(self, x):
        for i in range(self.depth):
            x = self.acts[i](getattr(self, f"fc{i}")(x))
        return x


class Conv1D(nn.Module):
    """transformers/pytorch_utils.py Conv1D: y = x W + b with W stored [in, out]."""

    def __init__(self, nx, nf):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        shape = x.shape[:-1] + (self.weight.shape[1],)
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(shape)


class Gpt2Attention(nn.Module):
    """transformers/models/gpt2/modeling_gpt2.py GPT2Attention: the eager path (_attn: the s x s
    scores materialised, masked, softmax, dropout) or, attention "sdpa", what Hugging Face's
    sdpa attention calls (transformers/integrations/sdpa_attention.py: F.scaled_dot_product_
    attention(q, k, v, dropout_p, is_causal=True), scale 1/sqrt(head dim); PyTorch picks its
    flash, memory-efficient or math kernel)."""

    def __init__(self, h, heads, seq, attn_pdrop, resid_pdrop, impl="eager"):
        super().__init__()
        self.heads, self.d = heads, h // heads
        self.impl, self.attn_pdrop = impl, attn_pdrop
        self.c_attn = Conv1D(h, 3 * h)
        self.c_proj = Conv1D(h, h)
        self.attn_dropout = nn.Dropout(attn_pdrop)
        self.resid_dropout = nn.Dropout(resid_pdrop)
        # Hugging Face registers this mask as a buffer; ddpsim's gpt2 workload has no buffers,
        # and a buffer would make DDP broadcast it every forward (broadcast_buffers): a plain
        # attribute keeps the module the workload ddpsim predicts.
        self.causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool)).view(1, 1, seq, seq) \
            if impl == "eager" else None

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.c_attn(x).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, self.d).transpose(1, 2) for t in (q, k, v))
        if self.impl == "sdpa":
            y = F.scaled_dot_product_attention(
                q, k, v, dropout_p=self.attn_pdrop if self.training else 0.0, is_causal=True)
            return self.resid_dropout(self.c_proj(y.transpose(1, 2).reshape(b, s, h)))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d)
        w = torch.where(self.causal[:, :, :s, :s], w, torch.finfo(w.dtype).min)
        w = self.attn_dropout(F.softmax(w, dim=-1))
        y = torch.matmul(w, v).transpose(1, 2).reshape(b, s, h)
        return self.resid_dropout(self.c_proj(y))


class Gpt2Mlp(nn.Module):
    def __init__(self, h, inner, act, resid_pdrop):
        super().__init__()
        self.c_fc = Conv1D(h, inner)
        self.c_proj = Conv1D(inner, h)
        self.act = _ACTIVATIONS[act]()
        self.dropout = nn.Dropout(resid_pdrop)

    def forward(self, x):
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class Gpt2Block(nn.Module):
    def __init__(self, h, heads, inner, seq, cfg, attention="eager"):
        super().__init__()
        eps = cfg.get("layer_norm_epsilon", 1e-5)
        self.ln_1 = nn.LayerNorm(h, eps=eps)
        self.attn = Gpt2Attention(h, heads, seq, cfg.get("attn_pdrop", 0.1),
                                  cfg.get("resid_pdrop", 0.1), attention)
        self.ln_2 = nn.LayerNorm(h, eps=eps)
        self.mlp = Gpt2Mlp(h, inner, cfg.get("activation_function", "gelu_new"),
                           cfg.get("resid_pdrop", 0.1))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt2LmHead(nn.Module):
    """GPT2LMHeadModel's parameters and forward, sized from the workload's tensor shapes."""

    def __init__(self, vocab, positions, h, layers, inner, seq, cfg, attention="eager"):
        super().__init__()
        heads = cfg["n_head"]
        if h % heads:
            raise Unsupported(f"n_embd {h} is not a multiple of n_head {heads}")
        t = nn.Module()
        t.wte = nn.Embedding(vocab, h)
        t.wpe = nn.Embedding(positions, h)
        for e in (t.wte, t.wpe):  # GPT2PreTrainedModel._init_weights: N(0, initializer_range)
            e.weight.data.normal_(std=cfg.get("initializer_range", 0.02))
        t.drop = nn.Dropout(cfg.get("embd_pdrop", 0.1))
        t.h = nn.ModuleList(Gpt2Block(h, heads, inner, seq, cfg, attention)
                            for _ in range(layers))
        t.ln_f = nn.LayerNorm(h, eps=cfg.get("layer_norm_epsilon", 1e-5))
        self.transformer = t
        self.lm_head = nn.Linear(h, vocab, bias=False)
        self.lm_head.weight = t.wte.weight  # tied: named_parameters() yields it once

    def forward(self, ids):
        t = self.transformer
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = t.drop(t.wte(ids) + t.wpe(pos))
        for block in t.h:
            x = block(x)
        return self.lm_head(t.ln_f(x))


def move_to(model, device):
    """model.to(device), and the causal masks that Gpt2Attention keeps as plain attributes
    (not buffers, which Module.to would move) with it."""
    model = model.to(device)
    for m in model.modules():
        if isinstance(m, Gpt2Attention) and m.causal is not None:
            m.causal = m.causal.to(device)
    return model


def _shapes(workload):
    return {t["name"]: t["shape"] for t in workload["tensors"]}


def _mlp(workload, spec):
    widths = [int(w) for w in spec["widths"]]
    model = Mlp(widths, spec.get("bias", True), spec.get("activation", "relu"))

    def inputs(batch, gen):
        return (torch.randn(batch, widths[0], generator=gen),
                torch.randn(batch, widths[-1], generator=gen))

    # calibrate/exec's default loss (mse_loss, mean over the batch's elements).
    return model, inputs, lambda out, target: F.mse_loss(out, target)


def _gpt2(workload, cfg, attention):
    if cfg.get("model_type") != "gpt2":
        raise Unsupported(f"hf_config model_type {cfg.get('model_type')!r}: the torch runner "
                          "builds gpt2 (GPT2LMHeadModel) transformers only")
    have = hasattr(F, "scaled_dot_product_attention")
    if attention not in ("eager", "sdpa") or (attention == "sdpa" and not have):
        raise Unsupported(
            f"model.attention {attention!r}: the torch runner runs GPT-2's eager attention, and "
            "sdpa (F.scaled_dot_product_attention, as Hugging Face's sdpa attention does) "
            + ("" if have else f"where torch has it (torch {torch.__version__} has not)")
            + '; set "model": {"attention": "eager"}')
    if not cfg.get("tie_word_embeddings", True):
        raise Unsupported("untied GPT-2 lm_head (tie_word_embeddings false)")
    s = _shapes(workload)
    vocab, h = s["transformer.wte.weight"]
    positions = s["transformer.wpe.weight"][0]
    layers = sum(1 for n in s if n.endswith(".ln_1.weight"))
    inner = s["transformer.h.0.mlp.c_fc.weight"][1] if layers else 4 * h
    seq = int(workload["seq_len"])
    model = Gpt2LmHead(vocab, positions, h, layers, inner, seq, cfg, attention)

    def inputs(batch, gen):
        ids = torch.randint(vocab, (batch, seq), generator=gen)
        return ids, ids

    def loss(logits, ids):
        # GPT2LMHeadModel: predict token t+1 from tokens <= t.
        return F.cross_entropy(logits[:, :-1].reshape(-1, vocab), ids[:, 1:].reshape(-1))

    return model, inputs, loss


def build_model(workload, source):
    """(module, inputs(batch, generator) -> (input, target), loss(output, target)).

    `source` is the workload's "source" block as ddpsim-validate writes it: {"mlp": {...}} or
    {"hf_config": {<config.json>}, "attention": "eager"}.
    """
    if "mlp" in source:
        return _mlp(workload, source["mlp"])
    if "hf_config" in source:
        return _gpt2(workload, source["hf_config"], source.get("attention", "sdpa"))
    raise Unsupported(f"model form {sorted(source)}: the torch runner builds \"mlp\" and "
                      "\"hf_config\" gpt2 models")


def check_matches(module, workload):
    """Raises Unsupported unless module.named_parameters() is the workload's untied tensors."""
    want = [(t["name"], list(t["shape"])) for t in workload["tensors"] if t["tied_to"] < 0]
    have = [(n, list(p.shape)) for n, p in module.named_parameters()]
    if want != have:
        for i, (w, h) in enumerate(zip(want + [None] * len(have), have + [None] * len(want))):
            if w != h:
                raise Unsupported(f"the PyTorch module differs from ddpsim's workload at "
                                  f"parameter {i}: ddpsim {w}, torch {h}")
    buffers = sum(b.numel() * b.element_size() for b in module.buffers())
    if buffers != workload.get("buffer_bytes", 0):
        raise Unsupported(f"the PyTorch module has {buffers} buffer bytes, ddpsim's workload "
                          f"{workload.get('buffer_bytes', 0)}")
