"""The built-in decoder of src/policy/builtin-model/decoder-graph.ts in PyTorch, operation for operation.

Hugging Face Llama: RMSNorm ``x * rsqrt(mean(x^2) + eps) * w``; RoPE with ``inv_freq[i] = theta^(-2i/D)`` for
``i < D/2``, the angles repeated twice, and ``rotate_half(x) = cat(-x[D/2:], x[:D/2])``; grouped-query attention in
which query head ``h`` reads KV head ``h // G`` (G = heads / KV heads); SwiGLU ``down(silu(gate(x)) * up(x))``;
embeddings tied to the LM head or not, as the architecture says.

A forward pass takes a *shared prefix* (the prompt the episodes of a batch have in common, run once at batch size
1) and the episodes' suffixes, which attend to the prefix's keys and values and causally to themselves. That is
where the training's cost was: attention over the ~1,000-token prompts, computed once per batch instead of once per
episode. The gradient through the prefix is exact (its keys and values are broadcast, not copied).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

# The byte-level vocabulary (src/core/tokenizer/byte-level.ts): 256 bytes, then the nine markers.
VOCAB_SIZE = 265
# What the logit shaping lets the model emit (src/policy/builtin-model/logit-shaping.ts): printable ASCII, "\n",
# <|im_end|> (258), <tool_call>, </tool_call>, <think>, </think> (259-262). The rest get -1e4, in training too.
ALLOWED_IDS = [0x0A, *range(0x20, 0x7F), 258, 259, 260, 261, 262]
BLOCKED_BIAS = -1e4


@dataclass(frozen=True)
class Vocabulary:
    """The ids a model speaks: the byte-level vocabulary and, for a vocabulary of ``npm run train:vocab``, its byte-pair
    merges (token 265 + i is merge i; src/policy/builtin-model/merges.ts). ``allowed_ids`` are what the logit
    shaping lets it emit, as logit-shaping.ts computes them (data.json records them; this side never works them out)."""

    merges: tuple = ()
    allowed_ids: tuple = tuple(ALLOWED_IDS)

    @property
    def size(self) -> int:
        return VOCAB_SIZE + len(self.merges)

    @staticmethod
    def from_record(record: dict | None) -> "Vocabulary":
        """data.json's ``vocabulary`` (absent: the byte-level one), checked against its own size."""
        if not record:
            return BYTE_LEVEL
        vocabulary = Vocabulary(tuple(tuple(m) for m in record["merges"]), tuple(record["allowed_ids"]))
        if record.get("size", vocabulary.size) != vocabulary.size:
            raise ValueError(f"vocabulary: size {record.get('size')} but {len(vocabulary.merges)} merges make {vocabulary.size}")
        if any(not 0 <= i < vocabulary.size for i in vocabulary.allowed_ids):
            raise ValueError(f"vocabulary: an allowed id is outside 0…{vocabulary.size - 1}")
        return vocabulary


BYTE_LEVEL = Vocabulary()


@dataclass(frozen=True)
class Architecture:
    """config.json's keys, as the weights file's ``config`` metadata holds them."""

    vocab_size: int = VOCAB_SIZE
    hidden_size: int = 128
    intermediate_size: int = 384
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    head_dim: int = 32
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-6
    max_position_embeddings: int = 8192
    tie_word_embeddings: bool = False

    def to_config(self) -> dict:
        return asdict(self)


# The sizes `--size` names: "trained" is TRAINED_PRESET of presets.ts; "tiny" is for tests and quick looks.
SIZES = {
    "trained": Architecture(),
    "tiny": Architecture(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8),
}


def shaping_bias(vocab_size: int, allowed_ids=ALLOWED_IDS) -> torch.Tensor:
    bias = torch.full((vocab_size,), BLOCKED_BIAS)
    bias[list(allowed_ids)] = 0.0
    return bias


