"""The own-module test's attention (tests/aoti/own_module.sh): rotary position embeddings on q
and k, then causal softmax attention, the kind of module a team writes itself and packages with
`attnprof package`. bug=True plants a bug a user could make: the sign in the rotation flipped,
so the check against the module's fp32 twin must fail, naming the largest error and where.
TwoInputs has a forward a case cannot call: `attnprof package` refuses it at its line."""

import torch
import torch.nn.functional as F


class RopeAttention(torch.nn.Module):
    def __init__(self, base=10000.0, bug=False):
        super().__init__()
        self.base = base
        self.sign = 1.0 if bug else -1.0  # rotate_half is cat(-x2, x1)

    def rotate(self, x):
        s, d = x.shape[-2], x.shape[-1]
        inv = 1.0 / self.base ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)
        angle = torch.arange(s, device=x.device, dtype=torch.float32)[:, None] * inv[None, :]
        cos = torch.cat([angle.cos(), angle.cos()], -1).to(x.dtype)
        sin = torch.cat([angle.sin(), angle.sin()], -1).to(x.dtype)
        x1, x2 = x[..., : d // 2], x[..., d // 2 :]
        return x * cos + torch.cat([self.sign * x2, x1], -1) * sin

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(self.rotate(q), self.rotate(k), v, is_causal=True)


class TwoInputs(torch.nn.Module):
    def forward(self, q, k):
        return q @ k.transpose(-1, -2)
