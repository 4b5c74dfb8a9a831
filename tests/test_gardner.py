"""Gardner 5x5 minichess: the C generator against an independent Python reference
(tests/gardner_reference.py) and against python-chess on an embedded 5x5 board, plus the API.

Perft from the start position (no bishop promotion / with bishop promotion):

    depth  nodes          with bishop    cross-checked by
    1      7              7              reference, python-chess embedding
    2      53             53             reference, python-chess embedding
    3      506            506            reference, python-chess embedding, pgx
    4      4775           4775           reference, python-chess embedding, pgx
    5      52184          52512          reference, python-chess embedding, pgx (bishop column)
    6      564565         572874         reference, python-chess embedding
    7      6762386        6947252        reference (no bishop), python-chess embedding (both)
    8      79966054       83342395       reference (no bishop, also per first move); C generic perft (both)
    9      1015577185     1075789051     C only: fast perft

How the figures were cross-checked (one-off runs, outside the test suite):
- reference: ``gardner_reference.Position.from_fen(START_FEN).perft(d)`` for d <= 8 (depth 7 takes
  about a minute of pure Python, depth 8 about 40 minutes on a loaded machine, where the counts per
  first move b1c3 9816796, b1a3 5952582, a2a3 7891030, b2b3 12791375, c2c3 14984309, d2d3 19877220,
  e2e3 8652742 equal the C perft_divide; depths <= 6 also run below, depth 7 under ``-m slow``);
- C generic perft (make/unmake at every leaf, game.c) = the fast bulk-counting perft at depth 8;
- python-chess embedding: the perft of ``_embedded_moves``/``_embedded_play`` below (python-chess
  1.11.2 legal moves on the a1..e5 corner of an empty board), to depth 7 for both rule sets;
- pgx 2.6.0 (``pgx.gardner_chess``, jax CPU, installed in a scratch venv; it allows bishop
  promotion): perft 1..5 = 7, 53, 506, 4775, 52512 by batched ``env.step`` from
  ``_from_fen(START_FEN)``, and the same legal move sets as the C generator with bishop promotion in
  all of 2115 positions sampled from 150 random games (pgx actions mapped to UCI via
  ``Action._from_label``).
"""
import doctest
import pickle
import random
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import gardner_reference as ref
from conftest import scaled, test_scale
from mavgame import State, _core
from mavgame.games import gardner as gardner_module
from mavgame.games.gardner import FLAG_BISHOP_PROMOTION, START_FEN, Gardner

PERFT = [1, 7, 53, 506, 4775, 52184, 564565, 6762386, 79966054, 1015577185]
PERFT_BISHOP = [1, 7, 53, 506, 4775, 52512, 572874, 6947252, 83342395, 1075789051]

# Positions with work for every rule: promotions (both colours, with captures), pins, checks.
POSITIONS = [
    START_FEN,
    "k4/2P2/5/5/4K w - - 0 1",
    "1r2k/P1P2/5/3p1/K1R2 w - - 0 1",
    "4k/5/5/3p1/K1R2 b - - 3 20",
    "r1bqk/pP1pp/2n2/P1p1P/RNBQK w - - 0 1",
    "3rk/5/5/3R1/3K1 w - - 0 1",
    "q3k/1P3/5/1p3/R3K b - - 0 1",
    "2k2/p1P1p/1n2N/P1p1P/2K2 w - - 0 1",
]


# --- perft -------------------------------------------------------------------------------


def test_start_position():
    board = Gardner()
    assert board.fen() == START_FEN
    assert board.game == "gardner"
    assert sorted(board.legal_moves) == ["a2a3", "b1a3", "b1c3", "b2b3", "c2c3", "d2d3", "e2e3"]
    assert board.turn is True and board.ply == 0 and not board.is_check()
    assert board.outcome() is None and board.result() == "*"
    assert not board.bishop_promotion and Gardner(bishop_promotion=True).bishop_promotion
    assert State("gardner").text() == START_FEN


