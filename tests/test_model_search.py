"""MAV-IS: search-tree data, trace examples, the MAV/trace mixture, fine-tuning start, the mav_is agent."""
import json
from types import SimpleNamespace

import numpy as np
import pytest

from mavgame import _core
from mavgame.agents import make_agent
from mavgame.mav.search_trace import build_search_tree, parse_trace, write_trace
from mavgame.datasets import PositionStore, PositionWriter, make_annotator
from mavgame.model.inference import shipped_model_path
from mavgame.datasets.search_data import (MixedStore, MixtureEncoder, TraceEncoder, generate_search_trees,
                                       parse_shapes, record_tree, tree_record)


@pytest.fixture(scope="module")
def c4_sets(tmp_path_factory):
    """A small solver-annotated Connect Four position set and search trees of depth 2, breadth 3 from it."""
    d = tmp_path_factory.mktemp("c4search")
    ann = make_annotator("connect_four", {"max_nodes": 200_000})
    rng = np.random.default_rng(0)
    with PositionWriter(d / "pos", "connect_four", val_fraction=0.3) as w:
        for _ in range(3):
            s = _core.State("connect_four")
            for _ in range(12):
                s.push(int(rng.choice(s.legal_actions())))
            while not s.is_terminal():
                a = ann(s)
                if a is None:
                    s.push(int(rng.choice(s.legal_actions())))
                    continue
                w.add({"state": s.text(), "values": a[0], "best": a[1]})
                s.push(a[1])
    stats = generate_search_trees(d / "pos", d / "trees", 16, depth=2, breadth=3, progress=False,
                                  annotator_options={"max_nodes": 200_000}, val_fraction=0.3)
    assert stats["trees"] == 16 and stats["nodes"] > 16
    return d


def test_tree_records_round_trip(c4_sets):
    store = PositionStore(c4_sets / "trees" / "train")
    for rec in store:
        tree = record_tree("connect_four", rec)
        assert tree_record(tree) == rec
        assert rec["values"] and rec["state"] == tree.root.text()
        for b, d in ((2, 1), (3, 2)):
            tr = write_trace(tree, b, d)
            res = parse_trace(tr.text, tree.root, choice=tr.choice)
            assert res.shape_ok and res.final_minimax and res.values_consistent
    # the same roots again: the set is reused, not rewritten
    again = generate_search_trees(c4_sets / "pos", c4_sets / "trees", 99, progress=False)
    assert again["trees"] == 16


def test_trace_encoder_shapes_and_fallback(c4_sets):
    store = PositionStore(c4_sets / "trees" / "train")
    recs = [store.record(i) for i in range(min(6, len(store)))]
    enc = TraceEncoder("connect_four", parse_shapes("2x1,3x2"), 2000)
    ex = enc(recs, 3)
    assert [len(t) for t, _ in ex] == [len(t) for t, _ in enc(recs, 3)]
    assert all((a[0] == b[0]).all() for a, b in zip(ex, enc(recs, 3)))
    tok = enc.tokenizer()
    for (ids, mask), rec in zip(ex, recs):
        text = tok.decode(ids[1:-1])
        assert text.startswith("Minimax breadth=") and ids[0] == tok.bos_id and ids[-1] == tok.eos_id
        assert mask[0] == 0 and mask[-1] == 1 and tok.decode(ids[mask.astype(bool)][:-1]).startswith(
            "Evaluation for node: <root>\n")
    # a context too short for 3x2 falls back to 2x1; too short for anything is an error naming the root
    short = TraceEncoder("connect_four", parse_shapes("3x2,2x1"), 800)
    for ids, _ in short(recs, 1):
        assert len(ids) <= 800 and tok.decode(ids[1:30]).startswith("Minimax breadth=2 depth=1")
    with pytest.raises(ValueError, match="does not fit 100 tokens"):
        TraceEncoder("connect_four", [(2, 1)], 100)(recs, 0)
    with pytest.raises(ValueError, match="BREADTHxDEPTH"):
        parse_shapes("3-1")
    with pytest.raises(ValueError, match="breadth must be"):
        parse_shapes("9x1")


def test_mixed_store_share_and_mixture_encoder(c4_sets):
    mav = PositionStore(c4_sets / "pos" / "train")
    trees = PositionStore(c4_sets / "trees" / "train")
    m = MixedStore(mav, trees, 0.4)
    kinds = ["tree" in m.record(i) for i in range(len(m))]
    assert len(m) >= len(mav) / 0.6 and abs(np.mean(kinds) - 0.4) < 0.02
    assert all(kinds[i:i + 5].count(True) == 2 for i in range(0, len(m) - 5, 5))
    with pytest.raises(ValueError, match="search_fraction"):
        MixedStore(mav, trees, 1.0)
    from mavgame.datasets import mav_encoder
    enc = MixtureEncoder(mav_encoder("connect_four")[0], TraceEncoder("connect_four", [(2, 1)], 1024))
    recs = [m.record(i) for i in range(10)]
    ex = enc(recs, 0)
    tok = enc.trace.tokenizer()
    for (ids, _), rec in zip(ex, recs):
        assert tok.decode(ids[1:10]).startswith("Minimax" if "tree" in rec else "<mav")


@pytest.fixture()
def torch_or_skip():
    return pytest.importorskip("torch")


@pytest.mark.slow
def test_fine_tune_starts_from_the_exported_model_with_a_longer_context(c4_sets, tmp_path, torch_or_skip):
    torch = torch_or_skip
    from mavgame.model.export import load_exported
    from mavgame.model.train import Trainer
    from mavgame.model.train_config import TrainConfig
    shipped = str(shipped_model_path())
    cfg = TrainConfig(data=str(c4_sets / "pos"), out=str(tmp_path / "run"), steps=2, batch_size=4, lr=1e-4,
                      warmup=0, max_seq_len=1024, search_data=str(c4_sets / "trees"), search_fraction=0.5,
                      search_shapes="2x2,3x1", init_from=shipped, eval_every=100, checkpoint_every=1,
                      gen_eval_positions=0, progress=False)
    tr = Trainer(cfg)
    weights, mcfg, _, _ = load_exported(shipped)
    assert tr.model_cfg.max_seq_len == 1024 and tr.model_cfg.d_model == mcfg.d_model
    # the shipped model is vocabulary v1; with search data the run is v2: v1's rows stay, 9 rows are added
    assert tr.cfg.vocab_version == 2 and tr.model_cfg.vocab_size == mcfg.vocab_size + 9
    assert torch.equal(tr.model.embed.weight.detach()[:mcfg.vocab_size], torch.from_numpy(weights["embed.weight"]))
    b = tr._loader().dataset.make_batch(0)
    assert b["tokens"].shape[1] > 512  # trace examples longer than the old context (2x2: some 830 tokens in v2)
    tr.run()
    assert tr.step == 2
    # the recipe is fixed: another mixture share is refused on resume
    with pytest.raises(ValueError, match="search_fraction"):
        Trainer(TrainConfig(**{**cfg.__dict__, "search_fraction": 0.3}))


