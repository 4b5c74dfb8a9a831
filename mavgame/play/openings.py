"""Opening sets for leagues, shipped with the package in ``mavgame/data/openings_<game>.txt``.

File format: one opening per line, ``name | moves | note``; ``moves`` are the game's own move
strings separated by spaces (UCI for chess, columns 1..7 for Connect Four, cells for Hex); the
note is free text (how the opening was judged balanced).  Lines starting with ``#`` are comments.
An optional ``fen=<text>`` field before the moves gives a start position other than the game's.

What is shipped (see the header of each file for the details):

- chess: named main lines of well-known openings (6 to 14 plies), written as UCI move lists and
  kept when Stockfish 15.1 evaluates the position after them within +-0.70 pawns;
- connect_four: 10-ply openings from UCT self-play with random first moves, kept when the perfect
  solver shows that the winner needs nearly all its stones (``|score| <= 4``) or that the game is a
  draw, so neither side wins quickly;
- hex (11x11, no swap): single first stones on the two outermost rows and columns, chosen by hand
  (not judged by an engine: a 20000-simulation random-playout UCT values every first move close to
  0.5 on 11x11, see :func:`hex_candidates`); central first moves, which win on the solved sizes,
  are left out;
- tic-tac-toe: the three kinds of first move (centre, corner, edge).

Named sets beside a game's default file (:func:`opening_sets`, ``load_openings(game, name=...)``,
``mavgame league --openings NAME``): chess ``tcec``, the MAV paper's TCEC opening book (its appendix
G: 586 positions given as FENs, with the paper's names and scores in the notes).

Chess960 uses random start positions instead (:meth:`mavgame.play.league.League.chess960`); any game
can use :func:`random_openings`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np

from .. import _core
from ..games import registry
from .records import Opening

__all__ = ["load_openings", "opening_set_path", "opening_sets", "openings_path", "parse_openings",
           "random_openings", "write_openings"]

DATA = registry.DATA

def opening_sets(game: str) -> Dict[str, Path]:
    """The named opening sets shipped beside a game's default file: ``mavgame/data/openings_<game>_<name>.txt``
    (found by name, so a new set is a new file), as ``{name: path}``.  A number after the game is a board size
    (``openings_hex_11.txt``: the default file of 11x11 Hex), not a set."""
    prefix = f"openings_{game}_"
    sets = {f.stem[len(prefix):]: f for f in sorted(DATA.glob(prefix + "*.txt"))}
    return {name: f for name, f in sets.items() if not name.isdigit()}


def opening_set_path(game: str, name: str) -> Path:
    """Path of the shipped opening set ``name`` of ``game`` (ValueError naming the sets there are)."""
    sets = opening_sets(game)
    if name not in sets:
        have = ", ".join(sorted(sets)) or "none"
        raise ValueError(f"no opening set {name!r} for {game} (named sets: {have})")
    return sets[name]


def openings_path(game: str, board_size: int = 0) -> Path:
    """Path of the shipped opening file of a game (Hex: per board size, default 11), from the game
    registry (``GameInfo.openings``); a game without one gets ``openings_<game>.txt``, which does not exist."""
    return registry.get(game).openings_path(board_size) or DATA / f"openings_{game}.txt"


def parse_openings(text: str, game: str, board_size: int = 0, flags: int = 0, source: str = "<text>",
                   check: bool = True) -> List[Opening]:
    """Openings from the text of an opening file (legality checked unless ``check=False``)."""
    out: List[Opening] = []
    names = set()
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        parts = [p.strip() for p in s.split("|")]
        if len(parts) < 2:
            raise ValueError(f"{source}:{lineno}: expected 'name | moves | note', got {s!r}")
        name = parts[0]
        rest = parts[1:]
        fen = None
        if rest and rest[0].startswith("fen="):
            fen = rest[0][4:].strip()
            rest = rest[1:]
        moves = tuple(rest[0].split()) if rest else ()
        if not name:
            raise ValueError(f"{source}:{lineno}: an opening needs a name")
        if name in names:
            raise ValueError(f"{source}:{lineno}: duplicate opening name {name!r}")
        names.add(name)
        op = Opening(name, moves, fen)
        if check:
            try:
                op.state(game, board_size, flags)
            except ValueError as e:
                raise ValueError(f"{source}:{lineno}: {e}") from None
        out.append(op)
    return out


def load_openings(game: str, board_size: int = 0, flags: int = 0, path: Optional[str] = None,
                  check: bool = True, name: Optional[str] = None) -> List[Opening]:
    """The shipped openings of a game (or those of the file ``path``, or of the shipped named set
    ``name``, see :func:`opening_sets`); [] if the game ships none."""
    if path and name:
        raise ValueError("give an opening file or a named set, not both")
    if name:
        path = str(opening_set_path(game, name))
    p = Path(path) if path else openings_path(game, board_size)
    if not p.exists():
        if path:
            raise FileNotFoundError(f"opening file {path} not found")
        return []
    return parse_openings(p.read_text(encoding="utf-8"), game, board_size, flags, source=str(p), check=check)


def write_openings(path: str, openings: Sequence[Opening], notes: Optional[Sequence[str]] = None,
                   header: str = "") -> None:
    """Write openings in the file format (``notes`` one per opening)."""
    with open(path, "w") as f:
        for line in header.splitlines():
            f.write(f"# {line}".rstrip() + "\n")
        for i, o in enumerate(openings):
            fields = [o.name]
            if o.text:
                fields.append(f"fen={o.text}")
            fields.append(" ".join(o.moves))
            if notes is not None:
                fields.append(notes[i])
            f.write(" | ".join(fields) + "\n")


def random_openings(game: str, plies: int, n: int, seed: int = 0, board_size: int = 0, flags: int = 0,
                    max_tries: int = 100_000) -> List[Opening]:
    """n distinct openings of ``plies`` uniformly random moves that do not end the game."""
    if plies < 0 or n < 1:
        raise ValueError(f"need plies >= 0 and n >= 1, got plies={plies}, n={n}")
    rng = np.random.default_rng(seed)
    seen = set()
    out: List[Opening] = []
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > max_tries:
            raise ValueError(f"could not find {n} distinct {plies}-ply openings of {game!r} "
                             f"(found {len(out)})")
        s = _core.State(game, None, board_size, flags)
        moves = []
        ok = True
        for _ in range(plies):
            acts = s.legal_actions()
            if acts.size == 0:
                ok = False
                break
            a = int(acts[rng.integers(acts.size)])
            moves.append(s.action_to_str(a))
            s.push(a)
            if s.is_terminal():
                ok = False
                break
        key = tuple(moves)
        if not ok or key in seen:
            continue
        seen.add(key)
        out.append(Opening(f"random-{len(out) + 1}", key))
    return out


# ---------------------------------------------------------------------------------------------
# how the shipped files were made (re-runnable)


def connect_four_candidates(n: int, plies: int = 10, seed: int = 7, sims: int = 300, max_score: int = 4,
                            max_seconds: float = 10.0) -> List[tuple]:
    """Connect Four openings as shipped: UCT self-play (random first two moves, then moves drawn with
    weights visits^2 from a ``sims``-simulation UCT), kept when the side to move has no immediate
    win and the solver's score is within +-``max_score``.  Returns (Opening, score) pairs."""
    rng = np.random.default_rng(seed)
    out: List[tuple] = []
    seen = set()
    tries = 0
    while len(out) < n and tries < 50 * n:
        tries += 1
        s = _core.State("connect_four")
        ok = True
        for i in range(plies):
            acts = s.legal_actions()
            if i < 2:
                a = int(acts[rng.integers(acts.size)])
            else:
                r = _core.playout_mcts(s, sims, seed=int(rng.integers(1 << 30)))
                w = np.asarray(r["visits"], dtype=float) ** 2
                a = int(r["actions"][rng.choice(len(w), p=w / w.sum())])
            s.push(a)
            if s.is_terminal():
                ok = False
                break
        if not ok:
            continue
        moves = tuple(s.action_to_str(int(a)) for a in s.history())
        if moves in seen:
            continue
        score, move_scores, _, complete = _core.c4_solve(s, max_seconds=max_seconds)
        if not complete or abs(score) > max_score:
            continue
        if np.nanmax(move_scores) >= (43 - plies) // 2:  # an immediate win for the side to move
            continue
        seen.add(moves)
        out.append((Opening(f"c4-{len(out) + 1}", moves), int(score)))
    return out


