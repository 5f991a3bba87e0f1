"""The matrix products a torch function call runs, from the shapes of its arguments.

A product is C[m, n] = A[m, k] @ B[k, n], `count` independent instances (2*m*n*k*count FLOPs),
and `batch_dim` names the extent that holds the micro-batch ("m", "count", or None when it does
not grow with the batch). The conventions are ddpsim's (model/workload/workload.hpp):
  linear(x, W)       m = rows of x (every leading dim), n = out_features, k = in_features
  convNd(x, W)       the im2col view (model/builders/cnn.cpp): per group, m = N * output
                     positions, n = C_out / groups, k = C_in / groups * kernel volume
  matmul/mm/bmm/...  the operands' last two dims; broadcast leading dims are `count`
  scaled_dot_product_attention  Q K^T and A V per leading index (torch 2.0+)
  multi_head_attention_forward (what nn.MultiheadAttention.forward calls,
                     torch/nn/functional.py in 1.13): the q/k/v projections (one packed
                     [3E, E] product when query, key and value are one tensor, as
                     F._in_projection_packed runs it), Q K^T and A V per head (bmm/baddbmm),
                     and the output projection.
a_grad / b_grad say whether autograd computes the gradient of each operand (the first layer's
input needs none), b_is_weight that B is a parameter (its gradient is a weight gradient).
"""

import math


def product(m, n, k, count, batch_dim, a_grad, b_grad, b_is_weight, name):
    return {"name": name, "m": int(m), "n": int(n), "k": int(k), "count": int(count),
            "batch_dim": batch_dim, "a_grad": bool(a_grad), "b_grad": bool(b_grad),
            "b_is_weight": bool(b_is_weight)}


def _is_param(torch, t):
    return isinstance(t, torch.nn.Parameter)


def linear(torch, x, weight, name="linear"):
    out_features, in_features = weight.shape
    rows = x.numel() // in_features
    return [product(rows, out_features, in_features, 1, "m", x.requires_grad,
                    weight.requires_grad, _is_param(torch, weight), name)]


def conv(torch, x, weight, groups, output, name="conv"):
    c_out = weight.shape[0]
    kernel_volume = math.prod(weight.shape[2:])
    batch = output.shape[0] if output.dim() == weight.dim() else 1
    positions = math.prod(output.shape[-(weight.dim() - 2):])
    return [product(batch * positions, c_out // groups, weight.shape[1] * kernel_volume, groups,
                    "m", x.requires_grad, weight.requires_grad, _is_param(torch, weight), name)]


def matmul(torch, a, b, batch, name="matmul"):
    """a @ b with torch.matmul's broadcasting; 1-D operands are a row / a column."""
    return [matmul_of_shapes(list(a.shape), list(b.shape), batch, a.requires_grad,
                             b.requires_grad, _is_param(torch, b), name)]


def matmul_of_shapes(a_shape, b_shape, batch, a_grad, b_grad, b_is_weight, name):
    a_2d = a_shape if len(a_shape) > 1 else [1] + a_shape
    b_2d = b_shape if len(b_shape) > 1 else b_shape + [1]
    m, k = a_2d[-2], a_2d[-1]
    n = b_2d[-1]
    leading = [max(x, y) for x, y in zip(_pad(a_2d[:-2], b_2d[:-2]), _pad(b_2d[:-2], a_2d[:-2]))]
    count = math.prod(leading) if leading else 1
    if leading and count % batch == 0:
        batch_dim = "count"
    elif m % batch == 0 and len(a_shape) > 1:
        batch_dim = "m"
    else:
        batch_dim = None
    return product(m, n, k, count, batch_dim, a_grad, b_grad, b_is_weight, name)


def _pad(dims, other):
    return [1] * (len(other) - len(dims)) + list(dims)


