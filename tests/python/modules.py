"""Python attention modules the py: kernel tests call (tests/python/python_kernels.sh).

Each one is something a user brings: an eager attention module as transformers writes it, a
factory, a bare function, and the ways a user's code goes wrong."""
import math
import os
import time

import torch


def _expand(q, k, v):
    groups = q.shape[1] // k.shape[1]  # GQA: each key/value head serves `groups` query heads
    if groups > 1:
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
    return k, v


class EagerAttention(torch.nn.Module):
    """matmul, scale, mask, softmax, matmul, as transformers' eager_attention_forward."""

    def __init__(self, causal=False, scale=None):
        super().__init__()
        self.causal = causal
        self.scale = scale

    def forward(self, q, k, v, mask=None):
        k, v = _expand(q, k, v)
        scale = self.scale or 1.0 / math.sqrt(q.shape[-1])
        scores = torch.matmul(q, k.transpose(-1, -2)) * scale
        if self.causal and mask is None:
            keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
            scores = scores.masked_fill(~keep, float("-inf"))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
        return torch.matmul(torch.softmax(scores, dim=-1), v)


class TwiceAttention(EagerAttention):
    """The same output, computed twice: a planted slowdown."""

    def forward(self, q, k, v, mask=None):
        super().forward(q, k, v, mask)
        return super().forward(q, k, v, mask)


class BrokenGraph(EagerAttention):
    """Eager attention with a graph break between the scores and the rest: two graphs."""

    def forward(self, q, k, v, mask=None):
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        torch._dynamo.graph_break()
        return torch.matmul(torch.softmax(scores, dim=-1), v)


class Block(torch.nn.Module):
    """A whole attention block, as the block level calls it: (x, wqkv, wo, k_cache, v_cache) ->
    [B, Sq, hidden], a prefill (the cache is all new)."""

    def __init__(self, heads, head_dim):
        super().__init__()
        self.heads, self.head_dim = heads, head_dim

    def forward(self, x, wqkv, wo, k_cache, v_cache, mask=None):
        b, sq, h, d = x.shape[0], x.shape[1], self.heads, self.head_dim
        q, k, v = (t.view(b, sq, h, d).transpose(1, 2) for t in (x @ wqkv).split([h * d] * 3, -1))
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return o.transpose(1, 2).reshape(b, sq, h * d) @ wo


def make_attention(scale):
    """A factory: what a case calls is what it returns."""
    return EagerAttention(scale=scale)


def sdpa(q, k, v):
    """The attention function itself, no module around it."""
    return torch.nn.functional.scaled_dot_product_attention(q, k, v)


class WrongShape(torch.nn.Module):
    def forward(self, q, k, v):
        return q[..., :-1]


class WrongDtype(torch.nn.Module):
    def forward(self, q, k, v):
        return q.double()


class FailsLater(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, q, k, v):
        self.calls += 1
        if self.calls == 100:
            raise ValueError(f"call {self.calls} went wrong")
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


class Hangs(torch.nn.Module):
    def forward(self, q, k, v):
        while True:
            time.sleep(1)


class Exits(torch.nn.Module):
    def forward(self, q, k, v):
        os._exit(3)


class Crashes(torch.nn.Module):
    def forward(self, q, k, v):
        import ctypes
        return ctypes.string_at(0)


NOT_CALLABLE = 42
