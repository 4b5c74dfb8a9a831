"""safetensors export of MAV models (NumPy only: no torch needed) and its error handling."""
import json
import struct

import numpy as np
import pytest

from mavgame.model.config import MAVConfig
from mavgame.model.export import (bf16_bits_to_float32, expected_shapes, export_model, float32_to_bf16_bits,
                                  load_exported, load_safetensors, save_safetensors)
from mavgame.model.inference import NumpyTransformer, generate_ids


def random_weights(cfg, seed=0):
    rng = np.random.default_rng(seed)
    return {k: rng.normal(0, 0.3, size=s).astype(np.float32) for k, s in expected_shapes(cfg).items()}


def test_safetensors_roundtrip_and_layout(tmp_path):
    t = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, -2], np.int64),
         "c": np.ones((0, 4), np.float16), "d": np.array(True)}
    p = tmp_path / "x.safetensors"
    save_safetensors(p, t, {"k": "v"})
    raw = p.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    header = json.loads(raw[8:8 + n])
    assert header["__metadata__"] == {"k": "v"}
    assert header["a"] == {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}
    assert header["b"]["dtype"] == "I64"
    assert np.frombuffer(raw[8 + n:8 + n + 24], "<f4").tolist() == [0, 1, 2, 3, 4, 5]
    got, meta = load_safetensors(p)
    assert meta == {"k": "v"}
    for k in t:
        assert got[k].dtype == t[k].dtype and np.array_equal(got[k], t[k])


def test_bf16_rounding():
    x = np.array([1.0, -2.5, 3.14159, 1e-3, 65504.0, 0.0], np.float32)
    y = bf16_bits_to_float32(float32_to_bf16_bits(x))
    assert np.all(np.abs(y - x) <= np.abs(x) * 2 ** -8)
    assert float32_to_bf16_bits(np.array([1.0], np.float32))[0] == 0x3F80
    # round to nearest even: 1 + 2^-8 is halfway between bf16 1.0 and 1 + 2^-7, goes to even (1.0)
    assert bf16_bits_to_float32(float32_to_bf16_bits(np.array([1 + 2 ** -8], np.float32)))[0] == 1.0


@pytest.mark.parametrize("dtype,tol", [("float32", 0), ("float16", 1e-3), ("bfloat16", 1e-2)])
def test_export_and_load_model(tmp_path, dtype, tol):
    cfg = MAVConfig(vocab_size=40, d_model=16, n_layers=2, n_heads=2, n_kv_heads=1, d_ff=32, max_seq_len=32)
    w = random_weights(cfg)
    p = tmp_path / "m.safetensors"
    export_model(p, w, cfg, "vocab-7", info={"steps": 12}, dtype=dtype)
    w2, cfg2, vv, info = load_exported(p)
    assert cfg2 == cfg and vv == "vocab-7" and info == {"steps": 12}
    for k in w:
        np.testing.assert_allclose(w2[k], w[k], atol=tol * 2, rtol=tol)
    size = p.stat().st_size
    assert size >= cfg.num_parameters() * (4 if dtype == "float32" else 2)


def test_exported_model_runs_with_numpy(tmp_path):
    cfg = MAVConfig(vocab_size=40, d_model=16, n_layers=2, n_heads=2, n_kv_heads=1, d_ff=32, max_seq_len=32)
    p = tmp_path / "m.safetensors"
    export_model(p, random_weights(cfg, 3), cfg, "v")
    w, cfg2, _, _ = load_exported(p)
    m = NumpyTransformer(w, cfg2)
    gens = generate_ids(m, [[1, 2, 3], [4]], 10, stop_ids=[0], bucket_ids=list(range(8, 40)))
    for g in gens:
        assert 1 <= len(g.ids) <= 10 and all(0 <= t < 40 for t in g.ids)
        assert g.value_probs.shape == (len(g.value_steps), 32)
    # the cache path gives the same next token as a from-scratch pass over prompt + generated tokens
    seq = [1, 2, 3] + gens[0].ids[:-1]
    logits = m.logits_all(np.array([seq]))
    assert int(np.argmax(logits[0, -1])) == gens[0].ids[-1]


def test_bad_files_are_clear_errors(tmp_path):
    cfg = MAVConfig(vocab_size=40, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32, max_seq_len=32)
    p = tmp_path / "m.safetensors"
    export_model(p, random_weights(cfg), cfg, "v")
    raw = p.read_bytes()
    cases = {
        "short": (raw[:5], "not a safetensors file"),
        "hlen": (struct.pack("<Q", 10 ** 12) + raw[8:], "header length"),
        "json": (raw[:8] + b"x" + raw[9:], "header JSON"),
        "trunc": (raw[:-10], "outside"),
    }
    for name, (data, msg) in cases.items():
        q = tmp_path / f"{name}.safetensors"
        q.write_bytes(data)
        with pytest.raises(ValueError, match=msg):
            load_exported(q)
    w = random_weights(cfg)
    w["embed.weight"] = w["embed.weight"][:, :8]
    with pytest.raises(ValueError, match="embed.weight"):
        export_model(tmp_path / "bad.safetensors", w, cfg, "v")
    save_safetensors(tmp_path / "plain.safetensors", {"x": np.zeros(3, np.float32)})
    with pytest.raises(ValueError, match="not a mavgame MAV model"):
        load_exported(tmp_path / "plain.safetensors")
