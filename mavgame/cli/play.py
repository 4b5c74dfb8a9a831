"""``mavgame play``: play against an agent in the terminal (human moves, hints, undo, a thinking timer)."""
from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional

from .. import _core
from ..errors import IllegalMoveError
from ..games import registry
from .options import (add_game_options, agent_table, check_engine, fail)

DESCRIPTION = ("Play a game against an agent in the terminal.  Enter moves in the game's notation (UCI or SAN "
               "for chess, a column 1..7 for Connect Four, a cell such as c3 for Hex and tic-tac-toe); 'moves' "
               "lists the legal moves, 'undo' takes back your last move and the agent's reply, 'hint' asks the "
               "--hint agent, 'quit' ends the game.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_game_options(p, "connect_four")
    p.add_argument("--agent", default="uct:sims=2000",
                    help="the opponent as an agent spec, e.g. perfect, uct:sims=2000, stockfish:skill=3,movetime=200 "
                         "(default: uct:sims=2000)")
    p.add_argument("--color", choices=["first", "second", "white", "black", "x", "o"], default="first",
                    help="your side: first (White, x) or second (default: first)")
    p.add_argument("--fen", default=None, help="start position in the game's own text (FEN for chess)")
    p.add_argument("--moves", default=None,
                    help="moves to play from the start position first, space-separated, in the notation the "
                         "prompt takes (UCI or SAN for chess: \"e4 e5 Nf3\" or \"e2e4 e7e5 g1f3\")")
    p.add_argument("--swap", action="store_true", help="Hex: play with the swap (pie) rule")
    p.add_argument("--hint", default="uct:sims=2000", help="agent that answers 'hint' (default: uct:sims=2000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the agent, >= 0 (default: 0)")
    p.epilog = agent_table()


def with_coordinates(rows: List[str]) -> str:
    """A grid whose moves name cells as file letter + rank number (the chess family, tic-tac-toe), top rank
    first, labelled as those names read: rank numbers on the left, file letters a.. below."""
    n = len(rows)
    width = len(str(n))
    lines = [f"{n - i:>{width}}  " + " ".join(row) for i, row in enumerate(rows)]
    lines.append(" " * (width + 2) + " ".join("abcdefghijklmnopqrstuvwxyz"[:len(rows[0]) if rows else 0]))
    return "\n".join(lines)


def _display(state) -> str:
    """The board as the game's Python class prints it, with the coordinates the prompt takes: files a.. and
    ranks 1.. around a chess-family or tic-tac-toe board (Connect Four's columns 1..7 and Hex's cells are
    labelled by their classes); the position's plain text as a fallback."""
    from ..games.chess import ChessFamily
    from ..games.tictactoe import TicTacToe
    text = state.text()
    try:
        board = registry.get(state.game).wrap(state)
        if isinstance(board, (ChessFamily, TicTacToe)):
            return with_coordinates(board.board_rows())
        return str(board)
    except Exception:  # noqa: BLE001 - fall back to the text
        pass
    return "\n".join(text.split(" ")[0].split("/")) + f"\n({text})"


def _parse_human_move(state, s: str) -> int:
    """The action of a move typed at the prompt or given to --moves: the game's move string (UCI for the chess
    family) or, in the chess family, SAN ("e4", "Nf3", "O-O").  A well-formed UCI move that is illegal keeps
    its UCI message; text that is no UCI move is read as SAN and a failure reports the SAN parser's reason."""
    try:
        return int(state.parse_move(s))
    except IllegalMoveError:
        raise
    except ValueError:
        if not registry.get(state.game).san:
            raise
    return int(_core.parse_san(state, s))


THINKING_DELAY = 2.0  # seconds an agent thinks in `mavgame play` before the elapsed time is shown


class _Thinking:
    """Shows that an agent is still thinking: after ``delay`` seconds, an elapsed-time line on stderr
    (updated in place on a terminal, a line every ``every`` seconds otherwise), from a background thread
    while the agent runs in the main thread (where Ctrl-C reaches long C work)."""

    def __init__(self, name: str, hint: str = "", delay: Optional[float] = None, every: float = 15.0, out=None):
        import threading
        self.name, self.hint, self.every = name, hint, every
        self.delay = THINKING_DELAY if delay is None else delay
        self.out = out or sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._shown = False

    def _run(self) -> None:
        t0 = time.monotonic()
        if self._stop.wait(self.delay):
            return
        tty = hasattr(self.out, "isatty") and self.out.isatty()
        last = -self.every
        while not self._stop.is_set():
            t = time.monotonic() - t0
            if tty:
                self.out.write(f"\r{self.name} is thinking... {t:.0f} s{self.hint}")
            elif t - last >= self.every:
                self.out.write(f"{self.name} is thinking... {t:.0f} s{self.hint}\n")
                last = t
            self.out.flush()
            self._shown = True
            self._stop.wait(1.0)
        if tty and self._shown:
            self.out.write("\r\033[K")
            self.out.flush()

    def __enter__(self) -> "_Thinking":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _thinking_hint(spec: str, game: str) -> str:
    kind = spec.split(":", 1)[0].split("=")[-1]
    from ..agents.basic import is_slow_perfect_player
    if kind in ("perfect", "minimax") and is_slow_perfect_player(game):
        return " (the perfect player solves the position exactly: early moves can take minutes; Ctrl-C quits)"
    return ""


def cmd_play(args: argparse.Namespace) -> int:
    from ..agents import AgentError, make_agent, resolve_move

    try:
        agent = make_agent(args.agent)
        agent.check_game(args.game)
    except (ValueError, AgentError, ImportError, OSError) as e:
        raise fail(f"--agent {args.agent}: {e}")
    check_engine(args.agent, agent)
    try:
        make_agent(args.hint).close()
    except (ValueError, ImportError, OSError) as e:
        raise fail(f"--hint {args.hint}: {e}")
    try:
        state = _core.State(args.game, args.fen, args.board_size, _core.FLAG_HEX_SWAP if args.swap else 0)
    except ValueError as e:
        raise fail(f"--fen {args.fen!r}: {e}" if args.fen is not None else str(e))
    for i, m in enumerate((args.moves or "").split(), 1):
        try:
            state.push(_parse_human_move(state, m))
        except ValueError as e:
            raise fail(f"--moves: move {i}: {e}")
    human = 0 if args.color in ("first", "white", "x") else 1
    agent.setup(args.game, seed=args.seed, player=1 - human)
    names = {human: "you", 1 - human: agent.name}
    out = sys.stdout
    print(f"{args.game}: you play {'first' if human == 0 else 'second'} against {agent.name}. "
          "Type a move, 'moves' for the legal moves, 'undo', 'hint' or 'quit'.", file=out)
    hint_agent = None
    while True:
        print("\n" + _display(state), file=out)
        res, why = state.outcome()
        if res != 0:
            print(f"\nGame over: {state.result()} ({why})", file=out)
            return 0
        if state.to_move != human:
            t = time.perf_counter()
            try:
                with _Thinking(agent.name, _thinking_hint(args.agent, args.game)):
                    a = resolve_move(state, agent.act(state.copy()), agent.name)
            except (AgentError, Exception) as e:  # noqa: BLE001 - report any agent failure
                print(f"mavgame: {agent.name} failed: {e}", file=sys.stderr)
                return 2
            mv = state.action_to_str(a)
            state.push(a)
            print(f"\n{agent.name} plays {mv} ({time.perf_counter() - t:.1f} s)", file=out)
            continue
        try:
            line = input(f"{names[human]} ({'first' if human == 0 else 'second'}) > ").strip()
        except EOFError:
            print("\n(end of input: quitting)", file=out)
            agent.close()
            return 0
        if not line:
            continue
        cmd = line.lower()
        if cmd in ("quit", "exit", "resign", "q"):
            agent.close()
            return 0
        if cmd in ("moves", "legal", "?"):
            print(" ".join(state.legal_moves), file=out)
            continue
        if cmd == "undo":
            if len(state.history()) >= 2:
                state.pop()
                state.pop()
                agent.setup(args.game, seed=args.seed, player=1 - human)
            else:
                print("nothing to undo", file=out)
            continue
        if cmd == "hint":
            if hint_agent is None:
                hint_agent = make_agent(args.hint)
                hint_agent.setup(args.game, seed=args.seed, player=human)
            try:
                with _Thinking(hint_agent.name, _thinking_hint(args.hint, args.game)):
                    a = resolve_move(state, hint_agent.act(state.copy()), hint_agent.name)
                print(f"hint ({hint_agent.name}): {state.action_to_str(a)}", file=out)
            except (AgentError, Exception) as e:  # noqa: BLE001
                print(f"no hint: {e}", file=out)
            continue
        try:
            a = _parse_human_move(state, line)
        except ValueError as e:
            print(f"illegal move: {e}", file=out)
            continue
        state.push(a)


run = cmd_play
