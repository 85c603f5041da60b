"""Plain-PyTorch Llama / Mistral / Qwen2 causal LM, rebuilt from the published architecture
(transformers' modeling_llama.py and modeling_qwen2.py, eager attention): the module names
and parameter names are Hugging Face's, so its state dict is a LlamaForCausalLM's or a
Qwen2ForCausalLM's. Needs only torch.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def rope_inverse_frequencies(config):
    """transformers' ROPE_INIT_FUNCTIONS for rope_type default, linear and llama3 (fp32)."""
    dim = config.head_dim
    inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    scaling = config.rope_scaling or {}
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    if rope_type == "linear":
        inv_freq = inv_freq / scaling["factor"]
    elif rope_type == "llama3":
        factor = scaling["factor"]
        low_freq_factor, high_freq_factor = scaling["low_freq_factor"], scaling["high_freq_factor"]
        old_context_len = scaling["original_max_position_embeddings"]
        low_freq_wavelen = old_context_len / low_freq_factor
        high_freq_wavelen = old_context_len / high_freq_factor
        wavelen = 2 * math.pi / inv_freq
        inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
        is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
        inv_freq = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    elif rope_type != "default":
        raise ValueError(f"rope_type {rope_type} is not supported")
    return inv_freq


class RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotary_cos_sin(inv_freq, position_ids, dtype):
    """LlamaRotaryEmbedding.forward: fp32 angles, cos and sin in the activations' dtype."""
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    freqs = (inv_freq_expanded @ position_ids[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def repeat_kv(hidden_states, n_rep):
    batch, kv_heads, seq, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    expanded = hidden_states[:, :, None, :, :].expand(batch, kv_heads, n_rep, seq, head_dim)
    return expanded.reshape(batch, kv_heads * n_rep, seq, head_dim)


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = (config.num_attention_heads,
                                                    config.num_key_value_heads, config.head_dim)
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(config.hidden_size, self.heads * self.head_dim, bias=config.qkv_bias)
        self.k_proj = nn.Linear(config.hidden_size, self.kv_heads * self.head_dim, bias=config.qkv_bias)
        self.v_proj = nn.Linear(config.hidden_size, self.kv_heads * self.head_dim, bias=config.qkv_bias)
        self.o_proj = nn.Linear(self.heads * self.head_dim, config.hidden_size, bias=config.output_bias)

    def rotated_qkv(self, hidden_states, cos, sin):
        """q and k rotated, and v, as [batch, heads, seq, head_dim], k and v repeated over
        the query heads."""
        batch, seq, _ = hidden_states.shape
        shape = (batch, seq, -1, self.head_dim)
        q = self.q_proj(hidden_states).view(shape).transpose(1, 2)
        k = self.k_proj(hidden_states).view(shape).transpose(1, 2)
        v = self.v_proj(hidden_states).view(shape).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = repeat_kv(k, self.heads // self.kv_heads), repeat_kv(v, self.heads // self.kv_heads)
        return q, k, v

    def project_context(self, context):
        """o_proj of the attention's context [batch, heads, seq, head_dim]."""
        batch, _, seq, _ = context.shape
        return self.o_proj(context.transpose(1, 2).reshape(batch, seq, -1))

    def forward(self, hidden_states, cos, sin, mask_bias):
        q, k, v = self.rotated_qkv(hidden_states, cos, sin)
        weights = torch.matmul(q, k.transpose(2, 3)) * self.scaling + mask_bias
        weights = F.softmax(weights, dim=-1, dtype=torch.float32).to(q.dtype)
        return self.project_context(torch.matmul(weights, v))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        bias = config.mlp_bias
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=bias)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=bias)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=bias)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self_attn = Attention(config)
        self.mlp = MLP(config)
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)

    def forward(self, hidden_states, cos, sin, mask_bias):
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states), cos, sin,
                                                       mask_bias)
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, config.pad_token_id)
        self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.num_hidden_layers))
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.register_buffer("inv_freq", rope_inverse_frequencies(config), persistent=False)

    def forward(self, input_ids, attention_mask, position_ids):
        hidden_states = self.embed_tokens(input_ids)
        cos, sin = rotary_cos_sin(self.inv_freq, position_ids, hidden_states.dtype)
        seq = input_ids.shape[1]
        # The causal mask with the padding's keys masked too, as a bias of dtype min.
        causal = torch.ones(seq, seq, dtype=torch.bool, device=input_ids.device).tril()
        visible = causal[None, None, :, :] & attention_mask[:, None, None, :].bool()
        mask_bias = torch.zeros(visible.shape, dtype=hidden_states.dtype, device=visible.device)
        mask_bias.masked_fill_(~visible, torch.finfo(hidden_states.dtype).min)
        for layer in self.layers:
            hidden_states = layer(hidden_states, cos, sin, mask_bias)
        return self.norm(hidden_states)


class ForCausalLM(nn.Module):
    """LlamaForCausalLM / Qwen2ForCausalLM: the model and its LM head (tied or not)."""

    def __init__(self, config):
        super().__init__()
        self.model = Model(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids, attention_mask, position_ids):
        return self.lm_head(self.model(input_ids, attention_mask, position_ids))


def causal_lm_loss(logits, labels, num_items_in_batch):
    """transformers' ForCausalLMLoss: fp32 logits, labels shifted left (-100 last), summed
    and divided by the batch's target tokens."""
    logits = logits.float()
    shift_labels = F.pad(labels, (0, 1), value=-100)[..., 1:].contiguous()
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), shift_labels.view(-1),
                           ignore_index=-100, reduction="sum")
    return loss / num_items_in_batch


def init_weights(model, config):
    """LlamaPreTrainedModel._init_weights: normal(0, initializer_range) matrices and
    embeddings (the padding row zero), zero biases, RMSNorm weights one."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=config.initializer_range)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=config.initializer_range)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
