"""Fairy-Stockfish for Gardner minichess (mavgame.engines.fairy): rules oracle, league agent, annotator.

Every test skips when fairy-stockfish is not installed."""
import json
import subprocess
import sys

import pytest

from mavgame import _core
from mavgame.agents.engines import FairyStockfishAgent
from mavgame.engines.fairy import find_fairy_stockfish, open_engine, perft_diff, random_game_diff
from mavgame.games.gardner import paper_moves
from mavgame.games.gardner import START_FEN, Gardner
from mavgame.engines.uci_protocol import EngineError

pytestmark = pytest.mark.skipif(find_fairy_stockfish() is None, reason="fairy-stockfish not installed")

# positions from random games: promotions (white and black), checks, open king files
POSITIONS = [
    (START_FEN, 4),
    ("2rq1/p2Pk/b3B/pP1KP/1R3 b - - 4 11", 3),
    ("rNbqk/1Ppp1/p3p/RPQPP/2B1K w - - 2 7", 3),
    ("3k1/p2N1/1PK2/p2P1/1R3 b - - 3 23", 4),
    ("1rbqk/1Q2p/N1p2/1PpPP/1RB1K b - - 0 6", 3),
    ("k4/2P2/5/5/4K w - - 0 1", 4),
    ("4k/5/5/2p2/K4 b - - 0 1", 4),
]


@pytest.fixture(scope="module")
def engine():
    eng = open_engine()
    yield eng
    eng.close()


@pytest.mark.parametrize("fen,depth", POSITIONS)
def test_perft_matches_engine_move_by_move(engine, fen, depth):
    # with bishop promotion allowed, mavgame's rules are the engine's: every root count agrees
    r = perft_diff(engine, fen, depth, bishop_promotion=True)
    assert r["diff"] == {}, r
    assert r["ours"] == r["engine"] > 0


def test_start_perft_values(engine):
    assert perft_diff(engine, START_FEN, 1)["engine"] == 7
    assert perft_diff(engine, START_FEN, 3)["engine"] == 506


def test_engine_promotes_to_bishop_but_paper_rules_do_not(engine):
    fen = "k4/2P2/5/5/4K w - - 0 1"
    eng = set(engine.perft(1, fen)[1])
    assert {"c4c5q", "c4c5r", "c4c5b", "c4c5n"} <= eng
    paper = {str(m) for m in Gardner(fen).legal_moves}
    assert eng - paper == {"c4c5b"}
    assert paper <= eng
    # the searchmoves restriction that keeps the engine to the paper's rules
    assert set(paper_moves(Gardner(fen))) == paper
    assert paper_moves(Gardner(fen, bishop_promotion=True)) is None
    assert paper_moves(Gardner()) is None  # no promotion possible: no restriction needed
    # the perft with paper rules differs exactly by the bishop promotions
    r = perft_diff(engine, fen, 1, bishop_promotion=False)
    assert r["diff"] == {"c4c5b": (0, 1)}


@pytest.mark.parametrize("bishop", [True, False])
def test_random_games_legal_moves_agree(engine, bishop):
    total = 0
    for seed in range(6):
        plies, bad = random_game_diff(engine, seed, max_plies=150, bishop_promotion=bishop)
        assert bad == [], bad[:2]
        total += plies
    assert total > 100


def test_random_game_diff_detects_a_difference(engine):
    # Compare paper rules against the engine's moves *with* bishop promotions kept: the position with a
    # promotion must be reported (the comparison can fail).
    fen = "k4/2P2/5/5/4K w - - 0 1"
    st = _core.State("gardner", fen, 0, 0)
    theirs = set(engine.perft(1, fen)[1])
    ours = {str(m) for m in st.legal_moves}
    assert ours != theirs


def test_open_engine_rejects_non_fairy_binary():
    from mavgame.engines.uci import find_stockfish
    sf = find_stockfish()
    if sf is None:
        pytest.skip("stockfish not installed")
    with pytest.raises(EngineError, match="UCI_Variant"):
        open_engine(sf)


