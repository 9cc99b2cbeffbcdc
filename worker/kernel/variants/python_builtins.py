# attnprof-worker's built-in Python kernels, run in the interpreter it embeds beside
# python_runtime.py (python.cpp builds both into the worker):
#   flex[@MODE]      torch.nn.attention.flex_attention with the case's mask as a block mask and
#                    its score modifier as a score_mod, eagerly or under torch.compile;
#   hf:NAME[@MODE]   transformers' attention function NAME ("eager", "sdpa", "flex_attention",
#                    any name its AttentionInterface registry holds), called as a model calls it,
#                    with the mask transformers.masking_utils builds for the case.
# Each make_* returns what python.cpp calls per launch (q, k, v[, mask]) -> O [B, Hq, Sq, D], and
# the figures measured while making it. The masks and score modifiers are docs/scenarios.md's:
# positions as the workload's masks define them (prefill query i at i; decode queries the last
# Sq of each sequence's valid keys), so that eager and sdpa.math, which get them as tensors from
# the C++ workload, check these independent implementations.
import math
import statistics
import sys
import time
import warnings

import torch

from attnprof_python_runtime import UserError


class Unsupported(Exception):
    """The case is skipped with this reason (the kernel cannot express it, or is not installed)."""


_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


class _Case:
    """The fields of a case's JSON (harness/core/json.cpp) a built-in kernel reads."""

    def __init__(self, c):
        m = c["model"]
        self.heads, self.kv_heads, self.head_dim = m["heads"], m["kv_heads"], m["head_dim"]
        self.batch, self.q_len, self.kv_len = c["batch"], c["q_len"], c["kv_len"]
        self.mask = c["mask"]
        self.window = c.get("window", 0)
        self.prefix = c.get("prefix", 0)
        self.documents = c.get("documents", [])
        self.seq_lens = c.get("seq_lens", [])
        self.score_mod = c.get("score_mod", "")
        self.scale = c.get("scale") or self.head_dim ** -0.5
        self.device = torch.device(c["hardware"]["device"])
        self.dtype = _DTYPES[c["dtype"]]
        # Valid keys of each sequence, and the position of each sequence's first query.
        lens = [self.seq_lens[b % len(self.seq_lens)] if self.seq_lens else self.kv_len
                for b in range(self.batch)]
        self.lens = [min(n, self.kv_len) for n in lens]
        self.first = [0 if self.q_len == self.kv_len else n - self.q_len for n in self.lens]
        self.padded = any(n < self.kv_len for n in self.lens)
        self.uniform = len(set(self.first)) == 1  # every sequence's queries at one position

    def position(self):
        """pos(b, q_idx): the position of query q_idx of sequence b, for mask and score mods."""
        if self.uniform:
            first = self.first[0]
            return lambda b, q_idx: q_idx + first
        first = torch.tensor(self.first, device=self.device)
        return lambda b, q_idx: q_idx + first[b]

    def document_ids(self):
        """Each position's document, as attention-gym's document masks look it up."""
        return torch.repeat_interleave(torch.arange(len(self.documents), device=self.device),
                                       torch.tensor(self.documents, device=self.device))


def _softcap(text):
    return float(text.split(":", 1)[1])


def _rule(case):
    """The case's mask as mask_mod(b, h, q_idx, kv_idx) -> keep, over positions; None: no mask."""
    pos = case.position()
    lens = torch.tensor(case.lens, device=case.device)

    def valid(b, kv):
        return kv < lens[b]

    rules = []
    if case.padded:
        rules.append(lambda b, h, q, kv: valid(b, kv))
    if case.mask == "causal":
        rules.append(lambda b, h, q, kv: kv <= pos(b, q))
    elif case.mask == "sliding_window":
        w = case.window
        rules.append(lambda b, h, q, kv: (kv <= pos(b, q)) & (kv > pos(b, q) - w))
    elif case.mask == "prefix":
        p = case.prefix
        rules.append(lambda b, h, q, kv: (kv < p) | (kv <= pos(b, q)))
    elif case.mask == "document":
        doc = case.document_ids()
        rules.append(lambda b, h, q, kv: doc[kv] == doc[pos(b, q)])
    elif case.mask == "custom":
        raise Unsupported("a custom mask file is no mask_mod: flex takes the masks the scenario "
                          "language names (causal, padding, sliding_window, document, prefix)")
    if not rules:
        return None
    if len(rules) == 1:
        return rules[0]
    a, b_ = rules
    return lambda b, h, q, kv: a(b, h, q, kv) & b_(b, h, q, kv)