def hex_candidates(board_size: int = 11, sims: int = 20000, low: float = 0.45, high: float = 0.55,
                   seed: int = 0) -> List[tuple]:
    """Hex one-move openings an engine would keep: each first move evaluated by a ``sims``-simulation
    random-playout UCT from the second player's view, kept when the value lies in [low, high].
    Returns (Opening, value) pairs.  Not how the shipped set was chosen: on 11x11 this UCT keeps
    every first move (all 121, values 0.456..0.498 with seed 0: it cannot tell them apart), so the
    shipped file picks edge stones by hand (see its header)."""
    out: List[tuple] = []
    s = _core.State("hex", None, board_size)
    for a in s.legal_actions():
        a = int(a)
        mv = s.action_to_str(a)
        if mv == "swap":
            continue
        s.push(a)
        r = _core.playout_mcts(s, sims, seed=seed)
        s.pop()
        v = float(r["value"])
        if low <= v <= high:
            out.append((Opening(f"hex{board_size}-{mv}", (mv,)), v))
    return out


def check_chess_openings(engine: str = "stockfish", nodes: int = 1_000_000, path: Optional[str] = None,
                         hash_mb: int = 64) -> List[tuple]:
    """Stockfish's evaluation (centipawns, White's view; depth) after each chess opening, as in the
    shipped file's header.  Returns (name, cp, depth) triples."""
    from ..engines.uci import UCIEngine
    out = []
    ops = load_openings("chess", path=path)
    with UCIEngine(engine, options={"Threads": 1, "Hash": hash_mb}) as sf:
        for o in ops:
            s = o.state("chess")
            sf.new_game()
            r = sf.go(s.text(), nodes=nodes)
            cp = r.score.to_cp() if r.score is not None else 0
            if s.to_move == 1:
                cp = -cp
            out.append((o.name, cp, r.lines[0].depth if r.lines else None))
    return out


