"""mavgame.play.league, agents and openings: leagues end to end, resuming, engine failures."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from mavgame import _core
from mavgame.agents import AgentError, CallableAgent, make_agent, parse_spec, register_agent, resolve_move
from mavgame.agents.basic import MinimaxAgent, RandomAgent
from mavgame.play.league import (
    Adjudicator,
    League,
    LeagueError,
    Opening,
    ResultStore,
    ResultsWarning,
    StoreError,
    load_results,
    match,
    play_game,
    to_pgn,
)
from mavgame.play.openings import load_openings, parse_openings, random_openings
from mavgame.engines.uci import find_stockfish
from fake_uci import REPO, write_fake_engine

STOCKFISH = find_stockfish()
needs_stockfish = pytest.mark.skipif(STOCKFISH is None, reason="Stockfish not installed (apt-get install stockfish)")

TTT = {"random": "random", "uct": "uct:sims=50", "minimax": "minimax"}


def stored(path):
    """(game dicts, error dicts) in a results store."""
    with ResultStore(str(path), create=False) as st:
        recs, refused = st.games()
        assert not refused, refused
        return [r.to_dict() for r in recs], st.errors()


# ---- agents -----------------------------------------------------------------------------------------


def test_agent_specs():
    assert parse_spec("stockfish:skill=3,movetime=50,path=/x/y") == ("stockfish", {"skill": 3, "movetime": 50,
                                                                                   "path": "/x/y"})
    assert parse_spec("mcts:eps=0.25,reuse_tree=false") == ("mcts", {"eps": 0.25, "reuse_tree": False})
    with pytest.raises(ValueError, match="unknown agent kind 'nope'"):
        make_agent("nope")
    with pytest.raises(ValueError, match="expected key=value"):
        make_agent("uct:sims")
    with pytest.raises(ValueError, match=r"the random agent has no option 'bogus' \(its options: seed, name\)"):
        make_agent("random:bogus=1")
    with pytest.raises(ValueError, match="skill level must lie in 0..20"):
        make_agent("stockfish:skill=25")
    a = make_agent("uct:sims=30", name="u")
    assert a.name == "u" and a.spec == "uct:sims=30"
    register_agent("first_move", lambda **kw: CallableAgent(lambda s: int(s.legal_actions()[0]), name="first"))
    assert make_agent("first_move").act(_core.State("tictactoe")) == 0
    with pytest.raises(AgentError, match="cannot play 'tictactoe'"):
        make_agent("stockfish").check_game("tictactoe")


def test_resolve_move_rejects_bad_answers():
    s = _core.State("tictactoe")
    assert resolve_move(s, "b2") == s.action_from_str("b2")
    assert resolve_move(s, np.int32(4)) == 4
    s.push("b2")
    with pytest.raises(AgentError, match="illegal action 4"):
        resolve_move(s, 4, "agent 'x'")
    with pytest.raises(AgentError, match="illegal move 'z9'"):
        resolve_move(s, "z9")
    with pytest.raises(AgentError, match="not a move"):
        resolve_move(s, None)


def test_perfect_agents_are_perfect():
    # tic-tac-toe: minimax never loses, and wins against random from a won start
    for seed in range(3):
        rec = play_game(MinimaxAgent(seed=seed), RandomAgent(seed), "tictactoe", seed=seed)
        assert rec.result in ("1-0", "1/2-1/2")
        assert play_game(MinimaxAgent(seed=seed), MinimaxAgent(seed=seed + 7), "tictactoe").result == "1/2-1/2"
    # Connect Four: from a position the solver scores as a first-player win, the perfect player wins as first
    op = load_openings("connect_four")[1]  # c4-2: solver score +2 for the side to move (first player)
    s = op.state("connect_four")
    assert _core.c4_solve(s)[0] > 0
    for opp in ("random", "uct:sims=200", "perfect"):
        rec = play_game(make_agent("perfect"), make_agent(opp), "connect_four", op, seed=3)
        assert rec.result == "1-0", (opp, rec)


def test_agent_sees_a_copy():
    seen = []

    def meddler(state):
        seen.append(state.text())
        state.push(int(state.legal_actions()[0]))  # must not affect the game
        return int(state.legal_actions()[0])

    rec = play_game(CallableAgent(meddler, name="meddler"), RandomAgent(1), "tictactoe", seed=1)
    assert rec.result in ("1-0", "0-1", "1/2-1/2") and len(seen) >= 3


# ---- openings ---------------------------------------------------------------------------------------


def test_shipped_openings_are_legal():
    for game in ("chess", "connect_four", "tictactoe", "hex"):
        ops = load_openings(game)
        assert len(ops) >= 3, game
        for o in ops:
            s = o.state(game)  # raises on an illegal move
            assert not s.is_terminal()
    chess = load_openings("chess")
    assert len(chess) >= 40 and len({o.moves for o in chess}) == len(chess)
    from mavgame.play.openings import openings_path

    notes = {ln.split("|")[0].strip(): ln.split("|")[2] for ln in openings_path("connect_four").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")}
    solved = 0
    solver = _core.C4Solver(22)  # fresh, so that the node budget gives the same answers every run
    for o in load_openings("connect_four"):  # the file's notes, where the solver is quick
        score, move_scores, _, complete = _core.c4_solve(o.state("connect_four"), max_nodes=500_000,
                                                         solver=solver)
        if complete:
            solved += 1
            assert abs(score) <= 4, o.name
            assert f"solver score {score:+d}" in notes[o.name] or (score == 0 and "score 0" in notes[o.name])
    assert solved >= 3


def test_chess_openings_legal_for_python_chess():
    chess = pytest.importorskip("chess")
    for o in load_openings("chess"):
        b = chess.Board()
        for m in o.moves:
            mv = chess.Move.from_uci(m)
            assert mv in b.legal_moves, (o.name, m)
            b.push(mv)
        assert b.fen() == o.state("chess").text()


def test_opening_file_errors_and_random_openings():
    with pytest.raises(ValueError, match=r"<text>:2: opening 'bad': move 2 'e7e4' is illegal"):
        parse_openings("ok | e2e4\nbad | e2e4 e7e4\n", "chess")
    with pytest.raises(ValueError, match="duplicate opening name"):
        parse_openings("a | 4\na | 3\n", "connect_four")
    ops = random_openings("connect_four", 6, 10, seed=1)
    assert len({o.moves for o in ops}) == 10 and all(len(o.moves) == 6 for o in ops)
    assert random_openings("connect_four", 6, 10, seed=1) == ops


# ---- leagues ----------------------------------------------------------------------------------------


def test_league_schedule_swaps_colours():
    lg = League(TTT, "tictactoe", rounds=2)
    tasks = lg.schedule()
    assert len(tasks) == 3 * 3 * 2 * 2  # pairs x openings x colours x rounds
    assert len({t.key for t in tasks}) == len(tasks)
    for t in tasks:
        assert any(u.first == t.second and u.second == t.first and u.opening == t.opening and u.round == t.round
                   for u in tasks)


def test_league_in_memory_and_matrix():
    res = League(TTT, "tictactoe", rounds=2, workers=1).run(progress=False)
    assert len(res) == 36
    n = len(res.names)
    for i in range(n):
        for j in range(n):
            if i != j:
                w, d, l = res.wdl(res.names[i], res.names[j])
                assert (w, d, l) == res.wdl(res.names[j], res.names[i])[::-1]
                assert w + d + l == 12
    assert res.wdl("minimax", "random")[2] == 0  # minimax never loses
    elo = res.elo()
    assert elo["minimax"] > elo["random"]
    assert "minimax" in res.matrix_table() and "W/D/L" in res.matrix_table()


def test_parallel_league_equals_serial(tmp_path):
    serial = League(TTT, "tictactoe", workers=1).run(progress=False)
    par = League(TTT, "tictactoe", workers=2, path=str(tmp_path / "p.jsonl")).run(progress=False)
    key = lambda r: {g.key: (g.result, g.moves) for g in r.games}  # noqa: E731
    assert key(serial) == key(par)


def test_league_store_resumes(tmp_path):
    path = str(tmp_path / "league.sqlite")
    lg = League(TTT, "tictactoe", path=path)
    res = lg.run(progress=False, max_games=5)
    assert len(res) == 5
    first, _ = stored(path)
    assert len(first) == 5
    res = League(TTT, "tictactoe", path=path).run(progress=False)
    assert len(res) == 18
    after, _ = stored(path)
    assert after[:5] == first  # finished games are kept as they were
    assert len({g["key"] for g in after}) == 18
    # running again plays nothing
    assert len(League(TTT, "tictactoe", path=path).run(progress=False)) == 18
    assert len(stored(path)[0]) == 18
    # a different game or a changed agent is refused
    with pytest.raises(ValueError, match="holds a 'tictactoe' league"):
        League({"a": "random", "b": "random"}, "connect_four", path=path).run(progress=False)
    with pytest.raises(ValueError, match="agent 'uct' was 'uct:sims=50' there"):
        League(dict(TTT, uct="uct:sims=60"), "tictactoe", path=path).run(progress=False)
    # new agents join: only their games are played
    res = League(dict(TTT, first="python:fn=test_league:first_legal"), "tictactoe", path=path).run(progress=False)
    assert len(res) == 18 + 3 * 3 * 2
    assert load_results(path).wdl("minimax", "random") == res.wdl("minimax", "random")
    # an agent left out: its stored games are not counted, and that is said
    with pytest.warns(ResultsWarning, match=r"30 stored game\(s\) are not games of this league \(agents not in "
                                            r"this league: first, uct\)"):
        res = League({"random": "random", "minimax": "minimax"}, "tictactoe", path=path).run(progress=False)
    assert len(res) == 6 and int(res.wins.sum() + res.draws.sum() / 2) == 6


def first_legal(state):
    return int(state.legal_actions()[0])


def _jsonl_export(tmp_path, n=4):
    """A JSON-lines results file as older versions wrote it (header + n games)."""
    res = League(TTT, "tictactoe").run(progress=False, max_games=n)
    path = tmp_path / "old.jsonl"
    res.write_jsonl(str(path), League(TTT, "tictactoe")._header())
    return path


def test_jsonl_results_are_imported_once_and_validated(tmp_path):
    path = _jsonl_export(tmp_path, 4)
    lines = path.read_text().splitlines()
    g = json.loads(lines[1])
    bad = [
        lines[1],                                                   # 6: the same game again
        json.dumps(dict(g, key="0|centre|random|uct", first="random", second="uct", result="2-0")),  # 7
        json.dumps(dict(g, key="0|centre|ghost|uct", first="ghost", second="uct")),  # 8: not in the league
        json.dumps([1, 2]),                                         # 9: JSON, not a record
        json.dumps({"type": "game", "key": 3}),                     # 10: a record without fields
        json.dumps(dict(g, moves=["b2", "b2"])),                    # 11: illegal move (and a duplicate key)
        "{not json",                                                # 12
        json.dumps(dict(g, key="0|x|a|b")),                         # 13: key does not name the game
    ]
    text = "\n".join(lines + bad) + "\n" + '{"type": "game", "key": "0|cen'  # 14: torn last line
    path.write_text(text)
    with pytest.warns(ResultsWarning) as w:
        lg = League(TTT, "tictactoe", path=str(path))
        res = lg.run(progress=False)
    msgs = "\n".join(str(x.message) for x in w)
    rep = lg.import_report
    assert rep.imported == 5  # the 4 games and the ghost's game (refused from the table below)
    why = dict(rep.refused)
    assert set(why) == {6, 7, 9, 10, 11, 12, 13, 14}, why
    assert "again (first on line 2)" in why[6]
    assert "result '2-0' is not one of" in why[7]
    assert "not a record (a JSON list)" in why[9]
    assert "without" in why[10] and "not JSON" in why[12]
    assert "does not name the game" in why[13] and "incomplete last line" in why[14]
    assert "agents not in this league: ghost" in msgs
    assert len(res) == 18  # the 4 imported games were not played again; the ghost's game is not counted
    assert path.read_text() == text  # the JSON-lines file is never changed
    # the import happens once
    with ResultStore(str(tmp_path / "old.sqlite")) as st:
        assert st.import_jsonl(str(path)).already
    # load_results reads a JSON-lines file the same way
    with pytest.warns(ResultsWarning) as w:
        assert len(load_results(str(path))) == 5
    msgs = [str(x.message) for x in w]
    assert len(msgs) == 8 and any("old.jsonl:7: result '2-0'" in m for m in msgs)


def test_store_constraints_and_corrupt_stores(tmp_path):
    import sqlite3

    path = tmp_path / "s.sqlite"
    League(TTT, "tictactoe", path=str(path)).run(progress=False, max_games=3)
    db = sqlite3.connect(str(path))
    row = db.execute("SELECT * FROM games LIMIT 1").fetchone()
    cols = [d[0] for d in db.execute("SELECT * FROM games LIMIT 1").description]
    d = dict(zip(cols, row))
    for change, err in [({}, "UNIQUE"), ({"result": "2-0"}, "CHECK"), ({"key": "x"}, "CHECK"),
                        ({"moves": "not json"}, "CHECK"), ({"second": d["first"]}, "CHECK")]:
        e = dict(d, **change)
        with pytest.raises(sqlite3.IntegrityError, match=err):
            db.execute(f"INSERT INTO games ({','.join(e)}) VALUES ({','.join('?' * len(e))})", list(e.values()))
    # a row that passes the constraints but is not a game (moves of another kind) is refused on load
    db.execute("UPDATE games SET moves = '[1, 2]' WHERE key = ?", (d["key"],))
    db.commit()
    db.close()
    with pytest.warns(ResultsWarning, match=rf"row 1 \(game '{d['key']}'\) refused: field 'moves' must be a list"):
        assert len(load_results(str(path))) == 2
    # not a database / a damaged one
    junk = tmp_path / "junk.sqlite"
    junk.write_text('{"type": "league"}\n')
    with pytest.raises(StoreError, match="not a SQLite results store .a JSON-lines results file"):
        League(TTT, "tictactoe", path=str(junk)).run(progress=False)
    damaged = tmp_path / "damaged.sqlite"
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)
    damaged.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged.sqlite is not a usable results store"):
        League(TTT, "tictactoe", path=str(damaged)).run(progress=False)


KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {repo!r})
    from mavgame.agents import CallableAgent
    from mavgame.play.league import League

    def slow(state):
        time.sleep(0.01)
        return int(state.legal_actions()[len(state.legal_actions()) // 2])

    League({{"slow": CallableAgent(slow, name="slow"), "random": "random", "minimax": "minimax"}},
           "tictactoe", rounds=3, path={path!r}, workers=2).run(progress=False)
""")

