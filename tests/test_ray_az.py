"""AlphaZero / AZdb self-play in fixed shards, in this process or on Ray actors (issue 50): selfplay_shards 0 is
the single batched call of before, sharded self-play is deterministic and does not depend on how many workers
play the shards, and Ray actors (a local instance with two CPUs; slow, skipped without Ray) play the same
examples as the serial shards."""
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mavgame import State  # noqa: E402
from mavgame.az import shards  # noqa: E402
from mavgame.az.network import torch_evaluator  # noqa: E402
from mavgame.az.selfplay import play_games  # noqa: E402
from mavgame.az.train import AZConfig, AZTrainer, _seed_of  # noqa: E402

FIELDS = ("obs", "pi", "z", "game", "ply", "obs_after")


def _tiny(**kw) -> AZConfig:
    base = dict(game="tictactoe", blocks=1, channels=8, value_hidden=16, games_per_iteration=10, parallel_games=4,
                num_simulations=8, steps_per_iteration=3, batch_size=16, optimizer="adam", lr=0.01, seed=3)
    base.update(kw)
    return AZConfig(**base)


def _same(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in FIELDS) and \
        {k: v for k, v in a.stats.items() if k != "search_seconds"} == \
        {k: v for k, v in b.stats.items() if k != "search_seconds"}


def _same_team(a, b) -> bool:
    (sa, ea), (sb, eb) = a, b
    return _same(sa, sb) and all(np.array_equal(np.asarray(ea[k]), np.asarray(eb[k])) for k in ea)


class LocalJobs:
    """RayJobs' put/map in this process: ``workers`` workers, each set up on its own, job k on worker
    k % workers, the workers run one after another (so results come back out of order), yielded in job order."""

    def __init__(self, workers: int):
        self.workers = workers
        self.calls = 0

    def put(self, value):
        return value

    def map(self, init, init_args, fn, jobs, close=None):
        self.calls += 1
        jobs = list(jobs)
        done = {}
        for w in reversed(range(self.workers)):
            init(*init_args)
            for k in range(w, len(jobs), self.workers):
                done[k] = fn(jobs[k])
            if close is not None:
                close()
        for k in range(len(jobs)):
            yield done[k]


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_shard_bounds_and_seeds():
    assert shards.shard_bounds(10, 3) == [(0, 4), (4, 3), (7, 3)]
    assert shards.shard_bounds(5, 5) == [(k, 1) for k in range(5)]
    with pytest.raises(ValueError, match="shards"):
        shards.shard_bounds(3, 4)
    seeds = {shards.shard_seed(s, i, k) for s in range(3) for i in range(3) for k in range(3)}
    assert len(seeds) == 27


def test_zero_shards_is_the_single_call():
    t = AZTrainer(_tiny())
    c = t.config
    got = t.selfplay()
    want = play_games(torch_evaluator(t.net), State("tictactoe"), num_games=c.games_per_iteration,
                      parallel_games=c.parallel_games, seed=_seed_of(c.seed, 0), **c.selfplay_settings())
    assert _same(got, want) and len(got.z) > 0


def test_serial_shards_deterministic_and_independent_of_workers():
    t = AZTrainer(_tiny(selfplay_shards=3))
    a, b = t.selfplay(), t.selfplay()
    assert _same(a, b)
    assert a.stats["games_finished"] == 10 and sorted(set(a.game.tolist())) == list(range(10))
    assert not _same(a, AZTrainer(_tiny()).selfplay())   # shards have their own seeds
    for w in (1, 2, 3):
        ex = LocalJobs(w)
        t.use_executor(ex)
        assert _same(t.selfplay(), a), w
        assert ex.calls == 1
    t.use_executor(None)
    # AZdb: each shard with its slice of the latents; the team's positions from the joined games
    serial = AZTrainer(_tiny(players=2, selfplay_shards=3)).team_selfplay()
    for w in (1, 2):
        assert _same_team(AZTrainer(_tiny(players=2, selfplay_shards=3), executor=LocalJobs(w)).team_selfplay(),
                          serial), w


