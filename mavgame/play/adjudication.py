"""Engine adjudication of chess-family games: an engine evaluation past a margin ends the game."""
from __future__ import annotations

import os
from typing import Optional

from ..games import registry


def _check_uci_game(game: str) -> None:
    """Engine adjudication needs a game that UCI engines play (chess, Chess960)."""
    if not registry.get(game).uci:
        raise ValueError(f"engine adjudication is for games that UCI engines play "
                         f"({', '.join(g.name for g in registry.infos() if g.uci)}), not {game!r}")


class Adjudicator:
    """Ends chess-family games early by an engine evaluation.

    After each move (from ``min_ply`` on) the engine evaluates the position with ``nodes``; once the
    evaluation is decisive (at least ``margin_cp`` centipawns, or a mate score) for the same side
    ``plies`` times in a row, the game is scored as a win for that side (reason "adjudication").
    The engine starts in whichever process plays the game."""

    def __init__(self, margin_cp: int = 1200, *, plies: int = 1, engine: str = "stockfish", nodes: int = 20000,
                 min_ply: int = 0):
        if margin_cp <= 0:
            raise ValueError(f"margin_cp must be positive, not {margin_cp}")
        self.margin_cp = int(margin_cp)
        self.plies = int(plies)
        self.engine_path = engine
        self.nodes = int(nodes)
        self.min_ply = int(min_ply)
        self._engine = None
        self._pid = None
        self._streak = (0, 0)

    def to_dict(self) -> dict:
        return {"margin_cp": self.margin_cp, "plies": self.plies, "engine": self.engine_path, "nodes": self.nodes,
                "min_ply": self.min_ply}

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_engine"] = None
        return d

    def _eng(self, game: str):
        from ..engines.uci import UCIEngine
        if self._engine is not None and self._pid != os.getpid():
            self._engine = None  # inherited through fork: the parent's engine
        if self._engine is None or self._engine.closed:
            self._engine = UCIEngine(self.engine_path, options={"Threads": 1, "Hash": 16})
            self._pid = os.getpid()
        want = registry.get(game).uci_chess960
        if "uci_chess960" in self._engine.options and self._engine.option_value("UCI_Chess960") != (
                "true" if want else "false"):
            self._engine.set_option("UCI_Chess960", want)
        return self._engine

    def start(self, game: str) -> None:
        _check_uci_game(game)
        self._streak = (0, 0)
        self._eng(game).new_game()

    def check(self, state) -> Optional[str]:
        """"1-0" / "0-1" when the game is adjudicated after the last move, else None."""
        if len(state.history()) < self.min_ply:
            return None
        eng = self._eng(state.game)
        res = eng.go(state.text(), nodes=self.nodes)
        if res.score is None:
            return None
        cp = res.score.to_cp()
        if state.to_move == 1:
            cp = -cp  # White's view
        side = 1 if cp >= self.margin_cp else (-1 if cp <= -self.margin_cp else 0)
        prev_side, n = self._streak
        n = n + 1 if side != 0 and side == prev_side else (1 if side != 0 else 0)
        self._streak = (side, n)
        if side != 0 and n >= self.plies:
            return "1-0" if side > 0 else "0-1"
        return None

    def close(self) -> None:
        if self._engine is not None and self._pid == os.getpid():
            self._engine.close()
        self._engine = None
