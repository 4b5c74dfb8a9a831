"""AZdb's per-opening player lookup (the paper's appendix C.5, Table 3, Figures 20-22): sub-additive
planning in matches, where the outcome is not known when the player is chosen.

Every player of the team plays every opening, as white and as black, against a reference opponent (the
paper's AlphaZero) for several seeds; :class:`LookupTable` holds the mean score of each (opening, colour,
player) over those seeds (+1 win, 0 draw, -1 loss, the paper's [-1, 1]) and maps each (opening, colour) to
the player with the best score (ties: the lower index).  ``azdb:...,select=lookup,table=PATH`` plays
that player's moves for the whole game (:class:`mavgame.agents.alphazero.AZdbAgent`).

:func:`leave_one_seed_out` is the paper's evaluation: for each seed, the table built from the other
seeds picks the player, scored on the held-out seed's game; against it the best single player (the
"best latent") and max-over-latents (the oracle that picks after the game).

An opening is its start text (``State.root_text()``) and its moves; a game position belongs to the
table's longest opening whose text is the game's start text and whose moves begin the game's history.
Building the table (plays the games): ``python -m mavgame.analysis.azdb_lookup``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._atomic import write_bytes_atomic

__all__ = ["LOOKUP_FORMAT", "LookupTable", "leave_one_seed_out"]

LOOKUP_FORMAT = "mavgame-azdb-lookup-1"
COLOURS = ("white", "black")


@dataclass
class LookupTable:
    """``scores`` (openings, 2 colours, players, seeds): each game's score for the team's player (NaN:
    not played); ``openings``: (start text or None, moves) per opening, moves as the game's move strings."""
    game: str
    openings: List[Tuple[Optional[str], Tuple[str, ...]]]
    names: List[str]
    scores: np.ndarray
    meta: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        self.scores = np.asarray(self.scores, np.float64)
        if self.scores.ndim != 4 or self.scores.shape[0] != len(self.openings) or self.scores.shape[1] != 2:
            raise ValueError(f"lookup scores must be (openings {len(self.openings)}, 2, players, seeds), not shape "
                             f"{self.scores.shape}")
        if len(self.names) != len(self.openings):
            raise ValueError(f"{len(self.names)} opening names for {len(self.openings)} openings")
        bad = self.scores[np.isfinite(self.scores) & (np.abs(self.scores) > 1)]
        if bad.size:
            raise ValueError(f"a game score must be in [-1, 1], not {bad[0]!r}")

    @property
    def players(self) -> int:
        return int(self.scores.shape[2])

    def means(self, seeds: Optional[Sequence[int]] = None) -> np.ndarray:
        """Mean score of each (opening, colour, player) over ``seeds`` (default all; NaN where none played)."""
        s = self.scores if seeds is None else self.scores[..., list(seeds)]
        with np.errstate(invalid="ignore"):
            return np.nanmean(s, axis=3) if s.shape[3] else np.full(s.shape[:3], np.nan)

    def best(self, seeds: Optional[Sequence[int]] = None) -> np.ndarray:
        """(openings, 2): the player with the best mean score per opening and colour (ties and unplayed:
        the lower index)."""
        m = np.nan_to_num(self.means(seeds), nan=-np.inf)
        return np.argmax(m, axis=2)

    def opening_of(self, root_text: str, history: Sequence[int], start_text: Optional[str] = None) -> int:
        """The index of the longest opening that the game (start text ``root_text``, actions ``history``)
        began with, or -1.  ``start_text``: the game's default start text (for openings stored as None)."""
        from .. import State
        best, best_len = -1, -1
        for k, (text, moves) in enumerate(self.openings):
            t = text if text is not None else start_text
            if t is not None and t != root_text:
                continue
            if len(moves) > len(history) or len(moves) <= best_len:
                continue
            s = State(self.game, text) if text is not None else State(self.game)
            ok = True
            for m, a in zip(moves, history):
                if s.action_from_str(m) != int(a):
                    ok = False
                    break
                s.push(int(a))
            if ok:
                best, best_len = k, len(moves)
        return best

    def player_for(self, state, colour: int) -> Optional[int]:
        """The table's player for the game of ``state`` (its opening) playing ``colour`` (0 white / first,
        1 black / second); None when the game began with none of the table's openings."""
        from .. import State
        if colour not in (0, 1):
            raise ValueError(f"colour must be 0 (first player) or 1 (second), not {colour!r}")
        start = State(self.game).root_text()
        k = self.opening_of(state.root_text(), [int(a) for a in state.history()], start)
        return None if k < 0 else int(self.best()[k, colour])

    # ---- files ----------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        means = self.means()
        best = self.best()
        rows = []
        for k, (text, moves) in enumerate(self.openings):
            rows.append({"name": self.names[k], "text": text, "moves": list(moves),
                         **{f"{c}_mean": [None if not np.isfinite(x) else round(float(x), 4) for x in means[k, ci]]
                            for ci, c in enumerate(COLOURS)},
                         **{f"{c}_best": int(best[k, ci]) for ci, c in enumerate(COLOURS)},
                         "scores": [[[None if not np.isfinite(x) else float(x) for x in self.scores[k, ci, j]]
                                     for j in range(self.players)] for ci in range(2)]})
        return {"format": LOOKUP_FORMAT, "game": self.game, "players": self.players,
                "seeds": int(self.scores.shape[3]), "meta": self.meta, "openings": rows}

    def save(self, path: str) -> str:
        write_bytes_atomic(path, json.dumps(self.to_dict(), indent=1).encode("utf-8"))
        return path

    @classmethod
    def from_dict(cls, d: Dict[str, Any], source: str = "<dict>") -> "LookupTable":
        if not isinstance(d, dict) or d.get("format") != LOOKUP_FORMAT:
            got = d.get("format") if isinstance(d, dict) else type(d).__name__
            raise ValueError(f"{source}: not an AZdb lookup table (format {got!r}, expected {LOOKUP_FORMAT!r})")
        rows = d["openings"]
        scores = np.array([[[[np.nan if x is None else x for x in seeds] for seeds in col] for col in r["scores"]]
                           for r in rows], np.float64).reshape(len(rows), 2, int(d["players"]), int(d["seeds"]))
        return cls(d["game"], [(r.get("text"), tuple(r["moves"])) for r in rows], [r["name"] for r in rows], scores,
                   dict(d.get("meta") or {}))

    @classmethod
    def load(cls, path: str) -> "LookupTable":
        try:
            with open(path, encoding="utf-8") as f:
                d = json.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(f"no AZdb lookup table at {path!r} (build one: python -m "
                                    "mavgame.analysis.azdb_lookup)") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"{path!r} is not JSON: {e}") from None
        return cls.from_dict(d, repr(path))


