"""Training: schedule, exact resume, and a tiny Connect Four MAV end to end (data, training, export,
inference on both backends, parsing, metrics, agents, MAV-MCTS)."""
import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mavgame  # noqa: E402
from mavgame import mav  # noqa: E402
from mavgame.datasets import PositionStore, PositionWriter, generate_positions  # noqa: E402
from mavgame.model.inference import MAVModel, evaluate_records, trainer_metrics  # noqa: E402
from mavgame.model.train import Trainer, train  # noqa: E402
from mavgame.model.train_config import TrainConfig, lr_at


@pytest.fixture(autouse=True)
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_lr_schedule():
    cfg = TrainConfig(data="x", out="y", steps=110, lr=1e-3, warmup=10, min_lr_ratio=0.1)
    assert lr_at(0, cfg) == pytest.approx(1e-4)
    assert lr_at(9, cfg) == pytest.approx(1e-3)
    assert lr_at(10, cfg) == pytest.approx(1e-3)
    assert lr_at(60, cfg) == pytest.approx(1e-4 + 0.5 * 9e-4)
    assert lr_at(110, cfg) == pytest.approx(1e-4)
    assert all(lr_at(s, cfg) >= lr_at(s + 1, cfg) for s in range(10, 110))


def _toy_set(root, n=200):
    with PositionWriter(root, "tictactoe", shard_size=40, val_fraction=0.1) as w:
        for i in range(n):
            w.add({"state": f"s{i}", "values": {"a": 0.5}, "best": "a", "result": "*"})


def _toy_encoder(recs, seed):
    rng = np.random.default_rng(seed)
    out = []
    for r in recs:
        i = int(r["state"][1:])
        L = int(rng.integers(3, 9))
        seq = [1] + [(i * 7 + k) % 20 + 3 for k in range(L)] + [2]
        out.append((seq, [0, 0] + [1] * (len(seq) - 2)))
    return out


TOY_TOK = {"vocab_size": 24, "pad_id": 0, "vocab_version": "toy"}


def _toy_cfg(data, out, **kw):
    d = dict(data=str(data), out=str(out), steps=24, batch_size=8, preset="tiny", warmup=4, lr=3e-3,
             eval_every=8, checkpoint_every=5, log_every=4, progress=False, max_seq_len=32, workers=0)
    d.update(kw)
    return TrainConfig(**d)


@pytest.mark.parametrize("workers", [0, 2])
def test_resume_is_exact(tmp_path, workers):
    _toy_set(tmp_path / "data")
    whole, _ = train(_toy_cfg(tmp_path / "data", tmp_path / "a", workers=workers), _toy_encoder, TOY_TOK,
                     export=False)
    part, _ = train(_toy_cfg(tmp_path / "data", tmp_path / "b", workers=workers), _toy_encoder, TOY_TOK,
                    export=False, stop_after=11)        # interrupted between checkpoints
    assert part.step == 11
    resumed, _ = train(_toy_cfg(tmp_path / "data", tmp_path / "b", workers=workers), _toy_encoder, TOY_TOK,
                       export=False)
    assert resumed.step == 24
    a, b = whole.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    sa, sb = whole.opt.state_dict()["state"], resumed.opt.state_dict()["state"]
    assert all(torch.equal(sa[k]["exp_avg"], sb[k]["exp_avg"]) for k in sa)
    # the log of the resumed run continues the same loss curve
    la = [json.loads(x) for x in (tmp_path / "a" / "log.jsonl").read_text().splitlines()]
    lb = [json.loads(x) for x in (tmp_path / "b" / "log.jsonl").read_text().splitlines()]
    last_a = [r["loss"] for r in la if "loss" in r][-1]
    last_b = [r["loss"] for r in lb if "loss" in r][-1]
    assert last_a == pytest.approx(last_b, rel=1e-6)