def test_perft_recorded_figures():
    board = Gardner()
    assert [board.perft(d) for d in range(8)] == PERFT[:8]
    bishop = Gardner(bishop_promotion=True)
    assert [bishop.perft(d) for d in range(8)] == PERFT_BISHOP[:8]
    assert board.fen() == START_FEN and board.ply == 0


@pytest.mark.slow
def test_perft_recorded_figures_deep():
    assert Gardner().perft(8) == PERFT[8]
    assert Gardner().perft(9) == PERFT[9]
    assert Gardner(bishop_promotion=True).perft(8) == PERFT_BISHOP[8]
    assert Gardner(bishop_promotion=True).perft(9) == PERFT_BISHOP[9]


def test_perft_against_reference():
    """C perft = the independent reference's perft: depths 1..5 with and without bishop
    promotion, and depth 6 without it at full test scale (about 5 s of pure Python)."""
    for bishop in (False, True):
        board = Gardner(bishop_promotion=bishop)
        pos = ref.Position.from_fen(START_FEN, bishop_promotion=bishop)
        for d in range(1, 6):
            assert board.perft(d) == pos.perft(d), (bishop, d)
    if test_scale() >= 1:
        assert Gardner().perft(6) == ref.Position.from_fen(START_FEN).perft(6) == PERFT[6]


@pytest.mark.slow
def test_perft_against_reference_depth7():
    assert Gardner().perft(7) == ref.Position.from_fen(START_FEN).perft(7) == PERFT[7]


def test_perft_divide_against_reference():
    for fen in POSITIONS:
        for bishop in (False, True):
            board = Gardner(fen, bishop_promotion=bishop)
            pos = ref.Position.from_fen(fen, bishop_promotion=bishop)
            want = {m: pos.play(m).perft(2) for m in pos.legal_moves()}
            assert board.perft_divide(3) == want, (fen, bishop)
            assert board.perft(3) == sum(want.values())


def test_bishop_option_changes_perft_only_with_promotions():
    # A pawn about to promote: one more move per promotion square with the option.
    assert Gardner("k4/2P2/5/5/4K w - - 0 1").perft(1) == 3 + 3
    assert Gardner("k4/2P2/5/5/4K w - - 0 1", bishop_promotion=True).perft(1) == 4 + 3
    # a4a5, a4xb5, c4c5, c4xb5: four promotion squares.
    assert Gardner("1r2k/P1P2/5/3p1/K1R2 w - - 0 1").perft(1) + 4 == Gardner(
        "1r2k/P1P2/5/3p1/K1R2 w - - 0 1", bishop_promotion=True
    ).perft(1)
    # From the start no promotion is possible before ply 5.
    for d in range(5):
        assert Gardner().perft(d) == Gardner(bishop_promotion=True).perft(d)
    assert Gardner().perft(5) < Gardner(bishop_promotion=True).perft(5)
    # Without pawns the option never matters.
    for fen in ("r3k/5/2q2/5/R1B1K w - - 0 1", "k4/5/1n3/5/R1BQK b - - 0 1"):
        assert Gardner(fen).perft(4) == Gardner(fen, bishop_promotion=True).perft(4)
    board = Gardner("k4/2P2/5/5/4K w - - 0 1", bishop_promotion=True)
    assert "c4c5b" in board.legal_moves
    board.push("c4c5b")
    assert board.fen() == "k1B2/5/5/5/4K b - - 0 1"
    assert board.outcome().termination == "insufficient_material"


# --- random games against the reference and python-chess ---------------------------------


def _compare_position(board, pos):
    assert sorted(board.legal_moves) == sorted(pos.legal_moves()), board.fen()
    assert board.fen() == pos.fen()
    assert board.is_check() == pos.in_check(), board.fen()
    outcome = board.outcome()
    if outcome is None or outcome.termination != "threefold_repetition":
        want = pos.outcome()
        got = ("*", "none") if outcome is None else (outcome.result(), outcome.termination)
        assert got == want, board.fen()


