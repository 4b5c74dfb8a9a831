"""The chess policy network in the native engine (mavgame._core.PolicyNet, csrc/model/policy_net.h): agreement
with PyTorch on random and shipped weights, the exported file's checks, the guided search calling it from C,
and the agents running without PyTorch."""
import dataclasses
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mavgame
from mavgame import _core
from mavgame.policy.export import policy_file_bytes
from mavgame.agents.policy import SHIPPED_POLICY, load_policy


def _states(n=6, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        st = mavgame.State("chess")
        for _ in range(int(rng.integers(0, 30))):
            if st.is_terminal():
                break
            acts = st.legal_actions()
            st.push(int(acts[rng.integers(len(acts))]))
        out.append(st)
    return out


def _random_net(channels, blocks, head, seed=0):
    """NumPy weights of a PolicyNet's state_dict, without PyTorch."""
    rng = np.random.default_rng(seed)
    sd = {"stem.weight": (channels, 41, 1, 1), "stem.bias": (channels,)}
    for i in range(blocks):
        for ab in "ab":
            sd[f"tower.{i}.{ab}.weight"] = (channels, channels, 3, 3)
            sd[f"tower.{i}.{ab}.bias"] = (channels,)
    if head == "conv":
        sd["head_conv.weight"], sd["head_conv.bias"] = (32, channels, 1, 1), (32,)
    sd["fc.weight"] = (1968, 16 * channels if head == "pool" else 2048)
    sd["fc.bias"] = (1968,)
    cfg = {"channels": channels, "blocks": blocks, "head": head}
    return {k: (rng.standard_normal(s) * 0.2).astype(np.float32) for k, s in sd.items()}, cfg


def test_agrees_with_pytorch_on_random_and_shipped_weights():
    torch = pytest.importorskip("torch")
    from mavgame.policy.network import PolicyModel, PolicyNet, PolicyConfig, masked_policy

    states = _states(8)
    planes, mask = _core.policy_planes(states), _core.policy_legal_mask(states)
    torch.manual_seed(0)  # fixed random weights (unseeded, the float32 error was a draw)
    for head in ("pool", "conv"):
        for blocks in (0, 2):
            net = PolicyNet(PolicyConfig(channels=16, blocks=blocks, head=head))
            for p in net.parameters():
                torch.nn.init.normal_(p, std=0.2)
            nat = _core.PolicyNet(policy_file_bytes(net.state_dict(), dataclasses.asdict(net.config), dtype="float32"))
            assert nat.n_params == sum(p.numel() for p in net.parameters())
            with torch.no_grad():
                ref = net(torch.from_numpy(planes))
                ref_p = masked_policy(ref, torch.from_numpy(mask)).numpy()
            got = nat.logits(planes)
            scale = float(np.abs(ref.numpy()).max())
            # float32 sums of up to 2,048 products in another order than torch's: ~1e-6 relative is typical,
            # the worst of an unlucky draw reached 2e-6 (random weights, std 0.2)
            assert np.abs(got - ref.numpy()).max() <= 1e-5 * max(scale, 1.0), (head, blocks)
            assert np.abs(nat.policy(planes, mask) - ref_p).max() < 1e-5
    # the shipped network: both backends read the same exported file
    ref = PolicyModel.load(SHIPPED_POLICY)
    nat = _core.PolicyNet(str(SHIPPED_POLICY))
    with torch.no_grad():
        ref_logits = ref.net(torch.from_numpy(planes)).numpy()
    assert np.abs(nat.logits(planes) - ref_logits).max() < 1e-4
    assert np.abs(nat.policy(planes, mask) - ref.policy(planes, mask)).max() < 1e-5


def test_export_round_trip_from_policy_pt(tmp_path):
    torch = pytest.importorskip("torch")
    from mavgame.policy.network import PolicyConfig, PolicyModel, PolicyNet
    from mavgame.policy.export import export_policy, load_native_policy

    torch.manual_seed(0)
    model = PolicyModel(PolicyNet(PolicyConfig(channels=8, blocks=1, head="conv")))
    model.save(tmp_path / "p.pt")
    states = _states(4, seed=1)
    planes, mask = _core.policy_planes(states), _core.policy_legal_mask(states)
    want = model.policy(planes, mask)
    for dtype, tol in (("float32", 1e-6), ("float16", 5e-3), ("bfloat16", 3e-2)):
        out = export_policy(tmp_path / "p.pt", tmp_path / f"p_{dtype}.safetensors", dtype=dtype)
        nat = load_native_policy(out)
        assert nat.file_dtype == {"float32": "F32", "float16": "F16", "bfloat16": "BF16"}[dtype]
        assert np.abs(nat.policy(planes, mask) - want).max() < tol, dtype
        again = PolicyModel.load(out)  # the torch backend reads the exported file too
        assert np.abs(again.policy(planes, mask) - nat.policy(planes, mask)).max() < 1e-5
    direct = load_native_policy(tmp_path / "p.pt")  # a policy.pt converted in memory
    assert np.abs(direct.policy(planes, mask) - want).max() < 1e-5


def test_policy_is_a_masked_softmax_and_batches_are_chunked():
    sd, cfg = _random_net(12, 1, "pool")
    data = policy_file_bytes(sd, cfg, dtype="float32")
    big, small = _core.PolicyNet(data), _core.PolicyNet(data, max_batch=3)
    states = _states(7, seed=2)
    planes, mask = _core.policy_planes(states), _core.policy_legal_mask(states)
    p = big.policy(planes, mask)
    assert p.shape == (7, 1968) and p.dtype == np.float32
    assert np.all(p[~mask] == 0) and np.allclose(p.sum(-1), 1.0, atol=1e-5)
    lg = big.logits(planes)
    for i in range(7):
        legal = np.flatnonzero(mask[i])
        e = np.exp(lg[i, legal] - lg[i, legal].max())
        np.testing.assert_allclose(p[i, legal], e / e.sum(), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(small.logits(planes), lg)   # chunks of 3: the same logits
    np.testing.assert_array_equal(big(planes, mask), p)       # calling it is .policy
    assert big.calls == 3 and big.positions == 21
    assert big.logits(np.zeros((0, 41, 8, 8), np.float32)).shape == (0, 1968)


def test_threads_split_the_batch_without_changing_a_bit():
    """threads=T cuts each chunk into T slices run on a pool: the logits are those of one thread, bit for bit
    (the per-position arithmetic does not depend on the batch), for batches smaller and larger than T, across
    max_batch chunks, and inside the guided search."""
    sd, cfg = _random_net(20, 2, "pool", seed=7)   # 20 channels: vector tails in the transforms
    data = policy_file_bytes(sd, cfg, dtype="float32")
    one = _core.PolicyNet(data)
    states = _states(13, seed=8)
    planes, mask = _core.policy_planes(states), _core.policy_legal_mask(states)
    want = one.logits(planes)
    for threads, max_batch in ((2, 64), (3, 64), (4, 5), (16, 64)):
        nat = _core.PolicyNet(data, max_batch=max_batch, threads=threads)
        assert nat.threads == threads
        np.testing.assert_array_equal(nat.logits(planes), want)
        np.testing.assert_array_equal(nat.logits(planes[:1]), want[:1])
        np.testing.assert_array_equal(nat.policy(planes, mask), one.policy(planes, mask))
    shipped1, shipped2 = _core.PolicyNet(str(SHIPPED_POLICY)), _core.PolicyNet(str(SHIPPED_POLICY), threads=2)
    st = _states(1, seed=4)[0]
    a = _core.guided_alphabeta(st, shipped1, threshold=0.01, max_depth=5, batch=8)
    b = _core.guided_alphabeta(st, shipped2, threshold=0.01, max_depth=5, batch=8)
    assert (a.best_move, a.score, a.pv, a.nodes) == (b.best_move, b.score, b.pv, b.nodes)
    assert isinstance(load_policy("shipped", threads=2), _core.PolicyNet) and load_policy("shipped", threads=2).threads == 2
    from mavgame.agents import make_agent
    for spec in ("guided_ab:policy=shipped,threshold=0.01,depth=4,threads=2",
                 "policy_rollouts:policy=shipped,games=1,max_plies=4,seed=1,threads=2"):
        agent = make_agent(spec)
        assert agent.policy.threads == 2, spec
        agent.setup("chess", seed=1)
        assert st.is_legal(agent.act(st)), spec
    with pytest.raises(ValueError, match="threads must be in \\[1, 256\\], got 0"):
        _core.PolicyNet(data, threads=0)
    with pytest.raises(Exception, match="policy threads must be >= 1, got 0"):
        load_policy("shipped", threads=0)


def test_sample_draws_from_the_masked_policy():
    sd, cfg = _random_net(8, 1, "pool", seed=3)
    nat = _core.PolicyNet(policy_file_bytes(sd, cfg, dtype="float32"))
    st = _states(1, seed=5)[0]
    planes, mask = _core.policy_planes([st]), _core.policy_legal_mask([st])
    p = nat.policy(planes, mask)[0]
    n = 4000
    u = (np.arange(n) + 0.5) / n   # evenly spread: the draws follow the cumulative probabilities exactly
    picks = nat.sample(np.repeat(planes, n, 0), np.repeat(mask, n, 0), u)
    assert picks.dtype == np.int64 and mask[0, picks].all()
    counts = np.bincount(picks, minlength=1968) / n
    assert np.abs(counts - p).max() < 2.0 / n + 1e-6
    empty = np.zeros((1, 1968), bool)
    assert nat.sample(planes, empty, [0.5])[0] == -1
    with pytest.raises(ValueError, match=r"u\[0\] = 1 is not in \[0, 1\)"):
        nat.sample(planes, mask, [1.0])
    with pytest.raises(ValueError, match="mask must be"):
        nat.sample(planes, mask, [0.1, 0.2])


def test_bad_inputs_and_files_name_the_value(tmp_path):
    sd, cfg = _random_net(4, 1, "pool")
    nat = _core.PolicyNet(policy_file_bytes(sd, cfg))
    with pytest.raises(ValueError, match=r"planes must have shape \(n, 41, 8, 8\), got \(2, 40, 8, 8\)"):
        nat.logits(np.zeros((2, 40, 8, 8), np.float32))
    with pytest.raises(ValueError, match=r"mask must have shape \(2, 1968\) for 2 positions, got \(3, 1968\)"):
        nat.policy(np.zeros((2, 41, 8, 8), np.float32), np.zeros((3, 1968), bool))
    with pytest.raises(ValueError, match="max_batch must be in"):
        _core.PolicyNet(policy_file_bytes(sd, cfg), max_batch=0)
    good = policy_file_bytes(sd, cfg)
    with pytest.raises(ValueError, match=r"tensor 'fc.weight': data offsets \[\d+, \d+\] outside the"):
        _core.PolicyNet(good[: len(good) // 2])  # truncated
    (tmp_path / "t.safetensors").write_bytes(good[:-1])
    with pytest.raises(ValueError, match="t.safetensors"):
        _core.PolicyNet(str(tmp_path / "t.safetensors"))
    with pytest.raises(ValueError, match="header length"):
        _core.PolicyNet(b"\xff" * 8 + b"{}")
    bad = dict(sd, **{"tower.0.b.weight": np.zeros((4, 4, 1, 1), np.float32)})
    with pytest.raises(ValueError, match=r"'tower.0.b.weight' has shape \(4, 4, 1, 1\), config says \(4, 4, 3, 3\)"):
        _core.PolicyNet(policy_file_bytes(bad, cfg))
    with pytest.raises(ValueError, match="'fc.bias' is missing"):
        _core.PolicyNet(policy_file_bytes({k: v for k, v in sd.items() if k != "fc.bias"}, cfg))
    with pytest.raises(ValueError, match="'head' must be \"pool\" or \"conv\", got 'big'"):
        _core.PolicyNet(policy_file_bytes(sd, dict(cfg, head="big")))
    from mavgame.model.export import safetensors_bytes
    with pytest.raises(ValueError, match="not a mavgame policy network"):
        _core.PolicyNet(safetensors_bytes(sd, {"format": "mavgame-mav", "format_version": "1"}))
    with pytest.raises(ValueError, match="nope.safetensors"):
        _core.PolicyNet(str(tmp_path / "nope.safetensors"))


def test_guided_search_calls_the_native_net_like_its_callable():
    nat = _core.PolicyNet(str(SHIPPED_POLICY))
    for st in _states(3, seed=4):
        if st.is_terminal():
            continue
        a = _core.guided_alphabeta(st, nat, threshold=0.01, max_depth=5, batch=8)
        b = _core.guided_alphabeta(st, nat.policy, threshold=0.01, max_depth=5, batch=8)
        assert a.complete and a.policy_calls >= 1
        assert (a.best_move, a.score, a.pv) == (b.best_move, b.score, b.pv)
        assert a.policy_positions == b.policy_positions


def test_agents_run_without_pytorch():
    """The core package with the shipped network: no torch import anywhere (torch made unimportable)."""
    code = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None
        import mavgame
        from mavgame.agents import make_agent
        st = mavgame.State("chess")
        for spec in ("policy:policy=shipped,seed=1", "guided_ab:policy=shipped,threshold=0.01,depth=4",
                     "policy_rollouts:policy=shipped,games=1,max_plies=4,seed=1"):
            a = make_agent(spec)
            a.setup("chess", seed=1)
            assert st.is_legal(a.act(st)), spec
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_backends_and_errors():
    assert isinstance(load_policy("shipped"), _core.PolicyNet)
    with pytest.raises(Exception, match="backend must be one of native, torch"):
        load_policy("shipped", backend="onnx")


def test_export_command(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    from mavgame.cli import main
    from mavgame.policy.network import PolicyConfig, PolicyModel, PolicyNet

    torch.manual_seed(1)
    PolicyModel(PolicyNet(PolicyConfig(channels=4, blocks=1))).save(tmp_path / "p.pt")
    out = tmp_path / "p.safetensors"
    assert main(["policy", "export", "--model", str(tmp_path / "p.pt"), "--out", str(out), "--dtype", "bfloat16"]) == 0
    assert "4 channels, 1 blocks, head pool" in capsys.readouterr().out
    net = _core.PolicyNet(str(out))
    assert net.file_dtype == "BF16" and net.n_params == 41 * 4 + 4 + 2 * (9 * 16 + 4) + 64 * 1968 + 1968