def multi_head_attention(torch, args, kwargs):
    """FLOP shapes of F.multi_head_attention_forward(query, key, value, embed_dim, num_heads,
    in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
    out_proj_bias, ..., use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight)
    (torch/nn/functional.py, 1.13). Inputs are (L, N, E) or unbatched (L, E)."""
    names = ["query", "key", "value", "embed_dim_to_check", "num_heads", "in_proj_weight",
             "in_proj_bias", "bias_k", "bias_v", "add_zero_attn", "dropout_p",
             "out_proj_weight", "out_proj_bias", "training", "key_padding_mask", "need_weights",
             "attn_mask", "use_separate_proj_weight", "q_proj_weight", "k_proj_weight",
             "v_proj_weight"]
    a = dict(zip(names, args))
    a.update({key: value for key, value in kwargs.items() if key in names})
    query, key, value = a["query"], a["key"], a["value"]
    heads = int(a["num_heads"])
    batched = query.dim() == 3
    n = query.shape[1] if batched else 1
    tgt_len, embed = query.shape[0], query.shape[-1]
    src_len = key.shape[0]
    head_dim = embed // heads
    projections = []
    if not a.get("use_separate_proj_weight", False):
        w = a["in_proj_weight"]
        if query is key and key is value:
            projections.append(product(tgt_len * n, 3 * embed, embed, 1, "m",
                                       query.requires_grad, w.requires_grad, True, "in_proj"))
        else:
            for label, x, rows in (("q_proj", query, tgt_len), ("k_proj", key, src_len),
                                   ("v_proj", value, src_len)):
                projections.append(product(rows * n, embed, x.shape[-1], 1, "m",
                                           x.requires_grad, w.requires_grad, True, label))
        weights_grad = w.requires_grad
    else:
        weights_grad = False
        for label, x, w, rows in (("q_proj", query, a["q_proj_weight"], tgt_len),
                                  ("k_proj", key, a["k_proj_weight"], src_len),
                                  ("v_proj", value, a["v_proj_weight"], src_len)):
            projections.append(product(rows * n, w.shape[0], w.shape[1], 1, "m",
                                       x.requires_grad, w.requires_grad, True, label))
            weights_grad = weights_grad or w.requires_grad
    if a.get("bias_k") is not None:
        src_len += 1
    if a.get("add_zero_attn"):
        src_len += 1
    attention_grad = weights_grad or query.requires_grad or key.requires_grad
    out_w = a["out_proj_weight"]
    return projections + [
        product(tgt_len, src_len, head_dim, n * heads, "count", attention_grad, attention_grad,
                False, "scores"),
        product(tgt_len, head_dim, src_len, n * heads, "count", attention_grad, attention_grad,
                False, "context"),
        product(tgt_len * n, out_w.shape[0], embed, 1, "m", True, out_w.requires_grad, True,
                "out_proj"),
    ]


def scaled_dot_product_attention(q, k, v, batch):
    """F.scaled_dot_product_attention(q, k, v) (torch 2.0 and later): q [..., L, E],
    k [..., S, E], v [..., S, Ev]; the scores Q K^T and the context A V, per leading index."""
    grad = q.requires_grad or k.requires_grad or v.requires_grad
    q_shape, k_shape, v_shape = list(q.shape), list(k.shape), list(v.shape)
    scores_shape = q_shape[:-1] + [k_shape[-2]]
    return [matmul_of_shapes(q_shape, k_shape[:-2] + [k_shape[-1], k_shape[-2]], batch, grad,
                             grad, False, "sdpa_scores"),
            matmul_of_shapes(scores_shape, v_shape, batch, grad, grad, False, "sdpa_context")]


def products_of_call(torch, name, args, kwargs, output, batch):
    """The products of one torch function call named `name`, or None when it runs none."""
    if name == "linear":
        return linear(torch, args[0], kwargs.get("weight", args[1] if len(args) > 1 else None))
    if name in ("conv1d", "conv2d", "conv3d"):
        groups = kwargs.get("groups", args[6] if len(args) > 6 else 1)
        weight = kwargs.get("weight", args[1] if len(args) > 1 else None)
        return conv(torch, args[0], weight, groups, output, name)
    if name in ("matmul", "__matmul__", "mm", "bmm"):
        return matmul(torch, args[0], args[1], batch, name)
    if name == "__rmatmul__":
        return matmul(torch, args[1], args[0], batch, "matmul")
    if name in ("addmm", "baddbmm"):
        return matmul(torch, args[1], args[2], batch, name)
    if name == "scaled_dot_product_attention":
        q, k, v = (kwargs.get(n, args[i] if len(args) > i else None)
                   for i, n in enumerate(("query", "key", "value")))
        return scaled_dot_product_attention(q, k, v, batch)
    if name == "multi_head_attention_forward":
        return multi_head_attention(torch, args, kwargs)
    return None


# Calls that run a matrix product this file cannot shape: named in the workload's notes.
UNSHAPED_PRODUCTS = ("einsum", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                     "lstm", "gru", "rnn_tanh", "rnn_relu",
                     "tensordot", "bilinear", "addbmm",
                     "chain_matmul", "linalg.multi_dot")