def test_random_games_against_reference():
    """Legal moves, FEN, check and outcome agree with the reference along random games."""
    rng = random.Random(20240611)
    positions = 0
    for game in range(60):  # not scaled: the count threshold below needs the full set
        bishop = game % 3 == 2
        board = Gardner(bishop_promotion=bishop)
        pos = ref.Position.from_fen(START_FEN, bishop_promotion=bishop)
        while True:
            _compare_position(board, pos)
            positions += 1
            if board.outcome() is not None:
                break
            move = rng.choice(list(board.legal_moves))
            board.push(move)
            pos = pos.play(move)
    assert positions >= 3000


def test_random_positions_from_text_against_reference():
    """Positions read from FEN (random piece placements) against the reference."""
    rng = random.Random(99)
    checked = 0
    attempts = 0
    while checked < scaled(2000) and attempts < 100000:
        attempts += 1
        cells = ["."] * 25
        squares = rng.sample(range(25), 2 + rng.randrange(9))
        cells[squares[0]] = "K"
        cells[squares[1]] = "k"
        for sq in squares[2:]:
            piece = rng.choice("PNBRQpnbrq")
            if piece in "Pp" and sq // 5 in (0, 4):
                piece = rng.choice("NBRQ") if piece == "P" else rng.choice("nbrq")
            cells[sq] = piece
        rows = []
        for r in range(4, -1, -1):
            row = "".join(cells[r * 5:(r + 1) * 5])
            for n in range(5, 0, -1):
                row = row.replace("." * n, str(n))
            rows.append(row)
        fen = "/".join(rows) + " " + rng.choice("wb") + " - - 0 1"
        pos = ref.Position.from_fen(fen)
        white = pos.side == "w"
        kf, kr = pos.king(not white)
        if pos.attacked_by(kf, kr, white):
            with pytest.raises(ValueError, match="side not to move"):
                Gardner(fen)
            continue
        bishop = checked % 2 == 1
        board = Gardner(fen, bishop_promotion=bishop)
        pos.bishop_promotion = bishop
        _compare_position(board, pos)
        checked += 1
    assert checked >= scaled(2000)


def _embedded_board(chess, fen):
    """The Gardner position on the a1..e5 corner of an empty python-chess board."""
    placement, side = fen.split()[:2]
    board = chess.Board(None)
    for i, row in enumerate(placement.split("/")):
        f = 0
        for ch in row:
            if ch.isdigit():
                f += int(ch)
            else:
                board.set_piece_at(chess.square(f, 4 - i), chess.Piece.from_symbol(ch))
                f += 1
    board.turn = side == "w"
    return board


def _embedded_moves(chess, board, bishop):
    """Gardner moves from python-chess's legal moves on the embedded board: moves leaving the
    5x5 corner and pawn double steps dropped; White pawns reaching rank 5 promote."""
    out = []
    for m in board.legal_moves:
        if chess.square_file(m.to_square) > 4 or chess.square_rank(m.to_square) > 4:
            continue
        piece = board.piece_at(m.from_square)
        if piece.piece_type == chess.PAWN and abs(m.to_square - m.from_square) == 16:
            continue
        uci = m.uci()[:4]
        if piece.piece_type == chess.PAWN and piece.color == chess.WHITE and chess.square_rank(m.to_square) == 4:
            out += [(m, uci + p) for p in ("qrbn" if bishop else "qrn")]
        elif m.promotion:
            if m.promotion != chess.BISHOP or bishop:
                out.append((m, m.uci()))
        else:
            out.append((m, uci))
    return out


def _embedded_play(chess, board, m, uci):
    nxt = board.copy(stack=False)
    nxt.push(m)
    if len(uci) == 5 and board.turn == chess.WHITE:
        nxt.set_piece_at(m.to_square, chess.Piece.from_symbol(uci[4].upper()))
    return nxt


