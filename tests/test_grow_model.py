"""``python -m mavgame.model.grow``: a model grown deeper or wider computes the same logits, and its new blocks
can learn."""
import subprocess
import sys

import numpy as np
import pytest

from mavgame import mav
from mavgame.model.config import MAVConfig
from mavgame.model.export import expected_shapes, export_model, load_exported
from mavgame.model.inference import NumpyTransformer
from mavgame.model.grow import grow


TOK = mav.Tokenizer()


def model(seed=0):
    cfg = MAVConfig(vocab_size=TOK.size, d_model=16, n_layers=3, n_heads=2, n_kv_heads=1, d_ff=24,
                    max_seq_len=64, line_pos=4, newline_id=TOK.token_to_id("\n"))
    rng = np.random.default_rng(seed)
    return {k: rng.normal(0, 0.3, size=s).astype(np.float32) for k, s in expected_shapes(cfg).items()}, cfg


def logits(w, cfg):
    be = NumpyTransformer(w, cfg)
    rng = np.random.default_rng(5)
    toks = rng.integers(3, TOK.size, size=(3, 12))
    pos = np.tile(np.arange(12), (3, 1))
    return be.forward(toks, pos, np.ones((3, 12), bool), be.new_cache(3, 16))


@pytest.mark.parametrize("layers,d_ff", [(3, 0), (6, 0), (7, 0), (4, 40), (0, 48)])
def test_grown_model_computes_the_same(layers, d_ff):
    w, cfg = model()
    g, gcfg = grow(w, cfg, layers, d_ff)
    assert gcfg.n_layers == (layers or 3) and gcfg.d_ff == (d_ff or 24)
    assert set(g) == set(expected_shapes(gcfg))
    for k, s in expected_shapes(gcfg).items():
        assert g[k].shape == s
    np.testing.assert_allclose(logits(g, gcfg), logits(w, cfg), rtol=1e-5, atol=1e-5)


def test_new_blocks_are_live_copies():
    w, cfg = model()
    g, gcfg = grow(w, cfg, 6)
    # blocks 0,1 come from old block 0: the first keeps its output projections, the second has them at zero
    np.testing.assert_array_equal(g["blocks.1.attn.wq.weight"], w["blocks.0.attn.wq.weight"])
    assert not g["blocks.1.attn.wo.weight"].any() and not g["blocks.1.mlp.down.weight"].any()
    np.testing.assert_array_equal(g["blocks.2.attn.wo.weight"], w["blocks.1.attn.wo.weight"])
    # an update to a zeroed output projection changes the logits: the copies have live inputs
    g["blocks.1.attn.wo.weight"] += 0.1
    assert not np.allclose(logits(g, gcfg), logits(w, cfg), atol=1e-4)


def test_cannot_shrink():
    w, cfg = model()
    with pytest.raises(ValueError, match="--layers 2"):
        grow(w, cfg, 2)
    with pytest.raises(ValueError, match="--d-ff 8"):
        grow(w, cfg, 0, 8)


def test_command_line(tmp_path):
    w, cfg = model()
    src = tmp_path / "m.safetensors"
    export_model(src, w, cfg, "1")
    out = tmp_path / "g.safetensors"
    r = subprocess.run([sys.executable, "-m", "mavgame.model.grow", str(src), str(out), "--layers", "5"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    g, gcfg, vocab, info = load_exported(out)
    assert gcfg.n_layers == 5 and vocab == "1" and info["grown_layers"] == "3->5"
    np.testing.assert_allclose(logits(g, gcfg), logits(w, cfg), rtol=1e-5, atol=1e-5)
    r = subprocess.run([sys.executable, "-m", "mavgame.model.grow", str(tmp_path / "nope.safetensors"),
                        str(out), "--layers", "5"], capture_output=True, text=True)
    assert r.returncode != 0 and "nope.safetensors" in r.stderr
