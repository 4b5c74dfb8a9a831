"""Fairy-Stockfish as the engine for Gardner 5x5 minichess: engine, annotator, rules oracle (the league agent,
:class:`mavgame.agents.engines.FairyStockfishAgent`, spec ``fairy``, plays through this module).

Fairy-Stockfish (Debian's ``fairy-stockfish`` package, ``/usr/games/fairy-stockfish``) is the public
descendant of the Stockfish adaptation that Mhalla and Prost used to solve Gardner's minichess.  It
speaks UCI; the option ``UCI_Variant`` = ``gardner`` selects the game.  mavgame drives it through its
own UCI client (:mod:`mavgame.engines.uci`):

    >>> from mavgame.engines.fairy import open_engine
    >>> from mavgame.agents.engines import FairyStockfishAgent
    >>> with open_engine() as eng:                      # a UCIEngine with UCI_Variant=gardner set
    ...     eng.play("rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1", nodes=20000)
    >>> agent = FairyStockfishAgent(skill=3, movetime=50)   # also the agent spec "fairy:skill=3,movetime=50"

The annotator is :class:`mavgame.engines.annotate.Annotator` with ``game="gardner"`` (it then starts
Fairy-Stockfish and sets the variant); ``mavgame annotate --game gardner`` and the MAV data
generator (``mavgame.datasets``, game ``gardner``) use it.

**Promotion rules.**  Fairy-Stockfish's ``gardner`` variant lets a pawn promote to a knight, bishop,
rook or queen.  The paper's Gardner (and mavgame's default, ``Gardner()``) forbids promotion to a
bishop; ``Gardner(bishop_promotion=True)`` (config flag ``MG_FLAG_GARDNER_BISHOP``) allows it and is
then move for move the engine's game (the differential tests check exactly that).  Under the
default rules mavgame never lets the engine choose a bishop promotion: whenever the position has a
promotion among its legal moves, the agent and the annotator search with ``go searchmoves`` set to
mavgame's legal moves.  Deeper in its own search the engine still considers bishop promotions, for
both sides; a bishop promotion is never better than a queen promotion except to avoid stalemate, so
this only matters in rare stalemate tricks, and engine values are estimates anyway.  Any other
difference between the engine's moves and mavgame's is a rules bug and raises an error.

**Rules oracle.**  :func:`perft_diff` compares mavgame's perft with the engine's ``go perft`` move
by move; :func:`random_game_diff` plays random games and compares the legal move sets at every ply.
"""
from __future__ import annotations

import random
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from .. import _core
from .uci import UCIEngine, find_engine
from .uci_protocol import EngineError

__all__ = ["VARIANT", "find_fairy_stockfish", "binary_path", "open_engine", "engine_moves",
           "perft_diff", "random_game_diff", "FLAG_BISHOP_PROMOTION", "SKILL_MIN", "SKILL_MAX"]

#: the UCI_Variant value of Gardner's minichess
VARIANT = "gardner"
#: mg_config.flags bit that allows promotion to a bishop (as in the engine's variant)
FLAG_BISHOP_PROMOTION = 1 << 1
#: Fairy-Stockfish's Skill Level range (Stockfish's is 0..20)
SKILL_MIN, SKILL_MAX = -20, 20


def find_fairy_stockfish() -> Optional[str]:
    """Path of Fairy-Stockfish: $MAVGAME_FAIRY_STOCKFISH, ``fairy-stockfish`` on PATH, or /usr/games
    (:func:`mavgame.engines.uci.find_engine`)."""
    return find_engine("fairy-stockfish", "MAVGAME_FAIRY_STOCKFISH")


def binary_path(path: Optional[str]) -> str:
    """The Fairy-Stockfish binary: ``path``, or :func:`find_fairy_stockfish` for none (or ``fairy-stockfish``,
    ``fairy``); EngineError when it is not installed."""
    if path in (None, "", "fairy-stockfish", "fairy"):
        found = find_fairy_stockfish()
        if found is None:
            raise EngineError("Fairy-Stockfish not found (apt-get install fairy-stockfish, or set "
                              "$MAVGAME_FAIRY_STOCKFISH)")
        return found
    return str(path)