def test_resume_after_a_crash_between_checkpoints(tmp_path):
    """A run killed after step 12 (last periodic checkpoint at 10) resumes from 10 and ends bit-identical."""
    _toy_set(tmp_path / "data")
    whole, _ = train(_toy_cfg(tmp_path / "data", tmp_path / "a"), _toy_encoder, TOY_TOK, export=False)

    class Crash(Exception):
        pass

    class Crashing(Trainer):
        def log(self, rec):
            super().log(rec)
            if rec.get("step") == 12 and "loss" in rec:
                raise Crash

    with pytest.raises(Crash):
        Crashing(_toy_cfg(tmp_path / "data", tmp_path / "b"), _toy_encoder, TOY_TOK).run()
    resumed = Trainer(_toy_cfg(tmp_path / "data", tmp_path / "b"), _toy_encoder, TOY_TOK)
    assert resumed.step == 10
    resumed.run()
    a, b = whole.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_ctrl_c_checkpoints_between_steps_and_resumes_exactly(tmp_path):
    """Ctrl-C (SIGINT) mid-run: the loop ends after the step it is in, writes its checkpoint (not only every
    checkpoint_every steps) and raises KeyboardInterrupt saying how to resume; the resumed run is exact."""
    import os
    import signal
    _toy_set(tmp_path / "data")
    whole, _ = train(_toy_cfg(tmp_path / "data", tmp_path / "a"), _toy_encoder, TOY_TOK, export=False)

    class Interrupted(Trainer):
        def log(self, rec):
            super().log(rec)
            if rec.get("step") == 12 and "loss" in rec:
                os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt, match="interrupted at step 1[23].*run the same command to resume"):
        Interrupted(_toy_cfg(tmp_path / "data", tmp_path / "b"), _toy_encoder, TOY_TOK).run()
    resumed = Trainer(_toy_cfg(tmp_path / "data", tmp_path / "b"), _toy_encoder, TOY_TOK)
    assert resumed.step in (12, 13)          # not the periodic checkpoint at 10
    resumed.run()
    a, b = whole.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_logs_and_reports_are_strict_json():
    from mavgame.model.train_config import json_safe
    text = json.dumps(json_safe({"a": float("nan"), "b": [1.0, float("inf")], "c": {"d": -float("inf")}}))
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}")) == \
        {"a": None, "b": [1.0, None], "c": {"d": None}}


def test_resume_refuses_another_recipe(tmp_path):
    _toy_set(tmp_path / "data")
    train(_toy_cfg(tmp_path / "data", tmp_path / "a"), _toy_encoder, TOY_TOK, export=False, stop_after=5)
    with pytest.raises(ValueError, match=r"lr 0.003 in the checkpoint, 0.001 now.*seed 0 in the checkpoint, 7"):
        Trainer(_toy_cfg(tmp_path / "data", tmp_path / "a", lr=1e-3, seed=7), _toy_encoder, TOY_TOK)
    # what does not change the weights may change: threads, evaluation and checkpoint cadence
    tr = Trainer(_toy_cfg(tmp_path / "data", tmp_path / "a", threads=1, eval_every=6, checkpoint_every=7),
                 _toy_encoder, TOY_TOK)
    assert tr.step == 5


def test_grad_accum_matches_big_batch(tmp_path):
    """Two micro-batches of 8 with accumulation step like one batch of 16 over the same examples."""
    _toy_set(tmp_path / "data")
    big = Trainer(_toy_cfg(tmp_path / "data", tmp_path / "big", steps=3, batch_size=16), _toy_encoder, TOY_TOK)
    acc = Trainer(_toy_cfg(tmp_path / "data", tmp_path / "acc", steps=3, batch_size=8, grad_accum=2),
                  _toy_encoder, TOY_TOK)
    # the same examples either way: batches of 8 (j = 2s, 2s+1) cover the positions of the batch of 16
    # (j = s); randomisation seeds differ per batch, so use an encoder without randomisation
    def enc(recs, seed):
        return [([1] + [(int(r["state"][1:]) + k) % 20 + 3 for k in range(3 + int(r["state"][1:]) % 5)],
                 [0] + [1] * (3 + int(r["state"][1:]) % 5)) for r in recs]
    big.encoder = acc.encoder = enc
    big.run()
    acc.run()
    a, b = big.model.state_dict(), acc.model.state_dict()
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=2e-6, rtol=1e-4)


