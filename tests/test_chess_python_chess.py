"""Differential tests: mavgame's chess against python-chess over random games and random input.

At every ply of thousands of random games (standard, Chess960, random endgames, and games biased
towards repetitions): the legal move sets, FEN, python-chess's outcome() and the search's terminal rule
(checkmate, insufficient material, stalemate, the 75- and fifty-move rules, fivefold and threefold
repetition as python-chess's is_repetition(n)), SAN in and out, FEN round trips and the hash partition
(equal positions <-> equal hashes) must agree.  tests/test_python_chess_agreement.py measures the
agreement of the python-chess API itself (claims, results, Move and Piece objects) on random games.
"""
import random

import pytest

from conftest import scaled
from mavgame import Chess, Chess960, ChessFamily, State

chess = pytest.importorskip("chess")


def expected_outcome(b):
    """The search's terminal rule (State.outcome, is_terminal; csrc/games/chess/chess.h) from python-chess:
    its outcome() and, after the automatic draws, a draw claimable in the position itself."""
    if b.is_checkmate():
        return ("checkmate", not b.turn)
    if b.is_insufficient_material():
        return ("insufficient_material", None)
    if not any(b.generate_legal_moves()):
        return ("stalemate", None)
    if b.halfmove_clock >= 150:
        return ("seventyfive_moves", None)
    if b.is_repetition(5):
        return ("fivefold_repetition", None)
    if b.halfmove_clock >= 100:
        return ("fifty_moves", None)
    if b.is_repetition(3):
        return ("threefold_repetition", None)
    return None


def transposition_key(b):
    ep = b.ep_square if b.has_legal_en_passant() else None
    return (b.board_fen(), b.turn, b.clean_castling_rights(), ep)


class Stats:
    def __init__(self):
        self.plies = 0
        self.terminations = {}
        self.keys = {}
        self.hashes = {}

    def see_hash(self, b, ours):
        key = transposition_key(b)
        assert self.keys.setdefault(key, ours.hash) == ours.hash, b.fen()
        assert self.hashes.setdefault(ours.hash, key) == key, b.fen()


def ours_for(b):
    return Chess960(fen=b.fen()) if b.chess960 else Chess(b.fen())


def check_position(ours, b, rng, stats, san_samples=2):
    fen = b.fen()
    assert ours.fen() == fen
    moves = list(b.legal_moves)
    ucis = sorted(m.uci() for m in moves)
    assert sorted(ours.legal_moves) == ucis, fen
    assert ours.turn == b.turn
    assert ours.is_check() == b.is_check()
    exp = expected_outcome(b)
    res, why = State.outcome(ours)
    assert (None if res == 0 else (why, {1: True, 2: False, 3: None}[res])) == exp, fen
    out, theirs = ours.outcome(), b.outcome()
    assert (out and (out.termination, out.winner)) == (theirs and (theirs.termination.name.lower(), theirs.winner))
    stats.see_hash(b, ours)
    # SAN both ways on a sample of the legal moves.
    for m in rng.sample(moves, min(san_samples, len(moves))):
        san = b.san(m)
        assert ours.san(m.uci()) == san, (fen, m.uci())
        assert ours.parse_san(san) == ours.parse_move(m.uci()), (fen, san)
    return moves, exp


def play(ours, b, rng, stats, max_plies, repeat_bias=0.0, round_trip_every=7):
    """Random game on both boards; returns the termination (or None at max_plies)."""
    for ply in range(max_plies):
        moves, exp = check_position(ours, b, rng, stats)
        stats.plies += 1
        if ply % round_trip_every == 0:
            fen = b.fen()
            assert ours_for(b).fen() == fen
            assert chess.Board(ours.fen(), chess960=b.chess960).fen() == fen
        if exp is not None:
            stats.terminations[exp[0]] = stats.terminations.get(exp[0], 0) + 1
            return exp[0]
        move = None
        if repeat_bias and len(b.move_stack) >= 2 and rng.random() < repeat_bias:
            back = b.move_stack[-2]
            cand = chess.Move(back.to_square, back.from_square)
            if cand in moves:
                move = cand
        if move is None:
            move = rng.choice(moves)
        if rng.random() < 0.5:
            ours.push(move.uci())
        else:
            ours.push_san(b.san(move))
        b.push(move)
    return None


def test_standard_games():
    rng = random.Random(1)
    stats = Stats()
    for g in range(scaled(120)):
        b = chess.Board()
        play(Chess(), b, rng, stats, 400, repeat_bias=0.3 if g % 3 == 0 else 0.0)
    assert stats.plies > scaled(120) * 50
    if scaled(120) >= 100:
        for t in ("checkmate", "insufficient_material", "threefold_repetition"):
            assert stats.terminations.get(t, 0) > 0, stats.terminations


