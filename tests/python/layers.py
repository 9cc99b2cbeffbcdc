# flex_kernels.sh's transformers layers, as py: layer-level kernels: transformers' own
# LlamaDecoderLayer and BertLayer given the harness's weights (docs/scenarios.md, "The block and
# layer convention"), to check that convention against the modules people run. Called with the
# layer convention's tensors; the weights are copied in when they change (the first call, the
# check's), so the timed calls are the module's forward alone. Rotary embeddings are the identity
# (cos 1, sin 0): the harness's layer has none.
import torch
from transformers import BertConfig, LlamaConfig
from transformers.models.bert.modeling_bert import BertLayer
from transformers.models.llama.modeling_llama import LlamaDecoderLayer


def _load(linear, weight):
    # The harness multiplies x @ W ([in, out]); nn.Linear holds [out, in].
    linear.weight.data.copy_(weight.t())


class Llama(torch.nn.Module):
    def __init__(self, hidden, heads, kv_heads, head_dim, mlp_hidden):
        super().__init__()
        config = LlamaConfig(hidden_size=hidden, num_attention_heads=heads,
                             num_key_value_heads=kv_heads, head_dim=head_dim,
                             intermediate_size=mlp_hidden, rms_norm_eps=1e-6)
        config._attn_implementation = "sdpa"
        self.layer = LlamaDecoderLayer(config, layer_idx=0)
        self.dims = (heads * head_dim, kv_heads * head_dim, head_dim)
        self.loaded = None

    def forward(self, x, wqkv, wo, k_cache, v_cache, norm1, norm2, w1, w2, w3):
        key = tuple(t.data_ptr() for t in (wqkv, wo, norm1, norm2, w1, w2, w3))
        if key != self.loaded:
            q, kv, d = self.dims
            a, m = self.layer.self_attn, self.layer.mlp
            _load(a.q_proj, wqkv[:, :q])
            _load(a.k_proj, wqkv[:, q:q + kv])
            _load(a.v_proj, wqkv[:, q + kv:])
            _load(a.o_proj, wo)
            _load(m.gate_proj, w1)
            _load(m.up_proj, w3)
            _load(m.down_proj, w2)
            self.layer.input_layernorm.weight.data.copy_(norm1)
            self.layer.post_attention_layernorm.weight.data.copy_(norm2)
            self.loaded = key
        s, d = x.shape[1], self.dims[2]
        identity = (torch.ones(1, s, d, dtype=x.dtype), torch.zeros(1, s, d, dtype=x.dtype))
        return self.layer(x, position_embeddings=identity)


class Bert(torch.nn.Module):
    """BertLayer: post-norm (LayerNorm after each residual), biases, GELU: not the harness's
    pre-norm layer, which the check says."""

    def __init__(self, hidden, heads, mlp_hidden):
        super().__init__()
        config = BertConfig(hidden_size=hidden, num_attention_heads=heads,
                            intermediate_size=mlp_hidden, hidden_act="gelu", layer_norm_eps=1e-5,
                            attention_probs_dropout_prob=0.0, hidden_dropout_prob=0.0)
        config._attn_implementation = "sdpa"
        self.layer = BertLayer(config).eval()
        self.hidden = hidden
        self.loaded = None

    def forward(self, x, wqkv, wo, k_cache, v_cache, norm1, norm2, w1, w2):
        key = tuple(t.data_ptr() for t in (wqkv, wo, w1, w2))
        if key != self.loaded:
            h = self.hidden
            a = self.layer.attention
            _load(a.self.query, wqkv[:, :h])
            _load(a.self.key, wqkv[:, h:2 * h])
            _load(a.self.value, wqkv[:, 2 * h:])
            _load(a.output.dense, wo)
            _load(self.layer.intermediate.dense, w1)
            _load(self.layer.output.dense, w2)
            for lin in (a.self.query, a.self.key, a.self.value, a.output.dense,
                        self.layer.intermediate.dense, self.layer.output.dense):
                lin.bias.data.zero_()
            self.loaded = key
        out = self.layer(x)
        return out[0] if isinstance(out, tuple) else out


# The same module under another name, to name as its own fp32 reference.
BertReference = Bert
