#!/usr/bin/python3
"""Export small transformers with dynamic batch and sequence axes, the way
HuggingFace's exporters write them, to ONNX with random weights.

Runs under Debian's interpreter (``/usr/bin/python3``) with Debian's
``python3-torch`` (1.13); no ``transformers`` library: each model is a small
torch module that reproduces the graph patterns the HuggingFace modelling
code produces when traced by ``torch.onnx.export``:

``bert_dyn``
    BERT: word + position + token-type embeddings; the position ids are a
    registered ``position_ids`` buffer sliced ``[:, :seq]`` and the token
    types a registered zero buffer sliced and expanded to ``(batch, seq)``
    (Shape/Gather/Slice/Expand on run-time sizes); the ``attention_mask``
    input becomes the additive extended mask
    ``(1.0 - mask[:, None, None, :].float()) * torch.finfo(float32).min``;
    post-norm layers (erf GELU), ``view``/``permute`` heads with sizes taken
    from the input (``x.size()[:-1] + (heads, head_dim)``); a tanh pooler
    on the first token. Outputs ``last_hidden_state`` and ``pooler_output``.
``distilbert_dyn``
    DistilBERT: position ids ``torch.arange(seq).unsqueeze(0).expand_as(ids)``
    (Range on a run-time size); the query is divided by sqrt(head_dim) before
    the product; the mask is ``(mask == 0).view(b, 1, 1, k).expand_as(scores)``
    and ``scores.masked_fill(mask, torch.tensor(finfo.min))`` (Equal, Reshape
    with a run-time shape, Expand, Where); ``view(b, -1, heads, dim)``.
``gpt2_dyn``
    GPT-2: ``Conv1D`` layers written as ``torch.addmm(bias, x.view(-1, n), w)``
    (Gemm with a dynamic first dimension) then ``view(size_out)``; position ids
    ``torch.arange(0, seq).unsqueeze(0).view(-1, seq)``; the causal mask
    sliced from a registered bool buffer ``bias[:, :, k - q:k, :k]`` (Slice
    with run-time starts and ends) and applied with
    ``torch.where(causal, w, torch.full([], finfo.min))``; the scores divided
    by ``torch.full([], v.size(-1) ** 0.5)``; the ``attention_mask`` input as
    ``(1.0 - mask.view(b, -1)[:, None, None, :]) * finfo.min``; ``gelu_new``
    (tanh form with ``torch.pow(x, 3.0)``); pre-norm; an LM head tied to the
    token embedding (MatMul with its transpose). Output ``logits``.
``t5_encoder_dyn``
    T5 encoder: RMS LayerNorm (``pow(2).mean(-1)``, ``rsqrt``), no score
    scaling, and a relative position bias computed in the graph from the
    sequence length: ``arange(q)[:, None]`` and ``arange(k)[None, :]``, their
    difference, ``(rel > 0).long() * buckets``, integer ``torch.abs``,
    ``torch.log`` of the float distance, ``.long()`` (Cast float -> int64),
    ``torch.min`` with ``full_like``, ``torch.where``, then an Embedding
    lookup (Gather) of the bias, ``permute([2, 0, 1]).unsqueeze(0)`` and the
    extended attention mask added to it. ReLU feed-forward. Output
    ``last_hidden_state``.

Every model has inputs ``input_ids`` and ``attention_mask`` (int64,
``[batch, sequence]``) and outputs with the same two leading axes, all
exported with ``dynamic_axes`` (``batch``, ``sequence``), after
``torch.manual_seed(0)``, in eval mode, with ``do_constant_folding=True``.
Configurations are small (hidden 32-64, 2 layers, vocabulary 100).

Example::

    /usr/bin/python3 test/models/amp_testmodels/export_dynamic.py \
        --out /tmp/amp-models/dynamic-opset17 --opset 17
"""

import argparse
import math
import os
import sys
import time
import warnings

import torch

import export_cache
from export_torch import load_manifest, save_manifest
from torch import nn

MIN_OPSET = 13
MAX_OPSET = 17  # Highest opset supported by the torch 1.13 TorchScript exporter.

