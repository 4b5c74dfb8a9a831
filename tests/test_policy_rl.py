"""The IDP report's RL stage (mavgame/policy/rl.py): the reward table, the labels, the opponent
replacement rule, the move cap, the examples a game teaches, and a short resumable run of `mavgame policy
rl`. Skipped without PyTorch."""
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mavgame  # noqa: E402
from mavgame import _core  # noqa: E402
from mavgame.policy import network as P  # noqa: E402
from mavgame.policy import rl as R  # noqa: E402
from mavgame.play.pgn import to_pgn  # noqa: E402
from mavgame.play.records import GameRecord  # noqa: E402

TINY = P.PolicyConfig(channels=4, blocks=0)

# Fool's mate (Black mates), a short game White won (not by mate), a draw.
FOOLS = ["f3", "e5", "g4", "Qh4#"]


def _pgn(games):
    out = []
    for i, (moves, res) in enumerate(games):
        rec = GameRecord(key=str(i), game="chess", first="a", second="b", opening="start", round=i, start=None,
                         opening_moves=[], moves=moves, result=res, reason="test")
        out.append(to_pgn(rec))
    return "\n\n".join(out) + "\n"


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture
def pgn_file(tmp_path):
    st = mavgame.State("chess")
    uci = []
    for san in FOOLS:
        a = [m for m in st.legal_actions() if st.action_to_str(m) in _san_to_uci(st, san)][0]
        uci.append(st.action_to_str(a))
        st.push(a)
    p = tmp_path / "g.pgn"
    p.write_text(_pgn([(uci, "0-1"), (["e2e4", "e7e5", "g1f3"], "1-0"), (["d2d4", "d7d5"], "1/2-1/2")]))
    return p


def _san_to_uci(st, san):
    import chess
    b = chess.Board(st.text())
    return {b.parse_san(san).uci()}


def test_reward_table_human():
    # won: 1; drew as the real loser: 1; drew as the real winner: 1/n; lost as the real winner: 0;
    # aborted: 1/n; lost as the real loser: ignored
    assert R.move_reward("win", 0, 0, 20) == 1.0
    assert R.move_reward("win", 1, 0, 20) == 1.0
    assert R.move_reward("draw", 1, 0, 20) == 1.0
    assert R.move_reward("draw", 0, 0, 20) == pytest.approx(1 / 20)
    assert R.move_reward("loss", 0, 0, 20) == 0.0
    assert R.move_reward("loss", 1, 0, 20) is None
    assert R.move_reward("aborted", 0, 0, 20) == pytest.approx(1 / 20)
    assert R.move_reward("aborted", 1, 0, 40) == pytest.approx(1 / 40)
    r = R.move_reward("draw", 1, 1, np.array([2, 4, 5]))
    assert np.allclose(r, [0.5, 0.25, 0.2])


def test_reward_table_plain_and_bad_values():
    assert R.move_reward("win", 0, 1, 10, "plain") == 1.0
    assert R.move_reward("draw", 0, 1, 10, "plain") == pytest.approx(0.1)
    assert R.move_reward("loss", 1, 0, 10, "plain") == 0.0
    assert R.move_reward("aborted", 0, 0, 10, "plain") == 0.0
    with pytest.raises(ValueError, match="outcome"):
        R.move_reward("resigned", 0, 0, 10)
    with pytest.raises(ValueError, match="table"):
        R.move_reward("win", 0, 0, 10, "other")
    with pytest.raises(ValueError, match="legal"):
        R.move_reward("draw", 0, 0, 0)


def test_labels_are_the_policy_with_the_played_move_set_to_the_reward():
    p = np.random.default_rng(0).random((3, _core.POLICY_MOVES)).astype(np.float32)
    y = R.rl_labels(p, np.array([5, 7, 9]), np.array([1.0, 0.0, 0.25]))
    assert y[0, 5] == 1.0 and y[1, 7] == 0.0 and y[2, 9] == 0.25
    z = y.copy()
    z[[0, 1, 2], [5, 7, 9]] = p[[0, 1, 2], [5, 7, 9]]
    assert np.array_equal(z, p)
    with pytest.raises(ValueError):
        R.rl_labels(p, np.array([1, 2]), np.array([1.0, 1.0]))


