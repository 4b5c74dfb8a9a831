"""The MAV format from Python: headers, prompts, targets and the per-game %state text.

The chess %state is checked against python-chess (an independent implementation) on random games."""
import numpy as np
import pytest

import mavgame
from mavgame import _core, mav
from conftest import scaled

chess = pytest.importorskip("chess")

MAV_GAMES = [g for g in _core.games() if g in ("chess", "chess960", "gardner", "connect_four", "hex", "tictactoe")]


def random_states(game, n_games, max_plies, seed, **kw):
    rng = np.random.default_rng(seed)
    for _ in range(n_games):
        s = _core.State(game, **kw)
        for _ in range(int(rng.integers(0, max_plies))):
            if s.is_terminal():
                break
            acts = s.legal_actions()
            s.push(int(acts[rng.integers(len(acts))]))
        yield s


def chess_state_oracle(board: "chess.Board") -> str:
    """The %state of docs/format.md written with python-chess."""
    side = "w" if board.turn == chess.WHITE else "b"
    sq = "".join((board.piece_at(i).symbol() if board.piece_at(i) else ".") for i in range(64))
    fields = []
    for color in (chess.WHITE, chess.BLACK):
        king = board.king(color)
        rooks = [r for r in chess.scan_forward(board.castling_rights & chess.BB_BACKRANKS)
                 if (chess.BB_SQUARES[r] & board.occupied_co[color])]
        ks = [r for r in rooks if chess.square_file(r) > chess.square_file(king)]
        qs = [r for r in rooks if chess.square_file(r) < chess.square_file(king)]
        for side_rooks, std in ((ks, "K"), (qs, "Q")):
            if not side_rooks:
                fields.append(".")
            elif not board.chess960:
                fields.append(std if color == chess.WHITE else std.lower())
            else:
                f = "ABCDEFGH"[chess.square_file(side_rooks[0])]
                fields.append(f if color == chess.WHITE else f.lower())
    ep = board.ep_square if board.has_legal_en_passant() else None
    eps = chess.square_name(ep) if ep is not None else "."
    return f"{side} {sq} {''.join(fields)} {eps} {board.halfmove_clock:03d} {board.fullmove_number:04d}"


@pytest.mark.parametrize("game", ["chess", "chess960"])
def test_chess_state_matches_python_chess(game):
    n = 0
    for s in random_states(game, scaled(40), 120, seed=3):
        board = chess.Board(s.text(), chess960=(game == "chess960"))
        st = mav.state_text(s)
        assert st == chess_state_oracle(board), s.text()
        # and back
        back = mav.state_from_text(game, st)
        assert back.text() == s.text()
        n += 1
    assert n == scaled(40)


def test_state_texts_fixed_layout():
    s = _core.State("chess")
    assert mav.state_text(s) == "w RNBQKBNRPPPPPPPP" + "." * 32 + "pppppppprnbqkbnr KQkq . 000 0001"
    s.push("e2e4")
    s.push("d7d5")
    s.push("e4e5")
    s.push("f7f5")
    st = mav.state_text(s)
    assert st.split()[3] == "f6" and st.split()[2] == "KQkq" and st.split()[5] == "0003"
    t = _core.State("tictactoe", "x.o/.x./..o x")
    assert mav.state_text(t) == "x ..o.x.x.o"
    g = _core.State("gardner")
    assert mav.state_text(g) == "w RNBQKPPPPP.....ppppprnbqk 000 0001"
    if "connect_four" in MAV_GAMES:
        c = _core.State("connect_four")
        c.push("4")
        c.push("4")
        c.push("3")
        assert mav.state_text(c) == "o " + "..xx..." + "...o..." + "." * 28


@pytest.mark.parametrize("game", MAV_GAMES)
def test_state_roundtrip_every_game(game):
    for s in random_states(game, scaled(20), 60, seed=5):
        st = mav.state_text(s)
        assert mav.state_from_text(game, st, s.board_size, s.flags).text() == s.text()
        # constant layout: the same number of space-separated groups and the same group widths
        fresh = mav.state_text(_core.State(game, board_size=s.board_size, flags=s.flags))
        assert [len(x) for x in st.split(" ")][:2] == [len(x) for x in fresh.split(" ")][:2]


