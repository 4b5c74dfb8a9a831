"""Ctrl-C during long C work: perft, the solvers, MCTS and the playout UCT notice a pending SIGINT
within a fraction of a second, stop cleanly and raise KeyboardInterrupt (csrc/cancel.h,
csrc/bind/interrupt.c).

Each case runs in a child process (a call that cannot be interrupted would otherwise hang the test
run): a timer thread sends SIGINT to the process 0.3 s into the call; the child reports how long the
call took to raise KeyboardInterrupt and whether the objects still work afterwards.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = textwrap.dedent(r"""
    import json, os, signal, sys, threading, time
    import numpy as np
    from mavgame import Chess, ConnectFour, Hex, MCTS, _core
    from mavgame.search.uct import playout_uct

    # a process started in the background by a shell without job control inherits SIGINT ignored, and Python
    # then installs no KeyboardInterrupt handler: install it, so that the test does not depend on its parent
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def interrupted(fn):
        t = threading.Timer(0.3, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
        t0 = time.perf_counter()
        t.start()
        try:
            fn()
        except KeyboardInterrupt:
            return time.perf_counter() - t0 - 0.3
        finally:
            t.cancel()
        return None

    out = {}
    case = sys.argv[1]
    if case == "perft":
        b = Chess(); b.push("e2e4")
        before = (b.text(), b.ply)
        out["latency"] = interrupted(lambda: b.perft(9))
        out["unchanged"] = (b.text(), b.ply) == before
        out["works"] = b.perft(3) == 13160
        out["latency_divide"] = interrupted(lambda: b.perft_divide(9))
    elif case == "c4":
        b = ConnectFour()   # minutes without the opening book (with it, the empty board is answered at once)
        out["latency"] = interrupted(lambda: b.solve(solver=_core.C4Solver()))
        out["unchanged"] = b.text() == ConnectFour().text() and b.ply == 0
        r = ConnectFour.from_moves("444444333").solve()
        out["works"] = r.complete and r.score is not None
    elif case == "hex":
        b = Hex(7)
        out["latency"] = interrupted(lambda: b.solve())
        out["unchanged"] = b.text() == Hex(7).text()
        out["works"] = Hex(3).solve().value == 1
    elif case == "mcts":
        m = MCTS("playout", num_simulations=10**7, seed=1)
        b = Chess()
        out["latency"] = interrupted(lambda: m.search(b))
        out["unchanged"] = b.text() == Chess().text() and b.ply == 0
        m.check()                                   # the tree is consistent
        out["works"] = m.search(b, num_simulations=50).best_move is not None
    elif case == "playout_uct":
        b = Hex(11)
        out["latency"] = interrupted(lambda: playout_uct(b, simulations=40_000_000))
        out["unchanged"] = b.text() == Hex(11).text()
        out["works"] = playout_uct(Hex(3), simulations=200).best in Hex(3).legal_moves
    elif case == "playouts":
        b = Chess()
        out["latency"] = interrupted(lambda: _core.random_playouts(b, 10**9))
        out["unchanged"] = b.text() == Chess().text()
        out["works"] = sum(_core.random_playouts(b, 10)[:3]) == 10
    print(json.dumps(out))
""")


@pytest.mark.parametrize("case", ["perft", "c4", "hex", "mcts", "playout_uct", "playouts"])
def test_sigint_stops_long_c_work(case):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, case], capture_output=True, text=True, timeout=60,
                           cwd=REPO, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: SIGINT did not stop the call within 60 s")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    for key in ("latency", "latency_divide"):
        if key in out:
            assert out[key] is not None, f"{case}: the call finished instead of being interrupted"
            assert out[key] < 1.0, f"{case}: KeyboardInterrupt came {out[key]:.2f} s after SIGINT"
    assert out["unchanged"], f"{case}: the state changed"
    assert out["works"], f"{case}: the object does not work after the interrupt"