# ---- Connect Four end to end ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def c4_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("c4")
    stats = generate_positions("connect_four", root / "data", 10, seed=3, epsilon=0.2, workers=1,
                               val_fraction=0.25, random_opening=12, progress=False,
                               annotator_options={"max_seconds": 0.2})
    torch.set_num_threads(1)
    cfg = TrainConfig(data=str(root / "data"), out=str(root / "run"), steps=150, batch_size=16, preset="tiny",
                      model=dict(d_model=64, d_ff=128, n_heads=4), warmup=10, lr=1e-2, eval_every=150,
                      checkpoint_every=150, log_every=10, progress=False, max_seq_len=256, gen_eval_positions=8,
                      encoder_options={"p_top_all": 1.0})
    tr, last = train(cfg, evaluate_fn=trainer_metrics)
    return root, stats, tr, last


def test_c4_data_statistics(c4_run):
    root, stats, _, _ = c4_run
    assert stats["games"] == 10 and sum(stats["results"].values()) == 10
    train_set, val_set = PositionStore(root / "data" / "train"), PositionStore(root / "data" / "val")
    assert len(train_set) == stats["train"] and len(val_set) == stats["val"] > 0
    assert stats["positions_unique"] == stats["train"] + stats["val"]
    assert not {r["state"] for r in train_set} & {r["state"] for r in val_set}
    solver = mavgame._core.C4Solver(tt_log2=16)
    for r in list(train_set)[:15]:
        st = mavgame.State("connect_four", r["state"])
        assert r["ply"] >= 12
        if not r["values"]:
            assert st.is_terminal() and r["result"] == st.result()
            continue
        assert sorted(r["values"]) == sorted(st.legal_moves)
        score, scores, _, _ = solver.solve(st)
        for mv, v in r["values"].items():
            s = scores[st.action_from_str(mv)]
            assert v == (1.0 if s > 0 else 0.0 if s < 0 else 0.5)
        assert r["values"][r["best"]] == max(r["values"].values())
        if r["prev_state"] is not None:
            prev = mavgame.State("connect_four", r["prev_state"])
            prev.push(r["prev_action"])
            assert prev.text() == r["state"]