def leave_one_seed_out(table: LookupTable) -> Dict[str, Any]:
    """The paper's C.5 evaluation: mean score (and win rate (score + 1) / 2) over all (opening, colour,
    seed) games of each player, of max-over-latents, and of the lookup chosen without the held-out seed.
    Each value comes with its 95 % interval half-width (normal, over the games)."""
    s = table.scores
    n_seeds = s.shape[3]
    if n_seeds < 2:
        raise ValueError(f"leave-one-seed-out needs at least 2 seeds, the table has {n_seeds}")
    chosen = []
    for held in range(n_seeds):
        best = table.best([k for k in range(n_seeds) if k != held])          # (openings, 2)
        o, c = np.indices(best.shape)
        chosen.append(s[o, c, best, held])
    chosen = np.stack(chosen, axis=-1)                                        # (openings, 2, seeds)

    def stat(x: np.ndarray) -> Dict[str, float]:
        x = x[np.isfinite(x)]
        half = 1.96 * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
        return {"score": round(float(x.mean()), 4), "score_95": round(float(half), 4),
                "win_rate": round(float((x.mean() + 1) / 2), 4), "games": int(len(x))}

    per = [stat(s[:, :, j, :]) for j in range(table.players)]
    return {"players": per, "best_latent": int(np.argmax([p["score"] for p in per])),
            "max_over_latents": stat(np.nanmax(s, axis=2)), "lookup": stat(chosen),
            "per_colour": {c: {"players": [stat(s[:, ci, j, :]) for j in range(table.players)],
                               "lookup": stat(chosen[:, ci])} for ci, c in enumerate(COLOURS)}}
