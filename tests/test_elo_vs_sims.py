"""``python -m mavgame.analysis.elo_vs_sims``: Elo against simulations from a league store (issue 13's Table-1 plot)."""
import subprocess
import sys

import pytest

from mavgame.play.league import League
from mavgame.play.results import LeagueResults
from mavgame.play.store import ResultStore
from mavgame.analysis import elo_vs_sims


def test_family():
    assert elo_vs_sims.family("mav_mcts:sims=200,batch=16,scoring=max,model=x.safetensors") == (
        "mav_mcts:scoring=max", 200)
    assert elo_vs_sims.family("uct:sims=100") == ("uct", 100)
    assert elo_vs_sims.family("mav") == ("mav", None)
    assert elo_vs_sims.family("perfect") == ("perfect", None)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("lg") / "league.sqlite")
    agents = {"uct-4": "uct:sims=4", "uct-16": "uct:sims=16", "uct-32": "uct:sims=32", "rand": "random"}
    League(agents, "connect_four", ["", "4", "1"], path=path, seed=3, matchups=20).run(progress=False)
    return path, agents


def test_table_matches_the_league_fit(store):
    path, agents = store
    rows, n = elo_vs_sims.table(path, "uct-4")
    assert n == 40
    with ResultStore(path, create=False) as s:
        games, _ = s.games()
    want = LeagueResults(list(agents), games, "connect_four").elo(anchor=("uct-4", 0.0))
    got = {r["agent"]: r for r in rows}
    for i, name in enumerate(want.names):
        assert got[name]["elo"] == pytest.approx(float(want.elo[i]))
        assert got[name]["low"] <= got[name]["elo"] <= got[name]["high"]
    assert got["uct-4"]["elo"] == pytest.approx(0.0)
    assert {r["agent"]: r["sims"] for r in rows} == {"uct-4": 4, "uct-16": 16, "uct-32": 32, "rand": None}
    assert {r["family"] for r in rows} == {"uct", "random"}


def test_command_line(store, tmp_path):
    path, _ = store
    out = tmp_path / "p.png"
    r = subprocess.run([sys.executable, "-m", "mavgame.analysis.elo_vs_sims", path, str(out), "--zero", "uct-4"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "uct-32" in r.stdout and "rand" in r.stdout
    r = subprocess.run([sys.executable, "-m", "mavgame.analysis.elo_vs_sims", path, str(out), "--zero", "nobody"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "nobody" in r.stderr
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all")
    r = subprocess.run([sys.executable, "-m", "mavgame.analysis.elo_vs_sims", str(junk), str(out)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "junk.sqlite" in r.stderr
