"""The IDP policy network (mavgame/policy/network.py): shapes, masking, loss, PGN data, a short training
run whose loss falls, save/load, the `mavgame policy` command. Skipped without PyTorch."""
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mavgame  # noqa: E402
from mavgame import _core  # noqa: E402
from mavgame.policy import network as P  # noqa: E402
from mavgame.play.pgn import to_pgn  # noqa: E402
from mavgame.play.records import GameRecord  # noqa: E402

TINY = P.PolicyConfig(channels=16, blocks=1)


def _pgn_games(n, seed=0, plies=70):
    """PGN of n games played by a depth-1 alpha-beta with random openings (mavgame.play.pgn.to_pgn)."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(n):
        st = mavgame.State("chess")
        moves = []
        for ply in range(plies):
            if st.is_terminal():
                break
            if ply < 6 or rng.random() < 0.3:
                a = int(rng.choice(st.legal_actions()))
            else:
                a = _core.alphabeta(st, 1).best_move
            moves.append(st.action_to_str(a))
            st.push(a)
        res = st.result() if st.is_terminal() else "*"
        rec = GameRecord(key=str(g), game="chess", first="ab", second="ab", opening="start", round=g, start=None,
                         opening_moves=[], moves=moves, result=res if res != "*" else "1/2-1/2", reason="test")
        out.append(to_pgn(rec))
    return "\n\n".join(out) + "\n"


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny networks: one torch thread is several times faster than contended threads on a busy machine."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def pgn_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("pgn") / "games.pgn"
    p.write_text(_pgn_games(6))
    return p


def test_network_shapes_and_masking():
    net = P.PolicyNet(TINY)
    st = mavgame.State("chess")
    x = torch.from_numpy(_core.policy_planes([st, st]))
    logits = net(x)
    assert logits.shape == (2, 1968)
    mask = torch.from_numpy(_core.policy_legal_mask([st, st]))
    p = P.masked_policy(logits, mask)
    assert torch.allclose(p.sum(-1), torch.ones(2)) and (p[~mask] == 0).all() and (p[mask] > 0).all()
    for head in ("pool", "conv"):
        assert P.PolicyNet(P.PolicyConfig(channels=8, blocks=2, head=head))(x).shape == (2, 1968)
    with pytest.raises(ValueError, match="41"):
        net(torch.zeros(1, 13, 8, 8))
    with pytest.raises(ValueError, match="head"):
        P.PolicyConfig(head="dense")
    # the paper's size: 256 channels, 3 blocks
    big = P.PolicyNet()
    assert big.stem.out_channels == 256 and len(big.tower) == 3


def test_loss_counts_only_legal_moves():
    mask = torch.zeros(1, 1968, dtype=torch.bool)
    mask[0, :3] = True
    logits = torch.zeros(1, 1968)
    target = torch.tensor([1])
    base = P.policy_loss(logits, mask, target)
    logits2 = logits.clone()
    logits2[0, 100:] = 50.0   # illegal logits change nothing
    assert torch.allclose(base, P.policy_loss(logits2, mask, target))
    logits3 = logits.clone()
    logits3[0, 1] = 5.0       # more weight on the played move lowers the loss
    assert P.policy_loss(logits3, mask, target) < base


def test_pgn_positions_skip_the_opening_and_split_by_game(pgn_file):
    train, val, info = P.load_pgn_positions([pgn_file], skip_moves=10, val_fraction=0.34, seed=1)
    assert info["games"] == 6 and info["val_games"] == 2 and info["unparsed_games"] == 0
    assert len(train) > 0 and len(val) > 0
    assert set(np.unique(train.game)).isdisjoint(np.unique(val.game))
    fullmove = np.rint(train.planes[:, 40, 0, 0].astype(np.float32) * 100)
    assert fullmove.min() >= 11
    assert all(train.masks[i, train.moves[i]] for i in range(len(train)))
    t0, _, _ = P.load_pgn_positions([pgn_file], skip_moves=0, val_fraction=0.0)
    early = np.rint(t0.planes[:, 40, 0, 0].astype(np.float32) * 100) <= 10
    assert early.sum() > 0 and len(t0) - early.sum() == len(train) + len(val)
    with pytest.raises(ValueError, match="no games"):
        empty = pgn_file.parent / "empty.pgn"
        empty.write_text("")
        P.load_pgn_positions([empty])


def test_training_reduces_the_loss_and_the_model_round_trips(pgn_file, tmp_path):
    train, val, _ = P.load_pgn_positions([pgn_file], skip_moves=10, val_fraction=0.0)
    net = P.PolicyNet(TINY)
    losses = P.train_policy(net, train, steps=40, batch=32, lr=3e-3, seed=0)
    assert np.mean(losses[-5:]) < 0.8 * np.mean(losses[:5])
    acc = P.move_matching_accuracy(net, train)
    assert 0.0 <= acc <= 1.0
    model = P.PolicyModel(net)
    model.save(tmp_path / "p.pt")
    again = P.PolicyModel.load(tmp_path / "p.pt")
    st = mavgame.State("chess")
    np.testing.assert_allclose(again.probabilities([st]), model.probabilities([st]), rtol=1e-5, atol=1e-7)
    model.save(tmp_path / "h.pt", half=True)            # float16 file, float32 network once loaded
    half = P.PolicyModel.load(tmp_path / "h.pt")
    assert all(v.dtype == torch.float32 for v in half.net.state_dict().values())
    assert (tmp_path / "h.pt").stat().st_size < 0.6 * (tmp_path / "p.pt").stat().st_size
    np.testing.assert_allclose(half.probabilities([st]), model.probabilities([st]), atol=2e-3)
    r = _core.guided_alphabeta(st, again.policy, threshold=0.01, max_depth=4, batch=16)
    assert r.complete and r.policy_calls >= 1 and st.is_legal(r.best_move)
    (tmp_path / "bad.pt").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="not a policy model"):
        P.PolicyModel.load(tmp_path / "bad.pt")


def test_policy_command(pgn_file, tmp_path, capsys):
    from mavgame.cli import main
    out = tmp_path / "run"
    rc = main(["policy", "train", "--pgn", str(pgn_file), "--out", str(out), "--steps", "20", "--batch", "16",
               "--channels", "8", "--blocks", "1", "--val-fraction", "0.34", "--no-progress"])
    assert rc == 0
    m = json.loads((out / "metrics.json").read_text())
    assert m["last_loss"] < m["first_loss"] and m["val_positions"] > 0 and 0 <= m["val_accuracy"] <= 1
    assert "held out" in capsys.readouterr().out
    rc = main(["policy", "accuracy", "--model", str(out / "policy.pt"), "--pgn", str(pgn_file)])
    assert rc == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["games"] == 6


def test_training_resumes_to_the_same_network(pgn_file, tmp_path):
    """A run stopped and continued from its state file draws the same batches as an uninterrupted one: the
    same losses and the same weights, bit for bit (one thread)."""
    train, _, _ = P.load_pgn_positions([pgn_file], skip_moves=10, val_fraction=0.0)
    torch.manual_seed(3)
    whole = P.PolicyNet(TINY)
    init = {k: v.clone() for k, v in whole.state_dict().items()}
    want = P.train_policy(whole, train, steps=12, batch=16, lr=3e-3, seed=5)
    ck = tmp_path / "state.pt"
    first = P.PolicyNet(TINY)
    first.load_state_dict(init)
    part = P.train_policy(first, train, steps=5, batch=16, lr=3e-3, seed=5, checkpoint=ck)
    assert len(part) == 5 and ck.exists()
    again = P.PolicyNet(TINY)   # other weights: the state file's replace them
    got = P.train_policy(again, train, steps=12, batch=16, lr=3e-3, seed=5, checkpoint=ck)
    assert got == want
    for k, v in whole.state_dict().items():
        assert torch.equal(v, again.state_dict()[k]), k
    ck.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="state.pt.* is not a policy training state"):
        P.train_policy(P.PolicyNet(TINY), train, steps=14, batch=16, checkpoint=ck)


def test_policy_command_init_and_resume(pgn_file, tmp_path, capsys):
    """--init starts from the shipped network (its shape, its held-out accuracy reported beside the new one);
    --max-seconds stops and the same command continues; --fresh starts over."""
    from mavgame.cli import main
    from mavgame.agents.policy import SHIPPED_POLICY
    out = tmp_path / "run"
    cmd = ["policy", "train", "--pgn", str(pgn_file), "--out", str(out), "--steps", "6", "--batch", "8",
           "--init", str(SHIPPED_POLICY), "--val-fraction", "0.34", "--no-progress", "--checkpoint-every", "2",
           "--log-every", "2", "--max-seconds", "1e-9"]
    assert main(cmd) == 0
    assert "stopped at step 1 of 6" in capsys.readouterr().out
    assert (out / "train_state.pt").exists() and not (out / "policy.pt").exists()
    assert main(cmd[:-2]) == 0
    text = capsys.readouterr().out
    assert "(the --init network:" in text
    m = json.loads((out / "metrics.json").read_text())
    assert m["config"]["channels"] == 32 and m["init"] == str(SHIPPED_POLICY) and 0 <= m["init_val_accuracy"] <= 1
    log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    assert [x["step"] for x in log] == [2, 4, 6] and all(x["loss"] > 0 for x in log)
    assert main(cmd[:-2] + ["--fresh", "--steps", "2"]) == 0
    assert json.loads((out / "metrics.json").read_text())["steps"] == 2