class RMSNorm(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Rope(nn.Module):
    def __init__(self, head_dim: int, theta: float):
        super().__init__()
        inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
        self.register_buffer("inv_freq", inv_freq.float(), persistent=False)

    def cos_sin(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        freqs = positions.float()[:, None] * self.inv_freq[None, :]
        angles = torch.cat((freqs, freqs), dim=-1)  # [S, D]
        return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    return x * cos + rotate_half(x) * sin


class Layer(nn.Module):
    def __init__(self, a: Architecture):
        super().__init__()
        h, d = a.hidden_size, a.head_dim
        self.heads, self.kv_heads, self.head_dim = a.num_attention_heads, a.num_key_value_heads, d
        self.input_layernorm = RMSNorm(h, a.rms_norm_eps)
        self.q_proj = nn.Linear(h, self.heads * d, bias=False)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.o_proj = nn.Linear(self.heads * d, h, bias=False)
        self.post_attention_layernorm = RMSNorm(h, a.rms_norm_eps)
        self.gate_proj = nn.Linear(h, a.intermediate_size, bias=False)
        self.up_proj = nn.Linear(h, a.intermediate_size, bias=False)
        self.down_proj = nn.Linear(a.intermediate_size, h, bias=False)

    def split(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        b, s, _ = x.shape
        return x.view(b, s, heads, self.head_dim).transpose(1, 2)  # [B, heads, S, D]

    def forward(self, x, cos, sin, past, mask):
        """``past``: the prefix's (k, v) ``[1, KV, P, D]`` or None; ``mask``: additive ``[1 or B, 1, S, P + S]``."""
        normed = self.input_layernorm(x)
        q = apply_rope(self.split(self.q_proj(normed), self.heads), cos, sin)
        k = apply_rope(self.split(self.k_proj(normed), self.kv_heads), cos, sin)
        v = self.split(self.v_proj(normed), self.kv_heads)
        present = (k, v)
        if past is not None:
            b = x.shape[0]
            k = torch.cat((past[0].expand(b, -1, -1, -1), k), dim=2)
            v = torch.cat((past[1].expand(b, -1, -1, -1), v), dim=2)
        groups = self.heads // self.kv_heads
        # repeat_interleave puts KV head j at query heads j*G … j*G+G-1: head h reads KV head h // G.
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + mask
        context = F.softmax(scores, dim=-1) @ v  # [B, H, S, D]
        b, _, s, _ = context.shape
        x = x + self.o_proj(context.transpose(1, 2).reshape(b, s, self.heads * self.head_dim))
        normed = self.post_attention_layernorm(x)
        x = x + self.down_proj(F.silu(self.gate_proj(normed)) * self.up_proj(normed))
        return x, present


class Decoder(nn.Module):
    def __init__(self, a: Architecture, vocabulary: Vocabulary = BYTE_LEVEL):
        super().__init__()
        if a.vocab_size != vocabulary.size:
            raise ValueError(f"vocab_size {a.vocab_size} is not the vocabulary's {vocabulary.size} ({len(vocabulary.merges)} merges)")
        self.architecture = a
        self.vocabulary = vocabulary
        self.embed_tokens = nn.Embedding(a.vocab_size, a.hidden_size)
        self.layers = nn.ModuleList(Layer(a) for _ in range(a.num_hidden_layers))
        self.norm = RMSNorm(a.hidden_size, a.rms_norm_eps)
        self.lm_head = nn.Linear(a.hidden_size, a.vocab_size, bias=False)
        if a.tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        self.rope = Rope(a.head_dim, a.rope_theta)
        self.register_buffer("bias", shaping_bias(a.vocab_size, vocabulary.allowed_ids), persistent=False)
        # Hugging Face Llama's initialisation: normal(0, 0.02) for every matrix, ones for the norms.
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)

    def run(self, ids: torch.Tensor, start: int, past: list | None):
        """Hidden states of ``ids`` ``[B, S]`` at positions ``start …``, after ``past`` (the prefix's caches)."""
        s = ids.shape[1]
        cos, sin = self.rope.cos_sin(torch.arange(start, start + s, device=ids.device))
        # Causal within the new tokens; every prefix position is visible (it precedes them all).
        causal = torch.full((s, s), float("-inf"), device=ids.device).triu(1)
        mask = torch.cat((torch.zeros(s, start, device=ids.device), causal), dim=1)[None, None]
        x = self.embed_tokens(ids)
        presents = []
        for i, layer in enumerate(self.layers):
            x, present = layer(x, cos, sin, None if past is None else past[i], mask)
            presents.append(present)
        return x, presents

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The graph's logits: the LM head on the final norm, plus the shaping bias (0 or -1e4)."""
        return self.lm_head(self.norm(hidden)) + self.bias

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, S, V]`` of unpadded sequences (positions 0 …), as the ONNX graph gives them."""
        hidden, _ = self.run(ids, 0, None)
        return self.logits(hidden)

    def forward_with_prefix(self, prefix: torch.Tensor, suffixes: torch.Tensor, prefix_grad: bool = True) -> torch.Tensor:
        """Logits ``[B, S, V]`` of each ``suffixes`` row after the shared ``prefix`` ``[P]`` (run once).

        Right padding in ``suffixes`` is harmless: a padded position comes after every real one, so the causal
        mask hides it; its own logits are ignored by the loss. ``prefix_grad=False`` runs the prefix without
        gradients (faster, but its tokens' representations are then not trained).
        """
        p = prefix.shape[0]
        if p == 0:
            hidden, _ = self.run(suffixes, 0, None)
            return self.logits(hidden)
        with torch.set_grad_enabled(prefix_grad and torch.is_grad_enabled()):
            _, past = self.run(prefix[None], 0, None)
        hidden, _ = self.run(suffixes, p, past)
        return self.logits(hidden)