def _score_mod(case):
    """The case's score modifier as score_mod(score, b, h, q_idx, kv_idx); None for none."""
    mod = case.score_mod
    if not mod:
        return None
    pos = case.position()
    if mod == "alibi":
        slopes = torch.exp2(-8.0 * (torch.arange(case.heads, device=case.device) + 1) / case.heads)
        return lambda s, b, h, q, kv: s + slopes[h] * (kv - pos(b, q))
    if mod.startswith("softcap:"):
        cap = _softcap(mod)
        return lambda s, b, h, q, kv: cap * torch.tanh(s / cap)
    if mod == "rel_bias":
        return lambda s, b, h, q, kv: s + (pos(b, q) - kv)
    if mod == "head_bias":
        return lambda s, b, h, q, kv: s + 2 * h
    raise UserError(f"unknown score modifier \"{mod}\"")


def _bias(case):
    """An additive score modifier as a tensor [B, H, Sq, Sk] (transformers' position_bias)."""
    b = torch.arange(case.batch).view(-1, 1, 1, 1)
    h = torch.arange(case.heads).view(1, -1, 1, 1)
    q = torch.arange(case.q_len).view(1, 1, -1, 1) + torch.tensor(case.first).view(-1, 1, 1, 1)
    kv = torch.arange(case.kv_len).view(1, 1, 1, -1)
    s = torch.zeros(case.batch, case.heads, case.q_len, case.kv_len)
    mod = _score_mod(case)
    return mod(s, b, h, q, kv).to(device=case.device, dtype=case.dtype)


def _timed_builds(build):
    """(the result, the median milliseconds of its builds): one cold, then warm ones for up to a
    second (at least one), so the figure is a build's cost, not the first call's imports."""
    t0 = time.perf_counter()
    out = build()
    cold = time.perf_counter() - t0
    times = []
    deadline = time.perf_counter() + 1.0
    while not times or (len(times) < 5 and time.perf_counter() + cold < deadline):
        t0 = time.perf_counter()
        out = build()
        times.append(time.perf_counter() - t0)
    return out, 1e3 * statistics.median(times)


def _executed_pairs(block_mask, case):
    """Query-key pairs a block-sparse kernel computes under `block_mask`: every element of every
    block the mask does not skip (partial and full ones), summed over batch and query heads."""
    dense = block_mask.to_dense()  # [B or 1, H or 1, q blocks, kv blocks], 1 where computed
    bq, bk = block_mask.BLOCK_SIZE
    rows = torch.clamp(case.q_len - torch.arange(dense.shape[-2]) * bq, max=bq).to(torch.float64)
    cols = torch.clamp(case.kv_len - torch.arange(dense.shape[-1]) * bk, max=bk).to(torch.float64)
    per = (dense.cpu().to(torch.float64) * rows.view(-1, 1) * cols.view(1, -1)).sum(dim=(-2, -1))
    per = per.expand(case.batch, case.heads) if per.shape != (case.batch, case.heads) else per
    return float(per.sum())


def make_flex(case_json, compiled):
    """(flex's callable for the case, its figures, what runs): the block mask's build time, the
    share of query-key pairs in the blocks it does not skip (its density), and the FLOPs the
    kernel executes per call: every pair in eager mode (which scores them all and masks after,
    as torch warns), the unskipped blocks' when compiled (the block-sparse kernel)."""
    import json

    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    case = _Case(json.loads(case_json))
    mask_mod = _rule(case)
    score_mod = _score_mod(case)
    figures = {}
    block_mask = None
    if mask_mod is not None:
        batch = case.batch if case.padded or not case.uniform else None
        block_mask, ms = _timed_builds(lambda: create_block_mask(
            mask_mod, batch, None, case.q_len, case.kv_len, device=case.device))
        figures["block_mask.build_ms"] = ms
    dense = float(case.batch) * case.heads * case.q_len * case.kv_len
    pairs = dense
    if block_mask is not None:
        blocked = _executed_pairs(block_mask, case)
        figures["block_mask.density"] = blocked / dense
        if compiled:
            pairs = blocked
    figures["flops.executed"] = 4.0 * case.head_dim * pairs
    gqa = case.heads != case.kv_heads

    def flex(q, k, v, *mask):
        return flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask,
                              scale=case.scale, enable_gqa=gqa)

    if not compiled:
        # Eager FlexAttention says at every case that it is unfused: attnprof's name says so.
        warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile")
    return flex, figures, f"flex_attention of torch {torch.__version__}"


class _Module(torch.nn.Module):
    """What transformers' attention functions read of the attention module that calls them."""

    def __init__(self, config, groups, causal):
        super().__init__()
        self.config = config
        self.num_key_value_groups = groups
        self.is_causal = causal
        self.layer_idx = 0
        self.eval()


