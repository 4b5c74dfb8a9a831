"""``mavgame train``: every bad argument ends in one ``mavgame: --ARG VALUE: ...`` line before any position
is generated or any model is built (mavgame/model/command.py check_arguments); good arguments, an existing
run folder (resume) and an --export path get through.  Needs no PyTorch: the checks run before torch."""
import os
from pathlib import Path

import pytest

from test_cli_errors import run_cli


@pytest.fixture()
def d(tmp_path):
    (tmp_path / "file.txt").write_text("x\n")
    (tmp_path / "games.pgn").write_text('[Event "x"]\n\n1. e4 e5 *\n')
    (tmp_path / "run").mkdir()
    ro = tmp_path / "readonly"
    ro.mkdir()
    ro.chmod(0o555)
    yield tmp_path
    ro.chmod(0o755)


def bad_lines(d: Path):
    data = str(d / "data")
    base = ["train", "--data", data, "--games", "2", "--out", str(d / "run")]
    f = str(d / "file.txt")
    return [
        # (extra argv, words the last line must contain)
        (["--steps", "0"], ["--steps 0", ">= 1"]),
        (["--steps", "-5"], ["--steps -5"]),
        (["--batch-size", "0"], ["--batch-size 0"]),
        (["--grad-accum", "-1"], ["--grad-accum -1"]),
        (["--lr", "0"], ["--lr 0", "> 0"]),
        (["--lr", "-0.001"], ["--lr -0.001"]),
        (["--lr", "nan"], ["--lr nan"]),
        (["--min-lr-ratio", "1.5"], ["--min-lr-ratio 1.5", "[0, 1]"]),
        (["--warmup", "-1"], ["--warmup -1"]),
        (["--weight-decay", "-0.1"], ["--weight-decay -0.1"]),
        (["--grad-clip", "0"], ["--grad-clip 0"]),
        (["--eval-every", "0"], ["--eval-every 0"]),
        (["--eval-batches", "0"], ["--eval-batches 0"]),
        (["--checkpoint-every", "0"], ["--checkpoint-every 0"]),
        (["--workers", "-1"], ["--workers -1"]),
        (["--threads", "-2"], ["--threads -2"]),
        (["--seed", "-1"], ["--seed -1"]),
        (["--stop-after", "-1"], ["--stop-after -1"]),
        (["--gen-eval-positions", "-1"], ["--gen-eval-positions -1"]),
        (["--final-eval-positions", "-1"], ["--final-eval-positions -1"]),
        (["--ood-games", "-3"], ["--ood-games -3"]),
        (["--device", "gpu"], ["--device gpu"]),
        (["--games", "-2"], ["--games -2"]),
        (["--epsilon", "1.5"], ["--epsilon 1.5"]),
        (["--random-opening", "-1"], ["--random-opening -1"]),
        (["--data-seed", "-1"], ["--data-seed -1"]),
        (["--gen-workers", "0"], ["--gen-workers 0"]),
        (["--val-fraction", "1"], ["--val-fraction 1"]),
        (["--val-fraction", "-0.1"], ["--val-fraction -0.1"]),
        (["--pgn-every", "0"], ["--pgn-every 0"]),
        (["--pgn-skip", "-1"], ["--pgn-skip -1"]),
        (["--pgn", str(d / "missing.pgn")], ["--pgn", "missing.pgn", "not found"]),
        (["--game", "nope"], ["--game nope"]),
        (["--board-size", "7"], ["--board-size 7", "connect_four"]),
        (["--game", "hex", "--board-size", "30"], ["--board-size 30", "out of range"]),
        (["--preset", "huge"], ["--preset huge", "tiny"]),
        (["--d-model", "0"], ["--d-model 0"]),
        (["--layers", "-1"], ["--layers -1"]),
        (["--heads", "0"], ["--heads 0"]),
        (["--kv-heads", "0"], ["--kv-heads 0"]),
        (["--d-ff", "0"], ["--d-ff 0"]),
        (["--max-seq-len", "0"], ["--max-seq-len 0"]),
        (["--line-pos", "-1"], ["--line-pos -1"]),
        (["--d-model", "100", "--heads", "3"], ["--d-model 100", "--heads 3", "multiple of n_heads"]),
        (["--out", f], ["--out", "is a file"]),
        (["--out", str(d / "readonly" / "run")], ["--out", "not writable"]),
        (["--data", f], ["--data", "is a file"]),
        (["--data", str(d / "readonly" / "data")], ["--data", "not writable"]),
        (["--export", str(d / "run")], ["--export", "is a folder"]),
        (["--export", str(d / "readonly" / "m.safetensors")], ["--export", "not writable"]),
    ], base


def test_every_bad_train_argument_ends_in_one_line_naming_it(d, capsys):
    rows, base = bad_lines(d)
    if os.geteuid() == 0:   # root writes into read-only folders: those rows cannot fail
        rows = [r for r in rows if not any("readonly" in a for a in r[0])]
    for extra, words in rows:
        argv = base + extra
        rc, out, err = run_cli(capsys, argv)
        lines = err.strip().splitlines()
        assert rc not in (0, None), (argv, rc, err)
        assert lines and lines[-1].startswith("mavgame: "), (argv, err)
        assert "Traceback" not in err and "Traceback" not in out, (argv, err)
        for w in words:
            assert w in lines[-1], (argv, w, lines[-1])
        assert not (d / "data").exists(), argv   # no generation started
        assert list((d / "run").iterdir()) == [], argv


def test_good_train_arguments_get_past_the_checks(d, capsys):
    """An existing run folder (a resume) and an --export file path are accepted; with no position set and
    no --games the command stops at the data step, after the checks."""
    argv = ["train", "--data", str(d / "data"), "--out", str(d / "run"), "--export", str(d / "run" / "m.st"),
            "--preset", "tiny", "--d-model", "64", "--heads", "4", "--kv-heads", "2", "--lr", "3e-4",
            "--device", "cpu", "--pgn-every", "2"]
    rc, out, err = run_cli(capsys, argv)
    assert rc not in (0, None)
    assert "holds no position set" in err and "--games N" in err, err
