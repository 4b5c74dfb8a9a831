"""The native inference engine (csrc/model, ``MAVModel.load(backend="native")``) against the references:
logits against the torch transformer on random models of every configuration variant, generation against
the NumPy backend, identical greedy outputs on the shipped model over fresh positions, the same results for
1 and 2 threads and with prefix sharing on or off, and clear errors for malformed model files."""
import importlib.util
import json
import struct

import numpy as np
import pytest

import mavgame
from mavgame import _core, mav
from mavgame.model.config import MAVConfig
from mavgame.model.export import expected_shapes, export_model, save_safetensors, load_safetensors
from mavgame.mav import vocab_fingerprint
from mavgame.model.inference import (MAVModel, NativeBackend, NumpyTransformer, PLAIN, TRANSITION, generate_ids,
                                     native_available, shipped_model_path)

pytestmark = pytest.mark.skipif(not native_available(), reason="extension built without the native engine")
TOK = mav.Tokenizer()
NL = TOK.token_to_id("\n")

VARIANTS = {
    "mqa-swiglu-tied": {},
    "gqa-geglu-untied": dict(n_heads=4, n_kv_heads=2, mlp="geglu", tie_embeddings=False),
    "mha-abs-line": dict(n_heads=2, n_kv_heads=2, abs_pos=True, line_pos=6, newline_id=NL),
    "gqa-all": dict(n_heads=4, n_kv_heads=2, mlp="geglu", tie_embeddings=False, abs_pos=True, line_pos=4,
                    newline_id=NL, rope_theta=500.0, norm_eps=1e-5),
}


def make_model(tmp_path, name="m", dtype="float32", seed=0, tok=TOK, **kw):
    base = dict(vocab_size=tok.size, d_model=32, n_layers=2, n_heads=4, n_kv_heads=1, d_ff=48, max_seq_len=96)
    base.update(kw)
    cfg = MAVConfig(**base)
    rng = np.random.default_rng(seed)
    w = {k: rng.normal(0, 0.25, size=s).astype(np.float32) for k, s in expected_shapes(cfg).items()}
    for k in w:
        if k.endswith("norm.weight"):
            w[k] = 1.0 + 0.1 * w[k]
    path = tmp_path / f"{name}.safetensors"
    info = {"game": "connect_four", "vocab_fingerprint": vocab_fingerprint(tok)}
    export_model(path, w, cfg, str(tok.version), info=info, dtype=dtype)
    return path, w, cfg


def random_prompts(n, seed, lo=5, hi=40):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        p = rng.integers(3, TOK.size, size=int(rng.integers(lo, hi)))
        p[rng.random(len(p)) < 0.15] = NL
        p[0] = TOK.bos_id
        out.append(p.tolist())
    return out


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_logits_match_torch(tmp_path, variant):
    torch = pytest.importorskip("torch")
    from mavgame.model.transformer import MAVTransformer
    path, w, cfg = make_model(tmp_path, **VARIANTS[variant])
    ref = MAVTransformer(cfg)
    ref.load_state_dict({k: torch.from_numpy(v) for k, v in w.items()}, strict=False)
    ref.eval()
    be = NativeBackend(path)
    for p in random_prompts(4, 1, hi=90):
        with torch.no_grad():
            want = ref(torch.tensor([p]))[0, -1].numpy()
        got = be.logits(p)
        assert got.dtype == np.float32 and got.shape == (cfg.vocab_size,)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("variant", ["mqa-swiglu-tied", "gqa-all"])
