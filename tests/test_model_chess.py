"""The MAV pipeline on chess, end to end, on a small Stockfish-annotated set (skipped without Stockfish)."""
import json

import pytest

torch = pytest.importorskip("torch")

import mavgame  # noqa: E402
from mavgame import mav  # noqa: E402
from mavgame.model.data import PositionStore, generate_positions  # noqa: E402
from mavgame.model.inference import MAVModel, evaluate_records  # noqa: E402
from mavgame.model.train import TrainConfig, train  # noqa: E402
from mavgame.uci import find_stockfish  # noqa: E402


@pytest.fixture(scope="module")
def stockfish():
    path = find_stockfish()
    if path is None:
        pytest.skip("stockfish is not installed")
    return path


def test_chess_pipeline_end_to_end(tmp_path, stockfish):
    torch.set_num_threads(1)
    stats = generate_positions("chess", tmp_path / "data", 3, seed=5, epsilon=0.3, max_plies=10, val_fraction=0.2,
                               progress=False, annotator_options={"engine": stockfish, "nodes": 3000})
    assert stats["games"] == 3 and stats["positions_unique"] >= 10
    train_set = PositionStore(tmp_path / "data" / "train")
    for r in train_set:
        assert r["values"] and r["best"] in r["values"] and all(0.0 <= v <= 1.0 for v in r["values"].values())
    cfg = TrainConfig(data=str(tmp_path / "data"), out=str(tmp_path / "run"), steps=30, batch_size=8, preset="tiny",
                      model=dict(d_model=48, d_ff=96, n_heads=4), warmup=5, lr=1e-2, eval_every=30,
                      checkpoint_every=30, log_every=5, progress=False, max_seq_len=512, gen_eval_positions=0)
    tr, last = train(cfg)
    log = [json.loads(x) for x in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in log if "loss" in r]
    assert losses[-1] < 0.7 * losses[0]
    model = MAVModel.load(tmp_path / "run" / "model.safetensors", backend="numpy")
    assert model.game == "chess"
    recs = list(PositionStore(tmp_path / "data" / "val"))[:3] or list(train_set)[:3]
    outs = model.generate([mav.prompt(mavgame.State("chess", r["state"])) for r in recs],
                          max_new_tokens=60)
    for r, o in zip(recs, outs):
        st = mavgame.State("chess", r["state"])
        pr = mav.parse("chess", mav.prompt(st) + o.text, true_state=st)
        assert pr.header is not None and pr.has_ref      # the output was parsed against the true state
        assert isinstance(pr.errors, list)
    m = evaluate_records(model, "chess", recs)
    assert m["examples"] == m["prompts"] >= len(recs)