KILL_AGENTS = {"random": "random", "minimax": "minimax"}


def _stored_keys(path):
    if not path.exists():
        return []
    with ResultStore(str(path), create=False) as st:
        recs, refused = st.games()
    assert not refused
    return [r.key for r in recs]


def _kill_and_resume(tmp_path, kills, seed):
    """Runs the league in a subprocess, kill -9 (parent and workers) at random moments ``kills``
    times; every game stored before a kill is still there after it; then a run completes it."""
    rng = np.random.default_rng(seed)
    path = tmp_path / "league.sqlite"
    script = tmp_path / "run.py"
    script.write_text(KILL_SCRIPT.format(repo=REPO, path=str(path)))
    before: list = []
    for k in range(kills):
        proc = subprocess.Popen([sys.executable, str(script)], start_new_session=True, stderr=subprocess.PIPE)
        try:
            time.sleep(float(rng.uniform(0.3, 1.5)))
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole process group: parent and pool workers
            _, err = proc.communicate()
        assert proc.returncode in (-signal.SIGKILL, 0), err.decode()
        keys = _stored_keys(path)
        assert keys[:len(before)] == before  # nothing recorded is lost
        assert len(keys) == len(set(keys))
        before = keys
    from mavgame.agents import CallableAgent

    def slow(state):
        return int(state.legal_actions()[len(state.legal_actions()) // 2])

    res = League({"slow": CallableAgent(slow, name="slow"), **KILL_AGENTS},
                 "tictactoe", rounds=3, path=str(path), workers=1).run(progress=False)
    assert len(res) == 54
    keys = _stored_keys(path)
    assert keys[:len(before)] == before and len(keys) == len(set(keys)) == 54
    return before


def test_killed_league_resumes_without_losing_games(tmp_path):
    before = _kill_and_resume(tmp_path, kills=5, seed=1)
    assert len(before) > 0  # the kills did fall while games were being recorded


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 6))
def test_killed_league_many_times(tmp_path, seed):
    _kill_and_resume(tmp_path, kills=15, seed=seed)


