"""Mirror augmentation of training records (mavgame.datasets.symmetry, MAVEncoder's p_mirror, --mirror)."""
import argparse

import numpy as np
import pytest

import mavgame
from mavgame.annotators import make_annotator
from mavgame.datasets.symmetry import mirror_games, mirror_move, mirror_record, mirror_records, mirror_state_text


def _mirror_moves(moves: str) -> str:
    return "".join(str(8 - int(c)) for c in moves)


def _record(moves: str, annotate) -> dict:
    st = mavgame.ConnectFour.from_moves(moves)
    prev = mavgame.ConnectFour.from_moves(moves[:-1])
    rec = {"state": st.text(), "prev_state": prev.text(), "prev_action": moves[-1], "ply": len(moves),
           "result": st.result() if st.is_terminal() else "*"}
    if st.is_terminal():
        rec.update(values={}, best=None)
    else:
        vals, best = annotate(st)
        rec.update(values={str(m): v for m, v in vals.items()}, best=str(best))
    return rec


@pytest.mark.parametrize("moves", ["4", "43", "4453", "1234567", "3344556", "44444422", "1212121",
                                   "7654321776655", "2233441"])
def test_mirror_is_the_annotation_of_the_mirror_position(moves):
    """The mirrored record of a solver-annotated position is the solver's annotation of the mirror position:
    the same state text, the same value for every move, a best move of the best value; the previous state and
    move mirrored too; finished games stay finished with the same result; mirroring twice is the identity."""
    annotate = make_annotator("connect_four", {"max_nodes": 0, "exact_plies": 14})
    rec = _record(moves, annotate)
    mir = mirror_record("connect_four", rec)
    want = _record(_mirror_moves(moves), annotate)
    assert mir["state"] == want["state"] and mir["prev_state"] == want["prev_state"]
    assert mir["prev_action"] == want["prev_action"] and mir["result"] == want["result"]
    assert mir["values"] == want["values"]
    if want["best"] is None:
        assert mir["best"] is None
    else:
        assert mir["values"][mir["best"]] == max(want["values"].values())
        assert mir["best"] in (want["best"], str(8 - int(want["best"])))     # equally central ties
    assert mirror_record("connect_four", mir) == rec
    assert rec == _record(moves, annotate)                                    # not changed in place


def test_mirror_records_seeded_and_probability():
    recs = [{"state": mavgame.ConnectFour.from_moves(m).text(), "values": {}, "best": None, "result": "*"}
            for m in ("1", "12", "123", "1234", "2", "22")] * 20
    a = mirror_records("connect_four", recs, 0.5, seed=7)
    assert a == mirror_records("connect_four", recs, 0.5, seed=7)
    assert a != mirror_records("connect_four", recs, 0.5, seed=8)
    flipped = sum(x != r for x, r in zip(a, recs))
    assert 30 <= flipped <= 90                     # about half of 120 (none of these is symmetric)
    assert mirror_records("connect_four", recs, 0.0, seed=7) == recs
    assert mirror_records("connect_four", recs, 1.0, seed=7) == [mirror_record("connect_four", r) for r in recs]
    with pytest.raises(ValueError, match="1.5"):
        mirror_records("connect_four", recs, 1.5, seed=0)


def test_mirror_refuses_other_games_and_bad_notation():
    assert mirror_games() == ["connect_four", "tictactoe"]
    with pytest.raises(ValueError, match="'hex'"):
        mirror_record("hex", {"state": "x"})
    with pytest.raises(ValueError, match="'garbage'"):
        mirror_record("connect_four", {"state": "garbage"})
    good = {"state": mavgame.ConnectFour().text(), "values": {"8": 0.5}, "best": None}
    with pytest.raises(ValueError, match="'8'"):
        mirror_record("connect_four", good)


