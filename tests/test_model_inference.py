"""MAVModel on text: generation with a scripted backend (the move -> 64-bucket value distribution mapping,
mean and max scoring, batching, stopping), loading exported models (vocabulary checks), the lazy
``mavgame.MAVModel`` import, and interoperability of exported files with the ``safetensors`` package."""
import json
import subprocess
import sys

import numpy as np
import pytest

import mavgame
from mavgame import mav
from mavgame.model.config import MAVConfig
from mavgame.model.export import expected_shapes, export_model, load_safetensors, save_safetensors
from mavgame.mav import vocab_fingerprint
from mavgame.model.inference import MAVModel, bucket_midpoints

TOK = mav.Tokenizer()
MIDS = bucket_midpoints()
C4 = "connect_four"


class ScriptedBackend:
    """A backend (the prefill/step interface of NumpyTransformer) whose logits spell out a fixed answer per
    prompt: ``scripts[prompt] = [(token_id, bucket_probs or None), ...]``. At a value token the logits over
    the 64 bucket tokens are log(bucket_probs) (one-hot when None), every other token is -inf, so the greedy
    token and the kept distribution are known exactly. It checks what generation feeds it: the left-padded
    prompt, positions, the key mask, and every fed-back token."""

    def __init__(self, cfg, scripts):
        self.cfg = cfg
        self.scripts = {}
        for prompt, steps in scripts.items():
            key = tuple([TOK.bos_id] + TOK.encode(prompt).tolist())
            self.scripts[key] = steps
        self.prefills = []

    def new_cache(self, batch, capacity):
        return {"rows": None, "step": 0, "capacity": capacity, "batch": batch}

    @staticmethod
    def select_cache(cache, rows):
        c = dict(cache)
        c["rows"] = [cache["rows"][int(r)] for r in rows]
        return c

    def _logits(self, script, step):
        out = np.full(self.cfg.vocab_size, -np.inf, np.float32)
        tid, probs = script[step]
        b = TOK.bucket_of(tid)
        if b >= 0 and probs is not None:
            with np.errstate(divide="ignore"):
                out[TOK.bucket_ids] = np.log(np.asarray(probs, np.float64)).astype(np.float32)
            assert int(np.argmax(probs)) == b
        else:
            out[tid] = 0.0
        return out

    def forward(self, tokens, positions, key_valid, cache):
        B, T = tokens.shape
        if cache["rows"] is None:                       # prefill: one script per (left-padded) prompt
            assert B == cache["batch"] and key_valid.shape == (B, T)
            rows = []
            for b in range(B):
                valid = key_valid[b]
                n = int(valid.sum())
                assert valid[T - n:].all() and not valid[:T - n].any()       # left padding
                assert positions[b, T - n:].tolist() == list(range(n))       # positions start at 0
                rows.append(self.scripts[tuple(tokens[b, T - n:].tolist())])
            cache["rows"] = rows
            self.prefills.append(B)
        else:                                           # a step: the fed token is the previous answer
            assert T == 1 and len(cache["rows"]) == B
            assert key_valid.shape[1] == cache["length"] + 1
            for b, script in enumerate(cache["rows"]):
                assert int(tokens[b, 0]) == script[cache["step"] - 1][0]
        cache["length"] = key_valid.shape[1]
        step = cache["step"]
        cache["step"] += 1
        return np.stack([self._logits(s, step) for s in cache["rows"]])


def spell(text, dists=None, eos=True):
    """Script steps for an answer text; ``dists``: bucket probabilities for the i-th value token."""
    dists = dists or {}
    steps, k = [], 0
    for t in TOK.encode(text).tolist():
        if TOK.bucket_of(t) >= 0:
            steps.append((t, dists.get(k)))
            k += 1
        else:
            steps.append((t, None))
    if eos:
        steps.append((TOK.eos_id, None))
    return steps


def scripted_model(scripts, max_seq_len=256):
    cfg = MAVConfig(vocab_size=TOK.size, d_model=8, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=8,
                    max_seq_len=max_seq_len)
    be = ScriptedBackend(cfg, scripts)
    return MAVModel(be, cfg, str(TOK.version), {"game": C4, "vocab_fingerprint": vocab_fingerprint(TOK)}), be


def onehot(b):
    p = np.zeros(64)
    p[b] = 1.0
    return p


def c4_prompt(moves=""):
    s = mavgame.State(C4)
    for m in moves:
        s.push(m)
    return s, mav.prompt(s)


