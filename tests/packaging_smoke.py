"""Smoke test of an installed mavgame (a wheel in a fresh virtual environment), run from outside the source tree.

    cd /tmp && /path/to/venv/bin/python /path/to/mavgame/tests/packaging_smoke.py

CI (.ci/run) and cibuildwheel's test-command (pyproject.toml) run it on the repaired wheel.  It checks that
the import is the installed package and not a checkout, then a chess perft, a Connect Four solve that uses
the shipped opening book, one generate of the shipped MAV model on the native engine, and the console
script (`mavgame --help`, a two-game league that stores nothing).  Only the wheel's own dependencies are
needed (NumPy, tqdm): no compiler, no PyTorch.  Not collected by pytest (the name has no test_ prefix).
"""
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent   # the checkout this file sits in, when it sits in one


RESULTS = []


def step(name, fn):
    """Run one check; a failure is reported and counted, and the remaining checks still run."""
    t0 = time.perf_counter()
    try:
        detail = fn()
    except BaseException as exc:   # an assert, an exception, or a SystemExit from run_cli
        if isinstance(exc, KeyboardInterrupt):
            raise
        RESULTS.append(False)
        print(f"FAIL {name:<34} {time.perf_counter() - t0:6.2f} s  {type(exc).__name__}: {exc}", flush=True)
    else:
        RESULTS.append(True)
        print(f"ok   {name:<34} {time.perf_counter() - t0:6.2f} s  {detail}", flush=True)


def run_cli(*args):
    # the console script the wheel installed into this environment's bin/, not one found elsewhere on PATH
    exe = Path(sysconfig.get_path("scripts")) / "mavgame"
    if not exe.exists():
        raise RuntimeError(f"the console script {exe} is missing")
    out = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=600, cwd=os.getcwd())
    if out.returncode != 0:
        raise RuntimeError(f"mavgame {' '.join(args)} exited {out.returncode}\n{out.stdout}\n{out.stderr}")
    return out.stdout


def main():
    t_all = time.perf_counter()
    import mavgame
    from mavgame import _core

    where = Path(mavgame.__file__).resolve().parent
    if (SOURCE / "setup.py").exists() and SOURCE in where.parents:
        raise SystemExit(f"FAIL: mavgame was imported from the source tree ({where}), not from the installed package")
    print(f"mavgame from {where}; _core {Path(_core.__file__).name}; CUDA kernels built: {bool(_core.WITH_CUDA)}")

    def perft():
        n = mavgame.Chess().perft(4)
        assert n == 197281, n
        return f"chess perft(4) = {n}"

    def solve():
        from mavgame.games.connect_four import solver
        sv = solver()
        assert sv.book is not None, "the shipped opening book (mavgame/data/c4_book.bin) did not attach"
        r = mavgame.ConnectFour().solve(solver=sv)
        assert r.complete and r.score == 1 and r.best == "4", r
        assert r.move_scores == {"1": -2, "2": -1, "3": 0, "4": 1, "5": 0, "6": -1, "7": -2}, r.move_scores
        return f"empty board: score {r.score}, best column {r.best}, {r.nodes} nodes (book plies {sv.book[:2]})"

    def generate():
        from mavgame import mav
        from mavgame.model.inference import MAVModel
        model = MAVModel.load()                      # the shipped mavgame/data/mav_connect_four.safetensors
        win = mavgame.ConnectFour.from_moves("43464177")   # x to move; column 4 wins at once
        out, = model.generate([mav.prompt(win)])
        values = out.values("mean")
        assert values and all(0.0 <= v <= 1.0 for v in values.values()), values
        assert "%best_action" in out.text, out.text
        return f"{len(out.text)} chars, value of column 4: {values.get('4', float('nan')):.2f}"

    def cli_help():
        text = run_cli("--help")
        assert "league" in text and "perft" in text, text
        return f"{len(text.splitlines())} lines"

    def league():
        text = run_cli("league", "--max-games", "2", "--out", "none")
        assert "Elo" in text or "elo" in text, text
        return f"{len(text.splitlines())} lines of output"

    step("chess perft", perft)
    step("Connect Four solve (shipped book)", solve)
    step("shipped MAV model, one generate", generate)
    step("mavgame --help", cli_help)
    step("mavgame league --max-games 2", league)
    print(f"packaging smoke test: {time.perf_counter() - t_all:.1f} s (Python {sys.version.split()[0]}, import included)")
    print(f"smoke: {sum(RESULTS)} passed, {RESULTS.count(False)} failed", flush=True)
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