def test_v2_model_logits_match_torch(tmp_path, variant):
    """A model of vocabulary v2 (the trace keywords as tokens): the native engine reads it with v2 and gives the
    torch reference's logits on trace prompts, keyword tokens included; MAVModel picks the v2 tokenizer."""
    torch = pytest.importorskip("torch")
    from mavgame.mav.search_trace import build_search_tree, write_trace
    from mavgame.model.transformer import MAVTransformer
    tok2 = mav.Tokenizer(2)
    kw = dict(VARIANTS[variant], max_seq_len=512)
    if "newline_id" in kw:
        kw["newline_id"] = tok2.token_to_id("\n")
    path, w, cfg = make_model(tmp_path, tok=tok2, **kw)
    ref = MAVTransformer(cfg)
    ref.load_state_dict({k: torch.from_numpy(v) for k, v in w.items()}, strict=False)
    ref.eval()
    m = MAVModel.load(path, backend="native")
    assert m.tokenizer.version == 2 and m.backend.engine.vocab_version == "2" and m.cfg.vocab_size == 2732
    s = _core.State("connect_four")
    for a in (3, 3, 2):
        s.push(a)
    rng = np.random.default_rng(4)
    tree = build_search_tree(s, lambda st: ({mv: float(rng.random()) for mv in st.legal_moves}, None), 2, 2)
    text = write_trace(tree, 2, 1).text
    ids = [tok2.bos_id] + tok2.encode(text).tolist()
    assert max(ids) >= TOK.size and len(ids) < 400 and tok2.decode(ids) == text
    for n in (40, len(ids) // 2, len(ids)):
        with torch.no_grad():
            want = ref(torch.tensor([ids[:n]]))[0, -1].numpy()
        np.testing.assert_allclose(m.backend.logits(ids[:n]), want, rtol=1e-4, atol=1e-4)
    mt = MAVModel.load(path, backend="torch")
    assert mt.tokenizer.version == 2
    import pickle
    assert pickle.loads(pickle.dumps(MAVModel.load(path, backend="numpy"))).tokenizer.version == 2
    out_n, = m.generate([text[:200]], max_new_tokens=6, decoding="greedy")
    out_t, = mt.generate([text[:200]], max_new_tokens=6, decoding="greedy")
    assert out_n.ids == out_t.ids


def test_vocabulary_of_the_file_is_checked(tmp_path):
    """The native loader and MAVModel (every backend) refuse an unknown vocabulary version and a vocabulary
    size that does not match the declared version, naming the value; a v1 model keeps v1."""
    path, _, _ = make_model(tmp_path, name="v1")
    assert MAVModel.load(path, backend="native").tokenizer.version == 1

    def version(v):
        def mut(t, m):
            m["vocab_version"] = v
            return t, m
        return mut

    for name, mut, msg in (("v3", version("3"), r"unknown MAV vocabulary v3 \(vocab_version '3'"),
                           ("toy", version("toy"), "vocab_version 'toy'"),
                           ("v2size", version("2"),
                            r"vocabulary size 2723 does not match MAV vocabulary v2 \(2732 tokens\)")):
        p = _corrupt(tmp_path, name, mut)
        for backend in ("native", "numpy") + (("torch",) if importlib.util.find_spec("torch") else ()):
            with pytest.raises(ValueError, match=msg):
                MAVModel.load(p, backend=backend)
        assert str(p) in str(pytest.raises(ValueError, NativeBackend, p).value)
    p = _corrupt(tmp_path, "none", version(""))
    with pytest.raises(ValueError, match="declares no MAV vocabulary"):
        MAVModel.load(p, backend="native")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_generation_matches_numpy(tmp_path, variant):
    path, w, cfg = make_model(tmp_path, **VARIANTS[variant])
    ref = NumpyTransformer(w, cfg)
    nat = NativeBackend(path)
    prompts = random_prompts(6, 2)
    buckets = TOK.bucket_ids.tolist()
    for group in (None, list(range(100, 400))):
        a = generate_ids(ref, prompts, 20, stop_ids=[TOK.eos_id, NL], bucket_ids=buckets, group_ids=group)
        b = generate_ids(nat, prompts, 20, stop_ids=[TOK.eos_id, NL], bucket_ids=buckets, group_ids=group)
        for x, y in zip(a, b):
            assert x.ids == y.ids and x.finished == y.finished and x.value_steps == y.value_steps
            np.testing.assert_allclose(x.value_probs, y.value_probs, atol=1e-4)


def tree_prompts(seed, scale=1):
    """Prompts with shared prefixes at several depths (a header, groups, subgroups with newlines inside),
    duplicates, a prompt that is a prefix of others, one-token prompts and an unrelated prompt; shuffled.
    ``scale`` multiplies the lengths of the parts."""
    rng = np.random.default_rng(seed)

    def seg(lo, hi):
        p = rng.integers(3, TOK.size, size=int(rng.integers(lo * scale, hi * scale)))
        p[rng.random(len(p)) < 0.2] = NL
        return p.tolist()

    head = [TOK.bos_id] + seg(6, 12)
    out = []
    for _ in range(3):
        mid = head + seg(3, 8)
        out.append(mid)                          # a prompt that is a prefix of its group
        for _ in range(2):
            sub = mid + seg(2, 6)
            out += [sub + seg(1, 4), sub + seg(1, 4), sub + seg(1, 3)]
    out += [out[3], out[3], head[:1], head[:1], [TOK.bos_id] + seg(20, 30)]
    order = rng.permutation(len(out))
    return [out[i] for i in order]


def tree_saved(prompts):
    """Prompt tokens a prefix tree saves: every distinct proper prefix computed once, every prompt's last
    token computed by the prompt itself (once for a prompt whose whole text is another's proper prefix)."""
    proper = {tuple(p[:t]) for p in prompts for t in range(1, len(p))}
    computed = len(proper) + len(prompts) - len({tuple(p) for p in prompts} & proper)
    return sum(map(len, prompts)) - computed


@pytest.mark.parametrize("variant", ["mha-abs-line", "gqa-all"])
def test_prefix_tree_sharing_is_bit_identical(tmp_path, variant):
    """Sharing per group of prompts (a prefix tree of the batch, not only the common prefix of all of them)
    gives bit-identical ids and bucket distributions for sharing on and off, 1 and 2 threads and batch
    splits, and saves exactly the tokens of the tree's shared nodes; the line positions of a copied prefix
    continue where the prefix left its line."""
    path, _, _ = make_model(tmp_path, max_seq_len=128, **VARIANTS[variant])
    prompts = tree_prompts(3)
    args = (prompts, 12, [TOK.eos_id])
    kw = dict(bucket_ids=TOK.bucket_ids.tolist(), group_ids=list(range(100, 400)))
    runs = []
    for threads, max_batch, sharing in ((1, 64, False), (1, 64, True), (2, 64, True), (2, 7, True), (1, 1, True)):
        eng = _core.MavEngine(str(path), threads=threads, max_batch=max_batch)
        runs.append(eng.generate(*args, prefix_sharing=sharing, **kw))
        st = eng.stats()
        assert st["prefill_tokens"] + st["shared_saved"] == st["prompt_tokens"] == sum(map(len, prompts))
        if max_batch == 64:
            assert st["shared_saved"] == (tree_saved(prompts) if sharing else 0)
    common = 1  # the common prefix of the whole batch is the one-token prompt: the old scheme saved ~nothing
    assert tree_saved(prompts) > 10 * common * len(prompts)
    for run in runs[1:]:
        for (ids_a, steps_a, probs_a, fin_a), (ids_b, steps_b, probs_b, fin_b) in zip(runs[0], run):
            np.testing.assert_array_equal(ids_a, ids_b)
            np.testing.assert_array_equal(steps_a, steps_b)
            np.testing.assert_array_equal(probs_a, probs_b)  # bit for bit
            assert fin_a == fin_b
    for p, (ids, _, _, _) in zip(prompts[:4], runs[1]):
        alone = _core.MavEngine(str(path)).generate([p], 12, [TOK.eos_id], **kw)[0][0]
        np.testing.assert_array_equal(ids, alone)


def test_prompts_of_one_request_share_a_cached_prefix_through_the_batch(tmp_path):
    """Prompts of one request that meet the same cached prefix: the first fetches it from the cache, the
    others copy it from that prompt's slot (so that the CUDA decode reads it once for the group)."""
    path, _, _ = make_model(tmp_path, max_seq_len=96)
    rng = np.random.default_rng(3)
    head = rng.integers(10, 60, size=32).tolist()                 # exactly two 16-token cache blocks
    p1, p2, p3 = (head + rng.integers(60 + 20 * i, 80 + 20 * i, size=9).tolist() for i in range(3))
    kw = dict(bucket_ids=TOK.bucket_ids.tolist(), group_ids=list(range(100, 400)))
    eng = _core.MavEngine(str(path), prefix_cache=4096)
    eng.generate([p1], 4, [TOK.eos_id], **kw)
    before = eng.stats()
    outs = eng.generate([p2, p3], 4, [TOK.eos_id], **kw)
    st = eng.stats()
    assert st["cache_saved"] - before["cache_saved"] == 32         # one fetch, not two
    assert st["shared_saved"] - before["shared_saved"] == 64       # the other prompt copies from its slot
    ref = _core.MavEngine(str(path))
    for p, out in zip((p2, p3), outs):
        np.testing.assert_array_equal(out[0], ref.generate([p], 4, [TOK.eos_id], **kw)[0][0])


@pytest.mark.parametrize("variant", ["mqa-swiglu-tied", "gqa-all"])
def test_cross_batch_prefix_cache_is_bit_identical(tmp_path, variant):
    """The engine's cross-batch prefix cache (16-token KV blocks kept between requests): prefixes met in an
    earlier request are copied, with bit-identical results, also when a small budget forces replacement."""
    path, _, _ = make_model(tmp_path, max_seq_len=128, **VARIANTS[variant])
    prompts = tree_prompts(4, scale=3)   # 3-90 tokens: chains of up to 5 blocks
    assert max(map(len, prompts)) <= 100
    kw = dict(bucket_ids=TOK.bucket_ids.tolist(), group_ids=list(range(100, 400)))
    ref = _core.MavEngine(str(path))
    base = [ref.generate([p], 10, [TOK.eos_id], **kw)[0] for p in prompts]
    for budget, max_batch in ((4096, 64), (4096, 3), (48, 4), (16, 2)):
        eng = _core.MavEngine(str(path), max_batch=max_batch, prefix_cache=budget)
        assert eng.stats()["cache_saved"] == 0
        outs = []
        for start in range(0, len(prompts), 5):   # requests of 5 prompts: later ones meet earlier prefixes
            outs += eng.generate(prompts[start:start + 5], 10, [TOK.eos_id], **kw)
        first = eng.stats()["cache_saved"]
        outs += eng.generate(prompts, 10, [TOK.eos_id], **kw)   # all again
        st = eng.stats()
        assert st["prefill_tokens"] + st["shared_saved"] == st["prompt_tokens"]
        assert st["cache_saved"] <= st["shared_saved"]
        if budget >= 48:   # one block (budget 16) is overwritten by every chunk: hits are a matter of luck
            assert 0 < first < st["cache_saved"]
        for a, b in zip(base * 2, outs[:len(prompts)] + outs[len(prompts):]):
            for x, y in zip(a[:3], b[:3]):
                np.testing.assert_array_equal(x, y)   # bit for bit
            assert a[3] == b[3]
        off = eng.generate(prompts[:3], 10, [TOK.eos_id], prefix_sharing=False, **kw)
        assert eng.stats()["cache_saved"] == st["cache_saved"]   # sharing off: the cache is not used
        for a, b in zip(base[:3], off):
            np.testing.assert_array_equal(a[0], b[0])
    with pytest.raises(ValueError, match="prefix cache size must be >= 0 tokens, got -1"):
        _core.MavEngine(str(path), prefix_cache=-1)


def test_prefix_cache_resized_on_a_live_engine(tmp_path):
    """set_prefix_cache resizes and empties the cross-batch cache of an engine made without one; results stay
    bit-identical; NativeBackend.ensure_prefix_cache only grows it, and pickling keeps its size."""
    import pickle
    path, _, _ = make_model(tmp_path, max_seq_len=128)
    prompts = tree_prompts(2, scale=3)
    kw = dict(bucket_ids=TOK.bucket_ids.tolist(), group_ids=list(range(100, 400)))
    eng = _core.MavEngine(str(path))
    base = eng.generate(prompts, 8, [TOK.eos_id], **kw)
    assert eng.prefix_cache == 0 and eng.stats()["cache_saved"] == 0
    eng.set_prefix_cache(2048)
    assert eng.prefix_cache == 2048
    eng.generate(prompts, 8, [TOK.eos_id], **kw)
    again = eng.generate(prompts, 8, [TOK.eos_id], **kw)
    assert eng.stats()["cache_saved"] > 0
    for a, b in zip(base, again):
        np.testing.assert_array_equal(a[0], b[0])
    eng.set_prefix_cache(0)
    assert eng.prefix_cache == 0
    for bad in (-1, 1 << 25):
        with pytest.raises(ValueError, match=f"got {bad}"):
            eng.set_prefix_cache(bad)
    with pytest.raises(TypeError):
        eng.set_prefix_cache("many")
    nb = NativeBackend(path)
    nb.ensure_prefix_cache(1024)
    nb.ensure_prefix_cache(512)
    assert nb.engine.prefix_cache == 1024
    assert pickle.loads(pickle.dumps(nb)).engine.prefix_cache == 1024


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_files(tmp_path, dtype):
    path, w, cfg = make_model(tmp_path, dtype=dtype)
    path32, _, _ = make_model(tmp_path, name="f32")
    ref = MAVModel.load(path, backend="numpy").backend      # the NumPy loader widens the same file
    nat = NativeBackend(path)
    assert nat.engine.file_dtype == {"float16": "F16", "bfloat16": "BF16"}[dtype]
    cache = ref.new_cache(1, 64)
    p = random_prompts(1, 3)[0]
    want = ref.forward(np.array([p]), np.arange(len(p))[None], np.ones((1, len(p)), bool), cache)[0]
    np.testing.assert_allclose(nat.logits(p), want, rtol=1e-4, atol=1e-4)
    assert not np.allclose(NativeBackend(path32).logits(p), want, atol=1e-6)   # it did read the rounded weights


def fresh_prompts(n=24, seed=12345):
    """Plain and transition prompts of positions from random Connect Four games (not the training data)."""
    rng = np.random.default_rng(seed)
    prompts = []
    while len(prompts) < n:
        s = mavgame.State("connect_four")
        prev, mv = None, None
        for _ in range(int(rng.integers(0, 20))):
            if s.is_terminal():
                break
            prev = s.copy()
            mv = str(rng.choice(list(s.legal_moves)))
            s.push(mv)
        prompts.append(mav.prompt(s, PLAIN))
        if prev is not None:
            prompts.append(mav.prompt(s, TRANSITION, prev_state=prev, prev_action=mv))
    return prompts[:n]


@pytest.fixture(scope="module")
def shipped():
    try:
        path = shipped_model_path("connect_four")
    except FileNotFoundError:
        pytest.skip("no Connect Four MAV shipped")
    return path


def test_shipped_model_same_outputs_as_numpy(shipped):
    prompts = fresh_prompts()
    assert sum("%prev_state" in p for p in prompts) >= 8
    nat = MAVModel.load(shipped, backend="native")
    ref = MAVModel.load(shipped, backend="numpy")
    a, b = nat.generate(prompts), ref.generate(prompts)
    assert sum(len(x.value_dists) for x in a) > 0
    for x, y in zip(a, b):
        assert x.text == y.text and x.ids == y.ids and x.finished == y.finished
        assert x.value_dists.keys() == y.value_dists.keys()
        for mv in x.value_dists:
            np.testing.assert_allclose(x.value_dists[mv], y.value_dists[mv], atol=1e-4)
    for x, y in zip(nat.generate(prompts[:6], decoding="greedy"), ref.generate(prompts[:6], decoding="greedy")):
        assert x.text == y.text


def test_shipped_model_threads_and_prefix_sharing_change_nothing(shipped):
    prompts = fresh_prompts(16, seed=7)
    outs = []
    for threads, sharing in ((1, False), (2, False), (2, True), (1, True)):
        m = MAVModel.load(shipped, backend="native", threads=threads)
        m.backend.prefix_sharing = sharing
        assert m.backend.engine.threads == threads
        outs.append(m.generate(prompts))
        st = m.backend.stats()
        assert (st["shared_saved"] > 0) == sharing
        assert st["prefill_tokens"] + st["shared_saved"] == st["prompt_tokens"]
    for o in outs[1:]:
        for x, y in zip(outs[0], o):
            assert x.ids == y.ids
            for mv in x.value_dists:
                assert np.array_equal(x.value_dists[mv], y.value_dists[mv])   # bit for bit


def test_default_backend_is_native(shipped):
    m = MAVModel.load(shipped)
    assert isinstance(m.backend, NativeBackend)
    assert m.game == "connect_four" and m.cfg.vocab_size == TOK.size
    import pickle
    m2 = pickle.loads(pickle.dumps(m))
    p = fresh_prompts(2)
    assert [o.text for o in m2.generate(p)] == [o.text for o in m.generate(p)]


def _corrupt(tmp_path, name, mutate):
    path, _, _ = make_model(tmp_path, name="good")
    tensors, meta = load_safetensors(path)
    tensors, meta = mutate(dict(tensors), dict(meta))
    out = tmp_path / f"{name}.safetensors"
    save_safetensors(out, tensors, meta)
    return out


def test_bad_model_files_raise_clear_errors(tmp_path):
    path, _, _ = make_model(tmp_path, name="good")
    raw = path.read_bytes()
    bad = tmp_path / "trunc.safetensors"
    bad.write_bytes(raw[:len(raw) - 10])
    with pytest.raises(ValueError, match="outside the"):
        NativeBackend(bad)
    bad.write_bytes(raw[:4])
    with pytest.raises(ValueError, match="only 4 bytes"):
        NativeBackend(bad)
    bad.write_bytes(struct.pack("<Q", 10 ** 12) + raw[8:])
    with pytest.raises(ValueError, match="header length"):
        NativeBackend(bad)
    with pytest.raises(FileNotFoundError):
        MAVModel.load(tmp_path / "missing.safetensors", backend="native")
    bad.write_bytes(b"")  # a regular file is memory-mapped; an empty one cannot be, same error path
    with pytest.raises(ValueError, match="only 0 bytes"):
        NativeBackend(bad)

    def drop(t, m):
        del t["blocks.1.mlp.up.weight"]
        return t, m

    def reshape(t, m):
        t["blocks.0.attn.wk.weight"] = np.zeros((4, 4), np.float32)
        return t, m

    def ints(t, m):
        t["norm.weight"] = np.zeros(32, np.int32)
        return t, m

    def fmt(t, m):
        m["format"] = "gguf"
        return t, m

    def cfg(t, m):
        c = json.loads(m["config"])
        c["n_kv_heads"] = 3
        m["config"] = json.dumps(c)
        return t, m

    for name, mut, msg in (("drop", drop, "'blocks.1.mlp.up.weight' is missing"),
                           ("reshape", reshape, "'blocks.0.attn.wk.weight' has shape \\(4, 4\\)"),
                           ("ints", ints, "'norm.weight' has dtype I32"),
                           ("fmt", fmt, "not a mavgame MAV model"),
                           ("cfg", cfg, "n_kv_heads")):
        p = _corrupt(tmp_path, name, mut)
        with pytest.raises(ValueError, match=msg):
            MAVModel.load(p, backend="native")
        assert str(p) in str(pytest.raises(ValueError, NativeBackend, p).value)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no named pipes here")
def test_model_from_a_pipe_loads_like_the_mapped_file(tmp_path):
    """A regular file is memory-mapped; a file that cannot be (a named pipe) is read instead: same model."""
    import os
    import threading

    path, _, _ = make_model(tmp_path)
    fifo = tmp_path / "pipe.safetensors"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(path.read_bytes()))
    writer.start()
    try:
        piped = _core.MavEngine(str(fifo))
    finally:
        writer.join()
    mapped = _core.MavEngine(str(path))
    assert piped.config_json == mapped.config_json and piped.n_params == mapped.n_params
    prompt = random_prompts(1, seed=5)[0]
    np.testing.assert_array_equal(mapped.logits(prompt), piped.logits(prompt))
    np.testing.assert_array_equal(mapped.generate([prompt], 6, [TOK.eos_id])[0][0],
                                  piped.generate([prompt], 6, [TOK.eos_id])[0][0])


