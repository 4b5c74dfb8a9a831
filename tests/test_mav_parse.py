"""Parsing MAV model output: structured results, precise errors, hallucination reports, batch metrics."""
import math

import numpy as np
import pytest

from mavgame import _core, mav
from conftest import scaled

MAV_GAMES = [g for g in _core.games() if g in ("chess", "chess960", "gardner", "connect_four", "hex", "tictactoe")]
START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def annotated(state, rng):
    return {m: float(rng.random()) for m in state.legal_moves}


def test_parse_clean_output_with_and_without_reference():
    s = _core.State("chess")
    vals = {m: 0.5 for m in s.legal_moves}
    vals["e2e4"] = 0.56
    cmds = "%fen %state %top_all %best_action"
    text = mav.prompt(s, cmds) + mav.target(s, vals, cmds)
    for ref in (None, s):
        r = mav.parse("chess", text, true_state=ref)
        assert r.ok and r.complete and r.issues == [] and r.has_ref
        assert r.cur.valid and r.cur.is_input and r.cur.text == START
        assert len(r.top) == 20 and r.top[0].move == "e2e4" and r.top[0].bucket == mav.bucket(0.56)
        assert r.top[0].status == "legal" and r.top[0].action == s.parse_move("e2e4")
        assert r.best == "e2e4" and r.best_action == s.parse_move("e2e4")
        assert r.n_correct == 20 and r.n_missing == 0 and r.missing == []
        assert r.top_actions.tolist() == [m.action for m in r.top]
        assert r.top_buckets.tolist() == [m.bucket for m in r.top] and r.top_moves == [m.move for m in r.top]
        assert r.values()["e2e4"] == pytest.approx(mav.bucket_value(mav.bucket(0.56)))
        assert r.state("cur").text() == START
        assert not any(v for k, v in r.hallucinations.items() if k != "n_missing")
    # the output alone, with the prompt given separately
    r = mav.parse("chess", mav.target(s, vals, cmds), prompt=mav.prompt(s, cmds))
    assert r.ok and len(r.top) == 20


def test_hallucination_report():
    s = _core.State("chess")
    s.push("e2e4")
    cmds = "%prev_fen %prev_action %state %top_all %best_action %state"
    prompt = mav.prompt(s, cmds)
    # wrong next state (the pawn is still on e2), an illegal move, a duplicate, a made-up move, bad bucket
    wrong = mav.state_text(_core.State("chess")).replace("w ", "b ", 1)
    out = (f"[%state {wrong}]\n"
           "[%top_all e7e5:<ctrl31> e7e5:<ctrl30> e2e4:<ctrl20> q9q9:<ctrl2> c7c5:<ctrl99>]\n"
           "[%best_action e7e5]\n"
           f"[%state {mav.state_text(s)}]\n")
    r = mav.parse("chess", out, prompt=prompt)
    h = r.hallucinations
    assert r.has_ref and r.ref_n_legal == 20
    assert h["wrong_state"] and r.cur.correct is False and r.cur.ref_text == s.text()
    assert h["illegal_moves"] == ["e2e4"] and h["duplicate_moves"] == ["e7e5"] and h["malformed_moves"] == ["q9q9"]
    assert r.n_correct == 2 and r.n_missing == 18 and len(r.missing) == 18 and "e7e5" not in r.missing
    assert sorted(r.missing_actions.tolist()) == sorted(s.parse_move(m) for m in r.missing)
    assert h["wrong_state_after_best"] and r.after.correct is False
    assert not r.ok
    msgs = r.errors
    assert any("line 5" in m and "q9q9" in m and "not a chess move" in m for m in msgs)
    assert any("line 5" in m and "<ctrl99>" in m and "<ctrl0>..<ctrl63>" in m for m in msgs)
    # bucket of the bad entry is -1, its value None
    bad = [m for m in r.top if m.move == "c7c5"][0]
    assert bad.bucket == -1 and bad.value is None and bad.status == "legal"


