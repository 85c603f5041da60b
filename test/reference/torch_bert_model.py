"""Hugging Face's eager BERT, module for module (parameter names identical to HF checkpoints):
BertModel, BertForSequenceClassification, and the custom heads bertc's [[head.layers]] tests
build (parameters head.<name>.*). torch_bert.py trains them."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class BertEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids, token_type_ids):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        # HF's summation order: (word + token_type) + position.
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        embeddings = embeddings + self.position_embeddings(positions)
        return self.dropout(self.LayerNorm(embeddings))


class BertSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)

    def split_heads(self, x):
        """(B, S, hidden) -> (B, heads, S, head_dim)"""
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, hidden, additive_mask):
        query, key, value = (self.split_heads(proj(hidden)) for proj in (self.query, self.key, self.value))
        scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = self.dropout(torch.softmax(scores + additive_mask, dim=-1))
        context = torch.matmul(probs, value).permute(0, 2, 1, 3).contiguous()
        return context.view(hidden.shape)


class BertSelfOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden, residual):
        return self.LayerNorm(self.dropout(self.dense(hidden)) + residual)


class BertAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSelfOutput(config)

    def forward(self, hidden, additive_mask):
        return self.output(self.self(hidden, additive_mask), hidden)


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)

    def forward(self, hidden):
        return F.gelu(self.dense(hidden))  # exact erf GELU


class BertOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.intermediate_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden, residual):
        return self.LayerNorm(self.dropout(self.dense(hidden)) + residual)


class BertLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden, additive_mask):
        attention_output = self.attention(hidden, additive_mask)
        return self.output(self.intermediate(attention_output), attention_output)


class BertEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))


class BertPooler(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden):
        return torch.tanh(self.dense(hidden[:, 0]))


class BertModel(nn.Module):
    """The pooler's output, or without a pooler (add_pooling_layer=False) the last hidden states."""
    def __init__(self, config, pooler=True):
        super().__init__()
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if pooler else None

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.hidden_states(input_ids, attention_mask, token_type_ids)[-1]
        return self.pooler(hidden) if self.pooler else hidden

    def hidden_states(self, input_ids, attention_mask, token_type_ids):
        """HF's output_hidden_states: the embeddings' output, then each layer's."""
        states = [self.embeddings(input_ids, token_type_ids)]
        # HF's extended mask: 0 where attended, finfo.min where padded, broadcast over heads and queries.
        dtype = states[0].dtype
        additive_mask = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
        for layer in self.encoder.layer:
            states.append(layer(states[-1], additive_mask))
        return states


class BertForSequenceClassification(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)
        dropout = config.hidden_dropout_prob if config.classifier_dropout is None else config.classifier_dropout
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask, token_type_ids):
        """Logits (B, num_labels)."""
        return self.classifier(self.dropout(self.bert(input_ids, attention_mask, token_type_ids)))


class BertForTransformHead(nn.Module):
    """A custom head as BertPredictionHeadTransform's, over [CLS] (or the real tokens' mean)
    without the pooler: dense, GELU (or its tanh approximation, or ReLU), LayerNorm, then the
    labels' projection (bertc's [[head.layers]] select_token or mean, linear "dense", gelu,
    gelu_tanh or relu, layernorm "norm", linear "out"; parameters head.<name>.*)."""
    def __init__(self, config, width, activation, pooling):
        super().__init__()
        self.activation = {"gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
                           "relu": F.relu}[activation]
        self.pooling = pooling
        self.bert = BertModel(config, pooler=False)
        self.head = nn.ModuleDict({
            "dense": nn.Linear(config.hidden_size, width),
            "norm": nn.LayerNorm(width, eps=config.layer_norm_eps),
            "out": nn.Linear(width, config.num_labels),
        })

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.bert(input_ids, attention_mask, token_type_ids)
        pooled = mean_pool(hidden, attention_mask) if self.pooling == "mean" else hidden[:, 0]
        return self.head["out"](self.head["norm"](self.activation(self.head["dense"](pooled))))


def mean_pool(hidden, attention_mask):
    """The mean of each row's real tokens, as sentence-transformers' mean pooling."""
    mask = attention_mask[..., None].to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)


def max_pool(hidden, attention_mask):
    """The maximum of each row's real tokens, as sentence-transformers' max pooling."""
    return hidden.masked_fill(attention_mask[..., None] == 0, float("-inf")).max(1).values


class BertForPoolingHead(nn.Module):
    """A custom head that reads the encoder's output three ways (test/e2e/Inputs/pooling-head.toml):
    [CLS], the mean and the maximum of the real tokens side by side, features [start, end) of
    them, a dense layer with its tanh added back, then the labels' projection (bertc's
    select_token, mean, max, concat, slice, linear "dense", tanh, add, linear "out")."""
    def __init__(self, config, width, features):
        super().__init__()
        self.features = slice(*features)
        self.bert = BertModel(config, pooler=False)
        self.head = nn.ModuleDict({
            "dense": nn.Linear(features[1] - features[0], width),
            "out": nn.Linear(width, config.num_labels),
        })

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.bert(input_ids, attention_mask, token_type_ids)
        pooled = torch.cat([hidden[:, 0], mean_pool(hidden, attention_mask),
                            max_pool(hidden, attention_mask)], -1)
        dense = self.head["dense"](pooled[:, self.features])
        return self.head["out"](dense + torch.tanh(dense))


class BertForLayersHead(nn.Module):
    """A custom head over the [CLS] token of the first `states` hidden states (0: every one;
    test/e2e/Inputs/layers-head.toml): the embeddings' and each layer's side by side, then the
    labels' projection (bertc's select_token of "embeddings" and "encoder.layer.N", concat,
    linear "out"). Layers past those states run but reach no loss: their grads stay None."""
    def __init__(self, config, states=0):
        super().__init__()
        self.bert = BertModel(config, pooler=False)
        self.states = states or config.num_hidden_layers + 1
        self.head = nn.ModuleDict(
            {"out": nn.Linear(self.states * config.hidden_size, config.num_labels)})

    def forward(self, input_ids, attention_mask, token_type_ids):
        states = self.bert.hidden_states(input_ids, attention_mask, token_type_ids)
        return self.head["out"](torch.cat([state[:, 0] for state in states[:self.states]], -1))