def test_random_games_against_python_chess():
    chess = pytest.importorskip("chess")
    rng = random.Random(7)
    positions = 0
    for game in range(scaled(40)):
        bishop = game % 2 == 1
        board = Gardner(bishop_promotion=bishop)
        emb = _embedded_board(chess, board.fen())
        while board.outcome() is None:
            moves = _embedded_moves(chess, emb, bishop)
            assert sorted(board.legal_moves) == sorted(u for _, u in moves), board.fen()
            assert board.is_check() == emb.is_check()
            positions += 1
            m, uci = rng.choice(moves)
            board.push(uci)
            emb = _embedded_play(chess, emb, m, uci)
        if board.outcome().termination in ("checkmate", "stalemate"):
            # python-chess's own is_checkmate() would see escapes off the 5x5 corner.
            assert not _embedded_moves(chess, emb, bishop)
            assert emb.is_check() == (board.outcome().termination == "checkmate")
    assert positions >= scaled(1500)


def test_perft_against_python_chess():
    chess = pytest.importorskip("chess")

    def perft(b, d, bishop):
        moves = _embedded_moves(chess, b, bishop)
        if d == 1:
            return len(moves)
        return sum(perft(_embedded_play(chess, b, m, u), d - 1, bishop) for m, u in moves)

    for fen in POSITIONS[:5]:
        for bishop in (False, True):
            assert Gardner(fen, bishop_promotion=bishop).perft(3) == perft(_embedded_board(chess, fen), 3, bishop)


# --- SAN ---------------------------------------------------------------------------------


def test_san_round_trip_and_marks():
    rng = random.Random(3)
    seen_mate = seen_promo = seen_disambig = 0
    for game in range(30):  # not scaled: mates, promotions and disambiguations must all occur
        board = Gardner(bishop_promotion=game % 2 == 1)
        pos = ref.Position.from_fen(START_FEN, bishop_promotion=board.bishop_promotion)
        while board.outcome() is None:
            sans = board.legal_sans()
            assert len(set(sans)) == len(sans)
            for a, san in zip(board.legal_actions(), sans):
                assert board.parse_san(san) == a
                uci = board.action_to_str(int(a))
                nxt = pos.play(uci)
                gives_check = nxt.in_check()
                mate = gives_check and not nxt.legal_moves()
                assert san.endswith("#") == mate and san.endswith("+") == (gives_check and not mate), san
                seen_mate += mate
                seen_promo += "=" in san
                seen_disambig += san[0] in "NBRQ" and len(san.rstrip("+#").replace("x", "")) > 3
            move = rng.choice(list(board.legal_moves))
            board.push(move)
            pos = pos.play(move)
    assert seen_mate and seen_promo and seen_disambig


def test_san_examples():
    board = Gardner()
    assert board.push_san("Nc3") == 1 + 25 * 12
    assert board.san("b4c3") == "bxc3" and board.san("d4c3") == "dxc3"
    board.push_san("bxc3")
    assert board.fen() == "rnbqk/p1ppp/2p2/PPPPP/R1BQK w - - 0 2"
    board = Gardner("k4/2P2/5/5/4K w - - 0 1")
    assert board.san("c4c5q") == "c5=Q+" and board.san("c4c5n") == "c5=N"
    assert board.parse_san("c5=R") == board.parse_move("c4c5r")
    with pytest.raises(ValueError, match="c5=B"):
        board.parse_san("c5=B")
    assert Gardner("k4/2P2/5/5/4K w - - 0 1", bishop_promotion=True).san("c4c5b") == "c5=B"
    assert Gardner("k4/5/1Q3/1K3/5 w - - 0 1").san("b3b5") == "Qb5+"
    assert Gardner("k4/5/1K3/4Q/5 w - - 0 1").san("e2e5") == "Qe5#"
    # Two rooks on one rank reaching the same square: the file disambiguates.
    assert Gardner("R3R/5/5/2k2/K4 w - - 0 1").san("a5c5") == "Rac5+"


