"""Inputs of a HF model from its config: token ids inside the vocabulary, masks, decoder ids, pixel values."""

from __future__ import annotations

from typing import Any

from exportcore.zoo.building import EXAMPLE_BATCH, batch_dim
from exportcore.zoo.common import ZooEntry, ZooSkip

__all__ = ["EXAMPLE_TOKENS", "MAX_TOKENS", "infer_inputs"]

EXAMPLE_TOKENS = 8
#: The longest sequence drawn: enough to cross any small-size special case, cheap on a CPU.
MAX_TOKENS = 64


def infer_inputs(entry: ZooEntry, model: Any, config: Any) -> tuple[tuple, dict[str, Any], dict[str, Any], str]:
    """Return (args, kwargs, dynamic_shapes, why) for a HF model, from its main input name and config."""
    import torch

    main = getattr(model, "main_input_name", "input_ids")
    batch = batch_dim()
    if main == "pixel_values":
        vision = getattr(config, "vision_config", None) or config
        size = getattr(vision, "image_size", 224)
        height, width = (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))
        channels = int(getattr(vision, "num_channels", 3))
        pixels = torch.rand(EXAMPLE_BATCH, channels, height, width)
        return ((), {"pixel_values": pixels}, {"pixel_values": {0: batch}},
                f"pixel_values {channels}x{height}x{width} from config image_size/num_channels; batch dynamic "
                "2..8; H/W static (the config declares one image size)")
    if main != "input_ids" or getattr(config, "vision_config", None) is not None:
        raise ZooSkip(f"{entry.zoo_id}: inputs for main_input_name {main!r}"
                      f"{' with a vision config' if main == 'input_ids' else ''} are not inferred; give them with "
                      "a package.module:factory spec or the pytest_export_zoo_case hook")
    text = getattr(config, "text_config", None) or config
    vocab = int(getattr(text, "vocab_size", 0) or 0)
    if vocab < 2:
        raise ZooSkip(f"{entry.zoo_id}: the config declares no vocab_size, so token ids cannot be drawn")
    declared, limit = _position_limit(text)
    longest = min(MAX_TOKENS, limit)
    seq = torch.export.Dim("seq", min=2, max=longest)
    ids = torch.randint(3, vocab, (EXAMPLE_BATCH, EXAMPLE_TOKENS))  # above the usual pad/bos/eos ids
    kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    dynamic: dict[str, Any] = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}
    why = (f"input_ids in [3, {vocab}) (vocab_size) with an attention mask; batch dynamic 2..8, token length "
           f"dynamic 2..{longest} ({declared}, at most {MAX_TOKENS})")
    if getattr(config, "is_encoder_decoder", False):
        target = torch.export.Dim("target_seq", min=2, max=longest)
        kwargs["decoder_input_ids"] = torch.randint(3, vocab, (EXAMPLE_BATCH, EXAMPLE_TOKENS - 2))
        dynamic["decoder_input_ids"] = {0: batch, 1: target}
        why += f"; decoder_input_ids with their own length 2..{longest} (encoder-decoder)"
    return (), kwargs, dynamic, why


def _position_limit(config: Any) -> tuple[str, int]:
    for name in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 4:
            # Learned positions of some models start after an offset (RoBERTa: padding_idx + 1).
            return f"{name} {value}", value - 2
    return "no position limit declared", 10**9
