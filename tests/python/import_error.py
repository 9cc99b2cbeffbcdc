import torch
import attnprof_no_such_module  # not installed anywhere


class Attention(torch.nn.Module):
    pass
