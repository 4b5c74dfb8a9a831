"""The Hex annotator of the MAV data pipeline: exact values from the solver on small boards, playout UCT
beyond it, deterministic generation for any worker count, MAV examples that build and parse, and a tiny
model that learns from 4x4 data."""
import math

import numpy as np
import pytest

import mavgame
from mavgame import _core, mav
from mavgame.games.hex import Hex
from mavgame.datasets import (DEFAULT_ANNOTATOR_OPTIONS, MAVEncoder, PositionStore, generate_positions,
                                make_annotator)
from mavgame.annotators.hex import _centre_distance, hex_annotator, position_seed


def records(root, splits=("train", "val")):
    out = []
    for split in splits:
        if (root / split / "manifest.json").exists():
            out.extend(PositionStore(root / split))
    return out


def shard_bytes(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("shard-*.jsonl"))}


def check_links(recs, size):
    """Every record's predecessor plus its move is the record's state; terminal records have the result."""
    for r in recs:
        st = Hex(text=r["state"])
        assert st.size == size
        if r["prev_state"] is not None:
            prev = Hex(text=r["prev_state"])
            prev.push(r["prev_action"])
            assert prev.text() == r["state"]
        if not r["values"]:
            assert st.is_terminal() and r["result"] == st.result() and r["best"] is None
        else:
            assert not st.is_terminal() and sorted(r["values"]) == sorted(st.legal_moves)
            assert r["best"] in r["values"]


@pytest.fixture(scope="module")
def hex4(tmp_path_factory):
    root = tmp_path_factory.mktemp("hex4")
    stats = generate_positions("hex", root / "data", 12, seed=5, epsilon=0.3, board_size=4, val_fraction=0.2,
                               progress=False)
    return root / "data", stats