def _tiny_v1_model(path, tie=False):
    """A tiny random model of vocabulary v1, exported like a trained one."""
    from mavgame import mav
    from mavgame.model.config import MAVConfig
    from mavgame.model.export import expected_shapes, export_model
    from mavgame.mav import vocab_fingerprint
    tok = mav.Tokenizer(1)
    cfg = MAVConfig(vocab_size=tok.size, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32, max_seq_len=256,
                    tie_embeddings=tie, line_pos=8, newline_id=tok.token_to_id("\n"))
    rng = np.random.default_rng(1)
    w = {k: rng.normal(0, 0.3, size=sh).astype(np.float32) for k, sh in expected_shapes(cfg).items()}
    export_model(path, w, cfg, "1", info={"game": "connect_four", "vocab_fingerprint": vocab_fingerprint(tok)})
    return w, cfg


def test_fine_tune_extends_a_v1_model_to_v2(c4_sets, tmp_path, torch_or_skip):
    """A v1 model fine-tuned with search data becomes v2: embedding and output rows for the 9 trace phrases
    (the mean of the rows of the characters that spell them), v1's rows kept; the export loads with v2 in both
    backends, which agree; MAV-only training stays v1; a v2 model is not fine-tuned back into v1."""
    torch = torch_or_skip
    from mavgame import mav
    from mavgame.model.inference import MAVModel, native_available
    from mavgame.model.train import Trainer
    from mavgame.model.train_config import TrainConfig
    v1_path = tmp_path / "v1.safetensors"
    w, mcfg = _tiny_v1_model(v1_path)
    tok1, tok2 = mav.Tokenizer(1), mav.Tokenizer(2)
    cfg = TrainConfig(data=str(c4_sets / "pos"), out=str(tmp_path / "run"), steps=3, batch_size=4, lr=1e-3,
                      warmup=0, max_seq_len=512, search_data=str(c4_sets / "trees"), search_fraction=0.5,
                      search_shapes="2x1", init_from=str(v1_path), eval_every=100, checkpoint_every=100,
                      gen_eval_positions=0, progress=False, threads=1)
    tr = Trainer(cfg)
    assert tr.cfg.vocab_version == 2 and tr.model_cfg.vocab_size == tok2.size and tr.tok["vocab_version"] == "2"
    for name, mod in (("embed.weight", tr.model.embed), ("lm_head.weight", tr.model.lm_head)):
        got = mod.weight.detach().numpy()
        np.testing.assert_array_equal(got[:tok1.size], w[name])
        for i in range(tok1.size, tok2.size):
            spell = tok1.encode(tok2.vocab[i])
            assert len(spell) == len(tok2.vocab[i])
            np.testing.assert_allclose(got[i], w[name][spell].mean(axis=0), rtol=1e-6, atol=1e-7)
    batch = tr._loader().dataset.make_batch(0)
    assert (batch["tokens"] >= tok1.size).any()  # the trace examples use the phrase tokens
    tr.run()
    out = tr.export(str(tmp_path / "v2.safetensors"))
    m = MAVModel.load(out, backend="torch")
    assert m.tokenizer.version == 2 and m.cfg.vocab_size == tok2.size
    tree = record_tree("connect_four", PositionStore(c4_sets / "trees" / "val").record(0))
    text = write_trace(tree, 2, 1).text
    ids = m.tokenizer.encode(text)
    assert m.tokenizer.decode(ids) == text and len(ids) < 0.7 * len(tok1.encode(text))
    if native_available():
        n = MAVModel.load(out, backend="native")
        assert n.tokenizer.version == 2
        seq = [tok2.bos_id] + ids.tolist()[:200]
        with torch.no_grad():
            want = m.backend.model(torch.tensor([seq]))[0, -1].numpy()
        np.testing.assert_allclose(n.backend.logits(seq), want, rtol=1e-4, atol=1e-4)
        prompt = write_trace(tree, 2, 1).prompt
        a, = m.generate([prompt], max_new_tokens=8, decoding="greedy")
        b, = n.generate([prompt], max_new_tokens=8, decoding="greedy")
        assert a.ids == b.ids
    # a v2 model cannot go back to v1; MAV-only training stays v1
    with pytest.raises(ValueError, match="uses MAV vocabulary v2: it cannot be fine-tuned in v1"):
        Trainer(TrainConfig(**{**cfg.__dict__, "out": str(tmp_path / "back"), "init_from": str(out),
                               "vocab_version": 1}))
    mav_only = Trainer(TrainConfig(data=str(c4_sets / "pos"), out=str(tmp_path / "mav"), steps=1, batch_size=4,
                                   max_seq_len=256, init_from=str(v1_path), gen_eval_positions=0, progress=False))
    assert mav_only.cfg.vocab_version == 1 and mav_only.model_cfg.vocab_size == tok1.size