def test_chess960_games():
    rng = random.Random(2)
    stats = Stats()
    for g in range(scaled(100)):
        n = rng.randrange(960)
        b = chess.Board.from_chess960_pos(n)
        ours = Chess960(n)
        play(ours, b, rng, stats, 400, repeat_bias=0.3 if g % 3 == 0 else 0.0)
    assert stats.plies > scaled(100) * 50


def random_position(rng, chess960=False):
    """A random valid position with few pieces (python-chess's is_valid)."""
    while True:
        b = chess.Board(None, chess960=chess960)
        squares = rng.sample(range(64), 2 + rng.randrange(1, 9))
        b.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        b.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
        for sq in squares[2:]:
            kind = rng.choice([chess.PAWN, chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN])
            b.set_piece_at(sq, chess.Piece(kind, rng.random() < 0.5))
        b.turn = rng.random() < 0.5
        b.halfmove_clock = rng.choice([0, 0, 0, 90, 98, 99, 100, 150])
        if b.is_valid():
            return b


def test_random_endgames():
    rng = random.Random(3)
    stats = Stats()
    for g in range(scaled(1500)):
        b = random_position(rng)
        ours = Chess(b.fen())  # python-chess valid => we accept
        play(ours, b, rng, stats, 120, repeat_bias=0.5 if g % 2 else 0.0)
    assert stats.plies > scaled(1500) * 10
    if scaled(1500) >= 1000:
        for t in ("checkmate", "stalemate", "insufficient_material", "fifty_moves", "threefold_repetition"):
            assert stats.terminations.get(t, 0) > 0, stats.terminations


