"""Model architectures (dense and MoE, GQA or MLA attention) and their parameter and FLOP counts.

Counts come from the shape, so a custom model defined by shape or by parameter count behaves like a catalog one.
FLOPs per token follow validation/README.md: 6 x (N_active - N_input_embedding) + 6 x L x s x d.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

from model.errors import InputError

DATA_FILE = Path(__file__).with_name("data") / "workloads.toml"


@dataclass(frozen=True)
class Workload:
    """A transformer's shape. `ffn_hidden` is the dense MLP width; MoE layers use `moe_ffn_hidden` per expert."""

    key: str
    name: str
    layers: int
    hidden: int
    ffn_hidden: int
    heads: int
    kv_heads: int
    vocab: int
    head_dim: int = 0  # 0: hidden // heads
    tied_embeddings: bool = False
    mlp: str = "swiglu"
    dense_layers: int = 0  # leading layers with a dense MLP in an MoE model
    experts_routed: int = 0
    experts_active: int = 0
    experts_shared: int = 0
    moe_ffn_hidden: int = 0
    q_lora_rank: int = 0  # MLA (DeepSeek) fields; kv_lora_rank > 0 means MLA attention
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    published_params_b: float = 0.0
    published_active_params_b: float = 0.0
    published_active_excludes_input_embedding: bool = False  # gpt-oss quotes active counts without it
    source: str = ""

    @property
    def is_moe(self) -> bool:
        return self.experts_routed > 0

    @property
    def uses_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def head_dim_eff(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    # -- parameters --------------------------------------------------------------------------------------------
    @property
    def attention_params_per_layer(self) -> int:
        d, h = self.hidden, self.heads
        if self.uses_mla:
            qk_dim = self.qk_nope_head_dim + self.qk_rope_head_dim
            q = d * self.q_lora_rank + self.q_lora_rank * h * qk_dim if self.q_lora_rank else d * h * qk_dim
            kv = d * (self.kv_lora_rank + self.qk_rope_head_dim)
            kv += self.kv_lora_rank * h * (self.qk_nope_head_dim + self.v_head_dim)
            return q + kv + h * self.v_head_dim * d
        hd = self.head_dim_eff
        return d * h * hd + 2 * d * self.kv_heads * hd + h * hd * d

    @property
    def mlp_matrices(self) -> int:
        return 3 if self.mlp == "swiglu" else 2

    @property
    def dense_mlp_params_per_layer(self) -> int:
        return self.mlp_matrices * self.hidden * self.ffn_hidden

    @property
    def expert_params(self) -> int:
        """Parameters of one routed expert."""
        return self.mlp_matrices * self.hidden * self.moe_ffn_hidden

    @property
    def embedding_params(self) -> int:
        """Input embedding (excluded from model FLOPs by the convention)."""
        return self.vocab * self.hidden

    @property
    def output_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    def _layer_params(self, experts: int) -> int:
        d = self.hidden
        per_layer = self.attention_params_per_layer + 2 * d
        dense = self.dense_layers if self.is_moe else self.layers
        total = dense * (per_layer + self.dense_mlp_params_per_layer)
        if self.is_moe:
            moe = per_layer + (experts + self.experts_shared) * self.expert_params + d * self.experts_routed
            total += self.moe_layers * moe
        return total

    @property
    def params_total(self) -> int:
        return self._layer_params(self.experts_routed) + self.embedding_params + self.output_params + self.hidden

    @property
    def params_active(self) -> int:
        """Parameters touched per token (all of them for a dense model)."""
        if not self.is_moe:
            return self.params_total
        return self._layer_params(self.experts_active) + self.embedding_params + self.output_params + self.hidden

    @property
    def expert_params_total(self) -> int:
        """Parameters in routed experts (what expert parallelism shards)."""
        return self.moe_layers * self.experts_routed * self.expert_params

    def flops_per_token(self, seq_len: int) -> float:
        """Training model FLOPs per token (forward + backward), MLPerf/NVIDIA convention; no recompute."""
        return 6.0 * (self.params_active - self.embedding_params) + 6.0 * self.layers * seq_len * self.hidden

    def kv_cache_bytes_per_token(self, bytes_per_value: float = 1.0) -> float:
        """KV cache per token across all layers (MLA caches the compressed latent plus the rope key)."""
        if self.uses_mla:
            per_layer = self.kv_lora_rank + self.qk_rope_head_dim
        else:
            per_layer = 2 * self.kv_heads * self.head_dim_eff
        return self.layers * per_layer * bytes_per_value


_INT_FIELDS = (
    "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab", "head_dim", "dense_layers", "experts_routed",
    "experts_active", "experts_shared", "moe_ffn_hidden", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
    "qk_rope_head_dim", "v_head_dim",
)


def _build(key: str, table: Mapping[str, object], where: str) -> Workload:
    allowed = set(Workload.__dataclass_fields__) - {"key"}
    fields = {k: v for k, v in table.items() if k != "key"}
    for name, value in fields.items():
        if name not in allowed:
            raise InputError(f"{where}: field {name!r}: unknown field; expected one of {', '.join(sorted(allowed))}")
        if name in _INT_FIELDS and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise InputError(f"{where}: field {name!r}: expected a non-negative whole number, got {value!r}")
    for name in ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab"):
        if not fields.get(name):
            raise InputError(f"{where}: field {name!r}: expected a positive whole number, got {fields.get(name)!r}")
    if fields.get("mlp", "swiglu") not in ("swiglu", "gelu"):
        raise InputError(f"{where}: field 'mlp': expected 'swiglu' or 'gelu', got {fields['mlp']!r}")
    if fields.get("experts_routed") and not (0 < fields.get("experts_active", 0) <= fields["experts_routed"]):
        raise InputError(f"{where}: field 'experts_active': expected 1..experts_routed")
    return Workload(key=key, **fields)


@cache
def workloads() -> Mapping[str, Workload]:
    """The packaged workload catalog, loaded once."""
    with DATA_FILE.open("rb") as handle:
        data = tomllib.load(handle)
    out: dict[str, Workload] = {}
    for table_name, table in data.items():
        key = str(table.get("key", table_name))
        out[key] = _build(key, table, f"{DATA_FILE} [{table_name}]")
    return MappingProxyType(out)


def get_workload(key: str | Workload) -> Workload:
    if isinstance(key, Workload):
        return key
    found = workloads().get(key)
    if found is None:
        raise InputError(f"unknown workload {key!r}; expected one of {', '.join(workloads())} or a custom workload")
    return found


def custom_workload(
    key: str = "custom",
    *,
    params_b: float | None = None,
    active_params_b: float | None = None,
    layers: int | None = None,
    hidden: int | None = None,
    experts_routed: int = 0,
    experts_active: int = 0,
    vocab: int = 128256,
    **shape: int,
) -> Workload:
    """A hypothetical model by shape, or by parameter count (a Llama-3-like shape is chosen to match it).

    Dense: give `params_b`. MoE: give `params_b` (total), `active_params_b`, `experts_routed`, `experts_active`.
    Shape rules when sizing by count: d_model grows as the cube root of size with an aspect ratio d/L near 128
    (the Llama 3 family: 8B 4096/32, 70B 8192/80, 405B 16384/126), a multiple of 1024 from 4096 up, FFN 3.25 x d,
    128-dim heads, 8 KV heads.
    """
    if params_b is None:
        if layers is None or hidden is None:
            raise InputError("custom workload: give params_b, or layers and hidden (and other shape fields)")
        table = {"layers": layers, "hidden": hidden, "vocab": vocab, "experts_routed": experts_routed,
                 "experts_active": experts_active, **shape}
        table.setdefault("ffn_hidden", int(3.25 * hidden) // 256 * 256 or 256)
        table.setdefault("heads", max(1, hidden // 128))
        table.setdefault("kv_heads", min(8, table["heads"]))
        if experts_routed:
            table.setdefault("moe_ffn_hidden", table["ffn_hidden"] // 4)
        return _build(key, {"name": key, **table}, f"custom workload {key!r}")
    if params_b <= 0:
        raise InputError(f"custom workload {key!r}: params_b: expected a positive number, got {params_b!r}")
    target_active = (active_params_b if experts_routed else params_b) * 1e9
    if experts_routed and (not active_params_b or active_params_b > params_b):
        raise InputError(f"custom workload {key!r}: active_params_b: expected 0 < active <= params_b")
    # Dense-equivalent shape sized on the active parameters; experts then sized to reach the total.
    per_layer_factor = 12 + 3 * 3.25 - 8  # attention (~2 + 2*kv/heads) and SwiGLU, in units of d^2 per layer
    hidden_f = (target_active * 128 / per_layer_factor) ** (1 / 3)
    # d_model a multiple of 1024 (128-dim heads in multiples of 8) so tensor parallelism up to 8 divides the heads,
    # as in every Llama 3 size; small models a multiple of 256
    step = 1024 if hidden_f >= 4096 else 256
    hidden_i = max(512, int(round(hidden_f / step)) * step)
    layers_i = max(2, round(target_active / (per_layer_factor * hidden_i**2)))
    heads = hidden_i // 128
    kv = min(8, heads)
    base = {"name": key, "layers": layers_i, "hidden": hidden_i, "heads": heads, "kv_heads": kv, "vocab": vocab,
            "published_params_b": params_b}
    if not experts_routed:
        # Solve for the FFN width that hits the parameter count exactly (within rounding).
        attn = 2 * hidden_i * hidden_i + 2 * hidden_i * kv * 128
        emb = 2 * vocab * hidden_i
        ffn = (params_b * 1e9 - emb - layers_i * (attn + 2 * hidden_i)) / (3 * hidden_i * layers_i)
        base["ffn_hidden"] = max(256, int(round(ffn / 128)) * 128)
        return _build(key, base, f"custom workload {key!r}")
    if not 0 < experts_active <= experts_routed:
        raise InputError(f"custom workload {key!r}: experts_active: expected 1..{experts_routed}")
    # Shape rules from DeepSeek-V3 / Qwen3-235B: expert width 3/8 of d_model, d/L = 128. Search d_model to hit
    # the total; shared experts then bring the active count towards its target.
    total, active = params_b * 1e9, target_active

    def counts(hidden_c: int) -> tuple[int, int, float, float]:
        layers_c = max(2, round(hidden_c / 128))
        moe_ffn_c = max(64, int(round(0.375 * hidden_c / 64)) * 64)
        kv_c = min(8, hidden_c // 128)
        attn = 2 * hidden_c * hidden_c + 2 * hidden_c * kv_c * 128 + 2 * hidden_c + hidden_c * experts_routed
        expert = 3 * hidden_c * moe_ffn_c
        emb = 2 * vocab * hidden_c
        return layers_c, moe_ffn_c, layers_c * (attn + experts_routed * expert) + emb, expert

    hidden_i = min(range(512, 65536 + 1, 128), key=lambda h: abs(counts(h)[2] - total))
    layers_i, moe_ffn, total_i, expert = counts(hidden_i)
    active_i = total_i - layers_i * (experts_routed - experts_active) * expert
    shared = max(0, round((active - active_i) / (layers_i * expert)))
    base.update(layers=layers_i, hidden=hidden_i, heads=hidden_i // 128, kv_heads=min(8, hidden_i // 128),
                ffn_hidden=moe_ffn * 4, experts_routed=experts_routed, experts_active=experts_active,
                experts_shared=shared, moe_ffn_hidden=moe_ffn, published_active_params_b=active_params_b)
    return _build(key, base, f"custom workload {key!r}")