class _FakeModel:
    """Answers each trace prompt with the true trace of a solver-annotated tree (a perfect MAV-IS)."""

    def __init__(self, traces):
        self.traces = traces
        self.game = "connect_four"
        self.calls = 0
        from mavgame.mav import Tokenizer
        self.tokenizer = Tokenizer()

    def generate(self, prompts, batch_size=32, max_new_tokens=0):
        self.calls += len(prompts)
        return [SimpleNamespace(text=self.traces[p], ids=list(range(len(self.traces[p]) // 3))) for p in prompts]


def test_mav_is_agent_plays_the_traced_move_and_falls_back(c4_sets):
    from mavgame.agents.mav import MAVISAgent
    from mavgame.model.mav_is import evaluate_trace_records
    store = PositionStore(c4_sets / "trees" / "train")
    recs = list(store)[:4]
    trees = [record_tree("connect_four", r) for r in recs]
    traces = {}
    for t in trees:
        for b, d in ((2, 1), (3, 2)):
            tr = write_trace(t, b, d)
            traces[tr.prompt] = tr.target
    agent = make_agent("mav_is:breadth=3,depth=2")
    assert isinstance(agent, MAVISAgent) and agent.name == "mav-is-b3d2"
    agent.model = _FakeModel(traces)
    agent.setup("connect_four", seed=1)
    for t in trees:
        mv = agent.act(t.root)
        assert t.root.parse_move(mv) in write_trace(t, 3, 2).choice
    assert agent.stats["from_trace"] == len(trees) and agent.stats["fallback"] == 0
    assert agent.stats["shape_ok"] == len(trees)
    fake = _FakeModel(traces)
    rep = evaluate_trace_records(fake, "connect_four", recs, [(2, 1), (3, 2), (2, 1), (3, 2)])  # repeats: once
    assert rep["2x1"]["shape_ok"] == 1.0 and rep["3x2"]["final_minimax"] == 1.0 and rep["all"]["traces"] == 8
    assert fake.calls == 8
    # exact values everywhere: minimax over the top moves is a best move at the root, at every shape
    assert rep["2x1"]["final_optimal"] == rep["3x2"]["final_optimal"] == rep["3x2"]["mean_choice_optimal"] == 1.0
    # one trace that plays a worse (legal) move than the one it found: 3 of 4 optimal
    worse = dict(traces)
    for t in trees:
        _p, _a, acts, vals, _b = t.nodes[0]
        bad = [a for a, v in zip(acts, vals) if v < max(vals)]
        if bad:
            tr = write_trace(t, 2, 1)
            m = t.root.action_to_str(int(bad[0]))
            head, _, _ = tr.target.rpartition("Playing ")
            worse[tr.prompt] = head + f"Playing {m}!\n"
            break
    rep = evaluate_trace_records(_FakeModel(worse), "connect_four", recs, [(2, 1)])
    assert rep["2x1"]["final_legal"] == 1.0 and rep["2x1"]["final_optimal"] == 0.75
    with pytest.raises(ValueError, match="breadth 1..8"):
        make_agent("mav_is:breadth=0")


def _one_hot_output(target, override=None):
    """A generation of ``target`` whose every value token's distribution is one-hot on the written bucket;
    ``override(k, ids, probs)`` may edit the rows of the k-th node's evaluation."""
    from mavgame.mav import Tokenizer
    from mavgame.model.inference import value_entries
    tok = Tokenizer(2)
    ids = tok.encode(target).tolist()
    bucket = {int(t): k for k, t in enumerate(tok.bucket_ids)}
    steps = [i for i, t in enumerate(ids) if t in bucket]
    probs = np.zeros((len(steps), len(bucket)), np.float32)
    probs[np.arange(len(steps)), [bucket[ids[i]] for i in steps]] = 1.0
    if override is not None:
        ev = tok.token_to_id("Evaluation for node: ")
        starts = [i for i, t in enumerate(ids) if t == ev] + [len(ids)]
        for k in range(len(starts) - 1):
            rows = [j for j, i in enumerate(steps) if starts[k] <= i < starts[k + 1]]
            override(k, rows, probs)
    return SimpleNamespace(text=target, ids=ids, finished=True, value_entries=value_entries(tok, ids, steps, probs))


def test_trace_values_reproduce_the_written_minimax(c4_sets):
    # on true traces with one-hot distributions, the value rules give the trace's own minimax: every node's
    # value is its written bucket's midpoint, and the chosen move is one of the tree's minimax choices
    from mavgame.mav import Tokenizer
    from mavgame.model.inference import bucket_midpoints
    from mavgame.model.mav_is import trace_node_values, trace_value_choice
    nl = Tokenizer(2).token_to_id("\n")
    mid = bucket_midpoints()
    checked = 0
    for r in list(PositionStore(c4_sets / "trees" / "train"))[:6]:
        t = record_tree("connect_four", r)
        for b, d in ((2, 1), (3, 1), (2, 2), (3, 2)):
            tr = write_trace(t, b, d)
            res = parse_trace(tr.prompt + tr.target, t.root, choice=tr.choice)
            assert res.shape_ok and res.final_legal
            out = _one_hot_output(tr.target)
            for scoring in ("mean", "max"):
                vals = trace_node_values(res, out, tr.prompt, nl, scoring)
                for n, v in zip(res.nodes, vals):
                    if not n.terminal:
                        # a bucket's midpoint, or (above a finished child, valued exactly) inside its bucket
                        assert n.value >= 0 and min(int(v * len(mid)), len(mid) - 1) == n.value, (n, v)
                assert trace_value_choice(res, out, tr.prompt, nl, scoring) in tr.choice
                checked += 1
    assert checked == 48
    with pytest.raises(ValueError, match="'median'"):
        trace_node_values(res, out, tr.prompt, nl, "median")


def test_mav_is_agent_decides_from_value_distributions(c4_sets):
    # a 2x1 trace whose written values choose child 1; its distributions say child 1's mover wins (a loss
    # for the root's mover) and child 2's mover loses: decide=mean plays child 2, decide=trace child 1
    from mavgame.agents.mav import MAVISAgent
    for r in PositionStore(c4_sets / "trees" / "train"):
        t = record_tree("connect_four", r)
        tr = write_trace(t, 2, 1)
        res = parse_trace(tr.prompt + tr.target, t.root, choice=tr.choice)
        kids = res.nodes[0].children
        if len(kids) == 2 and not any(res.nodes[c].terminal for c in kids) and res.final_action == res.nodes[kids[0]].action:
            break
    else:
        pytest.skip("no 2x1 trace with two live children choosing its first")

    def skew(k, rows, probs):
        if k in (1, 2):        # child 1: its mover certainly wins; child 2: certainly loses
            probs[rows] = 0.0
            probs[rows, 63 if k == 1 else 0] = 1.0
            probs[rows[:1], 63 if k == 1 else 0] = 0.5   # a spread distribution on its first entry
            probs[rows[:1], 31] = 0.5

    out = _one_hot_output(tr.target, skew)

    class _Model(_FakeModel):
        def generate(self, prompts, batch_size=32, max_new_tokens=0):
            return [out for _ in prompts]

    for decide, want in (("trace", kids[0]), ("mean", kids[1]), ("max", kids[1])):
        agent = make_agent(f"mav_is:breadth=2,depth=1,decide={decide}")
        assert isinstance(agent, MAVISAgent) and agent.decide == decide
        agent.model = _Model({})
        agent.model.trace_form = "short"
        agent.setup("connect_four", seed=1)
        mv = agent.act(t.root)
        got = t.root.parse_move(mv) if isinstance(mv, str) else mv
        assert got == res.nodes[want].action, (decide, mv)
        assert agent.stats["overruled"] == (decide != "trace") and agent.stats["from_trace"] == 1
    with pytest.raises(ValueError, match="decide must be one of"):
        make_agent("mav_is:decide=vote")


@pytest.mark.slow
def test_mav_is_agent_falls_back_on_an_unusable_trace(c4_sets):
    # the shipped MAV (never trained on traces; not the shipped MAV-IS) cannot write a usable trace
    agent = make_agent(f"mav_is:breadth=2,depth=1,model={shipped_model_path('connect_four')}")
    agent.setup("connect_four", seed=0)
    root = record_tree("connect_four", PositionStore(c4_sets / "trees" / "train").record(0)).root
    mv = agent.act(root)
    assert mv in root.legal_moves and agent.stats["fallback"] == 1 and agent.stats["from_trace"] == 0
    assert agent.last is not None and not agent.last.final_legal


def test_child_state_errors_name_what_a_wrong_child_state_is(c4_sets):
    # traces of 2x1 whose first child's %state is the root's (the prompt's) line (two trees: parent_copy),
    # whose second child's is the first child's line (one tree: previous_copy) or the root after three moves
    # (one tree: other, a valid board three stones off the root); the true traces: all right
    from mavgame.mav import state_text as mav_state_text
    from mavgame.model.mav_is import CHILD_STATE_KINDS, child_state_errors, evaluate_trace_records
    recs = list(PositionStore(c4_sets / "trees" / "train"))[:4]
    trees = [record_tree("connect_four", r) for r in recs]
    true, bad = {}, {}
    for k, t in enumerate(trees):
        tr = write_trace(t, 2, 1)
        true[tr.prompt] = tr.target
        root_line = [ln for ln in tr.prompt.splitlines() if ln.startswith("[%state")][0]
        lines = tr.target.splitlines()
        child = [i for i, ln in enumerate(lines) if ln.startswith("[%state")]
        assert len(child) == 2
        if k < 2:
            lines[child[0]] = root_line
        elif k == 2:
            lines[child[1]] = lines[child[0]]
        else:
            st = t.root.copy()
            for _ in range(3):
                st.push(st.legal_actions()[0])
            lines[child[1]] = f"[%state {mav_state_text(st)}]"
        bad[tr.prompt] = "\n".join(lines) + "\n"
    rep = evaluate_trace_records(_FakeModel(true), "connect_four", recs, [(2, 1)])
    cs = rep["2x1"]["child_states"]
    assert cs["right"] == cs["nodes"] == 8 and set(cs) >= set(CHILD_STATE_KINDS)
    texts = {}
    rep = evaluate_trace_records(_FakeModel(bad), "connect_four", recs, [(2, 1)], texts=texts)
    cs = rep["2x1"]["child_states"]
    assert (cs["right"], cs["parent_copy"], cs["previous_copy"], cs["other"], cs["nodes"]) == (4, 2, 1, 1, 8)
    assert cs["other_mean_diff_chars"] >= 2 and cs["other_mover_right"] == 1.0
    assert rep["2x1"]["states_correct"] == 0.0 and len(texts["2x1"]) == 4
    res = [parse_trace(x, t.root) for x, t in zip(texts["2x1"], trees)]
    again = child_state_errors(res, [t.root for t in trees])
    assert all(again[k] == cs[k] for k in CHILD_STATE_KINDS + ("other_mean_diff_chars", "other_mover_right"))


# ---- the full child form of traces (--trace-form full) ---------------------------------------------

def test_trace_encoder_writes_the_chosen_form(c4_sets):
    store = PositionStore(c4_sets / "trees" / "train")
    recs = [store.record(i) for i in range(min(4, len(store)))]
    short = TraceEncoder("connect_four", [(2, 1)], 2000)
    full = TraceEncoder("connect_four", [(2, 1)], 2000, form="full")
    tok = full.tokenizer()
    for (a, _), (b, mask), rec in zip(short(recs, 0), full(recs, 0), recs):
        want = write_trace(record_tree("connect_four", rec), 2, 1, "full")
        assert tok.decode(b[1:-1]) == want.text and tok.decode(b[mask.astype(bool)][:-1]) == want.target
        assert "[%prev_state " not in tok.decode(a) and len(b) > len(a)
    with pytest.raises(ValueError, match="'long'"):
        TraceEncoder("connect_four", [(2, 1)], 2000, form="long")


def test_model_trace_form_from_metadata(tmp_path):
    """The exported model's ``trace_form`` (info) picks the form; a model without it is short; another value is
    refused, naming it."""
    from mavgame import mav
    from mavgame.model.config import MAVConfig
    from mavgame.model.export import expected_shapes, export_model
    from mavgame.model.inference import MAVModel
    tok = mav.Tokenizer(2)
    cfg = MAVConfig(vocab_size=tok.size, d_model=8, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=16, max_seq_len=64)
    rng = np.random.default_rng(0)
    w = {k: rng.normal(0, 0.3, size=sh).astype(np.float32) for k, sh in expected_shapes(cfg).items()}
    for form, want in ((None, "short"), ("full", "full"), ("short", "short")):
        path = tmp_path / f"m_{form}.safetensors"
        info = {"game": "connect_four", **({"trace_form": form} if form else {})}
        export_model(path, w, cfg, "2", info=info)
        assert MAVModel.load(path, backend="numpy").trace_form == want
    path = tmp_path / "bad.safetensors"
    export_model(path, w, cfg, "2", info={"game": "connect_four", "trace_form": "long"})
    with pytest.raises(ValueError, match="unknown trace_form 'long'"):
        MAVModel.load(path, backend="numpy")


def test_mav_is_agent_and_evaluation_use_the_models_form(c4_sets):
    from mavgame.agents.mav import MAVISAgent
    from mavgame.model.mav_is import evaluate_trace_records
    recs = list(PositionStore(c4_sets / "trees" / "train"))[:3]
    trees = [record_tree("connect_four", r) for r in recs]
    full = _FakeModel({tr.prompt: tr.target for tr in (write_trace(t, 2, 1, "full") for t in trees)})
    full.trace_form = "full"
    agent = make_agent(f"mav_is:breadth=2,depth=1,model={shipped_model_path('connect_four')}")
    assert isinstance(agent, MAVISAgent) and agent.form == "short"  # the shipped MAV has no trace_form
    agent.model = full  # the form of the model
    assert agent.form == "full"
    agent.setup("connect_four", seed=0)
    for t in trees:
        assert t.root.parse_move(agent.act(t.root)) in write_trace(t, 2, 1).choice
        assert agent.last.ok and all(n.prev_agrees for n in agent.last.nodes[1:])
    assert agent.stats["from_trace"] == len(trees)
    rep = evaluate_trace_records(full, "connect_four", recs, [(2, 1)])
    assert rep["form"] == "full" and rep["2x1"]["parsed_ok"] == 1.0 and rep["2x1"]["states_correct"] == 1.0
    assert rep["2x1"]["prev_agrees"] == 1.0
    # read in the short form (an old model's), the same texts are defective but still play their move
    rep = evaluate_trace_records(full, "connect_four", recs, [(2, 1)], form="short")
    assert rep["form"] == "short" and rep["2x1"]["parsed_ok"] == 0.0
    short = _FakeModel({tr.prompt: tr.target for tr in (write_trace(t, 2, 1) for t in trees)})
    assert evaluate_trace_records(short, "connect_four", recs, [(2, 1)])["2x1"]["parsed_ok"] == 1.0
    with pytest.raises(ValueError, match="'long'"):
        make_agent("mav_is:breadth=2,depth=1,form=long")
    forced = make_agent("mav_is:breadth=2,depth=1,form=full")
    forced.model = short  # a form given to the agent wins over the model's
    assert forced.form == "full"


def test_trainer_writes_full_traces_and_records_the_form(c4_sets, tmp_path, torch_or_skip):
    from mavgame.model.inference import MAVModel
    from mavgame.model.train import Trainer
    from mavgame.model.train_config import TrainConfig
    v1_path = tmp_path / "v1.safetensors"
    _tiny_v1_model(v1_path)
    cfg = TrainConfig(data=str(c4_sets / "pos"), out=str(tmp_path / "run"), steps=1, batch_size=4, lr=1e-3,
                      warmup=0, max_seq_len=512, search_data=str(c4_sets / "trees"), search_fraction=0.5,
                      search_shapes="2x1", trace_form="full", init_from=str(v1_path), eval_every=100,
                      checkpoint_every=100, gen_eval_positions=0, progress=False, threads=1)
    tr = Trainer(cfg)
    batch = tr._loader().dataset.make_batch(0)
    from mavgame import mav
    tok = mav.Tokenizer(2)
    texts = [tok.decode([int(i) for i in row if i != tok.pad_id]) for row in batch["tokens"]]
    traces = [t for t in texts if "Minimax breadth=" in t]
    assert traces and all("[%prev_state " in t and "[%prev_action " in t for t in traces)
    tr.run()
    m = MAVModel.load(tr.export(str(tmp_path / "full.safetensors")), backend="numpy")
    assert m.trace_form == "full" and m.info["train_config"]["trace_form"] == "full"
    with pytest.raises(ValueError, match="trace_form"):
        Trainer(TrainConfig(**{**cfg.__dict__, "trace_form": "short"}))  # resuming with another form
    with pytest.raises(ValueError, match="trace_form must be"):
        TrainConfig(**{**cfg.__dict__, "out": str(tmp_path / "x"), "trace_form": "long"}).validate()
    with pytest.raises(ValueError, match="search_mirror must be in"):
        TrainConfig(**{**cfg.__dict__, "out": str(tmp_path / "x"), "search_mirror": 1.5}).validate()
    with pytest.raises(ValueError, match="search_mirror"):
        Trainer(TrainConfig(**{**cfg.__dict__, "search_mirror": 0.5}))   # resuming with another recipe


def _garbled(text: str, rng, alphabet: str) -> str:
    """A random prefix of ``text`` with up to five characters replaced by characters of ``alphabet``."""
    junk = list(text[:int(rng.integers(0, len(text)))])
    for _ in range(int(rng.integers(0, 6))):
        if junk:
            junk[int(rng.integers(0, len(junk)))] = str(rng.choice(list(alphabet)))
    return "".join(junk)


def test_parent_state_text_finds_what_each_prev_state_line_copies(c4_sets):
    # on true full-form traces, the text cut just after each `[%prev_state` token names, as the parent's
    # written %state, exactly what the true line then says; cut and mangled texts give None or a string
    from mavgame.model.mav_is import parent_state_text
    checked = 0
    for r in list(PositionStore(c4_sets / "trees" / "train"))[:6]:
        t = record_tree("connect_four", r)
        for b, d in ((2, 1), (2, 2), (3, 2)):
            text = (lambda tr: tr.prompt + tr.target)(write_trace(t, b, d, "full"))
            at = text.find("[%prev_state")
            while at >= 0:
                cut = at + len("[%prev_state")
                line = text[cut:text.find("]", cut)]
                assert parent_state_text(text[:cut]) == line.strip(), (text[:cut][-300:], line)
                checked += 1
                at = text.find("[%prev_state", cut)
    assert checked > 40
    rng = np.random.default_rng(7)
    for _ in range(300):
        got = parent_state_text(_garbled(text, rng, "]\n<>[ x.%"))
        assert got is None or isinstance(got, str)
    assert parent_state_text("") is None and parent_state_text("garbage\n[%prev_state") is None


class _ScriptedBackend:
    """A stand-in for a model backend that 'generates' a fixed continuation: whatever the prompt, the script's
    tokens from the prompt's length on (as if the prompt were the script's own start), up to and including
    the first stop token; every bucket token's distribution one-hot on it."""

    def __init__(self, cfg, head_len, script, bucket_ids):
        self.cfg, self.head_len, self.script, self.bucket_ids = cfg, head_len, script, list(bucket_ids)
        self.calls = 0

    def generate_ids(self, prompts, max_new_tokens, stop_ids, bucket_ids=None, group_ids=None):
        from mavgame.model.inference import Generation
        self.calls += 1
        outs = []
        for p in prompts:
            g = Generation([])
            probs = []
            for t in self.script[len(p) - self.head_len:][:max_new_tokens]:
                if t in self.bucket_ids:
                    g.value_steps.append(len(g.ids))
                    probs.append(np.eye(64, dtype=np.float32)[self.bucket_ids.index(t)])
                g.ids.append(t)
                if t in stop_ids:
                    g.finished = True
                    break
            g.value_probs = np.stack(probs) if probs else np.zeros((0, 64), np.float32)
            outs.append(g)
        return outs


def test_next_node_name_finds_every_name_the_format_puts_after_a_keyword(c4_sets):
    # on true traces of both forms and several shapes (finished children and leaf decisions included), the
    # text cut just after each `Evaluation for node: ` / `Decision for node: ` gives exactly the name that
    # follows; garbled texts give None or a name, never an exception
    from mavgame.model.mav_is import next_node_name
    checked = {"Evaluation for node: ": 0, "Decision for node: ": 0}
    for r in list(PositionStore(c4_sets / "trees" / "train"))[:6]:
        t = record_tree("connect_four", r)
        for b, d in ((1, 1), (2, 1), (2, 2), (3, 2)):
            for form in ("short", "full"):
                text = (lambda tr: tr.prompt + tr.target)(write_trace(t, b, d, form))
                for kw in checked:
                    at = text.find(kw)
                    while at >= 0:
                        cut = at + len(kw)
                        assert next_node_name(text[:cut], kw) == text[cut:text.find("\n", cut)], text[:cut][-400:]
                        checked[kw] += 1
                        at = text.find(kw, cut)
    assert min(checked.values()) > 60, checked
    assert next_node_name("Minimax breadth=2 depth=1\n[%state x .]\nEvaluation for node: ",
                          "Evaluation for node: ") == "<root>"
    done = "Evaluation for node: <root>\n[%top_all 1:<ctrl0>]\nDecision for node: <root>\nSelecting 1\n"
    assert next_node_name(done + "Evaluation for node: ", "Evaluation for node: ") is None
    assert next_node_name(done + "Decision for node: ", "Decision for node: ") is None
    rng = np.random.default_rng(11)
    for _ in range(300):
        junk = _garbled(text, rng, "]\n<>[ x.%:")
        for kw in checked:
            got = next_node_name(junk + kw, kw)
            assert got is None or (got.startswith("<root") and got.endswith(">"))


def test_copy_prev_generation_writes_the_parents_state_into_child_blocks(c4_sets):
    # a scripted model writes a true 2x2 trace in the full form but with every %prev_state board garbled:
    # decoded, the trace has wrong repeated inputs; with copy_prev each garbled board is replaced by the
    # parent's written state as the model reaches it, the result is the true trace, and the value entries
    # keep their positions and distributions
    import dataclasses
    from mavgame.agents.mav import MAVISAgent
    from mavgame.model.mav_is import generate_traces
    from mavgame.model.inference import MAVModel
    m = MAVModel.load(shipped_model_path("connect_four"))
    m.trace_form = "full"
    m.cfg = dataclasses.replace(m.cfg, max_seq_len=2048)   # room for a 2x2 trace (the scripted backend's)
    tok = m.tokenizer
    checked = 0
    for r in list(PositionStore(c4_sets / "trees" / "train"))[:4]:
        t = record_tree("connect_four", r)
        tr = write_trace(t, 2, 2, "full")
        lines = tr.target.split("\n")
        bad = [ln[:15] + "".join("x" if c in ".o" else c for c in ln[15:-1]) + "]"
               if ln.startswith("[%prev_state ") else ln for ln in lines]
        assert bad != lines
        garbled = "\n".join(bad)
        script = tok.encode(garbled).tolist() + [tok.eos_id]
        assert len(script) == len(tok.encode(tr.target)) + 1
        head = m.encode_prompt(tr.prompt)
        m.backend = _ScriptedBackend(m.cfg, len(head), script, tok.bucket_ids.tolist())
        (p0, plain), = generate_traces(m, [t.root], 2, 2)
        assert p0 == tr.prompt and plain.text == garbled and plain.finished
        assert not all(n.prev_agrees for n in parse_trace(p0 + plain.text, t.root, form="full").nodes[1:])
        m.backend.calls = 0
        (p1, copied), = generate_traces(m, [t.root], 2, 2, copy_prev=True)
        assert copied.text == tr.target and copied.finished
        assert m.backend.calls == tr.target.count("[%prev_state") + 1   # one request per copied line, one more
        res = parse_trace(p1 + copied.text, t.root, choice=tr.choice, form="full")
        assert res.shape_ok and res.states_correct and all(n.prev_agrees for n in res.nodes[1:])
        assert [(a, mv) for a, mv, _ in copied.value_entries] == [(a, mv) for a, mv, _ in plain.value_entries]
        for (_, _, q0), (_, _, q1) in zip(plain.value_entries, copied.value_entries):
            np.testing.assert_array_equal(q0, q1)
        assert copied.value_dists.keys() == plain.value_dists.keys() and copied.value_entries
        checked += 1
    assert checked == 4
    for room in range(150, 400, 7):   # a context that ends anywhere, inside copied lines too: cut, never over
        m.cfg = dataclasses.replace(m.cfg, max_seq_len=len(head) + room)
        (_, cut), = generate_traces(m, [t.root], 2, 2, copy_prev=True)
        assert len(cut.ids) == room and not cut.finished and tr.target.startswith(cut.text)
    agent = make_agent(f"mav_is:breadth=2,depth=1,copy_prev=1,model={shipped_model_path('connect_four')}")
    assert isinstance(agent, MAVISAgent) and agent.copy_prev
    assert not make_agent(f"mav_is:model={shipped_model_path('connect_four')}").copy_prev
    with pytest.raises(ValueError, match="copy_prev"):
        make_agent("mav_is:copy_prev=2")
    assert make_agent("mav_is:copy_names=1").copy_names            # the shipped MAV-IS: vocabulary v2
    with pytest.raises(ValueError, match="copy_names needs 'Evaluation for node: ' as one token: vocabulary v2"):
        make_agent(f"mav_is:copy_names=1,model={shipped_model_path('connect_four')}")   # v1: refused when made
    with pytest.raises(ValueError, match="copy_names must be 0 or 1, not 2"):
        make_agent("mav_is:copy_names=2")
    with pytest.raises(ValueError, match="copy_names needs 'Evaluation for node: ' as one token"):
        generate_traces(MAVModel.load(shipped_model_path("connect_four")), [t.root], 2, 1, copy_names=True)


# ---- mirrored trees (--search-mirror) ------------------------------------------------------------------

def test_mirrored_tree_is_the_solver_tree_of_the_mirror_position(c4_sets):
    """A mirrored tree record holds the solver's values of the mirrored positions node for node; its traces
    are read back whole by the parser against the mirrored root, their minimax choice the mirror of the
    original's; mirroring twice is the identity."""
    from mavgame.datasets.symmetry import mirror_move, mirror_tree_record
    ann = make_annotator("connect_four", {"max_nodes": 200_000})
    for rec in list(PositionStore(c4_sets / "trees" / "train"))[:3]:
        mir = mirror_tree_record("connect_four", rec)
        assert mirror_tree_record("connect_four", mir) == rec and mir["state"] != rec["state"]
        states = []
        for i, (parent, move, values, best) in enumerate(mir["tree"]):
            st = _core.State("connect_four", mir["state"], 0, 0) if i == 0 else states[parent].copy()
            if i:
                st.push(st.parse_move(move))
            states.append(st)
            if values is not None:
                want, _ = ann(st)
                assert values == pytest.approx(want) and values[best] == max(want.values())
        tree, orig = record_tree("connect_four", mir), record_tree("connect_four", rec)
        for b, d in ((2, 1), (3, 2)):
            tr, ot = write_trace(tree, b, d), write_trace(orig, b, d)
            res = parse_trace(tr.prompt + tr.target, tree.root, choice=tr.choice)
            assert res.shape_ok and res.states_correct and res.final_minimax
            flipped = {tree.root.parse_move(mirror_move("connect_four", orig.root.action_to_str(a), rec["state"]))
                       for a in ot.choice}
            assert set(tr.choice) == flipped


def test_trace_encoder_mirror_option(c4_sets):
    from mavgame.datasets.symmetry import mirror_tree_record
    recs = list(PositionStore(c4_sets / "trees" / "train"))[:6]
    plain = TraceEncoder("connect_four", [(2, 1), (3, 2)], 4096)
    always = TraceEncoder("connect_four", [(2, 1), (3, 2)], 4096, p_mirror=1.0)
    half = TraceEncoder("connect_four", [(2, 1), (3, 2)], 4096, p_mirror=0.5)
    mirrored = [mirror_tree_record("connect_four", r) for r in recs]
    for seed in range(4):
        got, want = always(recs, seed), plain(mirrored, seed)
        assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(got, want))
        assert all(np.array_equal(a[0], b[0]) for a, b in zip(half(recs, seed), half(recs, seed)))   # seeded
    mixed = [half(recs, s) for s in range(8)]
    orig = [plain(recs, s) for s in range(8)]
    n_flipped = sum(not np.array_equal(a[0], b[0]) for m, o in zip(mixed, orig) for a, b in zip(m, o))
    assert 0 < n_flipped < 48
    with pytest.raises(ValueError, match="'hex'"):
        TraceEncoder("hex", [(2, 1)], 4096, p_mirror=0.5)
    with pytest.raises(ValueError, match="1.5"):
        TraceEncoder("connect_four", [(2, 1)], 4096, p_mirror=1.5)


def _inverted(tree_rec):
    """The engine's root values turned upside down: the worst moves ranked first."""
    return {m: 1.0 - v for m, v in tree_rec["values"].items()}


def test_a_root_annotation_replaces_the_engines_at_the_root_only(c4_sets):
    ann = make_annotator("connect_four", {"max_nodes": 200_000})
    rec = PositionStore(c4_sets / "trees" / "train").record(0)
    truth = record_tree("connect_four", rec)
    root = truth.root.copy()
    vals = _inverted(rec)
    worst = min(rec["values"], key=rec["values"].get)
    tree = build_search_tree(root, ann, 2, 3, root=(vals, worst))
    got = tree_record(tree)
    assert got["values"] == vals and got["best"] == worst
    # the root expands the top 3 by the given values; below the root every node is the engine's
    by_given = sorted(vals, key=lambda m: -vals[m])[:3]
    kids = [n for n in got["tree"][1:] if n[0] == 0]
    assert sorted(k[1] for k in kids) == sorted(by_given)
    engine = {}
    for k in kids:
        st = root.copy()
        st.push(st.parse_move(k[1]))
        engine[k[1]] = None if st.is_terminal() else ann(st)[0]
        assert k[2] == engine[k[1]]
    # the trace decides over the true children, whatever the root's own values said
    tr = write_trace(tree, 3, 1)
    res = parse_trace(tr.text, root, choice=tr.choice)
    assert res.shape_ok and res.values_consistent and res.final_minimax
    with pytest.raises(ValueError, match="legal moves"):
        build_search_tree(root, ann, 1, 2, root=({worst: 0.5}, worst))
    with pytest.raises(ValueError, match="'9'"):
        build_search_tree(root, ann, 1, 2, root=(vals, "9"))


def test_model_rooted_trees_mark_their_root_and_count_what_the_search_overrules(c4_sets, tmp_path):
    nones = []
    ann = make_annotator("connect_four", {"max_nodes": 200_000})

    def root_values(states):
        assert 1 <= len(states) <= 4
        out = []
        for i, st in enumerate(states):
            a = ann(st)
            if i == 0 or a is None:
                out.append(None)                       # a root the model gave no usable values for
                nones.append(st.text())
                continue
            v = {m: 1.0 - x for m, x in a[0].items()}
            out.append((v, min(a[0], key=a[0].get)))
        return out

    stats = generate_search_trees(c4_sets / "pos", tmp_path / "mtrees", 10, depth=1, breadth=3, progress=False,
                                  annotator_options={"max_nodes": 200_000}, val_fraction=0.3,
                                  root_values=root_values, root_batch=4)
    assert stats["trees"] == 10 and stats["root_source"] == "model"
    assert 3 <= stats["skipped_root"] <= len(nones)
    recs = [r for s in ("train", "val") if (tmp_path / "mtrees" / s / "manifest.json").exists()
            for r in PositionStore(tmp_path / "mtrees" / s)]
    assert len(recs) == 10 and all(r["root_source"] == "model" for r in recs)
    # with the values inverted, the minimax over the children overrules the root's own best move often
    assert 0 < stats["root_overruled"] <= 10
    overruled = 0
    for r in recs:
        tree = record_tree("connect_four", r)
        if not set(write_trace(tree, 1, 1).choice) & set(write_trace(tree, 3, 1).choice):
            overruled += 1
    assert overruled == stats["root_overruled"]


def test_trace_encoder_leaves_a_model_roots_values_out_of_the_loss(c4_sets):
    from mavgame.datasets.search_data import root_value_spans
    store = PositionStore(c4_sets / "trees" / "train")
    recs = [store.record(i) for i in range(min(6, len(store)))]
    marked = [dict(r, root_source="model") for r in recs]
    enc = TraceEncoder("connect_four", parse_shapes("2x1,3x2"), 2000, form="full")
    tok = enc.tokenizer()
    for (ids, mask), (ids2, mask2), rec in zip(enc(recs, 5), enc(marked, 5), recs):
        assert (ids == ids2).all()                          # the same tokens: the cuts fall where pieces meet
        off = np.flatnonzero(mask.astype(bool) & ~mask2.astype(bool))
        assert len(off) and (np.diff(off) == 1).all()       # one span out of the loss ...
        assert tok.decode(ids[off]).startswith("[%top_all ") and tok.decode(ids[off]).endswith("]\n")
        assert "%best_action" in tok.decode(ids[off]) and "Expand" not in tok.decode(ids[off])
        tree = record_tree("connect_four", rec)
        target = write_trace(tree, 3, 2, "full").target
        assert "".join(t for t, _k in root_value_spans(target)) == target
        assert mask2[off[-1] + 1] == 1 and tok.decode(ids[off[-1] + 1:off[-1] + 3]).startswith("Expand from node")
        assert (mask2[:off[0]] == mask[:off[0]]).all() and (mask2[off[-1] + 1:] == 1).all()
    # a target without the root's value lines stays one piece in the loss
    assert root_value_spans("garbage\n") == [("garbage\n", True)]


def test_model_root_values_are_the_head_of_the_models_own_trace(c4_sets):
    from mavgame.model.inference import MAVModel
    from mavgame.model.mav_is import generate_traces, model_root_values
    from mavgame.mav.values import bucket
    model = MAVModel.load(shipped_model_path("connect_four", "mav_is"))
    store = PositionStore(c4_sets / "trees" / "train")
    roots = [record_tree("connect_four", store.record(i)).root for i in range(min(6, len(store)))]
    anns = model_root_values(model, roots, 3, 1)
    full = generate_traces(model, roots, 3, 1)
    for st, ann, (prompt, out) in zip(roots, anns, full):
        res = parse_trace(prompt + out.text, st)
        top = {m: b for m, _a, b, _s in res.nodes[0].top}
        if ann is None:
            assert set(top) != set(st.legal_moves)
            continue
        vals, best = ann
        assert set(vals) == set(st.legal_moves) and {m: bucket(v) for m, v in vals.items()} == top
        assert best == res.nodes[0].best
    assert sum(a is not None for a in anns) >= len(roots) - 1

    class Garbled:
        def generate(self, prompts, **kw):
            texts = ["Evaluation for node: <root>\n[%top_all 1:<ctrl9> 1:<ctrl9>]\n", "no trace at all",
                     "Evaluation for node: <root>\n[%top_all 1:<ctrl99>]\n"]
            return [SimpleNamespace(text=texts[i % 3]) for i in range(len(prompts))]

    assert model_root_values(Garbled(), roots[:3], 2, 1) == [None, None, None]


def test_train_command_builds_model_rooted_trees(c4_sets, tmp_path, capsys):
    from mavgame.cli import main
    model = str(shipped_model_path("connect_four", "mav_is"))
    out = tmp_path / "rooted"
    assert main(["train", "--data", str(c4_sets / "pos"), "--search-data", str(out), "--search-trees", "4",
                 "--search-tree-depth", "1", "--search-tree-breadth", "2", "--search-root-model", model,
                 "--search-root-shape", "2x1", "--annotator-option", "max_nodes=200000", "--generate-only",
                 "--no-progress"]) == 0
    assert '"root_source": "model"' in capsys.readouterr().out
    recs = [r for s in ("train", "val") if (out / s / "manifest.json").exists() for r in PositionStore(out / s)]
    assert recs and all(r["root_source"] == "model" for r in recs)
    with pytest.raises(SystemExit, match="search shape '2-1'"):
        main(["train", "--data", str(c4_sets / "pos"), "--search-data", str(tmp_path / "bad"), "--search-trees",
              "2", "--search-root-model", model, "--search-root-shape", "2-1", "--generate-only", "--no-progress"])
    with pytest.raises(SystemExit, match="nowhere.safetensors: no such model file"):
        main(["train", "--data", str(c4_sets / "pos"), "--search-data", str(tmp_path / "bad2"), "--search-trees",
              "2", "--search-root-model", str(tmp_path / "nowhere.safetensors"), "--generate-only", "--no-progress"])
    # trees already there are reused: the model is not even loaded (a file that is no model passes)
    junk = tmp_path / "junk.safetensors"
    junk.write_text("not a model")
    assert main(["train", "--data", str(c4_sets / "pos"), "--search-data", str(out), "--search-trees", "4",
                 "--search-root-model", str(junk), "--generate-only", "--no-progress"]) == 0
    with pytest.raises(SystemExit, match="junk.safetensors"):
        main(["train", "--data", str(c4_sets / "pos"), "--search-data", str(tmp_path / "fresh"), "--search-trees",
              "2", "--search-tree-depth", "1", "--search-tree-breadth", "2", "--search-root-model", str(junk),
              "--generate-only", "--no-progress"])


def test_model_rooted_trees_read_back_as_built_when_values_tie(c4_sets, tmp_path):
    """Root values listed out of the store's (sorted) key order, all tied: the stored tree still holds the
    children its record's order expands, for every breadth up to the tree's."""
    def root_values(states):
        return [({m: 0.5 for m in reversed(st.legal_moves)}, None) for st in states]

    generate_search_trees(c4_sets / "pos", tmp_path / "tied", 6, depth=1, breadth=3, progress=False,
                          annotator_options={"max_nodes": 200_000}, val_fraction=0.0, root_values=root_values)
    recs = list(PositionStore(tmp_path / "tied" / "train"))
    assert len(recs) == 6
    for r in recs:
        assert list(r["values"]) == sorted(r["values"])
        tree = record_tree("connect_four", r)
        for b in (1, 2, 3):
            tr = write_trace(tree, b, 1)
            assert parse_trace(tr.text, tree.root, choice=tr.choice).shape_ok


def test_val_only_trees_are_all_held_out(c4_sets, tmp_path, capsys):
    """val_only: every root is a position of the val split at the fraction, none of a tree set drawn with
    that fraction trains on it, the rest are counted as skipped_split; a zero fraction is refused."""
    from mavgame.cli import main
    from mavgame.datasets.records import position_split
    stats = generate_search_trees(c4_sets / "pos", tmp_path / "held", 50, depth=1, breadth=2, progress=False,
                                  annotator_options={"max_nodes": 200_000}, val_fraction=0.3, val_only=True)
    held = list(PositionStore(tmp_path / "held" / "val"))
    assert len(held) == stats["trees"] > 0 and stats["val_only"] and stats["skipped_split"] > 0
    assert json.loads((tmp_path / "held" / "train" / "manifest.json").read_text())["records"] == 0
    assert all(position_split(r["state"], 0.3) == "val" for r in held)
    trained = {r["state"] for r in PositionStore(c4_sets / "trees" / "train")}
    assert trained and not trained & {r["state"] for r in held}
    with pytest.raises(ValueError, match="val_only needs a positive val_fraction"):
        generate_search_trees(c4_sets / "pos", tmp_path / "none", 5, val_only=True, val_fraction=0.0)
    assert main(["train", "--data", str(c4_sets / "pos"), "--search-data", str(tmp_path / "cli"), "--search-trees",
                 "3", "--search-tree-depth", "1", "--search-tree-breadth", "2", "--val-fraction", "0.3",
                 "--search-val-only", "--annotator-option", "max_nodes=200000", "--generate-only",
                 "--no-progress"]) == 0
    assert '"skipped_split"' in capsys.readouterr().out
    assert all(position_split(r["state"], 0.3) == "val" for r in PositionStore(tmp_path / "cli" / "val"))
