"""Plain-PyTorch GPT-2 causal LM, rebuilt from the published architecture (transformers'
modeling_gpt2.py, eager attention): the module and parameter names are Hugging Face's, so
its state dict is a GPT2LMHeadModel's. Needs only torch.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


class Conv1D(nn.Module):
    """transformers' Conv1D: a linear layer whose weight is stored [in, out]."""

    def __init__(self, out_features, in_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        shape = x.shape[:-1] + (self.weight.shape[1],)
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(shape)


def activation(name):
    """ACT2FN's GELUs: gelu_new and its equals (tanh approximation), or the exact one."""
    if name == "gelu":
        return F.gelu
    if name == "gelu_new":  # NewGELUActivation, written as transformers writes it
        return lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                                     * (x + 0.044715 * torch.pow(x, 3.0))))
    if name in ("gelu_pytorch_tanh", "gelu_fast"):
        return lambda x: F.gelu(x, approximate="tanh")
    raise ValueError(f"activation_function {name} is not supported")


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads, self.embed = config.n_head, config.n_embd
        self.head_dim = self.embed // self.heads
        self.c_attn = Conv1D(3 * self.embed, self.embed)
        self.c_proj = Conv1D(self.embed, self.embed)
        self.attn_dropout = nn.Dropout(config.attn_pdrop)
        self.resid_dropout = nn.Dropout(config.resid_pdrop)

    def forward(self, hidden_states, mask_bias):
        batch, seq, _ = hidden_states.shape
        query, key, value = self.c_attn(hidden_states).split(self.embed, dim=2)
        shape = (batch, seq, self.heads, self.head_dim)
        query, key, value = (t.view(shape).transpose(1, 2) for t in (query, key, value))
        weights = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask_bias
        weights = self.attn_dropout(F.softmax(weights, dim=-1).type(value.dtype))
        output = torch.matmul(weights, value).transpose(1, 2).reshape(batch, seq, self.embed)
        return self.resid_dropout(self.c_proj(output))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        inner = config.n_inner if config.n_inner is not None else 4 * config.n_embd
        self.c_fc = Conv1D(inner, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, inner)
        self.act = activation(config.activation_function)
        self.dropout = nn.Dropout(config.resid_pdrop)

    def forward(self, x):
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.attn = Attention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.mlp = MLP(config)

    def forward(self, hidden_states, mask_bias):
        hidden_states = hidden_states + self.attn(self.ln_1(hidden_states), mask_bias)
        return hidden_states + self.mlp(self.ln_2(hidden_states))


class Model(nn.Module):
    """GPT2Model: learned positions, the blocks, the final LayerNorm."""

    def __init__(self, config):
        super().__init__()
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.n_positions, config.n_embd)
        self.drop = nn.Dropout(config.embd_pdrop)
        self.h = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)

    def forward(self, input_ids, attention_mask, position_ids):
        hidden_states = self.drop(self.wte(input_ids) + self.wpe(position_ids))
        seq = input_ids.shape[1]
        # The causal mask with the padding's keys masked too, as a bias of dtype min.
        causal = torch.ones(seq, seq, dtype=torch.bool).tril()
        visible = causal[None, None, :, :] & attention_mask[:, None, None, :].bool()
        mask_bias = torch.zeros(visible.shape, dtype=hidden_states.dtype)
        mask_bias.masked_fill_(~visible, torch.finfo(hidden_states.dtype).min)
        for block in self.h:
            hidden_states = block(hidden_states, mask_bias)
        return self.ln_f(hidden_states)


class ForCausalLM(nn.Module):
    """GPT2LMHeadModel: the model and its LM head, tied to wte unless the config says not."""

    def __init__(self, config):
        super().__init__()
        self.transformer = Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.transformer.wte.weight

    def forward(self, input_ids, attention_mask, position_ids):
        return self.lm_head(self.transformer(input_ids, attention_mask, position_ids))


def init_weights(model, config):
    """GPT2PreTrainedModel._init_weights: normal(0, initializer_range) matrices and
    embeddings, the residual projections (c_proj) at initializer_range / sqrt(2 n_layer),
    zero biases, LayerNorms one and zero."""
    for name, module in model.named_modules():
        if isinstance(module, (Conv1D, nn.Linear, nn.Embedding)):
            module.weight.data.normal_(mean=0.0, std=config.initializer_range)
            if getattr(module, "bias", None) is not None:
                module.bias.data.zero_()
        if name.endswith("c_proj"):
            module.weight.data.normal_(mean=0.0,
                                       std=config.initializer_range / math.sqrt(2 * config.n_layer))
