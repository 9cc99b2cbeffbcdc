// kernel.h: the repository's attention kernel on plain float arrays, no LibTorch.
#pragma once

// q [B, Hq, Sq, D], k and v [B, Hkv, Sk, D], o like q; query head h reads kv head h / (Hq/Hkv).
void busy_attention(const float* q, const float* k, const float* v, float* o, int batch,
                    int heads, int kv_heads, int sq, int sk, int dim, bool causal, float scale);