def test_opponent_replaced_only_when_beaten_over_a_block():
    rule = R.OpponentRule(games=200)
    # 100 wins + 100 losses: exactly half, not beaten
    assert not any(rule.record(1.0 if i % 2 else 0.0) for i in range(200))
    assert rule.replaced == 0 and rule.blocks == 1 and rule.played == 0
    # 100 wins, 1 draw, 99 losses: 100.5 / 200 > half; replaced on the 200th game, not before
    seq = [1.0] * 100 + [0.5] + [0.0] * 99
    hits = [rule.record(s) for s in seq]
    assert hits[-1] and not any(hits[:-1])
    assert rule.replaced == 1 and rule.blocks == 2
    with pytest.raises(ValueError):
        rule.record(0.7)
    with pytest.raises(ValueError):
        R.OpponentRule(games=0)


def test_move_cap_aborts_games_and_rewards_them_one_over_n(pgn_file):
    starts = R.decisive_games([str(pgn_file)])
    assert len(starts) == 2 and {g.winner for g in starts} == {0, 1}
    assert len(R.decisive_games([str(pgn_file)], mate_only=True)) == 1
    rng = np.random.default_rng(0)
    from mavgame.agents.policy import uniform_policy
    games = [R.start_game(starts[1], rng, learner_colors=(0, 1), vs_opponent=False) for _ in range(4)]
    R.play_games(games, uniform_policy, uniform_policy, rng, max_plies=6)
    for g in games:
        assert g.aborted and g.state.ply - g.start_ply == 6 and not g.state.is_terminal()
        assert g.outcome(0) == "aborted" and g.score(1) == 0.5
        planes, masks, moves, rewards = R.game_examples(g)
        assert len(moves) == g.state.ply  # the human prefix and both colours' moves
        assert np.all(rewards[: g.start_ply] == 1.0)
        n = masks[g.start_ply:].sum(-1)
        assert np.allclose(rewards[g.start_ply:], 1.0 / n)
        assert np.array_equal(moves, _core.policy_game(g.state)[2])


def test_examples_of_a_lost_game_follow_the_table():
    # Start from the fool's mate position before Black's mate: the learner (White) loses as the real
    # game's loser: its moves are ignored; Black (real winner) wins: reward 1.
    st = mavgame.State("chess")
    for u in ["f2f3", "e7e5", "g2g4"]:
        st.push(u)
    g = R.SelfPlayGame(st, st.ply, 1, (0, 1), False)
    mate = _core.policy_uci_index("d8h4")
    R.play_games([g], lambda pl, m: np.where(m, 1.0, 0.0) * (np.arange(m.shape[1]) == mate) + m * 1e-9,
                 lambda pl, m: m.astype(np.float32), np.random.default_rng(0), max_plies=10)
    assert g.state.is_terminal() and g.state.result() == "0-1"
    planes, masks, moves, rewards = R.game_examples(g, human_prefix=False)
    assert len(moves) == 1 and moves[0] == mate and rewards[0] == 1.0
    # had White won the real game, Black's win is still rewarded 1 (won: 1 whatever the real result)
    _, _, m2, r2 = R.game_examples(R.SelfPlayGame(g.state, g.start_ply, 0, (0, 1), False), human_prefix=False)
    assert list(m2) == [mate] and list(r2) == [1.0]
    # the human prefix: the real game's 3 moves before the start, reward 1
    _, _, m3, r3 = R.game_examples(g)
    assert len(m3) == 4 and list(r3) == [1.0] * 4


