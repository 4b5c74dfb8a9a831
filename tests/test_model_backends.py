"""The Python inference backends stay honest references (issue 12): the NumPy transformer computes in
float32 end to end, and the torch backend runs generation at its own thread count (one by default) without
changing the process-wide setting the caller chose."""
import numpy as np
import pytest

from mavgame import mav
from mavgame.model.config import MAVConfig
from mavgame.model.export import expected_shapes
from mavgame.model.inference import NumpyTransformer, default_torch_threads, generate_ids
from mavgame.model.inference.backends import _TorchBackend

TOK = mav.Tokenizer()


def random_weights(cfg, seed=0):
    rng = np.random.default_rng(seed)
    return {k: rng.normal(0, 0.3, size=s).astype(np.float32) for k, s in expected_shapes(cfg).items()}


@pytest.mark.parametrize("mlp", ["swiglu", "geglu"])
def test_numpy_backend_computes_in_float32(mlp):
    cfg = MAVConfig(vocab_size=TOK.size, d_model=16, n_layers=2, n_heads=2, n_kv_heads=1, d_ff=32,
                    max_seq_len=64, mlp=mlp, abs_pos=True, line_pos=4, newline_id=TOK.token_to_id("\n"))
    be = NumpyTransformer(random_weights(cfg), cfg)
    cache = be.new_cache(2, 16)
    toks = np.array([[1, 5, 9, 20], [1, 7, 8, 30]])
    pos = np.tile(np.arange(4), (2, 1))
    out = be.forward(toks, pos, np.ones((2, 4), bool), cache)
    assert out.dtype == np.float32            # float64 here meant the residual stream was promoted
    assert cache["k"][0].dtype == np.float32
    out = be.forward(np.array([[3], [4]]), np.array([[4], [4]]), np.ones((2, 5), bool), cache)
    assert out.dtype == np.float32


def test_default_torch_threads(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert default_torch_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert default_torch_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "junk")
    assert default_torch_threads() == 1


def test_torch_backend_threads_during_generation_only(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cfg = MAVConfig(vocab_size=TOK.size, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32, max_seq_len=64)
    w = random_weights(cfg)
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        be = _TorchBackend(w, cfg, "cpu")
        assert be.threads == 1
        seen = []
        fwd = be.forward

        def spy(*a, **k):
            seen.append(torch.get_num_threads())
            return fwd(*a, **k)
        be.forward = spy
        generate_ids(be, [[1, 5, 6], [1, 7]], 4, stop_ids=[TOK.eos_id])
        assert seen and set(seen) == {1}
        assert torch.get_num_threads() == 2         # the caller's setting is back
        be2 = _TorchBackend(w, cfg, "cpu", threads=2)
        assert be2.threads == 2
        with pytest.raises(ValueError, match="threads"):
            _TorchBackend(w, cfg, "cpu", threads=-1)
    finally:
        torch.set_num_threads(old)
