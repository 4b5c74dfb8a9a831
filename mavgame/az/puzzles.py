"""Puzzles with known solutions and the AZdb paper's scoring (issue 19).

A puzzle is a position (the game's own text: Connect Four text or FEN) and its solution moves (the
game's move strings: columns "1".."7", UCI for chess); a player solves it when its move is one of
them (score 1, else 0: the paper's 0/1 score of one-move puzzles).  A team is scored per player,
by max-over-latents (the oracle: solved if any player's move solves it) and by each sub-additive
selection rule (:mod:`mavgame.az.subadditive`).

- :func:`generate_connect_four`: random positions whose side to move has exactly one winning move
  (the perfect solver, weak mode) that a plain search misses (``mcts:sims=N``, uniform prior and
  random playouts) - "hard" for search, known for the solver.
- :func:`generate_chess`: only-move tactics: positions from games of Stockfish at a small depth
  (a random pick among its top moves) where Stockfish at ``depth`` finds one move at least
  ``margin`` centipawns (or a mate) better than the second best, and the best is winning.
- :func:`load_puzzles` / :func:`save_puzzles`: CSV (``position,solutions[,id]``, solutions separated
  by spaces) and EPD (``bm`` in SAN, ``id``), e.g. the Lichess, STS or Penrose sets a user has.
- :func:`score_agent`, :func:`score_team`.

Command: ``mavgame az-puzzles generate|score`` (:mod:`mavgame.cli.az_puzzles`).
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np

from .. import State

__all__ = ["Puzzle", "generate_connect_four", "generate_chess", "load_puzzles", "save_puzzles", "score_agent",
           "score_team"]


@dataclass
class Puzzle:
    """``game``, ``position`` (the game's text), ``solutions`` (move strings), ``id``."""
    game: str
    position: str
    solutions: List[str]
    id: str = ""
    info: Dict[str, object] = field(default_factory=dict)

    def state(self) -> State:
        return State(self.game, self.position)

    def solution_actions(self) -> List[int]:
        st = self.state()
        return [int(st.action_from_str(m)) for m in self.solutions]


def _bar(total, desc, progress):
    if not progress:
        return None
    from .._progress import tqdm
    return tqdm(total=total, desc=desc, unit="puzzle")


def generate_connect_four(count: int, *, min_plies: int = 8, max_plies: int = 24, plain_sims: int = 200,
                          seed: int = 0, max_seconds: float = 2.0, max_tries: int = 0,
                          progress: bool = False) -> List[Puzzle]:
    """``count`` Connect Four puzzles: a random position (uniformly random moves, ``min_plies`` to
    ``max_plies`` of them) is kept when the solver (weak, at most ``max_seconds``) finds exactly one
    winning move for the side to move and ``mcts:sims=plain_sims`` plays another move."""
    from ..games.connect_four import ConnectFour
    from ..agents import make_agent
    if count < 1 or not 0 <= min_plies <= max_plies or plain_sims < 1:
        raise ValueError(f"need count >= 1, 0 <= min_plies <= max_plies, plain_sims >= 1 (count {count}, plies "
                         f"{min_plies}..{max_plies}, plain_sims {plain_sims})")
    rng = np.random.default_rng(seed)
    plain = make_agent(f"mcts:sims={plain_sims}")
    out: List[Puzzle] = []
    seen = set()
    tries = 0
    bar = _bar(count, "connect four puzzles", progress)
    while len(out) < count:
        tries += 1
        if max_tries and tries > max_tries:
            break
        st = State("connect_four")
        moves = ""
        for _ in range(int(rng.integers(min_plies, max_plies + 1))):
            if st.is_terminal():
                break
            a = int(rng.choice(st.legal_actions()))
            moves += st.action_to_str(a)
            st.push(a)
        if st.is_terminal() or st.text() in seen:
            continue
        seen.add(st.text())
        r = ConnectFour(moves=moves).solve(weak=True, max_seconds=max_seconds)
        if not r.complete:
            continue
        wins = [m for m, v in r.move_scores.items() if v > 0]
        if len(wins) != 1:
            continue
        plain.setup("connect_four", seed=int(rng.integers(1 << 30)))
        pm = st.action_to_str(int(plain.act(st)))
        if pm in wins:
            continue
        out.append(Puzzle("connect_four", st.text(), wins, id=f"c4-{seed}-{len(out)}",
                          info={"moves": moves, "plain_move": pm}))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out


def generate_chess(count: int, *, depth: int = 10, margin: int = 200, play_depth: int = 4, top: int = 3,
                   seed: int = 0, engine: str = "stockfish", max_games: int = 0, progress: bool = False) -> List[Puzzle]:
    """``count`` chess only-move puzzles verified by Stockfish (``engine``, found on PATH or a path) at
    ``depth``: the side to move is winning (mate, or at least +``margin`` centipawns) with its best move
    and the second best is ``margin`` centipawns worse (or the only legal move is excluded).  Positions come
    from games of the engine at ``play_depth`` playing a random one of its ``top`` moves."""
    import shutil

    import chess
    import chess.engine
    path = shutil.which(engine) or (engine if os.path.exists(engine) else None)
    if path is None:
        raise FileNotFoundError(f"no chess engine {engine!r} (put Stockfish on PATH, e.g. /usr/games)")
    rng = np.random.default_rng(seed)
    out: List[Puzzle] = []
    bar = _bar(count, "chess puzzles", progress)
    games = 0
    eng = chess.engine.SimpleEngine.popen_uci(path)
    try:
        while len(out) < count and (not max_games or games < max_games):
            games += 1
            board = chess.Board()
            while not board.is_game_over() and board.ply() < 160 and len(out) < count:
                infos = eng.analyse(board, chess.engine.Limit(depth=play_depth), multipv=top)
                if board.ply() >= 10 and len(list(board.legal_moves)) > 1:
                    p = _only_move(eng, board, depth, margin)
                    if p is not None:
                        out.append(Puzzle("chess", board.fen(), [p], id=f"chess-{seed}-{len(out)}"))
                        if bar is not None:
                            bar.update(1)
                pick = infos[int(rng.integers(len(infos)))]["pv"][0]
                board.push(pick)
    finally:
        eng.quit()
        if bar is not None:
            bar.close()
    return out


def _only_move(eng, board, depth: int, margin: int) -> Optional[str]:
    import chess.engine
    infos = eng.analyse(board, chess.engine.Limit(depth=depth), multipv=2)
    if len(infos) < 2:
        return None
    s1 = infos[0]["score"].pov(board.turn).score(mate_score=100000)
    s2 = infos[1]["score"].pov(board.turn).score(mate_score=100000)
    if s1 is None or s2 is None or s1 < margin or s1 - s2 < margin:
        return None
    return infos[0]["pv"][0].uci()


def save_puzzles(puzzles: Sequence[Puzzle], path: str) -> str:
    """Write ``position,solutions,id`` CSV (header ``game:<name>``-tagged in the first column's name)."""
    if not puzzles:
        raise ValueError("no puzzles to save")
    game = puzzles[0].game
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([f"position:{game}", "solutions", "id"])
        for p in puzzles:
            w.writerow([p.position, " ".join(p.solutions), p.id])
    return path


def load_puzzles(path: str, game: Optional[str] = None) -> List[Puzzle]:
    """Puzzles from a CSV (``position,solutions[,id]``; a header whose first field is ``position`` or
    ``position:<game>`` names the game) or an EPD file (chess: FEN fields, ``bm`` SAN moves, ``id``).
    Every solution must be a legal move of its position (ValueError naming the line otherwise)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"no puzzle file {path!r}")
    out: List[Puzzle] = []
    if path.lower().endswith(".epd"):
        import chess
        with open(path, encoding="utf-8") as f:
            for ln, line in enumerate(f, 1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                try:
                    board, ops = chess.Board.from_epd(line.strip())
                    bms = ops.get("bm")
                    if not bms:
                        raise ValueError("no bm operation")
                    sols = [m.uci() for m in bms]
                except ValueError as e:
                    raise ValueError(f"{path}:{ln}: not an EPD puzzle ({e}): {line.strip()!r}") from None
                out.append(Puzzle("chess", board.fen(), sols, id=str(ops.get("id", f"{ln}"))))
        return out
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if rows and rows[0] and rows[0][0].strip().lower().startswith("position"):
        head = rows.pop(0)[0].strip()
        if ":" in head and game is None:
            game = head.split(":", 1)[1].strip()
    if game is None:
        raise ValueError(f"{path}: name the game (header 'position:<game>' or game=...)")
    for ln, row in enumerate(rows, 2):
        if not row or not row[0].strip():
            continue
        if len(row) < 2 or not row[1].split():
            raise ValueError(f"{path}:{ln}: need position,solutions[,id], got {row!r}")
        p = Puzzle(game, row[0].strip(), row[1].split(), id=row[2].strip() if len(row) > 2 else str(ln))
        try:
            p.solution_actions()
        except ValueError as e:
            raise ValueError(f"{path}:{ln}: {e}") from None
        out.append(p)
    return out


def score_agent(agent, puzzles: Sequence[Puzzle], progress: bool = False) -> np.ndarray:
    """0/1 per puzzle: the agent's move (one ``act`` from a fresh ``setup``) is a solution."""
    bar = _bar(len(puzzles), "puzzles", progress)
    out = np.zeros(len(puzzles), np.int8)
    for k, p in enumerate(puzzles):
        st = p.state()
        if hasattr(agent, "setup"):
            agent.setup(p.game, seed=k)
        out[k] = int(agent.act(st)) in p.solution_actions()
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out


def score_team(team, puzzles: Sequence[Puzzle], rules: Sequence[str] = ("visits", "value", "lcb", "gap"),
               progress: bool = False) -> Dict[str, np.ndarray]:
    """0/1 per puzzle for each player (``player<i>``), ``max_over_latents`` and each rule, from one
    search per player and puzzle (``team``: :class:`mavgame.agents.alphazero.AZdbTeam`); ``chosen_<rule>``
    holds the player each rule picked."""
    from .subadditive import select_player
    bar = _bar(len(puzzles), "team puzzles", progress)
    res: Dict[str, List[int]] = {}
    for p in puzzles:
        sols = set(p.solution_actions())
        ss = team.searches(p.state())
        solved = [s.best_action() in sols for s in ss]
        for i, ok in enumerate(solved):
            res.setdefault(f"player{i}", []).append(int(ok))
        res.setdefault("max_over_latents", []).append(int(any(solved)))
        for r in rules:
            j, a = select_player(ss, r)
            res.setdefault(r, []).append(int(a in sols))
            res.setdefault(f"chosen_{r}", []).append(j)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return {k: np.asarray(v) for k, v in res.items()}
