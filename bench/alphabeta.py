"""Nodes per second of the IDP report's two alpha-beta searches in C (csrc/games/chess/chess_alphabeta.c), with the
policy's calls timed apart, against a python-chess alpha-beta at the same depth in the same run.

    python bench/alphabeta.py                  # depth 4, 3 rounds, the paper-sized network if torch is there
    python bench/alphabeta.py --quick          # 1 round, depth 3
    python bench/alphabeta.py --json out.json

Rows (each round runs every row once per position, rows interleaved; the table shows medians over rounds):
  C baseline                alphabeta(depth), no transposition table
  C baseline + TT           alphabeta(depth), 2^18-entry table (cleared each search: ~1 ms of the time)
  python-chess baseline     the same negamax alpha-beta in Python on python-chess (same evaluation tables,
                            read from _core.pst_tables(); same move ordering keys; no table)
  C guided, uniform         guided_alphabeta(threshold 0.001, max depth 8), uniform policy (no calls)
  C guided, array policy    the same with a fixed 1968-weight policy (a C callback)
  C guided, network         the same with the PolicyNet (random weights, --channels/--blocks, default the
                            report's 256 x 3; or a trained one, --model policy.pt) called in batches of
                            --batch positions; its time is reported
                            apart (policy ms, positions per call) and "search nodes/s" excludes it
  C guided, native network  the same network in the native engine (_core.PolicyNet, exported as float32),
                            called from inside the C search without the GIL (without torch: --model
                            shipped or an exported file)
Nodes are every position visited (the root and each position made), in C and in Python alike.
Timings are wall clock on one thread; a loaded machine inflates them: compare rows of the same run.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import chess  # noqa: E402
import numpy as np  # noqa: E402

import mavgame  # noqa: E402
from mavgame import _core  # noqa: E402

POSITIONS = [
    ("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    ("italian", "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"),
    ("endgame", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"),
]
MATE = 30000
TABLES = _core.pst_tables()
VALUE = [0, 100, 320, 330, 500, 900, 20000]


class PyAlphaBeta:
    """Negamax alpha-beta on python-chess with the C baseline's evaluation and ordering (the peer)."""

    def __init__(self):
        self.nodes = 0

    @staticmethod
    def evaluate(board: chess.Board) -> int:
        s = 0
        for sq, p in board.piece_map().items():
            v = TABLES[p.piece_type][sq] if p.color else TABLES[p.piece_type][sq ^ 56]
            s += v if p.color else -v
        return s if board.turn else -s

    @staticmethod
    def key(board: chess.Board, m: chess.Move) -> float:
        p = board.piece_at(m.from_square)
        victim = board.piece_at(m.to_square)
        k = 0.0
        if board.is_castling(m):
            return 0.0
        if victim is not None:
            k = 1e6 + 10 * VALUE[victim.piece_type] - p.piece_type
        elif board.is_en_passant(m):
            k = 1e6 + 999
        if m.promotion:
            k += 1e5 + VALUE[m.promotion]
        t = TABLES[p.piece_type]
        f, to = (m.from_square, m.to_square) if p.color else (m.from_square ^ 56, m.to_square ^ 56)
        return k + int(t[to]) - int(t[f])

    def search(self, board: chess.Board, depth: int, ply: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        moves = list(board.legal_moves)
        if not moves:
            return -(MATE - ply) if board.is_check() else 0
        if ply > 0 and (board.is_insufficient_material() or board.halfmove_clock >= 100 or board.is_repetition(3)):
            return 0
        if depth == 0:
            return self.evaluate(board)
        moves.sort(key=lambda m: -self.key(board, m))
        best = -MATE - 1
        for m in moves:
            board.push(m)
            sc = -self.search(board, depth - 1, ply + 1, -beta, -alpha)
            board.pop()
            if sc > best:
                best = sc
            alpha = max(alpha, sc)
            if alpha >= beta:
                break
        return best

    def __call__(self, fen: str, depth: int):
        self.nodes = 0
        b = chess.Board(fen)
        t = time.perf_counter()
        score = None
        for d in range(1, depth + 1):  # iterative deepening like the C search (no table: no reuse)
            score = self.search(b, d, 0, -MATE - 1, MATE + 1)
        return {"nodes": self.nodes, "seconds": time.perf_counter() - t, "score": score}


def c_row(r) -> dict:
    return {"nodes": r.nodes, "seconds": r.seconds, "score": r.score, "policy_seconds": r.policy_seconds,
            "policy_calls": r.policy_calls, "policy_positions": r.policy_positions}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="depth 3, one round")
    ap.add_argument("--channels", type=int, default=256)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threshold", type=float, default=0.001)
    ap.add_argument("--model", default=None,
                    help="a trained policy.pt or exported file ('shipped': the package's) for the network rows "
                    "(default: a random network of --channels x --blocks)")
    ap.add_argument("--no-network", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.quick:
        args.depth, args.rounds = 3, 1
    net = None
    if not args.no_network:
        try:
            import torch

            from mavgame.policy.network import PolicyConfig, PolicyModel, PolicyNet
            torch.manual_seed(0)
            torch.set_num_threads(1)
            if args.model:
                from mavgame.agents.policy import SHIPPED_POLICY
                net = PolicyModel.load(SHIPPED_POLICY if args.model == "shipped" else args.model)
                args.channels, args.blocks = net.net.config.channels, net.net.config.blocks
            else:
                net = PolicyModel(PolicyNet(PolicyConfig(channels=args.channels, blocks=args.blocks)))
        except ImportError:
            print("torch is not installed: no PyTorch network row")
    native = None
    if not args.no_network:
        from mavgame.policy.export import load_native_policy, policy_file_bytes
        if net is not None:
            import dataclasses
            native = _core.PolicyNet(policy_file_bytes(net.net.state_dict(), dataclasses.asdict(net.net.config),
                                                       dtype="float32"))
        elif args.model:
            from mavgame.agents.policy import SHIPPED_POLICY
            native = load_native_policy(SHIPPED_POLICY if args.model == "shipped" else args.model)
    weights = np.random.default_rng(0).random(1968).astype(np.float32)
    rows = {
        "C baseline": lambda st, fen: c_row(_core.alphabeta(st, args.depth, tt=False)),
        "C baseline + TT": lambda st, fen: c_row(_core.alphabeta(st, args.depth, tt=True)),
        "python-chess baseline": lambda st, fen: PyAlphaBeta()(fen, args.depth),
        "C guided, uniform": lambda st, fen: c_row(_core.guided_alphabeta(st, threshold=args.threshold)),
        "C guided, array policy": lambda st, fen: c_row(_core.guided_alphabeta(st, weights, threshold=args.threshold)),
    }
    if net is not None:
        rows["C guided, network"] = lambda st, fen: c_row(
            _core.guided_alphabeta(st, net.policy, threshold=args.threshold, batch=args.batch))
    if native is not None:
        rows["C guided, native network"] = lambda st, fen: c_row(
            _core.guided_alphabeta(st, native, threshold=args.threshold, batch=args.batch))
    res = {name: {p: [] for p, _ in POSITIONS} for name in rows}
    names = list(rows)
    for rnd in range(args.rounds):
        order = names if rnd % 2 == 0 else names[::-1]
        for pname, fen in POSITIONS:
            for name in order:
                res[name][pname].append(rows[name](mavgame.State("chess", fen), fen))
    # the peer must agree with the C baseline (same algorithm, same evaluation)
    for pname, _ in POSITIONS:
        a, b = res["C baseline"][pname][0]["score"], res["python-chess baseline"][pname][0]["score"]
        assert a == b, f"{pname}: C baseline score {a} != python-chess baseline score {b}"
    print(f"depth {args.depth} (guided: threshold {args.threshold}, max depth 8); medians of {args.rounds} round(s)")
    hdr = f"{'search':<26}{'position':<10}{'nodes':>9}{'ms':>10}{'nodes/s':>12}{'search n/s':>12}{'calls':>7}{'pos/call':>9}{'policy ms':>10}"
    print(hdr)
    print("-" * len(hdr))
    summary = {}
    for name in names:
        tot_nodes = tot_s = tot_pol = 0.0
        for pname, _ in POSITIONS:
            rs = res[name][pname]
            s = statistics.median(r["seconds"] for r in rs)
            ps = statistics.median(r.get("policy_seconds", 0.0) for r in rs)
            n = rs[0]["nodes"]
            calls = rs[0].get("policy_calls", 0)
            ppc = rs[0].get("policy_positions", 0) / calls if calls else 0
            tot_nodes += n
            tot_s += s
            tot_pol += ps
            print(f"{name:<26}{pname:<10}{n:>9}{1e3 * s:>10.2f}{n / s:>12.0f}{n / max(s - ps, 1e-9):>12.0f}{calls:>7}"
                  f"{ppc:>9.1f}{1e3 * ps:>10.1f}")
        summary[name] = {"nodes": tot_nodes, "seconds": tot_s, "policy_seconds": tot_pol,
                         "nps": tot_nodes / tot_s, "search_nps": tot_nodes / max(tot_s - tot_pol, 1e-9)}
    print()
    peer = summary["python-chess baseline"]["nps"]
    for name in names:
        s = summary[name]
        print(f"{name:<26} all positions: {s['nps']:>11.0f} nodes/s ({s['search_nps']:.0f} without the policy's time)"
              f"  x{s['nps'] / peer:.1f} the python-chess baseline")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
