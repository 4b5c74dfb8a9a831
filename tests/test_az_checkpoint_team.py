"""The homogeneous-team control (issue 54): a team of separate single AlphaZero checkpoints scored with
the AZdb team's max-over-latents and sub-additive rules (mavgame.az.checkpoint_team, score_team,
``mavgame az-puzzles score --team a.pt,b.pt``)."""
import json

import numpy as np
import pytest

import mavgame

torch = pytest.importorskip("torch")


def _config(**kw):
    from mavgame.az.train import AZConfig
    base = dict(game="connect_four", iterations=1, games_per_iteration=2, parallel_games=2, num_simulations=4,
                blocks=1, channels=8, value_hidden=8, steps_per_iteration=1, batch_size=8, temperature_plies=2)
    base.update(kw)
    return AZConfig(**base)


def _column_player(path, column: int, **kw) -> str:
    """A single AlphaZero checkpoint whose network values every position 0 and whose prior prefers
    ``column`` (an action): its search plays that column on a quiet board."""
    from mavgame.az.train import AZTrainer
    t = AZTrainer(_config(**kw))
    with torch.no_grad():
        for p in t.net.parameters():
            p.zero_()
        t.net.p_fc.bias[column] = 2.0
    t.save(str(path))
    return str(path)


def _puzzles():
    from mavgame.az import puzzles as pz
    empty = mavgame.State("connect_four").text()
    # one-move "puzzles" on the empty board whose solutions are set by hand: column 4, column 7, column 1
    return [pz.Puzzle("connect_four", empty, ["4"], id="c4"), pz.Puzzle("connect_four", empty, ["7"], id="c7"),
            pz.Puzzle("connect_four", empty, ["1"], id="c1")]


def test_checkpoint_team_scored_per_player_and_max_over_latents(tmp_path):
    from mavgame.az import puzzles as pz
    from mavgame.az.checkpoint_team import CheckpointTeam, make_team
    torch.set_num_threads(1)
    a = _column_player(tmp_path / "a.pt", 3)
    b = _column_player(tmp_path / "b.pt", 6)
    team = make_team(f"{a},{b}", sims=8)
    assert isinstance(team, CheckpointTeam) and team.players == 2 and team.game == "connect_four"
    st = mavgame.State("connect_four")
    assert [s.best_action() for s in team.searches(st)] == [3, 6]
    s1, s2 = team.search(1, st), team.search(1, st)
    assert np.array_equal(s1.visits, s2.visits) and 0 < s1.visits.sum() <= 8      # a fresh tree each search
    res = pz.score_team(team, _puzzles(), rules=("visits", "value", "lcb", "gap"))
    assert res["player0"].tolist() == [1, 0, 0] and res["player1"].tolist() == [0, 1, 0]
    assert res["max_over_latents"].tolist() == [1, 1, 0]
    assert res["moves"].tolist() == [[3, 6]] * 3
    for r in ("visits", "value", "lcb", "gap"):
        # a rule picks one player, the same on the three identical positions, and scores its move
        j = int(res[f"chosen_{r}"][0])
        assert res[f"chosen_{r}"].tolist() == [j] * 3 and res[r].tolist() == res[f"player{j}"].tolist()


def test_checkpoint_team_refuses_bad_teams(tmp_path):
    from mavgame.az.checkpoint_team import CheckpointTeam, make_team
    from mavgame.az.train import AZTrainer
    a = _column_player(tmp_path / "a.pt", 3)
    b = _column_player(tmp_path / "b.pt", 6)
    with pytest.raises(ValueError, match="at least 2"):
        CheckpointTeam([a])
    with pytest.raises(ValueError, match="twice"):
        CheckpointTeam([a, str(tmp_path / "." / "a.pt")])
    with pytest.raises(ValueError, match="empty entry"):
        make_team(f"{a},,{b}")
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        CheckpointTeam([a, str(tmp_path / "missing.pt")])
    with pytest.raises(ValueError, match="sims must be an int >= 1, not 0"):
        CheckpointTeam([a, b], sims=0)
    ttt = _column_player(tmp_path / "ttt.pt", 0, game="tictactoe")
    with pytest.raises(ValueError, match="different games.*tictactoe"):
        CheckpointTeam([a, ttt])
    azdb = str(tmp_path / "azdb.pt")
    AZTrainer(_config(players=2)).save(azdb)
    with pytest.raises(ValueError, match="AZdb team of 2 players"):
        CheckpointTeam([a, azdb])
    with pytest.raises(ValueError, match="rewards='vd' applies to an AZdb team"):
        make_team([a, b], rewards="vd")
    team = CheckpointTeam([a, b], sims=4)
    with pytest.raises(ValueError, match="player 2 is not in"):
        team.search(2, mavgame.State("connect_four"))
    with pytest.raises(ValueError, match="plays connect_four, not tictactoe"):
        team.search(0, mavgame.State("tictactoe"))
    assert make_team(azdb, sims=4).players == 2          # one path: the AZdb team


def test_az_puzzles_score_team_of_checkpoints(tmp_path, capsys):
    from mavgame.az import puzzles as pz
    from mavgame.cli import main
    a = _column_player(tmp_path / "a.pt", 3)
    b = _column_player(tmp_path / "b.pt", 6)
    f = pz.save_puzzles(_puzzles(), str(tmp_path / "p.csv"))
    out = tmp_path / "s.json"
    assert main(["az-puzzles", "score", "--puzzles", f, "--team", f"{a},{b}", "--sims", "8", "--json", str(out),
                 "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "team max_over_latents: 2/3" in text and "team player1: 1/3" in text and "moves" not in text
    d = json.loads(out.read_text())
    assert d["team:max_over_latents"] == [1, 1, 0] and np.asarray(d["team:moves"]).shape == (3, 2)
    assert main(["az-puzzles", "score", "--puzzles", f, "--team", f"{a},{b}", "--rewards", "extrinsic",
                 "--no-progress"]) != 0
    assert "rewards='extrinsic' applies to an AZdb team" in capsys.readouterr().err
