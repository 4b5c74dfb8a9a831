"""Leagues with many games at once (League(concurrent=N), mavgame.play.concurrent): the same store rows as the
serial league for a fixed seed (MAV-MCTS over one native evaluator, searchless MAV, UCT, random), one batched
model call for several games' searches, resume after an interruption, the automatic choice and refusals."""
import pytest

import mavgame
from mavgame.play.concurrent import AUTO_CONCURRENT
from mavgame.play.league import League, LeagueInterrupted
from mavgame.agents import Agent
from mavgame.model.inference import native_available, shipped_model_path

TIMING = ("seconds", "think", "finished_at")


def rows(res):
    return {g.key: {k: v for k, v in g.to_dict().items() if k not in TIMING} for g in res.games}


@pytest.fixture(scope="module")
def native_model():
    if not native_available():
        pytest.skip("extension built without the native engine")
    try:
        return shipped_model_path("connect_four")
    except FileNotFoundError:
        pytest.skip("no Connect Four MAV shipped")


AGENTS = {"mm": "mav_mcts:sims=12,batch=6", "mav": "mav", "uct": "uct:sims=20", "rnd": "random"}


def test_concurrent_league_same_rows_as_serial(native_model, tmp_path):
    kw = dict(openings=2, max_plies=6, seed=5)
    serial = League(AGENTS, "connect_four", path=str(tmp_path / "serial.sqlite"), concurrent=1, **kw)
    assert serial.concurrent == 1
    a = rows(serial.run(progress=False))
    conc = League(AGENTS, "connect_four", path=str(tmp_path / "conc.sqlite"), concurrent=8, **kw)
    b = rows(conc.run(progress=False))
    assert len(a) == len(serial.schedule()) == 24 and a == b


def test_searches_of_several_games_share_one_model_call(native_model):
    from mavgame.agents.mav import mav_mcts_agent
    calls = {}
    for n in (1, 4):
        ag = mav_mcts_agent(native_model, 8, batch_size=4, name="mm")
        League({"mm": ag, "rnd": "random"}, "connect_four", openings=2, max_plies=4, seed=1,
               concurrent=n).run(progress=False)
        st = ag.evaluator.stats()
        calls[n] = (st["calls"], st["requests"])
    # the same leaves (the same games), in fewer calls: the searches of the games in flight share them
    assert calls[4][1] == calls[1][1] and calls[4][0] < 0.75 * calls[1][0]


class _Interrupting(Agent):
    """The first legal move; raises KeyboardInterrupt at its `at`-th move over all its copies (the count is shared)."""
    name = "stopper"

    def __init__(self, at):
        self.count = [0]
        self.at = at

    def act(self, state):
        self.count[0] += 1
        if self.count[0] == self.at:
            raise KeyboardInterrupt
        return state.legal_moves[0]

    def fork(self):
        return self


def test_resume_after_interruption(tmp_path):
    path = str(tmp_path / "lg.sqlite")
    agents = {"uct": "uct:sims=10", "rnd": "random", "stopper": _Interrupting(at=15)}
    kw = dict(openings=2, max_plies=6, seed=2)
    with pytest.raises(LeagueInterrupted):
        League(agents, "connect_four", path=path, concurrent=4, **kw).run(progress=False)
    done = League(agents, "connect_four", path=path, concurrent=4, **kw).finished()
    assert 0 < len(done) < 12
    agents["stopper"] = _Interrupting(at=10 ** 9)
    full = League(agents, "connect_four", path=path, concurrent=4, **kw).run(progress=False)
    ref = League(agents, "connect_four", concurrent=1, **kw).run(progress=False)
    assert rows(full) == rows(ref) and len(full.games) == 12


def test_automatic_choice_and_refusals(native_model):
    assert League({"a": "random", "b": "uct:sims=5"}, "connect_four").concurrent == 1
    assert League({"a": "random", "b": "mav_mcts:sims=4"}, "connect_four").concurrent == AUTO_CONCURRENT
    assert League({"a": "random", "b": "mav_mcts:sims=4"}, "connect_four", concurrent=1).concurrent == 1
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="concurrent must be a number of games"):
            League({"a": "random", "b": "random"}, "connect_four", concurrent=bad)


def test_cli_match_concurrent(tmp_path):
    from mavgame.cli.main import main
    out = str(tmp_path / "m.sqlite")
    assert main(["match", "random", "uct:sims=10", "--openings", "2", "--max-plies", "4", "--concurrent", "3",
                 "--out", out, "--no-progress"]) == 0
    from mavgame.play.store import ResultStore
    with ResultStore(out, create=False) as st:
        recs, refused = st.games("connect_four")
    assert len(recs) == 4 and not refused
    with pytest.raises(SystemExit):
        main(["match", "random", "random", "--concurrent", "0"])


def test_mav_and_mav_is_act_many_equal_act(native_model):
    from mavgame.agents.mav import MAVGreedyAgent, MAVISAgent
    sts = []
    for moves in ("", "44", "4433", "1"):
        s = mavgame.State("connect_four")
        for m in moves:
            s.push(m)
        sts.append(s)
    try:
        agents = [MAVISAgent(seed=1), MAVGreedyAgent(mirror=True)]
    except FileNotFoundError:
        pytest.skip("no Connect Four MAV-IS shipped")
    for a in agents:
        assert a.batches_across_games() and not getattr(a, "auto_concurrent", False)
        alone = [a.act(s) for s in sts]
        assert type(a).act_many([a] + [a.fork() for _ in sts[1:]], sts) == alone