@pytest.mark.parametrize("out,line,needle", [
    ("", 4, "missing the [%top_all ...] line at the end"),
    ("[%top_all e7e5:<ctrl3>]\n", 5, "missing the [%best_action"),
    ("[%top_all e7e5:<ctrl3>\n[%best_action e7e5]\n", 4, "does not end with ']'"),
    ("[%best_action e7e5]\n", 4, "missing the [%top_all ...] line before [%best_action ...]"),
    ("[%top_all e7e5<ctrl3>]\n[%best_action e7e5]\n", 4, "no ':<ctrlN>' value"),
    ("[%top_all e7e5:ctrl3]\n[%best_action e7e5]\n", 4, "expected a value token"),
    ("[%top_all e7e5:<ctrl3>]\n[%best_action e7e5]\ntrailing words\n", 6, "after the last command"),
    ("top_all e7e5:<ctrl3>]\n[%best_action e7e5]\n", 4, "expected a line '[%top_all ...]'"),
    ("[%top_all invalid : \"2-2\"]\n[%best_action e7e5]\n", 4, "expected a result"),
    ("[%top_allx e7e5:<ctrl3>]\n[%best_action e7e5]\n", 4, "expected a space after the command"),
    ("[%fen e7e5]\n[%top_all e7e5:<ctrl3>]\n[%best_action e7e5]\n", 4, "expected [%top_all ...], got the command"),
])
def test_errors_have_line_and_expectation(out, line, needle):
    s = _core.State("chess")
    s.push("e2e4")
    prompt = mav.prompt(s, "%fen %state %top_all %best_action")
    r = mav.parse("chess", out, prompt=prompt)
    assert not r.ok
    assert any(i.line == line and needle in i.message for i in r.issues), r.errors


def test_top_k_lists_at_most_k_moves():
    s = _core.State("chess")
    p = mav.prompt(s, "%state %top_2")
    r = mav.parse("chess", p + "[%top_2 e2e4:<ctrl3> d2d4:<ctrl3> g1f3:<ctrl2> b1c3:<ctrl1>]\n")
    assert not r.ok and r.n_correct == 4 and len(r.top) == 4
    assert [(i.line, i.col) for i in r.issues] == [(3, 35)]  # at g1f3
    assert "the %top_2 line lists more than 2 moves (from entry 3 on)" in r.issues[0].message
    assert mav.parse("chess", p + "[%top_2 e2e4:<ctrl3> d2d4:<ctrl3>]\n").ok
    assert mav.parse("chess", mav.prompt(s, "%state %top_all") + "[%top_all e2e4:<ctrl3> d2d4:<ctrl3>]\n").ok


def test_header_errors():
    assert "expected 'chess'" in mav.parse("chess", "<mav game=hex> %state %top_1 </mav>\n").errors[0]
    assert "unknown command" in mav.parse("chess", "<mav game=chess> %state %top_1 %x </mav>\n").errors[0]
    assert "line 1" in mav.parse("chess", "nonsense").errors[0]
    r = mav.parse("chess", b"")
    assert not r.ok and r.errors == ["empty text"]
    r = mav.parse("chess", b"<mav game=chess\x00x> %state %top_1 </mav>\n")
    assert not r.header and r.errors == ["line 1, col 11: bad game name 'chess\\x00x' in the header"]
    with pytest.raises(ValueError, match="unknown game 'nope'"):
        mav.parse("nope", "x")
    with pytest.raises(ValueError, match="malformed MAV text: line 1"):
        mav.parse("chess", "nonsense").raise_for_errors()
    with pytest.raises(ValueError, match="true_state is a tictactoe state"):
        mav.parse("chess", "x", true_state=_core.State("tictactoe"))


def test_terminal_states():
    s = _core.State("tictactoe")
    for m in ["b2", "a1", "c3", "a3", "c1", "b1", "c2"]:
        s.push(m)
    cmds = "%state %top_3 %best_action"
    p = mav.prompt(s, cmds)
    r = mav.parse("tictactoe", p + '[%top_3 invalid : "1-0"]\n[%best_action invalid]\n')
    assert r.ok and r.outcome == "1-0" and r.outcome_correct is True and r.best_invalid and r.ref_result == "1-0"
    r = mav.parse("tictactoe", p + '[%top_3 invalid : "0-1"]\n[%best_action invalid]\n')
    assert r.ok and r.outcome_correct is False and r.hallucinations["wrong_outcome"]
    r = mav.parse("tictactoe", p + '[%top_3 a2:<ctrl3>]\n[%best_action a2]\n')
    assert r.outcome_correct is False and r.top[0].status == "illegal" and r.best_status == "illegal"
    # a non-terminal state claimed terminal
    s2 = _core.State("tictactoe")
    r = mav.parse("tictactoe", mav.prompt(s2, cmds) + '[%top_3 invalid : "1-0"]\n[%best_action invalid]\n')
    assert r.outcome_correct is False