def test_value_distributions_are_the_buckets_written():
    s, p = c4_prompt()
    answer = "[%top_all 4:<ctrl10> 3:<ctrl50>]\n"
    model, be = scripted_model({p: spell(answer)})
    out, = model.generate([p])
    assert out.text == answer and out.finished and TOK.decode(out.ids) == answer
    assert list(out.value_dists) == ["4", "3"]
    np.testing.assert_array_equal(out.value_dists["4"], onehot(10))
    np.testing.assert_array_equal(out.value_dists["3"], onehot(50))
    for scoring in ("mean", "max"):
        assert out.values(scoring) == pytest.approx({"4": MIDS[10], "3": MIDS[50]}, abs=1e-7)
    assert MIDS[10] == (10 + 0.5) / 64 and MIDS[50] == (50 + 0.5) / 64
    with pytest.raises(ValueError, match="scoring"):
        out.values("median")


def test_soft_distributions_mean_and_max():
    s, p = c4_prompt("44")
    p4 = np.zeros(64)
    p4[[10, 60, 0]] = [0.5, 0.3, 0.2]           # mode 10, mean pulled up by bucket 60
    p3 = np.full(64, 0.5 / 63)
    p3[50] = 0.5
    answer = "[%top_all 4:<ctrl10> 3:<ctrl50>]\n[%best_action 3]\n"
    model, _ = scripted_model({p: spell(answer, {0: p4, 1: p3})})
    out, = model.generate([p])
    np.testing.assert_allclose(out.value_dists["4"], p4, atol=1e-6)
    np.testing.assert_allclose(out.value_dists["3"], p3, atol=1e-6)
    assert all(d.sum() == pytest.approx(1.0, abs=1e-6) for d in out.value_dists.values())
    mean, mx = out.values("mean"), out.values("max")
    assert mx == pytest.approx({"4": MIDS[10], "3": MIDS[50]})
    assert mean["4"] == pytest.approx(float(p4 @ MIDS), abs=1e-6) and mean["4"] > MIDS[10] + 0.1
    assert mean["3"] == pytest.approx(float(p3 @ MIDS), abs=1e-6)
    # analyse parses the same output against the true state
    (pr, o2), = model.analyse([s])
    assert o2.text == answer and pr.ok and pr.best == "3" and pr.best_action >= 0
    assert [(e.move, e.bucket, e.status) for e in pr.top] == [("4", 10, "legal"), ("3", 50, "legal")]


def test_mapping_keeps_first_occurrence_and_ignores_values_without_a_move():
    _, p = c4_prompt("1")
    answer = "[%top_all 4:<ctrl10> 4:<ctrl20> 7:<ctrl63>]\n[%best_action <ctrl5>]\n"
    model, _ = scripted_model({p: spell(answer)})
    out, = model.generate([p])
    assert out.text == answer
    assert sorted(out.value_dists) == ["4", "7"]
    assert int(np.argmax(out.value_dists["4"])) == 10 and int(np.argmax(out.value_dists["7"])) == 63


def test_values_come_from_well_formed_top_entries_only():
    s, p = c4_prompt()
    answer = "[%top_all 4:<ctrl10>:<ctrl10> 3:<ctrl50> 2:<ctrl9>]\n[%best_action 5:<ctrl7>]\n"
    model, _ = scripted_model({p: spell(answer)})
    out, = model.generate([p])
    pr = mav.parse(C4, p + out.text, true_state=s)
    assert out.text == answer and pr.values() == pytest.approx({"3": MIDS[50], "2": MIDS[9]})
    assert out.values("max") == pytest.approx(pr.values())


def test_batches_rows_of_different_lengths_and_unfinished_rows():
    answers = {
        "": ("[%top_all 4:<ctrl10> 3:<ctrl50>]\n", True),
        "4": ("[%top_all 1:<ctrl0> 2:<ctrl1> 3:<ctrl2> 4:<ctrl3> 5:<ctrl4> 6:<ctrl5> 7:<ctrl6>]\n", True),
        "44": ("[%top_all 5:<ctrl40>]\n[%best_action 5]\n", True),
        "444": ("[%top_all 2:<ctrl33> 6:<ctrl31> 1:<ctrl2> 7:<ctrl9> 3:<ctrl7>", False),   # runs out of tokens
        "4444": ("[%top_all]\n", True),
    }
    prompts = {mv: c4_prompt(mv)[1] for mv in answers}
    budget = max(len(TOK.encode(a)) + 1 for a, _ in answers.values())
    filler = [(int(TOK.encode(" ")[0]), None)] * budget     # what the unfinished row writes on and on
    scripts = {prompts[mv]: spell(a, eos=fin) + filler * (not fin) for mv, (a, fin) in answers.items()}
    model, be = scripted_model(scripts)
    order = ["444", "", "4444", "4", "44"]
    outs = model.generate([prompts[m] for m in order], max_new_tokens=budget, batch_size=2)
    assert be.prefills == [2, 2, 1]
    for m, o in zip(order, outs):
        text, fin = answers[m]
        assert o.finished == fin
        if fin:
            assert o.text == text
        else:
            assert o.text.startswith(text) and len(o.ids) == budget
        buckets = {e.move: e.bucket for e in mav.parse(C4, prompts[m] + text + ("\n" if not fin else "")).top}
        assert {mv: int(np.argmax(d)) for mv, d in o.value_dists.items()} == buckets
    one = model.generate([prompts["44"]])[0]
    assert one.text == outs[-1].text and one.value_dists.keys() == outs[-1].value_dists.keys()


