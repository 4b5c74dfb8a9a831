"""The python-chess promises (issue 49): mavgame's Chess and Chess960 answer python-chess's names as python-chess
does, measured on random games played to python-chess's end of game (outcome() without claims: checkmate,
stalemate, insufficient material, the seventy-five-move rule, fivefold repetition).

At every ply: the legal moves (each as a Move: uci(), from_square, to_square, promotion; len, in), outcome() and
result() with and without claim_draw (the claims, which python-chess computes slowly, at every ply of one game
in ten and every 20th ply of the others; at every ply of the games that repeat moves), the draw predicates, is_check and friends, turn, the clocks,
piece_at on the squares of the move played and two random ones, and the SAN of the move played (half of the
moves are pushed by their SAN); at the end the move stack and peek().  The figures are printed (``pytest -s``),
with how many games the search's terminal rule (is_terminal: a claimable draw ends the game) ends earlier.

Also: the conversions to and from python-chess over every Chess960 start position, and a league game's
termination.
"""
import random
from collections import Counter

import pytest

from conftest import scaled
from mavgame import Chess, Chess960, ChessFamily, State, Termination
from mavgame.games.chess import Move, Piece

chess = pytest.importorskip("chess")


class Tally:
    """Comparisons by name: how many, how many disagreed, and the first disagreement of each."""

    def __init__(self):
        self.total, self.bad, self.first = Counter(), Counter(), {}
        self.claimable = Counter()   # positions checked with claim_draw where python-chess has a draw to claim

    def check(self, name, ours, theirs, where):
        self.total[name] += 1
        if ours != theirs:
            self.bad[name] += 1
            self.first.setdefault(name, (where, ours, theirs))

    def report(self):
        width = max(map(len, self.total))
        lines = [f"  {name:<{width}}  {self.total[name] - self.bad[name]:>8} / {self.total[name]:<8} agree"
                 for name in sorted(self.total)]
        return "\n".join(lines)


def _outcome(o):
    return None if o is None else (str(o.termination), o.winner)


def _theirs_outcome(o):
    return None if o is None else (o.termination.name.lower(), o.winner)


def _compare_position(ours, b, tally, claims, where):
    """Compares one position; returns (our legal moves, python-chess's outcome()).  python-chess's result() and
    is_game_over() are its outcome()'s (``outcome.result() if outcome else "*"``, ``outcome is not None``: its
    definitions), and can_claim_draw() is ``can_claim_fifty_moves() or can_claim_threefold_repetition()``; they
    are taken from the one call of each (its claims replay the game: the slow part of this test)."""
    t = tally.check
    n = b.legal_moves.count()
    ref = sorted((m.uci(), m.from_square, m.to_square, m.promotion) for m in b.legal_moves)
    mine = list(ours.legal_moves)
    t("legal_moves", sorted((m.uci(), m.from_square, m.to_square, m.promotion) for m in mine), ref, where)
    t("legal_moves are Move", all(type(m) is Move for m in mine), True, where)
    t("len(legal_moves), count(), bool()",
      (len(ours.legal_moves), ours.legal_moves.count(), bool(ours.legal_moves)), (n, n, n > 0), where)
    theirs = b.outcome()
    t("outcome()", _outcome(ours.outcome()), _theirs_outcome(theirs), where)
    t("result(), is_game_over()", (ours.result(), ours.is_game_over()),
      (theirs.result() if theirs else "*", theirs is not None), where)
    t("is_check()", ours.is_check(), b.is_check(), where)
    t("is_checkmate(), is_stalemate()", (ours.is_checkmate(), ours.is_stalemate()),
      (b.is_checkmate(), b.is_stalemate()), where)
    t("is_insufficient_material()", ours.is_insufficient_material(), b.is_insufficient_material(), where)
    t("is_seventyfive_moves(), is_fivefold_repetition()", (ours.is_seventyfive_moves(), ours.is_fivefold_repetition()),
      (b.is_seventyfive_moves(), b.is_fivefold_repetition()), where)
    t("is_repetition(3), is_fifty_moves()", (ours.is_repetition(3), ours.is_fifty_moves()),
      (b.is_repetition(3), b.is_fifty_moves()), where)
    t("turn, fullmove_number, halfmove_clock", (ours.turn, ours.fullmove_number, ours.halfmove_clock),
      (b.turn, b.fullmove_number, b.halfmove_clock), where)
    t("fen()", ours.fen(), where[0], where)
    if claims:
        claimed = b.outcome(claim_draw=True)
        fifty, threefold = b.can_claim_fifty_moves(), b.can_claim_threefold_repetition()
        if theirs is None and claimed is not None:
            tally.claimable[claimed.termination.name.lower()] += 1
        t("outcome(claim_draw=True)", _outcome(ours.outcome(claim_draw=True)), _theirs_outcome(claimed), where)
        t("result(claim_draw=True), is_game_over(claim_draw=True)",
          (ours.result(claim_draw=True), ours.is_game_over(claim_draw=True)),
          (claimed.result() if claimed else "*", claimed is not None), where)
        t("can_claim_fifty_moves(), can_claim_threefold_repetition(), can_claim_draw()",
          (ours.can_claim_fifty_moves(), ours.can_claim_threefold_repetition(), ours.can_claim_draw()),
          (fifty, threefold, fifty or threefold), where)
    return mine, theirs