def test_bad_requests(tmp_path):
    path, _, cfg = make_model(tmp_path)
    be = NativeBackend(path)
    with pytest.raises(ValueError, match="prompt 1 is empty"):
        be.generate_ids([[1, 5], []], 4, [TOK.eos_id])
    with pytest.raises(ValueError, match="outside"):
        be.generate_ids([[1, 5, TOK.size]], 4, [TOK.eos_id])
    with pytest.raises(ValueError, match="max_seq_len"):
        be.generate_ids([[1] * cfg.max_seq_len], 4, [TOK.eos_id])
    with pytest.raises(ValueError, match="stop id"):
        be.generate_ids([[1, 5]], 4, [-3])
    with pytest.raises(ValueError, match="prompt 0"):
        be.engine.generate([[[1, 2]]], 4, [2])
    with pytest.raises(ValueError, match="out of range"):
        be.engine.generate([[1, 2 ** 32 + 5]], 4, [2])       # not silently wrapped to id 5
    with pytest.raises(ValueError, match="integer token ids"):
        be.engine.generate([[1.0, 2.5]], 4, [2])
    with pytest.raises(ValueError, match="integer token ids"):
        be.engine.logits([[1, 2]])
    assert be.generate_ids([[1, 5]], 0, [2])[0].ids == []
    with pytest.raises(ValueError, match="threads"):
        _core.MavEngine(str(path), threads=0)


