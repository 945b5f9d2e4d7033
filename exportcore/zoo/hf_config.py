"""Shrink a HF config in place: few layers, a small hidden size, few heads and experts, a small vocabulary.

Nested configs (text/vision/encoder/decoder/backbone) are shrunk the same way; pretrained backbones are
turned off and the KV cache is not returned (``use_cache=False``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["VOCAB", "shrink"]

VOCAB = 1024
_SIZES = {
    # (attribute names, the value they are shrunk to)
    "layers": (("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
                "num_decoder_layers", "num_encoder_layers"), 2),
    "hidden": (("hidden_size", "d_model", "n_embd", "dim", "embed_dim", "embedding_size"), 64),
    "heads": (("num_attention_heads", "n_head", "n_heads", "encoder_attention_heads", "decoder_attention_heads",
               "num_heads"), 4),
    "kv_heads": (("num_key_value_heads", "multi_query_group_num"), 2),
    "head_dim": (("head_dim", "d_kv"), 16),
    "ffn": (("intermediate_size", "d_ff", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner", "hidden_dim"), 128),
    "experts": (("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"), 4),
    "experts_per_token": (("num_experts_per_tok", "moe_topk"), 2),
    # GPT-J / CodeGen rotate the first rotary_dim channels of each head: at most the shrunk head size (64 / 4)
    "rotary": (("rotary_dim",), 8),
}
_LAYER_LISTS = ("layer_types", "mlp_only_layers", "sliding_window_pattern_layers")


def shrink(config: Any, _depth: int = 0) -> str:
    """Shrink ``config`` (and its nested configs) in place; return what was changed, briefly."""
    changed: list[str] = []
    layers = None
    depths = getattr(config, "depths", None)
    staged = isinstance(depths, (list, tuple))
    if staged:
        # A staged (hierarchical) vision model ties its widths and heads to per-stage lists: keep the
        # widths, make every stage one block deep.
        config.depths = [1] * len(depths)
        changed.append(f"depths={config.depths}")
    for what, (names, small) in _SIZES.items():
        if staged and what in ("layers", "hidden", "heads", "kv_heads", "head_dim"):
            continue
        for name in names:
            value = getattr(config, name, None)
            if isinstance(value, int) and not isinstance(value, bool) and value > small:
                setattr(config, name, small)
                if what == "layers":
                    layers = small
                changed.append(f"{name}={small}")
    for name in _LAYER_LISTS:
        value = getattr(config, name, None)
        if layers is not None and isinstance(value, list) and len(value) > layers:
            setattr(config, name, value[:layers])
    vocab = getattr(config, "vocab_size", None)
    if isinstance(vocab, int) and vocab > VOCAB:
        config.vocab_size = VOCAB
        changed.append(f"vocab_size={VOCAB}")
        for name, value in list(vars(config).items()):
            if name.endswith("_token_id") and isinstance(value, int) and value >= VOCAB:
                setattr(config, name, VOCAB - 1)
    for flag, value in (("use_pretrained_backbone", False), ("use_cache", False)):
        if hasattr(config, flag):
            setattr(config, flag, value)
    for name, value in list(vars(config).items()):
        if _depth < 3 and type(value).__name__.endswith("Config") and hasattr(value, "to_dict"):
            inner = shrink(value, _depth + 1)
            if inner:
                changed.append(f"{name}({inner})")
    return ", ".join(changed)
