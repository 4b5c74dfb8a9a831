"""Connect Four training data as the paper generated it (issue 13): epsilon-greedy games (uniform among the
moves of the best value, a random move with probability epsilon), every position annotated, terminal
positions recorded (and turned into examples), the exact solves of early positions cached across runs,
resumable without duplicates, and the statistics report."""
import json

import numpy as np
import pytest

from mavgame.datasets import PositionStore, generate_positions, play_annotated_game
from mavgame.datasets.stats import format_stats, position_set_stats
from mavgame.datasets.positions import CACHE, PROGRESS, TIMING, load_annotation_cache


def first_moves(epsilon, n, best):
    """The first move of n tic-tac-toe games under a fixed annotation: 1.0 for `best`, 0 otherwise."""
    def annotate(state):
        return {m: 1.0 if m in best else 0.0 for m in state.legal_moves}, best[0]
    counts = {}
    for i in range(n):
        rng = np.random.default_rng([7, i])
        recs = play_annotated_game("tictactoe", annotate, rng, epsilon, max_plies=2)
        mv = recs[1]["prev_action"]
        counts[mv] = counts.get(mv, 0) + 1
    return counts


def within(count, n, p, sigmas=4.0):
    return abs(count - n * p) <= sigmas * (n * p * (1 - p)) ** 0.5


def test_greedy_moves_are_uniform_among_the_best():
    best = ["a1", "b2", "c3"]
    counts = first_moves(0.0, 3000, best)
    assert sorted(counts) == sorted(best)                       # never a move of lower value
    for m in best:
        assert within(counts[m], 3000, 1 / 3), counts


def test_epsilon_moves_are_uniform_over_all_moves():
    best = ["a1", "b2", "c3"]
    n, eps = 4000, 0.3
    counts = first_moves(eps, n, best)
    assert len(counts) == 9
    for m, c in counts.items():
        p = (1 - eps) / 3 + eps / 9 if m in best else eps / 9
        assert within(c, n, p), (m, counts)
    assert not within(sum(counts[m] for m in best), n, 1.0)    # epsilon does move off the best


C4 = dict(seed=3, epsilon=0.2, val_fraction=0.2, random_opening=16, progress=False, chunk=2, shard_size=9,
          annotator_options={"max_nodes": 200_000, "tt_log2": 16, "exact_plies": 22})


def test_terminal_positions_are_records_and_examples(tmp_path):
    from mavgame import mav
    from mavgame.datasets.records import _new_state
    stats = generate_positions("connect_four", tmp_path, 6, **C4)
    recs = list(PositionStore(tmp_path / "train")) + list(PositionStore(tmp_path / "val"))
    term = [r for r in recs if not r["values"]]
    assert stats["terminal"] == len(term) > 0
    assert sum(stats["results"].values()) == 6
    b = mav.ExampleBuilder(seed=0)
    for r in term:
        st = _new_state("connect_four", 0, r["state"])
        assert st.is_terminal() and r["result"] == st.result() != "*" and r["best"] is None
        prompt, target = b.build([(st, None)], return_text=True).texts[0]
        assert f'invalid : "{r["result"]}"' in target
    assert all(r["values"] and r["best"] in r["values"] for r in recs if r["result"] == "*")
    assert len({r["state"] for r in recs}) == len(recs)        # every position once


def counting_annotator(monkeypatch, solved):
    """Wrap the Connect Four annotator so that the positions it solves exactly (cacheable) are listed."""
    from mavgame.annotators import connect_four as mod
    real = mod.connect_four_annotator

    def make(options):
        ann = real(options)

        def annotate(state):
            if ann.cacheable(state):
                solved.append(state.text())
            return ann(state)
        annotate.reset, annotate.cacheable = ann.reset, ann.cacheable
        return annotate
    import mavgame.annotators as annotators
    annotators.annotated_games()   # every annotator registered
    monkeypatch.setitem(annotators._ANNOTATORS, "connect_four", (make, annotators._ANNOTATORS["connect_four"][1]))


