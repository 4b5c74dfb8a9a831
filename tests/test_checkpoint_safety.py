"""No code runs from a data file (issue 53, item 1) and the files jobs write whole are written durably (item 6).

Each documented command that reads a PyTorch file is given one whose pickle runs a shell command on load
(``__reduce__`` -> ``os.system("touch MARKER")``): it must refuse the file, name it, and leave no marker.
Skipped without PyTorch."""
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mavgame  # noqa: E402
from mavgame import _atomic, _core  # noqa: E402
from mavgame._checkpoint import UnsafeCheckpointError, load_state, save_state  # noqa: E402
from mavgame.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class _Payload:
    """Runs ``touch MARKER`` when unpickled by a full (unsafe) unpickler."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _evil(path, marker, **extra):
    """A .pt file that looks like a checkpoint and runs a command when fully unpickled."""
    state = {"format": "x", "model": _Payload(marker), "config": {}, **extra}
    torch.save(state, str(path))
    return path


def _cli_refuses(argv, capsys, pattern):
    """The command exits with an error (SystemExit with a message, or a non-zero status with one on stderr)
    that matches ``pattern``."""
    import re
    try:
        rc = main(argv)
    except SystemExit as e:
        msg = str(e.code)
    else:
        assert rc != 0, "the command succeeded"
        msg = capsys.readouterr().err
    assert re.search(pattern, msg), msg


@pytest.fixture
def marker(tmp_path):
    m = tmp_path / "PWNED"
    yield m
    assert not m.exists(), "a command in the pickle ran"


def test_the_payload_really_runs_under_a_full_unpickler(tmp_path):
    """The guard for every other test here: the pickle they use does run its command when loaded unsafely."""
    m = tmp_path / "ran"
    _evil(tmp_path / "e.pt", m)
    torch.load(str(tmp_path / "e.pt"), weights_only=False)
    assert m.exists()


def test_load_state_refuses_code_and_reads_data(tmp_path, marker):
    p = _evil(tmp_path / "e.pt", marker)
    with pytest.raises(UnsafeCheckpointError, match=r"e\.pt.*refused.*(posix|os)\.system.*nothing of it was run"):
        load_state(p)
    ok = {"rng": np.random.get_state(), "bg": np.random.default_rng(1).bit_generator.state,
          "arr": np.arange(6, dtype=np.float32).reshape(2, 3), "n": np.int64(7), "t": torch.ones(3),
          "py": __import__("random").getstate(), "shape": (1, 2), "none": None,
          "empty": np.zeros((0, 3), np.float32)}   # an empty buffer pickles as a call of bytes()
    save_state(ok, tmp_path / "ok.pt")
    back = load_state(tmp_path / "ok.pt")
    assert np.array_equal(back["arr"], ok["arr"]) and back["n"] == 7 and back["shape"] == (1, 2)
    assert np.array_equal(back["rng"][1], ok["rng"][1]) and torch.equal(back["t"], ok["t"])
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match="junk.pt.* is not a checkpoint .not a readable PyTorch file"):
        load_state(tmp_path / "junk.pt")
    with pytest.raises(FileNotFoundError, match="nope.pt"):
        load_state(tmp_path / "nope.pt")


def test_match_with_an_az_agent_refuses_the_checkpoint(tmp_path, marker, capsys):
    p = _evil(tmp_path / "az.pt", marker)
    _cli_refuses(["match", f"az:checkpoint={p}", "random", "--game", "tictactoe", "--games", "2"], capsys,
                 r"az\.pt.*refused")


def test_az_agent_refuses_the_checkpoint(tmp_path, marker):
    from mavgame import agents
    p = _evil(tmp_path / "az.pt", marker)
    with pytest.raises(ValueError, match=r"az\.pt.*refused"):
        agents.make_agent(f"az:checkpoint={p}")
    with pytest.raises(ValueError, match=r"az\.pt.*refused"):
        agents.make_agent(f"azdb:checkpoint={p}")


def test_az_resume_refuses_the_checkpoint(tmp_path, marker, capsys):
    out = tmp_path / "run"
    out.mkdir()
    _evil(out / "checkpoint.pt", marker)
    _cli_refuses(["az", "--out", str(out), "--game", "tictactoe", "--iterations", "1", "--games", "2",
                  "--no-progress"], capsys, r"checkpoint\.pt.*refused")


def test_train_resume_refuses_the_checkpoint(tmp_path, marker, capsys):
    from mavgame.datasets.store import PositionWriter
    data = tmp_path / "data"
    with PositionWriter(data, "tictactoe", shard_size=40, val_fraction=0.1) as w:
        for i in range(20):
            w.add({"state": f"s{i}", "values": {"a": 0.5}, "best": "a", "result": "*"})
    out = tmp_path / "run"
    out.mkdir()
    _evil(out / "checkpoint.pt", marker, train_config={}, model_config={})
    _cli_refuses(["train", "--game", "tictactoe", "--data", str(data), "--out", str(out), "--steps", "1",
                  "--no-progress"], capsys, r"checkpoint\.pt.*refused")


def _pgn(n=3, plies=30, seed=0):
    from mavgame.play.pgn import to_pgn
    from mavgame.play.records import GameRecord
    rng = np.random.default_rng(seed)
    out = []
    for g in range(n):
        st = mavgame.State("chess")
        moves = []
        for _ in range(plies):
            if st.is_terminal():
                break
            a = int(rng.choice(st.legal_actions()))
            moves.append(st.action_to_str(a))
            st.push(a)
        rec = GameRecord(key=str(g), game="chess", first="r", second="r", opening="start", round=g, start=None,
                         opening_moves=[], moves=moves, result="1/2-1/2", reason="test")
        out.append(to_pgn(rec))
    return "\n\n".join(out) + "\n"


@pytest.fixture(scope="module")
def pgn_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("pgn") / "games.pgn"
    p.write_text(_pgn())
    return p


POLICY_TINY = ["--channels", "4", "--blocks", "1"]


def test_policy_train_resume_refuses_the_state(tmp_path, marker, pgn_file, capsys):
    out = tmp_path / "run"
    out.mkdir()
    _evil(out / "train_state.pt", marker)
    _cli_refuses(["policy", "train", "--pgn", str(pgn_file), "--out", str(out), "--steps", "2", "--batch", "4",
                  "--no-progress"] + POLICY_TINY, capsys, r"train_state\.pt.*refused")


def test_policy_rl_resume_and_policy_models_refuse_the_file(tmp_path, marker, pgn_file, capsys):
    from mavgame.policy import network as P
    out = tmp_path / "rl"
    out.mkdir()
    _evil(out / "rl_state.pt", marker)
    init = tmp_path / "init.pt"
    P.PolicyModel(P.PolicyNet(P.PolicyConfig(channels=4, blocks=1))).save(init)
    _cli_refuses(["policy", "rl", "--pgn", str(pgn_file), "--init", str(init), "--out", str(out), "--steps", "1",
                  "--games", "1", "--no-progress"], capsys, r"rl_state\.pt.*refused")
    evil_model = _evil(tmp_path / "policy.pt", marker)
    with pytest.raises(UnsafeCheckpointError, match=r"policy\.pt.*refused"):
        P.PolicyModel.load(evil_model)
    from mavgame import agents
    with pytest.raises(ValueError, match=r"policy\.pt.*refused"):
        agents.make_agent(f"policy:policy={evil_model},backend=torch")


@pytest.mark.parametrize("tool", ["export_checkpoint.py"])
def test_tools_refuse_the_checkpoint(tmp_path, marker, tool):
    import subprocess
    run = tmp_path / "run"
    run.mkdir()
    _evil(run / "checkpoint.pt", marker, train_config={}, model_config={})
    r = subprocess.run([sys.executable, str(ROOT / "tools" / tool), str(run), str(tmp_path / "m.safetensors")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "refused" in r.stderr, r.stderr


def test_a_foreign_train_checkpoint_names_the_file(tmp_path):
    from mavgame.model.train_config import load_checkpoint
    save_state({"something": torch.zeros(2)}, tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match=r"checkpoint\.pt.*not a mavgame train checkpoint.*model_config"):
        load_checkpoint(tmp_path / "checkpoint.pt")


# ---- item 5: the policy trainer's seed sets the initial weights -------------------------------------------

def test_policy_train_seed_fixes_the_initial_weights(tmp_path, pgn_file):
    from mavgame.policy import network as P
    cfg = P.PolicyConfig(channels=4, blocks=1)
    runs = []
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        torch.manual_seed(100 + len(runs))        # the global RNG differs before each call
        P.train_from_pgn([str(pgn_file)], tmp_path / name, steps=1, batch=4, config=cfg, seed=seed,
                         progress=False, val_fraction=0.0)
        runs.append(P.PolicyModel.load(tmp_path / name / "policy.pt").net.state_dict())
    assert all(torch.equal(v, runs[1][k]) for k, v in runs[0].items())
    assert not all(torch.equal(v, runs[2][k]) for k, v in runs[0].items())


# ---- item 6: durable writes, the AZ log mended, workers clamped to the work -------------------------------

def test_atomic_write_keeps_the_old_file_on_failure(tmp_path):
    p = tmp_path / "f.json"
    _atomic.write_json_atomic(p, {"a": 1})
    with pytest.raises(RuntimeError):
        with _atomic.atomic_write(p, "w", encoding="utf-8") as f:
            f.write('{"a": 2')
            raise RuntimeError("killed midway")
    assert json.loads(p.read_text()) == {"a": 1}
    assert [x.name for x in tmp_path.iterdir()] == ["f.json"]


def test_whole_file_writers_fsync_before_the_rename(tmp_path, monkeypatch, pgn_file):
    """Checkpoints, policy.pt, metrics.json and exported models go through the fsynced atomic writer."""
    from mavgame.policy import network as P
    from mavgame.model.export import save_safetensors
    from mavgame.policy.export import export_policy
    synced = []
    real = os.fsync

    def fsync(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else fd)
        return real(fd)

    monkeypatch.setattr(_atomic.os, "fsync", fsync)
    P.train_from_pgn([str(pgn_file)], tmp_path / "pol", steps=2, batch=4, config=P.PolicyConfig(channels=4, blocks=1),
                     progress=False, val_fraction=0.0)
    export_policy(tmp_path / "pol" / "policy.pt", tmp_path / "pol.safetensors")
    save_safetensors(tmp_path / "m.safetensors", {"w": np.zeros(3, np.float32)})
    names = {os.path.basename(str(s)).split(".tmp")[0] for s in synced if isinstance(s, str)}
    for want in ("train_state.pt", "policy.pt", "metrics.json", "pol.safetensors", "m.safetensors"):
        assert want in names, (want, names)


def test_az_log_is_mended_after_a_kill_between_checkpoint_and_log(tmp_path):
    out = tmp_path / "run"
    args = ["az", "--out", str(out), "--game", "tictactoe", "--iterations", "1", "--games", "2", "--parallel", "2",
            "--sims", "4", "--blocks", "1", "--channels", "4", "--steps", "1", "--batch-size", "8", "--no-progress",
            "--threads", "1"]
    assert main(args) == 0
    (out / "log.jsonl").write_text("")   # the checkpoint of iteration 0 was written, its log line was not
    assert main(args[:6] + ["2"] + args[7:]) == 0
    log = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in log] == [0, 1]


def test_generation_workers_are_clamped_to_the_work(tmp_path, monkeypatch):
    from mavgame import workers
    from mavgame.datasets import positions
    asked = []
    real = workers.pool

    def pool(n, *a, **kw):
        asked.append(n)
        if n > 8:
            raise RuntimeError(f"asked for {n} worker processes")
        return real(n, *a, **kw)

    monkeypatch.setattr(workers, "pool", pool)
    positions.generate_positions("tictactoe", tmp_path / "d", 2, workers=1_000_000, progress=False)
    assert max(asked, default=1) <= 2