def test_prompt_too_long_is_a_clear_error():
    _, p = c4_prompt()
    model, _ = scripted_model({p: spell("[%top_all]\n")}, max_seq_len=16)
    with pytest.raises(ValueError, match="max_seq_len"):
        model.generate([p])


# ---- loading exported models ------------------------------------------------------------------------------

def _export(path, vocab_size=None, version=None, info=None, dtype="float32", seed=0):
    cfg = MAVConfig(vocab_size=vocab_size or TOK.size, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32,
                    max_seq_len=96)
    rng = np.random.default_rng(seed)
    w = {k: rng.normal(0, 0.3, size=s).astype(np.float32) for k, s in expected_shapes(cfg).items()}
    if info is None:
        info = {"game": C4, "vocab_fingerprint": vocab_fingerprint(TOK)}
    export_model(path, w, cfg, str(TOK.version) if version is None else version, info=info, dtype=dtype)
    return w, cfg


def test_load_checks_the_vocabulary(tmp_path):
    good = tmp_path / "good.safetensors"
    _export(good)
    m = MAVModel.load(good, backend="numpy")
    assert m.game == C4 and m.path == str(good) and m.info["vocab_fingerprint"] == vocab_fingerprint(TOK)
    _, p = c4_prompt()
    out, = m.generate([p], max_new_tokens=5)
    assert 1 <= len(out.ids) <= 5
    _export(tmp_path / "nofp.safetensors", info={"game": C4})        # no fingerprint stored: accepted
    assert MAVModel.load(tmp_path / "nofp.safetensors", backend="numpy").game == C4

    bad_version = str(int(TOK.version) + 1)
    _export(tmp_path / "v.safetensors", version=bad_version)
    with pytest.raises(ValueError, match=f"v{bad_version}"):
        MAVModel.load(tmp_path / "v.safetensors", backend="numpy")
    _export(tmp_path / "fp.safetensors", info={"game": C4, "vocab_fingerprint": "0123456789abcdef"})
    with pytest.raises(ValueError, match="fingerprint 0123456789abcdef"):
        MAVModel.load(tmp_path / "fp.safetensors", backend="numpy")
    _export(tmp_path / "size.safetensors", vocab_size=TOK.size + 1)
    with pytest.raises(ValueError, match=f"vocabulary size {TOK.size + 1}"):
        MAVModel.load(tmp_path / "size.safetensors", backend="numpy")
    with pytest.raises(ValueError, match="backend"):
        MAVModel.load(good, backend="jax")
    with pytest.raises(FileNotFoundError):
        MAVModel.load(tmp_path / "missing.safetensors", backend="numpy")


def test_fingerprint_follows_the_vocabulary():
    fp = vocab_fingerprint(TOK)
    assert len(fp) == 16 and int(fp, 16) >= 0 and fp == vocab_fingerprint(mav.Tokenizer())

    class Renamed:
        vocab = list(TOK.vocab)
    Renamed.vocab[-1] += "x"
    assert vocab_fingerprint(Renamed) != fp


def test_tampered_metadata_is_refused(tmp_path):
    """A file rewritten with another vocabulary version in its metadata (same weights) is refused."""
    path = tmp_path / "m.safetensors"
    _export(path)
    tensors, meta = load_safetensors(path)
    meta["vocab_version"] = "0"
    save_safetensors(tmp_path / "t.safetensors", tensors, meta)
    with pytest.raises(ValueError, match="v0"):
        MAVModel.load(tmp_path / "t.safetensors", backend="numpy")
    info = json.loads(meta["info"])
    info["vocab_fingerprint"] = "f" * 16
    meta.update(vocab_version=str(TOK.version), info=json.dumps(info))
    save_safetensors(tmp_path / "f.safetensors", tensors, meta)
    with pytest.raises(ValueError, match="fingerprint"):
        MAVModel.load(tmp_path / "f.safetensors", backend="numpy")