def test_encoder_mirror_builds_the_mirrored_examples(tmp_path):
    """p_mirror=1 gives exactly the examples of the mirrored records (same builder seed); other games are
    refused; the command line passes --mirror only when it is used and refuses values outside [0, 1]."""
    pytest.importorskip("torch")
    from mavgame.cli.train import add_arguments, example_options
    from mavgame.datasets.dataset import mav_encoder
    annotate = make_annotator("connect_four", {"max_nodes": 0, "exact_plies": 14})
    recs = [_record(m, annotate) for m in ("43", "4453", "1212121", "336")]
    enc, _ = mav_encoder("connect_four", p_mirror=1.0, p_top_all=0.5)
    plain, _ = mav_encoder("connect_four", p_top_all=0.5)
    mirrored = [mirror_record("connect_four", r) for r in recs]
    for seed in range(10):
        got, want, orig = enc(recs, seed), plain(mirrored, seed), plain(recs, seed)
        assert all(np.array_equal(t, u) and np.array_equal(m, n) for (t, m), (u, n) in zip(got, want))
        assert any(not np.array_equal(t, u) for (t, _), (u, _) in zip(got, orig))
    with pytest.raises(ValueError, match="'hex'"):
        mav_encoder("hex", p_mirror=0.5)
    with pytest.raises(ValueError, match="p_mirror"):
        mav_encoder("connect_four", p_mirror=-0.1)
    p = argparse.ArgumentParser()
    add_arguments(p)
    assert "p_mirror" not in example_options(p.parse_args(["--data", str(tmp_path), "--p-after", "0"]))
    assert example_options(p.parse_args(["--data", str(tmp_path), "--p-after", "0", "--mirror", "0.5",
                                         "--example-option", "k_terminal_prev=0"])) == {"p_mirror": 0.5}
    with pytest.raises(SystemExit, match="--mirror 2"):
        example_options(p.parse_args(["--data", str(tmp_path), "--mirror", "2"]))
    with pytest.raises(SystemExit, match="use --mirror"):
        example_options(p.parse_args(["--data", str(tmp_path), "--example-option", "p_mirror=1"]))


@pytest.mark.parametrize("moves", [["a1"], ["a1", "b2"], ["c1", "a3", "b1"], ["a2", "c3", "b3", "a1"]])
def test_tictactoe_mirror_is_the_annotation_of_the_mirror_position(moves):
    """Tic-tac-toe mirrors left to right (files a <-> c): the mirrored record of an exactly annotated
    position is the annotation of the mirror position, move for move."""
    annotate = make_annotator("tictactoe")
    flip = {"a": "c", "b": "b", "c": "a"}
    st, im = mavgame.State("tictactoe"), mavgame.State("tictactoe")
    for m in moves:
        st.push(m)
        im.push(flip[m[0]] + m[1:])
    vals, best = annotate(st)
    rec = {"state": st.text(), "values": vals, "best": best, "prev_action": moves[-1]}
    mir = mirror_record("tictactoe", rec)
    want_vals, _ = annotate(im)
    assert mir["state"] == im.text() == mirror_state_text("tictactoe", st.text())
    assert mir["values"] == want_vals and mir["prev_action"] == flip[moves[-1][0]] + moves[-1][1:]
    assert mir["values"][mir["best"]] == max(want_vals.values())
    assert all(mirror_move("tictactoe", m, st.text()) == flip[m[0]] + m[1:] for m in st.legal_moves)


def test_mirror_state_and_move_maps():
    s = mavgame.ConnectFour.from_moves("1123")
    text = s.text()
    assert mirror_state_text("connect_four", text) == mavgame.ConnectFour.from_moves("7765").text()
    assert mirror_state_text("connect_four", mirror_state_text("connect_four", text)) == text
    assert [mirror_move("connect_four", m, text) for m in "1234567"] == list("7654321")
    with pytest.raises(ValueError, match="'chess'"):
        mirror_state_text("chess", text)
    with pytest.raises(ValueError, match="'0'"):
        mirror_move("connect_four", "0", text)
    with pytest.raises(ValueError, match="'d1'"):
        mirror_move("tictactoe", "d1", mavgame.State("tictactoe").text())
