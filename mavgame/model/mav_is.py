"""Internal search with a MAV model (MAV-IS): the agent and the held-out trace evaluation.

- :class:`MAVISAgent` prompts the model for a minimax trace of breadth B and depth D
  (:mod:`mavgame.mav.search_trace`), parses it against the true position and plays the move it chose
  (``Playing m!``). When the trace is unusable (cut off, malformed, its final move illegal) it falls back
  to searchless MAV on the same model (:class:`MAVGreedyAgent`); ``stats`` counts both.
- :func:`evaluate_trace_records` generates traces for held-out search trees and reports the issue's checks
  per shape (tree-shape accuracy as in the paper, legality, states, the model's own minimax arithmetic, the
  final move against the minimax choice of the true tree) and the average prompt + response tokens.

Importing this module registers the agent kind ``mav_is`` (``mav_is:breadth=3,depth=1``, ``model=PATH``).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..play.agents import Agent, AgentError, register_agent
from ..mav.search_trace import parse_trace, trace_metrics, trace_prompt, write_trace
from .agents import MAVGreedyAgent, get_model
from .inference import MAVModel

__all__ = ["MAVISAgent", "generate_traces", "evaluate_trace_records"]


def generate_traces(model: MAVModel, states: Sequence[Any], breadth: int, depth: int, batch_size: int = 32
                    ) -> List[Tuple[str, Any]]:
    """(prompt, MAVOutput) of the model's trace for each state (greedy, up to the model's context)."""
    prompts = [trace_prompt(s, breadth, depth) for s in states]
    outs = model.generate(prompts, batch_size=batch_size)
    return list(zip(prompts, outs))


class MAVISAgent(Agent):
    """Plays the move of the model's own minimax trace (see the module docstring)."""

    def __init__(self, model=None, *, breadth: int = 2, depth: int = 1, backend: str = "auto",
                 seed: Optional[int] = None, name: Optional[str] = None):
        if not (1 <= breadth <= 8 and 1 <= depth <= 4):
            raise ValueError(f"mav_is needs breadth 1..8 and depth 1..4, got breadth={breadth} depth={depth}")
        self.model = get_model(model, backend)
        self.breadth, self.depth = int(breadth), int(depth)
        self.name = name or f"mav-is-b{breadth}d{depth}"
        self.fallback = MAVGreedyAgent(self.model, seed=seed, name=self.name + "-fallback")
        game = self.model.game
        self.games = (game,) if game else None
        self.stats = {"moves": 0, "from_trace": 0, "fallback": 0, "shape_ok": 0, "tokens": 0}
        self.last: Optional[Any] = None  # the last TraceResult

    def setup(self, game, *, seed=None, player=None):
        self.check_game(game)
        self.fallback.setup(game, seed=seed, player=player)

    def act(self, state):
        if state.is_terminal():
            raise AgentError(f"{self.name}: asked to move in a finished game {state.text()!r}")
        (prompt, out), = generate_traces(self.model, [state], self.breadth, self.depth)
        res = parse_trace(prompt + out.text, state)
        self.last = res
        self.stats["moves"] += 1
        self.stats["tokens"] += len(out.ids)
        self.stats["shape_ok"] += int(res.shape_ok)
        if res.final_legal:
            self.stats["from_trace"] += 1
            return res.final_move
        self.stats["fallback"] += 1
        return self.fallback.act(state)


def evaluate_trace_records(model: MAVModel, game: str, records: Sequence[Dict[str, Any]],
                           shapes: Sequence[Tuple[int, int]], batch_size: int = 32, board_size: int = 0
                           ) -> Dict[str, Any]:
    """Per shape "BxD" and over all: the fractions of TRACE_METRICS, the number of traces and the mean
    prompt + response tokens, on tree records (mavgame.model.search_data) cut to each shape."""
    from .search_data import record_tree
    tok = model.tokenizer
    trees = [record_tree(game, r, board_size) for r in records]
    report: Dict[str, Any] = {}
    everything = []
    for b, d in shapes:
        fits = [t for t in trees if t.breadth >= b and t.depth >= d]
        if not fits:
            continue
        traces = [write_trace(t, b, d) for t in fits]
        gens = generate_traces(model, [t.root for t in fits], b, d, batch_size)
        res = [parse_trace(p + o.text, t.root, choice=tr.choice) for t, tr, (p, o) in zip(fits, traces, gens)]
        m = trace_metrics(res)
        m["mean_tokens"] = float(np.mean([len(tok.encode(p)) + len(o.ids) for p, o in gens]))
        m["true_mean_tokens"] = float(np.mean([len(tok.encode(tr.text)) for tr in traces]))
        report[f"{b}x{d}"] = m
        everything += res
    if everything:
        report["all"] = trace_metrics(everything)
    return report


def _make_mav_is(model: Optional[str] = None, breadth: int = 2, depth: int = 1, backend: str = "auto",
                 **kw) -> MAVISAgent:
    return MAVISAgent(model, breadth=int(breadth), depth=int(depth), backend=backend, **kw)


register_agent("mav_is", _make_mav_is)