def test_registered_with_defaults():
    assert DEFAULT_ANNOTATOR_OPTIONS["hex"]["solver_max_nodes"] > 0
    ann = make_annotator("hex")
    vals, best = ann(Hex(3))
    sol = Hex(3).solve()
    assert vals == {m: (1.0 if v > 0 else 0.0) for m, v in sol.move_values.items()}
    assert best == "b2"                                  # of the five winning moves, the centre
    with pytest.raises(ValueError, match="unknown hex annotator option.*max_nodes"):
        make_annotator("hex", {"max_nodes": 5})
    for bad in ({"sims": 0}, {"sims": 1.5}, {"solver_max_nodes": -1}, {"c": float("inf")}, {"exact_only": 1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            hex_annotator(bad)
    # a plain State of the default size (board_size 0) and one read from text without a size
    st = _core.State("hex", None, 0, 0)
    vals, best = hex_annotator({"sims": 200})(st)
    assert len(vals) == 121 and best in vals
    st = _core.State("hex", Hex.from_moves("b2", size=3).text(), 0, 0)
    assert ann(st) == ann(Hex.from_moves("b2", size=3))
    with pytest.raises(ValueError, match="'connect_four' state"):
        ann(mavgame.State("connect_four"))
    with pytest.raises(ValueError, match="finished game"):
        ann(Hex.from_moves("a1 b1 a2", size=2))


def test_small_board_values_are_the_solver_values(hex4):
    data, stats = hex4
    recs = records(data)
    assert len(recs) == stats["positions_unique"] > 30 and stats["train"] and stats["val"]
    assert not stats["unannotated_by_ply"] and stats["terminal"] >= 1
    check_links(recs, 4)
    seen_lost = seen_won = 0
    for r in recs:
        if not r["values"]:
            continue
        sol = Hex(text=r["state"]).solve()
        assert sol.complete
        assert r["values"] == {m: (1.0 if v > 0 else 0.0) for m, v in sol.move_values.items()}
        if sol.value > 0:
            seen_won += 1
            assert r["values"][r["best"]] == 1.0
        else:
            seen_lost += 1
            assert set(r["values"].values()) == {0.0}
    assert seen_won and seen_lost


def test_best_move_rules():
    ann = hex_annotator({})
    # x (top-bottom) has a1 a2 a3: a4 connects at once
    st = Hex(text="x.o./x.o./x..o/.... x")
    vals, best = ann(st)
    wins = [m for m, v in vals.items() if v == 1.0]
    assert "a4" in wins and best == "a4"           # a4 connects now; others may win later
    assert len(wins) > 1
    # no immediate win: the winning move nearest the centre, ties to the lowest action
    st = Hex(4)
    vals, best = ann(st)
    wins = [st.action_from_str(m) for m, v in vals.items() if v == 1.0]
    key = min((_centre_distance(4, a), a) for a in wins)
    assert best == st.action_to_str(key[1]) == "c2"
    # a lost position: the losing move nearest the centre
    st = Hex.from_moves("b2", size=3)
    vals, best = ann(st)
    assert set(vals.values()) == {0.0} and best == "b1"


def test_budgeted_solve_keeps_proofs_and_fills_in_with_mcts():
    # on these positions a 2000-node solve proves some moves only
    for text, won in ((".x..o./....../x.o.o./.xo.../..x..o/x..o.x x", True),
                      ("....xx/o.o..o/...xoo/...x../....../..x..x o", False)):
        st = Hex(text=text)
        value, arr, complete = _core.hex_solve(st, max_nodes=2000)
        assert not complete
        proven = {st.action_to_str(int(a)): int(arr[a]) for a in st.legal_actions() if arr[a]}
        assert 0 < len(proven) < len(st.legal_moves)
        vals, best = hex_annotator({"solver_max_nodes": 2000, "sims": 3000, "seed": 4})(st)
        for m, v in proven.items():
            assert vals[m] == (1.0 if v > 0 else 0.0)
        rest = [vals[m] for m in vals if m not in proven]
        assert all(0.0 <= v <= 1.0 for v in rest) and len(set(rest)) > 3  # playout means, not solver values
        r = _core.playout_mcts(st, 3000, seed=position_seed(st.text(), 4))
        q = {st.action_to_str(int(a)): float(v) for a, v in zip(r["actions"], r["q"])}
        assert all(vals[m] == q[m] for m in vals if m not in proven)
        if won:
            assert proven[best] == 1
        else:
            assert proven.get(best, 0) >= 0
        # exact_only: a solve that does not complete is no annotation
        assert hex_annotator({"solver_max_nodes": 2000, "exact_only": True})(st) is None
        # and with a big enough budget the same annotator is exact
        full = hex_annotator({"solver_max_nodes": 0, "exact_only": True})(st)
        sol = st.solve()
        assert full[0] == {m: (1.0 if v > 0 else 0.0) for m, v in sol.move_values.items()}


def test_generation_is_identical_for_any_worker_count(tmp_path):
    # 5x5 with a small solver budget: exact positions, budget-limited ones from MCTS, both seeded
    kw = dict(seed=2, epsilon=0.3, board_size=5, random_opening=2, val_fraction=0.25, progress=False, chunk=2,
              annotator_options={"solver_max_nodes": 20_000, "sims": 400})
    a = generate_positions("hex", tmp_path / "a", 6, workers=1, **kw)
    b = generate_positions("hex", tmp_path / "b", 6, workers=2, **kw)
    for s in (a, b):
        s.pop("seconds")
    assert a == b
    assert shard_bytes(tmp_path / "a") == shard_bytes(tmp_path / "b") and shard_bytes(tmp_path / "a")
    recs = records(tmp_path / "a")
    check_links(recs, 5)
    exact = [r for r in recs if r["values"] and set(r["values"].values()) <= {0.0, 1.0}]
    approx = [r for r in recs if r["values"] and not set(r["values"].values()) <= {0.0, 1.0}]
    assert exact and approx
    # another annotation seed gives other MCTS values
    c = generate_positions("hex", tmp_path / "c", 6, workers=1,
                           **dict(kw, annotator_options={"solver_max_nodes": 20_000, "sims": 400, "seed": 1}))
    c.pop("seconds")
    assert shard_bytes(tmp_path / "a") != shard_bytes(tmp_path / "c")


def test_large_board_gets_mcts_values(tmp_path):
    stats = generate_positions("hex", tmp_path / "d", 3, seed=1, epsilon=0.2, board_size=9, max_plies=14,
                               val_fraction=0.0, progress=False, annotator_options={"sims": 800})
    recs = records(tmp_path / "d")
    assert len(recs) == stats["positions_unique"] >= 14
    check_links(recs, 9)
    for r in recs[:6]:
        st = Hex(text=r["state"])
        vals = r["values"]
        assert all(0.0 <= v <= 1.0 for v in vals.values())
        assert len(set(vals.values())) > 10        # playout means, not 0/1 proofs
        res = _core.playout_mcts(st, 800, seed=position_seed(r["state"]))
        assert st.is_legal(st.action_from_str(r["best"]))
        assert r["best"] == st.action_to_str(int(res["best_action"]))
        visits = dict(zip(res["actions"].tolist(), res["visits"].tolist()))
        assert visits[st.action_from_str(r["best"])] == max(visits.values())
        for a, q in zip(res["actions"].tolist(), res["q"].tolist()):
            want = float(res["value"]) if math.isnan(q) else q
            assert vals[st.action_to_str(a)] == want


@pytest.mark.parametrize("size", [4, 9])
def test_mav_examples_build_and_parse(hex4, tmp_path, size):
    if size == 4:
        recs = records(hex4[0])
    else:
        generate_positions("hex", tmp_path / "e", 1, seed=3, board_size=9, max_plies=6, val_fraction=0.0,
                           progress=False, annotator_options={"sims": 300})
        recs = records(tmp_path / "e")
    enc = MAVEncoder("hex", p_top_all=1.0, p_transition=0.5)
    items = enc.items(recs)
    batch = mav.ExampleBuilder(seed=9, tokenizer=enc.tokenizer(), p_top_all=1.0).build(items, return_text=True)
    assert len(batch.texts) == len(recs)
    n_trans = 0
    for r, (prompt, target) in zip(recs, batch.texts):
        st = _core.State("hex", r["state"])
        res = mav.parse("hex", prompt + target, true_state=st)
        assert res.ok and res.complete, (prompt + target, res.issues)
        n_trans += res.transition
        if res.transition:
            assert res.cur.correct and res.cur.text == r["state"]
        if r["values"]:
            assert {e.move: e.bucket for e in res.top} == {m: int(mav.bucket(v)) for m, v in r["values"].items()}
            assert res.best == r["best"] and res.n_illegal == res.n_missing == 0
        else:
            assert res.outcome == r["result"]
    # the encoder's token rows are the builder's for the same seed
    toks = enc(recs, 9)
    for (t, m), n, row in zip(toks, batch.lengths.tolist(), batch.tokens):
        assert np.array_equal(t, row[:n]) and m.sum() > 0
    assert 0 < n_trans < len(recs)


def test_tiny_model_learns_hex4(hex4, tmp_path):
    torch = pytest.importorskip("torch")
    from mavgame.model.train import Trainer
    from mavgame.model.train_config import TrainConfig
    torch.set_num_threads(1)
    cfg = TrainConfig(data=str(hex4[0]), out=str(tmp_path / "run"), steps=60, batch_size=16, preset="tiny",
                      model=dict(d_model=64, d_ff=128, n_heads=4), warmup=5, lr=1e-2, eval_every=60,
                      checkpoint_every=60, log_every=5, progress=False, max_seq_len=256, gen_eval_positions=0,
                      encoder_options={"p_top_all": 1.0})
    tr = Trainer(cfg)
    first = tr.run(stop_after=5)["loss"]
    last = tr.run()
    assert tr.step == 60
    assert last["loss"] < 0.3 * first, (first, last)
    assert last["val_loss"] < 0.3 * first


def test_train_command_line_on_a_small_board(tmp_path, capsys):
    pytest.importorskip("torch")
    import json
    from mavgame.cli import main
    rc = main(["train", "--game", "hex", "--board-size", "4", "--data", str(tmp_path / "d"), "--games", "6",
               "--epsilon", "0.5", "--val-fraction", "0.25", "--out", str(tmp_path / "run"), "--preset", "tiny",
               "--steps", "3", "--batch-size", "4", "--warmup", "1", "--eval-every", "3", "--gen-eval-positions", "2",
               "--final-eval-positions", "3", "--max-seq-len", "256", "--ood-games", "3", "--threads", "1",
               "--workers", "0", "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out.strip().splitlines()
    stats, report = json.loads(out[0])["data"], json.loads(out[-1])
    assert stats["game"] == "hex" and stats["annotator"] == DEFAULT_ANNOTATOR_OPTIONS["hex"]
    assert report["train"]["step"] == 3 and report["heldout"]["positions"] == 3
    for root in (tmp_path / "d", tmp_path / "run" / "ood"):
        recs = records(root)
        assert recs
        check_links(recs, 4)
    with pytest.raises(SystemExit, match="19"):
        main(["train", "--game", "hex", "--board-size", "25", "--data", str(tmp_path / "bad"), "--games", "1",
              "--generate-only", "--no-progress"])