def _piece(p):
    return None if p is None else (p.symbol(), p.piece_type, p.color)


def _play(ours, b, rng, tally, stats, claims_every, repeat_bias=0.0):
    """One random game on both boards to python-chess's outcome() (with ``repeat_bias``, that often the move
    that takes back the last move of the side to move, when legal: games of repetitions)."""
    search_end = None
    ply = 0
    while True:
        where = (b.fen(), [m.uci() for m in b.move_stack[-4:]])
        mine, theirs = _compare_position(ours, b, tally, claims=ply % claims_every == 0, where=where)
        if search_end is None and ours.is_terminal():
            search_end = (ply, State.outcome(ours)[1])
        if theirs is not None:
            break
        move = None
        if repeat_bias and len(b.move_stack) >= 2 and rng.random() < repeat_bias:
            back = b.move_stack[-2]
            move = chess.Move(back.to_square, back.from_square)
            if not b.is_legal(move):
                move = None
        if move is None:
            move = rng.choice(list(b.legal_moves))
        uci = b.uci(move)
        tally.check("move in legal_moves", (uci in ours.legal_moves, move in ours.legal_moves), (True, True), where)
        for sq in {move.from_square, move.to_square, rng.randrange(64), rng.randrange(64)}:
            p = ours.piece_at(sq)
            tally.check("piece_at()", _piece(p), _piece(b.piece_at(sq)), (where, sq))
            tally.check("piece_at() is Piece", p is None or type(p) is Piece, True, where)
        san = b.san(move)
        tally.check("san(move)", ours.san(next(m for m in mine if m == uci)), san, where)
        if rng.random() < 0.5:
            ours.push_san(san)
        else:
            ours.push(uci)
        b.push(move)
        tally.check("peek()", ours.peek().uci(), b.uci(b.peek()), where)
        ply += 1
    tally.check("move_stack", [m.uci() for m in ours.move_stack], [m.uci() for m in b.move_stack], b.fen())
    tally.check("ply", ours.ply, len(b.move_stack), b.fen())
    stats["plies"] += ply
    stats["end: " + b.outcome().termination.name.lower()] += 1
    if search_end is not None and search_end[0] < ply:
        stats["search ends earlier"] += 1
        stats["search ends earlier by " + search_end[1]] += 1
        stats["plies the search ends earlier"] += ply - search_end[0]
    return ply


@pytest.mark.parametrize("variant, games", [("chess", 300), ("chess960", 50), ("chess, repeating moves", 40)])
def test_python_chess_agreement_on_random_games(variant, games):
    """Uniformly random games (the claims at every ply of one game in ten, every 20th ply of the others), and
    games that often take back the last move (repetitions: threefold claims, one move ahead, and fivefold ends;
    the claims at every ply)."""
    rng = random.Random({"chess": 49, "chess960": 960}.get(variant, 3))
    repeating = variant.endswith("repeating moves")
    tally, stats = Tally(), Counter()
    n_games = scaled(games)
    for g in range(n_games):
        if variant == "chess960":
            n = rng.randrange(960)
            ours, b = Chess960(n), chess.Board.from_chess960_pos(n)
        else:
            ours, b = Chess(), chess.Board()
        every = 1 if repeating or g % 10 == 0 else 20
        _play(ours, b, rng, tally, stats, claims_every=every, repeat_bias=0.5 if repeating else 0.0)
    ends = {k[5:]: v for k, v in sorted(stats.items()) if k.startswith("end: ")}
    by = "search ends earlier by "
    earlier = {k[len(by):]: v for k, v in stats.items() if k.startswith(by)}
    print(f"\npython-chess {chess.__version__} agreement, {variant}: {n_games} random games, {stats['plies']} plies "
          f"to python-chess's outcome(): {ends}")
    print(tally.report())
    print(f"  positions with a draw to claim (outcome(claim_draw=True) set, outcome() None): {dict(tally.claimable)}")
    print(f"  the search's terminal rule (is_terminal) ends {stats['search ends earlier']} of {n_games} games earlier "
          f"(a claimable draw: {earlier}), {stats['plies the search ends earlier']} plies in all")
    assert not tally.bad, {k: (tally.bad[k], tally.first[k]) for k in tally.bad}
    assert stats["plies"] > n_games * 20
    if n_games >= 40:
        assert stats["search ends earlier"] > 0 and len(ends) >= (2 if repeating else 3), stats
        if repeating:
            assert ends.get("fivefold_repetition", 0) > n_games // 4 and earlier.get("threefold_repetition"), stats