VOCAB = 100
MAX_POSITIONS = 64  # longest sequence the position tables and causal mask allow
EXAMPLE_SHAPE = (2, 8)  # (batch, sequence) traced; both axes are exported dynamic

INPUT_NAMES = ("input_ids", "attention_mask")
DYNAMIC = {0: "batch", 1: "sequence"}

FLOAT_MIN = torch.finfo(torch.float32).min


# --------------------------------------------------------------------------
# BERT
# --------------------------------------------------------------------------


class BertEmbeddings(nn.Module):
    def __init__(self, hidden, type_vocab=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, hidden, padding_idx=0)
        self.position_embeddings = nn.Embedding(MAX_POSITIONS, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(MAX_POSITIONS).expand((1, -1)))
        self.register_buffer("token_type_ids", torch.zeros((1, MAX_POSITIONS), dtype=torch.long))

    def forward(self, input_ids):
        input_shape = input_ids.size()
        seq_length = input_shape[1]
        position_ids = self.position_ids[:, 0:seq_length]
        token_type_ids = self.token_type_ids[:, :seq_length].expand(input_shape[0], seq_length)
        embeddings = (self.word_embeddings(input_ids)
                      + self.token_type_embeddings(token_type_ids)
                      + self.position_embeddings(position_ids))
        return self.LayerNorm(embeddings)


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_size = hidden // heads
        self.all_head_size = hidden
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.heads, self.head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, extended_mask):
        query = self.transpose_for_scores(self.query(hidden_states))
        key = self.transpose_for_scores(self.key(hidden_states))
        value = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(query, key.transpose(-1, -2))
        scores = scores / math.sqrt(self.head_size)
        scores = scores + extended_mask
        probs = nn.functional.softmax(scores, dim=-1)
        context = torch.matmul(probs, value).permute(0, 2, 1, 3).contiguous()
        new_shape = context.size()[:-2] + (self.all_head_size,)
        return context.view(new_shape)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads)
        self.attention_output = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, hidden_states, extended_mask):
        attention = self.attention_output(self.attention(hidden_states, extended_mask))
        hidden_states = self.attention_norm(attention + hidden_states)
        intermediate = nn.functional.gelu(self.intermediate(hidden_states))
        return self.output_norm(self.output(intermediate) + hidden_states)


class BertModel(nn.Module):
    """BERT encoder with pooler; returns (last_hidden_state, pooler_output)."""

    def __init__(self, hidden=64, heads=4, layers=2, intermediate=128):
        super().__init__()
        self.embeddings = BertEmbeddings(hidden)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, intermediate)
                                    for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask):
        dtype = torch.float32
        extended = attention_mask[:, None, None, :].to(dtype=dtype)
        extended = (1.0 - extended) * torch.finfo(dtype).min
        hidden_states = self.embeddings(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states, extended)
        pooled = torch.tanh(self.pooler(hidden_states[:, 0]))
        return hidden_states, pooled


# --------------------------------------------------------------------------
# DistilBERT
# --------------------------------------------------------------------------


class DistilBertAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.n_heads = heads
        self.dim = dim
        self.q_lin = nn.Linear(dim, dim)
        self.k_lin = nn.Linear(dim, dim)
        self.v_lin = nn.Linear(dim, dim)
        self.out_lin = nn.Linear(dim, dim)

    def forward(self, query, key, value, mask):
        bs, q_length, dim = query.size()
        k_length = key.size(1)
        dim_per_head = self.dim // self.n_heads
        mask_reshp = (bs, 1, 1, k_length)

        def shape(x):
            return x.view(bs, -1, self.n_heads, dim_per_head).transpose(1, 2)

        def unshape(x):
            return x.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * dim_per_head)

        q = shape(self.q_lin(query))
        k = shape(self.k_lin(key))
        v = shape(self.v_lin(value))
        q = q / math.sqrt(dim_per_head)
        scores = torch.matmul(q, k.transpose(2, 3))
        mask = (mask == 0).view(mask_reshp).expand_as(scores)
        scores = scores.masked_fill(mask, torch.tensor(torch.finfo(scores.dtype).min))
        weights = nn.functional.softmax(scores, dim=-1)
        context = unshape(torch.matmul(weights, v))
        return self.out_lin(context)


