"""GPT-2 as Hugging Face transformers writes it (models/gpt2/modeling_gpt2.py, eager attention):
Conv1D linears (x @ W + b through torch.addmm, W stored [in, out]), LayerNorm, the tanh GELU
("gelu_new": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))), learned positions, a causal
mask applied with torch.where, dropout, and the LM head tied to the token embedding. The loss
is HF's: logits shifted by one token, cross-entropy. config(gradient_checkpointing=True) runs
each block under torch.utils.checkpoint (reentrant, as HF does).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIGS = {
    # Hugging Face config.json of gpt2 and gpt2-xl.
    "gpt2-124m": {"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12,
                  "n_head": 12},
    "gpt2-1.5b": {"vocab_size": 50257, "n_positions": 1024, "n_embd": 1600, "n_layer": 48,
                  "n_head": 25},
}


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                           (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, n = c["n_embd"], c["n_positions"]
        self.n_head = c["n_head"]
        self.head_dim = d // self.n_head
        self.split_size = d
        self.register_buffer("bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(
            1, 1, n, n), persistent=False)
        self.c_attn = Conv1D(3 * d, d)
        self.c_proj = Conv1D(d, d)
        self.attn_dropout = nn.Dropout(c["dropout"])
        self.resid_dropout = nn.Dropout(c["dropout"])

    def _split_heads(self, x):
        x = x.view(x.size()[:-1] + (self.n_head, self.head_dim))
        return x.permute(0, 2, 1, 3)

    def forward(self, x):
        query, key, value = self.c_attn(x).split(self.split_size, dim=2)
        query, key, value = (self._split_heads(t) for t in (query, key, value))
        w = torch.matmul(query, key.transpose(-1, -2))
        w = w / torch.full([], value.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
        q_len, k_len = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, k_len - q_len:k_len, :k_len]
        mask_value = torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device)
        w = torch.where(causal_mask, w.to(w.dtype), mask_value)
        w = nn.functional.softmax(w, dim=-1)
        w = w.type(value.dtype)
        w = self.attn_dropout(w)
        out = torch.matmul(w, value)
        out = out.permute(0, 2, 1, 3).contiguous()
        out = out.view(out.size()[:-2] + (self.n_head * self.head_dim,))
        return self.resid_dropout(self.c_proj(out))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["n_embd"]
        self.c_fc = Conv1D(4 * d, d)
        self.c_proj = Conv1D(d, 4 * d)
        self.act = NewGELU()
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, x):
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["n_embd"]
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.attn = Attention(c)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.mlp = MLP(c)

    def forward(self, x):
        x = self.attn(self.ln_1(x)) + x
        return x + self.mlp(self.ln_2(x))


class GPT2LMHeadModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.wpe = nn.Embedding(c["n_positions"], c["n_embd"])
        self.drop = nn.Dropout(c["dropout"])
        self.h = nn.ModuleList(Block(c) for _ in range(c["n_layer"]))
        self.ln_f = nn.LayerNorm(c["n_embd"], eps=1e-5)
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.lm_head.weight = self.wte.weight
        self.gradient_checkpointing = c.get("gradient_checkpointing", False)

    def forward(self, input_ids, labels):
        positions = torch.arange(0, input_ids.size(-1), dtype=torch.long,
                                 device=input_ids.device).unsqueeze(0)
        x = self.drop(self.wte(input_ids) + self.wpe(positions))
        for block in self.h:
            x = checkpoint(block, x) if self.gradient_checkpointing else block(x)
        logits = self.lm_head(self.ln_f(x))
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        return F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)),
                               shift_labels.view(-1))


def checkpoint(block, x):
    """torch.utils.checkpoint as HF's gradient checkpointing calls it (reentrant)."""
    import inspect
    import torch.utils.checkpoint as cp
    if "use_reentrant" in inspect.signature(cp.checkpoint).parameters:
        return cp.checkpoint(block, x, use_reentrant=True)
    return cp.checkpoint(block, x)


def config(name="gpt2-124m", **overrides):
    c = dict(CONFIGS[name], dropout=0.1)
    c.update(overrides)
    return c


def model(c):
    return GPT2LMHeadModel(c)


def inputs(c, batch, seq):
    ids = torch.randint(0, c["vocab_size"], (batch, seq))
    return ids, ids