def die_after_b2(state):
    """An agent whose process dies (SIGKILL) in games that start with b2; else plays the first legal move."""
    if list(state.history()[:1]) == [_core.State("tictactoe").action_from_str("b2")]:
        os.kill(os.getpid(), signal.SIGKILL)
    return int(state.legal_actions()[0])


def test_worker_that_dies_mid_game(tmp_path):
    ops = [Opening("a1", ("a1",)), Opening("b2", ("b2",)), Opening("c3", ("c3",))]
    agents = {"killer": "python:fn=test_league:die_after_b2", "random": "random"}
    path = tmp_path / "league.sqlite"
    with pytest.raises(LeagueError, match=r"game 0\|b2\|.* failed: the worker process playing this game died"):
        League(agents, "tictactoe", ops, path=str(path), workers=2).run(progress=False)
    keys = _stored_keys(path)
    assert not any("|b2|" in k for k in keys) and len(keys) == len(set(keys))
    # skipping errors: every other game is played, each b2 game is reported once, nothing is lost
    lg = League(agents, "tictactoe", ops, path=str(path), workers=2, on_error="skip")
    res = lg.run(progress=False)
    assert len(res) == 4 and {g.opening for g in res.games} == {"a1", "c3"}
    assert sorted(e["key"] for e in lg.errors) == ["0|b2|killer|random", "0|b2|random|killer"]
    assert all("worker process playing this game died" in e["error"] for e in lg.errors)