def _random_moves(b, rng, plies, castle_bias=0.6):
    castles = 0
    for _ in range(plies):
        moves = list(b.legal_moves)
        if not moves or b.is_game_over():
            break
        castling = [m for m in moves if b.is_castling(m)]
        move = rng.choice(castling) if castling and rng.random() < castle_bias else rng.choice(moves)
        castles += b.is_castling(move)
        b.push(move)
    return castles


def test_chess960_conversions_both_ways_on_every_start_position():
    """from_python_chess on Chess960 boards (issue 49: it refused any but the standard array), through
    ChessFamily, Chess and Chess960, and to_python_chess back: position, move stack (castling as king takes
    rook), repetition history; over all 960 start positions with random moves biased towards castling."""
    rng = random.Random(7)
    castles = 0
    for n in range(960):
        b = chess.Board.from_chess960_pos(n)
        start = ChessFamily.from_python_chess(b)
        assert type(start) is Chess960 and start.fen() == b.fen() == Chess960(n).fen(), n
        castles += _random_moves(b, rng, rng.randrange(4, 40))
        for cls in (ChessFamily, Chess, Chess960):
            ours = cls.from_python_chess(b)
            assert type(ours) is Chess960 and ours.fen() == b.fen(), (n, cls)
            assert [m.uci() for m in ours.move_stack] == [m.uci() for m in b.move_stack], n
            assert ours.root_text() == b.root().fen()
        back = ours.to_python_chess()
        assert back.chess960 and back.fen() == b.fen() and back.move_stack == b.move_stack, n
        assert back.root().fen() == b.root().fen() and back.is_repetition(2) == b.is_repetition(2)
        assert _outcome(ours.outcome(claim_draw=True)) == _theirs_outcome(b.outcome(claim_draw=True)), n
    assert castles > 300


def test_standard_boards_convert_to_chess_and_to_chess960():
    """A standard board becomes a Chess game, or with Chess960.from_python_chess a Chess960 game (castling
    written king-takes-rook); a Chess960 game of the standard array goes back as a chess960 board."""
    rng = random.Random(8)
    castled = 0
    for g in range(scaled(200)):
        b = chess.Board()
        castled += _random_moves(b, rng, rng.randrange(10, 60)) > 0
        ours = Chess.from_python_chess(b)
        assert type(ours) is Chess and ours.fen() == b.fen() and ours.move_stack == [m.uci() for m in b.move_stack]
        as960 = Chess960.from_python_chess(b)
        assert type(as960) is Chess960 and as960.fen() == b.fen()
        back = as960.to_python_chess()
        assert back.chess960 and back.fen() == b.fen()
        assert ours.to_python_chess().move_stack == b.move_stack
    assert castled > scaled(200) // 10   # castling games among them (20 of 200 at scale 1)
    with pytest.raises(TypeError, match="chess.Board"):
        Chess.from_python_chess("e4")


def _league_game(moves, fen=None):
    """A scripted game through the league's game loop (play_game): each side plays its list in turn."""
    from mavgame.agents.base import CallableAgent
    from mavgame.play.game_loop import play_game
    from mavgame.play.records import Opening
    script = iter(moves)
    agent = CallableAgent(lambda state: next(script), name="script")
    opening = Opening("start") if fen is None else Opening("fen", text=fen)
    return play_game(agent, agent, "chess", opening)


def test_league_records_the_termination_python_chess_gives_a_claim():
    """The league ends a chess game by the search's rule, at the first position where a draw can be claimed,
    and records python-chess's outcome(claim_draw=True) termination of that position; an automatic draw is
    recorded as such."""
    rec = _league_game(["g1f3", "g8f6", "f3g1", "f6g8"] * 2)
    assert rec.result == "1/2-1/2" and rec.reason is Termination.THREEFOLD_REPETITION and len(rec.moves) == 8
    b = chess.Board()
    for m in rec.moves:
        b.push_uci(m)
    assert b.outcome() is None and b.outcome(claim_draw=True).termination == chess.Termination.THREEFOLD_REPETITION
    rec = _league_game(["b6c6"], fen="k7/8/1K6/8/8/8/7R/8 w - - 99 80")
    assert rec.reason is Termination.FIFTY_MOVES and rec.result == "1/2-1/2"
    b = chess.Board("k7/8/1K6/8/8/8/7R/8 w - - 99 80")
    b.push_uci("b6c6")
    assert b.outcome() is None and b.outcome(claim_draw=True).termination == chess.Termination.FIFTY_MOVES
