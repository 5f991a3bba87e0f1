"""The BERT-base encoder as Hugging Face transformers writes it (models/bert/modeling_bert.py,
eager attention): word, position and token-type embeddings summed and layer-normed, then per
layer q/k/v linears with bias, scores / sqrt(head_dim) + the extended attention mask, softmax,
dropout, context, output dense + dropout + LayerNorm(x + residual), intermediate dense + GELU
(erf), output dense + dropout + LayerNorm(x + residual). The loss here is the sum of the last
hidden state (no task head), enough to run the encoder's backward.
"""

import math

import torch
import torch.nn as nn

CONFIGS = {
    # Hugging Face config.json of bert-base-uncased.
    "bert-base": {"vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
                  "num_attention_heads": 12, "intermediate_size": 3072,
                  "max_position_embeddings": 512, "type_vocab_size": 2},
}


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["hidden_size"]
        self.word_embeddings = nn.Embedding(c["vocab_size"], d)
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], d)
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], d)
        self.LayerNorm = nn.LayerNorm(d, eps=1e-12)
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, input_ids, token_type_ids):
        positions = torch.arange(input_ids.size(1), device=input_ids.device).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings(positions)
        return self.dropout(self.LayerNorm(x))


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        self.head_dim = d // self.heads
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.dropout = nn.Dropout(c["dropout"])

    def transpose_for_scores(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q = self.transpose_for_scores(self.query(x))
        k = self.transpose_for_scores(self.key(x))
        v = self.transpose_for_scores(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores + mask
        probs = self.dropout(nn.functional.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return context.view(context.size()[:-2] + (self.heads * self.head_dim,))


class AddNorm(nn.Module):
    """BertSelfOutput / BertOutput: dense, dropout, LayerNorm(x + residual)."""

    def __init__(self, d_in, d, c):
        super().__init__()
        self.dense = nn.Linear(d_in, d)
        self.dropout = nn.Dropout(c["dropout"])
        self.LayerNorm = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, residual):
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, f = c["hidden_size"], c["intermediate_size"]
        self.attention = SelfAttention(c)
        self.attention_output = AddNorm(d, d, c)
        self.intermediate = nn.Linear(d, f)
        self.act = nn.GELU()
        self.output = AddNorm(f, d, c)

    def forward(self, x, mask):
        a = self.attention_output(self.attention(x, mask), x)
        return self.output(self.act(self.intermediate(a)), a)


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = Embeddings(c)
        self.layer = nn.ModuleList(Layer(c) for _ in range(c["num_hidden_layers"]))

    def forward(self, input_ids, token_type_ids, attention_mask):
        mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(
            torch.float32).min
        x = self.embeddings(input_ids, token_type_ids)
        for layer in self.layer:
            x = layer(x, mask)
        return x.sum()


def config(name="bert-base", **overrides):
    c = dict(CONFIGS[name], dropout=0.1)
    c.update(overrides)
    return c


def model(c):
    return BertEncoder(c)


def inputs(c, batch, seq):
    ids = torch.randint(0, c["vocab_size"], (batch, seq))
    return ids, torch.zeros_like(ids), torch.ones_like(ids)
