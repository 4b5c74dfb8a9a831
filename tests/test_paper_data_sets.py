"""The papers' data sets shipped in mavgame/data (issue 54): the MAV paper's TCEC opening book and the
AZdb paper's Penrose and Challenge puzzle sets.  Every FEN legal (mavgame's Chess; python-chess's
``Board.is_valid()`` where installed), every solution move legal in sequence, the side to play as the
paper's table says, and the loaders and scoring that read them."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from mavgame import _core
from mavgame.az import puzzles as pz
from mavgame.games.registry import DATA
from mavgame.play.openings import load_openings, opening_set_path, opening_sets

TCEC = DATA / "openings_chess_tcec.txt"
PAPERS = Path(__file__).resolve().parents[2] / "shared" / "papers"


def _tcec_rows():
    out = []
    for line in TCEC.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, fen, moves, note = [p.strip() for p in line.split("|")]
        out.append((name, fen, moves, note))
    return out


# -- the MAV paper's TCEC opening book (appendix G) --------------------------------------------


def test_tcec_book_every_fen_legal():
    ops = load_openings("chess", name="tcec")
    assert len(ops) == 586 and [o.name for o in ops] == [f"tcec-{k}" for k in range(1, 587)]
    assert len({o.text for o in ops}) == 586             # no position twice
    for o in ops:
        assert o.moves == () and o.text
        s = o.state("chess")                              # mavgame parses it; not a finished game
        assert s.text() == o.text and s.legal_actions().size > 0


def test_tcec_book_python_chess_valid():
    chess = pytest.importorskip("chess")
    for o in load_openings("chess", name="tcec"):
        b = chess.Board(o.text)
        assert b.is_valid(), (o.name, o.text, b.status())
        assert b.legal_moves.count() == _core.State("chess", o.text).legal_actions().size


def test_tcec_book_keeps_names_and_scores():
    rows = _tcec_rows()
    assert len(rows) == 586
    for name, fen, moves, note in rows:
        assert fen.startswith("fen=") and moves == ""
        assert re.fullmatch(r"[A-Za-z0-9 ().,'-]+; paper score [+-]\d\.\d\d", note), note
    by = {r[0]: r for r in rows}
    # first and last rows of the paper's table, and the start position it lists
    assert by["tcec-1"][3] == "QGD; paper score +0.47"
    assert by["tcec-1"][1] == "fen=rnbqkbnr/pp3ppp/4p3/3P4/3p4/2N5/PP2PPPP/R1BQKBNR w KQkq - 0 5"
    assert by["tcec-586"][3] == "Caro-Kann; paper score +1.10"
    assert by["tcec-89"][1] == "fen=" + _core.State("chess").text()


def test_tcec_book_matches_the_paper_text():
    paper = PAPERS / "000_c49e40bf410761b8.txt"
    if not paper.exists():
        pytest.skip("the papers are not beside this checkout")
    table = [ln for ln in paper.read_text(encoding="utf-8").splitlines()
             if re.match(r"\| .* \| [1-8rnbqkpRNBQKP/]+ [wb] ", ln)]
    fens = [ln.split("|")[2].strip() for ln in table]
    assert fens == [o.text for o in load_openings("chess", name="tcec")]


def test_tcec_set_is_named_and_not_the_default():
    assert opening_set_path("chess", "tcec") == TCEC and "tcec" in opening_sets("chess")
    assert len(load_openings("chess")) < 100            # the default chess openings are unchanged
    with pytest.raises(ValueError, match="no opening set"):
        opening_set_path("connect_four", "tcec")
    with pytest.raises(ValueError, match="not both"):
        load_openings("chess", name="tcec", path=str(TCEC))


def test_league_openings_tcec_resolves():
    from mavgame.cli.league import _resolve_openings
    from mavgame.play.league import League
    ops = _resolve_openings("tcec", "chess", 0, 0)
    assert len(ops) == 586 and ops[0].name == "tcec-1"
    lg = League({"a": "random", "b": "random"}, "chess", ops, matchups=3, seed=5)
    sched = lg.schedule()
    assert len(sched) == 6                               # each drawn opening with both colours
    by_matchup = {}
    for t in sched:
        by_matchup.setdefault(t.round, []).append(t)
    assert len(by_matchup) == 3
    for ts in by_matchup.values():
        assert len({t.opening.name for t in ts}) == 1 and {t.first for t in ts} == {"a", "b"}


def test_league_plays_from_a_tcec_position():
    from mavgame.play.league import League
    ops = load_openings("chess", name="tcec")[:1]
    res = League({"a": "random", "b": "random"}, "chess", ops, max_plies=4, seed=1, workers=1).run(progress=False)
    assert len(res.games) == 2
    assert all(g.opening == "tcec-1" and g.start == ops[0].text for g in res.games)


# -- the AZdb paper's Penrose and Challenge sets (appendix D) ----------------------------------

_OUT_OF_GAME = {"penrose-19", "penrose-30", "penrose-31", "penrose-32", "penrose-33", "penrose-34", "penrose-35"}


@pytest.mark.parametrize("name,count", [("penrose", 53), ("challenge", 15)])
def test_puzzle_set_loads_and_every_fen_legal(name, count):
    ps = pz.load_puzzle_set(name)
    assert len(ps) == count and [p.id for p in ps] == [f"{name}-{k}" for k in range(1, count + 1)]
    for p in ps:
        st = p.state()
        assert st.text() == p.position and not st.is_terminal() and st.legal_actions().size > 0
        side = "White" if p.position.split()[1] == "w" else "Black"
        assert p.info["to_play"] == side, p.id            # the paper's To Play column
        assert p.result in ("win", "draw", "loss") and p.target_value() in (1.0, 0.5, 0.0)
        assert p.info["comment"] and p.info["source"].startswith("Table ")


@pytest.mark.parametrize("name", ["penrose", "challenge"])
def test_puzzle_set_python_chess_valid(name):
    chess = pytest.importorskip("chess")
    piece_counts = (chess.STATUS_TOO_MANY_WHITE_PIECES | chess.STATUS_TOO_MANY_BLACK_PIECES
                    | chess.STATUS_TOO_MANY_WHITE_PAWNS | chess.STATUS_TOO_MANY_BLACK_PAWNS)
    for p in pz.load_puzzle_set(name):
        b = chess.Board(p.position)
        assert b.legal_moves.count() == p.state().legal_actions().size, p.id
        if p.id in _OUT_OF_GAME:      # the paper's own unreachable material: refused for the counts alone
            assert b.status() and not b.status() & ~piece_counts, (p.id, b.status())
        else:
            assert b.is_valid(), (p.id, b.status())


def test_puzzle_solution_moves_legal_in_sequence():
    chess = pytest.importorskip("chess")
    seen = 0
    for name in pz.PUZZLE_SETS:
        for p in pz.load_puzzle_set(name):
            for moves in [p.line, str(p.info.get("sample_line", "")).split()] + [[m] for m in p.solutions]:
                if not moves:
                    continue
                seen += 1
                b = chess.Board(p.position)
                st = p.state()
                for m in moves:
                    assert chess.Move.from_uci(m) in b.legal_moves, (p.id, m)
                    b.push_uci(m)
                    st.push(m)
                assert st.text().split()[:4] == b.fen().split()[:4]
    assert seen == 8           # the moves the comments spell out: 2 one-move, 3 lines, 3 sample lines


def test_puzzle_sets_keep_the_papers_results():
    pen = {p.id: p for p in pz.load_puzzle_set("penrose")}
    ch = {p.id: p for p in pz.load_puzzle_set("challenge")}
    assert sum(p.result == "draw" for p in pen.values()) == 46
    assert [k for k, p in pen.items() if p.result == "win"] == ["penrose-9", "penrose-10", "penrose-11",
                                                                  "penrose-25", "penrose-48"]
    assert [k for k, p in pen.items() if p.result == "loss"] == ["penrose-12", "penrose-26"]
    # the Penrose position itself (table 7, top), and the last Challenge puzzle
    assert pen["penrose-13"].position.startswith("8/p7/kpP5/qrp1b3/rpP2b2/pP4b1/P3K3/8 w")
    assert ch["challenge-15"].result == "win" and ch["challenge-13"].solutions == ["f5h3"]
    assert ch["challenge-12"].line == "h4f6 e7f6 h2h4 b3b2 h1g2 b2b1q g2f2".split()


# -- the loader's and scorer's new kinds of solution --------------------------------------------


def _write(tmp_path, text):
    f = tmp_path / "p.csv"
    f.write_text(text, encoding="utf-8")
    return str(f)


def test_loader_reads_lines_results_and_comments(tmp_path):
    path = _write(tmp_path, "# a comment line\nposition:chess,solutions,id,result,line,note\n"
                            "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1,,m1,Win,a1a8,back rank\n"
                            "8/8/8/8/8/2k5/8/K7 w - - 0 1,,d1,draw,,bare kings\n")
    a, b = pz.load_puzzles(path)
    assert a.line == ["a1a8"] and a.result == "win" and a.info == {"note": "back rank"} and a.solutions == []
    assert b.result == "draw" and b.target_value() == 0.5 and b.line == []
    bad = _write(tmp_path, "position:chess,solutions,id,result,line\n"
                           "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1,,m1,,a1a8 a1a2\n")
    with pytest.raises(ValueError, match=r"p.csv:2: line move 2 'a1a2'"):
        pz.load_puzzles(bad)
    with pytest.raises(ValueError, match="result 'Maybe'"):
        pz.load_puzzles(_write(tmp_path, "position:chess,solutions,id,result\n8/8/8/8/8/2k5/8/K7 w - - 0 1,,x,Maybe\n"))
    with pytest.raises(ValueError, match="need position,solutions"):
        pz.load_puzzles(_write(tmp_path, "position:chess,solutions,id,result\n8/8/8/8/8/2k5/8/K7 w - - 0 1,,x,\n"))


def test_multi_step_scoring():
    # one step (Ra8 mates), then two (1.Rb7 Kg8, forced, 2.Rb8 mates): every solver move must be found
    p = pz.Puzzle("chess", "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", [], id="m1", line=["a1a8"])

    class Fixed:
        def __init__(self, moves):
            self.moves = list(moves)

        def setup(self, game, seed=None, player=None):
            self.i = 0

        def act(self, state):
            self.i += 1
            return self.moves[self.i - 1]

    assert pz.score_agent(Fixed(["a1a8"]), [p]).tolist() == [1]
    assert pz.score_agent(Fixed(["a1a2"]), [p]).tolist() == [0]
    two = pz.Puzzle("chess", "7k/8/6K1/8/8/8/8/1R6 w - - 0 1", [], id="m2", line=["b1b7", "h8g8", "b7b8"])
    two.check()
    assert pz.score_agent(Fixed(["b1b7", "b7b8"]), [two]).tolist() == [1]
    assert pz.score_agent(Fixed(["b1b7", "b7b6"]), [two]).tolist() == [0]   # the second step wrong
    assert pz.score_agent(Fixed(["b1b6", "b6b8"]), [two]).tolist() == [0]   # the first step wrong
    only = pz.Puzzle("chess", "8/8/8/8/8/2k5/8/K7 w - - 0 1", [], id="v", result="draw")
    with pytest.raises(ValueError, match="only a result"):
        pz.score_agent(Fixed(["a1a2"]), [only])


def test_value_scoring_thresholds():
    ps = [pz.Puzzle("chess", "8/8/8/8/8/2k5/8/K7 w - - 0 1", [], id=str(i), result=r)
          for i, r in enumerate(["draw", "draw", "win", "loss", "draw"])]
    sc = pz.score_values([0.5, 0.74, 0.8, 0.3, None], ps, threshold=0.25)
    assert sc.tolist() == [1, 1, 1, 0, 0]
    assert pz.score_values([0.5, 0.74, 0.8, 0.3, None], ps, threshold=0.1).tolist() == [1, 0, 0, 0, 0]
    with pytest.raises(ValueError, match="values for"):
        pz.score_values([0.5], ps)


def test_stockfish_values_on_two_penrose_positions():
    from mavgame.engines.uci import find_stockfish
    if find_stockfish() is None:
        pytest.skip("Stockfish not installed")
    ps = pz.load_puzzle_set("penrose")[:2]
    recs = pz.stockfish_values(ps, movetime=20)
    assert [r["id"] for r in recs] == ["penrose-1", "penrose-2"]
    assert all(r["error"] is None and 0.0 <= r["value"] <= 1.0 and r["bestmove"] for r in recs)