@pytest.mark.parametrize("game", MAV_GAMES)
def test_roundtrip_and_metrics_every_game(game):
    rng = np.random.default_rng(4)
    b = mav.ExampleBuilder(seed=1, p_after=0.3)
    texts, refs = [], []
    for _ in range(scaled(8)):
        s = _core.State(game)
        for _ in range(int(rng.integers(1, 40))):
            if s.is_terminal():
                break
            s.push(int(rng.choice(s.legal_actions())))
        batch = b.build([(s, None if s.is_terminal() else annotated(s, rng))], return_text=True)
        p, t = batch.texts[0]
        texts.append(p + t)
        refs.append(s)
        r = mav.parse(game, p + t, true_state=s)
        assert r.ok and r.complete, (p + t, r.errors)
        assert r.n_illegal == r.n_malformed == r.n_duplicate == 0
    m = mav.metrics(game, texts, refs)
    assert m["examples"] == len(texts) and m["parsed_ok"] == len(texts)
    for k in ("best_action_legal", "top_all_precision", "top_all_recall", "top_all_f1", "next_state_accuracy"):
        assert math.isnan(m[k]) or m[k] == 1.0, (k, m)
    # metrics over ParseResults sum to the batch metrics
    m2 = mav.metrics_from_results(mav.parse(game, t, s) for t, s in zip(texts, refs))
    assert {k: v for k, v in m.items() if not (isinstance(v, float) and math.isnan(v))} == \
           {k: v for k, v in m2.items() if not (isinstance(v, float) and math.isnan(v))}


def test_metrics_values():
    s = _core.State("chess")
    cmds = "%state %top_all %best_action"
    p = mav.prompt(s, cmds)
    good = p + mav.target(s, {m: 0.5 for m in s.legal_moves}, cmds)
    half = p + "[%top_all e2e4:<ctrl3> d2d4:<ctrl3> e2e5:<ctrl3> e2e4:<ctrl1>]\n[%best_action e2e5]\n"
    s2 = _core.State("chess")
    s2.push("e2e4")
    tcmds = "%prev_fen %prev_action %fen %top_1"
    trans_ok = mav.prompt(s2, tcmds) + f"[%fen {s2.text()}]\n[%top_1 e7e5:<ctrl30>]\n"
    trans_bad = mav.prompt(s2, tcmds) + f"[%fen {START}]\n[%top_1 e7e5:<ctrl30>]\n"
    m = mav.metrics("chess", [good, half, trans_ok, trans_bad], [s, s, s2, s2])
    assert m["best_total"] == 2 and m["best_legal"] == 1 and m["best_action_legal"] == 0.5
    assert m["top_all_examples"] == 2 and m["top_listed"] == 24 and m["top_correct"] == 22 and m["top_legal"] == 40
    assert m["top_all_precision"] == pytest.approx(22 / 24) and m["top_all_recall"] == pytest.approx(22 / 40)
    p_, r_ = 22 / 24, 22 / 40
    assert m["top_all_f1"] == pytest.approx(2 * p_ * r_ / (p_ + r_))
    assert m["state_total"] == 2 and m["state_correct"] == 1 and m["next_state_accuracy"] == 0.5
    # without true states the reference comes from the inputs: same here
    m_noref = mav.metrics("chess", [good, half, trans_ok, trans_bad])
    assert m_noref["top_correct"] == 22 and m_noref["state_correct"] == 1
    # the same known counts from ParseResults (with and without true states), and an empty batch
    texts = [good, half, trans_ok, trans_bad]
    for refs in ([s, s, s2, s2], [None] * 4):
        mr = mav.metrics_from_results(mav.parse("chess", t, r) for t, r in zip(texts, refs))
        assert (mr["examples"], mr["best_legal"], mr["top_listed"], mr["top_correct"], mr["state_correct"]) == \
               (4, 1, 24, 22, 1)
    empty = mav.metrics_from_results([])
    assert empty["examples"] == 0 and math.isnan(empty["top_all_f1"])