def chess_agents(engine):
    return {"engine": f"uci:path={engine},nodes=10", "random": "random:seed=1"}


def test_crashing_engine_stops_league_and_keeps_games(tmp_path):
    # the engine crashes in every position of the second opening; games of the first one finish
    engine = write_fake_engine(tmp_path, "crash", trigger="g1f3")
    ops = [Opening("e4", ("e2e4",)), Opening("nf3", ("g1f3",))]
    path = tmp_path / "league.sqlite"
    lg = League(chess_agents(engine), "chess", ops, path=str(path), max_plies=6, workers=1)
    with pytest.raises(LeagueError) as ei:
        lg.run(progress=False)
    msg = str(ei.value)
    assert "0|nf3|engine|random" in msg and "exited with status 3" in msg and "simulated crash" in msg
    assert "saved in" in msg
    recs, errs = stored(path)
    assert sorted(r["key"] for r in recs) == ["0|e4|engine|random", "0|e4|random|engine"]
    assert errs and "simulated crash" in errs[0]["error"]
    # with a working engine the league resumes and completes, keeping the finished games
    good = write_fake_engine(tmp_path, "ok", name=Path(engine).name)  # same path, fixed engine
    assert good == engine
    res = League(chess_agents(engine), "chess", ops, path=str(path), max_plies=6).run(progress=False)
    assert len(res) == 4