def test_positions_with_castling_and_en_passant():
    """Middlegame-like random games from positions with rights and en passant chances."""
    rng = random.Random(4)
    stats = Stats()
    fens = [
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "r3k2r/8/8/8/3pPp2/8/8/R3K2R b KQkq e3 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    ]
    for g in range(scaled(300)):
        b = chess.Board(fens[g % len(fens)])
        play(Chess(b.fen()), b, rng, stats, 60)
    for g in range(scaled(100)):
        b = chess.Board("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w KQkq - 0 1", chess960=True)
        play(Chess960(fen=b.fen()), b, rng, stats, 60)


def test_chess960_start_positions_match():
    for n in range(960):
        assert Chess960(n).fen() == chess.Board.from_chess960_pos(n).fen(), n


def test_perft_matches_small():
    rng = random.Random(5)
    for g in range(scaled(20)):
        b = random_position(rng)
        ours = Chess(b.fen())
        for depth in (1, 2, 3):
            expected = sum(1 for _ in _python_chess_leaves(b, depth))
            assert ours.perft(depth) == expected, (b.fen(), depth)


def _python_chess_leaves(b, depth):
    if depth == 0:
        yield 1
        return
    for m in list(b.legal_moves):
        b.push(m)
        yield from _python_chess_leaves(b, depth - 1)
        b.pop()


# --- bad input ----------------------------------------------------------------------------

FEN_CHARS = "pnbrqkPNBRQK12345678/ wb-KQkqabcdefgh0123456789x"


def mutate(fen, rng):
    i = rng.randrange(len(fen))
    r = rng.random()
    if r < 0.4:
        return fen[:i] + rng.choice(FEN_CHARS) + fen[i + 1:]
    if r < 0.7:
        return fen[:i] + fen[i + 1:]
    return fen[:i] + rng.choice(FEN_CHARS) + fen[i:]


def test_mutated_fens():
    """Random one-character mutations of real FENs: ours accepts every position python-chess calls
    valid, and whatever ours accepts python-chess reads to the same FEN; rejected input raises
    ValueError and leaves nothing broken."""
    rng = random.Random(6)
    seeds = [
        chess.STARTING_FEN,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq c6 0 2",
    ]
    accepted = rejected = 0
    for _ in range(scaled(20000)):
        fen = mutate(rng.choice(seeds), rng)
        try:
            ours = Chess(fen)
        except ValueError as e:
            rejected += 1
            assert str(e)  # a message
            try:
                b = chess.Board(fen)
            except ValueError:
                continue
            fields = fen.split()
            if len(fields) > 2 and set(fields[2]) != set(b.fen().split()[2]):
                continue  # python-chess silently dropped castling letters it could not place; we reject
            if not all(f.isdigit() for f in fields[4:6]):
                continue  # python-chess reads clocks with int() ("-0", "+1"); we want plain digits
            assert not b.is_valid(), fen
            continue
        accepted += 1
        b = chess.Board(fen)
        assert ours.fen() == b.fen(), fen
        assert sorted(ours.legal_moves) == sorted(m.uci() for m in b.legal_moves), fen
    assert accepted > 100 and rejected > 100


def test_random_move_strings():
    """Random UCI-like strings: accepted exactly when python-chess finds them legal."""
    rng = random.Random(7)
    files, ranks = "abcdefgh", "12345678"
    b = chess.Board("r3k2r/pPppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/1PPBBPPP/R3K2R w KQkq - 0 1")  # 16 pieces
    ours = Chess(b.fen())
    legal = {m.uci() for m in b.legal_moves}
    tried = 0
    for _ in range(scaled(3000)):
        s = rng.choice(files) + rng.choice(ranks) + rng.choice(files) + rng.choice(ranks)
        if rng.random() < 0.2:
            s += rng.choice("qrbnkx")
        if rng.random() < 0.05:
            s = s[: rng.randrange(len(s))]
        try:
            theirs = b.parse_uci(s)
            ok_theirs = theirs != chess.Move.null()
            if len(s) == 5 and theirs.promotion is None:
                continue  # python-chess drops a promotion letter on castling ("e1g1q"); we reject it
        except ValueError:
            ok_theirs = False
        try:
            a = ours.parse_move(s)
            ok_ours = True
        except ValueError as e:
            ok_ours = False
            assert s in str(e) and b.fen() in str(e)
        assert ok_ours == ok_theirs, s
        if ok_ours:
            assert ours.action_to_str(a) == b.uci(theirs)
        tried += 1
    for s in legal:
        assert ours.is_legal(s)
    assert ours.fen() == b.fen() and tried > 0


def test_san_variants():
    """Mutated SAN (no disambiguation, other piece letters, missing marks): ours and python-chess
    agree on acceptance and on the move."""
    rng = random.Random(8)
    stats = 0
    for g in range(scaled(60)):
        b = random_position(rng) if g % 2 else chess.Board()
        ours = Chess(b.fen())
        for _ in range(30):
            moves = list(b.legal_moves)
            if not moves or b.is_game_over():
                break
            for m in rng.sample(moves, min(4, len(moves))):
                san = b.san(m)
                variants = {san, san.rstrip("+#"), san.replace("x", ""), san.replace("=", "")}
                if len(san) > 3 and san[0] in "NBRQK":
                    variants.add(san[0] + san[2:])  # drop one disambiguation character
                    variants.add(rng.choice("NBRQK") + san[1:])
                for v in variants:
                    try:
                        theirs = b.parse_san(v)
                    except ValueError:
                        theirs = None
                    try:
                        a = ours.parse_san(v)
                    except ValueError as e:
                        a = None
                        assert v in str(e)
                    assert (a is None) == (theirs is None), (b.fen(), v)
                    if a is not None:
                        assert ours.uci(a) == b.uci(theirs), (b.fen(), v)
                    stats += 1
            m = rng.choice(moves)
            ours.push(m.uci())
            b.push(m)
    assert stats > 100


def test_conversions():
    b = chess.Board()
    for m in ("e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "O-O"):
        b.push_san(m)
    ours = ChessFamily.from_python_chess(b)
    assert type(ours) is Chess and ours.fen() == b.fen() and ours.ply == 7
    back = ours.to_python_chess()
    assert back.fen() == b.fen() and back.move_stack == b.move_stack
    b960 = chess.Board.from_chess960_pos(100)
    b960.push_san("e4")
    ours960 = ChessFamily.from_python_chess(b960)
    assert type(ours960) is Chess960 and ours960.fen() == b960.fen()
    assert ours960.to_python_chess().chess960


@pytest.mark.parametrize("fen", [
    "4k3/pppppppp/p7/8/8/8/8/4K3 w - - 0 1",                              # 9 black pawns
    "rnbqkbnr/pppppppp/8/8/8/p7/PPPPPPPP/RNBQKBNR w - - 0 1",           # black has 17 pieces
    "1k6/8/8/2RRRRR1/8/NNBBNNBB/8/4K3 w - - 0 1",                         # 18 white pieces (the paper's Fig. 10 has 18)
    "4k3/8/8/8/8/QQQQQQQ1/QQQQQQQQ/4K3 b - - 0 1",                        # 15 queens
    "QQQQQQrk/5Qpp/Q5QQ/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1",              # 31 queens, 259 moves
    "QQQQQQBk/Q5RB/Q6Q/Q6Q/Q6Q/Q2Q1Q1Q/QQ5Q/K1Q1Q1Q1 w - - 0 1",        # 261 moves (the most a search found)
    "7k/8/pppppppp/PPPPPPPP/pppppppp/PPPPPPPP/8/K7 b - - 0 1",           # 16 pawns a side
])
def test_positions_beyond_sixteen_pieces_match_python_chess(fen):
    """Positions python-chess calls invalid only for their piece counts play by the rules: legal moves and
    two plies of perft agree with python-chess, every move keeps within the move buffer."""
    ours, ref = Chess(fen), chess.Board(fen)
    assert sorted(ours.legal_moves) == sorted(m.uci() for m in ref.legal_moves)
    total = 0
    for m in list(ref.legal_moves):
        ref.push(m)
        ours.push(m.uci())
        assert sorted(ours.legal_moves) == sorted(x.uci() for x in ref.legal_moves), (fen, m.uci())
        total += ref.legal_moves.count()
        ref.pop()
        ours.pop()
    assert ours.perft(2) == total


def test_random_chess_positions_are_the_papers_ood_set():
    """Random placements (the paper's out-of-distribution chess set): valid, not checkmate, both kings, side not
    to move not in check, some with more than 16 pieces a side, reproducible."""
    from mavgame.datasets import random_chess_positions
    fens = random_chess_positions(300, seed=3)
    assert len(set(fens)) == 300 and random_chess_positions(300, seed=3) == fens
    assert random_chess_positions(5, seed=4) != fens[:5]
    big = 0
    for fen in fens:
        b = chess.Board(fen)
        assert b.king(chess.WHITE) is not None and b.king(chess.BLACK) is not None
        assert not b.is_checkmate()
        assert not b.was_into_check()                     # the side not to move is not in check
        assert sorted(Chess(fen).legal_moves) == sorted(m.uci() for m in b.legal_moves)
        big += max(chess.popcount(b.occupied_co[c]) for c in (chess.WHITE, chess.BLACK)) > 16
    assert big > 0
    with pytest.raises(ValueError, match="max_pieces"):
        random_chess_positions(1, max_pieces=70)


def _perft_python_chess(b, depth):
    if depth == 1:
        return b.legal_moves.count()
    n = 0
    for m in list(b.legal_moves):
        b.push(m)
        n += _perft_python_chess(b, depth - 1)
        b.pop()
    return n


@pytest.mark.parametrize("n, seed", [(80, 11), pytest.param(400, 12, marks=pytest.mark.slow)])
def test_random_placements_perft_matches_python_chess(n, seed):
    """Move generation on the paper's out-of-distribution placements (up to 62 pieces, many queens and
    pawns, promotions, checks): perft 2 and the SAN of every move on every position and perft 3 on one in 20
    agree with python-chess (80 positions by default, 400 in the slow run)."""
    from mavgame.datasets import random_chess_positions
    fens = random_chess_positions(n, seed=seed, max_pieces=62)
    assert max(len(chess.Board(f).piece_map()) for f in fens) > 40
    for fen in fens:
        ours, ref = Chess(fen), chess.Board(fen)
        assert ours.perft(2) == _perft_python_chess(ref, 2), fen
        assert sorted(ours.san(m.uci()) for m in ref.legal_moves) == sorted(ref.san(m) for m in ref.legal_moves), fen
    small = sorted(fens, key=lambda f: chess.Board(f).legal_moves.count())[::20]
    for fen in small:
        assert Chess(fen).perft(3) == _perft_python_chess(chess.Board(fen), 3), fen


def test_random_placements_write_and_read_back_as_mav():
    """The MAV writer and reader on placements of up to 62 pieces: %state, %top_all, %best_action, the state
    after the best action and the outcome of finished positions all read back exactly."""
    from mavgame import mav
    from mavgame.datasets import random_chess_positions
    texts, states = [], []
    for i, fen in enumerate(random_chess_positions(120, seed=6, max_pieces=62)):
        st = Chess(fen)
        p, t = mav.ExampleBuilder(seed=i, p_after=1.0).build([(st, {m: 0.5 for m in st.legal_moves})],
                                                              return_text=True).texts[0]
        texts.append(p + t)
        states.append(st)
    m = mav.metrics("chess", texts, states)
    assert m["examples"] == 120 and m["parsed_ok_rate"] == 1.0 and m["best_action_legal"] == 1.0
    assert m["state_total"] > 90 and m["next_state_accuracy"] == 1.0 and m["outcome_total"] > 0
    assert m["outcome_accuracy"] == 1.0
