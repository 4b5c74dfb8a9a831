"""The IDP report's Table 1 / section 3.1 variants of the policy network (mavgame/policy/network.py,
mavgame/policy/inputs.py: dense and plain architectures, pooling window, input representations, the loss on
all outputs), the held-out log of training, the export refusal, and the move-matching intervals of
mavgame/analysis/policy_accuracy.py with `mavgame policy accuracy --by`. Skipped without PyTorch."""
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mavgame  # noqa: E402
from mavgame import _core  # noqa: E402
from mavgame.analysis import policy_accuracy as A  # noqa: E402
from mavgame.games.chess import Chess  # noqa: E402
from mavgame.play.pgn import to_pgn  # noqa: E402
from mavgame.play.records import GameRecord  # noqa: E402
from mavgame.policy import network as P  # noqa: E402
from mavgame.policy.export import export_policy, policy_file_bytes  # noqa: E402
from mavgame.policy.inputs import INPUT_PLANES, InputPlanes  # noqa: E402


@pytest.fixture(scope="module")
def pgn_file(tmp_path_factory):
    """Six games of random legal moves (60 plies or to the end), as `mavgame league` writes them."""
    rng = np.random.default_rng(4)
    out = []
    for g in range(6):
        st = mavgame.State("chess")
        moves = []
        while len(moves) < 60 and not st.is_terminal():
            a = int(rng.choice(st.legal_actions()))
            moves.append(st.action_to_str(a))
            st.push(a)
        res = st.result() if st.is_terminal() else "1/2-1/2"
        out.append(to_pgn(GameRecord(key=str(g), game="chess", first="a", second="b", opening="start", round=g,
                                     start=None, opening_moves=[], moves=moves, result=res, reason="test")))
    p = tmp_path_factory.mktemp("pgn") / "games.pgn"
    p.write_text("\n\n".join(out) + "\n")
    return p


def _planes(fens):
    return torch.from_numpy(_core.policy_planes([Chess(f) for f in fens]))


START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def test_input_representations():
    x = _planes([START, "4k3/8/8/8/8/8/8/Q3K3 w - - 0 40"])
    assert x.shape[1] == 41
    for kind, n in INPUT_PLANES.items():
        assert InputPlanes(kind)(x).shape == (2, n, 8, 8)
    s = InputPlanes("signed")(x)
    assert torch.equal(s[0, 0, 6], torch.ones(8)) and torch.equal(s[0, 0, 1], -torch.ones(8))   # pawns: +1 / -1
    assert s[0, 6].sum() == 32 and torch.equal(s[:, 21:23], x[:, 39:41])     # empty squares, colour and move
    assert int(s[0, :6].abs().sum()) == 32 and float(s[0, :6].sum()) == 0.0
    v = InputPlanes("values")(x)
    assert torch.equal(v[:, :41], x)
    assert float(v[0, 41].sum()) == pytest.approx(0.0) and float(v[1, 41].sum()) == pytest.approx(1.0)  # a queen up
    assert float(v[0, 41, 7, 3]) == pytest.approx(1.0) and float(v[0, 41, 0, 0]) == pytest.approx(-5 / 9)
    o = InputPlanes("occupancy")(x)
    assert [int(o[0, 41].sum()), int(o[0, 42].sum()), int(o[1, 41].sum()), int(o[1, 42].sum())] == [16, 16, 2, 1]
    assert torch.equal(o[0, 41, 6:], torch.ones(2, 8))
    assert list(InputPlanes("values").state_dict()) == []                     # the constant is not a weight
    with pytest.raises(ValueError, match="'bitboards'"):
        InputPlanes("bitboards")


def test_architecture_variants_shapes_and_weights():
    x = _planes([START, START])
    default = P.PolicyNet(P.PolicyConfig(channels=8, blocks=2))
    assert sorted({k.split(".")[0] for k in default.state_dict()}) == ["fc", "stem", "tower"]   # the file's names
    for cfg in (P.PolicyConfig(channels=8, blocks=2, arch="plain"), P.PolicyConfig(channels=8, blocks=1, pool=4),
                P.PolicyConfig(channels=8, blocks=1, pool=8), P.PolicyConfig(channels=8, blocks=1, pool=1),
                P.PolicyConfig(arch="dense", hidden=16), P.PolicyConfig(channels=8, blocks=1, inputs="signed"),
                P.PolicyConfig(channels=8, blocks=1, inputs="occupancy", head="conv")):
        assert P.PolicyNet(cfg)(x).shape == (2, 1968), cfg
    assert P.PolicyNet(P.PolicyConfig(channels=8, blocks=1, pool=4)).fc.in_features == 8 * 4
    assert P.PolicyNet(P.PolicyConfig(channels=8, blocks=1, pool=1)).fc.in_features == 8 * 64
    assert P.PolicyNet(P.PolicyConfig(channels=8, blocks=1, inputs="values")).stem.in_channels == 42
    dense = P.PolicyNet(P.PolicyConfig(arch="dense", hidden=16, inputs="signed"))
    assert [m.in_features for m in dense.dense if isinstance(m, torch.nn.Linear)] == [23 * 64, 16, 16, 16]
    assert sum(isinstance(m, torch.nn.Linear) for m in dense.dense) == 4
    # the skip connection: with the block's second convolution at zero a residual block passes relu(x) on, a
    # plain one gives relu(bias) = 0
    res = P.PolicyNet(P.PolicyConfig(channels=8, blocks=1))
    plain = P.PolicyNet(P.PolicyConfig(channels=8, blocks=1, arch="plain"))
    plain.load_state_dict(res.state_dict())
    for net in (res, plain):
        torch.nn.init.zeros_(net.tower[0].b.weight)
        torch.nn.init.zeros_(net.tower[0].b.bias)
    h = torch.relu(res.stem(x))
    assert torch.equal(res.tower(h), torch.relu(h)) and torch.equal(plain.tower(h), torch.zeros_like(h))
    for bad, word in ((dict(arch="wide"), "'wide'"), (dict(pool=3), "3"), (dict(inputs="x"), "'x'"),
                      (dict(hidden=0), "hidden width")):
        with pytest.raises(ValueError, match=word):
            P.PolicyConfig(**bad)
    assert P.PolicyConfig(**{"channels": 8, "blocks": 1, "head": "pool"}).arch == "residual"   # old files' config