def _transformers():
    try:
        import transformers
    except ImportError as e:
        raise Unsupported(
            f"hf: kernels need transformers, which the Python attnprof-worker embeds "
            f"({sys.executable}) cannot import ({e}): {sys.executable} -m pip install "
            f"transformers, or build attnprof with ATTNPROF_PYTHON naming a python that has it")
    return transformers


def _hf_function(name):
    transformers = _transformers()
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    if name == "eager":
        # A decoder's own eager attention (repeat_kv for GQA, an additive mask), as Llama runs it:
        # "eager" is each model's function, not a registry entry.
        from transformers.models.llama.modeling_llama import eager_attention_forward
        return eager_attention_forward
    if name not in ALL_ATTENTION_FUNCTIONS.valid_keys():
        raise Unsupported(f"transformers {transformers.__version__} has no attention function "
                          f"\"{name}\" (it has: eager, "
                          f"{', '.join(sorted(ALL_ATTENTION_FUNCTIONS.valid_keys()))})")
    return ALL_ATTENTION_FUNCTIONS[name]


def make_hf(name, case_json):
    """transformers' attention function `name` for the case, called as its models call it."""
    import json

    case = _Case(json.loads(case_json))
    fn = _hf_function(name)
    transformers = sys.modules["transformers"]
    from transformers import MistralConfig
    from transformers import masking_utils as mu

    decode = case.q_len != case.kv_len
    if decode and case.padded:
        raise Unsupported(f"transformers puts a decode step's queries at the end of "
                          f"its KV cache; with seq_lens attnprof puts them at each sequence's end")
    if decode and case.mask == "sliding_window":
        raise Unsupported(f"a sliding-window decode step's mask comes from "
                          f"transformers' sliding cache, which keeps only the window")
    if case.mask == "custom":
        raise Unsupported("transformers' masks cannot express a custom mask file")
    mod = case.score_mod
    softcap = None
    bias = None
    if mod.startswith("softcap:"):
        if name != "flex_attention":
            raise Unsupported(f"transformers' {name} attention takes no softcap (its "
                              f"flex_attention and a model's own eager code do)")
        softcap = _softcap(mod)
    elif mod:
        if name == "eager":
            raise Unsupported(f"transformers' eager attention takes no position bias ({mod})")
        bias = _bias(case)
    config = MistralConfig(hidden_size=case.heads * case.head_dim,
                           num_attention_heads=case.heads, num_key_value_heads=case.kv_heads,
                           head_dim=case.head_dim, max_position_embeddings=case.kv_len,
                           sliding_window=case.window or None)
    config._attn_implementation = name
    config.num_hidden_layers = 1
    embeds = torch.empty(case.batch, case.q_len, config.hidden_size, dtype=case.dtype,
                         device=case.device)
    # A decode step's mask, as a model builds it: from its KV cache (the earlier keys, whose
    # values do not matter) and the queries' positions at the cache's end.
    cache = None
    positions = None
    if decode:
        from transformers import DynamicCache

        past = case.kv_len - case.q_len
        cache = DynamicCache(config=config)
        zeros = torch.zeros(case.batch, case.kv_heads, past, case.head_dim, dtype=case.dtype,
                            device=case.device)
        cache.update(zeros, zeros, 0)
        positions = torch.arange(past, case.kv_len, device=case.device).expand(case.batch, -1)
    mask_2d = None
    if case.padded:
        mask_2d = (torch.arange(case.kv_len).view(1, -1)
                   < torch.tensor(case.lens).view(-1, 1)).to(torch.long).to(case.device)
    causal = case.mask in ("causal", "sliding_window", "prefix")
    common = dict(config=config, inputs_embeds=embeds, attention_mask=mask_2d, cache=cache,
                  position_ids=positions)
    if case.mask == "sliding_window":
        mask = mu.create_sliding_window_causal_mask(**common)
    elif case.mask == "causal":
        mask = mu.create_causal_mask(**common)
    elif case.mask == "prefix":
        p = case.prefix
        mask = mu.create_causal_mask(or_mask_function=lambda b, h, q, kv: kv < p, **common)
    elif case.mask == "document":
        doc = case.document_ids()
        mask = mu.create_bidirectional_mask(
            and_mask_function=lambda b, h, q, kv: doc[q] == doc[kv], **common)
    else:
        mask = mu.create_bidirectional_mask(**common)
    module = _Module(config, case.heads // case.kv_heads, causal)
    extra = {}
    if softcap is not None:
        extra["softcap"] = softcap
    if bias is not None:
        extra["position_bias"] = bias

    def hf(q, k, v, *unused):
        out = fn(module, q, k, v, mask, scaling=case.scale, dropout=0.0, **extra)[0]
        return out.transpose(1, 2)  # [B, Sq, H, D], as the model reshapes it, back to BHSD

    return hf, {}, f"transformers {transformers.__version__} {name} attention"