def test_c4_tiny_model_learns_and_outputs_parse(c4_run):
    root, _, tr, last = c4_run
    log = [json.loads(x) for x in (root / "run" / "log.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in log if "loss" in r]
    assert losses[0] > 3.0 and losses[-1] < 0.6 * losses[0] and losses[-1] < 1.0
    assert last["val_token_acc"] > 0.7
    model = MAVModel.load(root / "run" / "model.safetensors", backend="numpy")
    assert model.game == "connect_four" and model.info["steps"] == 150
    recs = list(PositionStore(root / "data" / "val"))[:12]
    m = evaluate_records(model, "connect_four", recs)
    assert m["examples"] == m["prompts"] >= 12
    assert m["parsed_ok_rate"] > 0          # some outputs are complete, valid MAV text already
    assert m["top_listed"] > 0 and m["top_all_precision"] > 0.3
    # the torch backend gives the same outputs as NumPy
    mt = MAVModel.load(root / "run" / "model.safetensors", backend="torch")
    st = mavgame.State("connect_four", recs[0]["state"])
    p = mav.prompt(st)
    a, b = model.generate([p])[0], mt.generate([p])[0]
    assert a.ids == b.ids and a.value_dists.keys() == b.value_dists.keys()
    for mv in a.value_dists:
        np.testing.assert_allclose(a.value_dists[mv], b.value_dists[mv], atol=1e-4)
        assert a.value_dists[mv].sum() == pytest.approx(1.0, abs=1e-5)
    # mean and max scoring are the expectation and the mode's midpoint of the kept distributions
    if a.value_dists:
        mv, d = next(iter(a.value_dists.items()))
        mids = (np.arange(64) + 0.5) / 64
        assert a.values("mean")[mv] == pytest.approx(float(d @ mids), abs=1e-6)
        assert a.values("max")[mv] == pytest.approx(mids[int(np.argmax(d))])


def test_c4_agents_play_legal_moves(c4_run):
    from mavgame.agents.mav import MAVGreedyAgent, mav_mcts_agent
    root, _, _, _ = c4_run
    model = MAVModel.load(root / "run" / "model.safetensors", backend="numpy")
    recs = list(PositionStore(root / "data" / "val"))
    states = [mavgame.State("connect_four", r["state"]) for r in recs if r["values"]][:4]
    greedy = MAVGreedyAgent(model, seed=0)
    greedy.setup("connect_four", seed=1)
    for st in states:
        before = st.text()
        mv = greedy.act(st)
        assert st.is_legal(mv) and st.text() == before
    assert greedy.stats["moves"] == len(states)
    for tracking in (False, True):
        agent = mav_mcts_agent(model, sims=12, batch_size=4, state_tracking=tracking)
        agent.setup("connect_four", seed=2)
        mv = agent.act(states[0])
        assert states[0].is_legal(mv)
        agent._mcts.check()
        assert agent.evaluator.evaluations >= 1


def test_mav_evaluator_cache_is_exact(c4_run):
    """Cached outputs (by prompt) change nothing in the search, and a repeated search generates nothing."""
    from mavgame.search.mcts import MCTS
    from mavgame.agents.mav import MAVEvaluator, mav_mcts_agent
    root, _, _, _ = c4_run
    model = MAVModel.load(root / "run" / "model.safetensors", backend="numpy")
    recs = [r for r in PositionStore(root / "data" / "val") if r["values"]]
    st = mavgame.State("connect_four", recs[0]["state"])
    cached = MAVEvaluator(model, batch_size=4)
    plain = MAVEvaluator(model, batch_size=4, cache_size=0)
    r1 = MCTS(cached, num_simulations=16, batch_size=4, seed=5).search(st)
    r2 = MCTS(plain, num_simulations=16, batch_size=4, seed=5).search(st)
    assert r1.best_move == r2.best_move and r1.visits.tolist() == r2.visits.tolist()
    first = cached.generated
    assert first + cached.cache_hits == cached.evaluations and len(cached._cache) == first
    assert plain.generated == plain.evaluations and not plain._cache
    r3 = MCTS(cached, num_simulations=16, batch_size=4, seed=5).search(st)
    assert r3.visits.tolist() == r1.visits.tolist()
    assert cached.generated == first and cached.cache_hits >= first
    small = MAVEvaluator(model, batch_size=4, cache_size=3)
    assert MCTS(small, num_simulations=16, batch_size=4, seed=5).search(st).visits.tolist() == r1.visits.tolist()
    assert len(small._cache) <= 3
    with pytest.raises(ValueError, match="cache_size"):
        mav_mcts_agent(model, sims=4, cache_size=-1)


def test_p_after_default_is_the_papers_for_new_runs_only(tmp_path):
    """--p-after: absent, a new run gets the paper's state after the best action (PAPER_P_AFTER), a resumed
    run keeps what it started with (runs made before that default: none); 0 turns it off (issue 13)."""
    import argparse
    from mavgame.cli.train import PAPER_P_AFTER, add_arguments, example_options
    from mavgame.model.train_config import saved_train_config
    p = argparse.ArgumentParser()
    add_arguments(p)

    def opts(argv, saved=None):
        return example_options(p.parse_args(["--data", str(tmp_path), *argv]), saved)
    assert PAPER_P_AFTER > 0
    ktp = {"k_terminal_prev": 1}                                     # new runs: see the test below
    assert opts([]) == {"p_after": PAPER_P_AFTER, **ktp}
    assert opts([], saved={}) == {}                                   # an old run resumes unchanged
    assert opts([], saved={"p_after": 0.3, "p_top_all": 0.8}) == {"p_after": 0.3}
    assert opts(["--p-after", "0"]) == ktp
    assert opts(["--p-after", "0.2"], saved={}) == {"p_after": 0.2}  # the trainer then refuses the other recipe
    assert opts(["--example-option", "p_after=0.1"]) == {"p_after": 0.1, **ktp}
    assert saved_train_config(tmp_path) is None
    # the builder does draw the state after the best action at that rate
    s = mavgame.ConnectFour.from_moves("4455")
    texts = mav.ExampleBuilder(seed=3, p_after=PAPER_P_AFTER).build([(s, {m: 0.5 for m in s.legal_moves})] * 200,
                                                                  return_text=True).texts
    n = sum("%best_action %state </mav>" in prompt for prompt, _ in texts)
    assert 60 < n < 140, n


def test_k_terminal_prev_is_on_for_new_runs_only(tmp_path):
    """A new run draws a finished position's %top_k range from its predecessor's (k_terminal_prev, issue 13),
    unless --example-option k_terminal_prev=0; a resumed run keeps what it started with (absent: off), so the
    recipes of older runs, which never recorded it, resume unchanged."""
    import argparse
    from mavgame.cli.train import NEW_RUN_K_TERMINAL_PREV, add_arguments, example_options
    p = argparse.ArgumentParser()
    add_arguments(p)

    def opts(argv, saved=None):
        return example_options(p.parse_args(["--data", str(tmp_path), "--p-after", "0", *argv]), saved)
    assert NEW_RUN_K_TERMINAL_PREV == 1
    assert opts([]) == {"k_terminal_prev": 1}
    assert opts(["--example-option", "k_terminal_prev=0"]) == {}
    assert opts([], saved={}) == {} and opts([], saved={"p_top_all": 0.8}) == {}
    assert opts([], saved={"k_terminal_prev": 1}) == {"k_terminal_prev": 1}
    assert opts(["--example-option", "k_terminal_prev=1"], saved={}) == {"k_terminal_prev": 1}  # then refused
    # what it changes: a finished position's k ranges over its predecessor's moves, not 1..k_slack
    fin = mavgame.ConnectFour.from_moves("1212121")
    prev = mavgame.ConnectFour.from_moves("121212")
    def ks(options):
        out = set()
        for seed in range(40):
            b = mav.ExampleBuilder(seed=seed, p_top_all=0.0, p_transition=1.0, **options)
            item = {"state": fin, "annotation": None, "prev_state": prev, "prev_action": "1"}
            for prompt, _ in b.build([item] * 5, return_text=True).texts:
                out.add(int(prompt.split("%top_")[1].split()[0]))
        return out
    assert max(ks(opts([]))) > 4 and max(ks(opts(["--example-option", "k_terminal_prev=0"]))) <= 4


def test_train_command_line(tmp_path, capsys):
    from mavgame.cli import main
    rc = main(["train", "--game", "tictactoe", "--data", str(tmp_path / "d"), "--games", "40",
               "--epsilon", "0.5", "--val-fraction", "0.2", "--out", str(tmp_path / "run"), "--preset", "tiny",
               "--steps", "6", "--batch-size", "8", "--warmup", "2", "--eval-every", "3",
               "--gen-eval-positions", "2", "--final-eval-positions", "4", "--max-seq-len", "128", "--ood-games", "5",
               "--threads", "1", "--workers", "0", "--example-option", "p_top_all=0.8",
               "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out.strip().splitlines()
    data_stats = json.loads(out[0])["data"]
    report = json.loads(out[-1])
    assert data_stats["games"] == 40 and data_stats["positions_unique"] > 40
    assert report["train"]["step"] == 6 and "heldout" in report
    assert report["heldout"]["prompts"] >= 4
    ood = report["ood"]
    assert (tmp_path / "run" / "ood" / "train" / "manifest.json").exists()
    assert ood["set"]["generated"] == ood["set"]["in_excluded"] + ood["set"]["positions"]
    assert ood["positions"] == min(4, ood["set"]["positions"])
    for k in ("best_action_legal", "top_all_precision", "top_all_recall", "next_state_accuracy"):
        # JSON has no NaN: an undefined rate (nothing listed) is null
        assert (ood[k] is not None and 0.0 <= ood[k] <= 1.0) or (k == "top_all_precision" and ood["top_listed"] == 0 and
                                                                 ood[k] is None), (k, ood)
    model = MAVModel.load(report["exported"])
    assert model.game == "tictactoe" and model.info["metrics"]["heldout"]["positions"] == 4
    # no --p-after: a new run has the paper's state after the best action (issue 13)
    assert model.info["train_config"]["encoder_options"] == {"p_after": 0.5, "p_top_all": 0.8, "k_terminal_prev": 1}
    # resuming with another p_after is another recipe: refused, naming it
    with pytest.raises(SystemExit, match="encoder_options"):
        main(["train", "--data", str(tmp_path / "d"), "--out", str(tmp_path / "run"), "--preset", "tiny",
              "--steps", "6", "--batch-size", "8", "--warmup", "2", "--max-seq-len", "128", "--p-after", "0",
              "--example-option", "p_top_all=0.8", "--no-progress"])
    with pytest.raises(SystemExit, match="no position set"):
        main(["train", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "r2")])
    for bad, match in ((["--p-after", "1.5"], "p_after must be a probability"),
                       (["--example-option", "p_aftr=0.2"], "p_aftr"),
                       (["--p-after", "0.2", "--example-option", "p_after=0.3"], "p_after given twice")):
        with pytest.raises(SystemExit, match=match):
            main(["train", "--data", str(tmp_path / "d"), "--out", str(tmp_path / "r3"), *bad])


def test_c4_agents_pickle(c4_run):
    """League workers receive agents by pickling: the model travels with them."""
    import pickle

    from mavgame.agents.mav import MAVGreedyAgent, mav_mcts_agent
    root, _, _, _ = c4_run
    model = MAVModel.load(root / "run" / "model.safetensors", backend="numpy")
    st = mavgame.State("connect_four", next(r for r in PositionStore(root / "data" / "val") if r["values"])["state"])
    for agent in (MAVGreedyAgent(model, seed=3), mav_mcts_agent(model, sims=6, batch_size=3)):
        agent.setup("connect_four", seed=1)
        a = agent.act(st)
        clone = pickle.loads(pickle.dumps(agent))
        clone.setup("connect_four", seed=1)
        assert clone.act(st) == a


def test_bf16_autocast_on_cpu_trains(tmp_path):
    _toy_set(tmp_path / "data")
    tr, last = train(_toy_cfg(tmp_path / "data", tmp_path / "run", steps=8, precision="bf16", eval_every=8),
                     _toy_encoder, TOY_TOK, export=False)
    assert tr.precision == "bf16" and math.isfinite(last["loss"]) and math.isfinite(last["val_loss"])
    with pytest.raises(ValueError, match="fp16 training needs a GPU"):
        Trainer(_toy_cfg(tmp_path / "data", tmp_path / "run2", precision="fp16", device="cpu"), _toy_encoder,
                TOY_TOK)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("precision", ["auto", "bf16", "fp16"])
def test_cuda_mixed_precision_trains_and_resumes_exactly(tmp_path, precision):
    """On a GPU: autocast (bf16 where supported, else fp16 with loss scaling) lowers the loss, and a run
    interrupted at a checkpoint resumes to the same weights (the scaler state included)."""
    if precision == "bf16" and not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bf16")
    _toy_set(tmp_path / "data")
    kw = dict(device="cuda", precision=precision, steps=24)
    whole, last = train(_toy_cfg(tmp_path / "data", tmp_path / "a", **kw), _toy_encoder, TOY_TOK, export=False)
    assert whole.precision in ("bf16", "fp16") and whole.device.type == "cuda"
    log = [json.loads(x) for x in (tmp_path / "a" / "log.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in log if "loss" in r]
    assert losses[-1] < losses[0]
    train(_toy_cfg(tmp_path / "data", tmp_path / "b", **kw), _toy_encoder, TOY_TOK, export=False, stop_after=10)
    resumed, _ = train(_toy_cfg(tmp_path / "data", tmp_path / "b", **kw), _toy_encoder, TOY_TOK, export=False)
    a, b = whole.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_outcome_weight_marks_the_finished_or_not_token(tmp_path):
    """--outcome-weight W: in every example exactly one target token carries mask value W, the first answer
    token after %top_N (or %best_action): 'invalid' in a finished position, a move otherwise; the loss is
    the weighted token mean; the command line passes it as an encoder option only when it is not 1."""
    import argparse
    import torch
    from mavgame.cli.train import add_arguments, example_options
    from mavgame.datasets.dataset import mav_encoder
    from mavgame.model.train import masked_loss
    from mavgame.model.config import MAVConfig
    from mavgame.model.transformer import MAVTransformer
    fin = mavgame.ConnectFour.from_moves("1212121")          # x has four in column 1
    assert fin.is_terminal()
    live = mavgame.ConnectFour.from_moves("4455")
    recs = [{"state": fin.text(), "values": {}, "best": None, "result": "1-0", "ply": 7},
            {"state": live.text(), "values": {str(m): 0.5 for m in live.legal_moves}, "best": "4", "result": "*",
             "ply": 4}]
    enc, info = mav_encoder("connect_four", outcome_weight=9, p_top_all=0.5, p_best=0.5)
    plain, _ = mav_encoder("connect_four", p_top_all=0.5, p_best=0.5)
    tok = enc.tokenizer()
    moves = {str(c) for c in range(1, 8)}
    for seed in range(30):
        ex, ex1 = enc(recs * 3, seed), plain(recs * 3, seed)
        for i, ((t, m), (t1, m1)) in enumerate(zip(ex, ex1)):
            assert np.array_equal(t, t1) and np.array_equal(m.clip(max=1), m1)   # the same example
            heavy = np.flatnonzero(m == 9)
            assert len(heavy) == 1 and set(np.unique(m)) <= {0, 1, 9}
            word = tok.id_to_token(int(t[heavy[0]]))
            assert word == "invalid" if i % 2 == 0 else word in moves, (i, word)
    with pytest.raises(ValueError, match="outcome_weight"):
        mav_encoder("connect_four", outcome_weight=0)
    # the weighted loss is the weighted mean of the per-token losses
    torch.manual_seed(0)
    cfg = MAVConfig(vocab_size=info["vocab_size"], d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32,
                    max_seq_len=256)
    model = MAVTransformer(cfg)
    (t, m), = enc(recs[:1], 0)
    toks = torch.tensor(np.asarray(t, np.int64))[None]
    mask = torch.tensor(m)[None]
    with torch.no_grad():
        loss, n, _ = masked_loss(model, toks, mask)
        logits = model(toks[:, :-1])[0]
        plain_loss, n1, _ = masked_loss(model, toks, mask.clamp(max=1))
    ce = torch.nn.functional.cross_entropy(logits, toks[0, 1:], reduction="none")
    w = mask[0, 1:].float()
    assert n == int(w.sum()) and abs(float(loss) - float((ce * w).sum() / w.sum())) < 1e-5
    assert n1 == int((w > 0).sum()) and abs(float(plain_loss) - float(ce[w > 0].mean())) < 1e-5
    # the command line
    p = argparse.ArgumentParser()
    add_arguments(p)
    assert "outcome_weight" not in example_options(p.parse_args(["--data", str(tmp_path), "--p-after", "0"]))
    assert example_options(p.parse_args(["--data", str(tmp_path), "--p-after", "0", "--outcome-weight", "8",
                                         "--example-option", "k_terminal_prev=0"])) == {"outcome_weight": 8}
    with pytest.raises(SystemExit, match="--outcome-weight 0"):
        example_options(p.parse_args(["--data", str(tmp_path), "--outcome-weight", "0"]))
    with pytest.raises(SystemExit, match="use --outcome-weight"):
        example_options(p.parse_args(["--data", str(tmp_path), "--example-option", "outcome_weight=3"]))
