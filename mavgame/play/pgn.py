"""PGN of chess-family games and one-line move lists of the other games, from game records."""
from __future__ import annotations

from typing import List, Optional

from .. import _core
from ..games import registry
from .records import GameRecord

__all__ = ["to_pgn", "to_movelist", "pgn_date"]


def _pgn_escape(s: str) -> str:
    return str(s).replace("\\", "\\\\").replace('"', '\\"')


def pgn_date(rec: GameRecord) -> str:
    """The PGN Date of a game: the UTC day it finished (``YYYY.MM.DD``), ``????.??.??`` if unknown."""
    t = rec.finished_at or ""
    if len(t) >= 10 and t[4] == "-" and t[7] == "-" and t[:4].isdigit() and t[5:7].isdigit() and t[8:10].isdigit():
        return f"{t[:4]}.{t[5:7]}.{t[8:10]}"
    return "????.??.??"


def to_pgn(rec: GameRecord, event: Optional[str] = None) -> str:
    """PGN of a chess-family game (SAN moves from the opening's start, opening moves included).

    ``event`` is the Event tag (default: ``mavgame <game> league``); Date is the day the game
    finished (UTC), with a UTCTime tag when the record has the time."""
    if not registry.in_family(rec.game, "chess"):
        raise ValueError(f"PGN is for the chess family, not {rec.game!r}")
    info = registry.get(rec.game)
    s = _core.State(rec.game, rec.start, rec.board_size, rec.flags)
    standard = _core.State("chess").text()
    if event is None:
        event = f"mavgame {rec.game} league"
    tags = [("Event", event), ("Site", "mavgame"), ("Date", pgn_date(rec)), ("Round", str(rec.round + 1)),
            ("White", rec.first), ("Black", rec.second), ("Result", rec.result)]
    if pgn_date(rec) != "????.??.??" and len(rec.finished_at or "") >= 19:
        tags.append(("UTCTime", rec.finished_at[11:19]))
    start_text = s.text()
    if info.pgn_variant:
        tags.append(("Variant", info.pgn_variant))
    if info.pgn_variant or start_text != standard:
        tags += [("SetUp", "1"), ("FEN", start_text)]
    tags += [("Opening", rec.opening), ("Termination", rec.reason), ("PlyCount", str(len(rec.opening_moves) + len(rec.moves)))]
    out = [f'[{k} "{_pgn_escape(v)}"]' for k, v in tags]
    toks: List[str] = []
    fields = start_text.split()
    move_no = int(fields[5]) if len(fields) > 5 and fields[5].isdigit() else 1
    all_moves = list(rec.opening_moves) + list(rec.moves)
    for i, m in enumerate(all_moves):
        a = s.action_from_str(m)
        san = _core.san(s, a)
        after_comment = False
        if i == len(rec.opening_moves) and rec.opening_moves:
            toks.append("{ end of opening }")
            after_comment = True
        if s.to_move == 0:
            toks.append(f"{move_no}.")
        elif i == 0 or after_comment:
            toks.append(f"{move_no}...")
        toks.append(san)
        s.push(a)
        if s.to_move == 0:
            move_no += 1
    toks.append(rec.result)
    body, line = [], ""
    for t in toks:
        if len(line) + len(t) + 1 > 79:
            body.append(line)
            line = t
        else:
            line = f"{line} {t}" if line else t
    body.append(line)
    return "\n".join(out) + "\n\n" + "\n".join(body) + "\n"


def to_movelist(rec: GameRecord) -> str:
    """One line per game: ``first - second result [reason] opening: moves | moves``."""
    op = " ".join(rec.opening_moves)
    return (f"{rec.first} - {rec.second} {rec.result} [{rec.reason}] {rec.opening}: "
            f"{op + ' | ' if op else ''}{' '.join(rec.moves)}")

