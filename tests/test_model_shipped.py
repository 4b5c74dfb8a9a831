"""The Connect Four MAV shipped in mavgame/data (NumPy backend: no torch needed). Skipped when absent."""
import pytest

import mavgame
from mavgame.datasets import PositionStore, generate_positions
from mavgame.model.inference import MAVModel, evaluate_records, shipped_model_path


@pytest.fixture(scope="module")
def model():
    try:
        path = shipped_model_path("connect_four")
    except FileNotFoundError:
        pytest.skip("no Connect Four MAV shipped yet")
    return MAVModel.load(path, backend="numpy")


def test_metadata(model):
    assert model.game == "connect_four"
    assert model.cfg.num_parameters() < 5_000_000
    held = model.info["metrics"]["heldout"]
    for k in ("best_action_legal", "top_all_precision", "top_all_recall", "next_state_accuracy"):
        assert held[k] >= 0.99, k


def test_fresh_positions_clear_the_bars(model, tmp_path):
    # positions from games the training data did not use (another seed), same distribution
    generate_positions("connect_four", tmp_path, 12, seed=987_654, epsilon=0.2, val_fraction=0.0,
                       random_opening=8, progress=False, annotator_options={"max_nodes": 300_000})
    recs = list(PositionStore(tmp_path / "train"))
    m = evaluate_records(model, "connect_four", recs)
    assert m["prompts"] >= 100
    assert m["best_action_legal"] >= 0.97
    assert m["top_all_precision"] >= 0.97 and m["top_all_recall"] >= 0.97
    assert m["next_state_accuracy"] >= 0.97
    # per phase (connect_four: opening / middle / end by plies): the positions split, the rates recombine
    ph = m["by_phase"]
    assert set(ph) <= {"opening", "middle", "end"} and len(ph) >= 2
    assert sum(p["positions"] for p in ph.values()) == len(recs)
    for p in ph.values():
        assert 0.0 <= p["best_action_optimal"] <= 1.0 and p["next_state_accuracy"] >= 0.9
    lo = min(p["best_action_optimal"] for p in ph.values())
    hi = max(p["best_action_optimal"] for p in ph.values())
    assert lo - 1e-12 <= m["best_action_optimal"] <= hi + 1e-12


def test_greedy_agent_plays_whole_games(model):
    from mavgame.agents.basic import RandomAgent
    from mavgame.play.game_loop import play_game
    from mavgame.agents.mav import MAVGreedyAgent
    mav_agent = MAVGreedyAgent(model, seed=0)
    rnd = RandomAgent(seed=1)
    wins = (play_game(mav_agent, rnd, "connect_four", seed=0).result == "1-0") + \
        (play_game(rnd, mav_agent, "connect_four", seed=1).result == "0-1")
    assert mav_agent.stats["moves"] > 0
    assert mav_agent.stats["random_fallback"] <= mav_agent.stats["moves"] // 10
    assert wins >= 1


def test_torch_backend_gives_the_same_answers(model):
    pytest.importorskip("torch")
    from mavgame import mav
    mt = MAVModel.load(shipped_model_path("connect_four"), backend="torch", threads=1)
    states = []
    for moves in ("", "4", "4433", "1234567", "44455566"):
        s = mavgame.State("connect_four")
        for m in moves:
            s.push(m)
        states.append(s)
    prompts = [mav.prompt(s) for s in states]
    prev = mavgame.State("connect_four")
    for m in "443":
        prev.push(m)
    nxt = prev.copy()
    nxt.push("5")
    prompts.append(mav.prompt(nxt, "%prev_state %prev_action %state %top_all %best_action", prev_state=prev,
                              prev_action="5"))
    a, b = model.generate(prompts), mt.generate(prompts)
    for x, y in zip(a, b):
        assert x.text == y.text
        for mv in x.value_dists:
            assert abs(x.values()[mv] - y.values()[mv]) < 1e-3
    # the transition answer writes the state after the move
    assert mav.state_text(nxt) in a[-1].text


def test_league_workers_with_torch_loaded_do_not_hang(model, tmp_path):
    """The parent builds the MAV agent (torch backend) before the worker pool starts; forked workers that
    then ran torch used to hang in the inherited thread pool (the README's `mavgame league` did)."""
    pytest.importorskip("torch")
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    out = tmp_path / "lg.sqlite"
    r = subprocess.run([sys.executable, "-m", "mavgame", "league", "--agent", "mav", "--agent", "random",
                        "--max-games", "4", "--workers", "2", "--no-progress", "--out", str(out)],
                       env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    from mavgame.play.store import ResultStore
    with ResultStore(str(out), create=False) as st:
        assert len(st) == 4