def test_lazy_top_level_import():
    code = (
        "import sys, mavgame\n"
        "assert 'mavgame.model' not in sys.modules and 'torch' not in sys.modules\n"
        "M = mavgame.MAVModel\n"
        "import mavgame.model.inference as inf\n"
        "assert M is inf.MAVModel and 'MAVModel' in mavgame.__all__\n"
        "try:\n"
        "    mavgame.NoSuchThing\n"
        "except AttributeError as e:\n"
        "    assert 'NoSuchThing' in str(e)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_numpy_backend_needs_no_torch(tmp_path):
    path = tmp_path / "m.safetensors"
    _export(path)
    _, p = c4_prompt()
    code = (
        "import sys, mavgame\n"
        f"m = mavgame.MAVModel.load({str(path)!r}, backend='numpy')\n"
        f"o = m.generate([{p!r}], max_new_tokens=4)[0]\n"
        "assert len(o.ids) >= 1 and 'torch' not in sys.modules, sorted(k for k in sys.modules if 'torch' in k)\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_export_loads_with_the_safetensors_package(tmp_path, dtype):
    st_numpy = pytest.importorskip("safetensors.numpy")
    from safetensors import safe_open
    path = tmp_path / "m.safetensors"
    w, cfg = _export(path, dtype=dtype)
    got = st_numpy.load_file(str(path))
    assert set(got) == set(w)
    for k, a in w.items():
        assert got[k].dtype == np.dtype(dtype) and got[k].shape == a.shape
        np.testing.assert_array_equal(got[k], a.astype(dtype))
    with safe_open(str(path), framework="np") as f:
        meta = f.metadata()
    assert meta["format"] == "mavgame-mav" and meta["vocab_version"] == str(TOK.version)
    assert MAVConfig.from_json(meta["config"]) == cfg and json.loads(meta["info"])["game"] == C4
    # and a file written by the safetensors package loads as a model
    again = tmp_path / "again.safetensors"
    st_numpy.save_file({k: v.astype(np.float32) for k, v in got.items()}, str(again), metadata=meta)
    m = MAVModel.load(again, backend="numpy")
    assert m.cfg == cfg and m.game == C4


def test_grouped_decoding_counts_the_moves_together():
    from mavgame.model.inference import grouped_argmax
    V = 20
    group = np.array([3, 4, 5, 6, 7, 8, 9])
    p = np.full(V, 1e-9)
    p[12] = 0.2                       # e.g. `invalid`: the most likely single token ...
    p[group] = (0.8 - 0.7 * 1e-9) / 7  # ... but "some move" has 0.8
    p[6] += 0.01                      # the likeliest move
    p2 = np.full(V, 1e-9)
    p2[12] = 0.6                      # here the other token wins outright
    p2[group] = 0.4 / 7
    logits = np.log(np.stack([p, p2]))
    assert np.argmax(logits, -1).tolist() == [12, 12]
    assert grouped_argmax(logits, group).tolist() == [6, 12]
    assert grouped_argmax(logits, np.array([], np.int64)).tolist() == [12, 12]
    model, _ = scripted_model({})
    c4 = model.move_tokens(C4)
    assert len(c4) == 7 and sorted(TOK.decode([t]) for t in c4) == list("1234567")
    chess = model.move_tokens("chess")
    assert TOK.encode("e2e4")[0] in chess and TOK.encode("a7a8q")[0] in chess and len(chess) > 1800
    gardner = model.move_tokens("gardner")       # 5x5 board: no move leaves a1-e5
    assert TOK.encode("a1e5")[0] in gardner and TOK.encode("a4a5q")[0] in gardner
    assert TOK.encode("a1a8")[0] not in gardner and TOK.encode("e2e4")[0] in gardner
    assert TOK.encode("swap")[0] in model.move_tokens("hex")   # Hex's swap rule
    with pytest.raises(ValueError, match="decoding"):
        model.generate([c4_prompt()[1]], decoding="beam")


def test_game_of_prompt_reads_the_header_with_the_core_parser():
    from mavgame import mav
    from mavgame.model.inference import game_of_prompt
    assert game_of_prompt(mav.prompt(mavgame.State("hex", None, 5, 0), "%state %top_all")) == "hex"
    assert game_of_prompt("<search breadth=2 depth=3>\n<mav game=connect_four> %state </mav>\n") == "connect_four"
    with pytest.raises(ValueError, match="unknown game 'go'"):
        game_of_prompt("<mav game=go> %state </mav>\n")
    with pytest.raises(ValueError, match="expected the header"):
        game_of_prompt("hello\n")
