import torch


def attention(q, k, v:
    return q