@pytest.mark.parametrize("bad,needle", [
    ("w RNBQKBNRPPPPPPPP" + "." * 31 + "x" + "pppppppprnbqkbnr KQkq . 000 0001", "square h6"),
    ("w RNBQKBNR KQkq . 000 0001", "board has 8 characters"),
    ("b RNBQKBNRPPPPPPPP" + "." * 32 + "pppppppprnbqkbnr KQkq . 000 001", "fullmove number has 3"),
    ("w RNBQKBNRPPPPPPPP" + "." * 32 + "pppppppprnbqkbnr KQqk . 000 0001", "castling field 3"),
])
def test_state_from_text_errors_name_the_field(bad, needle):
    with pytest.raises(ValueError, match=needle):
        mav.state_from_text("chess", bad)


def test_chess960_state_castling_needs_the_rook():
    """A Chess960 castling field names the rook's file: a file without a rook on that side is an
    error (not silently the other rook)."""
    s = mavgame.Chess960(fen="1r1k2r1/8/8/8/8/8/8/1R1K2R1 w GBgb - 0 1")
    st = mav.state_text(s)
    assert " GBgb " in st and mav.state_from_text("chess960", st).text() == s.text()
    for bad, needle in ((" HBgb ", r"castling field 1 \(white king side\) is 'H'"),
                        (" GAgb ", r"castling field 2 \(white queen side\) is 'A'"),
                        (" GBgc ", r"castling field 4 \(black queen side\) is 'c'")):
        with pytest.raises(ValueError, match=needle):
            mav.state_from_text("chess960", st.replace(" GBgb ", bad))


def test_header_and_prompt_forms():
    s = _core.State("chess")
    assert mav.header("chess", "%fen %top_5") == "<mav game=chess> %fen %top_5 </mav>\n"
    p = mav.prompt(s, "%fen %state %top_all %best_action")
    lines = p.splitlines()
    assert lines[0] == "<mav game=chess> %fen %state %top_all %best_action </mav>"
    assert lines[1] == "[%fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]"
    assert lines[2].startswith("[%state w RNBQKBNR") and len(lines) == 3
    # transition form from the history
    s.push("e2e4")
    p = mav.prompt(s, "%prev_fen %prev_action %state %top_3")
    assert p.splitlines()[1:] == ["[%prev_fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]",
                                  "[%prev_action e2e4]"]
    # or explicit
    p0 = _core.State("chess")
    assert mav.prompt(s, "%prev_fen %prev_action %state %top_3", prev_state=p0, prev_action="e2e4") == p
    with pytest.raises(ValueError, match="lead to"):
        mav.prompt(s, "%prev_fen %prev_action %state %top_3", prev_state=p0, prev_action="d2d4")
    with pytest.raises(ValueError, match="history"):
        mav.prompt(_core.State("chess"), "%prev_state %prev_action %state %top_3")
    with pytest.raises(ValueError, match="%fen is only"):
        mav.prompt(_core.State("tictactoe"), "%fen %top_1")
    with pytest.raises(ValueError, match="unknown MAV command"):
        mav.prompt(s, "%state %top_some")
    with pytest.raises(TypeError, match="game state"):
        mav.prompt("chess", "%state %top_1")


