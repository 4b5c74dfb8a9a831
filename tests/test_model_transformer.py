"""The reference MAV transformer: shapes, causality, padding, KV cache equivalence, NumPy agreement."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mavgame.model.config import MAVConfig  # noqa: E402
from mavgame.model.inference import NumpyTransformer, generate_ids  # noqa: E402
from mavgame.model.inference.backends import _TorchBackend  # noqa: E402
from mavgame.model.transformer import KVCache, MAVTransformer, greedy_generate, left_pad  # noqa: E402

CONFIGS = [
    dict(vocab_size=61, d_model=48, n_layers=2, n_heads=6, n_kv_heads=2, d_ff=96, max_seq_len=64),
    dict(vocab_size=61, d_model=32, n_layers=3, n_heads=4, n_kv_heads=1, d_ff=80, max_seq_len=64,
         mlp="geglu", tie_embeddings=False),
    dict(vocab_size=61, d_model=32, n_layers=1, n_heads=4, n_kv_heads=4, d_ff=64, max_seq_len=64),
    dict(vocab_size=61, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64, max_seq_len=64, abs_pos=True),
    dict(vocab_size=61, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64, max_seq_len=64, line_pos=9,
         newline_id=7),
]


def make(i, scale=1.0):
    torch.manual_seed(1234 + i)
    cfg = MAVConfig(**CONFIGS[i])
    m = MAVTransformer(cfg).eval()
    if scale != 1.0:  # larger weights give peaked, non-trivial greedy outputs
        with torch.no_grad():
            for p in m.parameters():
                if p.dim() == 2:
                    p.mul_(scale)
    return cfg, m


@pytest.mark.parametrize("i", range(len(CONFIGS)))
def test_shapes_and_parameter_count(i):
    cfg, m = make(i)
    x = torch.randint(0, cfg.vocab_size, (3, 17))
    assert m(x).shape == (3, 17, cfg.vocab_size)
    assert m(x, return_hidden=True).shape == (3, 17, cfg.d_model)
    assert sum(p.numel() for p in m.parameters()) == cfg.num_parameters()


@pytest.mark.parametrize("i", range(len(CONFIGS)))
def test_causal(i):
    cfg, m = make(i)
    x = torch.randint(0, cfg.vocab_size, (2, 20))
    y = x.clone()
    y[:, 11:] = (y[:, 11:] + 7) % cfg.vocab_size
    a, b = m(x), m(y)
    assert torch.allclose(a[:, :11], b[:, :11], atol=1e-6)
    assert not torch.allclose(a[:, 11:], b[:, 11:], atol=1e-3)


@pytest.mark.parametrize("i", range(len(CONFIGS)))
def test_kv_cache_matches_full_forward(i):
    cfg, m = make(i)
    x = torch.randint(0, cfg.vocab_size, (3, 24))
    full = m(x)
    cache = KVCache(cfg, 3, 30)
    parts = [m(x[:, :9], cache=cache)]
    parts += [m(x[:, t:t + 1], cache=cache) for t in range(9, 16)]
    parts.append(m(x[:, 16:], cache=cache))
    assert cache.length == 24
    torch.testing.assert_close(torch.cat(parts, 1), full, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("i", range(len(CONFIGS)))
def test_left_padding_matches_unpadded(i):
    cfg, m = make(i)
    seqs = [torch.randint(0, cfg.vocab_size, (n,)).tolist() for n in (13, 5, 9)]
    toks, pos, valid = left_pad(seqs, pad_id=0)
    out = m(toks, positions=pos, key_valid=valid)
    for b, s in enumerate(seqs):
        alone = m(torch.tensor([s]))[0]
        torch.testing.assert_close(out[b, -len(s):], alone, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("i", range(len(CONFIGS)))
def test_greedy_generation_batched_equals_one_by_one(i):
    cfg, m = make(i, scale=3.0)
    prompts = [torch.randint(1, cfg.vocab_size, (n,)).tolist() for n in (11, 4, 7, 1)]
    batched, _ = greedy_generate(m, prompts, 12, stop_id=0)
    for k, (p, o) in enumerate(zip(prompts, batched)):
        single, _ = greedy_generate(m, [p], 12, stop_id=0)
        assert single[0] == o
        if k >= 2:
            continue
        # greedy by definition: each token is the argmax of a full forward over prompt + output so far
        seq = list(p)
        for t in o:
            assert int(m(torch.tensor([seq]))[0, -1].argmax()) == t
            seq.append(t)


@pytest.mark.parametrize("i", range(len(CONFIGS)))
def test_numpy_forward_and_generation_agree_with_torch(i):
    cfg, m = make(i, scale=3.0)
    w = {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}
    npm = NumpyTransformer(w, cfg)
    x = torch.randint(0, cfg.vocab_size, (2, 15))
    np.testing.assert_allclose(npm.logits_all(x.numpy()), m(x).detach().numpy(), atol=1e-4, rtol=1e-4)
    prompts = [torch.randint(1, cfg.vocab_size, (n,)).tolist() for n in (9, 3, 6)]
    buckets = list(range(cfg.vocab_size - 40, cfg.vocab_size))
    a = generate_ids(npm, prompts, 15, stop_ids=[0], bucket_ids=buckets)
    b = generate_ids(_TorchBackend.from_module(m), prompts, 15, stop_ids=[0], bucket_ids=buckets)
    for ga, gb in zip(a, b):
        assert ga.ids == gb.ids and ga.value_steps == gb.value_steps
        assert all(ga.ids[s] in buckets for s in ga.value_steps)
        np.testing.assert_allclose(ga.value_probs, gb.value_probs, atol=1e-5)
        if ga.value_steps:
            np.testing.assert_allclose(ga.value_probs.sum(1), 1.0, atol=1e-5)


def test_bad_inputs_are_clear_errors():
    cfg, m = make(0)
    with pytest.raises(ValueError, match="max_seq_len"):
        m(torch.zeros((1, cfg.max_seq_len + 1), dtype=torch.long))
    with pytest.raises(ValueError, match="batch, time"):
        m(torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="n_kv_heads"):
        MAVConfig(vocab_size=10, d_model=32, n_heads=4, n_kv_heads=3)
    with pytest.raises(ValueError, match="mlp"):
        MAVConfig(vocab_size=10, mlp="relu")
    with pytest.raises(ValueError, match="unknown MAVConfig fields"):
        MAVConfig.from_dict({"vocab_size": 10, "width": 3})
    with pytest.raises(ValueError, match="empty"):
        greedy_generate(m, [[1, 2], []], 3, stop_id=0)


def test_line_positions_count_from_each_newline():
    from mavgame.model.transformer import line_positions
    toks = torch.tensor([[1, 5, 7, 3, 4, 7, 8, 9], [0, 0, 1, 7, 7, 2, 3, 4]])
    pos = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7], [0, 0, 0, 1, 2, 3, 4, 5]])   # row 1 left-padded by two
    lp, nxt = line_positions(toks, pos, newline_id=7, n=9)
    assert lp.tolist() == [[0, 1, 2, 0, 1, 2, 0, 1], [0, 0, 0, 1, 0, 0, 1, 2]]
    assert nxt.tolist() == [6, 3]
    # continued in chunks through the cache state: the same indices
    a, s = line_positions(toks[:, :4], pos[:, :4], 7, 9)
    b, s2 = line_positions(toks[:, 4:], pos[:, 4:], 7, 9, s)
    assert torch.cat([a, b], 1).tolist() == lp.tolist() and s2.tolist() == nxt.tolist()
    lp3, _ = line_positions(toks, pos, 7, 2)          # clamped at n - 1
    assert lp3.max().item() == 1
    cfg, m = make(len(CONFIGS) - 1)
    # the model's output depends on the line index: moving a newline changes later logits
    x = torch.tensor([[1, 2, 3, 7, 4, 5, 6, 8]])
    y = torch.tensor([[1, 2, 7, 3, 4, 5, 6, 8]])
    with torch.no_grad():
        assert not torch.allclose(m(x)[0, -1], m(y)[0, -1])
    with pytest.raises(ValueError, match="newline_id"):
        MAVConfig(vocab_size=61, line_pos=4)