def set_variant(eng: UCIEngine) -> None:
    """Select Gardner in a running engine; EngineError if it has no ``gardner`` UCI_Variant."""
    opt = eng.options.get("uci_variant")
    if opt is None or (opt.vars and VARIANT not in opt.vars):
        eng.close()
        raise EngineError(f"engine {eng.name!r} has no UCI_Variant {VARIANT!r}: it is not Fairy-Stockfish")
    eng.set_option("UCI_Variant", VARIANT)
    eng.isready()


def open_engine(path: Optional[str] = None, options: Optional[Dict[str, object]] = None,
                timeout: float = 10.0, **kwargs: Any) -> UCIEngine:
    """A :class:`~mavgame.engines.uci.UCIEngine` running Fairy-Stockfish with ``UCI_Variant`` = ``gardner``
    (then ``options``).  ``path`` defaults to :func:`find_fairy_stockfish`."""
    eng = UCIEngine(binary_path(path), timeout=timeout, **kwargs)
    set_variant(eng)
    if options:
        try:
            eng.configure(options)
        except BaseException:
            eng.close()
            raise
    return eng


def engine_moves(eng: UCIEngine, fen: str, moves: Sequence[str] = ()) -> Set[str]:
    """The engine's legal moves in ``fen`` after ``moves`` (``go perft 1``)."""
    return set(eng.perft(1, fen, moves)[1])


def _state(fen: str, bishop_promotion: bool):
    return _core.State("gardner", fen, 0, FLAG_BISHOP_PROMOTION if bishop_promotion else 0)


def perft_diff(eng: UCIEngine, fen: str, depth: int, bishop_promotion: bool = True) -> Dict[str, Any]:
    """mavgame's perft of ``fen`` against the engine's ``go perft depth``.

    With ``bishop_promotion=True`` (the engine's rules) the counts must agree move by move.  Returns
    ``{"ours": total, "engine": total, "diff": {move: (ours, engine)}}``; ``diff`` lists the root
    moves whose counts differ (a move missing on one side counts 0 there)."""
    st = _state(fen, bishop_promotion)
    ours: Dict[str, int] = {}
    for a in st.legal_actions().tolist():
        mv = st.action_to_str(int(a))
        if depth == 1:
            ours[mv] = 1
        else:
            st.push(int(a))
            ours[mv] = int(st.perft(depth - 1))
            st.pop()
    total, theirs = eng.perft(depth, fen)
    diff = {m: (ours.get(m, 0), theirs.get(m, 0)) for m in set(ours) | set(theirs)
            if ours.get(m, 0) != theirs.get(m, 0)}
    return {"ours": sum(ours.values()), "engine": total, "diff": diff}


def random_game_diff(eng: UCIEngine, seed: int, max_plies: int = 200, fen: Optional[str] = None,
                     bishop_promotion: bool = True) -> Tuple[int, List[Dict[str, Any]]]:
    """Plays a random game (``seed``) with mavgame and compares its legal moves with the engine's at
    every ply until the game ends (mavgame's termination rules) or ``max_plies``.

    With ``bishop_promotion=False`` the engine's bishop promotions are removed before comparing.
    Returns (plies played, mismatches); each mismatch names the ply, the position and the moves only
    one side has."""
    from ..games.gardner import START_FEN
    rng = random.Random(seed)
    root = fen or START_FEN
    st = _state(root, bishop_promotion)
    line: List[str] = []
    bad: List[Dict[str, Any]] = []
    ply = 0
    while ply < max_plies:
        ours = {str(m) for m in st.legal_moves}
        theirs = engine_moves(eng, root, line)
        if not bishop_promotion:
            theirs = {m for m in theirs if not (len(m) == 5 and m[4] == "b")}
        if ours != theirs:
            bad.append({"ply": ply, "fen": st.text(), "moves": list(line), "only_ours": sorted(ours - theirs),
                        "only_engine": sorted(theirs - ours)})
        if st.is_terminal() or not ours:
            break
        mv = rng.choice(sorted(ours))
        st.push(mv)
        line.append(mv)
        ply += 1
    return ply, bad