def test_from_module_native_matches_torch(tmp_path):
    torch = pytest.importorskip("torch")
    from mavgame.model.transformer import MAVTransformer
    cfg = MAVConfig(vocab_size=TOK.size, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=48, max_seq_len=96,
                    line_pos=4, newline_id=NL)
    torch.manual_seed(0)
    module = MAVTransformer(cfg)
    a = MAVModel.from_module(module, "connect_four")
    b = MAVModel.from_module(module, "connect_four", backend="native")
    assert isinstance(b.backend, NativeBackend) and b.game == "connect_four"
    assert isinstance(MAVModel.from_module(module, "connect_four", backend="auto").backend, NativeBackend)
    prompts = fresh_prompts(6, seed=3)
    for x, y in zip(a.generate(prompts, max_new_tokens=12), b.generate(prompts, max_new_tokens=12)):
        assert x.ids == y.ids


# ---- the SIMD matmul kernels (csrc/model/matmul.c): AVX-512 and AVX2 give the same bits -------------------

def _cpu_flags() -> set:
    """The CPU's feature flags from /proc/cpuinfo (empty where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


HAVE_AVX2 = {"avx2", "fma"} <= _cpu_flags()
HAVE_AVX512 = HAVE_AVX2 and {"avx512f", "avx512vl"} <= _cpu_flags()
needs_avx512 = pytest.mark.skipif(not HAVE_AVX512, reason="this CPU has no AVX-512 (avx512f/avx512vl): "
                                  "the AVX-512 kernel cannot run here")


def _engine(path, kernel, monkeypatch, **kw):
    """A MavEngine created with MAVGAME_SIMD=kernel."""
    monkeypatch.setenv("MAVGAME_SIMD", kernel)
    try:
        return _core.MavEngine(str(path), **kw)
    finally:
        monkeypatch.delenv("MAVGAME_SIMD")


@pytest.mark.skipif(not HAVE_AVX2, reason="this CPU has no AVX2/FMA")
def test_kernel_selection_and_names(tmp_path, monkeypatch):
    """The default kernel is the best the CPU runs; MAVGAME_SIMD picks one at creation; simd=False wins."""
    path, _, _ = make_model(tmp_path)
    monkeypatch.delenv("MAVGAME_SIMD", raising=False)
    assert _core.MavEngine(str(path)).kernel == ("avx512" if HAVE_AVX512 else "avx2-fma")
    assert _engine(path, "avx2", monkeypatch).kernel == "avx2-fma"
    assert _engine(path, "portable", monkeypatch).kernel == "portable"
    assert _engine(path, "auto", monkeypatch).kernel == _core.MavEngine(str(path)).kernel
    assert _engine(path, "avx2", monkeypatch, simd=False).kernel == "portable"
    with pytest.raises(ValueError, match="MAVGAME_SIMD='avx9000' names no matmul kernel"):
        _engine(path, "avx9000", monkeypatch)
    if not HAVE_AVX512:
        with pytest.raises(ValueError, match="MAVGAME_SIMD='avx512': this CPU cannot run"):
            _engine(path, "avx512", monkeypatch)


@needs_avx512
@pytest.mark.parametrize("dims", [dict(d_model=32, d_ff=48),
                                  dict(d_model=40, d_ff=52, n_heads=2, n_kv_heads=2, mlp="geglu", tie_embeddings=False)])
def test_avx512_logits_bit_identical_to_avx2_random_models(tmp_path, monkeypatch, dims):
    """Ragged widths (40, 52: partial panels) and prompts of every length (ragged row counts): the same bits."""
    path, _, _ = make_model(tmp_path, **dims)
    e512, e2 = _engine(path, "avx512", monkeypatch), _engine(path, "avx2", monkeypatch)
    assert (e512.kernel, e2.kernel) == ("avx512", "avx2-fma")
    for p in random_prompts(12, seed=3, lo=1, hi=60):
        a, b = e512.logits(p), e2.logits(p)
        assert np.isfinite(a).all() and np.array_equal(a, b)


@needs_avx512
def test_avx512_shipped_model_bit_identical_to_avx2(shipped, monkeypatch):
    """The shipped model's logits (vocabulary 2723: a partial last panel) and batched generations are the
    same bits with either kernel, on 1 and 2 threads."""
    prompts = fresh_prompts(16, seed=99)
    for threads in (1, 2):
        e512 = _engine(shipped, "avx512", monkeypatch, threads=threads)
        e2 = _engine(shipped, "avx2", monkeypatch, threads=threads)
        assert (e512.kernel, e2.kernel) == ("avx512", "avx2-fma")
        tok = mav.Tokenizer(int(e512.vocab_version))
        for text in prompts[:8]:
            ids = [tok.bos_id] + tok.encode(text).tolist()
            a, b = e512.logits(ids), e2.logits(ids)
            assert np.isfinite(a).all() and np.array_equal(a, b)
    outs = []
    for kernel in ("avx512", "avx2"):
        monkeypatch.setenv("MAVGAME_SIMD", kernel)
        m = MAVModel.load(shipped, backend="native")
        monkeypatch.delenv("MAVGAME_SIMD")
        assert m.backend.engine.kernel == {"avx512": "avx512", "avx2": "avx2-fma"}[kernel]
        outs.append(m.generate(prompts))
    assert sum(len(x.value_dists) for x in outs[0]) > 0
    for x, y in zip(*outs):
        assert x.ids == y.ids and x.value_dists.keys() == y.value_dists.keys()
        for mv in x.value_dists:
            assert np.array_equal(x.value_dists[mv], y.value_dists[mv])
