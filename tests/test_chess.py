"""Chess and Chess960: perft against the shared reference data, and the Python API."""
import pickle
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import scaled, test_scale
from mavgame import Chess, Chess960, ChessFamily, State, _core
from mavgame.games.chess import Outcome, chess960_fen

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def read_perft(path):
    """[(id, fen, {depth: nodes})] from an EPD + perft file."""
    out = []
    ident = None
    for line in path.read_text().splitlines():
        if line.startswith("id "):
            ident = line[3:].strip()
        elif line.startswith("epd "):
            out.append((ident, line[4:].strip(), {}))
        elif line.startswith("perft ") and out:
            _, d, n = line.split()
            out[-1][2][int(d)] = int(n)
    return out


def every_nth(items):
    """A scale-dependent subset (all of them at MAVGAME_TEST_SCALE=1)."""
    step = max(1, round(1 / test_scale()))
    return items[::step]


# --- perft ------------------------------------------------------------------------------


def test_startpos_perft():
    board = Chess()
    assert [board.perft(d) for d in range(6)] == [1, 20, 400, 8902, 197281, 4865609]
    assert board.fen() == START  # perft works on a copy


def test_tricky_perft(shared_data):
    positions = read_perft(shared_data / "perft" / "tricky.perft")
    assert len(positions) >= 19
    standard = 0
    for ident, fen, counts in positions:
        board960 = Chess960(fen=fen)
        try:
            board = Chess(fen)
        except ValueError:
            board = None  # Chess960-only castling rights (e.g. the X-FEN positions)
        standard += board is not None
        for depth, nodes in sorted(counts.items()):
            assert board960.perft(depth) == nodes, (ident, depth)
            if board is not None:
                assert board.perft(depth) == nodes, (ident, depth)
    assert standard >= 10


@pytest.fixture(scope="module")
def chess960_positions(shared_data):
    positions = read_perft(shared_data / "perft" / "chess960.perft")
    assert len(positions) == 960
    return positions


def test_chess960_perft_depth4(chess960_positions):
    for ident, fen, counts in every_nth(chess960_positions):
        board = Chess960(fen=fen)
        for depth in (1, 2, 3, 4):
            assert board.perft(depth) == counts[depth], (ident, fen, depth)


@pytest.mark.slow
def test_chess960_perft_depth5(chess960_positions):
    for ident, fen, counts in chess960_positions:
        assert Chess960(fen=fen).perft(5) == counts[5], (ident, fen)


@pytest.mark.slow
def test_chess960_perft_depth6_sample(chess960_positions):
    for ident, fen, counts in chess960_positions[::40]:
        assert Chess960(fen=fen).perft(6) == counts[6], (ident, fen)


@pytest.mark.slow
def test_startpos_perft_depth6():
    assert Chess().perft(6) == 119060324