def test_loss_on_all_outputs():
    logits = torch.randn(3, 1968, generator=torch.Generator().manual_seed(0))
    target = torch.tensor([5, 100, 1967])
    p = torch.softmax(logits, -1)
    y = torch.nn.functional.one_hot(target, 1968).float()
    want = -(y * torch.log(p) + (1 - y) * torch.log1p(-p)).mean()
    assert torch.allclose(P.policy_loss_all(logits, target), want, rtol=1e-5)
    mask = torch.zeros(3, 1968, dtype=torch.bool)
    mask[:, :200] = True
    mask[2, 1967] = True
    moved = logits.clone()
    moved[:, 1000:1500] += 5.0      # illegal outputs: the legal-only loss ignores them, the loss on all does not
    assert torch.allclose(P.policy_loss(moved, mask, target), P.policy_loss(logits, mask, target))
    assert P.policy_loss_all(moved, target) > P.policy_loss_all(logits, target)
    with pytest.raises(ValueError, match=r"\(3,\) move indices"):
        P.policy_loss_all(logits, target[:2])


def test_training_variants_log_held_out_accuracy(pgn_file, tmp_path):
    train, val, _ = P.load_pgn_positions([pgn_file], skip_moves=10, val_fraction=0.34, seed=1)
    assert len(train) and len(val)
    log = tmp_path / "log.jsonl"
    net = P.PolicyNet(P.PolicyConfig(arch="dense", hidden=32))
    losses = P.train_policy(net, train, steps=60, batch=32, lr=3e-3, loss="all", val=val, log_every=10,
                            eval_every=30, log_path=log)
    assert np.mean(losses[-5:]) < np.mean(losses[:5])
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x["step"] for x in lines] == [10, 20, 30, 40, 50, 60]
    assert [x["step"] for x in lines if "val_accuracy" in x] == [30, 60]
    assert all(0 <= x["train_accuracy"] <= 1 for x in lines)
    assert lines[-1]["val_accuracy"] == pytest.approx(P.move_matching_accuracy(net, val))
    assert lines[-1]["val_loss"] == pytest.approx(P.held_out_loss(net, val), rel=1e-5)
    with pytest.raises(ValueError, match="eval_every=25"):
        P.train_policy(net, train, steps=2, val=val, log_every=10, eval_every=25)
    with pytest.raises(ValueError, match="'mse'"):
        P.train_policy(net, train, steps=2, loss="mse")


def test_train_command_variant_and_export_refusal(pgn_file, tmp_path, capsys):
    from mavgame.cli import main
    out = tmp_path / "run"
    rc = main(["policy", "train", "--pgn", str(pgn_file), "--out", str(out), "--steps", "20", "--batch", "16",
               "--channels", "8", "--blocks", "1", "--arch", "plain", "--pool", "4", "--inputs", "occupancy",
               "--loss", "all", "--val-fraction", "0.34", "--split-seed", "1", "--log-every", "5",
               "--eval-every", "10", "--no-progress"])
    assert rc == 0
    m = json.loads((out / "metrics.json").read_text())
    assert m["config"]["arch"] == "plain" and m["config"]["pool"] == 4 and m["config"]["inputs"] == "occupancy"
    assert m["loss"] == "all" and m["split_seed"] == 1 and m["params"] == 8 * 43 + 8 + 2 * (8 * 8 * 9 + 8) \
        + 8 * 4 * 1968 + 1968
    lo, hi = m["val_accuracy_ci"]
    assert lo <= m["val_accuracy"] <= hi
    assert "held out" in capsys.readouterr().out
    loaded = P.PolicyModel.load(out / "policy.pt")
    assert loaded.net.config.inputs == "occupancy"
    with pytest.raises(ValueError, match="arch='plain'.*only arch='residual'"):
        export_policy(out / "policy.pt", tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match="inputs='signed'"):
        policy_file_bytes({}, {"channels": 8, "blocks": 1, "head": "pool", "inputs": "signed"})