def _main(argv=None) -> int:
    import argparse
    p = argparse.ArgumentParser(prog="python -m mavgame.play.openings",
                                description="List the shipped openings or re-check the chess ones with Stockfish.")
    p.add_argument("--game", default="chess", help="game whose openings to list (default: chess)")
    p.add_argument("--check-chess", action="store_true", help="evaluate every chess opening with Stockfish")
    p.add_argument("--nodes", type=int, default=1_000_000, help="Stockfish nodes per opening (default 1000000)")
    p.add_argument("--engine", default="stockfish", help="engine binary (default: stockfish)")
    a = p.parse_args(argv)
    if a.check_chess:
        for name, cp, depth in check_chess_openings(a.engine, a.nodes):
            flag = "" if abs(cp) <= 70 else "   <- outside +-0.70"
            print(f"{name:<40} {cp / 100:+.2f} (depth {depth}){flag}")
        return 0
    for o in load_openings(a.game):
        print(f"{o.name:<40} {' '.join(o.moves)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())


def random_start_positions(game: str, n: int, seed: int = 0) -> List[Opening]:
    """n distinct random numbered start positions of ``game`` (Chess960's Scharnagl numbers), drawn with
    ``seed``, as openings named ``960-N``."""
    info = registry.get(game)
    if info.start_position is None:
        raise ValueError(f"{game} has no numbered start positions (games with them: "
                         f"{', '.join(g.name for g in registry.infos() if g.start_position)})")
    if not 1 <= n <= info.start_positions:
        raise ValueError(f"the number of {game} start positions must lie in 1..{info.start_positions}, not {n}")
    rng = np.random.default_rng(seed)
    nums = rng.choice(info.start_positions, size=n, replace=False)
    return [Opening(f"{info.start_prefix}{int(k)}", (), info.start_position(int(k))) for k in nums]