# --- API ---------------------------------------------------------------------------------


def test_push_pop_history_and_copy():
    board = Gardner()
    actions = [board.push(m) for m in ("b2b3", "a4b3", "a2b3", "c4b3")]
    assert board.move_stack == ["b2b3", "a4b3", "a2b3", "c4b3"]
    assert board.peek() == "c4b3" and board.ply == 4
    assert list(board.history()) == actions
    fen = board.fen()
    copy = board.copy()
    assert copy == board and type(copy) is Gardner and copy.move_stack == board.move_stack
    clone = pickle.loads(pickle.dumps(board))
    assert clone == board and clone.move_stack == board.move_stack and type(clone) is Gardner
    assert board.pop() == actions[-1]
    assert board != copy and copy.fen() == fen
    while board.ply:
        board.pop()
    assert board.fen() == START_FEN and board == Gardner()
    # The bishop option survives copies and pickling and makes states unequal.
    b = Gardner(bishop_promotion=True)
    assert b.copy().bishop_promotion and pickle.loads(pickle.dumps(b)).bishop_promotion
    assert b != Gardner() and b.flags == FLAG_BISHOP_PROMOTION
    assert repr(b) == f"Gardner('{START_FEN}', bishop_promotion=True)"
    assert repr(Gardner()) == f"Gardner('{START_FEN}')"


def test_actions_and_strings():
    board = Gardner()
    acts = board.legal_actions()
    assert acts.dtype == np.int32
    for a in acts:
        s = board.action_to_str(int(a))
        assert board.action_from_str(s) == a and board.is_legal(int(a))
        frm, to = s[:2], s[2:4]
        assert a == board._square_index(frm) + 25 * board._square_index(to)
    assert board.action_to_str(1 + 25 * 12) == "b1c3"
    b = Gardner("k4/2P2/5/5/4K w - - 0 1")
    assert b.action_from_str("c4c5q") == 17 + 25 * 22 + 625 * 4
    assert b.action_from_str("c4c5N") == 17 + 25 * 22 + 625 * 1
    info = b.move_info("c4c5r")
    assert info == {"from": "c4", "to": "c5", "piece": "P", "capture": False, "promotion": "R", "castle": None}
    assert not board.is_legal(-1) and not board.is_legal(3125) and not board.is_legal(0)


def test_board_views():
    board = Gardner()
    assert str(board) == "r n b q k\np p p p p\n. . . . .\nP P P P P\nR N B Q K"
    assert board.piece_at("e1") == "K" and board.piece_at("d5") == "q" and board.piece_at("c3") is None
    assert board.piece_at(4) == "K" and board.board_rows()[2] == "....."
    with pytest.raises(ValueError, match="f1"):
        board.piece_at("f1")
    with pytest.raises(ValueError, match="25"):
        board.piece_at(25)
    board.push("b1c3")
    svg = board._repr_svg_()
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    texts = [t.text for t in root.iter(ns + "text")]
    squares = [r for r in root.iter(ns + "rect") if r.get("fill") in ("#f0d9b5", "#b58863")]
    assert len(squares) == 25
    assert sum(1 for t in root.iter(ns + "text") if "piece" in (t.get("class") or "")) == 20
    assert "e" in texts and "f" not in texts and "5" in texts and "6" not in texts
    # a1 is dark, as on a chessboard.
    assert squares[20].get("fill") == "#b58863"