@pytest.mark.parametrize("mode,match", [
                                        ("no_move", "'bestmove' without a move"),
                                        ("illegal", "illegal move 'a1a1'")])
def test_malformed_engine_output_parallel(tmp_path, mode, match):
    engine = write_fake_engine(tmp_path, mode, trigger="g1f3")
    ops = [Opening("e4", ("e2e4",)), Opening("d4", ("d2d4",)), Opening("nf3", ("g1f3",))]
    path = tmp_path / "league.sqlite"
    with pytest.raises(LeagueError, match=match):
        League(chess_agents(engine), "chess", ops, path=str(path), max_plies=4, workers=2).run(progress=False)
    recs, _ = stored(path)
    assert {r["opening"] for r in recs} <= {"e4", "d4"}
    assert len(recs) == 4  # games in flight when the error came were finished and saved, none lost


def test_on_error_skip_continues(tmp_path):
    engine = write_fake_engine(tmp_path, "crash", trigger="g1f3")
    ops = [Opening("nf3", ("g1f3",)), Opening("e4", ("e2e4",))]
    lg = League(chess_agents(engine), "chess", ops, max_plies=4, on_error="skip")
    res = lg.run(progress=False)
    assert len(res) == 2 and len(lg.errors) == 2
    assert all("exited with status 3" in e["error"] for e in lg.errors)


def test_connect_four_league_with_perfect_player(tmp_path):
    res = League({"random": "random", "uct": "uct:sims=100", "perfect": "perfect"}, "connect_four", openings=2,
                 workers=2, path=str(tmp_path / "c4.jsonl")).run(progress=False)
    assert len(res) == 12
    assert res.wdl("perfect", "random") == (4, 0, 0)
    out = tmp_path / "games.txt"
    assert res.write_games(str(out)) == 12
    first = out.read_text().splitlines()[0]
    assert " | " in first and "c4-1" in first