def test_perft_divide():
    board = Chess("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    div = board.perft_divide(3)
    assert len(div) == 48 and sum(div.values()) == 97862
    assert "e1g1" in div and "e1c1" in div and "e1h1" not in div
    assert div["e1g1"] == _after(board, "e1g1").perft(2)


def _after(board, move):
    c = board.copy()
    c.push(move)
    return c


# --- construction and text --------------------------------------------------------------


def test_construction():
    assert Chess().fen() == START
    assert Chess960().fen() == START
    assert Chess960(0).fen() == "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1"
    assert Chess960(959).fen().startswith("rkrnnqbb/")
    assert Chess960(position=5, fen=START).fen() == START  # fen wins
    assert Chess960(chess960_fen(7)).fen() == Chess960(7).fen()  # a FEN as the first argument
    assert len({chess960_fen(n) for n in range(960)}) == 960
    for bad in (-1, 960, 10**20):
        with pytest.raises((ValueError, OverflowError)):
            Chess960(bad)
    assert Chess().game == "chess" and Chess960().game == "chess960"
    assert isinstance(Chess(), ChessFamily) and isinstance(Chess(), State)
    assert State("chess").text() == START


@pytest.mark.parametrize(
    "fen, needle",
    [
        ("", "empty"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "has 7 ranks"),
        ("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "'ppppppp' has 7 squares"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNZ w KQkq - 0 1", "bad piece letter 'Z'"),
        ("rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", "no black king"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKKBNR w kq - 0 1", "more than one white king"),
        ("rnbqkbnP/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQq - 0 1", "pawn on its back rank at h8"),
        ("4k3/8/8/8/8/8/8/4RK2 w - - 0 1", "side not to move (black) is in check"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1", "no white rook on h1"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1", "en passant square 'e6'"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq z9 0 1", "bad en passant square 'z9'"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR q KQkq - 0 1", "side to move 'q'"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - half 1", "bad halfmove clock 'half'"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 7", "more than 6 fields"),
    ],
)
def test_bad_fen(fen, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        Chess(fen)


def test_failed_reinit_keeps_state():
    board = Chess()
    board.push("e2e4")
    with pytest.raises(ValueError):
        board.__init__("not a fen")
    assert board.fen() == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    assert board.ply == 1


def test_fen_normalisation():
    # En passant square kept only when a capture is legal (python-chess's default fen()).
    assert Chess("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1").fen().split()[3] == "-"
    assert Chess("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3").fen().split()[3] == "e3"
    # Pinned pawn: the only en passant capture would expose the king.
    assert Chess("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1").fen().split()[3] == "-"
    # Shredder-FEN and X-FEN in, X-FEN out.
    assert Chess960(fen="rk2r2r/8/8/8/8/8/8/RK2R2R w EAea - 0 1").fen() == "rk2r2r/8/8/8/8/8/8/RK2R2R w EQeq - 0 1"
    assert Chess(START.replace("KQkq", "HAha")).fen() == START
    # Clocks: big halfmove clocks are kept, fullmove 0 becomes 1, missing clocks default.
    assert Chess("4k3/8/8/8/8/8/8/4K3 w - - 250 0").fen() == "4k3/8/8/8/8/8/8/4K3 w - - 250 1"
    assert Chess("4k3/8/8/8/8/8/8/4K3 b - -").fen() == "4k3/8/8/8/8/8/8/4K3 b - - 0 1"


def test_chess960_castling_field_forms():
    """X-FEN (K/Q for the outermost rook, file letters for an inner one) and Shredder-FEN in,
    X-FEN out, as python-chess writes it."""
    fen = "1r2k1rr/8/8/8/8/8/8/1R2K1RR w {} - 0 1"
    assert Chess960(fen=fen.format("KQkq")).fen() == fen.format("KQkq")  # h1/b1 rooks
    assert Chess960(fen=fen.format("GBgb")).fen() == fen.format("GQgq")  # inner g-rook, outer b-rook
    assert Chess960(fen=fen.format("HBhb")).fen() == fen.format("KQkq")  # Shredder-FEN
    board = Chess960(fen="4k3/8/8/8/8/8/8/1R2K1RR w G - 0 1")  # castles with the inner g1 rook
    board.push_san("O-O")
    assert board.fen() == "4k3/8/8/8/8/8/8/1R3RKR b - - 1 1"
    for bad, needle in (("Cc", "no white rook on c1"), ("HG", "h-side right twice")):
        with pytest.raises(ValueError, match=needle):
            Chess960(fen=fen.format(bad))


def test_many_moves_position():
    """The most pieces a side may have (king and 15 queens): 224 legal moves, perft by both counters."""
    board = Chess("2Q1Q1rk/Q5pp/3Q4/1Q1Q2QQ/3Q4/Q6Q/2Q4Q/K3QQ2 w - - 0 1")
    assert len(board.legal_actions()) == 224 and board.perft(2) == 692
    assert sum(board.perft_divide(2).values()) == 692
    assert board.max_moves >= 224


def test_str_repr_svg():
    board = Chess()
    board.push("e2e4")
    assert str(board).splitlines()[4] == ". . . . P . . ."
    assert str(board).splitlines()[0] == "r n b q k b n r"
    assert eval(repr(board), {"Chess": Chess}).fen() == board.fen()
    c960 = Chess960(100)
    assert eval(repr(c960), {"Chess960": Chess960}).fen() == c960.fen()
    svg = board._repr_svg_()
    root = ET.fromstring(svg)
    texts = [t for t in root.iter("{http://www.w3.org/2000/svg}text") if "piece" in (t.get("class") or "")]
    assert len(texts) == 32
    assert sum(1 for t in texts if t.get("class") == "piece P") == 8
    assert board.piece_at("e4") == "P" and board.piece_at("e2") is None and board.piece_at(60) == "k"
    with pytest.raises(ValueError):
        board.piece_at("i9")


# --- moves ------------------------------------------------------------------------------


def test_push_pop_and_errors():
    board = Chess()
    a = board.push("e2e4")
    assert a == 12 | 28 << 6
    assert board.turn is False and board.to_move == 1
    assert board.push(52 | 36 << 6) == 52 | 36 << 6
    fen = board.fen()
    for bad in ("e2e5", "e1e2e3", "zz", "", "e7e8", "0000", "e7e8k", 5, -1, 20480):
        with pytest.raises(ValueError) as info:
            board.push(bad)
        assert str(bad) in str(info.value)
        assert fen in str(info.value)
        assert board.fen() == fen and board.ply == 2
    with pytest.raises(ValueError, match="out of range"):
        board.push(10**30)
    with pytest.raises(TypeError):
        board.push(1.5)
    with pytest.raises(ValueError, match="illegal SAN 'Ke3'"):
        board.push_san("Ke3")
    with pytest.raises(ValueError, match="invalid SAN 'xx'"):
        board.push_san("xx")
    assert board.fen() == fen
    assert board.pop() == 52 | 36 << 6
    assert board.pop() == a
    assert board.fen() == START
    with pytest.raises(IndexError):
        board.pop()


def test_castling_strings():
    board = Chess("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert {"e1g1", "e1c1"} <= set(board.legal_moves)
    assert "e1h1" not in board.legal_moves
    assert board.parse_move("e1h1") == board.parse_move("e1g1") == 4 | 7 << 6
    assert board.san("e1g1") == "O-O" and board.san("e1h1") == "O-O"
    assert board.is_castling("e1c1") and not board.is_castling("e1f1")
    b960 = Chess960(fen="r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert {"e1h1", "e1a1"} <= set(b960.legal_moves) and "e1g1" not in b960.legal_moves
    b960.push_san("O-O-O")
    assert b960.fen() == "r3k2r/8/8/8/8/8/8/2KR3R b kq - 1 1"


def test_san_and_helpers():
    board = Chess()
    assert board.san("g1f3") == "Nf3" and board.parse_san("Nf3") == board.parse_move("g1f3")
    assert board.uci(board.parse_move("g1f3")) == "g1f3"
    assert sorted(board.legal_sans())[:3] == ["Na3", "Nc3", "Nf3"]
    for san in ("e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6"):
        board.push_san(san)
    assert board.san("h5f7") == "Qxf7#"
    assert board.is_capture("h5f7") and not board.is_capture("h5h6")
    assert board.move_info("h5f7") == {"from": "h5", "to": "f7", "piece": "Q", "capture": True,
                                       "promotion": None, "castle": None}
    assert board.move_stack == ["e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6"]
    assert board.peek() == "g8f6"
    board.push_san("Qxf7#")
    assert board.is_check() and board.is_checkmate() and board.is_game_over()
    assert board.outcome() == Outcome("checkmate", True) and board.outcome().result() == "1-0"
    assert board.result() == "1-0"
    assert len(board.legal_actions()) == 0 and list(board.legal_moves) == []


def test_outcomes():
    assert Chess("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").outcome() == Outcome("stalemate", None)
    assert Chess("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").is_stalemate()
    assert Chess("7k/8/6K1/8/8/8/8/2N5 b - - 0 1").outcome() == Outcome("insufficient_material", None)
    assert Chess("7k/8/6K1/8/8/8/8/2N5 b - - 0 1").is_insufficient_material()
    assert Chess("7k/8/6K1/8/8/8/8/2R5 b - - 99 70").outcome() is None
    assert Chess("7k/8/6K1/8/8/8/8/2R5 b - - 99 70").halfmove_clock == 99


def test_fifty_and_seventyfive_move_rules():
    """python-chess's semantics: the fifty-move rule is a claim (also one move ahead, by a move that is no
    capture or pawn move), the seventy-five-move rule ends the game; the search's rule ends it at 100."""
    at = {n: Chess(f"7k/8/6K1/8/8/8/8/2R5 b - - {n} 70") for n in (98, 99, 100, 149, 150)}
    assert [at[n].outcome() for n in at] == [None, None, None, None, Outcome("seventyfive_moves", None)]
    assert [at[n].can_claim_fifty_moves() for n in at] == [False, True, True, True, True]
    assert [at[n].is_fifty_moves() for n in at] == [False, False, True, True, True]
    assert [at[n].is_seventyfive_moves() for n in at] == [False, False, False, False, True]
    assert at[99].outcome(claim_draw=True) == Outcome("fifty_moves", None)         # Black's next king move reaches 100
    assert at[100].outcome(claim_draw=True) == Outcome("fifty_moves", None)
    assert at[150].outcome(claim_draw=True) == Outcome("seventyfive_moves", None)  # the automatic draw first
    assert at[100].result() == "*" and at[100].result(claim_draw=True) == "1/2-1/2"
    assert not at[100].is_game_over() and at[100].is_game_over(claim_draw=True) and at[100].can_claim_draw()
    # The search's terminal rule: drawn where a draw can be claimed in the position itself.
    assert [State.outcome(at[n]) for n in at] == [(0, "none"), (0, "none"), (3, "fifty_moves"),
                                                  (3, "fifty_moves"), (3, "seventyfive_moves")]
    assert [at[n].is_terminal() for n in at] == [False, False, True, True, True]
    assert State.result(at[100]) == "1/2-1/2" and at[100].returns() == [0.0, 0.0]
    # At 99 a claim needs a legal move that keeps the clock running: pawn moves (h3, h4) reset it.
    assert not Chess("8/8/8/8/8/8/5k1P/7K w - - 99 70").can_claim_fifty_moves()
    assert Chess("8/8/8/8/8/5k2/7P/7K w - - 99 70").can_claim_fifty_moves()       # Kg1 reaches 100


def test_threefold_and_fivefold_repetition():
    board = Chess()
    shuffle = ("g1f3", "g8f6", "f3g1", "f6g8")
    for m in shuffle * 2:
        assert board.outcome() is None
        board.push(m)
    # The third occurrence of the start position: a claim for python-chess, the end for the search.
    assert board.is_repetition(3) and not board.is_repetition(4)
    assert board.outcome() is None and board.can_claim_threefold_repetition() and board.can_claim_draw()
    assert board.outcome(claim_draw=True) == Outcome("threefold_repetition", None)
    assert State.outcome(board) == (3, "threefold_repetition") and board.is_terminal()
    board.pop()
    # One move before: the claim looks ahead (g8 again makes the third occurrence), the search does not.
    assert not board.is_repetition(3) and board.can_claim_threefold_repetition()
    assert board.outcome(claim_draw=True) == Outcome("threefold_repetition", None)
    assert State.outcome(board) == (0, "none") and not board.is_terminal()
    board.push("f6g8")
    for m in shuffle * 2:
        board.push(m)
    assert board.is_repetition(5) and board.is_fivefold_repetition()
    assert board.outcome() == Outcome("fivefold_repetition", None) and board.result() == "1/2-1/2"
    assert State.outcome(board) == (3, "fivefold_repetition")
    assert len(board.move_stack) == 16 and board.fullmove_number == 9


def test_copy_hash_eq_pickle():
    a = Chess()
    b = a.copy()
    b.push("e2e4")
    assert a.fen() == START and a != b
    for m in ("g1f3", "g8f6", "f3g1", "f6g8"):
        a.push(m)
    # Same position (same hash); == also compares the clocks, as python-chess does.
    assert a.hash == Chess().hash and a != Chess()
    assert a == Chess("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 4 3")
    c = Chess()
    c.push("e2e4")
    d = Chess("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    assert c.hash == d.hash and c == d
    assert Chess960() != Chess()  # different games
    e = pickle.loads(pickle.dumps(b))
    assert type(e) is Chess and e == b and e.move_stack == ["e2e4"]
    f = pickle.loads(pickle.dumps(Chess960(7)))
    assert type(f) is Chess960 and f.fen() == chess960_fen(7)


def test_legal_actions_array():
    board = Chess()
    acts = board.legal_actions()
    assert acts.dtype == np.int32 and len(acts) == 20
    assert all(board.is_legal(int(a)) for a in acts)
    mask = board.legal_actions_mask()
    assert mask.shape == (5 * 4096,) and mask.sum() == 20


def test_core_functions_reject_other_games():
    with pytest.raises(TypeError, match="chess-family"):
        _core.san(State("tictactoe"), 0)
    with pytest.raises(TypeError):
        _core.san("not a state", 0)
    with pytest.raises(ValueError, match="illegal chess action 4096"):
        _core.san(Chess(), 4096)


def test_random_games_push_pop(scale):
    """Random games with push/pop through Python: the FEN after popping everything is the start."""
    rng = np.random.default_rng(1)
    for g in range(scaled(20)):
        board = Chess960(int(rng.integers(960))) if g % 2 else Chess()
        start = board.fen()
        fens = [start]
        while not board.is_terminal() and board.ply < 200:
            acts = board.legal_actions()
            board.push(int(acts[rng.integers(len(acts))]))
            fens.append(board.fen())
        while board.ply:
            assert board.fen() == fens[board.ply]
            board.pop()
        assert board.fen() == start


# --- is_legal over the whole action space -----------------------------------------------

# Castling (through and out of check, Chess960 kings and rooks on unusual squares), en passant (legal, by
# a pinned pawn, exposing the king along the rank, resolving a pawn's check), promotions (pinned, in
# check, capturing the checker), pins and double checks.
IS_LEGAL_FENS = [
    (False, "r3k2r/8/8/8/8/8/6p1/R3K2R w KQkq - 0 1"),
    (False, "r3k2r/8/8/8/4r3/8/8/R3K2R w KQkq - 0 1"),
    (False, "1r2k2r/8/8/8/8/8/8/R3K2R b KQk - 0 1"),
    (True, "rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1"),
    (True, "r5kr/8/8/8/8/8/8/R5KR w HAha - 0 1"),
    (True, "qr1k3r/8/8/8/8/8/8/QR1K3R w HBhb - 0 1"),
    (True, "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"),
    (False, "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"),
    (False, "2r4k/8/8/2PpP3/8/8/8/2K5 w - d6 0 2"),
    (False, "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1"),
    (False, "8/8/8/2k5/3Pp3/8/8/3K4 b - d3 0 1"),
    (False, "r1n1k3/1P6/8/8/8/8/8/4K3 w - - 0 1"),
    (False, "k3r3/3P4/8/8/8/8/8/4K3 w - - 0 1"),
    (False, "7k/K1P3r1/8/8/8/8/8/8 w - - 0 1"),
    (False, "4k3/8/8/8/8/8/1p6/R1N1K3 b Q - 0 1"),
    (False, "4k3/8/8/8/1b6/8/3N4/4K2r w - - 0 1"),
    (False, "4k3/4r3/8/8/8/8/4P3/4K3 w - - 0 1"),
    (False, "4k3/8/8/b7/8/8/3Q4/4K3 w - - 0 1"),
    (False, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"),
]


def _check_is_legal(board):
    """is_legal(a) == (a in legal_actions) for every action id of the game (and a few outside it)."""
    legal = set(board.legal_actions().tolist())
    got = {a for a in range(board.num_actions) if board.is_legal(a)}
    assert got == legal, (board.fen(), sorted(got ^ legal)[:8])
    assert not any(board.is_legal(a) for a in (-1, board.num_actions, 2**31 - 1, -(2**31)))
    return legal


def test_is_legal_whole_action_space(shared_data):
    """The chess is_legal (which decides one action without generating the moves) agrees with the legal
    moves on the reference perft positions, random games' positions and special positions."""
    rng = np.random.default_rng(52)
    boards = [Chess960(fen=fen) if c960 else Chess(fen) for c960, fen in IS_LEGAL_FENS]
    for _, fen, _ in read_perft(shared_data / "perft" / "tricky.perft"):
        boards.append(Chess960(fen=fen))
    for _, fen, _ in read_perft(shared_data / "perft" / "chess960.perft")[::97]:
        boards.append(Chess960(fen=fen))
    kinds = {"castle": 0, "ep": 0, "promo": 0}
    checked = 0
    for start in boards:
        board = start.copy()
        for _ply in range(scaled(4)):
            legal = _check_is_legal(board)
            checked += 1
            kinds["promo"] += sum(a >> 12 > 0 for a in legal)
            kinds["castle"] += sum(board.is_castling(a) for a in legal)
            kinds["ep"] += board.fen().split()[3] != "-"  # kept only when an en passant capture is legal
            if not legal or board.is_terminal():
                break
            board.push(int(rng.choice(sorted(legal))))
    for g in range(scaled(6)):
        board = Chess960(int(rng.integers(960))) if g % 2 else Chess()
        while not board.is_terminal() and board.ply < 160:
            if board.ply % 8 == 0:
                _check_is_legal(board)
                checked += 1
            acts = board.legal_actions()
            board.push(int(acts[rng.integers(len(acts))]))
    assert checked >= len(boards) + scaled(6)  # every start position and every game checked at least once
    assert min(kinds.values()) > 0, kinds