def test_sharded_resume_is_exact(tmp_path):
    t = AZTrainer(_tiny(selfplay_shards=2))
    t.run_iteration()
    path = str(tmp_path / "ck.pt")
    t.save(path)
    u = AZTrainer.load(path, executor=LocalJobs(2))
    assert u.config.selfplay_shards == 2
    ra, rb = t.run_iteration(), u.run_iteration()
    for k in ("loss", "value", "policy", "positions", "p0_wins", "draws", "evaluations"):
        assert ra[k] == rb[k], k
    for pa, pb in zip(t.net.parameters(), u.net.parameters()):
        assert torch.equal(pa, pb)


def test_refusals(tmp_path):
    with pytest.raises(ValueError, match="must not exceed"):
        AZTrainer(_tiny(selfplay_shards=11))
    with pytest.raises(ValueError, match="selfplay_shards must be an int >= 0"):
        AZTrainer(_tiny(selfplay_shards=-1))
    with pytest.raises(ValueError, match="needs selfplay_shards >= 1"):
        AZTrainer(_tiny(), executor=LocalJobs(1))
    with pytest.raises(ValueError, match="executor must be"):
        AZTrainer(_tiny(selfplay_shards=2), executor="dask")
    with pytest.raises(TypeError, match="executor must be"):
        AZTrainer(_tiny(selfplay_shards=2), executor=object())
    with pytest.raises(ValueError, match="ray_address needs executor='ray'"):
        AZTrainer(_tiny(selfplay_shards=2), ray_address="auto")
    from mavgame import cli
    out = tmp_path / "run"
    args = ["az", "--out", str(out), "--game", "tictactoe", "--iterations", "1", "--games", "4", "--parallel", "4",
            "--sims", "4", "--blocks", "1", "--channels", "8", "--steps", "1", "--batch-size", "8", "--no-progress",
            "--threads", "1"]
    assert cli.main(args + ["--ray"]) == 1                          # no shards (or no Ray): refused
    assert not out.exists()
    assert cli.main(args + ["--selfplay-shards", "5"]) == 1         # more shards than games
    assert cli.main(args + ["--selfplay-shards", "2"]) == 0
    assert json.loads((out / "log.jsonl").read_text())["games"] == 4
    assert cli.main(args + ["--selfplay-shards", "3"]) == 1         # a run keeps its shards


# ---- on Ray ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_ray_shards_equal_serial(ray_cluster, tmp_path):
    from mavgame.distributed_ray import RayJobs
    t = AZTrainer(_tiny(selfplay_shards=3))
    t.run_iteration()   # a trained network, batch-norm statistics included, travels to the actors
    serial = t.selfplay()
    t.use_executor(RayJobs(num_workers=2))
    assert _same(t.selfplay(), serial)
    team = AZTrainer(_tiny(players=2, selfplay_shards=3)).team_selfplay()
    assert _same_team(AZTrainer(_tiny(players=2, selfplay_shards=3), executor="ray").team_selfplay(), team)
    # the command: --ray plays the same run as the shards here
    from mavgame import cli
    args = ["az", "--game", "tictactoe", "--iterations", "2", "--games", "6", "--parallel", "3", "--sims", "6",
            "--blocks", "1", "--channels", "8", "--steps", "2", "--batch-size", "8", "--no-progress", "--threads", "1",
            "--selfplay-shards", "3"]
    assert cli.main(args + ["--out", str(tmp_path / "here")]) == 0
    assert cli.main(args + ["--out", str(tmp_path / "ray"), "--ray"]) == 0
    keys = ("positions", "p0_wins", "p1_wins", "draws", "evaluations", "loss", "first_loss", "last_loss")
    logs = [[json.loads(x) for x in (tmp_path / d / "log.jsonl").read_text().splitlines()] for d in ("here", "ray")]
    assert [[r[k] for k in keys] for r in logs[0]] == [[r[k] for k in keys] for r in logs[1]]