def test_match_helper():
    res = match("minimax", "random", "tictactoe", progress=False)
    assert len(res) == 6 and res.wdl("minimax", "random")[2] == 0


# ---- chess with Stockfish -----------------------------------------------------------------------------


@needs_stockfish
def test_stockfish_league_with_adjudication_and_pgn(tmp_path):
    chess = pytest.importorskip("chess")
    import chess.pgn
    import io

    ops = load_openings("chess")[:2]
    agents = {"sf": "stockfish:skill=5,nodes=2000", "random": "random:seed=3"}
    res = League(agents, "chess", ops, workers=2, max_plies=120, adjudicate=Adjudicator(600, nodes=3000),
                 path=str(tmp_path / "chess.jsonl")).run(progress=False)
    assert len(res) == 4
    w, d, l = res.wdl("sf", "random")
    assert w >= 3 and l == 0
    assert any(g.reason == "adjudication" for g in res.games)
    pgn_path = tmp_path / "games.pgn"
    res.write_games(str(pgn_path))
    text = pgn_path.read_text()
    games = []
    stream = io.StringIO(text)
    while True:
        g = chess.pgn.read_game(stream)
        if g is None:
            break
        games.append(g)
    assert len(games) == 4
    for g, rec in zip(games, res.games):
        assert not g.errors, g.errors
        assert g.headers["White"] == rec.first and g.headers["Result"] == rec.result
        moves = [m.uci() for m in g.mainline_moves()]
        assert moves == rec.opening_moves + rec.moves


@needs_stockfish
def test_chess960_league_pgn(tmp_path):
    chess = pytest.importorskip("chess")
    import chess.pgn
    import io

    ops = League.chess960(2, seed=4)
    assert all(o.text == _core.chess960_fen(int(o.name[4:])) for o in ops)
    res = League({"sf": "stockfish:nodes=500", "random": "random"}, "chess960", ops, max_plies=16).run(progress=False)
    assert len(res) == 4
    for rec in res.games:
        pgn = to_pgn(rec)
        assert '[Variant "Chess960"]' in pgn and f'[FEN "{rec.start}"]' in pgn
        g = chess.pgn.read_game(io.StringIO(pgn))
        assert not g.errors
        assert len(list(g.mainline_moves())) == len(rec.moves)


# ---- Ray ---------------------------------------------------------------------------------------------


def test_ray_league_matches_local(tmp_path, ray_cluster):
    from mavgame.play.distributed import RayExecutor

    path = str(tmp_path / "ray.sqlite")
    res = League(TTT, "tictactoe", path=path, executor=RayExecutor(num_workers=2)).run(progress=False)
    local = League(TTT, "tictactoe").run(progress=False)
    key = lambda r: {g.key: (g.result, g.moves) for g in r.games}  # noqa: E731
    assert key(res) == key(local)
    assert len(load_results(path)) == 18


def test_agent_with_running_engine_in_parallel_league(tmp_path):
    # an agent that already started its engine in this process is given to forked workers: each
    # worker must start its own engine instead of talking to the parent's
    from mavgame.agents.engines import UCIAgent

    agent = UCIAgent(write_fake_engine(tmp_path), nodes=10, name="fake")
    s = _core.State("chess")
    agent.setup("chess")
    assert s.action_to_str(agent.act(s)) == list(s.legal_moves)[0]
    parent_engine = agent._engine
    ops = [Opening("e4", ("e2e4",)), Opening("d4", ("d2d4",))]
    res = League({"fake": agent, "random": "random"}, "chess", ops, max_plies=6, workers=2).run(progress=False)
    assert len(res) == 4
    assert agent._engine is parent_engine and not parent_engine.closed  # the parent's engine is untouched
    assert resolve_move(s, agent.act(s)) in s.legal_actions()
    agent.close()
    assert parent_engine.closed