def test_outcomes():
    mate = Gardner("k4/1Q3/1K3/5/5 b - - 0 1")
    assert mate.is_checkmate() and mate.is_game_over() and mate.result() == "1-0"
    assert mate.outcome().winner is True and mate.outcome().termination == "checkmate"
    assert Gardner("K4/1q3/1k3/5/5 w - - 0 1").outcome().result() == "0-1"
    stale = Gardner("k4/2Q2/1K3/5/5 b - - 0 1")
    assert stale.is_stalemate() and stale.outcome().result() == "1/2-1/2"
    for fen in ("k4/5/2K2/5/5 w - - 0 1", "k4/5/2KN1/5/5 b - - 0 1", "k4/5/b1K2/5/B4 w - - 0 1"):
        assert Gardner(fen).outcome().termination == "insufficient_material", fen
    for fen in ("k4/5/2Kb1/5/B4 w - - 0 1", "k4/5/2K2/5/NN3 w - - 0 1", "k4/5/1nK2/5/B4 w - - 0 1"):
        assert Gardner(fen).outcome() is None, fen
    fifty = Gardner("k4/5/2K2/4R/5 w - - 99 80")
    assert fifty.outcome() is None
    fifty.push("e2e3")
    assert fifty.outcome().termination == "fifty_moves"
    fifty.pop()
    fifty.push("e2e5")  # a capture-free check resets nothing but is not mate
    assert fifty.outcome().termination == "fifty_moves"
    mate100 = Gardner("k4/5/1K3/4Q/5 w - - 99 80")
    mate100.push("e2e5")
    assert mate100.outcome().termination == "checkmate"
    rep = Gardner()
    for m in ("b1c3", "b5a3", "c3b1", "a3b5") * 2:
        assert rep.outcome() is None
        rep.push(m)
    assert rep.outcome().termination == "threefold_repetition" and rep.result() == "1/2-1/2"
    rep.pop()
    assert rep.outcome() is None
    # Rules only: legal moves still exist in a position drawn by rule.
    assert len(Gardner("k4/5/2K2/4R/5 w - - 100 80").legal_moves) > 0


@pytest.mark.parametrize("partial, full", [
    ("rnbqk/ppppp/5/PPPPP/RNBQK", START_FEN),
    ("  rnbqk/ppppp/5/PPPPP/RNBQK\t", START_FEN),
    ("k4/5/5/4r/K4 b", "k4/5/5/4r/K4 b - - 0 1"),
    ("k4/5/5/4r/K4 b -", "k4/5/5/4r/K4 b - - 0 1"),
    ("k4/5/5/4r/K4 b - -", "k4/5/5/4r/K4 b - - 0 1"),
    ("k4/5/5/4r/K4 b - - 17", "k4/5/5/4r/K4 b - - 17 1"),
    ("k4/5/5/4r/K4\tb  -\n- 17 9", "k4/5/5/4r/K4 b - - 17 9"),
])
def test_partial_fen_defaults_like_chess(partial, full):
    """Trailing FEN fields may be left out, as the chess reader allows: they default to
    "w - - 0 1" (the board alone is White to move), and white space of any kind separates."""
    board = Gardner(partial)
    assert board.fen() == full and board == Gardner(full) and board.hash == Gardner(full).hash
    assert list(board.legal_moves) == list(Gardner(full).legal_moves)
    # the chess reader gives the same defaults for the same partial forms
    chess_board = "4k3/8/8/8/8/8/4r3/K7"
    tail = full.split(" ", 1)[1]
    chess_partial = " ".join([chess_board] + partial.split()[1:])
    assert State("chess", chess_partial).text() == State("chess", f"{chess_board} {tail}").text()


def test_partial_fen_board_only_checks_the_position():
    """The board alone still gets every position check (White to move by default)."""
    with pytest.raises(ValueError, match="side not to move \\(Black\\) is in check"):
        Gardner("4k/4R/5/5/K4")
    with pytest.raises(ValueError, match="Black has 0 kings"):
        Gardner("5/5/5/5/K4")
    assert Gardner("4k/4R/5/5/K4 b").fen() == "4k/4R/5/5/K4 b - - 0 1"


