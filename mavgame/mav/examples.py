"""Randomised, seeded MAV training examples built in C (token ids, loss masks, lengths)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .tokenizer import Tokenizer, _default_tokenizer
from .write import _as_annotation, _check_state, _parse_move


@dataclass
class ExampleBatch:
    """Token ids [B, L] (padded with <pad> = 0), loss mask [B, L] (False on the prompt and padding),
    lengths [B]; ``texts``: (prompt, target) pairs when requested."""
    tokens: np.ndarray
    loss_mask: np.ndarray
    lengths: np.ndarray
    texts: Optional[List[Tuple[str, str]]] = None


class ExampleBuilder:
    """Randomised MAV training examples, seeded and reproducible (the MAV paper's data randomisation).

    Each item gives a position and its annotation; per example the builder draws the transition form
    (previous state + action as input, the model writes the state) with ``p_transition`` when a
    previous state is known, %top_all with ``p_top_all`` else %top_k with k uniform in
    1..n_legal + k_slack (so k can exceed the number of legal moves), for the chess family %state only /
    %fen only / both in random order, %best_action with ``p_best`` (then the state after it with
    ``p_after``), and a shuffled %top order with ``p_shuffle``. A terminal state has no legal moves, so its
    k is at most ``k_slack``, a hint that the game is over which a small model learns instead of looking at
    the board (docs/model.md, "Finished games"); ``k_terminal_prev`` draws it from the previous state's
    range instead (when the previous state is known). Items:

    - ``(state, annotation)``: the previous state, if needed, is the state's last pushed move;
    - ``(state, annotation, prev_state, prev_action)``;
    - a dict with keys state, annotation, prev_state, prev_action.

    An annotation is an :class:`Annotation`, a ``{move: value}`` dict, a ``mavgame.engines.annotate.EngineAnnotation``
    or a ``(moves, values[, best])`` tuple; it may be None for terminal states.
    """

    def __init__(self, seed: int = 0, tokenizer: Optional[Tokenizer] = None, *, p_transition: float = 0.5,
                 p_top: float = 1.0, p_top_all: float = 0.25, k_slack: int = 4, p_best: float = 1.0,
                 p_after: float = 0.0, p_shuffle: float = 1.0, p_state_only: float = 1 / 3,
                 p_fen_only: float = 1 / 3, add_bos: bool = True, add_eos: bool = True, use_history: bool = True,
                 k_terminal_prev: bool = False):
        self.tokenizer = tokenizer or _default_tokenizer()
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        self.use_history = bool(use_history)
        self._b = _core.MavExampleBuilder(self.tokenizer._tok, int(seed) & (2**64 - 1), p_transition, p_top,
                                          p_top_all, int(k_slack), p_best, p_after, p_shuffle, p_state_only,
                                          p_fen_only, bool(add_bos), bool(add_eos), bool(k_terminal_prev))

    def _item(self, i: int, it) -> tuple:
        prev_state = prev_action = None
        if isinstance(it, Mapping):
            state, ann = it["state"], it.get("annotation")
            prev_state, prev_action = it.get("prev_state"), it.get("prev_action")
        elif isinstance(it, (tuple, list)) and len(it) in (2, 4):
            state, ann = it[0], it[1]
            if len(it) == 4:
                prev_state, prev_action = it[2], it[3]
        else:
            raise TypeError(f"items[{i}] must be (state, annotation), (state, annotation, prev_state, "
                            f"prev_action) or a dict, not {type(it).__name__}")
        _check_state(state, f"items[{i}] state")
        a = _as_annotation(state, ann)
        acts = a.actions if a is not None else None
        vals = a.values if a is not None else None
        best = int(a.best) if a is not None and a.best is not None else -1
        pa = -1
        if prev_state is not None:
            _check_state(prev_state, f"items[{i}] prev_state")
            if prev_action is None:
                raise ValueError(f"items[{i}]: prev_state needs prev_action")
            pa = _parse_move(prev_state, prev_action)
        return (state, acts, vals, best, prev_state, pa, self.use_history)

    def build(self, items: Sequence, max_len: Optional[int] = None, return_text: bool = False) -> ExampleBatch:
        """One batch: ValueError (naming the item) if an example is bad or longer than ``max_len``."""
        conv = [self._item(i, it) for i, it in enumerate(items)]
        out = self._b.build(conv, max_len, return_text)
        return ExampleBatch(out[0], out[1], out[2], out[3] if return_text else None)

    def get_state(self) -> Tuple[int, int, int, int]:
        """The generator state (to resume a data stream exactly)."""
        return self._b.get_rng_state()

    def set_state(self, state: Tuple[int, int, int, int]) -> None:
        self._b.set_rng_state(tuple(int(x) for x in state))