def test_exact_solves_are_cached_and_resume_neither_resolves_nor_duplicates(tmp_path, monkeypatch):
    from mavgame.datasets import store
    whole = tmp_path / "whole"
    generate_positions("connect_four", whole, 16, **C4)
    cache = load_annotation_cache(whole / CACHE)
    assert cache and all(json.loads(line)["seconds"] >= 0 for line in (whole / CACHE).read_text().splitlines())
    part = tmp_path / "part"
    orig, calls = store.PositionWriter.add, [0]

    class Stop(Exception):
        pass

    def add(self, rec):
        if calls[0] == 30:
            raise Stop()
        calls[0] += 1
        return orig(self, rec)
    with monkeypatch.context() as mp:
        mp.setattr(store.PositionWriter, "add", add)
        with pytest.raises(Stop):
            generate_positions("connect_four", part, 16, **C4)
    assert (part / PROGRESS).exists()
    before = load_annotation_cache(part / CACHE)
    assert before
    with open(part / CACHE, "a") as f:
        f.write('{"state": "torn')                             # killed mid-write
    solved = []
    with monkeypatch.context() as mp:
        counting_annotator(mp, solved)
        generate_positions("connect_four", part, 16, **C4)
    assert solved and not set(solved) & set(before)          # nothing solved again
    for split in ("train", "val"):
        assert list(PositionStore(part / split)) == list(PositionStore(whole / split))
    assert load_annotation_cache(part / CACHE).keys() == cache.keys()
    lines = (part / CACHE).read_text().splitlines()
    assert len(lines) == len({json.loads(x)["state"] for x in lines})   # each cached position once
    timing = json.loads((part / TIMING).read_text())
    assert timing["cache_entries"] == len(cache) and any(v[1] > 0 for v in timing["by_ply"].values())