def test_agent_plays_legal_moves_and_skill_levels():
    from mavgame.agents import make_agent
    from mavgame.agents.basic import RandomAgent
    from mavgame.play.league import play_game
    ag = make_agent("fairy:skill=-5,movetime=10")
    assert isinstance(ag, FairyStockfishAgent)
    assert ag.options["Skill Level"] == -5 and ag.options["UCI_Variant"] == "gardner"
    assert ag.name == "fairy-skill-5"
    try:
        rec = play_game(ag, RandomAgent(seed=3), "gardner", max_plies=60, seed=1)
        assert len(rec.moves) >= 1
        # a position where the engine must choose among promotions: never the bishop
        st = Gardner("k4/2P2/5/5/4K w - - 0 1")
        ag.setup("gardner")
        a = ag.act(st)
        assert st.is_legal(a) and st.action_to_str(a)[-1:] != "b"
    finally:
        ag.close()
    with pytest.raises(ValueError, match="skill level"):
        FairyStockfishAgent(skill=21)
    with pytest.raises(Exception, match="cannot play"):
        FairyStockfishAgent(skill=1).setup("chess")


def test_strong_beats_random():
    from mavgame.agents import make_agent
    from mavgame.agents.basic import RandomAgent
    from mavgame.play.league import play_game
    ag = make_agent("fairy:nodes=2000")
    try:
        rec = play_game(ag, RandomAgent(seed=5), "gardner", max_plies=120, seed=2)
    finally:
        ag.close()
    assert rec.result == "1-0", rec


def test_annotator_values_every_legal_move():
    from mavgame.engines.annotate import Annotator
    with Annotator(game="gardner", nodes=3000) as ann:
        a = ann.annotate(START_FEN)
        assert a.game == "gardner"
        assert set(a.values) == {str(m) for m in Gardner().legal_moves}
        assert a.best in a.values and a.order[0] == a.best
        assert all(0.0 <= v <= 1.0 for v in a.values.values())
        a = ann.annotate("k4/2P2/5/5/4K w - - 0 1")
        assert "c4c5b" not in a.values and set(a.values) == {"c4c5q", "c4c5r", "c4c5n", "e1d1", "e1d2", "e1e2"}
        assert a.best == "c4c5q" and a.scores["c4c5q"].startswith("mate")
        assert "[%best_action c4c5q]" in a.to_mav()
        a = ann.annotate(START_FEN, ["b2b3", "c4b3"])
        assert a.moves == ["b2b3", "c4b3"] and a.best in a.values
        # a rules mismatch between engine and mavgame is an error, not silent data
        with pytest.raises(EngineError, match="disagrees"):
            ann._gardner_moves(START_FEN, [], ["a2a3", "b2b3", "c2c3", "d2d3", "e2e3", "b1a3"])
        with pytest.raises(ValueError, match="b2b4"):
            ann.annotate(START_FEN, ["b2b4"])


def test_mav_data_annotator_for_gardner():
    from mavgame.datasets import make_annotator
    ann = make_annotator("gardner", {"nodes": 2000})
    try:
        vals, best = ann(Gardner())
    finally:
        ann.close()
    assert best in vals and len(vals) == 7


def test_cli_annotate_gardner(tmp_path):
    inp = tmp_path / "pos.txt"
    inp.write_text(f"{START_FEN}\nk4/2P2/5/5/4K w - - 0 1\n")
    out = tmp_path / "out.jsonl"
    r = subprocess.run([sys.executable, "-m", "mavgame", "annotate", str(inp), "-o", str(out), "--game", "gardner",
                        "--nodes", "2000", "--workers", "1", "--no-progress"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["game"] for r in rows] == ["gardner", "gardner"]
    assert rows[1]["best"] == "c4c5q"


@pytest.mark.slow
def test_mav_data_generation_for_gardner(tmp_path):
    # the MAV data pipeline end to end for Gardner: epsilon-greedy games annotated by Fairy-Stockfish
    from mavgame.datasets import generate_positions
    r = generate_positions("gardner", tmp_path, 2, seed=1, annotator_options={"nodes": 500}, progress=False,
                           max_plies=30)
    assert r["game"] == "gardner" and r["positions_unique"] > 20 and r["moves_annotated"] > 100
    assert r["unannotated_by_ply"] == {}
