"""Puzzles with known solutions and the AZdb paper's scoring (issue 19).

A puzzle is a position (the game's own text: Connect Four text or FEN) and its solution moves (the
game's move strings: columns "1".."7", UCI for chess); a player solves it when its move is one of
them (score 1, else 0: the paper's 0/1 score of one-move puzzles).  A team is scored per player,
by max-over-latents (the oracle: solved if any player's move solves it) and by each sub-additive
selection rule (:mod:`mavgame.az.subadditive`).

Two more kinds of solution, for the AZdb paper's own sets:

- a ``line`` (multi-step): the solver's move, the opponent's reply, the solver's next move...; the
  paper's multi-step score is 1 when the solver plays every one of its moves of the line (the
  opponent's moves are played from the line), else 0 (:func:`score_agent`);
- a ``result`` ("win", "draw" or "loss" for the side to move): the paper's Penrose score, 1 when the
  value predicted after a search lies within ``threshold`` (0.25 in the paper's main text, or 0.1) of
  1, 0.5 or 0 (:func:`score_values`; Stockfish as the evaluator: :func:`stockfish_values`).

Shipped (:data:`PUZZLE_SETS`, :func:`load_puzzle_set`): the paper's Penrose set (53 positions) and
Challenge set (15), extracted from its appendix tables with each FEN, the result its Solution column
gives, the side to play, the comment, and the move lines the comments spell out.

- :func:`generate_connect_four`: random positions whose side to move has exactly one winning move
  (the perfect solver, weak mode) that a plain search misses (``mcts:sims=N``, uniform prior and
  random playouts) - "hard" for search, known for the solver.
- :func:`generate_chess`: only-move tactics: positions from games of Stockfish at a small depth
  (a random pick among its top moves) where Stockfish at ``depth`` finds one move at least
  ``margin`` centipawns (or a mate) better than the second best, and the best is winning.
- :func:`load_puzzles` / :func:`save_puzzles`: CSV (``position,solutions[,id]``, solutions separated
  by spaces) and EPD (``bm`` in SAN, ``id``), e.g. the Lichess, STS or Penrose sets a user has.
- :func:`score_agent`, :func:`score_team`, :func:`score_values`.

Command: ``mavgame az-puzzles generate|score`` (:mod:`mavgame.cli.az_puzzles`); Stockfish on the shipped
sets: ``python -m mavgame.az.puzzles --set penrose --movetime 100``.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence

import numpy as np

from .. import State

__all__ = ["PUZZLE_SETS", "Puzzle", "RESULT_VALUES", "generate_connect_four", "generate_chess", "load_puzzle_set",
           "load_puzzles", "puzzle_set_path", "save_puzzles", "score_agent", "score_team", "score_values",
           "stockfish_values"]

#: the value of each ``result`` for the side to move (the paper's Penrose targets 1, 0.5, 0)
RESULT_VALUES: Dict[str, float] = {"win": 1.0, "draw": 0.5, "loss": 0.0}
_RESULT_WORDS = {"win": "win", "draw": "draw", "loss": "loss", "lose": "loss"}

#: shipped puzzle sets: name -> file in mavgame/data (the AZdb paper's appendix tables)
PUZZLE_SETS: Dict[str, str] = {"penrose": "puzzles_azdb_penrose.csv", "challenge": "puzzles_azdb_challenge.csv"}


@dataclass
class Puzzle:
    """``game``, ``position`` (the game's text), ``solutions`` (move strings: one of them solves a
    one-move puzzle), ``id``; ``line`` (a multi-step solution: the solver's and the opponent's moves
    alternating, the solver's first) and ``result`` ("win", "draw" or "loss" for the side to move)
    for puzzles solved over several moves or by a value; ``info``: any other fields."""
    game: str
    position: str
    solutions: List[str]
    id: str = ""
    info: Dict[str, object] = field(default_factory=dict)
    line: List[str] = field(default_factory=list)
    result: str = ""

    def state(self) -> State:
        return State(self.game, self.position)

    def solution_actions(self) -> List[int]:
        st = self.state()
        return [int(st.action_from_str(m)) for m in self.solutions]

    def line_actions(self) -> List[int]:
        """The line as actions, each checked legal after the ones before it (ValueError otherwise)."""
        return _line_actions(self.state(), self.line, "line")

    def target_value(self) -> Optional[float]:
        """The value of ``result`` for the side to move (1, 0.5, 0), or None without a result."""
        return RESULT_VALUES[self.result] if self.result else None

    def check(self) -> None:
        """ValueError unless the position parses, every solution and line move is legal (the line in
        sequence), the result is a known word and there is something to score."""
        self.solution_actions()
        self.line_actions()
        for key in ("sample_line",):
            if self.info.get(key):
                _line_actions(self.state(), str(self.info[key]).split(), key)
        if self.result and self.result not in RESULT_VALUES:
            raise ValueError(f"result {self.result!r} is not one of {', '.join(RESULT_VALUES)}")
        if not (self.solutions or self.line or self.result):
            raise ValueError("a puzzle needs solutions, a line or a result")


def _line_actions(st: State, moves: Sequence[str], what: str) -> List[int]:
    out = []
    for i, m in enumerate(moves):
        try:
            a = int(st.action_from_str(m))
        except ValueError as e:
            raise ValueError(f"{what} move {i + 1} {m!r} is not legal there: {e}") from None
        if not st.is_legal(a):
            raise ValueError(f"{what} move {i + 1} {m!r} is not legal there")
        out.append(a)
        st.push(a)
    return out


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


def puzzle_set_path(name: str) -> str:
    """Path of a shipped puzzle set (:data:`PUZZLE_SETS`; ValueError naming them otherwise)."""
    from ..games.registry import DATA
    if name not in PUZZLE_SETS:
        raise ValueError(f"no shipped puzzle set {name!r} (have {', '.join(PUZZLE_SETS)})")
    return str(DATA / PUZZLE_SETS[name])


def load_puzzle_set(name: str) -> List[Puzzle]:
    """A shipped puzzle set: ``penrose`` or ``challenge`` (the AZdb paper's, see the files' headers)."""
    return load_puzzles(puzzle_set_path(name))


_COLUMNS = ("position", "solutions", "id", "result", "line")


def load_puzzles(path: str, game: Optional[str] = None) -> List[Puzzle]:
    """Puzzles from a CSV (``position,solutions[,id]``; a header whose first field is ``position`` or
    ``position:<game>`` names the game and may name more columns: ``result``, ``line`` and any others,
    kept in ``info``; lines starting with ``#`` before it are comments) or an EPD file (chess: FEN
    fields, ``bm`` SAN moves, ``id``).  Every solution must be a legal move of its position and every
    line legal in sequence (ValueError naming the line otherwise)."""
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
        text = f.read().splitlines()
    skipped = 0
    while skipped < len(text) and text[skipped].lstrip().startswith("#"):
        skipped += 1
    rows = list(csv.reader(text[skipped:]))
    names = list(_COLUMNS[:3])
    if rows and rows[0] and rows[0][0].strip().lower().startswith("position"):
        header = [h.strip() for h in rows.pop(0)]
        head = header[0]
        if ":" in head and game is None:
            game = head.split(":", 1)[1].strip()
        names = ["position"] + [h.lower() for h in header[1:]]
        skipped += 1
    if game is None:
        raise ValueError(f"{path}: name the game (header 'position:<game>' or game=...)")
    for ln, row in enumerate(rows, skipped + 1):
        if not row or not row[0].strip():
            continue
        f = {k: (row[i].strip() if i < len(row) else "") for i, k in enumerate(names)}
        if not any(f.get(k) for k in ("solutions", "line", "result")):
            raise ValueError(f"{path}:{ln}: need position,solutions[,id] (or a line or result column), got {row!r}")
        res = f.get("result", "")
        if res and res.lower() not in _RESULT_WORDS:
            raise ValueError(f"{path}:{ln}: result {res!r} is not one of Win, Draw, Loss (Lose)")
        p = Puzzle(game, f["position"], f.get("solutions", "").split(), id=f.get("id") or str(ln),
                   info={k: v for k, v in f.items() if k not in _COLUMNS and v},
                   line=f.get("line", "").split(), result=_RESULT_WORDS[res.lower()] if res else "")
        try:
            p.check()
        except ValueError as e:
            raise ValueError(f"{path}:{ln}: {e}") from None
        out.append(p)
    return out


def _action(st: State, move) -> int:
    """An agent's answer (an action or a move string) as an action of ``st``."""
    return int(st.action_from_str(move)) if isinstance(move, str) else int(move)


def score_agent(agent, puzzles: Sequence[Puzzle], progress: bool = False) -> np.ndarray:
    """0/1 per puzzle: the agent's move (one ``act`` from a fresh ``setup``) is a solution; for a puzzle
    with a ``line`` (and no solutions), the paper's multi-step score: 1 when the agent plays each of
    its moves of the line in turn, the opponent's replies taken from the line.  A puzzle with only a
    ``result`` is scored by a value (:func:`score_values`): ValueError here."""
    only = [p.id for p in puzzles if not p.solutions and not p.line]
    if only:
        raise ValueError(f"{len(only)} puzzle(s) ({', '.join(only[:3])}...) have only a result, no moves: "
                         "score them by value (mavgame.az.puzzles.score_values / stockfish_values)")
    bar = _bar(len(puzzles), "puzzles", progress)
    out = np.zeros(len(puzzles), np.int8)
    for k, p in enumerate(puzzles):
        st = p.state()
        if hasattr(agent, "setup"):
            agent.setup(p.game, seed=k)
        if p.solutions:
            out[k] = _action(st, agent.act(st)) in p.solution_actions()
        else:
            line = p.line_actions()
            ok = True
            for i in range(0, len(line), 2):
                if _action(st, agent.act(st)) != line[i]:
                    ok = False
                    break
                for a in line[i:i + 2]:
                    st.push(a)
            out[k] = ok
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out


def score_team(team, puzzles: Sequence[Puzzle], rules: Sequence[str] = ("visits", "value", "lcb", "gap"),
               progress: bool = False) -> Dict[str, np.ndarray]:
    """0/1 per puzzle for each player (``player<i>``), ``max_over_latents`` and each rule, from one
    search per player and puzzle (``team``: an AZdb team, :class:`mavgame.agents.alphazero.AZdbTeam`, or
    a team of separate single checkpoints, :class:`mavgame.az.checkpoint_team.CheckpointTeam`: anything
    with ``searches(state)``); ``chosen_<rule>`` holds the player each rule picked and ``moves`` (puzzles,
    players) each player's move (an action)."""
    from .subadditive import select_player
    moveless = [p.id for p in puzzles if not p.solutions]
    if moveless:
        raise ValueError(f"score_team scores one-move puzzles; {len(moveless)} have no solution moves "
                         f"({', '.join(moveless[:3])}...)")
    bar = _bar(len(puzzles), "team puzzles", progress)
    res: Dict[str, List[int]] = {}
    for p in puzzles:
        sols = set(p.solution_actions())
        ss = team.searches(p.state())
        moves = [s.best_action() for s in ss]
        res.setdefault("moves", []).append(moves)
        solved = [a in sols for a in moves]
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


def score_values(values: Iterable[Optional[float]], puzzles: Sequence[Puzzle], threshold: float = 0.25) -> np.ndarray:
    """The paper's Penrose score, 0/1 per puzzle: the predicted value (for the side to move, in [0, 1])
    lies within ``threshold`` of the puzzle's result value (1 win, 0.5 draw, 0 loss).  A value of None
    (no prediction: an engine that failed) scores 0."""
    vals = list(values)
    if len(vals) != len(puzzles):
        raise ValueError(f"{len(vals)} values for {len(puzzles)} puzzles")
    out = np.zeros(len(puzzles), np.int8)
    for k, (v, p) in enumerate(zip(vals, puzzles)):
        t = p.target_value()
        if t is None:
            raise ValueError(f"puzzle {p.id!r} has no result to score a value against")
        out[k] = v is not None and abs(float(v) - t) <= threshold
    return out


def stockfish_values(puzzles: Sequence[Puzzle], movetime: int = 100, engine: Optional[str] = None,
                     hash_mb: int = 16, on_result: Optional[Callable[[Puzzle, dict], None]] = None) -> List[dict]:
    """Stockfish's value of each chess puzzle's position for the side to move (``movetime`` ms a
    position, 1 thread, ``ucinewgame`` before each): its WDL (``UCI_ShowWDL``) as (W + D/2) / 1000 when
    the engine sends one, else its score through the MAV win-probability formula (mates 1 / 0).  Returns
    one dict per puzzle: ``value`` (None when the engine failed on the position: it is restarted),
    ``cp``, ``mate``, ``wdl``, ``depth``, ``bestmove``, ``error``."""
    from ..engines.uci import UCIEngine, find_stockfish
    from ..engines.uci_protocol import EngineError
    path = engine or find_stockfish()
    if path is None:
        raise FileNotFoundError("no Stockfish (put it on PATH, e.g. /usr/games, or set MAVGAME_STOCKFISH)")

    def start() -> UCIEngine:
        e = UCIEngine(path, options={"Threads": 1, "Hash": hash_mb})
        if "uci_showwdl" in e.options:
            e.set_option("UCI_ShowWDL", True)
        return e

    out: List[dict] = []
    eng = start()
    try:
        for p in puzzles:
            rec: dict = {"id": p.id, "value": None, "cp": None, "mate": None, "wdl": None, "depth": None,
                         "bestmove": None, "error": None}
            try:
                eng.new_game()
                r = eng.go(p.position, movetime=movetime)
                line = r.lines[0] if r.lines else None
                rec["bestmove"] = r.bestmove
                if line is not None and line.score is not None:
                    rec.update(cp=line.score.cp, mate=line.score.mate, depth=line.depth,
                               wdl=list(line.wdl) if line.wdl else None)
                    if line.wdl:
                        w, d, _ = line.wdl
                        rec["value"] = (w + 0.5 * d) / sum(line.wdl)
                    else:
                        rec["value"] = line.score.win_prob()
            except (EngineError, OSError) as e:
                rec["error"] = f"{type(e).__name__}: {e}"
                eng.close()
                eng = start()
            out.append(rec)
            if on_result is not None:
                on_result(p, rec)
    finally:
        eng.close()
    return out


def _main(argv=None) -> int:
    import argparse
    import json
    import time
    ap = argparse.ArgumentParser(prog="python -m mavgame.az.puzzles",
                                 description="Score Stockfish on a puzzle set: the paper's value score on puzzles "
                                             "with a result (thresholds 0.25 and 0.1) and its multi-step score on "
                                             "puzzles with a line (the stockfish agent at the same movetime).")
    ap.add_argument("--set", default="penrose", help=f"a shipped set ({', '.join(PUZZLE_SETS)}) or a CSV/EPD file")
    ap.add_argument("--movetime", type=int, default=100, help="milliseconds a position (default 100)")
    ap.add_argument("--engine", default=None, help="Stockfish binary (default: found on PATH or /usr/games)")
    ap.add_argument("--json", default=None, help="write every puzzle's record to this JSON file")
    a = ap.parse_args(argv)
    ps = load_puzzle_set(a.set) if a.set in PUZZLE_SETS else load_puzzles(a.set)
    t0 = time.perf_counter()
    valued = [p for p in ps if p.result]
    recs = stockfish_values(valued, movetime=a.movetime, engine=a.engine)
    report: dict = {"set": a.set, "puzzles": len(ps), "movetime_ms": a.movetime, "records": recs}
    from ..engines.uci_protocol import Score
    by_cp = [None if r["cp"] is None and r["mate"] is None else Score(r["cp"], r["mate"]).win_prob() for r in recs]
    for th in (0.25, 0.1):
        for what, vals in (("WDL", [r["value"] for r in recs]), ("score, MAV formula", by_cp)):
            sc = score_values(vals, valued, threshold=th)
            report[f"value_{'wdl' if what == 'WDL' else 'cp'}_{th}"] = int(sc.sum())
            print(f"{a.set}: value ({what}) within {th} of the result: {int(sc.sum())}/{len(valued)} "
                  f"({100.0 * sc.mean():.1f}%)")
    failed = [r["id"] for r in recs if r["value"] is None]
    if failed:
        print(f"  no value (the engine failed) on {len(failed)}: {', '.join(failed)}")
    lined = [p for p in ps if p.line or p.solutions]
    if lined:
        from ..agents import make_agent
        with make_agent(f"stockfish:movetime={a.movetime}") as ag:
            sc = score_agent(ag, lined)
        report["line_ids"] = [p.id for p in lined]
        report["line_scores"] = sc.tolist()
        print(f"{a.set}: move solutions found (a one-move solution, or every move of a line): {int(sc.sum())}/{len(lined)} "
              f"({', '.join(f'{p.id}={int(v)}' for p, v in zip(lined, sc))})")
    print(f"({time.perf_counter() - t0:.0f} s)")
    if a.json:
        for r, p in zip(recs, valued):
            r["result"] = p.result
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
