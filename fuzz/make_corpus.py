#!/usr/bin/env python
"""Write the seed corpora of the fuzz targets (fuzz/corpus/{fen,state,parse,trace,model,policy_net}).

    python fuzz/make_corpus.py

A text seed is one selector byte (the game, as the targets read it) followed by a valid text made from
random positions; a model seed is a tiny exported MAV model file (float32, float16, bfloat16)."""
import hashlib
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mavgame import _core, mav  # noqa: E402
from mavgame.mav import search_trace as mav_search  # noqa: E402

MAV_GAMES = [g for g in _core.games() if g in ("chess", "chess960", "gardner", "connect_four", "hex", "tictactoe")]


def states(game, n, rng):
    for _ in range(n):
        s = _core.State(game)
        for _ in range(int(rng.integers(0, 60))):
            if s.is_terminal():
                break
            s.push(int(rng.choice(s.legal_actions())))
        yield s


def write(d: Path, data: bytes):
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def main():
    rng = np.random.default_rng(0)
    trng = np.random.default_rng(1)
    out = ROOT / "fuzz" / "corpus"
    for i, game in enumerate(["chess", "chess960", "gardner"]):
        for s in states(game, 6, rng):
            write(out / "fen", bytes([i]) + s.text().encode())
    # many moves: king and 15 queens (224 moves); 31 queens (259 moves)
    for fen in ("2Q1Q1rk/Q5pp/3Q4/1Q1Q2QQ/3Q4/Q6Q/2Q4Q/K3QQ2 w - - 0 1",
                "QQQQQQrk/5Qpp/Q5QQ/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1"):
        write(out / "fen", bytes([0]) + fen.encode())
    b = mav.ExampleBuilder(seed=0, p_after=0.3)
    for i, game in enumerate(MAV_GAMES):
        for s in states(game, 4, rng):
            write(out / "state", bytes([i]) + mav.state_text(s).encode())
            ann = None if s.is_terminal() else {m: float(rng.random()) for m in s.legal_moves}
            p, t = b.build([(s, ann)], return_text=True).texts[0]
            write(out / "parse", bytes([i | 0x40]) + (p + t).encode())
            if not s.is_terminal():
                # search traces with random values: breadth 1-3, depth 1-2 (own generator: the other
                # corpora stay as they were)
                def annotate(st):
                    return {m: float(trng.random()) for m in st.legal_moves}, None
                tree = mav_search.build_search_tree(s, annotate, depth=2, breadth=3)
                tb, td = int(trng.integers(1, 4)), int(trng.integers(1, 3))
                tr = mav_search.write_trace(tree, tb, td)
                write(out / "trace", bytes([i]) + tr.text.encode())
                # the same trace in the full child form (selector bit 0x80, as fuzz_trace.c reads it)
                full = mav_search.write_trace(tree, tb, td, form="full")
                write(out / "trace", bytes([i | 0x80]) + full.text.encode())
    from mavgame.model.config import MAVConfig
    from mavgame.model.export import expected_shapes, export_model
    import tempfile
    for dtype, extra in (("float32", {}), ("float16", {"mlp": "geglu", "tie_embeddings": False}),
                         ("bfloat16", {"abs_pos": True, "line_pos": 3, "newline_id": 2, "n_kv_heads": 2})):
        cfg = MAVConfig(**{**dict(vocab_size=6, d_model=4, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=4,
                                  max_seq_len=8), **extra})
        w = {k: rng.normal(0, 0.3, size=sh).astype(np.float32) for k, sh in expected_shapes(cfg).items()}
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "m.safetensors"
            export_model(path, w, cfg, "", info={}, dtype=dtype)  # a toy vocabulary: declares none
            write(out / "model", path.read_bytes())
    policy_seeds(out)
    print(f"seeds in {out}: " + ", ".join(f"{d.name} {len(list(d.iterdir()))}" for d in sorted(out.iterdir())))


def policy_seeds(out: Path):
    """The smallest chess policy networks (1 channel, pooling head; 0 and 1 residual blocks) as exported files,
    float16 and bfloat16 (fuzz/corpus/policy_net)."""
    from mavgame.policy.export import policy_file_bytes
    rng = np.random.default_rng(2)
    for blocks, dtype in ((0, "float16"), (1, "bfloat16")):
        sd = {"stem.weight": (1, 41, 1, 1), "stem.bias": (1,), "fc.weight": (1968, 16), "fc.bias": (1968,)}
        for i in range(blocks):
            sd.update({f"tower.{i}.{ab}.{k}": s for ab in "ab" for k, s in (("weight", (1, 1, 3, 3)), ("bias", (1,)))})
        w = {k: rng.normal(0, 0.3, size=s).astype(np.float32) for k, s in sd.items()}
        write(out / "policy_net", policy_file_bytes(w, {"channels": 1, "blocks": blocks, "head": "pool"}, dtype=dtype))


if __name__ == "__main__":
    main()