def test_rl_run_is_resumable_and_updates_the_network(pgn_file, tmp_path, capsys):
    from mavgame.cli import main
    init = tmp_path / "init"
    init.mkdir()
    P.PolicyModel(P.PolicyNet(TINY)).save(init / "policy.pt")
    out = tmp_path / "rl"
    args = ["policy", "rl", "--pgn", str(pgn_file), "--init", str(init / "policy.pt"), "--out", str(out),
            "--games", "2", "--max-plies", "8", "--opponent-games", "2", "--vs-opponent", "1", "--lr", "1e-2",
            "--no-progress", "--threads", "1"]
    assert main(args + ["--steps", "2"]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert first["step"] == 2 and first["games"] == 4 and not first["resumed"]
    assert first["blocks"] == 2 and first["opponent_games"] == 4
    assert main(args + ["--steps", "3"]) == 0
    second = json.loads(capsys.readouterr().out.splitlines()[0])
    assert second["resumed"] and second["step"] == 3 and second["games"] == 6
    log = [json.loads(line) for line in (out / "rl_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [1, 2, 3]
    for r in log:   # per colour (the report's figures 6 and 7): games alternate colours, 2 a step here
        assert r["vs_opponent_white"][1] + r["vs_opponent_black"][1] == 2
        assert r["vs_opponent_white"][0] + r["vs_opponent_black"][0] == pytest.approx(2 * r["vs_opponent_score"])
    import subprocess
    import sys
    from pathlib import Path
    tool = Path(__file__).resolve().parents[1] / "experiments" / "2026-11-27-idp-policy-6000-games" / "policy_rl_plot.py"
    pr = subprocess.run([sys.executable, str(tool), str(out), "--window", "2"], capture_output=True, text=True,
                        timeout=120)
    assert pr.returncode == 0, pr.stderr
    assert len(pr.stdout.splitlines()) == 1 + 3 + 1 and (out / "rl_curves.png").stat().st_size > 1000
    a = P.PolicyModel.load(init / "policy.pt").net.state_dict()
    b = P.PolicyModel.load(out / "policy.pt").net.state_dict()
    assert any(not torch.equal(a[k], b[k]) for k in a)
    (out / "rl_state.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a policy RL checkpoint"):
        R.run_rl([str(pgn_file)], out, progress=False)
    draws = tmp_path / "draws.pgn"
    draws.write_text(_pgn([(["e2e4"], "1/2-1/2")]))
    with pytest.raises(ValueError, match="no decisive games"):
        R.decisive_games([str(draws)])


def test_native_and_torch_inference_play_the_same_games(pgn_file, tmp_path):
    """Self-play through the native engine (re-exported each step) draws the moves torch's policy would."""
    init = tmp_path / "init.pt"
    P.PolicyModel(P.PolicyNet(TINY)).save(init)
    st = R.RLSettings(steps=2, games=2, max_plies=10, opponent_games=2, vs_opponent=0.5, lr=1e-2, seed=4)
    logs = {}
    for inf in ("native", "torch"):
        R.run_rl([str(pgn_file)], tmp_path / inf, init=str(init), settings=st, progress=False, inference=inf)
        logs[inf] = [{k: r[k] for k in ("positions", "mean_plies", "aborted", "vs_opponent_score")}
                     for r in map(json.loads, (tmp_path / inf / "rl_log.jsonl").read_text().splitlines())]
    assert logs["native"] == logs["torch"] and len(logs["native"]) == 2
    with pytest.raises(ValueError, match="inference must be one of"):
        R.run_rl([str(pgn_file)], tmp_path / "x", init=str(init), settings=st, progress=False, inference="onnx")


def test_a_network_is_never_asked_about_a_finished_game():
    # Black (the learner) mates; the opponent (White) must not then be asked to move in the mated position.
    st = mavgame.State("chess")
    for u in ["f2f3", "e7e5", "g2g4"]:
        st.push(u)
    mate = _core.policy_uci_index("d8h4")

    def opponent(planes, mask):
        assert mask.any(-1).all(), "asked about a position without legal moves"
        return mask.astype(np.float32)

    g = R.SelfPlayGame(st, st.ply, 1, (1,), True)
    other = R.SelfPlayGame(st.copy(), st.ply, 1, (0,), True)   # the opponent plays Black here
    R.play_games([g, other], lambda pl, m: (np.arange(m.shape[1]) == mate) * 1.0 + m * 1e-9, opponent,
                 np.random.default_rng(0), max_plies=20)
    assert g.state.result() == "0-1" and g.score(1) == 1.0