def test_two_runs_cannot_share_a_store(tmp_path):
    path = tmp_path / "league.sqlite"
    # a run in another live process holds the store: the second run is refused before touching it
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {REPO!r})
        from mavgame.play.store import ResultStore
        st = ResultStore({str(path)!r})
        st.register_run()
        print("ready", flush=True)
        time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreError, match=rf"being written by another league run \(process {holder.pid} on"):
            League(TTT, "tictactoe", path=str(path)).run(progress=False)
    finally:
        holder.kill()
        holder.wait()
    # the holder was killed: its claim is stale and the next run takes over
    assert len(League(TTT, "tictactoe", path=str(path)).run(progress=False)) == 18
    assert len(_stored_keys(path)) == 18


def test_two_runs_started_together_never_count_a_game_twice(tmp_path):
    path = tmp_path / "league.sqlite"
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {REPO!r})
        from mavgame.play.league import League
        from mavgame.play.store import StoreError
        try:
            League({TTT!r}, "tictactoe", rounds=2, path={str(path)!r}).run(progress=False)
            print("ran")
        except StoreError as e:
            print("refused", e)
        """)
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate()[0] for p in procs]
    assert all(o.startswith(("ran", "refused")) for o in outs), outs
    assert any(o.startswith("ran") for o in outs)
    keys = _stored_keys(path)
    assert len(keys) == len(set(keys))
    assert len(League(TTT, "tictactoe", rounds=2, path=str(path)).run(progress=False)) == 36


# ---- results in Jupyter and pandas, PGN headers -----------------------------------------------------


def test_results_render_as_html_tables_and_export():
    res = League(TTT, "tictactoe").run(progress=False)
    html = res._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 1 + 3
    assert "<caption>mavgame tictactoe league: 18 games" in html and "<th>minimax</th>" in html
    w, d, l = res.wdl("minimax", "random")
    assert f"<td>{w}/{d}/{l}</td>" in html
    elo = res.elo()
    eh = elo._repr_html_()
    assert eh.startswith("<table>") and eh.count("<tr>") == 1 + 3 and "<th>minimax</th>" in eh
    # agent names are escaped
    odd = League({"<b>x</b>": "random", "y&z": "minimax"}, "tictactoe").run(progress=False)
    assert "&lt;b&gt;x&lt;/b&gt;" in odd._repr_html_() and "<b>x</b>" not in odd._repr_html_()
    assert "y&amp;z" in odd.elo()._repr_html_()


def test_results_to_pandas():
    res = League(TTT, "tictactoe").run(progress=False)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="to_pandas.. needs pandas: pip install pandas"):
            res.to_pandas()
        with pytest.raises(ImportError, match="needs pandas"):
            res.elo().to_dataframe()
        return
    df = res.to_pandas()
    assert len(df) == 18 and list(df.columns[:8]) == ["key", "game", "round", "opening", "first", "second",
                                                      "result", "reason"]
    assert df["score_first"].isin([0.0, 0.5, 1.0]).all()
    assert res.to_dataframe().equals(df)
    e = res.elo().to_pandas()
    assert list(e.index) == [r["agent"] for r in res.elo().rows()] and "elo" in e.columns
    assert res.matrix_pandas().loc["minimax", "random"] == "{}/{}/{}".format(*res.wdl("minimax", "random"))


def test_pgn_has_the_date_and_event(tmp_path):
    chess = pytest.importorskip("chess")
    import chess.pgn
    import datetime
    import io

    ops = [Opening("e4", ("e2e4",))]
    res = match("random:seed=1", "random:seed=2", "chess", ops, progress=False, max_plies=6)
    rec = res.games[0]
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y.%m.%d")
    g = chess.pgn.read_game(io.StringIO(to_pgn(rec, res.event)))
    assert '[Event "mavgame chess league"]' in to_pgn(rec)
    assert g.headers["Date"] == today and g.headers["Event"] == "mavgame chess match: random-1 vs random-2"
    assert len(g.headers["UTCTime"]) == 8
    path = tmp_path / "m.pgn"
    League({"a": "random", "b": "random:seed=3"}, "chess", ops, max_plies=4,
           event="my match").run(progress=False).write_games(str(path))
    g = chess.pgn.read_game(io.StringIO(path.read_text()))
    assert g.headers["Event"] == "my match" and g.headers["Date"] == today


def test_league_refuses_bad_numbers():
    with pytest.raises(ValueError, match="max_plies must be a number of moves >= 1 .None: no limit., not 0"):
        League(TTT, "tictactoe", max_plies=0)
    with pytest.raises(ValueError, match="max_plies must be"):
        play_game(RandomAgent(1), RandomAgent(2), "tictactoe", max_plies=0)
    with pytest.raises(ValueError, match="workers must be a number of processes >= 1, not 0"):
        League(TTT, "tictactoe", workers=0)
    with pytest.raises(ValueError, match="anchor 'nonexistent' is not an agent with finished games"):
        League(TTT, "tictactoe").run(progress=False).elo(anchors={"nonexistent": 1500})


def test_shipped_hex_openings_are_the_documented_edge_stones():
    """openings_hex_11.txt and mavgame.play.openings agree: single stones on the two outermost rows/columns."""
    ops = load_openings("hex")
    assert len(ops) >= 10
    for o in ops:
        assert len(o.moves) == 1, o
        mv = o.moves[0]
        col, row = ord(mv[0]) - ord("a"), int(mv[1:]) - 1
        assert 0 <= col < 11 and 0 <= row < 11, mv
        assert min(col, row, 10 - col, 10 - row) <= 1, f"{mv} is not on the two outermost rows/columns"


def test_paper_scheduler_samples_matchups_uniformly(tmp_path):
    """matchups=N: N uniformly random (pair, opening) match-ups, both colours each, stable under extension,
    resumable; a store keeps one kind of schedule."""
    agents = {"r1": "random", "r2": "random:seed=1", "r3": "random:seed=2"}
    big = League(agents, "tictactoe", matchups=900, seed=4)
    tasks = big.schedule()
    assert len(tasks) == 1800
    pairs, openings = {}, {}
    for i in range(900):
        g1, g2 = tasks[2 * i], tasks[2 * i + 1]
        assert (g1.first, g1.second) == (g2.second, g2.first) and g1.opening == g2.opening and g1.round == i
        pairs[frozenset((g1.first, g1.second))] = pairs.get(frozenset((g1.first, g1.second)), 0) + 1
        openings[g1.opening.name] = openings.get(g1.opening.name, 0) + 1
    assert len(pairs) == 3 and all(240 <= n <= 360 for n in pairs.values()), pairs      # 300 each expected
    assert len(openings) == 3 and all(240 <= n <= 360 for n in openings.values()), openings
    assert len({t.key for t in tasks}) == 1800
    assert [t.key for t in League(agents, "tictactoe", matchups=10, seed=4).schedule()] == [t.key for t in tasks[:20]]
    assert [t.key for t in League(agents, "tictactoe", matchups=10, seed=5).schedule()] != [t.key for t in tasks[:20]]
    path = tmp_path / "m.sqlite"
    res = League(agents, "tictactoe", matchups=3, seed=4, path=path).run(progress=False)
    assert len(res.games) == 6
    res = League(agents, "tictactoe", matchups=5, seed=4, path=path).run(progress=False)  # extended
    assert len(res.games) == 10 and len(stored(path)[0]) == 10
    with pytest.raises(ValueError, match="holds 5 sampled match-ups, not the full round robin"):
        League(agents, "tictactoe", path=path).run(progress=False)
    with pytest.raises(ValueError, match="matchups must be a number"):
        League(agents, "tictactoe", matchups=0)
    with pytest.raises(ValueError, match="sampled match-ups take no rounds"):
        League(agents, "tictactoe", matchups=4, rounds=2)


def test_read_league_store_gives_the_agents_and_games_or_names_the_file(tmp_path):
    from mavgame.play.store import read_league_store

    path = tmp_path / "lg.sqlite"
    League(TTT, "tictactoe", path=str(path)).run(progress=False, max_games=3)
    header, games = read_league_store(str(path))
    assert set(header["agents"]) == set(TTT) and len(games) == 3
    assert all(g.first in TTT and g.second in TTT for g in games)
    with pytest.raises(StoreError, match="nope.sqlite: no such results store"):
        read_league_store(str(tmp_path / "nope.sqlite"))
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all")
    with pytest.raises(StoreError, match="junk.sqlite"):
        read_league_store(str(junk))
    bare = tmp_path / "bare.sqlite"
    ResultStore(str(bare)).close()                 # a store no league wrote: no header
    with pytest.raises(StoreError, match="bare.sqlite: not a league or match store"):
        read_league_store(str(bare))
