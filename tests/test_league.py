"""mavgame.league, agents and openings: leagues end to end, resuming, engine failures."""
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
from mavgame.agents import (AgentError, CallableAgent, MinimaxAgent, RandomAgent, make_agent, parse_spec,
                            register_agent, resolve_move)
from mavgame.league import (Adjudicator, League, LeagueError, Opening, load_results, match, play_game,
                            to_pgn)
from mavgame.openings import load_openings, parse_openings, random_openings
from mavgame.uci import find_stockfish
from fake_uci import REPO, write_fake_engine

STOCKFISH = find_stockfish()
needs_stockfish = pytest.mark.skipif(STOCKFISH is None, reason="Stockfish not installed (apt-get install stockfish)")

TTT = {"random": "random", "uct": "uct:sims=50", "minimax": "minimax"}


def lines_of(path):
    return [json.loads(x) for x in Path(path).read_text().splitlines()]


# ---- agents -----------------------------------------------------------------------------------------


def test_agent_specs():
    assert parse_spec("stockfish:skill=3,movetime=50,path=/x/y") == ("stockfish", {"skill": 3, "movetime": 50,
                                                                                   "path": "/x/y"})
    assert parse_spec("mcts:eps=0.25,reuse_tree=false") == ("mcts", {"eps": 0.25, "reuse_tree": False})
    with pytest.raises(ValueError, match="unknown agent kind 'nope'"):
        make_agent("nope")
    with pytest.raises(ValueError, match="expected key=value"):
        make_agent("uct:sims")
    with pytest.raises(ValueError, match="unexpected keyword"):
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
    s.push_str("b2")
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
    from mavgame.openings import openings_path

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


def test_league_file_resumes(tmp_path):
    path = str(tmp_path / "league.jsonl")
    lg = League(TTT, "tictactoe", path=path)
    res = lg.run(progress=False, max_games=5)
    assert len(res) == 5
    first = Path(path).read_text().splitlines()
    assert json.loads(first[0])["type"] == "league" and len(first) == 6
    res = League(TTT, "tictactoe", path=path).run(progress=False)
    assert len(res) == 18
    after = Path(path).read_text().splitlines()
    assert after[:6] == first  # finished games are kept as they were
    assert len({json.loads(x)["key"] for x in after[1:]}) == 18
    # running again plays nothing
    assert len(League(TTT, "tictactoe", path=path).run(progress=False)) == 18
    assert len(Path(path).read_text().splitlines()) == 19
    # a different game or a changed agent is refused
    with pytest.raises(ValueError, match="holds a 'tictactoe' league"):
        League({"a": "random", "b": "random"}, "connect_four", path=path).run(progress=False)
    with pytest.raises(ValueError, match="agent 'uct' was 'uct:sims=50' there"):
        League(dict(TTT, uct="uct:sims=60"), "tictactoe", path=path).run(progress=False)
    # new agents join: only their games are played
    res = League(dict(TTT, first="python:fn=test_league:first_legal"), "tictactoe", path=path).run(progress=False)
    assert len(res) == 18 + 3 * 3 * 2
    assert load_results(path).wdl("minimax", "random") == res.wdl("minimax", "random")


def first_legal(state):
    return int(state.legal_actions()[0])


def test_torn_last_line_is_repaired(tmp_path):
    path = tmp_path / "league.jsonl"
    League(TTT, "tictactoe", path=str(path)).run(progress=False, max_games=4)
    good = path.read_text()
    path.write_text(good + '{"type": "game", "key": "0|cen')  # killed while writing
    res = League(TTT, "tictactoe", path=str(path)).run(progress=False)
    assert len(res) == 18
    text = path.read_text()
    assert text.startswith(good) and all(json.loads(x) for x in text.splitlines())


KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {repo!r})
    from mavgame.agents import CallableAgent
    from mavgame.league import League

    def slow(state):
        time.sleep(0.03)
        return int(state.legal_actions()[len(state.legal_actions()) // 2])

    League({{"slow": CallableAgent(slow, name="slow"), "random": "random", "minimax": "minimax"}},
           "tictactoe", rounds=3, path={path!r}, workers=2).run(progress=False)
""")


def _wait_until_unlocked(path, timeout=30.0):
    """SIGKILLed pool workers release the results file's lock when they are reaped, which can
    trail the parent's death: wait until nobody holds it (as a user re-running later would)."""
    import fcntl

    deadline = time.monotonic() + timeout
    with open(path, "a") as f:
        while True:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail("the killed league's workers still hold the results file's lock")
                time.sleep(0.05)


def test_killed_league_resumes_without_losing_games(tmp_path):
    path = tmp_path / "league.jsonl"
    script = tmp_path / "run.py"
    script.write_text(KILL_SCRIPT.format(repo=REPO, path=str(path)))
    proc = subprocess.Popen([sys.executable, str(script)], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if path.exists() and len(path.read_text().splitlines()) >= 6:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the league did not start")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole process group: parent and pool workers
        proc.wait()
    _wait_until_unlocked(path)
    before = [x for x in path.read_text().split("\n")[:-1]]  # complete lines only
    keys_before = [json.loads(x)["key"] for x in before[1:]]
    assert 5 <= len(keys_before) < 54
    from mavgame.agents import CallableAgent

    def slow(state):
        return int(state.legal_actions()[len(state.legal_actions()) // 2])

    res = League({"slow": CallableAgent(slow, name="slow"), "random": "random", "minimax": "minimax"},
                 "tictactoe", rounds=3, path=str(path), workers=1).run(progress=False)
    assert len(res) == 54
    after = path.read_text().splitlines()
    assert after[:len(before)] == before
    keys = [json.loads(x)["key"] for x in after[1:]]
    assert len(keys) == len(set(keys)) == 54


def chess_agents(engine):
    return {"engine": f"uci:path={engine},nodes=10", "random": "random:seed=1"}


def test_crashing_engine_stops_league_and_keeps_games(tmp_path):
    # the engine crashes in every position of the second opening; games of the first one finish
    engine = write_fake_engine(tmp_path, "crash", trigger="g1f3")
    ops = [Opening("e4", ("e2e4",)), Opening("nf3", ("g1f3",))]
    path = tmp_path / "league.jsonl"
    lg = League(chess_agents(engine), "chess", ops, path=str(path), max_plies=6, workers=1)
    with pytest.raises(LeagueError) as ei:
        lg.run(progress=False)
    msg = str(ei.value)
    assert "0|nf3|engine|random" in msg and "exited with status 3" in msg and "simulated crash" in msg
    assert "saved in" in msg
    recs = [d for d in lines_of(path) if d["type"] == "game"]
    assert sorted(r["key"] for r in recs) == ["0|e4|engine|random", "0|e4|random|engine"]
    errs = [d for d in lines_of(path) if d["type"] == "error"]
    assert errs and "simulated crash" in errs[0]["error"]
    # with a working engine the league resumes and completes, keeping the finished games
    good = write_fake_engine(tmp_path, "ok", name=Path(engine).name)  # same path, fixed engine
    assert good == engine
    res = League(chess_agents(engine), "chess", ops, path=str(path), max_plies=6).run(progress=False)
    assert len(res) == 4


@pytest.mark.parametrize("mode,match", [("bad_score", "non-integer cp score 'abc'"),
                                        ("no_move", "'bestmove' without a move"),
                                        ("illegal", "illegal move 'a1a1'")])
def test_malformed_engine_output_parallel(tmp_path, mode, match):
    engine = write_fake_engine(tmp_path, mode, trigger="g1f3")
    ops = [Opening("e4", ("e2e4",)), Opening("d4", ("d2d4",)), Opening("nf3", ("g1f3",))]
    path = tmp_path / "league.jsonl"
    with pytest.raises(LeagueError, match=match):
        League(chess_agents(engine), "chess", ops, path=str(path), max_plies=4, workers=2).run(progress=False)
    recs = [d for d in lines_of(path) if d["type"] == "game"]
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


def test_ray_league_matches_local(tmp_path):
    ray = pytest.importorskip("ray")
    from mavgame.distributed import RayExecutor

    started = not ray.is_initialized()
    if started:
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        path = str(tmp_path / "ray.jsonl")
        res = League(TTT, "tictactoe", path=path, executor=RayExecutor(num_workers=2)).run(progress=False)
        local = League(TTT, "tictactoe").run(progress=False)
        key = lambda r: {g.key: (g.result, g.moves) for g in r.games}  # noqa: E731
        assert key(res) == key(local)
        assert len(load_results(path)) == 18
    finally:
        if started:
            ray.shutdown()


def test_agent_with_running_engine_in_parallel_league(tmp_path):
    # an agent that already started its engine in this process is given to forked workers: each
    # worker must start its own engine instead of talking to the parent's
    from mavgame.agents import UCIAgent

    agent = UCIAgent(write_fake_engine(tmp_path), nodes=10, name="fake")
    s = _core.State("chess")
    agent.setup("chess")
    assert s.action_to_str(agent.act(s)) == s.legal_moves()[0]
    parent_engine = agent._engine
    ops = [Opening("e4", ("e2e4",)), Opening("d4", ("d2d4",))]
    res = League({"fake": agent, "random": "random"}, "chess", ops, max_plies=6, workers=2).run(progress=False)
    assert len(res) == 4
    assert agent._engine is parent_engine and not parent_engine.closed  # the parent's engine is untouched
    assert resolve_move(s, agent.act(s)) in s.legal_actions()
    agent.close()
    assert parent_engine.closed


def test_two_runs_cannot_share_a_results_file(tmp_path):
    import fcntl

    path = tmp_path / "league.jsonl"
    with open(path, "a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with pytest.raises(ValueError, match="being written by another league run"):
            League(TTT, "tictactoe", path=str(path)).run(progress=False)
    assert len(League(TTT, "tictactoe", path=str(path)).run(progress=False)) == 18
