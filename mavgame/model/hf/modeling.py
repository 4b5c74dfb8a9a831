"""The MAV transformer's variants as ``transformers`` classes: ``MAVLlamaConfig`` and ``MAVLlamaForCausalLM``.

A MAV model without ``abs_pos`` and ``line_pos`` is exactly a stock Llama (RMSNorm, rotate-half rotary
positions, grouped-query attention, SwiGLU or GeGLU, no biases): :func:`mavgame.model.hf.export_hf` writes
it as ``LlamaForCausalLM``. A model with the learned absolute position embedding (``abs_pos``) or the
line-position embedding (``line_pos``, the shipped Connect Four model has it) adds an embedding to the token
embedding that Llama has no place for; these are ``model_type = "mavgame_mav"``, Llama's modules with the
extra embeddings (``model.pos_embed``, ``model.line_embed``) added before the first block.

Importing this module imports ``transformers`` and ``torch`` and registers the classes with
``AutoConfig`` and ``AutoModelForCausalLM`` (:func:`mavgame.model.hf.register` imports it); after that
``AutoModelForCausalLM.from_pretrained(folder)`` loads such a folder.

Line positions (the index of a token within its text line, 0 for the token after a newline) come from the
whole sequence: a plain forward pass (training, scoring) computes them from ``input_ids``; ``generate``
computes them in :meth:`MAVLlamaForCausalLM.prepare_inputs_for_generation` from the full sequence so far
and hands them to the forward pass as ``line_position_ids``. A forward pass over a filled cache without
``line_position_ids`` cannot know where the current line began and raises ValueError.
"""
from __future__ import annotations

from typing import Any, Optional

import torch
from torch import nn
from transformers import AutoConfig, AutoModelForCausalLM, LogitsProcessor
from transformers.models.llama.modeling_llama import LlamaForCausalLM, LlamaModel

from ..transformer import line_positions
from .configuration import MODEL_TYPE, MAVLlamaConfig


def _line_position_ids(input_ids: torch.Tensor, position_ids: torch.Tensor, cfg: MAVLlamaConfig) -> torch.Tensor:
    """Index of each token within its text line [B, T] (clamped at ``line_pos - 1``), as the reference
    transformer computes it (:func:`mavgame.model.transformer.line_positions`, line starts from 0)."""
    if position_ids.shape[0] != input_ids.shape[0]:
        position_ids = position_ids.expand(input_ids.shape[0], -1)
    lp, _ = line_positions(input_ids, position_ids.long(), cfg.newline_id, cfg.line_pos)
    return lp


class MAVLlamaModel(LlamaModel):
    """Llama's decoder with the MAV position embeddings added to the token embeddings."""

    config_class = MAVLlamaConfig

    def __init__(self, config: MAVLlamaConfig):
        super().__init__(config)
        d = config.hidden_size
        self.pos_embed = nn.Embedding(config.max_position_embeddings, d) if config.abs_pos else None
        self.line_embed = nn.Embedding(config.line_pos, d) if config.line_pos else None
        self.post_init()

    def forward(self, input_ids: Optional[torch.LongTensor] = None, attention_mask: Optional[torch.Tensor] = None,
                position_ids: Optional[torch.LongTensor] = None, inputs_embeds: Optional[torch.Tensor] = None,
                line_position_ids: Optional[torch.LongTensor] = None, **kwargs: Any):
        """LlamaModel's forward pass with the MAV embeddings added; ``line_position_ids`` [B, T]: each token's
        index in its line (computed from ``input_ids`` when absent and nothing is cached yet). The cache and
        every other argument go to LlamaModel as given (``cache``, or ``past_key_values`` in older 5.x)."""
        cfg = self.config
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)
        cache = kwargs.get("cache", kwargs.get("past_key_values"))
        past = cache.get_seq_length() if cache is not None else 0
        if position_ids is None:
            position_ids = (torch.arange(inputs_embeds.shape[1], device=inputs_embeds.device) + past).unsqueeze(0)
        if self.pos_embed is not None:
            inputs_embeds = inputs_embeds + self.pos_embed(position_ids)
        if self.line_embed is not None:
            if line_position_ids is None:
                if input_ids is None or past:
                    raise ValueError("a mavgame_mav model with line_pos needs line_position_ids with inputs_embeds or "
                                     "a filled cache (generate computes them)")
                line_position_ids = _line_position_ids(input_ids, position_ids, cfg)
            inputs_embeds = inputs_embeds + self.line_embed(line_position_ids)
        return super().forward(input_ids=None, attention_mask=attention_mask, position_ids=position_ids,
                               inputs_embeds=inputs_embeds, **kwargs)


class MAVLlamaForCausalLM(LlamaForCausalLM):
    """``LlamaForCausalLM`` over :class:`MAVLlamaModel` (same weight names, plus ``model.pos_embed.weight`` /
    ``model.line_embed.weight``)."""

    config_class = MAVLlamaConfig

    def __init__(self, config: MAVLlamaConfig):
        # LlamaForCausalLM's own __init__ without building a LlamaModel first (that one would be thrown away)
        super(LlamaForCausalLM, self).__init__(config)
        self.model = MAVLlamaModel(config)
        self.vocab_size = config.vocab_size
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def prepare_inputs_for_generation(self, input_ids: torch.LongTensor, *args: Any, **kwargs: Any):
        """GenerationMixin's inputs plus ``line_position_ids`` of the tokens fed this step, computed from the
        whole sequence so far (``input_ids`` holds it all). (``generate`` accepts the model kwargs of a
        ``**kwargs`` parameter only under that name.)"""
        position_ids = kwargs.get("position_ids")
        inputs = super().prepare_inputs_for_generation(input_ids, *args, **kwargs)
        if self.config.line_pos and inputs.get("input_ids") is not None:
            if position_ids is None:
                position_ids = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
            lp = _line_position_ids(input_ids, position_ids[..., -input_ids.shape[1]:], self.config)
            inputs["line_position_ids"] = lp[:, -inputs["input_ids"].shape[1]:].contiguous()
        return inputs


class GroupedMovesLogitsProcessor(LogitsProcessor):
    """mavgame's grouped greedy decoding (:func:`mavgame.model.inference.grouped_argmax`) for ``generate``:
    the tokens of ``group_ids`` (a game's move tokens, :func:`mavgame.model.hf.move_token_ids`) count as one
    choice with their total probability against every other single token; the winner (the group's most
    likely token, or the best other token) is the only token left with a finite score. For greedy decoding
    (``do_sample=False``); the raw logits stay available with ``output_logits=True``."""

    def __init__(self, group_ids):
        self.group = torch.as_tensor(sorted({int(t) for t in group_ids}), dtype=torch.long)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if len(self.group) == 0:
            return scores
        g = self.group.to(scores.device)
        p = torch.softmax(scores.double(), dim=-1)
        pg = p[:, g]
        other = p.clone()
        other[:, g] = -1.0
        best_other = other.argmax(dim=-1)
        wins = pg.sum(dim=-1) > p.gather(1, best_other[:, None])[:, 0]
        choice = torch.where(wins, g[pg.argmax(dim=-1)], best_other)[:, None]
        out = torch.full_like(scores, float("-inf"))
        return out.scatter_(1, choice, scores.gather(1, choice))


AutoConfig.register(MODEL_TYPE, MAVLlamaConfig, exist_ok=True)
AutoModelForCausalLM.register(MAVLlamaConfig, MAVLlamaForCausalLM, exist_ok=True)

__all__ = ["MODEL_TYPE", "MAVLlamaConfig", "MAVLlamaModel", "MAVLlamaForCausalLM", "GroupedMovesLogitsProcessor"]
