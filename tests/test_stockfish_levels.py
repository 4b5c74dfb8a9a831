"""The paper's Stockfish protocol (levels 0-20 at 2 s per move) and the external rating tables."""
import pytest

from mavgame import cli
from mavgame.agents import make_agent
from mavgame.engines.stockfish_levels import (
    EXTERNAL_RATINGS,
    PAPER_MOVETIME_MS,
    TABLE_SOURCES,
    paper_stockfish_agents,
    parse_levels,
    stockfish_anchors,
)
from mavgame.engines.uci import find_stockfish


def test_paper_preset_and_levels():
    agents = paper_stockfish_agents()
    assert len(agents) == 21 and PAPER_MOVETIME_MS == 2000
    assert agents["sf-skill7"] == "stockfish:skill=7,movetime=2000"
    a = make_agent(agents["sf-skill20"])
    assert a.options["Skill Level"] == 20 and a.limits == {"movetime": 2000}
    assert parse_levels("0-3,10, 2") == [0, 1, 2, 3, 10]
    for bad, msg in (("21", "level 21 is not in 0..20"), ("5-2", "'5-2' is not a level"), ("x", "'x'")):
        with pytest.raises(ValueError, match=msg):
            parse_levels(bad)
    with pytest.raises(ValueError, match="0..20"):
        paper_stockfish_agents([25])


def test_paper_preset_spec():
    """stockfish:preset=paper,level=L: the paper's protocol in one agent spec (issue 13)."""
    a = make_agent("stockfish:preset=paper,level=5")
    assert a.options["Skill Level"] == 5 and a.limits == {"movetime": PAPER_MOVETIME_MS} and a.preset == "paper"
    assert make_agent("stockfish:level=3").options["Skill Level"] == 3
    assert make_agent("stockfish:skill=3").limits == {"movetime": 100}        # the default stays 100 ms
    for spec, msg in (("stockfish:preset=paper", "needs a skill level"),
                      ("stockfish:preset=paper,level=5,movetime=100", "movetime cannot be given"),
                      ("stockfish:preset=paper,level=5,depth=3", "depth cannot be given"),
                      ("stockfish:preset=fast,level=5", "preset must be one of paper, not 'fast'"),
                      ("stockfish:skill=3,level=4", "disagree"),
                      ("stockfish:preset=paper,level=21", "0..20")):
        with pytest.raises(ValueError, match=msg):
            make_agent(spec)
    assert stockfish_anchors({"p5": "stockfish:preset=paper,level=5"}, "sf-2023") == {"p5": 2203.7}


def test_sf2023_table_agrees_with_stockfish_uci_elo_formula():
    """Stockfish's UCI_Elo -> level fit (from the same games), inverted, is within 30 Elo of each level."""
    def level(elo):
        e = (elo - 1320) / (3190 - 1320)
        return ((37.2473 * e - 40.8525) * e + 22.2943) * e - 0.311438

    for lv, rating in EXTERNAL_RATINGS["sf-2023"].items():
        assert level(rating - 30) < lv < level(rating + 30), (lv, rating)



def test_rating_tables_and_anchors():
    for name, table in EXTERNAL_RATINGS.items():
        assert name in TABLE_SOURCES
        levels = sorted(table)
        assert all(table[a] < table[b] for a, b in zip(levels, levels[1:])), name  # stronger with level
    agents = {**paper_stockfish_agents([0, 5, 19, 20]), "sf-elo": "stockfish:elo=1500", "r": "random",
              "sf-depth": "stockfish:skill=5,depth=3"}
    assert stockfish_anchors(agents, "sf-2023") == {"sf-skill5": 2203.7, "sf-skill19": 3191.1}
    assert stockfish_anchors(agents, "sf7-2016") == {"sf-skill0": 1264.0, "sf-skill5": 1830.0, "sf-skill19": 2775.0,
                                                     "sf-skill20": 3367.0}
    with pytest.raises(ValueError, match="unknown Stockfish rating table 'nope'"):
        stockfish_anchors(agents, "nope")


@pytest.mark.skipif(find_stockfish() is None, reason="Stockfish not installed")
def test_league_with_stockfish_levels_calibrated(tmp_path, capsys):
    rc = cli.main(["league", "--game", "chess", "--stockfish-levels", "0,19", "--stockfish-movetime", "5",
                   "--openings", "1", "--max-plies", "6", "--workers", "1", "--out", str(tmp_path / "sf.sqlite"),
                   "--anchor-stockfish", "sf-2023", "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 0 and "2 games" in out and "sf-skill0" in out and "sf-skill19" in out
    # sf-2023 rates level 19 only: one anchor, the offset alone (6-ply games are draws: equal ratings)
    assert "1 anchor(s) from https://github.com/official-stockfish/Stockfish/pull/4341" in err
    assert "ext. Elo" in out and "3191" in out
    with pytest.raises(SystemExit, match="level 30 is not in 0..20"):
        cli.main(["league", "--game", "chess", "--stockfish-levels", "0,30", "--no-progress"])