def test_random_garbage_never_crashes():
    rng = np.random.default_rng(0)
    s = _core.State("chess")
    cmds = "%prev_fen %prev_action %state %fen %top_all %best_action %state"
    s.push("g1f3")
    base = (mav.prompt(s, cmds) + mav.target(s, {m: 0.5 for m in s.legal_moves}, cmds)).encode()
    for i in range(scaled(3000)):
        b = bytearray(base)
        for _ in range(int(rng.integers(1, 8))):
            op = rng.integers(4)
            at = int(rng.integers(0, max(1, len(b))))
            if op == 0 and b:
                b[at] = int(rng.integers(0, 256))
            elif op == 1 and b:
                del b[at]
            elif op == 2:
                b.insert(at, int(rng.choice(list(b"[]%:<> \n\"x0"))))
            else:
                del b[at:]
        r = mav.parse("chess", bytes(b), true_state=s if i % 2 else None)
        assert isinstance(r.ok, bool) and len(r.issues) <= 24 and r.n_issues >= len(r.issues)
        for m in r.top:
            assert m.status in ("legal", "illegal", "malformed", "unchecked")


@pytest.mark.skipif("hex" not in MAV_GAMES, reason="hex not registered")
def test_hex_config_and_swap():
    s = _core.State("hex", board_size=5, flags=4)  # MG_FLAG_HEX_SWAP
    s.push("c2")
    vals = {m: 0.4 for m in s.legal_moves}
    vals["swap"] = 0.6
    cmds = "%prev_state %prev_action %state %top_2 %best_action %state"
    text = mav.prompt(s, cmds) + mav.target(s, vals, cmds)
    assert "[%top_2 swap:<ctrl38>" in text
    # the position after the swap needs the swap flag to be read
    r = mav.parse("hex", text, board_size=5, flags=4)
    assert r.ok and r.after.valid and r.after.correct is True and r.best == "swap"
    r = mav.parse("hex", text, true_state=s)
    assert r.ok and r.after.correct is True
    r = mav.parse("hex", text)  # no flag: the swapped position is not a legal Hex position
    assert not r.ok and any("line 7" in e and "swap" in e for e in r.errors)
    # a %state of the wrong size is named
    st = mav.state_text(s)
    with pytest.raises(ValueError, match="25 cells, expected 49"):
        mav.state_from_text("hex", st, board_size=7, flags=4)
    assert mav.state_from_text("hex", st, flags=4).text() == s.text()


def test_move_with_a_nul_byte_is_reported_whole():
    # it used to be stored cut at the NUL, so the report named the legal move e2e4 as malformed
    text = ("<mav game=chess> %state %top_all </mav>\n[%state w RNBQKBNRPPPPPPPP................................"
            "pppppppprnbqkbnr KQkq . 000 0001]\n[%top_all e2e4\x00zz:<ctrl40> e2e4:<ctrl33>]\n")
    r = mav.parse("chess", text, _core.State("chess"))
    assert r.top_moves == ["e2e4\x00zz", "e2e4"]
    assert r.n_malformed == 1 and r.n_duplicate == 0 and r.n_correct == 1
    assert any("'e2e4\\x00zz' is not a chess move" in i.message for i in r.issues)


def test_chess_state_with_the_chess960_flag_reads_back():
    # a chess state built with the Chess960 flag used to be written with HAha under game=chess,
    # which the parser refused and state_from_text could not read
    s = _core.State("chess", None, 0, 1)
    cmds = "%fen %state %top_all"
    text = mav.prompt(s, cmds) + mav.target(s, {m: 0.5 for m in s.legal_moves}, cmds)
    assert " KQkq . 000 0001]" in text and "HAha" not in text
    r = mav.parse("chess", text, s)
    assert r.ok and not r.issues, r.issues
    line = text.splitlines()[2]
    assert mav.state_from_text("chess", line[len("[%state "):-1]).text() == s.text()
    # Chess960 castling that standard chess cannot spell: refused, naming the way out
    s960 = _core.State("chess", _core.chess960_fen(100), 0, 1)
    with pytest.raises(ValueError, match=r"Chess960 castling rights HEhe .*cannot be written under <mav game=chess>; "
                                         "write it as a chess960 state"):
        mav.prompt(s960, cmds)
    c9 = _core.State("chess960", _core.chess960_fen(100))
    text = mav.prompt(c9, cmds) + mav.target(c9, {m: 0.5 for m in c9.legal_moves}, cmds)
    assert mav.parse("chess960", text, c9).ok


