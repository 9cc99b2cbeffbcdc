"""Attention as transformers writes it, eagerly: the modules of examples/python/attention.yaml.

EagerAttention is `eager_attention_forward` of transformers' BERT and Llama (matmul, scale,
mask, softmax, matmul), with Llama's `repeat_kv` for grouped-query attention and a causal mask
it builds itself where the case passes none (a causal prefill). attnprof calls it as
`py:attention.py:EagerAttention` (eagerly, or with @compile, @max-autotune), and `attnprof
package attention.py:EagerAttention` makes its AOTInductor package for `aoti:`."""
import math

import torch


def repeat_kv(hidden, n_rep):
    """[B, Hkv, S, D] -> [B, Hkv * n_rep, S, D], as transformers' Llama repeats keys and values."""
    if n_rep == 1:
        return hidden
    b, h, s, d = hidden.shape
    return hidden[:, :, None, :, :].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)


class EagerAttention(torch.nn.Module):
    def __init__(self, causal=False):
        super().__init__()
        self.causal = causal

    def forward(self, q, k, v, mask=None):
        n_rep = q.shape[1] // k.shape[1]
        k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
        weights = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(q.shape[-1])
        if mask is None and self.causal:
            sq, sk = q.shape[-2], k.shape[-2]
            mask = torch.ones(sq, sk, dtype=torch.bool, device=q.device).tril(sk - sq)
        if mask is not None:
            if mask.dtype == torch.bool:
                mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(
                    ~mask, torch.finfo(q.dtype).min)
            weights = weights + mask
        weights = torch.softmax(weights, dim=-1, dtype=torch.float32).to(q.dtype)
        return torch.matmul(weights, v)