def test_target_order_values_and_terminal():
    s = _core.State("tictactoe")
    vals = {m: 0.5 for m in s.legal_moves}
    vals["c3"] = 0.9
    vals["a1"] = 0.1
    t = mav.target(s, vals, "%state %top_all %best_action")
    top, best = t.splitlines()
    entries = top[len("[%top_all "):-1].split(" ")
    assert entries[0] == "c3:<ctrl57>" and entries[-1] == "a1:<ctrl6>" and len(entries) == 9
    assert best == "[%best_action c3]"
    # ties: the given best move goes first among equal values
    t = mav.target(s, mav.Annotation.from_moves(s, {m: 0.5 for m in s.legal_moves}, best="b2"),
                   "%state %top_2 %best_action")
    assert t == "[%top_2 b2:<ctrl32> a1:<ctrl32>]\n[%best_action b2]\n"
    # k larger than the number of legal moves: all of them
    assert mav.target(s, vals, "%state %top_40").count(":<ctrl") == 9
    # an explicit display order
    t = mav.target(s, vals, "%state %top_3", order=[2, 0, 1])
    assert t == "[%top_3 c1:<ctrl32> c3:<ctrl57> b1:<ctrl32>]\n"
    with pytest.raises(ValueError, match="permutation"):
        mav.target(s, vals, "%state %top_3", order=[0, 0, 1])
    # terminal
    for m in ["b2", "a1", "c3", "a3", "c1", "b1", "c2"]:
        s.push(m)
    assert mav.target(s, None, "%state %top_5 %best_action") == '[%top_5 invalid : "1-0"]\n[%best_action invalid]\n'
    # errors name the problem
    s2 = _core.State("tictactoe")
    with pytest.raises(ValueError, match="not a win probability"):
        mav.target(s2, {"a1": 1.5}, "%state %top_1")
    with pytest.raises(ValueError, match="needs"):
        mav.target(s2, {"a1": 0.5}, "%state %top_all")
    with pytest.raises(ValueError, match="z9"):
        mav.target(s2, {"z9": 0.5}, "%state %top_1")
    with pytest.raises(ValueError, match="appears twice"):
        mav.target(s2, mav.Annotation([4, 4], [0.5, 0.5]), "%state %top_1")
    s2.push("b2")
    with pytest.raises(ValueError, match="action 4 is not legal"):
        mav.target(s2, mav.Annotation([4], [0.5]), "%state %top_1")
    with pytest.raises(ValueError, match="no annotation"):
        mav.target(s2, None, "%state %top_1")


def test_target_after_best_and_transition():
    s = _core.State("chess")
    s.push("e2e4")
    vals = {m: 0.4 for m in s.legal_moves}
    vals["c7c5"] = 0.45
    t = mav.target(s, vals, "%prev_fen %prev_action %fen %top_1 %best_action %fen")
    lines = t.splitlines()
    assert lines[0] == "[%fen rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1]"
    assert lines[1] == "[%top_1 c7c5:<ctrl28>]" and lines[2] == "[%best_action c7c5]"
    assert lines[3] == "[%fen rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2]"


def test_annotate_module_annotation_is_accepted():
    from mavgame.engines.annotate import EngineAnnotation
    s = _core.State("chess")
    ann = EngineAnnotation(fen=s.text(), best="e2e4", values={m: 0.5 for m in s.legal_moves})
    t = mav.target(s, ann, "%state %top_1 %best_action")
    assert t == "[%top_1 e2e4:<ctrl32>]\n[%best_action e2e4]\n"


def test_prompts_batch_equals_single():
    states = list(random_states("chess", 20, 30, seed=9))
    ps = mav.prompts(states, "%state %fen %top_all")
    assert ps == [mav.prompt(s, "%state %fen %top_all") for s in states]
    tok = mav.Tokenizer()
    ids, lens = _core.mav_prompt_tokens(tok._tok, states, "%state %fen %top_all")
    for i, p in enumerate(ps):
        assert tok.decode(ids[i, :lens[i]]) == p
        assert ids[i, 0] == tok.bos_id and (ids[i, lens[i]:] == tok.pad_id).all()


def test_mav_h_example_is_what_the_writer_writes():
    """The chess example at the top of csrc/format/mav.h (the %state after 1.e4) is real output."""
    import pathlib
    import re
    head = (pathlib.Path(__file__).resolve().parent.parent / "csrc" / "format" / "mav.h").read_text()
    shown = re.search(r"\[%state (.*)\]", head).group(1)
    s = mavgame.State("chess")
    s.push("e2e4")
    assert shown == mav.state_text(s)