def test_parse_result_fields_are_the_dataclass_fields():
    """ParseResult._from_core fills the instance without the dataclass __init__: every dataclass field must be set
    (with its default where the text has no reference), nothing else, and the entries must be real MoveEntry."""
    import dataclasses

    import mavgame
    from mavgame.mav import MoveEntry, ParseResult, StateSlot
    names = {f.name for f in dataclasses.fields(ParseResult)}
    s = mavgame.State("chess")
    cmds = "%state %top_all %best_action"
    good = mav.prompt(s, cmds) + mav.target(s, {m: 0.5 for m in s.legal_moves}, cmds)
    lines = good.split("\n")
    bad = "\n".join([lines[0], "[%state nonsense]"] + lines[2:])   # no valid input state: no reference
    for text, ref in ((good, s), (bad, None)):
        r = mav.parse("chess", text, true_state=ref)
        assert set(vars(r)) == names
        assert r.has_ref is (ref is not None) and r.ok is (ref is not None)
        assert type(r.cur) is StateSlot and type(r.after) is StateSlot
        assert len(r.top) == len(s.legal_moves) and all(type(e) is MoveEntry for e in r.top)
        assert all(type(e.duplicate) is bool for e in r.top)
        assert [e.status for e in r.top] == ["legal" if ref is not None else "unchecked"] * len(r.top)
    defaults = {f.name: f.default for f in dataclasses.fields(ParseResult) if f.default is not dataclasses.MISSING}
    for k in ("ref_n_legal", "ref_result", "n_illegal", "n_missing", "outcome_correct"):
        assert getattr(r, k) == defaults[k]
    assert r.missing == [] and r.missing_actions.shape == (0,)


def test_top_entries_built_in_c_are_plain_move_entries():
    """ParseResult.top comes from _core.mav_top_entries: MoveEntry named tuples equal to ones built in Python,
    outside the cyclic GC (atoms only), picklable; bad tables are refused with the offending value named."""
    import gc
    import pickle
    import mavgame
    from mavgame.mav import MoveEntry
    s = mavgame.State("chess")
    cmds = "%state %top_all %best_action"
    text = mav.prompt(s, cmds) + mav.target(s, {m: 0.25 for m in s.legal_moves}, cmds)
    r = mav.parse("chess", text, true_state=s)
    status = ("legal", "illegal", "malformed", "unchecked")
    expect = [MoveEntry(m, a, b, status[st], bool(d), ln, col)
              for m, (a, b, st, d, ln, col) in zip(r.top_moves, r.top_table.tolist())]
    assert r.top == expect and len(r.top) == len(s.legal_moves)
    assert all(type(e) is MoveEntry and not gc.is_tracked(e) for e in r.top)
    assert pickle.loads(pickle.dumps(r.top)) == expect and repr(r.top[0]) == repr(expect[0])
    assert r.top[0].value == (r.top[0].bucket + 0.5) / mav.BUCKETS
    with pytest.raises(ValueError, match=r"int32 array \[20, 6\]"):
        _core.mav_top_entries(MoveEntry, status, r.top_moves, r.top_table[:, :5].copy())
    with pytest.raises(ValueError, match=r"int32 array"):
        _core.mav_top_entries(MoveEntry, status, r.top_moves, r.top_table.astype(np.int64))
    bad = r.top_table.copy()
    bad[3, 2] = 7
    with pytest.raises(ValueError, match="status code 7 of entry 3"):
        _core.mav_top_entries(MoveEntry, status, r.top_moves, bad)
    with pytest.raises(TypeError, match="tuple subclass"):
        _core.mav_top_entries(dict, status, r.top_moves, r.top_table)