def test_data_stats_report(tmp_path, capsys):
    from mavgame.cli import main
    generate_positions("connect_four", tmp_path, 6, **C4)
    st = position_set_stats(tmp_path)
    recs = list(PositionStore(tmp_path / "train")) + list(PositionStore(tmp_path / "val"))
    assert st["records"] == st["distinct"] == len(recs) and st["duplicates"] == 0
    assert st["terminal"] == sum(not r["values"] for r in recs) and 0 < st["terminal_share"] < 1
    assert sum(st["by_phase"].values()) == len(recs) and set(st["by_phase"]) <= {"opening", "middle", "end"}
    assert min(p for p, n in st["by_ply"].items() if n > 1) == 16
    assert set(st["move_values"]) <= {"0.000", "0.500", "1.000"}
    assert sum(st["position_values"].values()) == len(recs) - st["terminal"]
    assert st["finished"] and st["annotation_time"]["middle"]["annotations"] > 0
    text = format_stats(st)
    assert "| phase | positions | won | drawn | lost |" in text and "terminal" in text
    assert main(["data-stats", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == len(recs)
    with pytest.raises(SystemExit):
        main(["data-stats", str(tmp_path / "nothing")])


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_cached_generation_is_the_same_for_a_pool(tmp_path, monkeypatch, method):
    """Pool workers get the cache (pickled for spawn) and append their solves to the one file: the same
    set as one process, and the same cached positions."""
    import multiprocessing as mp
    from mavgame import workers
    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    generate_positions("connect_four", tmp_path / "one", 6, **C4)
    monkeypatch.setattr(workers, "_start_method", lambda: method)
    generate_positions("connect_four", tmp_path / "pool", 6, workers=2, **C4)
    for split in ("train", "val"):
        assert list(PositionStore(tmp_path / "pool" / split)) == list(PositionStore(tmp_path / "one" / split))
    one, pool = (load_annotation_cache(tmp_path / d / CACHE) for d in ("one", "pool"))
    assert one and {k: v[:2] for k, v in pool.items()} == {k: v[:2] for k, v in one.items()}   # seconds aside


# --- the weak=1 annotator: win/draw/loss columns by weak solves, perfect play's best move ------------------

def random_c4_positions(stones, count, seed):
    """`count` distinct random non-terminal Connect Four positions with `stones` stones (uniformly random
    moves: mavgame.play.openings.random_openings)."""
    from mavgame.games.connect_four import ConnectFour
    from mavgame.play.openings import random_openings
    return [ConnectFour(moves="".join(o.moves)) for o in random_openings("connect_four", stones, count, seed=seed)]


def assert_weak_annotator_agrees(positions):
    """The weak=1 annotator gives exactly the exact annotator's values and best move (each annotator with
    its own warm tables, as in generation), and that best move is perfect play's: the highest exact
    score of an exact solve, ties to the most central column."""
    from mavgame.annotators import make_annotator
    from mavgame.games.connect_four import CENTRE_FIRST
    exact = make_annotator("connect_four", {"max_nodes": 0, "tt_log2": 20})
    weak = make_annotator("connect_four", {"max_nodes": 0, "tt_log2": 20, "weak": 1})
    kinds, choices = set(), 0
    for b in positions:
        e, w = exact(b), weak(b)
        assert e is not None and w == e, (b.text(), e, w)
        res = b.solve()                                  # the module's own solver: a third table
        top = max(res.move_scores.values())
        assert w[1] == next(m for m in CENTRE_FIRST if res.move_scores.get(m) == top), (b.text(), res)
        assert w[0] == {m: 1.0 if v > 0 else 0.0 if v < 0 else 0.5 for m, v in res.move_scores.items()}
        kinds.add((res.score > 0) - (res.score < 0))
        # won or lost with several columns of that value: the exact scores choose among them
        choices += res.score != 0 and sum((v > 0) - (v < 0) == (res.score > 0) - (res.score < 0)
                                          for v in res.move_scores.values()) > 1
    return kinds, choices


def test_weak_annotator_is_the_exact_annotator_late_positions():
    positions = [b for n in range(16, 37, 2) for b in random_c4_positions(n, 12, n)]
    kinds, choices = assert_weak_annotator_agrees(positions)
    assert kinds == {-1, 0, 1} and choices >= 20      # won, drawn and lost positions, many with a choice


@pytest.mark.slow
def test_weak_annotator_is_the_exact_annotator_early_positions():
    """Positions of 8 to 14 stones, where generation spends its time (about a minute here)."""
    positions = [b for n, k in ((8, 2), (9, 3), (10, 4), (11, 4), (12, 4), (13, 4), (14, 4))
                 for b in random_c4_positions(n, k, 100 + n)]
    assert_weak_annotator_agrees(positions)


def test_weak_annotator_option_is_checked():
    from mavgame.annotators import make_annotator
    with pytest.raises(ValueError, match="weak must be 0 or 1, got 2"):
        make_annotator("connect_four", {"weak": 2})


def test_weak_generation_writes_the_same_data(tmp_path):
    """A generation with weak=1 writes the same records and annotation cache entries as with weak=0."""
    runs = []
    for weak in (0, 1):
        opts = dict(C4["annotator_options"], weak=weak)
        generate_positions("connect_four", tmp_path / str(weak), 6, **dict(C4, annotator_options=opts))
        recs = [list(PositionStore(tmp_path / str(weak) / split)) for split in ("train", "val")]
        cache = {k: v[:2] for k, v in load_annotation_cache(tmp_path / str(weak) / CACHE).items()}
        runs.append((recs, cache))
    assert runs[0][1] and runs[0] == runs[1]


def test_weak_exact_best_against_reference_scores(shared_data):
    """The exact score of ConnectFour.solve(weak=True, exact_best=True) against the public solver test
    sets (lines of "moves score"), where the reference data has them (connect_four/Test_L*)."""
    from mavgame.games.connect_four import ConnectFour, solver
    files = sorted((shared_data / "connect_four").glob("Test_L*")) if (shared_data / "connect_four").is_dir() else []
    if not files:
        pytest.skip(f"no Connect Four test sets (connect_four/Test_L*) in {shared_data}")
    sv = solver(20)
    checked = 0
    for f in files:
        lines = [ln.split() for ln in f.read_text().splitlines() if ln.strip()]
        for moves, score in lines[:20]:                  # the easier sets' first positions: seconds at most
            if len(moves) < 14:
                continue
            r = ConnectFour.from_moves(moves).solve(weak=True, exact_best=True, solver=sv)
            assert r.complete and r.score == int(score), (f.name, moves, r)
            checked += 1
    assert checked > 0