class DistilBertLayer(nn.Module):
    def __init__(self, dim, heads, hidden_dim):
        super().__init__()
        self.attention = DistilBertAttention(dim, heads)
        self.sa_layer_norm = nn.LayerNorm(dim, eps=1e-12)
        self.lin1 = nn.Linear(dim, hidden_dim)
        self.lin2 = nn.Linear(hidden_dim, dim)
        self.output_layer_norm = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x, attn_mask):
        sa_output = self.sa_layer_norm(self.attention(x, x, x, attn_mask) + x)
        ffn = self.lin2(nn.functional.gelu(self.lin1(sa_output)))
        return self.output_layer_norm(ffn + sa_output)


class DistilBertModel(nn.Module):
    def __init__(self, dim=48, heads=4, layers=2, hidden_dim=96):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, dim, padding_idx=0)
        self.position_embeddings = nn.Embedding(MAX_POSITIONS, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.ModuleList(DistilBertLayer(dim, heads, hidden_dim)
                                    for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).expand_as(input_ids)
        x = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        x = self.LayerNorm(x)
        for layer in self.layers:
            x = layer(x, attention_mask)
        return x


# --------------------------------------------------------------------------
# GPT-2
# --------------------------------------------------------------------------


class Conv1D(nn.Module):
    """GPT-2's transposed linear layer: ``addmm(bias, x.view(-1, nx), weight)``."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)
        nn.init.normal_(self.bias, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Attention(nn.Module):
    def __init__(self, embed_dim, heads):
        super().__init__()
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((MAX_POSITIONS, MAX_POSITIONS), dtype=torch.bool)).view(
                1, 1, MAX_POSITIONS, MAX_POSITIONS))
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.num_heads = heads
        self.head_dim = embed_dim // heads
        self.c_attn = Conv1D(3 * embed_dim, embed_dim)
        self.c_proj = Conv1D(embed_dim, embed_dim)
        self.split_size = embed_dim

    def _split_heads(self, tensor):
        new_shape = tensor.size()[:-1] + (self.num_heads, self.head_dim)
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (self.num_heads * self.head_dim,)
        return tensor.view(new_shape)

    def _attn(self, query, key, value, attention_mask):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype,
                                device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, attention_mask):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query)
        key = self._split_heads(key)
        value = self._split_heads(value)
        attn_output = self._merge_heads(self._attn(query, key, value, attention_mask))
        return self.c_proj(attn_output)


class GPT2MLP(nn.Module):
    def __init__(self, intermediate, embed_dim):
        super().__init__()
        self.c_fc = Conv1D(intermediate, embed_dim)
        self.c_proj = Conv1D(embed_dim, intermediate)

    def forward(self, x):
        h = self.c_fc(x)
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                        * (h + 0.044715 * torch.pow(h, 3.0))))
        return self.c_proj(h)


class GPT2Block(nn.Module):
    def __init__(self, embed_dim, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(embed_dim, eps=1e-5)
        self.attn = GPT2Attention(embed_dim, heads)
        self.ln_2 = nn.LayerNorm(embed_dim, eps=1e-5)
        self.mlp = GPT2MLP(4 * embed_dim, embed_dim)

    def forward(self, hidden_states, attention_mask):
        hidden_states = hidden_states + self.attn(self.ln_1(hidden_states), attention_mask)
        return hidden_states + self.mlp(self.ln_2(hidden_states))


class GPT2LMHeadModel(nn.Module):
    def __init__(self, embed_dim=64, heads=4, layers=2):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, embed_dim)
        self.wpe = nn.Embedding(MAX_POSITIONS, embed_dim)
        nn.init.normal_(self.wte.weight, std=0.02)
        nn.init.normal_(self.wpe.weight, std=0.01)
        self.h = nn.ModuleList(GPT2Block(embed_dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(embed_dim, eps=1e-5)
        self.lm_head = nn.Linear(embed_dim, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as in GPT-2

    def forward(self, input_ids, attention_mask):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        batch_size = input_ids.shape[0]
        position_ids = torch.arange(0, input_shape[-1], dtype=torch.long,
                                    device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        attention_mask = attention_mask.view(batch_size, -1)
        attention_mask = attention_mask[:, None, None, :]
        attention_mask = attention_mask.to(dtype=torch.float32)
        attention_mask = (1.0 - attention_mask) * torch.finfo(torch.float32).min
        hidden_states = self.wte(input_ids) + self.wpe(position_ids)
        for block in self.h:
            hidden_states = block(hidden_states, attention_mask)
        hidden_states = self.ln_f(hidden_states)
        output_shape = input_shape + (hidden_states.size(-1),)
        hidden_states = hidden_states.view(output_shape)
        return self.lm_head(hidden_states)


# --------------------------------------------------------------------------
# T5 encoder
# --------------------------------------------------------------------------


class T5LayerNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class T5Attention(nn.Module):
    def __init__(self, d_model, heads, d_kv, has_relative_attention_bias,
                 num_buckets=32, max_distance=128):
        super().__init__()
        self.n_heads = heads
        self.key_value_proj_dim = d_kv
        self.inner_dim = heads * d_kv
        self.q = nn.Linear(d_model, self.inner_dim, bias=False)
        self.k = nn.Linear(d_model, self.inner_dim, bias=False)
        self.v = nn.Linear(d_model, self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, d_model, bias=False)
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.has_relative_attention_bias = has_relative_attention_bias
        if has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(num_buckets, heads)

    @staticmethod
    def _relative_position_bucket(relative_position, num_buckets, max_distance):
        # bidirectional=True, as in the encoder
        relative_buckets = 0
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (
            torch.log(relative_position.float() / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).to(torch.long)
        relative_position_if_large = torch.min(
            relative_position_if_large,
            torch.full_like(relative_position_if_large, num_buckets - 1))
        relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets

    def compute_bias(self, query_length, key_length, device):
        context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
        relative_position = memory_position - context_position
        bucket = self._relative_position_bucket(relative_position, self.num_buckets,
                                                self.max_distance)
        values = self.relative_attention_bias(bucket)  # (q, k, heads)
        return values.permute([2, 0, 1]).unsqueeze(0)  # (1, heads, q, k)

    def forward(self, hidden_states, mask, position_bias=None):
        batch_size, seq_length = hidden_states.shape[:2]

        def shape(states):
            return states.view(batch_size, -1, self.n_heads,
                               self.key_value_proj_dim).transpose(1, 2)

        def unshape(states):
            return states.transpose(1, 2).contiguous().view(batch_size, -1, self.inner_dim)

        query = shape(self.q(hidden_states))
        key = shape(self.k(hidden_states))
        value = shape(self.v(hidden_states))
        scores = torch.matmul(query, key.transpose(3, 2))
        if position_bias is None:
            position_bias = self.compute_bias(seq_length, seq_length, scores.device)
            position_bias = position_bias + mask
        scores += position_bias
        attn_weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
        attn_output = unshape(torch.matmul(attn_weights, value))
        return self.o(attn_output), position_bias


class T5Block(nn.Module):
    def __init__(self, d_model, heads, d_kv, d_ff, has_relative_attention_bias):
        super().__init__()
        self.attention_norm = T5LayerNorm(d_model)
        self.attention = T5Attention(d_model, heads, d_kv, has_relative_attention_bias)
        self.ff_norm = T5LayerNorm(d_model)
        self.wi = nn.Linear(d_model, d_ff, bias=False)
        self.wo = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, hidden_states, mask, position_bias):
        attention, position_bias = self.attention(self.attention_norm(hidden_states), mask,
                                                  position_bias)
        hidden_states = hidden_states + attention
        ff = self.wo(nn.functional.relu(self.wi(self.ff_norm(hidden_states))))
        return hidden_states + ff, position_bias


class T5EncoderModel(nn.Module):
    def __init__(self, d_model=32, heads=4, d_kv=8, d_ff=64, layers=2):
        super().__init__()
        self.shared = nn.Embedding(VOCAB, d_model)
        self.block = nn.ModuleList(T5Block(d_model, heads, d_kv, d_ff, i == 0)
                                   for i in range(layers))
        self.final_layer_norm = T5LayerNorm(d_model)

    def forward(self, input_ids, attention_mask):
        dtype = torch.float32
        extended = attention_mask[:, None, None, :].to(dtype=dtype)
        extended = (1.0 - extended) * torch.finfo(dtype).min
        hidden_states = self.shared(input_ids)
        position_bias = None
        for block in self.block:
            hidden_states, position_bias = block(hidden_states, extended, position_bias)
        return self.final_layer_norm(hidden_states)


# --------------------------------------------------------------------------
# Export driver
# --------------------------------------------------------------------------

MODELS = {
    "bert_dyn": (BertModel, ("last_hidden_state", "pooler_output")),
    "distilbert_dyn": (DistilBertModel, ("last_hidden_state",)),
    "gpt2_dyn": (GPT2LMHeadModel, ("logits",)),
    "t5_encoder_dyn": (T5EncoderModel, ("last_hidden_state",)),
}


def example_inputs():
    """Traced inputs: token ids below VOCAB and a right-padded attention mask."""
    batch, seq = EXAMPLE_SHAPE
    input_ids = torch.randint(1, VOCAB, (batch, seq), dtype=torch.int64)
    attention_mask = torch.ones((batch, seq), dtype=torch.int64)
    attention_mask[1:, seq // 2:] = 0
    return input_ids, attention_mask


def build_model(name):
    """Return ``(module, example_inputs, output_names)`` with seeded random weights."""
    torch.manual_seed(0)
    ctor, outputs = MODELS[name]
    model = ctor().eval()
    return model, example_inputs(), outputs


def export_model(name, out_dir, opset):
    """Export one model to ``out_dir/<name>.onnx``; return its manifest entry."""
    model, inputs, output_names = build_model(name)
    path = os.path.join(out_dir, f"{name}.onnx")
    dynamic_axes = {n: DYNAMIC for n in INPUT_NAMES + output_names}
    if name == "bert_dyn":
        dynamic_axes["pooler_output"] = {0: "batch"}
    start = time.perf_counter()
    with torch.no_grad():
        torch.onnx.export(model, inputs, path, opset_version=opset, do_constant_folding=True,
                          input_names=list(INPUT_NAMES), output_names=list(output_names),
                          dynamic_axes=dynamic_axes)
    entry = {"opset": opset, "file": os.path.basename(path), "bytes": os.path.getsize(path),
             "vocab": VOCAB, "max_positions": MAX_POSITIONS,
             "outputs": list(output_names), "dynamic_axes": dynamic_axes,
             "export_seconds": round(time.perf_counter() - start, 2)}
    return export_cache.stamp(entry, path, "export_dynamic", name, {"opset": opset})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="output folder (created if missing)")
    parser.add_argument("--opset", type=int, default=MAX_OPSET,
                        help=f"ONNX opset, {MIN_OPSET}..{MAX_OPSET} (default {MAX_OPSET})")
    parser.add_argument("--models", help="comma-separated subset (default: all); see --list")
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(MODELS))
        return 0
    if not args.out:
        parser.error("--out is required")
    if not MIN_OPSET <= args.opset <= MAX_OPSET:
        parser.error(f"--opset must be in {MIN_OPSET}..{MAX_OPSET}")
    names = args.models.split(",") if args.models else list(MODELS)
    unknown = sorted(set(names) - set(MODELS))
    if unknown:
        parser.error(f"unknown model(s): {', '.join(unknown)} (see --list)")

    warnings.filterwarnings("ignore")
    os.makedirs(args.out, exist_ok=True)
    manifest = load_manifest(args.out)
    failed = []
    for name in names:
        try:
            manifest[name] = export_model(name, args.out, args.opset)
        except Exception as err:  # Report and keep exporting the rest.
            print(f"{name:16s} FAILED: {type(err).__name__}: {err}")
            failed.append(name)
            continue
        print(f"{name:16s} opset {args.opset} {manifest[name]['bytes'] / 1024:8.1f} KiB")
    save_manifest(args.out, manifest)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
