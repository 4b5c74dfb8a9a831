"""``MAVLlamaConfig``: the ``transformers`` configuration of the MAV variants (``abs_pos`` / ``line_pos``).

Imports ``transformers`` (not ``torch``); the model class is :mod:`.modeling`, which registers both.
"""
from __future__ import annotations

from transformers import LlamaConfig

#: ``model_type`` of the MAV variants' folders
MODEL_TYPE = "mavgame_mav"


class MAVLlamaConfig(LlamaConfig):
    """A Llama configuration plus the MAV position options (:class:`mavgame.model.MAVConfig`'s ``abs_pos``,
    ``line_pos``, ``newline_id``; ``max_position_embeddings`` is the table size of ``abs_pos``)."""

    model_type = MODEL_TYPE
    abs_pos: bool = False
    line_pos: int = 0
    newline_id: int = -1


__all__ = ["MODEL_TYPE", "MAVLlamaConfig"]