def test_intervals():
    games = np.repeat(np.arange(10), 20)
    assert A.clustered_interval(np.ones(200), games) == (1.0, 1.0, 1.0)
    hits = np.zeros(200, bool)
    hits[games < 5] = True          # half the games all right, half all wrong: a wide interval
    acc, lo, hi = A.clustered_interval(hits, games, n_boot=4000)
    assert acc == 0.5 and 0.15 < lo < 0.4 and 0.6 < hi < 0.85
    rng = np.random.default_rng(0)
    spread = rng.random(200) < 0.5  # the same share spread evenly over games: a narrower one
    _, lo2, hi2 = A.clustered_interval(spread, games, n_boot=4000)
    assert hi2 - lo2 < hi - lo
    d, dlo, dhi = A.paired_difference(hits, hits, games)
    assert (d, dlo, dhi) == (0.0, 0.0, 0.0)
    better = hits | (games == 7)
    d, dlo, dhi = A.paired_difference(better, hits, games)
    assert d == pytest.approx(0.1) and 0 <= dlo <= d <= dhi
    assert np.isnan(A.clustered_interval([], [])[0])
    with pytest.raises(ValueError, match="same length"):
        A.clustered_interval(np.ones(3), np.zeros(2))
    with pytest.raises(ValueError, match="0/1"):
        A.clustered_interval(np.array([0.5]), np.zeros(1))
    rows = A.accuracy_by_bins(hits, games, np.tile(np.arange(20), 10), [0, 10])
    assert [(r["lo"], r["hi"], r["positions"], r["games"]) for r in rows] == [(0, 10, 100, 10), (10, None, 100, 10)]
    assert all(r["accuracy"] == 0.5 for r in rows)
    with pytest.raises(ValueError, match="increasing"):
        A.accuracy_by_bins(hits, games, games, [5, 5])


def test_game_phase():
    fens = [START.replace(" 0 1", " 0 12"), START.replace(" 0 1", " 0 20"),
            "4k3/pppr4/8/8/8/8/PPP5/3RK1N1 w - - 0 20", "4k3/8/8/8/8/8/8/Q3K3 w - - 0 40"]
    p = _core.policy_planes([Chess(f) for f in fens])
    assert list(A.fullmove_of(p)) == [12, 20, 20, 40]
    assert [A.PHASES[i] for i in A.game_phase(p)] == ["opening", "middlegame", "endgame", "endgame"]
    with pytest.raises(ValueError, match="planes must be"):
        A.fullmove_of(p[:, :13])


def test_native_hits_match_torch_and_accuracy_command(pgn_file, tmp_path, capsys):
    from mavgame.cli import main
    data, _, _ = P.load_pgn_positions([pgn_file], skip_moves=4, val_fraction=0.0)
    torch.manual_seed(0)
    net = P.PolicyNet(P.PolicyConfig(channels=8, blocks=1))
    P.train_policy(net, data, steps=30, batch=32, lr=3e-3)
    f = export_policy(net, tmp_path / "n.safetensors", dtype="float32")
    got = A.native_hits(f, data.planes, data.masks, data.moves, chunk=50)
    assert np.array_equal(got, P.move_hits(net, data)) and got.any()
    with pytest.raises(ValueError, match="one entry a position"):
        A.native_hits(f, data.planes, data.masks[:3], data.moves)
    out = tmp_path / "acc.json"
    assert main(["policy", "accuracy", "--model", str(f), "--pgn", str(pgn_file), "--skip-moves", "4", "--by", "move",
                 "--bins", "5,15,25", "--out", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["positions"] == len(data) == sum(b["positions"] for b in r["by_move"])
    assert r["accuracy"] == pytest.approx(got.mean()) and r["ci95"][0] <= r["accuracy"] <= r["ci95"][1]
    assert main(["policy", "accuracy", "--model", "shipped", "--pgn", str(pgn_file), "--by", "phase"]) == 0
    rows = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["by_phase"]
    assert [x["phase"] for x in rows] == list(A.PHASES)
    with pytest.raises(SystemExit, match="--bins"):
        main(["policy", "accuracy", "--model", "shipped", "--pgn", str(pgn_file), "--bins", "a,b"])


def test_rl_refuses_a_new_head_on_a_dense_network(tmp_path):
    from mavgame.policy import rl as R
    P.PolicyModel(P.PolicyNet(P.PolicyConfig(arch="dense", hidden=8))).save(tmp_path / "d.pt")
    with pytest.raises(ValueError, match="arch='dense'.*'conv'"):
        R._init_net(str(tmp_path / "d.pt"), None, "conv")
    P.PolicyModel(P.PolicyNet(P.PolicyConfig(channels=4, blocks=1, arch="plain"))).save(tmp_path / "p.pt")
    net = R._init_net(str(tmp_path / "p.pt"), None, "conv")
    assert net.config.head == "conv" and net.config.arch == "plain" and not net.tower[0].skip