def test_bad_input_raises_value_error():
    bad_fens = {
        "": "'': empty",
        " \t\n": "empty",
        "rnbqk/ppppp/5/PPPPP/RNBQK x": "side to move 'x'",
        "rnbqk/ppppp/5/PPPPP/RNBQK white": "side to move 'white'",
        "rnbqk/ppppp/5/PPPPP/RNBQK w KQ": "castling field 'KQ'",
        "rnbqk/ppppp/5/PPPPP/RNBQK w - e3": "en passant field 'e3'",
        "rnbqk/ppppp/5/PPPPP/RNBQK w - - x": "halfmove clock 'x'",
        "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 -1": "fullmove number '-1'",
        "rnbqk/ppppp/5/PPPPP": "has 4 ranks, expected 5",
        "rnbqk/ppppp/5/PPPPP/RNBQK/5": "more than 5 ranks",
        "rnbqk/ppppp/23/PPPPP/RNBQK": "two digits in a row in rank 3 '23'",
        "rnbqk/ppXpp/5/PPPPP/RNBQK": "bad piece letter 'X' in rank 4 'ppXpp'",
        "rnbqk/ppppp/0/PPPPP/RNBQK": "bad empty-square count '0' in rank 3",
        "rnbqk/ppppp/5/PPP\u00e9P/RNBQK": "bad piece letter byte 0xc3 in rank 2",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1": "rnbqkbnr",
        "rnbqk/ppppp/6/PPPPP/RNBQK w - - 0 1": "'6'",
        "rnbqk/ppppp/4/PPPPP/RNBQK w - - 0 1": "rank 3 '4'",
        "rnbqk/ppppp/5/PPPPP/RNBQK w KQ - 0 1": "castling field 'KQ'",
        "rnbqk/ppppp/5/PPPPP/RNBQK w - b3 0 1": "en passant field 'b3'",
        "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 0": "fullmove number '0'",
        "rnbqk/ppppp/5/PPPPP/RNBQ1 w - - 0 1": "White has 0 kings",
        "Pnbqk/1pppp/5/PPPPP/RNBQK w - - 0 1": "pawn on the first or last rank (a5)",
        "4k/4R/5/5/K4 w - - 0 1": "side not to move (Black) is in check",
        "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1 junk": "junk",
    }
    for fen, want in bad_fens.items():
        with pytest.raises(ValueError) as e:
            Gardner(fen)
        assert want in str(e.value), (fen, str(e.value))
        assert f"invalid Gardner FEN '{fen[:80]}'" in str(e.value), (fen, str(e.value))
    board = Gardner()
    for move, want in {
        "e2e4": "not a legal move",
        "f2f3": "invalid Gardner move 'f2f3'",
        "a2a3k": "invalid Gardner move",
        "c3c4": "no piece",
        "a2a3q": "not a promotion",
        "": "invalid Gardner move ''",
    }.items():
        with pytest.raises(ValueError) as e:
            board.push(move)
        assert want in str(e.value), (move, str(e.value))
    with pytest.raises(ValueError, match="3125"):
        board.push(3125)
    with pytest.raises(ValueError):
        board.push(-5)
    for san in ("Nf3", "e4", "Bb2", "O-O", "Kd2", "a3=Q", ""):
        with pytest.raises(ValueError):
            board.push_san(san)
    assert board.fen() == START_FEN and board.ply == 0
    promo = Gardner("k4/2P2/5/5/4K w - - 0 1")
    with pytest.raises(ValueError, match="promotion piece"):
        promo.push("c4c5")
    with pytest.raises(ValueError, match="bishop"):
        promo.push("c4c5b")
    with pytest.raises(ValueError):
        promo.san("c4c5b")
    with pytest.raises(TypeError):
        promo.to_python_chess()


def test_module_doctest():
    failures, tried = doctest.testmod(gardner_module)
    assert tried > 0 and failures == 0
